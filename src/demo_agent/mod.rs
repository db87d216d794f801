//! The built-in offline demo agent: an ACP agent (protocol version 1) on
//! stdin/stdout that plays scripted scenarios, for first runs, demos and
//! end-to-end tests. Deterministic; no network, no model.
//!
//! `mod.rs` wires the connection: the ACP handlers, the sessions and their
//! modes, cancellation, and the stdio transport. `scenario.rs` holds the
//! scenario file format, `builtin.rs` the built-in scenarios (prompt `help`
//! lists them) and `script.rs` plays a scenario's steps as a turn.
//!
//! Logs go to stderr: stdout is the protocol channel.

mod builtin;
mod scenario;
mod script;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, CurrentModeUpdate, Implementation,
    InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest,
    PromptResponse, SessionId, SessionMode, SessionModeState, SessionNotification, SessionUpdate,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, Error, Lines};
use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use self::scenario::{Scenario, Step};
use self::script::Runner;

/// The `agentInfo.name` answered at `initialize` unless a scenario says otherwise.
const AGENT_NAME: &str = "warden-demo";
/// The session modes every session offers: id, name, description.
const MODES: [(&str, &str, &str); 3] = [
    ("plan", "Plan", "Reads and plans; asks before leaving plan mode"),
    ("default", "Default", "Asks before acting"),
    ("auto", "Auto", "Acts without asking"),
];
/// The mode a new session starts in.
const DEFAULT_MODE: &str = "default";

/// Run the demo agent on stdin/stdout until stdin closes.
///
/// `scenario` is a TOML or JSON scenario file (see `assets/scenarios/README.md`).
pub async fn run(scenario: Option<&Path>) -> anyhow::Result<()> {
    let scenario = match scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let protocol_version = scenario.protocol_version;
    let agent = Arc::new(DemoAgent::new(scenario));

    let builder = Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |_request: InitializeRequest, responder, _cx| {
                    responder.respond(agent.initialize())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |_request: NewSessionRequest, responder, _cx| {
                    responder.respond(agent.new_session())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionModeRequest, responder, cx| {
                    match agent.sessions.set_known_mode(&request.session_id, &request.mode_id.0) {
                        Ok(()) => {
                            responder.respond(SetSessionModeResponse::new())?;
                            cx.send_notification(SessionNotification::new(
                                request.session_id,
                                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                                    request.mode_id,
                                )),
                            ))
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: PromptRequest, responder, cx| {
                    let Some((turn, cancel)) = agent.sessions.start_turn(&request.session_id)
                    else {
                        return responder.respond_with_error(unknown_session(&request.session_id));
                    };
                    let steps = agent.steps_for(&prompt_text(&request.prompt), turn);
                    let runner = Runner::new(
                        cx.clone(),
                        request.session_id.clone(),
                        cancel,
                        agent.sessions.clone(),
                    );
                    let agent = agent.clone();
                    // The turn waits for permission answers, which arrive
                    // through the dispatch loop: it must not run inside it.
                    cx.spawn(async move {
                        let result = runner.run(&steps).await;
                        agent.sessions.end_turn(&request.session_id, turn);
                        let sent = match result {
                            Ok(reason) => responder.respond(PromptResponse::new(reason)),
                            Err(error) => {
                                eprintln!("demo-agent: turn failed: {error}");
                                responder.respond_with_error(error)
                            }
                        };
                        if let Err(error) = sent {
                            eprintln!("demo-agent: cannot answer the prompt: {error}");
                        }
                        Ok(())
                    })
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = agent.clone();
                async move |notification: CancelNotification, _cx| {
                    agent.sessions.cancel(&notification.session_id);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        );

    builder
        .connect_to(stdio_transport(protocol_version))
        .await
        .map_err(|error| anyhow::anyhow!("demo agent connection failed: {error}"))
}

/// The agent's state shared by the handlers and the running turns.
struct DemoAgent {
    scenario: Scenario,
    sessions: Arc<Sessions>,
    /// Indexes of the scenario's `once` turns already played.
    used_turns: Mutex<HashSet<usize>>,
}

impl DemoAgent {
    fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            sessions: Arc::new(Sessions::default()),
            used_turns: Mutex::new(HashSet::new()),
        }
    }

    fn initialize(&self) -> InitializeResponse {
        let name = self.scenario.agent_name.as_deref().unwrap_or(AGENT_NAME);
        // The SDK answers the version it negotiated (1); a scenario's other
        // version is written into the answer by the transport.
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(AgentCapabilities::new())
            .agent_info(
                Implementation::new(name, env!("CARGO_PKG_VERSION")).title("warden demo agent"),
            )
    }

    fn new_session(&self) -> NewSessionResponse {
        let id = SessionId::new(uuid::Uuid::new_v4().to_string());
        self.sessions.create(&id);
        let modes = MODES
            .iter()
            .map(|(id, name, description)| SessionMode::new(*id, *name).description(*description))
            .collect();
        NewSessionResponse::new(id).modes(SessionModeState::new(DEFAULT_MODE, modes))
    }

    /// The steps that answer `prompt`: the scenario's matching turn, else
    /// the built-in scenario (or a one-line answer when those are off).
    /// `turn` numbers the turn within the process (tool call ids use it).
    fn steps_for(&self, prompt: &str, turn: u64) -> Vec<Step> {
        let chosen = {
            let mut used = lock(&self.used_turns);
            self.scenario.select(prompt, &mut used)
        };
        if let Some(steps) = chosen.and_then(|index| self.scenario.turns.get(index)) {
            return steps.steps.clone();
        }
        if self.scenario.builtin {
            builtin::steps_for(prompt, turn)
        } else {
            vec![Step::Text {
                text: "No scripted turn matches this prompt.\n".to_owned(),
            }]
        }
    }
}

/// Every session: its mode and the cancel tokens of its running turns.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    inner: Mutex<HashMap<SessionId, Session>>,
    /// Numbers turns across sessions, so that tool call ids stay unique.
    next_turn: AtomicU64,
}

#[derive(Debug)]
struct Session {
    mode: String,
    /// Running turns (normally at most one) by turn number.
    turns: Vec<(u64, CancellationToken)>,
}

impl Sessions {
    fn create(&self, id: &SessionId) {
        lock(&self.inner).insert(
            id.clone(),
            Session {
                mode: DEFAULT_MODE.to_owned(),
                turns: Vec::new(),
            },
        );
    }

    /// Record the mode a turn switched to (any id a scenario names).
    pub(crate) fn set_mode(&self, id: &SessionId, mode: &str) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.mode = mode.to_owned();
        }
    }

    /// `session/set_mode`: only the advertised modes of a known session.
    fn set_known_mode(&self, id: &SessionId, mode: &str) -> Result<(), Error> {
        if !MODES.iter().any(|(known, _, _)| *known == mode) {
            return Err(Error::invalid_params().data(format!("unknown mode {mode:?}")));
        }
        let mut sessions = lock(&self.inner);
        let session = sessions.get_mut(id).ok_or_else(|| unknown_session(id))?;
        session.mode = mode.to_owned();
        Ok(())
    }

    /// Register a new turn of session `id`: its number and cancel token.
    fn start_turn(&self, id: &SessionId) -> Option<(u64, CancellationToken)> {
        let mut sessions = lock(&self.inner);
        let session = sessions.get_mut(id)?;
        let turn = self.next_turn.fetch_add(1, Ordering::Relaxed) + 1;
        let token = CancellationToken::new();
        session.turns.push((turn, token.clone()));
        Some((turn, token))
    }

    fn end_turn(&self, id: &SessionId, turn: u64) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.turns.retain(|(running, _)| *running != turn);
        }
    }

    /// `session/cancel`: cancel every running turn of the session.
    fn cancel(&self, id: &SessionId) {
        if let Some(session) = lock(&self.inner).get(id) {
            for (_, token) in &session.turns {
                token.cancel();
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unknown_session(id: &SessionId) -> Error {
    Error::invalid_params().data(format!("unknown session {id}"))
}

/// The prompt's text blocks joined by newlines (other blocks are ignored).
fn prompt_text(prompt: &[ContentBlock]) -> String {
    prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Newline-delimited JSON-RPC on stdin/stdout.
///
/// Stdin is read by a plain thread (not tokio's blocking pool), so that an
/// agent that exits never waits for a read that cannot be cancelled; blank
/// lines are skipped. When `protocol_version` is not 1 the `initialize`
/// answer is rewritten on its way out, since the SDK always answers the
/// version it speaks.
fn stdio_transport(
    protocol_version: u16,
) -> Lines<impl Sink<String, Error = std::io::Error> + Send + 'static, impl Stream<Item = std::io::Result<String>> + Send + 'static>
{
    let rewrite = (protocol_version != 1).then(|| Arc::new(VersionRewrite::new(protocol_version)));
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(256);
    let reader_rewrite = rewrite.clone();
    let spawned = std::thread::Builder::new()
        .name("demo-agent-stdin".to_owned())
        .spawn(move || read_stdin(&tx, reader_rewrite.as_deref()));
    if let Err(error) = spawned {
        eprintln!("demo-agent: cannot start the stdin reader: {error}");
    }
    let incoming = StdinLines { rx };
    let outgoing = futures::sink::unfold(
        (tokio::io::stdout(), rewrite),
        async move |(mut stdout, rewrite), line: String| {
            let mut line = match &rewrite {
                Some(rewrite) => rewrite.outgoing(line),
                None => line,
            };
            line.push('\n');
            stdout.write_all(line.as_bytes()).await?;
            stdout.flush().await?;
            Ok::<_, std::io::Error>((stdout, rewrite))
        },
    );
    Lines::new(outgoing, incoming)
}

fn read_stdin(
    tx: &tokio::sync::mpsc::Sender<std::io::Result<String>>,
    rewrite: Option<&VersionRewrite>,
) {
    use std::io::BufRead;
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                if let Some(rewrite) = rewrite {
                    rewrite.incoming(line);
                }
                if tx.blocking_send(Ok(line.to_owned())).is_err() {
                    return;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => {
                let _ = tx.blocking_send(Err(error));
                return;
            }
        }
    }
}

/// The lines the stdin thread read, as a stream; it ends at EOF.
struct StdinLines {
    rx: tokio::sync::mpsc::Receiver<std::io::Result<String>>,
}

impl Stream for StdinLines {
    type Item = std::io::Result<String>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// Writes a scenario's protocol version into the answer to `initialize`.
struct VersionRewrite {
    version: u16,
    /// The id of the `initialize` request not answered yet.
    pending: Mutex<Option<serde_json::Value>>,
}

impl VersionRewrite {
    fn new(version: u16) -> Self {
        Self {
            version,
            pending: Mutex::new(None),
        }
    }

    fn incoming(&self, line: &str) {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if message.get("method").and_then(|m| m.as_str()) == Some("initialize")
            && let Some(id) = message.get("id")
        {
            *lock(&self.pending) = Some(id.clone());
        }
    }

    fn outgoing(&self, line: String) -> String {
        let mut pending = lock(&self.pending);
        let Some(id) = pending.as_ref() else {
            return line;
        };
        let Ok(mut message) = serde_json::from_str::<serde_json::Value>(&line) else {
            return line;
        };
        if message.get("id") != Some(id) {
            return line;
        }
        let Some(result) = message.get_mut("result").and_then(|r| r.as_object_mut()) else {
            return line;
        };
        result.insert("protocolVersion".to_owned(), self.version.into());
        *pending = None;
        serde_json::to_string(&message).unwrap_or(line)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn version_rewrite_changes_only_the_initialize_answer() {
        let rewrite = VersionRewrite::new(0);
        let other = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        rewrite.incoming(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#);
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#;
        let rewritten: serde_json::Value =
            serde_json::from_str(&rewrite.outgoing(answer.to_owned())).unwrap();
        assert_eq!(rewritten, json!({"jsonrpc": "2.0", "id": 7, "result": {"protocolVersion": 0}}));
        assert_eq!(rewrite.outgoing(answer.to_owned()), answer);
    }

    #[test]
    fn sessions_track_modes_and_cancel_running_turns() {
        let sessions = Sessions::default();
        let id = SessionId::new("s1");
        assert!(sessions.start_turn(&id).is_none());
        sessions.create(&id);
        assert!(sessions.set_known_mode(&id, "auto").is_ok());
        assert!(sessions.set_known_mode(&id, "yolo").is_err());
        assert!(sessions.set_known_mode(&SessionId::new("s2"), "plan").is_err());
        let (turn, token) = sessions.start_turn(&id).unwrap();
        sessions.cancel(&SessionId::new("s2"));
        assert!(!token.is_cancelled());
        sessions.cancel(&id);
        assert!(token.is_cancelled());
        sessions.end_turn(&id, turn);
        assert_eq!(lock(&sessions.inner)[&id].turns.len(), 0);
        assert_eq!(lock(&sessions.inner)[&id].mode, "auto");
    }

    #[test]
    fn prompt_text_joins_text_blocks() {
        let prompt = vec![ContentBlock::from("edit"), ContentBlock::from("now")];
        assert_eq!(prompt_text(&prompt), "edit\nnow");
    }
}

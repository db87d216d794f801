//! The built-in offline demo agent: an ACP agent (protocol version 1) on
//! stdin/stdout that plays scripted scenarios, for first runs, demos and
//! end-to-end tests. Deterministic; no network, no model.
//!
//! `mod.rs` wires the connection: the ACP handlers, the sessions and their
//! modes, cancellation, and the stdio transport. `scenario.rs` holds the
//! scenario file format, `builtin.rs` the built-in scenarios (prompt `help`
//! lists them) and `script.rs` plays a scenario's steps as a turn (its
//! `client.rs` the steps that use the client's files and terminals, as far
//! as the capabilities recorded at `initialize` allow; their paths are built
//! from the session's cwd). `record.rs` keeps a record of every session on
//! disk, so that another demo-agent process can `session/load` it or list it
//! in `session/list`.
//!
//! Logs go to stderr: stdout is the protocol channel.

mod builtin;
mod record;
mod scenario;
mod script;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CloseSessionRequest,
    CloseSessionResponse, ContentBlock, ContentChunk, CurrentModeUpdate, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest,
    PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities, SessionCapabilities, SessionCloseCapabilities,
    SessionId, SessionListCapabilities, SessionMode, SessionModeState, SessionNotification,
    SessionResumeCapabilities, SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use agent_client_protocol::{Agent, Error, ErrorCode, Lines};
use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use self::record::{Record, Store};
use self::scenario::{ClientFeatures, ModeSpec, Scenario, Step};
use self::script::Runner;

/// The `agentInfo.name` answered at `initialize` unless a scenario says otherwise.
const AGENT_NAME: &str = "warden-demo";
/// The session modes every session offers: id, name, description.
const MODES: [(&str, &str, &str); 3] = [
    (
        "plan",
        "Plan",
        "Reads and plans; asks before leaving plan mode",
    ),
    ("default", "Default", "Asks before acting"),
    ("auto", "Auto", "Acts without asking"),
];
/// The mode a new session starts in.
const DEFAULT_MODE: &str = "default";
/// The id of the mode config option (with `mode_config_option`).
const MODE_OPTION: &str = "mode";
/// How long running turns may go on after stdin closed before they are cancelled.
const EOF_GRACE: Duration = Duration::from_secs(5);
/// How long cancelled turns get to answer before the agent exits anyway.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// Run the demo agent on stdin/stdout until stdin closes.
///
/// `scenario` is a TOML or JSON scenario file (see `assets/scenarios/README.md`).
///
/// # Errors
///
/// The scenario file cannot be read or parsed, or the connection fails
/// (stdout closed, a broken transport). A closed stdin is not an error.
pub async fn run(scenario: Option<&Path>) -> anyhow::Result<()> {
    let scenario = match scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let protocol_version = scenario.protocol_version;
    let agent = Arc::new(DemoAgent::new(scenario, Store::from_env()));

    let builder = Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: InitializeRequest, responder, _cx| {
                    responder.respond(agent.initialize(&request.client_capabilities))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: NewSessionRequest, responder, _cx| {
                    if agent.scenario.auth_required && !agent.signed_in.load(Ordering::Relaxed) {
                        return responder.respond_with_error(Error::auth_required());
                    }
                    let response = agent.new_session(request.cwd);
                    agent
                        .sessions
                        .set_mcp(&response.session_id, &request.mcp_servers);
                    agent
                        .sessions
                        .set_directories(&response.session_id, request.additional_directories);
                    responder.respond(response)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: agent_client_protocol::v1::schema::AuthenticateRequest,
                            responder,
                            _cx| {
                    let id = request.method_id.to_string();
                    let known = agent.scenario.auth_methods.iter().any(|m| {
                        m.get("id").and_then(serde_json::Value::as_str) == Some(id.as_str())
                            && m.get("type").and_then(serde_json::Value::as_str) != Some("terminal")
                    });
                    if !known {
                        return responder.respond_with_error(
                            Error::invalid_params().data(format!("unknown auth method {id}")),
                        );
                    }
                    agent.signed_in.store(true, Ordering::Relaxed);
                    responder
                        .respond(agent_client_protocol::v1::schema::AuthenticateResponse::new())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: LoadSessionRequest, responder, cx| {
                    agent
                        .sessions
                        .set_mcp(&request.session_id, &request.mcp_servers);
                    let loaded = agent.sessions.load(&request.session_id, request.cwd);
                    if loaded.is_ok() {
                        agent
                            .sessions
                            .set_directories(&request.session_id, request.additional_directories);
                    }
                    match loaded {
                        Ok((updates, mode)) => {
                            // The replay comes before the answer, as ACP asks.
                            for update in updates {
                                cx.send_notification(SessionNotification::new(
                                    request.session_id.clone(),
                                    update,
                                ))?;
                            }
                            responder.respond(
                                LoadSessionResponse::new()
                                    .modes(agent.sessions.modes(&mode))
                                    .config_options(agent.sessions.config_options(&mode)),
                            )
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
                async move |request: ResumeSessionRequest, responder, _cx| match agent
                    .sessions
                    .load(&request.session_id, request.cwd)
                {
                    Ok((_, mode)) => {
                        agent
                            .sessions
                            .set_directories(&request.session_id, request.additional_directories);
                        responder.respond(
                            ResumeSessionResponse::new()
                                .modes(agent.sessions.modes(&mode))
                                .config_options(agent.sessions.config_options(&mode)),
                        )
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ListSessionsRequest, responder, _cx| {
                    responder.respond(agent.sessions.list(
                        request.cwd.as_deref(),
                        request.cursor.as_deref(),
                        agent.scenario.list_page_size,
                    ))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: CloseSessionRequest, responder, _cx| {
                    if !agent.scenario.close_session {
                        return responder.respond_with_error(Error::method_not_found());
                    }
                    match agent.sessions.close(&request.session_id) {
                        Ok(()) => responder.respond(CloseSessionResponse::new()),
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionModeRequest, responder, cx| match agent
                    .sessions
                    .set_known_mode(&request.session_id, &request.mode_id.0)
                {
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
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionConfigOptionRequest, responder, cx| {
                    let value = match &request.value {
                        SessionConfigOptionValue::ValueId { value } => value.to_string(),
                        _ => String::new(),
                    };
                    let known = agent.sessions.mode_config_option
                        && request.config_id.to_string() == MODE_OPTION;
                    let set = if known {
                        agent.sessions.set_known_mode(&request.session_id, &value)
                    } else {
                        agent
                            .sessions
                            .set_extra_option(&request.config_id.to_string(), &request.value)
                    };
                    match set {
                        Ok(()) => {
                            let mode = agent.sessions.mode(&request.session_id).unwrap_or_default();
                            let options = agent.sessions.config_options(&mode).unwrap_or_default();
                            responder
                                .respond(SetSessionConfigOptionResponse::new(options.clone()))?;
                            cx.send_notification(SessionNotification::new(
                                request.session_id,
                                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
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
                    let cwd = agent.sessions.cwd(&request.session_id);
                    let text = prompt_text(&request.prompt);
                    agent
                        .sessions
                        .record_prompt(&request.session_id, &text, &request.prompt);
                    let steps = agent.steps_for(&text, turn, &cwd);
                    let runner = Runner::new(
                        cx.clone(),
                        request.session_id.clone(),
                        cancel,
                        agent.sessions.clone(),
                        agent.offered(),
                        cwd,
                    );
                    let session_id = request.session_id.clone();
                    let sessions = agent.sessions.clone();
                    // The turn waits for permission answers, which arrive
                    // through the dispatch loop: it must not run inside it.
                    let spawned = cx.spawn(async move {
                        let result = runner.run(&steps).await;
                        sessions.end_turn(&session_id, turn);
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
                    });
                    if spawned.is_err() {
                        agent.sessions.end_turn(&request.session_id, turn);
                    }
                    spawned
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

    let sessions = agent.sessions.clone();
    builder
        .connect_with(stdio_transport(protocol_version), async move |cx| {
            tokio::select! {
                () = cx.incoming_closed() => {}
                _ = cx.terminated() => return Ok(()),
            }
            // Stdin is closed: let running turns finish (a piped
            // `printf ... | warden demo-agent` sees whole turns), but not
            // for long.
            if !sessions.wait_idle(EOF_GRACE).await {
                sessions.cancel_all();
                sessions.wait_idle(CANCEL_WAIT).await;
            }
            Ok(())
        })
        .await
        .map_err(|error| anyhow::anyhow!("demo agent connection failed: {error}"))
}

/// The agent's state shared by the handlers and the running turns.
struct DemoAgent {
    scenario: Scenario,
    sessions: Arc<Sessions>,
    /// Indexes of the scenario's `once` turns already played.
    used_turns: Mutex<HashSet<usize>>,
    /// Sessions created so far (for sequential session ids).
    created: AtomicU64,
    /// The client capabilities received at `initialize`.
    offered: Mutex<ClientFeatures>,
    /// `authenticate` succeeded (with `auth_required`).
    signed_in: std::sync::atomic::AtomicBool,
}

impl DemoAgent {
    fn new(scenario: Scenario, store: Store) -> Self {
        Self {
            sessions: Arc::new(Sessions::new(store, &scenario)),
            scenario,
            used_turns: Mutex::new(HashSet::new()),
            created: AtomicU64::new(0),
            offered: Mutex::new(ClientFeatures::default()),
            signed_in: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Answer `initialize`, recording what the client offers.
    fn initialize(&self, client: &ClientCapabilities) -> InitializeResponse {
        *lock(&self.offered) = ClientFeatures {
            read_text_file: client.fs.read_text_file,
            write_text_file: client.fs.write_text_file,
            terminal: client.terminal,
        };
        let name = self.scenario.agent_name.as_deref().unwrap_or(AGENT_NAME);
        // The SDK answers the version it negotiated (1); a scenario's other
        // version is written into the answer by the transport.
        let scenario = &self.scenario;
        let mut sessions = SessionCapabilities::new().list(SessionListCapabilities::new());
        if scenario.resume_session {
            sessions = sessions.resume(SessionResumeCapabilities::new());
        }
        if scenario.close_session {
            sessions = sessions.close(SessionCloseCapabilities::new());
        }
        if scenario.additional_directories {
            sessions =
                sessions.additional_directories(SessionAdditionalDirectoriesCapabilities::new());
        }
        let auth_methods: Vec<agent_client_protocol::v1::schema::AuthMethod> = self
            .scenario
            .auth_methods
            .iter()
            .filter_map(|m| serde_json::from_value(m.clone()).ok())
            .collect();
        InitializeResponse::new(ProtocolVersion::V1)
            .auth_methods(auth_methods)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(scenario.load_session)
                    .session_capabilities(sessions)
                    .mcp_capabilities(
                        agent_client_protocol::v1::schema::McpCapabilities::new()
                            .http(scenario.mcp_http)
                            .sse(scenario.mcp_sse),
                    ),
            )
            .agent_info(
                Implementation::new(name, env!("CARGO_PKG_VERSION")).title("warden demo agent"),
            )
    }

    /// What the client advertised at `initialize`.
    fn offered(&self) -> ClientFeatures {
        *lock(&self.offered)
    }

    fn new_session(&self, cwd: PathBuf) -> NewSessionResponse {
        let number = self.created.fetch_add(1, Ordering::Relaxed) + 1;
        let id = if self.scenario.sequential_session_ids {
            format!("session-{number}")
        } else {
            uuid::Uuid::new_v4().to_string()
        };
        let id = SessionId::new(id);
        self.sessions.create(&id, cwd);
        NewSessionResponse::new(id)
            .modes(self.sessions.modes(&self.sessions.start_mode))
            .config_options(self.sessions.config_options(&self.sessions.start_mode))
    }

    /// The steps that answer `prompt`: the scenario's matching turn, else
    /// the built-in scenario (or a one-line answer when those are off).
    /// `turn` numbers the turn within the process (tool call ids use it);
    /// `cwd` is the session's (the client scenarios build absolute paths).
    fn steps_for(&self, prompt: &str, turn: u64, cwd: &Path) -> Vec<Step> {
        let prompt = without_client_instruction(prompt);
        let chosen = {
            let mut used = lock(&self.used_turns);
            self.scenario.select(prompt, &mut used)
        };
        if let Some(steps) = chosen.and_then(|index| self.scenario.turns.get(index)) {
            return steps.steps.clone();
        }
        if self.scenario.builtin {
            builtin::steps_for(prompt, turn, cwd)
        } else {
            vec![Step::Text {
                text: "No scripted turn matches this prompt.\n".to_owned(),
            }]
        }
    }
}

/// Every session: its record (mode, cwd, transcript) and the cancel tokens
/// of its running turns.
#[derive(Debug)]
pub(crate) struct Sessions {
    inner: Mutex<HashMap<SessionId, Session>>,
    /// Numbers turns across sessions, so that tool call ids stay unique.
    next_turn: AtomicU64,
    /// How many turns are running, for the wait at exit.
    running: tokio::sync::watch::Sender<usize>,
    /// Where session records are kept.
    store: Store,
    /// The modes every session offers: id, name, description.
    modes: Vec<ModeSpec>,
    /// The mode a new session starts in.
    start_mode: String,
    /// The modes are also a `mode` config option.
    mode_config_option: bool,
    /// The scenario's other config options, with their current values.
    extra_options: Mutex<Vec<serde_json::Value>>,
    /// The MCP servers each session was opened with, as reported by the
    /// `mcp` step: `name (stdio: command args; env K)`, ...
    mcp: Mutex<HashMap<SessionId, Vec<String>>>,
}

impl Default for Sessions {
    /// Sessions that are not kept on disk.
    fn default() -> Self {
        Self::new(Store::default(), &Scenario::default())
    }
}

#[derive(Debug)]
struct Session {
    /// Mode, cwd, title and the updates to replay, as written to disk.
    record: Record,
    /// Running turns (normally at most one) by turn number.
    turns: Vec<(u64, CancellationToken)>,
}

impl Sessions {
    /// Sessions with the modes a scenario advertises (else the demo's own).
    fn new(store: Store, scenario: &Scenario) -> Self {
        let modes = scenario.modes.clone().unwrap_or_else(|| {
            MODES
                .iter()
                .map(|(id, name, description)| ModeSpec {
                    id: (*id).to_owned(),
                    name: (*name).to_owned(),
                    description: Some((*description).to_owned()),
                })
                .collect()
        });
        Self {
            inner: Mutex::new(HashMap::new()),
            next_turn: AtomicU64::new(0),
            running: tokio::sync::watch::Sender::new(0),
            store,
            modes,
            start_mode: scenario
                .current_mode
                .clone()
                .unwrap_or_else(|| DEFAULT_MODE.to_owned()),
            mode_config_option: scenario.mode_config_option,
            extra_options: Mutex::new(scenario.config_options.clone()),
            mcp: Mutex::new(HashMap::new()),
        }
    }

    fn create(&self, id: &SessionId, cwd: PathBuf) {
        let record = Record::new(id.clone(), cwd, &self.start_mode);
        lock(&self.inner).insert(
            id.clone(),
            Session {
                record,
                turns: Vec::new(),
            },
        );
        self.save(id, false);
    }

    /// `session/load` and `session/resume`: the session from this process
    /// or from its record on disk, now live with `cwd`; the updates to
    /// replay and the current mode.
    fn load(&self, id: &SessionId, cwd: PathBuf) -> Result<(Vec<SessionUpdate>, String), Error> {
        let mut sessions = lock(&self.inner);
        if let Some(session) = sessions.get_mut(id) {
            session.record.cwd = cwd;
            return Ok((session.record.updates.clone(), session.record.mode.clone()));
        }
        let mut record = match self.store.load(id) {
            Ok(Some(record)) => record,
            Ok(None) => return Err(session_not_found(id)),
            Err(error) => {
                return Err(Error::internal_error()
                    .data(format!("cannot read the record of session {id}: {error}")));
            }
        };
        record.session_id = id.clone();
        record.cwd = cwd;
        let answer = (record.updates.clone(), record.mode.clone());
        sessions.insert(
            id.clone(),
            Session {
                record,
                turns: Vec::new(),
            },
        );
        Ok(answer)
    }

    /// `session/list`: the recorded sessions (of `cwd` when given) that
    /// were prompted at least once, newest first; with `page`, that many
    /// from the position `cursor` names, and a `nextCursor` while more follow.
    fn list(
        &self,
        cwd: Option<&Path>,
        cursor: Option<&str>,
        page: Option<usize>,
    ) -> ListSessionsResponse {
        let all: Vec<_> = self
            .store
            .list(cwd)
            .iter()
            .filter(|record| record.title.is_some())
            .map(Record::info)
            .collect();
        let Some(page) = page.filter(|n| *n > 0) else {
            return ListSessionsResponse::new(all);
        };
        let start = cursor.and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
        let end = start.saturating_add(page).min(all.len());
        let sessions = all.get(start..end).map(<[_]>::to_vec).unwrap_or_default();
        let next = (end < all.len()).then(|| end.to_string());
        ListSessionsResponse::new(sessions).next_cursor(next)
    }

    /// The `additionalDirectories` session `id` opened with, into its record.
    fn set_directories(&self, id: &SessionId, directories: Vec<PathBuf>) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.record.additional_directories = directories;
        } else {
            return;
        }
        self.save(id, false);
    }

    /// `session/close`: the record says when; the session is no longer live.
    fn close(&self, id: &SessionId) -> Result<(), Error> {
        match lock(&self.inner).get_mut(id) {
            Some(session) => session.record.closed_at = Some(record::now_rfc3339()),
            None => return Err(session_not_found(id)),
        }
        self.save(id, false);
        lock(&self.inner).remove(id);
        Ok(())
    }

    /// Write the record of session `id`; `touched` when it changed (its
    /// `updatedAt` moves). A failed write is logged: the session goes on.
    pub(crate) fn save(&self, id: &SessionId, touched: bool) {
        let record = {
            let mut sessions = lock(&self.inner);
            let Some(session) = sessions.get_mut(id) else {
                return;
            };
            if touched {
                session.record.updated_at = record::now_rfc3339();
            }
            session.record.clone()
        };
        if let Err(error) = self.store.save(&record) {
            eprintln!("demo-agent: cannot write the record of session {id}: {error}");
        }
    }

    /// Record the user's prompt (`text` is its text blocks joined) as the
    /// user's side of the transcript; the first one gives the title.
    fn record_prompt(&self, id: &SessionId, text: &str, prompt: &[ContentBlock]) {
        let mut sessions = lock(&self.inner);
        let Some(session) = sessions.get_mut(id) else {
            return;
        };
        let typed = without_client_instruction(text);
        if session.record.title.is_none() {
            let title = typed.lines().map(str::trim).find(|line| !line.is_empty());
            session.record.title = title.map(str::to_owned);
        }
        if !typed.is_empty() {
            session
                .record
                .push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    ContentBlock::from(typed),
                )));
        }
        for block in prompt {
            if !matches!(block, ContentBlock::Text(_)) {
                session
                    .record
                    .push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        block.clone(),
                    )));
            }
        }
    }

    /// Record an update the agent sends in session `id`.
    pub(crate) fn record_update(&self, id: &SessionId, update: &SessionUpdate) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.record.push(update.clone());
        }
    }

    /// The session's working directory (empty for an unknown session).
    pub(crate) fn cwd(&self, id: &SessionId) -> PathBuf {
        lock(&self.inner)
            .get(id)
            .map(|session| session.record.cwd.clone())
            .unwrap_or_default()
    }

    /// Record the mode a turn switched to (any id a scenario names).
    pub(crate) fn set_mode(&self, id: &SessionId, mode: &str) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.record.mode = mode.to_owned();
        }
    }

    /// The session's current mode.
    pub(crate) fn mode(&self, id: &SessionId) -> Option<String> {
        lock(&self.inner)
            .get(id)
            .map(|session| session.record.mode.clone())
    }

    /// `session/set_mode`: only the advertised modes of a known session.
    fn set_known_mode(&self, id: &SessionId, mode: &str) -> Result<(), Error> {
        if !self.modes.iter().any(|known| known.id == mode) {
            return Err(Error::invalid_params().data(format!("unknown mode {mode:?}")));
        }
        {
            let mut sessions = lock(&self.inner);
            let session = sessions.get_mut(id).ok_or_else(|| unknown_session(id))?;
            session.record.mode = mode.to_owned();
        }
        self.save(id, true);
        Ok(())
    }

    /// Register a new turn of session `id`: its number and cancel token.
    fn start_turn(&self, id: &SessionId) -> Option<(u64, CancellationToken)> {
        let mut sessions = lock(&self.inner);
        let session = sessions.get_mut(id)?;
        let turn = self.next_turn.fetch_add(1, Ordering::Relaxed) + 1;
        let token = CancellationToken::new();
        session.turns.push((turn, token.clone()));
        self.running.send_modify(|running| *running += 1);
        Some((turn, token))
    }

    /// The turn is over: forget it and write the session's record.
    fn end_turn(&self, id: &SessionId, turn: u64) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.turns.retain(|(running, _)| *running != turn);
        }
        self.save(id, true);
        self.running
            .send_modify(|running| *running = running.saturating_sub(1));
    }

    /// Wait until no turn runs, at most `limit`; whether none runs.
    async fn wait_idle(&self, limit: Duration) -> bool {
        let mut running = self.running.subscribe();
        tokio::time::timeout(limit, running.wait_for(|running| *running == 0))
            .await
            .is_ok_and(|result| result.is_ok())
    }

    fn cancel_all(&self) {
        for session in lock(&self.inner).values() {
            for (_, token) in &session.turns {
                token.cancel();
            }
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

impl Sessions {
    /// The modes as a `mode` config option, when the scenario says so.
    fn config_options(&self, current: &str) -> Option<Vec<SessionConfigOption>> {
        let extra: Vec<SessionConfigOption> = lock(&self.extra_options)
            .iter()
            .filter_map(|option| serde_json::from_value(option.clone()).ok())
            .collect();
        if !self.mode_config_option {
            return (!extra.is_empty()).then_some(extra);
        }
        let choices: Vec<SessionConfigSelectOption> = self
            .modes
            .iter()
            .map(|mode| {
                SessionConfigSelectOption::new(mode.id.clone(), mode.name.clone())
                    .description(mode.description.clone())
            })
            .collect();
        let mut options = vec![
            SessionConfigOption::select(MODE_OPTION, "Mode", current.to_owned(), choices)
                .description("Session permission mode".to_owned())
                .category(SessionConfigOptionCategory::Mode),
        ];
        options.extend(extra);
        Some(options)
    }

    /// Remember the MCP servers a session was opened with.
    fn set_mcp(&self, id: &SessionId, servers: &[agent_client_protocol::v1::schema::McpServer]) {
        let described = servers
            .iter()
            .map(|server| {
                let value = serde_json::to_value(server).unwrap_or_default();
                let field = |key: &str| value.get(key).cloned().unwrap_or_default();
                let name = field("name").as_str().unwrap_or_default().to_owned();
                let pairs = |key: &str| {
                    field(key)
                        .as_array()
                        .map(|items| {
                            items
                                .iter()
                                .filter_map(|i| i.get("name").and_then(|n| n.as_str()))
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                        .unwrap_or_default()
                };
                match field("type").as_str() {
                    Some(kind) => format!(
                        "{name} ({kind}: {}; headers {})",
                        field("url").as_str().unwrap_or_default(),
                        pairs("headers")
                    ),
                    None => format!(
                        "{name} (stdio: {} {}; env {})",
                        field("command").as_str().unwrap_or_default(),
                        field("args")
                            .as_array()
                            .map(|a| a
                                .iter()
                                .filter_map(|x| x.as_str())
                                .collect::<Vec<_>>()
                                .join(" "))
                            .unwrap_or_default(),
                        pairs("env")
                    ),
                }
            })
            .collect();
        lock(&self.mcp).insert(id.clone(), described);
    }

    /// The MCP servers a session was opened with, described.
    pub(crate) fn mcp(&self, id: &SessionId) -> Vec<String> {
        lock(&self.mcp).get(id).cloned().unwrap_or_default()
    }

    /// `session/set_config_option` for one of the scenario's other
    /// options: a select takes one of its values, a boolean a boolean.
    fn set_extra_option(&self, id: &str, value: &SessionConfigOptionValue) -> Result<(), Error> {
        let mut options = lock(&self.extra_options);
        let invalid = |why: String| Err(Error::invalid_params().data(why));
        let Some(option) = options
            .iter_mut()
            .find(|o| o.get("id").and_then(serde_json::Value::as_str) == Some(id))
        else {
            return invalid(format!("unknown config option {id}"));
        };
        let kind = option.get("type").and_then(serde_json::Value::as_str);
        let new = match (kind, value) {
            (Some("boolean"), SessionConfigOptionValue::Boolean { value }) => {
                serde_json::Value::Bool(*value)
            }
            (Some("select"), SessionConfigOptionValue::ValueId { value }) => {
                let value = value.to_string();
                let offered = option
                    .get("options")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|choices| {
                        choices.iter().any(|c| {
                            c.get("value").and_then(serde_json::Value::as_str) == Some(&value)
                        })
                    });
                if !offered {
                    return invalid(format!("{value} is not a value of {id}"));
                }
                serde_json::Value::String(value)
            }
            _ => return invalid(format!("wrong kind of value for {id}")),
        };
        option["currentValue"] = new;
        Ok(())
    }

    /// The session modes every session offers, `current` being the current one.
    fn modes(&self, current: &str) -> SessionModeState {
        let modes = self
            .modes
            .iter()
            .map(|mode| {
                SessionMode::new(mode.id.clone(), mode.name.clone())
                    .description(mode.description.clone())
            })
            .collect();
        SessionModeState::new(current.to_owned(), modes)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unknown_session(id: &SessionId) -> Error {
    Error::invalid_params().data(format!("unknown session {id}"))
}

/// `session/load` of a session with no record: resource not found (-32002).
fn session_not_found(id: &SessionId) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("no session {id} to load: it has no record"),
    )
    .data(serde_json::json!({ "sessionId": id }))
}

/// The prompt without a leading instruction paragraph from the client
/// (warden prefixes `[warden: plan mode] ...` in Plan): scenarios are picked
/// by what the user typed.
fn without_client_instruction(prompt: &str) -> &str {
    let trimmed = prompt.trim_start();
    if !trimmed.starts_with("[warden") {
        return prompt;
    }
    trimmed.split_once("\n\n").map_or("", |(_, rest)| rest)
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

/// How long the stdin reader holds the lines after `initialize` while the
/// answer is not out yet.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(5);

/// Held while a whole line goes to stdout, so that a scripted raw line
/// never lands inside a protocol message.
static STDOUT_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Write a raw line to stdout between protocol messages (the `raw` step).
pub(crate) async fn write_stdout(line: &[u8]) {
    let _whole_lines = STDOUT_LOCK.lock().await;
    let mut stdout = tokio::io::stdout();
    if stdout.write_all(line).await.is_err() || stdout.flush().await.is_err() {
        eprintln!("demo-agent: stdout is closed");
    }
}

/// Close the stdout pipe for good while the process keeps running (the
/// `close_stdout` step); later protocol writes go nowhere.
pub(crate) async fn close_stdout() {
    let _whole_lines = STDOUT_LOCK.lock().await;
    let _ = tokio::io::stdout().flush().await;
    // Put /dev/null in its place rather than closing it, so that a file
    // opened later can never become descriptor 1.
    match std::fs::OpenOptions::new().write(true).open("/dev/null") {
        Ok(null) => {
            use std::os::fd::AsRawFd;
            // SAFETY: dup2 on two open descriptors has no memory-safety
            // preconditions; `null` stays open for the call.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
            }
        }
        Err(error) => eprintln!("demo-agent: cannot open /dev/null: {error}"),
    }
    eprintln!("demo-agent: closed stdout");
}

/// Newline-delimited JSON-RPC on stdin/stdout.
///
/// Stdin is read by a plain thread (not tokio's blocking pool), so that an
/// agent that exits never waits for a read that cannot be cancelled; blank
/// lines are skipped. See [`Handshake`] for what happens around `initialize`.
fn stdio_transport(
    protocol_version: u16,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let handshake = Arc::new(Handshake::new(protocol_version));
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(256);
    let reader_handshake = handshake.clone();
    let spawned = std::thread::Builder::new()
        .name("demo-agent-stdin".to_owned())
        .spawn(move || read_stdin(&tx, &reader_handshake));
    if let Err(error) = spawned {
        eprintln!("demo-agent: cannot start the stdin reader: {error}");
    }
    let incoming = StdinLines { rx };
    let outgoing = futures::sink::unfold(handshake, async move |handshake, line: String| {
        let mut line = handshake.outgoing(line);
        line.push('\n');
        {
            let _whole_lines = STDOUT_LOCK.lock().await;
            // A plain write on this thread: tokio's stdout hands every write
            // to its blocking pool, two thread switches per message (a flood
            // of 100k chunks took 6 s of CPU that way, 0.5 s this way). A
            // full pipe blocks the agent until warden reads, as it should.
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(line.as_bytes())?;
            stdout.flush()?;
        }
        handshake.written();
        Ok::<_, std::io::Error>(handshake)
    });
    Lines::new(outgoing, incoming)
}

fn read_stdin(tx: &tokio::sync::mpsc::Sender<std::io::Result<String>>, handshake: &Handshake) {
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
                let initialize = handshake.incoming(line);
                if tx.blocking_send(Ok(line.to_owned())).is_err() {
                    return;
                }
                if initialize {
                    handshake.wait_for_answer(HANDSHAKE_WAIT);
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

/// The `initialize` exchange, seen from the transport.
///
/// - The SDK refuses other requests until its `initialize` answer is out, so
///   a client that writes everything at once (`printf ... | warden
///   demo-agent`) would race it: the reader holds the lines after
///   `initialize` until the answer is written.
/// - The SDK always answers the version it speaks (1); a scenario's other
///   `protocol_version` is written into the answer here.
struct Handshake {
    /// The version to put in the answer, when not 1.
    rewrite_to: Option<u16>,
    /// The id of the `initialize` request not answered yet.
    pending: Mutex<Option<serde_json::Value>>,
    /// Whether the answer to `pending` is written (the reader waits on it).
    answered: Mutex<bool>,
    wake: Condvar,
}

impl Handshake {
    fn new(protocol_version: u16) -> Self {
        Self {
            rewrite_to: (protocol_version != 1).then_some(protocol_version),
            pending: Mutex::new(None),
            answered: Mutex::new(true),
            wake: Condvar::new(),
        }
    }

    /// Note an incoming line; true when it is an `initialize` request.
    fn incoming(&self, line: &str) -> bool {
        if !line.contains("\"initialize\"") {
            return false;
        }
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return false;
        };
        let Some(id) = message
            .get("id")
            .filter(|_| message.get("method").and_then(|m| m.as_str()) == Some("initialize"))
        else {
            return false;
        };
        *lock(&self.pending) = Some(id.clone());
        *lock(&self.answered) = false;
        true
    }

    /// The outgoing line, with the scenario's version if it answers `initialize`.
    fn outgoing(&self, line: String) -> String {
        let mut pending = lock(&self.pending);
        let Some(id) = pending.as_ref() else {
            return line;
        };
        let Ok(mut message) = serde_json::from_str::<serde_json::Value>(&line) else {
            return line;
        };
        if message.get("id") != Some(id) || message.get("method").is_some() {
            return line;
        }
        *pending = None;
        let Some(version) = self.rewrite_to else {
            return line;
        };
        let Some(result) = message.get_mut("result").and_then(|r| r.as_object_mut()) else {
            return line;
        };
        result.insert("protocolVersion".to_owned(), version.into());
        serde_json::to_string(&message).unwrap_or(line)
    }

    /// A line is written: wake the reader if it was the answer.
    fn written(&self) {
        if lock(&self.pending).is_none() {
            let mut answered = lock(&self.answered);
            if !*answered {
                *answered = true;
                self.wake.notify_all();
            }
        }
    }

    fn wait_for_answer(&self, limit: Duration) {
        let answered = lock(&self.answered);
        let _ = self
            .wake
            .wait_timeout_while(answered, limit, |answered| !*answered);
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
        let rewrite = Handshake::new(0);
        let other = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        assert!(rewrite.incoming(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#));
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#;
        let rewritten: serde_json::Value =
            serde_json::from_str(&rewrite.outgoing(answer.to_owned())).unwrap();
        assert_eq!(
            rewritten,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"protocolVersion": 0}})
        );
        assert_eq!(rewrite.outgoing(answer.to_owned()), answer);
        rewrite.written();
        rewrite.wait_for_answer(Duration::from_secs(5));
    }

    #[test]
    fn version_1_answers_are_left_alone() {
        let handshake = Handshake::new(1);
        assert!(!handshake.incoming(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#));
        assert!(handshake.incoming(r#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#));
        let answer = r#"{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":1}}"#;
        assert_eq!(handshake.outgoing(answer.to_owned()), answer);
        handshake.written();
        handshake.wait_for_answer(Duration::from_secs(5));
    }

    #[test]
    fn sessions_track_modes_and_cancel_running_turns() {
        let sessions = Sessions::default();
        let id = SessionId::new("s1");
        assert!(sessions.start_turn(&id).is_none());
        sessions.create(&id, PathBuf::from("/work"));
        assert_eq!(sessions.cwd(&id), PathBuf::from("/work"));
        assert!(sessions.set_known_mode(&id, "auto").is_ok());
        assert!(sessions.set_known_mode(&id, "yolo").is_err());
        assert!(
            sessions
                .set_known_mode(&SessionId::new("s2"), "plan")
                .is_err()
        );
        let (turn, token) = sessions.start_turn(&id).unwrap();
        sessions.cancel(&SessionId::new("s2"));
        assert!(!token.is_cancelled());
        sessions.cancel(&id);
        assert!(token.is_cancelled());
        sessions.end_turn(&id, turn);
        assert_eq!(lock(&sessions.inner)[&id].turns.len(), 0);
        assert_eq!(lock(&sessions.inner)[&id].record.mode, "auto");
    }

    #[test]
    fn client_instruction_is_skipped_for_scenario_choice() {
        assert_eq!(
            without_client_instruction("[warden: plan mode] plan only.\n\nedit it"),
            "edit it"
        );
        assert_eq!(without_client_instruction("edit [warden]"), "edit [warden]");
    }

    #[test]
    fn prompt_text_joins_text_blocks() {
        let prompt = vec![ContentBlock::from("edit"), ContentBlock::from("now")];
        assert_eq!(prompt_text(&prompt), "edit\nnow");
    }
}

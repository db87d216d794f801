//! The built-in offline demo agent: an ACP agent (protocol version 1) on
//! stdin/stdout that plays scripted scenarios, for first runs, demos and
//! end-to-end tests. Deterministic; no network, no model.
//!
//! `connection.rs` wires the connection: the ACP handlers, cancellation,
//! and the stdio transport; `mod.rs` holds the sessions and their modes. `scenario.rs` holds the
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
mod connection;
mod extras;
mod record;
mod scenario;
mod script;
mod session_options;
mod stdio;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
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
    StopReason,
};
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use tokio_util::sync::CancellationToken;

/// The flood scenario's chunks, for the benches.
pub use self::builtin::flood_chunk;
pub use self::connection::run;

/// `warden demo-agent --login`, the demo's terminal login: saves a sign-in
/// in its state directory, and says what else it could reach (a file
/// created in the home directory, then removed) and which loader variables
/// it was given, so a test can see the sandbox and the environment it ran in.
pub fn terminal_login() -> Vec<String> {
    let mut lines = vec!["demo-agent: terminal login done, you are signed in".to_string()];
    let saved = Store::dir_for(&[]).map(|dir| {
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("signed-in"), "yes\n"))
            .map(|()| dir)
    });
    lines.push(match saved {
        Some(Ok(dir)) => format!("saved the sign-in in {}", dir.display()),
        Some(Err(err)) => format!("could not save the sign-in: {err}"),
        None => "no state directory".to_string(),
    });
    if let Some(home) = std::env::var_os("HOME") {
        let probe = std::path::Path::new(&home).join(".demo-login-probe");
        lines.push(match std::fs::write(&probe, "probe\n") {
            Ok(()) => {
                let _ = std::fs::remove_file(&probe);
                format!("could write {}", probe.display())
            }
            Err(err) => format!("could not write {}: {err}", probe.display()),
        });
    }
    let loader: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| {
            use std::os::unix::ffi::OsStrExt as _;
            crate::sandbox::is_loader_var(name.as_bytes())
                .then(|| name.to_string_lossy().into_owned())
        })
        .collect();
    lines.push(format!(
        "loader variables: {}",
        if loader.is_empty() {
            "none".to_string()
        } else {
            loader.join(", ")
        }
    ));
    lines
}

/// Where the demo agent started with `env` keeps its sessions (its state,
/// which its sandbox lets it write).
pub(crate) fn state_dir(env: &[(String, String)]) -> Option<std::path::PathBuf> {
    record::Store::dir_for(env)
}
use self::record::{Record, Store};
use self::scenario::{ClientFeatures, ModeSpec, Scenario, Step};
use self::script::Runner;
use self::stdio::stdio_transport;
pub(crate) use self::stdio::{close_stdout, write_stdout};

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
                    .prompt_capabilities(
                        agent_client_protocol::v1::schema::PromptCapabilities::new()
                            .embedded_context(scenario.embedded_context)
                            .image(scenario.image),
                    )
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

    /// The scenario's slash commands as an `available_commands_update`
    /// (none when it names none, or none that parse).
    fn commands_update(&self) -> Option<SessionUpdate> {
        let commands: Vec<agent_client_protocol::v1::schema::AvailableCommand> = self
            .scenario
            .commands
            .iter()
            .filter_map(|c| serde_json::from_value(c.clone()).ok())
            .collect();
        (!commands.is_empty()).then(|| {
            SessionUpdate::AvailableCommandsUpdate(
                agent_client_protocol::v1::schema::AvailableCommandsUpdate::new(commands),
            )
        })
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
    /// A turn was cancelled with the scenario's `late_after_cancel`: every
    /// prompt from now on is answered at once and runs after its answer.
    late: bool,
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
                late: false,
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
                late: false,
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

    /// Whether session `id` answers its prompts before they run.
    fn is_late(&self, id: &SessionId) -> bool {
        lock(&self.inner)
            .get(id)
            .is_some_and(|session| session.late)
    }

    /// From now on session `id` answers its prompts before they run.
    fn set_late(&self, id: &SessionId) {
        if let Some(session) = lock(&self.inner).get_mut(id) {
            session.late = true;
        }
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
/// A line per content block besides text (`received resource_link NAME
/// URI`, `received resource URI: N bytes`), so tests can see what a client
/// sent; `None` for a prompt of text only.
fn received_blocks(prompt: &[ContentBlock]) -> Option<String> {
    let lines: Vec<String> = prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(_) => None,
            ContentBlock::ResourceLink(link) => {
                Some(format!("received resource_link {} {}", link.name, link.uri))
            }
            ContentBlock::Resource(resource) => Some(match &resource.resource {
                agent_client_protocol::v1::schema::EmbeddedResourceResource::TextResourceContents(t) => {
                    format!("received resource {}: {} bytes", t.uri, t.text.len())
                }
                _ => "received resource (binary)".to_string(),
            }),
            ContentBlock::Image(image) => Some(format!(
                "received image {}: {} base64 bytes",
                image.mime_type,
                image.data.len()
            )),
            _ => Some("received another block".to_string()),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n") + "\n")
}

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

#[cfg(test)]
mod tests;

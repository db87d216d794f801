//! The IO side of one chat: its session on an agent process, the
//! responders of its pending requests, its file calls and terminals, and
//! its record. The chat's pure state lives in the workspace; code here that
//! wants to change it queues messages in `out`, and file IO in `jobs`, which
//! the runtime moves to its queue and its file worker.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use tokio::sync::mpsc;

use super::calls::FileJob;
use super::{ChatOptions, Incoming, Notify, ResumeChat, SettingsLink, display_path, record};
use crate::acp::{
    AgentCommand, ClientCall, ClientCaps, ClientResponder, ElicitationResponder,
    PermissionResponder,
};
use crate::client::fs::{Protected, Roots};
use crate::client::terminal::Terminals;
use crate::policy::AgentPolicy;
use crate::state::{ChatId, ChatState, Msg, RequestId};

/// One chat's IO.
pub(super) struct Chat {
    /// What runs the chat's agent, and the chat's working directory.
    pub(super) command: AgentCommand,
    /// The agent process (by its spawn key) the session lives on.
    pub(super) agent_key: Option<u64>,
    /// The open session.
    pub(super) session: Option<String>,
    /// The session being loaded: its replayed updates arrive before it is open.
    pub(super) loading: Option<String>,
    /// The agent process the chat's session last lived on, once it is gone
    /// (the chats of a crashed process restart together).
    pub(super) last_key: Option<u64>,
    /// The session the chat last had, once it is gone: a restart continues it.
    pub(super) last_session: Option<String>,
    /// A restart asked the agent to continue this session: the answer says
    /// whether it did.
    pub(super) restarting: Option<String>,
    /// Drop what the agent replays while `loading`: the transcript on
    /// screen already holds it (a restart that fell back to `session/load`).
    pub(super) quiet_replay: bool,
    /// After such a reload, until the next prompt: drop the conversation
    /// the agent still sends. gemini-cli 0.61.0 sends the end of its
    /// replay after its answer to `session/load`.
    pub(super) quiet_tail: bool,
    pub(super) decision_log: Option<PathBuf>,
    pub(super) notify: Notify,
    pub(super) settings: SettingsLink,
    pub(super) caps: ClientCaps,
    /// MCP servers passed to the agent's sessions.
    pub(super) mcp_servers: Vec<crate::acp::McpServer>,
    /// The agent's authentication method to sign in with.
    pub(super) auth_method: Option<String>,
    pub(super) roots: Roots,
    pub(super) responders: HashMap<RequestId, PermissionResponder>,
    /// Pending `elicitation/create` requests shown as cards, by request id.
    pub(super) elicitations: HashMap<RequestId, ElicitationResponder>,
    /// File and terminal calls waiting for the gate, by request id.
    pub(super) client_pending: HashMap<RequestId, (ClientCall, ClientResponder, PathBuf)>,
    /// Connections waiting for the gate, by request id: dropping one
    /// refuses its connection.
    pub(super) net_pending: HashMap<RequestId, tokio::sync::oneshot::Sender<crate::net::NetAnswer>>,
    /// The error a call refused for safety before any IO gets, by request id.
    pub(super) client_errors: HashMap<RequestId, crate::acp::ClientError>,
    pub(super) terminals: Terminals,
    /// Terminal id -> the transcript tool call that shows it.
    pub(super) terminal_tools: HashMap<String, String>,
    pub(super) chat_store: Option<crate::chats::ChatStore>,
    pub(super) record: record::Record,
    pub(super) resume: Option<ResumeChat>,
    pub(super) next_request: RequestId,
    /// Messages for this chat's state, applied by the runtime in order.
    pub(super) out: VecDeque<Msg>,
    /// File IO to run off the loop, in order (see `calls::FileWorker`).
    pub(super) jobs: Vec<FileJob>,
    /// Cancelled prompts warden stopped waiting for: their late answers end nothing.
    pub(super) abandoned_prompts: u32,
    /// How the agent's process and the chat's terminals are confined.
    pub(super) sandbox: Option<crate::sandbox::Profile>,
    /// The chat's agent process has the workspace read-only (Plan).
    pub(super) read_only: bool,
    /// The sandbox of the agent process the chat is on (read-only in Plan).
    pub(super) process_sandbox: Option<crate::sandbox::Profile>,
    /// What the chat was told of the sandbox's denials (each said once).
    pub(super) sandbox_told: Vec<String>,
    /// The chat could not take its session to the process its mode asks
    /// for (the agent can neither load nor resume a session); the user was
    /// asked, and is asked again once the mode and the process fit again.
    pub(super) plan_stuck: bool,
}

/// warden's own files, which the agent's file calls never touch whatever
/// the roots say: the settings file in use (and the default one), the
/// decision log, the chat records, warden's data directory (its log among
/// them) and the demo agent's state.
fn protected_files(command: &AgentCommand, options: &ChatOptions) -> Protected {
    let mut protected = Protected::new();
    for settings in options
        .settings
        .path
        .iter()
        .cloned()
        .chain(crate::settings::resolve_path(None))
    {
        protected = protected.settings(&settings);
    }
    if let Some(log) = &options.decision_log {
        protected = protected.file(log, "warden's decision log");
    }
    if let Some(dir) = &options.chats_dir {
        protected = protected
            .tree(dir, "warden's chat records")
            .tree(&crate::history::dir_beside(dir), "warden's prompt history");
    }
    if let Some(log) = crate::decision_log::default_path() {
        protected = protected.file(&log, "warden's decision log");
    }
    if let Some(dirs) = directories::ProjectDirs::from("", "", "warden") {
        let data = dirs.data_local_dir();
        protected = protected
            .file(&data.join("warden.log"), "warden's log")
            .tree(
                data,
                "warden's data directory (decision log, chat records, log)",
            );
    }
    let demo_state = command
        .env
        .iter()
        .filter(|(name, _)| name == DEMO_STATE)
        .map(|(_, value)| std::ffi::OsString::from(value))
        .chain(std::env::var_os(DEMO_STATE))
        .filter(|value| !value.is_empty());
    for dir in demo_state {
        protected = protected.tree(&PathBuf::from(dir), "the demo agent's state");
    }
    protected
}

/// Where the demo agent keeps its sessions when set (see demo_agent::record).
const DEMO_STATE: &str = "WARDEN_DEMO_STATE";

impl Chat {
    /// A chat's IO and its fresh state. Terminal events come back to the
    /// app's `inbox` tagged with `id`.
    pub(super) fn new(
        id: ChatId,
        command: AgentCommand,
        options: ChatOptions,
        inbox: &mpsc::UnboundedSender<Incoming>,
        disk: super::disk::DiskQueue,
    ) -> (Chat, ChatState) {
        let protected = protected_files(&command, &options);
        let mut state = ChatState::new(command.name.clone(), display_path(&command.cwd));
        state.gate.mode = options.mode;
        // Deny and ask rules naming the agent by the name its command
        // gives apply too, whatever block name it goes by.
        let by_command =
            crate::settings::agent_name_for(&command.program, &command.args, &command.cwd);
        state.gate.agent_policy = AgentPolicy {
            name: command.name.clone(),
            bypass: options.bypass,
            aliases: (by_command != command.name)
                .then_some(by_command)
                .into_iter()
                .collect(),
            unbound: options.settings.named_by_command,
        };
        state.gate.agent_plan_mode = options.agent_plan_mode;
        state.gate.configured_asking_mode = options.asking_mode;
        state.gate.rules = options.rules;
        // Canonical, so that `~` in rules also matches resolved paths.
        state.gate.home = directories::BaseDirs::new().map(|b| {
            let home = b.home_dir();
            home.canonicalize().unwrap_or_else(|_| home.to_path_buf())
        });
        state.session.cwd_path = command.cwd.clone();
        if let Some(resume) = &options.resume {
            state.session.title.clone_from(&resume.title);
        }
        state.gate.headless = options.headless;
        let exec = options.headless.is_some();
        state.session.chat_id = uuid::Uuid::new_v4().to_string();
        state.session.settings_agent = options.settings.agent_block.clone();
        state.gate.bypassed_agents = options.settings.bypassed.clone();
        let roots = Roots::new(&command.cwd, &options.extra_roots).protecting(protected);
        state.session.sandbox = options.sandbox.as_ref().map(crate::sandbox::badge_of);
        let mut terminals = Terminals::new(super::forward(inbox.clone(), move |event| {
            Incoming::Terminal(id, event)
        }));
        terminals.confine(options.sandbox.clone());
        // Their connections are asked about in this chat (issue 35).
        terminals.ask_through(super::forward(inbox.clone(), move |ask| {
            Incoming::TerminalNet(id, Box::new(ask))
        }));
        let mut chat = Chat {
            terminals,
            sandbox: options.sandbox,
            read_only: false,
            plan_stuck: false,
            sandbox_told: Vec::new(),
            process_sandbox: None,
            command,
            agent_key: None,
            session: None,
            loading: None,
            last_key: None,
            last_session: None,
            restarting: None,
            quiet_replay: false,
            quiet_tail: false,
            decision_log: options.decision_log,
            notify: options.notify,
            settings: options.settings,
            caps: options.caps,
            mcp_servers: options.mcp_servers,
            auth_method: options.auth_method,
            roots,
            responders: HashMap::new(),
            elicitations: HashMap::new(),
            client_pending: HashMap::new(),
            client_errors: HashMap::new(),
            net_pending: HashMap::new(),
            terminal_tools: HashMap::new(),
            chat_store: options.chats_dir.map(crate::chats::ChatStore::new),
            record: record::Record::new(id, disk),
            resume: options.resume,
            next_request: 0,
            out: VecDeque::new(),
            jobs: Vec::new(),
            abandoned_prompts: 0,
        };
        chat.record.exec = exec;
        (chat, state)
    }

    /// Whether `session_id` is this chat's, open or being loaded.
    pub(super) fn owns(&self, key: u64, session_id: &str) -> bool {
        self.agent_key == Some(key)
            && (self.session.as_deref() == Some(session_id)
                || self.loading.as_deref() == Some(session_id))
    }

    /// Answer every pending permission request `cancelled`.
    pub(super) fn cancel_responders(&mut self) {
        for (_, responder) in self.responders.drain() {
            responder.respond(crate::model::PermissionOutcome::Cancelled);
        }
        for (_, responder) in self.elicitations.drain() {
            responder.respond(&crate::model::PermissionOutcome::Cancelled);
        }
    }

    /// The session is gone (agent exited, chat closed): nothing of it stays.
    pub(super) fn detach(&mut self) {
        self.cancel_responders();
        self.client_errors.clear();
        // Their connections are refused.
        self.net_pending.clear();
        for (_, (_, responder, _)) in self.client_pending.drain() {
            responder.respond(Err(crate::acp::ClientError::Denied(
                "the session ended".into(),
            )));
        }
        self.terminals.kill_all();
        if let Some(key) = self.agent_key.take() {
            self.last_key = Some(key);
        }
        if let Some(session) = self.session.take() {
            self.last_session = Some(session);
        }
        self.loading = None;
        self.quiet_replay = false;
        self.quiet_tail = false;
        self.abandoned_prompts = 0;
    }
}

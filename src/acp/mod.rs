//! The protocol layer: the only code that knows the ACP SDK.
//!
//! [`spawn`] starts the agent in its own process group, initialises it,
//! opens a session and then serves two directions:
//! - agent -> warden: every notification and request becomes an
//!   [`AgentEvent`] on a channel (a permission request carries a
//!   [`PermissionResponder`]); handlers forward and return at once, never
//!   waiting for the user inside the SDK's dispatch loop;
//! - warden -> agent: [`AgentHandle`] methods queue commands that a task
//!   outside the dispatch loop sends.

mod auth;
mod client_calls;
mod connection;
pub(crate) mod convert;
mod elicitation;
mod fast;
mod handle;
mod lines;
mod login;
mod pipe;
mod process;
mod raw;
mod session;

pub(crate) use auth::{AuthKind, AuthMethod};
pub use client_calls::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};
pub use elicitation::ElicitationResponder;
pub(crate) use handle::{AgentHandle, OptionValue};
pub use login::{Consent, login};

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Lines;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use tokio::sync::mpsc;

use crate::model::{PermissionOutcome, PermissionRequest, SessionInfo, SessionUpdate, StopReason};

use process::Launch;
pub use process::{AgentProcess, LaunchError};

/// How many of the agent's last stderr lines are kept for error reports.
pub(crate) const STDERR_TAIL: usize = 12;

/// What to run: an agent command line and its session's working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    /// Display name (settings block name, or the program's file name).
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The session's working directory (also the process's).
    pub cwd: PathBuf,
}

/// An MCP server passed to the agent's sessions (`[mcp_servers.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub name: String,
    pub transport: McpTransport,
}

/// How the agent reaches an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A program the agent starts, speaking over its stdio.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// A remote server over streamable HTTP (the agent must offer `mcpCapabilities.http`).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A remote server over SSE (the agent must offer `mcpCapabilities.sse`).
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl McpServer {
    /// The server as ACP sends it; `None` when the agent cannot use its
    /// transport (`http` and `sse` need the agent's `mcpCapabilities`).
    pub(super) fn to_acp(&self, http: bool, sse: bool) -> Option<acp::McpServer> {
        let pairs = |items: &[(String, String)]| {
            items
                .iter()
                .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
                .collect::<Vec<_>>()
        };
        let value = match &self.transport {
            McpTransport::Stdio { command, args, env } => serde_json::json!({
                "name": self.name, "command": command, "args": args, "env": pairs(env),
            }),
            McpTransport::Http { url, headers } if http => serde_json::json!({
                "type": "http", "name": self.name, "url": url, "headers": pairs(headers),
            }),
            McpTransport::Sse { url, headers } if sse => serde_json::json!({
                "type": "sse", "name": self.name, "url": url, "headers": pairs(headers),
            }),
            _ => return None,
        };
        serde_json::from_value(value)
            .map_err(|err| tracing::warn!("mcp server {}: {err}", self.name))
            .ok()
    }
}

/// Which client capabilities warden advertises (a setting turns each off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCaps {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub terminal: bool,
}

impl Default for ClientCaps {
    fn default() -> Self {
        ClientCaps {
            read_text_file: true,
            write_text_file: true,
            terminal: true,
        }
    }
}

/// Answers one permission request; dropping it answers `cancelled`.
///
/// The answer is queued on the connection at once, so it reaches the agent
/// before anything sent after it (a `session/cancel`, say).
#[derive(Debug)]
pub struct PermissionResponder(pub(super) Option<Box<Responder<acp::RequestPermissionResponse>>>);

impl PermissionResponder {
    /// Send the answer to the agent.
    pub(crate) fn respond(mut self, outcome: PermissionOutcome) {
        self.send(outcome);
    }

    fn send(&mut self, outcome: PermissionOutcome) {
        let Some(responder) = self.0.take() else {
            return;
        };
        let outcome = match outcome {
            PermissionOutcome::Selected(id) => {
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id))
            }
            PermissionOutcome::Cancelled => acp::RequestPermissionOutcome::Cancelled,
        };
        // The agent may be gone already; nothing is waiting then.
        if let Err(err) = responder.respond(acp::RequestPermissionResponse::new(outcome)) {
            tracing::warn!("could not answer a permission request: {err}");
        }
    }
}

impl Drop for PermissionResponder {
    fn drop(&mut self) {
        self.send(PermissionOutcome::Cancelled);
    }
}

/// Names the chat a session is opened for (the runtime's chat id), so that
/// the answer finds its chat before the session id is known.
pub(crate) type SessionTag = u64;

/// A session the agent keeps, from `session/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSession {
    pub session_id: String,
    pub cwd: PathBuf,
    pub title: Option<String>,
    /// ISO 8601, as the agent sent it.
    pub updated_at: Option<String>,
}

/// Something the agent did, for the runtime.
#[derive(Debug)]
pub enum AgentEvent {
    /// Initialised: what the agent can do with past sessions, who it
    /// says it is (`agentInfo`, when it sent one), and the agent warden
    /// knows it as, from that and its command line (`agents::identify`):
    /// its quirks.
    Initialized(
        AgentAbilities,
        Option<AgentInfo>,
        Option<crate::agents::Agent>,
    ),
    /// A session asked for with [`AgentHandle::open_session`] is open.
    SessionStarted { tag: SessionTag, info: SessionInfo },
    /// Opening that session failed (the agent still runs).
    SessionFailed { tag: SessionTag, message: String },
    /// A `session/update` notification.
    Update {
        session_id: String,
        update: SessionUpdate,
    },
    /// A `session/request_permission`; answer through the responder.
    Permission {
        request: Box<PermissionRequest>,
        responder: PermissionResponder,
    },
    /// An `elicitation/create` shown as a card (see `elicitation::card`);
    /// answer through the responder.
    Elicitation {
        request: Box<PermissionRequest>,
        responder: ElicitationResponder,
    },
    /// A file or terminal request; answer through the responder.
    Client {
        call: ClientCall,
        responder: ClientResponder,
    },
    /// The agent answered `session/prompt` of this session.
    PromptDone {
        session_id: String,
        result: Result<StopReason, String>,
    },
    /// The agent answered `session/set_mode` or `session/set_config_option`
    /// of this session (switching to its mode `mode_id`).
    ModeSet {
        session_id: String,
        mode_id: String,
        result: Result<(), String>,
    },
    /// The agent answered `session/set_config_option` for one of its
    /// session options (not its modes): the options now, or the error.
    OptionSet {
        session_id: String,
        option: String,
        result: Result<Vec<crate::model::SessionOption>, String>,
    },
    /// The agent's answer to `session/list`.
    Sessions(Result<Vec<ListedSession>, String>),
    /// Starting the agent (off the loop: see [`spawn`]) or initialising it
    /// failed: no session can open on this connection.
    ConnectFailed(String),
    /// Something about the connection the user should know (a skipped
    /// line, the agent closing its output); shown in each chat of the agent.
    Notice(String),
    /// The agent process ended (or the connection broke).
    Exited {
        status: String,
        stderr_tail: Vec<String>,
    },
}

/// What the agent advertised about sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentAbilities {
    pub load_session: bool,
    pub resume_session: bool,
    pub list_sessions: bool,
    /// `sessionCapabilities.close`: a closed chat's session is closed.
    pub close_session: bool,
    /// `sessionCapabilities.additionalDirectories`: the roots besides the
    /// cwd go along when a session opens.
    pub additional_directories: bool,
    /// `promptCapabilities.embeddedContext`: a mentioned file's text may
    /// go in the prompt.
    pub embedded_context: bool,
    /// `promptCapabilities.image`: a mentioned (or pasted) image may go in
    /// the prompt as an `image` block.
    pub image: bool,
    /// `authMethods` lists a way to sign in: `/login` is offered.
    pub sign_in: bool,
}

/// At most this many `session/list` pages are asked for (the agent's
/// `nextCursor` is followed until then), so an agent that pages forever
/// cannot keep warden asking.
pub(crate) const LIST_PAGES: usize = 20;

/// How a chat's session opens: where, with which other roots, and which past
/// session to continue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SessionOpen {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The other roots warden serves files in, sent as
    /// `additionalDirectories` when the agent advertises them.
    pub additional_directories: Vec<PathBuf>,
    /// A past session to continue (`session/load` or `session/resume`);
    /// none opens a new one.
    pub resume: Option<String>,
    /// Try `session/resume` before `session/load` (a restart: the turns are
    /// on screen already, a replay is not needed); otherwise `session/load`
    /// comes first, so a reopened chat shows what the agent replays.
    pub prefer_resume: bool,
}

/// Who the agent says it is: `agentInfo` of its `initialize` answer, as
/// sent (untrusted: see `settings::agent_slug` before using it as a name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentInfo {
    /// `agentInfo.name`.
    pub name: String,
    /// `agentInfo.title`, for people.
    pub title: Option<String>,
    /// `agentInfo.version`.
    pub version: String,
}

/// Where a connection's events go. A callback rather than a channel, so
/// that the runtime can put them straight into its own inbox: a streamed
/// chunk then takes one hop to the loop, not two and a task's wake-up.
#[derive(Clone)]
pub(crate) struct Events(Arc<dyn Fn(AgentEvent) -> bool + Send + Sync>);

impl Events {
    /// Events handed to `deliver`, which says whether anyone still listens.
    pub(crate) fn new(deliver: impl Fn(AgentEvent) -> bool + Send + Sync + 'static) -> Self {
        Events(Arc::new(deliver))
    }

    /// Deliver `event`; false once nobody listens.
    pub(crate) fn send(&self, event: AgentEvent) -> bool {
        (self.0)(event)
    }
}

impl From<mpsc::UnboundedSender<AgentEvent>> for Events {
    fn from(tx: mpsc::UnboundedSender<AgentEvent>) -> Self {
        Events::new(move |event| tx.send(event).is_ok())
    }
}

/// Start the agent and connect to it: it is initialised at once, and
/// sessions open as [`AgentHandle::open_session`] asks. Under the sandbox its
/// network goes through a proxy of its own, which sends each connection to a
/// host the profile does not allow on `asks` and waits for the answer
/// (issue 35).
///
/// The handle comes back at once: the process is prepared (its sandbox's
/// rules, the proxy's door, its state files) and forked on the blocking
/// pool, and what the handle is asked meanwhile waits in its queue until the
/// connection runs. A start that fails (the command does not exist, the
/// sandbox cannot be made) arrives on `events` as
/// [`AgentEvent::ConnectFailed`].
pub(crate) fn spawn(
    command: &AgentCommand,
    caps: ClientCaps,
    sandbox: Option<&crate::sandbox::Profile>,
    events: Events,
    asks: mpsc::UnboundedSender<crate::net::ConnectAsk>,
) -> AgentHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let launch = Launch::new();
    let handle = AgentHandle::new(tx, launch.clone());
    let command = command.clone();
    let sandbox = sandbox.cloned();
    let failed = events.clone();
    tokio::spawn(async move {
        let program = command.program.clone();
        let started = tokio::task::spawn_blocking(move || {
            start(&command, caps, sandbox.as_ref(), events, asks, rx, &launch)
        })
        .await;
        let message = match started {
            Ok(Ok(())) | Ok(Err(LaunchError::Abandoned(_))) => return,
            Ok(Err(err)) => err.to_string(),
            Err(err) => format!("could not start the agent `{program}`: {err}"),
        };
        tracing::warn!("{message}");
        let _ = failed.send(AgentEvent::ConnectFailed(message));
    });
    handle
}

/// [`spawn`], but prepared and forked here, before it returns: a failure
/// is returned at once. For where no loop runs yet (warden's start-up, where
/// a command that does not exist is a plain error before the screen is
/// taken) and for `warden login`.
pub(crate) fn spawn_now(
    command: &AgentCommand,
    caps: ClientCaps,
    sandbox: Option<&crate::sandbox::Profile>,
    events: Events,
    asks: mpsc::UnboundedSender<crate::net::ConnectAsk>,
) -> Result<AgentHandle, LaunchError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let launch = Launch::new();
    start(command, caps, sandbox, events, asks, rx, &launch)?;
    Ok(AgentHandle::new(tx, launch))
}

/// Prepare and fork the agent, then serve its connection (tasks of their
/// own); blocks while it is prepared. `launch` is told how it went.
fn start(
    command: &AgentCommand,
    caps: ClientCaps,
    sandbox: Option<&crate::sandbox::Profile>,
    events: Events,
    asks: mpsc::UnboundedSender<crate::net::ConnectAsk>,
    rx: mpsc::UnboundedReceiver<handle::Command>,
    launch: &Launch,
) -> Result<(), LaunchError> {
    let _over = launch.over_on_drop();
    let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    let (process, stdin, stdout) = AgentProcess::spawn(
        command,
        sandbox,
        stderr_tail.clone(),
        events.clone(),
        Some(asks),
        launch,
    )?;
    let notices = events.clone();
    let mut told = Vec::new();
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    let fast = fast::FastPath::new(events.clone());
    let stdout = match pipe::threaded(stdout) {
        Ok(stdout) => stdout,
        Err(err) => {
            tracing::warn!("cannot read the agent's output on a thread: {err}");
            tokio::spawn(process.shutdown(std::time::Duration::ZERO));
            return Err(LaunchError::NoPipes(command.program.clone()));
        }
    };
    let nudge = stdout.nudge();
    let incoming = lines::incoming(
        stdout,
        move |why| {
            tracing::warn!(?why, "a line of the agent's output was skipped");
            if !told.contains(&why) {
                told.push(why);
                let _ = notices.send(AgentEvent::Notice(why.describe().to_string()));
            }
        },
        closed_tx,
        &fast,
    );
    let transport = Lines::new(lines::outgoing(stdin, &fast, nudge), incoming);
    let ender = process.ender();
    let closed = events.clone();
    tokio::spawn(async move {
        if closed_rx.await.is_err() {
            return;
        }
        // The agent's output closed while it may still run: that is its
        // end. Give an exiting agent a moment, then say so and end its
        // group, which reports `Exited` so that `r` can restart it.
        let grace = std::time::Duration::from_millis(500);
        if ender.clone().exits_within(grace).await {
            return;
        }
        let _ = closed.send(AgentEvent::Notice(
            "the agent closed its output but kept running; ending it".to_string(),
        ));
        ender.end(std::time::Duration::ZERO).await;
    });
    let auth = auth::Auth {
        methods: Arc::new(Vec::new()),
        chosen: None,
        done: false,
        agent: command.name.clone(),
        env: Arc::new(command.env.iter().map(|(name, _)| name.clone()).collect()),
    };
    let identity = connection::Identity::new(crate::agents::known(
        &command.program,
        &command.args,
        &command.cwd,
    ));
    tokio::spawn(connection::run_connection(
        transport,
        Arc::new(identity),
        caps,
        auth,
        rx,
        events,
        fast.fences(),
    ));
    Ok(())
}

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod spawn_tests;

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

mod client_calls;
mod convert;
mod elicitation;
mod fast;
mod lines;
mod process;

pub use client_calls::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};
pub use elicitation::ElicitationResponder;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Lines};
use tokio::sync::mpsc;

use crate::model::{
    PermissionOutcome, PermissionRequest, SessionInfo, SessionOrigin, SessionUpdate, StopReason,
};

pub use process::{AgentProcess, LaunchError};

/// How many of the agent's last stderr lines are kept for error reports.
pub const STDERR_TAIL: usize = 12;

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
    fn to_acp(&self, http: bool, sse: bool) -> Option<acp::McpServer> {
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
pub struct PermissionResponder(Option<Responder<acp::RequestPermissionResponse>>);

impl PermissionResponder {
    /// Send the answer to the agent.
    pub fn respond(mut self, outcome: PermissionOutcome) {
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
pub type SessionTag = u64;

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
    /// Initialised: what the agent can do with past sessions, and who it
    /// says it is (`agentInfo`, when it sent one).
    Initialized(AgentAbilities, Option<AgentInfo>),
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
    /// Initialising failed: no session can open on this connection.
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
}

/// At most this many `session/list` pages are asked for (the agent's
/// `nextCursor` is followed until then), so an agent that pages forever
/// cannot keep warden asking.
pub const LIST_PAGES: usize = 20;

/// How a chat's session opens: where, with which other roots, and which past
/// session to continue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionOpen {
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

/// Commands queued for the connection task.
#[derive(Debug)]
enum Command {
    OpenSession {
        tag: SessionTag,
        open: SessionOpen,
    },
    CloseSession {
        session_id: String,
    },
    ListSessions {
        cwd: PathBuf,
    },
    Prompt {
        session_id: String,
        text: String,
    },
    Cancel {
        session_id: String,
    },
    SetMode {
        session_id: String,
        mode_id: String,
    },
    SetConfig {
        session_id: String,
        option: String,
        value: String,
    },
    SetOption {
        session_id: String,
        option: String,
        value: OptionValue,
    },
    McpServers(Vec<McpServer>),
    AuthMethod(String),
}

/// A new value for one of the agent's session options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionValue {
    /// A select option's choice, by id.
    Choice(String),
    /// A boolean option's value.
    Flag(bool),
}

/// A running agent: send commands, end it.
#[derive(Debug)]
pub struct AgentHandle {
    commands: mpsc::UnboundedSender<Command>,
    process: AgentProcess,
}

impl AgentHandle {
    /// Open a session for the chat `tag`: `session/load` or
    /// `session/resume` of `open.resume` when the agent offers them, else
    /// `session/new`. The answer arrives as [`AgentEvent::SessionStarted`]
    /// (or [`AgentEvent::SessionFailed`]) with the same tag.
    pub fn open_session(&self, tag: SessionTag, open: SessionOpen) {
        self.send(Command::OpenSession { tag, open });
    }

    /// Send `session/close` when the agent advertised it (a chat closed; the
    /// agent process may serve other chats). Nothing is waited for.
    pub fn close_session(&self, session_id: &str) {
        self.send(Command::CloseSession {
            session_id: session_id.to_string(),
        });
    }

    /// Send `session/list` for `cwd`; the answer arrives as [`AgentEvent::Sessions`].
    pub fn list_sessions(&self, cwd: &std::path::Path) {
        self.send(Command::ListSessions {
            cwd: cwd.to_path_buf(),
        });
    }

    /// Send `session/prompt`; the answer arrives as [`AgentEvent::PromptDone`].
    pub fn prompt(&self, session_id: &str, text: &str) {
        self.send(Command::Prompt {
            session_id: session_id.to_string(),
            text: text.to_string(),
        });
    }

    /// Send `session/cancel`.
    pub fn cancel(&self, session_id: &str) {
        self.send(Command::Cancel {
            session_id: session_id.to_string(),
        });
    }

    /// Send `session/set_mode`.
    pub fn set_mode(&self, session_id: &str, mode_id: &str) {
        self.send(Command::SetMode {
            session_id: session_id.to_string(),
            mode_id: mode_id.to_string(),
        });
    }

    /// Send `session/set_config_option` (a select option: `value` is the choice's id).
    pub fn set_config_option(&self, session_id: &str, option: &str, value: &str) {
        self.send(Command::SetConfig {
            session_id: session_id.to_string(),
            option: option.to_string(),
            value: value.to_string(),
        });
    }

    /// The MCP servers passed in every `session/new`, `session/load` and
    /// `session/resume` sent after this.
    pub fn set_mcp_servers(&self, servers: Vec<McpServer>) {
        self.send(Command::McpServers(servers));
    }

    /// Sign in with the agent's authentication method `id` (the
    /// `auth_method` setting): `authenticate` is sent before the next
    /// session opens, and again when opening one fails with "auth required".
    pub fn set_auth_method(&self, id: &str) {
        self.send(Command::AuthMethod(id.to_string()));
    }

    /// Send `session/set_config_option` for one of the agent's session
    /// options (model, thought level, a toggle); the answer arrives as
    /// [`AgentEvent::OptionSet`].
    pub fn set_option(&self, session_id: &str, option: &str, value: OptionValue) {
        self.send(Command::SetOption {
            session_id: session_id.to_string(),
            option: option.to_string(),
            value,
        });
    }

    fn send(&self, command: Command) {
        if self.commands.send(command).is_err() {
            tracing::warn!("agent connection is closed; command dropped");
        }
    }

    /// The agent's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Close the agent's stdin, wait `grace` for it to exit, then end its
    /// whole process group (TERM, then KILL).
    pub async fn shutdown(self, grace: std::time::Duration) {
        drop(self.commands);
        self.process.shutdown(grace).await;
    }
}

/// Start the agent and connect to it: it is initialised at once, and
/// sessions open as [`AgentHandle::open_session`] asks. Events arrive on
/// `events`; a failure to spawn is returned at once (the command does not
/// exist, ...).
pub fn spawn(
    command: &AgentCommand,
    caps: ClientCaps,
    events: mpsc::UnboundedSender<AgentEvent>,
) -> Result<AgentHandle, LaunchError> {
    let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    let (process, stdin, stdout) =
        AgentProcess::spawn(command, stderr_tail.clone(), events.clone())?;
    let (tx, rx) = mpsc::unbounded_channel();
    let notices = events.clone();
    let mut told = Vec::new();
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    let fast = fast::FastPath::new(events.clone());
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
    let transport = Lines::new(lines::outgoing(stdin, &fast), incoming);
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
    tokio::spawn(run_connection(transport, caps, rx, events, fast.fences()));
    Ok(AgentHandle {
        commands: tx,
        process,
    })
}

async fn run_connection(
    transport: impl ConnectTo<Client> + 'static,
    caps: ClientCaps,
    commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<AgentEvent>,
    fences: fast::Fences,
) {
    let notify_events = events.clone();
    let permission_events = events.clone();
    let elicitation_events = events.clone();
    let elicitations = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let main_events = events.clone();
    let forward = |events: &mpsc::UnboundedSender<AgentEvent>,
                   (call, responder): (ClientCall, ClientResponder)| {
        tracing::debug!(?call, "client call");
        // If the runtime is gone, the responder drops and answers an error.
        let _ = events.send(AgentEvent::Client { call, responder });
    };
    let (e1, e2, e3, e4, e5, e6, e7) = (
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
    );
    let result = Client
        .v1()
        .name("warden")
        .with_handler(fences)
        .on_receive_notification(
            async move |notification: acp::SessionNotification, _cx| {
                let update = convert::session_update(&notification.update);
                let controls = convert::controls_update(&notification.update);
                if let SessionUpdate::Other(name) = &update
                    && controls.is_none()
                {
                    tracing::debug!(kind = %name, "session update ignored");
                }
                let _ = notify_events.send(AgentEvent::Update {
                    session_id: notification.session_id.to_string(),
                    update,
                });
                if let Some(update) = controls {
                    let _ = notify_events.send(AgentEvent::Update {
                        session_id: notification.session_id.to_string(),
                        update,
                    });
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: acp::RequestPermissionRequest, responder, _cx| {
                let domain = convert::permission_request(&request);
                tracing::info!(tool_call = %domain.tool_call_id, "permission requested");
                // Forward and return: the user answers later, outside the dispatch loop.
                // If the runtime is gone, the event (and the responder) drops: cancelled.
                let _ = permission_events.send(AgentEvent::Permission {
                    request: Box::new(domain),
                    responder: PermissionResponder(Some(responder)),
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::CreateElicitationRequest, responder, _cx| {
                let seq = elicitations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let event = match elicitation::card(&req, responder, seq) {
                    Ok((request, responder)) => AgentEvent::Elicitation {
                        request: Box::new(request),
                        responder,
                    },
                    Err(message) => AgentEvent::Notice(message),
                };
                let _ = elicitation_events.send(event);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ReadTextFileRequest, r, _cx| {
                forward(&e1, client_calls::read(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::WriteTextFileRequest, r, _cx| {
                forward(&e2, client_calls::write(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::CreateTerminalRequest, r, _cx| {
                forward(&e3, client_calls::create(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::TerminalOutputRequest, r, _cx| {
                forward(&e4, client_calls::output(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::WaitForTerminalExitRequest, r, _cx| {
                forward(&e5, client_calls::wait(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::KillTerminalRequest, r, _cx| {
                forward(&e6, client_calls::kill(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ReleaseTerminalRequest, r, _cx| {
                forward(&e7, client_calls::release(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            serve(cx, caps, commands, main_events).await;
            Ok(())
        })
        .await;
    if let Err(err) = result {
        tracing::warn!("agent connection ended: {err}");
    }
}

/// Initialise, then send queued commands until the queue closes.
async fn serve(
    cx: ConnectionTo<Agent>,
    caps: ClientCaps,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<AgentEvent>,
) {
    let (abilities, mcp_http, mcp_sse, methods, info) = match initialize(&cx, caps).await {
        Ok(initialized) => initialized,
        Err(message) => {
            let _ = events.send(AgentEvent::ConnectFailed(message));
            return;
        }
    };
    let _ = events.send(AgentEvent::Initialized(abilities, info));
    let mut mcp: Vec<acp::McpServer> = Vec::new();
    let mut auth = Auth {
        methods: Arc::new(methods),
        chosen: None,
        done: false,
    };
    while let Some(command) = commands.recv().await {
        match command {
            Command::AuthMethod(id) => auth.chosen = Some(id),
            Command::McpServers(servers) => {
                let (usable, skipped): (Vec<_>, Vec<_>) = servers
                    .iter()
                    .map(|s| (s, s.to_acp(mcp_http, mcp_sse)))
                    .partition(|(_, acp)| acp.is_some());
                mcp = usable.into_iter().filter_map(|(_, acp)| acp).collect();
                if !skipped.is_empty() {
                    let names: Vec<String> = skipped
                        .iter()
                        .map(|(s, _)| format!("`{}`", s.name))
                        .collect();
                    let _ = events.send(AgentEvent::Notice(format!(
                        "MCP servers not passed to the agent, which does not offer their transport (http or sse): {}",
                        names.join(", ")
                    )));
                }
            }
            Command::OpenSession { tag, open } => {
                // A method the settings name: sign in once, before the
                // first session (inline, so that sessions wait for it).
                if let Some(id) = auth.chosen.clone().filter(|_| !auth.done) {
                    auth.done = true;
                    if let Err(message) = authenticate(&cx, &auth.methods, &id).await {
                        let _ = events.send(AgentEvent::SessionFailed { tag, message });
                        continue;
                    }
                }
                let cx = cx.clone();
                let events = events.clone();
                let mcp = mcp.clone();
                let auth = auth.clone();
                tokio::spawn(async move {
                    let mut opened = open_session(&cx, abilities, open.clone(), mcp.clone()).await;
                    if let Err(OpenError::AuthRequired(_)) = &opened
                        && let Some(id) = &auth.chosen
                    {
                        opened = match authenticate(&cx, &auth.methods, id).await {
                            Ok(()) => open_session(&cx, abilities, open, mcp).await,
                            Err(message) => Err(OpenError::Other(message)),
                        };
                    }
                    let opened = opened.map_err(|err| match err {
                        OpenError::AuthRequired(message) => auth.missing(&message),
                        OpenError::Other(message) => message,
                    });
                    match opened {
                        Ok((info, options)) => {
                            let session_id = info.session_id.clone();
                            let _ = events.send(AgentEvent::SessionStarted { tag, info });
                            // After the start, so that the session is the chat's.
                            let _ = events.send(AgentEvent::Update {
                                session_id,
                                update: SessionUpdate::Options(options),
                            });
                        }
                        Err(message) => {
                            let _ = events.send(AgentEvent::SessionFailed { tag, message });
                        }
                    }
                });
            }
            Command::ListSessions { cwd } => {
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let listed = list_sessions(&cx, cwd).await;
                    let _ = events.send(AgentEvent::Sessions(listed));
                });
            }
            Command::CloseSession { session_id } => {
                if !abilities.close_session {
                    continue;
                }
                let cx = cx.clone();
                tokio::spawn(async move {
                    let request = acp::CloseSessionRequest::new(acp::SessionId::new(session_id));
                    if let Err(err) = cx.send_request(request).block_task().await {
                        tracing::warn!("session/close failed: {err}");
                    }
                });
            }
            Command::Prompt { session_id, text } => {
                let request = acp::PromptRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    vec![acp::ContentBlock::Text(acp::TextContent::new(text))],
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    // Sent untyped so that the answer is read from its JSON:
                    // a stop reason this ACP version lacks is kept as sent.
                    let result = match agent_client_protocol::UntypedMessage::new(
                        "session/prompt",
                        &request,
                    ) {
                        Ok(untyped) => cx.send_request(untyped).block_task().await,
                        Err(err) => Err(err),
                    };
                    let result = match result {
                        Ok(response) => convert::stop_reason(&response),
                        // The agent's output ended: its exit (with its
                        // stderr) follows and ends the turn; a failed prompt
                        // first would hide why.
                        Err(err) if agent_client_protocol::is_incoming_transport_closed(&err) => {
                            tracing::info!("prompt ended by the agent's output closing");
                            return;
                        }
                        Err(err) => Err(err.to_string()),
                    };
                    let _ = events.send(AgentEvent::PromptDone { session_id, result });
                });
            }
            Command::Cancel { session_id } => {
                let note = acp::CancelNotification::new(acp::SessionId::new(session_id));
                if let Err(err) = cx.send_notification(note) {
                    tracing::warn!("could not send session/cancel: {err}");
                }
            }
            Command::SetMode {
                session_id,
                mode_id,
            } => {
                let request = acp::SetSessionModeRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionModeId::new(mode_id.clone()),
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result.map(|_| ()).map_err(|err| {
                        tracing::warn!("session/set_mode failed: {err}");
                        err.to_string()
                    });
                    let _ = events.send(AgentEvent::ModeSet {
                        session_id,
                        mode_id,
                        result,
                    });
                });
            }
            Command::SetOption {
                session_id,
                option,
                value,
            } => {
                let value = match value {
                    OptionValue::Choice(id) => acp::SessionConfigOptionValue::ValueId {
                        value: acp::SessionConfigValueId::new(id),
                    },
                    OptionValue::Flag(on) => acp::SessionConfigOptionValue::Boolean { value: on },
                };
                let request = acp::SetSessionConfigOptionRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionConfigId::new(option.clone()),
                    value,
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result
                        .map(|response| convert::session_options(&response.config_options))
                        .map_err(|err| {
                            tracing::warn!("session/set_config_option failed: {err}");
                            err.to_string()
                        });
                    let _ = events.send(AgentEvent::OptionSet {
                        session_id,
                        option,
                        result,
                    });
                });
            }
            Command::SetConfig {
                session_id,
                option,
                value,
            } => {
                let request = acp::SetSessionConfigOptionRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionConfigId::new(option),
                    acp::SessionConfigValueId::new(value.clone()),
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result.map(|_| ()).map_err(|err| {
                        tracing::warn!("session/set_config_option failed: {err}");
                        err.to_string()
                    });
                    let _ = events.send(AgentEvent::ModeSet {
                        session_id,
                        mode_id: value,
                        result,
                    });
                });
            }
        }
    }
}

/// What `initialize` tells: abilities, MCP over http and sse, sign-in
/// methods, and the agent's own name.
type Initialized = (
    AgentAbilities,
    bool,
    bool,
    Vec<acp::AuthMethod>,
    Option<AgentInfo>,
);

/// `initialize`: warden's capabilities out, the agent's abilities back.
/// Also whether the agent takes MCP servers over http and over sse, its
/// authentication methods, and its `agentInfo`.
async fn initialize(cx: &ConnectionTo<Agent>, caps: ClientCaps) -> Result<Initialized, String> {
    let capabilities = acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new()
            .read_text_file(caps.read_text_file)
            .write_text_file(caps.write_text_file))
        .terminal(caps.terminal)
        // codex-acp then streams the output of commands it runs itself in
        // `_meta` (terminal_info / terminal_output / terminal_exit), which
        // the tool call shows like a terminal of warden's.
        .meta(acp::Meta::from_iter([(
            "terminal_output".to_string(),
            serde_json::Value::Bool(true),
        )]))
        .elicitation(
            acp::ElicitationCapabilities::new()
                .form(acp::ElicitationFormCapabilities::new())
                .url(acp::ElicitationUrlCapabilities::new()),
        );
    let init = acp::InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(capabilities)
        .client_info(acp::Implementation::new(
            "warden",
            env!("CARGO_PKG_VERSION"),
        ));
    let response = cx
        .send_request(init)
        .block_task()
        .await
        .map_err(|err| explain_init_error(&err.to_string()))?;
    if response.protocol_version != ProtocolVersion::V1 {
        return Err(version_mismatch(&response.protocol_version.to_string()));
    }
    let agent = &response.agent_capabilities;
    let abilities = AgentAbilities {
        load_session: agent.load_session,
        resume_session: agent.session_capabilities.resume.is_some(),
        list_sessions: agent.session_capabilities.list.is_some(),
        close_session: agent.session_capabilities.close.is_some(),
        additional_directories: agent.session_capabilities.additional_directories.is_some(),
    };
    let methods = response.auth_methods.clone();
    let info = response.agent_info.map(|info| AgentInfo {
        name: info.name,
        title: info.title,
        version: info.version,
    });
    Ok((
        abilities,
        agent.mcp_capabilities.http,
        agent.mcp_capabilities.sse,
        methods,
        info,
    ))
}

/// `session/list`, following `nextCursor` for at most [`LIST_PAGES`] pages
/// (and never the same cursor twice). A failed later page keeps what the
/// earlier ones listed.
async fn list_sessions(
    cx: &ConnectionTo<Agent>,
    cwd: PathBuf,
) -> Result<Vec<ListedSession>, String> {
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for page in 0..LIST_PAGES {
        let request = acp::ListSessionsRequest::new()
            .cwd(cwd.clone())
            .cursor(cursor.clone());
        let response = match cx.send_request(request).block_task().await {
            Ok(response) => response,
            Err(err) if page == 0 => return Err(err.to_string()),
            Err(err) => {
                tracing::warn!("session/list page {} failed: {err}", page + 1);
                break;
            }
        };
        listed.extend(response.sessions.into_iter().map(|s| ListedSession {
            session_id: s.session_id.to_string(),
            cwd: s.cwd,
            title: s.title,
            updated_at: s.updated_at,
        }));
        match response.next_cursor {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => return Ok(listed),
        }
    }
    tracing::info!("session/list: stopped after {LIST_PAGES} pages");
    Ok(listed)
}

/// Open a session: continue `open.resume` when the agent can (resume or
/// load, in the order `open.prefer_resume` says), else a new one.
async fn open_session(
    cx: &ConnectionTo<Agent>,
    agent: AgentAbilities,
    open: SessionOpen,
    mcp: Vec<acp::McpServer>,
) -> Result<(SessionInfo, Vec<crate::model::SessionOption>), OpenError> {
    let SessionOpen {
        cwd,
        additional_directories,
        resume,
        prefer_resume,
    } = open;
    let dirs = if agent.additional_directories {
        additional_directories
    } else {
        Vec::new()
    };
    if let Some(id) = resume {
        let order = if prefer_resume {
            [SessionOrigin::Resumed, SessionOrigin::Loaded]
        } else {
            [SessionOrigin::Loaded, SessionOrigin::Resumed]
        };
        for way in order {
            let session = acp::SessionId::new(id.clone());
            let answer = match way {
                SessionOrigin::Loaded if agent.load_session => {
                    // The replayed updates arrive as notifications before this answer.
                    let request = acp::LoadSessionRequest::new(session, cwd.clone())
                        .additional_directories(dirs.clone())
                        .mcp_servers(mcp.clone());
                    cx.send_request(request).block_task().await.map(|r| {
                        (
                            pick_modes(r.config_options.as_deref(), r.modes.as_ref()),
                            options_of(r.config_options.as_deref()),
                        )
                    })
                }
                SessionOrigin::Resumed if agent.resume_session => {
                    let request = acp::ResumeSessionRequest::new(session, cwd.clone())
                        .additional_directories(dirs.clone())
                        .mcp_servers(mcp.clone());
                    cx.send_request(request).block_task().await.map(|r| {
                        (
                            pick_modes(r.config_options.as_deref(), r.modes.as_ref()),
                            options_of(r.config_options.as_deref()),
                        )
                    })
                }
                _ => continue,
            };
            match answer {
                Ok((modes, options)) => {
                    let info = SessionInfo {
                        session_id: id,
                        modes,
                        origin: way,
                    };
                    return Ok((info, options));
                }
                Err(err) => tracing::warn!("continuing session {id} failed ({way:?}): {err}"),
            }
        }
    }
    let session = cx
        .send_request(
            acp::NewSessionRequest::new(cwd)
                .additional_directories(dirs)
                .mcp_servers(mcp),
        )
        .block_task()
        .await
        .map_err(|err| {
            let message = format!("the agent could not open a session: {err}");
            if err.code == agent_client_protocol::ErrorCode::AUTH_REQUIRED {
                OpenError::AuthRequired(message)
            } else {
                OpenError::Other(message)
            }
        })?;
    let info = SessionInfo {
        session_id: session.session_id.to_string(),
        modes: pick_modes(session.config_options.as_deref(), session.modes.as_ref()),
        origin: SessionOrigin::New,
    };
    Ok((info, options_of(session.config_options.as_deref())))
}

/// Why a session did not open.
enum OpenError {
    /// The agent answered "auth required": sign in first.
    AuthRequired(String),
    Other(String),
}

/// The agent's authentication methods and the one the settings name.
#[derive(Clone)]
struct Auth {
    methods: Arc<Vec<acp::AuthMethod>>,
    chosen: Option<String>,
    /// `authenticate` was sent before the first session.
    done: bool,
}

impl Auth {
    /// The message for a session that needs a sign-in warden could not do.
    fn missing(&self, message: &str) -> String {
        if self.methods.is_empty() {
            return format!(
                "{message}; the agent needs you to sign in but offers no method warden can use: \
                 sign in with the agent's own command, then restart it (r)"
            );
        }
        let listed: Vec<String> = self.methods.iter().map(describe_method).collect();
        format!(
            "{message}; the agent needs you to sign in: name one of its methods with \
             auth_method = \"ID\" in its [agents.NAME] block: {}",
            listed.join(", ")
        )
    }
}

/// `id` (name), and `, a terminal login` for a terminal method.
fn describe_method(method: &acp::AuthMethod) -> String {
    let terminal = match method {
        acp::AuthMethod::Terminal(_) => ", a login in a terminal, which warden cannot run yet",
        _ => "",
    };
    format!(
        "`{}` ({}{terminal})",
        crate::sanitize::one_line(&method.id().to_string()),
        crate::sanitize::one_line(method.name())
    )
}

/// Send `authenticate` with method `id`; an error says what went wrong.
async fn authenticate(
    cx: &ConnectionTo<Agent>,
    methods: &[acp::AuthMethod],
    id: &str,
) -> Result<(), String> {
    let Some(method) = methods.iter().find(|m| m.id().to_string() == id) else {
        let listed: Vec<String> = methods.iter().map(describe_method).collect();
        return Err(format!(
            "auth_method = \"{}\" is not one of the agent's methods ({})",
            crate::sanitize::one_line(id),
            if listed.is_empty() {
                "it offers none".to_string()
            } else {
                listed.join(", ")
            }
        ));
    };
    if let acp::AuthMethod::Terminal(_) = method {
        return Err(format!(
            "auth_method = \"{}\" is a login in a terminal, which warden cannot run yet: \
             run the agent's login yourself, then restart it (r)",
            crate::sanitize::one_line(id)
        ));
    }
    cx.send_request(acp::AuthenticateRequest::new(method.id().clone()))
        .block_task()
        .await
        .map(|_| ())
        .map_err(|err| {
            format!(
                "signing in to the agent with `{}` failed: {err}",
                crate::sanitize::one_line(id)
            )
        })
}

/// The agent's session options besides its modes.
fn options_of(options: Option<&[acp::SessionConfigOption]>) -> Vec<crate::model::SessionOption> {
    options.map(convert::session_options).unwrap_or_default()
}

/// The agent's modes: a `mode` config option when it offers one, else `modes`.
fn pick_modes(
    options: Option<&[acp::SessionConfigOption]>,
    modes: Option<&acp::SessionModeState>,
) -> Option<crate::model::AgentModes> {
    options
        .and_then(convert::config_modes)
        .or_else(|| modes.map(convert::modes))
}

fn version_mismatch(theirs: &str) -> String {
    format!(
        "the agent speaks ACP protocol version {theirs}, but warden speaks version {}; \
         update the agent (or warden) so both speak the same version",
        ProtocolVersion::V1
    )
}

fn explain_init_error(message: &str) -> String {
    // The SDK refuses a response that selects another version before we see it.
    let lower = message.to_lowercase();
    if lower.contains("protocol") && lower.contains("version") {
        let theirs = message
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .find(|v| *v != "1")
            .unwrap_or("another");
        return format!("{} ({message})", version_mismatch(theirs));
    }
    format!("the agent failed to initialise: {message}")
}

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
mod lines;
mod process;

pub use client_calls::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};

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

/// What the agent advertised about past sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentAbilities {
    pub load_session: bool,
    pub resume_session: bool,
    pub list_sessions: bool,
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
        cwd: PathBuf,
        resume: Option<String>,
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
}

/// A running agent: send commands, end it.
#[derive(Debug)]
pub struct AgentHandle {
    commands: mpsc::UnboundedSender<Command>,
    process: AgentProcess,
}

impl AgentHandle {
    /// Open a session in `cwd` for the chat `tag`: `session/load` or
    /// `session/resume` of `resume` when the agent offers them, else
    /// `session/new`. The answer arrives as [`AgentEvent::SessionStarted`]
    /// (or [`AgentEvent::SessionFailed`]) with the same tag.
    pub fn open_session(&self, tag: SessionTag, cwd: &std::path::Path, resume: Option<String>) {
        self.send(Command::OpenSession {
            tag,
            cwd: cwd.to_path_buf(),
            resume,
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
    );
    let transport = Lines::new(lines::outgoing(stdin), incoming);
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
    tokio::spawn(run_connection(transport, caps, rx, events));
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
) {
    let notify_events = events.clone();
    let permission_events = events.clone();
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
        .on_receive_notification(
            async move |notification: acp::SessionNotification, _cx| {
                let update = convert::session_update(&notification.update);
                if let SessionUpdate::Other(name) = &update {
                    tracing::debug!(kind = %name, "session update ignored");
                }
                let _ = notify_events.send(AgentEvent::Update {
                    session_id: notification.session_id.to_string(),
                    update,
                });
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
    let (abilities, info) = match initialize(&cx, caps).await {
        Ok(initialized) => initialized,
        Err(message) => {
            let _ = events.send(AgentEvent::ConnectFailed(message));
            return;
        }
    };
    let _ = events.send(AgentEvent::Initialized(abilities, info));
    while let Some(command) = commands.recv().await {
        match command {
            Command::OpenSession { tag, cwd, resume } => {
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let event = match open_session(&cx, abilities, cwd, resume).await {
                        Ok(info) => AgentEvent::SessionStarted { tag, info },
                        Err(message) => AgentEvent::SessionFailed { tag, message },
                    };
                    let _ = events.send(event);
                });
            }
            Command::ListSessions { cwd } => {
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let request = acp::ListSessionsRequest::new().cwd(cwd);
                    let listed = match cx.send_request(request).block_task().await {
                        Ok(response) => Ok(response
                            .sessions
                            .into_iter()
                            .map(|s| ListedSession {
                                session_id: s.session_id.to_string(),
                                cwd: s.cwd,
                                title: s.title,
                                updated_at: s.updated_at,
                            })
                            .collect()),
                        Err(err) => Err(err.to_string()),
                    };
                    let _ = events.send(AgentEvent::Sessions(listed));
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
                    let result = cx.send_request(request).block_task().await;
                    let result = match result {
                        Ok(response) => Ok(convert::stop_reason(&response.stop_reason)),
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

/// `initialize`: warden's capabilities out, the agent's abilities and
/// `agentInfo` back.
async fn initialize(
    cx: &ConnectionTo<Agent>,
    caps: ClientCaps,
) -> Result<(AgentAbilities, Option<AgentInfo>), String> {
    let capabilities = acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new()
            .read_text_file(caps.read_text_file)
            .write_text_file(caps.write_text_file))
        .terminal(caps.terminal);
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
    };
    let info = response.agent_info.map(|info| AgentInfo {
        name: info.name,
        title: info.title,
        version: info.version,
    });
    Ok((abilities, info))
}

/// Open a session: load or resume `resume` when the agent can, else a new one.
async fn open_session(
    cx: &ConnectionTo<Agent>,
    agent: AgentAbilities,
    cwd: PathBuf,
    resume: Option<String>,
) -> Result<SessionInfo, String> {
    if let Some(id) = resume {
        if agent.load_session {
            // The replayed updates arrive as notifications before this answer.
            let request =
                acp::LoadSessionRequest::new(acp::SessionId::new(id.clone()), cwd.clone());
            match cx.send_request(request).block_task().await {
                Ok(loaded) => {
                    return Ok(SessionInfo {
                        session_id: id,
                        modes: pick_modes(loaded.config_options.as_deref(), loaded.modes.as_ref()),
                        origin: SessionOrigin::Loaded,
                    });
                }
                Err(err) => tracing::warn!("session/load failed, opening a new session: {err}"),
            }
        } else if agent.resume_session {
            let request =
                acp::ResumeSessionRequest::new(acp::SessionId::new(id.clone()), cwd.clone());
            match cx.send_request(request).block_task().await {
                Ok(resumed) => {
                    return Ok(SessionInfo {
                        session_id: id,
                        modes: pick_modes(
                            resumed.config_options.as_deref(),
                            resumed.modes.as_ref(),
                        ),
                        origin: SessionOrigin::Resumed,
                    });
                }
                Err(err) => tracing::warn!("session/resume failed, opening a new session: {err}"),
            }
        }
    }
    let session = cx
        .send_request(acp::NewSessionRequest::new(cwd))
        .block_task()
        .await
        .map_err(|err| format!("the agent could not open a session: {err}"))?;
    Ok(SessionInfo {
        session_id: session.session_id.to_string(),
        modes: pick_modes(session.config_options.as_deref(), session.modes.as_ref()),
        origin: SessionOrigin::New,
    })
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

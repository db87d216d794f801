//! [`AgentHandle`]: what the runtime asks of an agent, queued as
//! [`Command`]s for the connection task (`connection.rs`); they wait in the
//! queue while the agent is still being started off the loop.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::process::Launch;
use super::{McpServer, SessionOpen, SessionTag};

/// Commands queued for the connection task.
#[derive(Debug)]
pub(super) enum Command {
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
        extra: Vec<crate::model::PromptBlock>,
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
    /// Answer with the agent's authentication methods (after `initialize`).
    AuthMethods(tokio::sync::oneshot::Sender<Vec<super::AuthMethod>>),
}

/// A new value for one of the agent's session options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OptionValue {
    /// A select option's choice, by id.
    Choice(String),
    /// A boolean option's value.
    Flag(bool),
}

/// An agent, running or being started: send commands, end it.
#[derive(Debug)]
pub(crate) struct AgentHandle {
    commands: mpsc::UnboundedSender<Command>,
    launch: Launch,
}

impl AgentHandle {
    pub(super) fn new(commands: mpsc::UnboundedSender<Command>, launch: Launch) -> Self {
        AgentHandle { commands, launch }
    }

    /// Open a session for the chat `tag`: `session/load` or
    /// `session/resume` of `open.resume` when the agent offers them, else
    /// `session/new`. The answer arrives as [`AgentEvent::SessionStarted`](super::AgentEvent::SessionStarted)
    /// (or [`AgentEvent::SessionFailed`](super::AgentEvent::SessionFailed)) with the same tag.
    pub(crate) fn open_session(&self, tag: SessionTag, open: SessionOpen) {
        self.send(Command::OpenSession { tag, open });
    }

    /// Send `session/close` when the agent advertised it (a chat closed; the
    /// agent process may serve other chats). Nothing is waited for.
    pub(crate) fn close_session(&self, session_id: &str) {
        self.send(Command::CloseSession {
            session_id: session_id.to_string(),
        });
    }

    /// Send `session/list` for `cwd`; the answer arrives as [`AgentEvent::Sessions`](super::AgentEvent::Sessions).
    pub(crate) fn list_sessions(&self, cwd: &std::path::Path) {
        self.send(Command::ListSessions {
            cwd: cwd.to_path_buf(),
        });
    }

    /// Send `session/prompt` with more content blocks after the text.
    pub(crate) fn prompt_with(
        &self,
        session_id: &str,
        text: &str,
        extra: Vec<crate::model::PromptBlock>,
    ) {
        self.send(Command::Prompt {
            session_id: session_id.to_string(),
            text: text.to_string(),
            extra,
        });
    }

    /// Send `session/cancel`.
    pub(crate) fn cancel(&self, session_id: &str) {
        self.send(Command::Cancel {
            session_id: session_id.to_string(),
        });
    }

    /// Send `session/set_mode`.
    pub(crate) fn set_mode(&self, session_id: &str, mode_id: &str) {
        self.send(Command::SetMode {
            session_id: session_id.to_string(),
            mode_id: mode_id.to_string(),
        });
    }

    /// Send `session/set_config_option` (a select option: `value` is the choice's id).
    pub(crate) fn set_config_option(&self, session_id: &str, option: &str, value: &str) {
        self.send(Command::SetConfig {
            session_id: session_id.to_string(),
            option: option.to_string(),
            value: value.to_string(),
        });
    }

    /// The MCP servers passed in every `session/new`, `session/load` and
    /// `session/resume` sent after this.
    pub(crate) fn set_mcp_servers(&self, servers: Vec<McpServer>) {
        self.send(Command::McpServers(servers));
    }

    /// Sign in with the agent's authentication method `id` (the
    /// `auth_method` setting): `authenticate` is sent before the next
    /// session opens, and again when opening one fails with "auth required".
    pub(crate) fn set_auth_method(&self, id: &str) {
        self.send(Command::AuthMethod(id.to_string()));
    }

    /// The agent's authentication methods, once it is initialised (the
    /// receiver fails when initialising did).
    pub(crate) fn auth_methods(&self) -> tokio::sync::oneshot::Receiver<Vec<super::AuthMethod>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Command::AuthMethods(tx));
        rx
    }

    /// Send `session/set_config_option` for one of the agent's session
    /// options (model, thought level, a toggle); the answer arrives as
    /// [`AgentEvent::OptionSet`](super::AgentEvent::OptionSet).
    pub(crate) fn set_option(&self, session_id: &str, option: &str, value: OptionValue) {
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

    /// The agent's process id (also its process group id); `None` while
    /// it is still being started (or when it could not be).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.launch.pid()
    }

    /// Close the agent's stdin, wait `grace` for it to exit, then end its
    /// whole process group (TERM, then KILL). An agent still being started
    /// is given up: it is not forked, or killed as soon as it is; this
    /// waits until its start is over either way.
    pub(crate) async fn shutdown(self, grace: std::time::Duration) {
        drop(self.commands);
        if let Some(ender) = self.launch.settle().await {
            ender.end(grace).await;
        }
    }
}

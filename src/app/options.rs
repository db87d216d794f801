//! How a chat starts: its mode, the agent's settings, the user's rules, and
//! the agents a new chat can run.

use std::path::PathBuf;
use std::time::Duration;

use super::ResumeChat;
use crate::acp::{AgentCommand, ClientCaps};
use crate::policy::{Mode, Rule};
use crate::state::OnAsk;

/// How a chat starts: its mode, the agent's settings, the user's rules.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    pub mode: Mode,
    /// The mode new chats of this agent start in (Ctrl-N): the agent's
    /// `default_mode`, else Default (`--mode` is for the first chat only).
    pub new_chat_mode: Option<Mode>,
    /// The agent's `bypass_permissions`.
    pub bypass: bool,
    /// The agent's own mode to switch to in Plan (opt-in).
    pub agent_plan_mode: Option<String>,
    /// The agent's own mode that asks (the `asking_mode` setting), when set.
    pub asking_mode: Option<String>,
    pub rules: Vec<Rule>,
    /// Where decisions are appended (none: not logged).
    pub decision_log: Option<PathBuf>,
    /// What to do when a card appears (the TUI sets it; headless runs leave it off).
    pub notify: Notify,
    /// Answer asks without a user (`warden exec`).
    pub headless: Option<OnAsk>,
    /// The settings file and what the chat knows of it.
    pub settings: SettingsLink,
    /// Files and terminals offered to the agent.
    pub caps: ClientCaps,
    /// Directories besides the cwd the agent's file calls may touch.
    pub extra_roots: Vec<PathBuf>,
    /// Where chats are recorded (none: not recorded).
    pub chats_dir: Option<PathBuf>,
    /// A past chat to reopen instead of starting a new one.
    pub resume: Option<ResumeChat>,
    /// MCP servers passed to the agent's sessions.
    pub mcp_servers: Vec<crate::acp::McpServer>,
    /// The agent's authentication method to sign in with (`auth_method`).
    pub auth_method: Option<String>,
    /// Where and how the workspace is checkpointed (none: not checkpointed).
    pub checkpoints: Option<crate::checkpoint::CheckpointOptions>,
    /// How the agent's processes and warden's terminals for it are confined
    /// (`[sandbox]`); none only where warden is embedded without settings
    /// (tests): the command line always sets one.
    pub sandbox: Option<crate::sandbox::Profile>,
}

impl ChatOptions {
    /// The options of a new chat of the same agent: its `new_chat_mode`, no
    /// past chat to reopen.
    pub(super) fn for_new_chat(&self) -> ChatOptions {
        ChatOptions {
            resume: None,
            mode: self.new_chat_mode.unwrap_or_default(),
            ..self.clone()
        }
    }
}

/// How a new card makes itself noticed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Notify {
    /// Ring the terminal bell.
    pub bell: bool,
    /// Send an OSC 9 desktop notification.
    pub desktop: bool,
    /// Alert when a turn that took this long ends while the terminal is
    /// not focused (`None`: never; see `app::focus`).
    pub turn_end_after: Option<Duration>,
}

/// Where the settings file is and whether warden may write to it.
#[derive(Debug, Clone, Default)]
pub struct SettingsLink {
    pub path: Option<PathBuf>,
    /// False when the file did not load: warden never writes over it then.
    pub writable: bool,
    /// The agent has no block yet (`-- CMD`, or the built-in demo): a bypass
    /// creates `[agents.NAME]` with this (name, command, args); an existing
    /// block for the same command is reused. The name is made unique unless
    /// it is the demo's.
    pub create_as: Option<(String, String, Vec<String>)>,
    /// The agent's block name, when it has one.
    pub agent_block: Option<String>,
    /// Agents with `bypass_permissions = true`.
    pub bypassed: Vec<String>,
    /// The agent's name came from its command (`-- CMD`, no block runs it):
    /// the name it gives itself in `initialize` may replace it, when that
    /// name is nobody else's (see `App::on_agent_info`).
    pub named_by_command: bool,
}

/// An agent a new chat can run: its command (the cwd is the first chat's)
/// and its chat options from the settings.
#[derive(Debug, Clone)]
pub struct AgentChoice {
    pub command: AgentCommand,
    pub options: ChatOptions,
}

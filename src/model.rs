//! Domain types shared by the protocol layer, the state and the widgets.
//!
//! `acp/` converts the SDK's wire types into these; nothing outside `acp/`
//! (and the demo agent, which *is* an SDK peer) names an SDK type.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool call does, as the agent classifies it (ACP `ToolKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads a file or data.
    Read,
    /// Modifies a file.
    Edit,
    /// Removes a file.
    Delete,
    /// Moves or renames a file.
    Move,
    /// Searches for information.
    Search,
    /// Runs a command.
    Execute,
    /// Internal reasoning, no side effect.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Asks to leave the agent's current (plan) mode.
    SwitchMode,
    /// Anything else; also what a missing kind becomes.
    #[default]
    Other,
}

impl ToolKind {
    /// The lowercase wire name (`switch_mode`, `execute`, ...).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "switch_mode",
            ToolKind::Other => "other",
        }
    }

    /// Every kind, in a stable order (tables, tests).
    pub(crate) const ALL: [ToolKind; 10] = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Delete,
        ToolKind::Move,
        ToolKind::Search,
        ToolKind::Execute,
        ToolKind::Think,
        ToolKind::Fetch,
        ToolKind::SwitchMode,
        ToolKind::Other,
    ];
}

/// Status the agent reports for a tool call (ACP `ToolCallStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireStatus {
    /// Not started yet (input may still be streaming).
    #[default]
    Pending,
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
}

/// One piece of a tool call's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolContent {
    /// Text (or a textual rendering of another content block).
    Text { text: String },
    /// A file change: `old` is `None` for a new file.
    Diff {
        path: String,
        old: Option<String>,
        new: String,
    },
    /// A terminal created through `terminal/create`, shown by id.
    Terminal { id: String },
}

/// A file location a tool call touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Path as the agent sent it.
    pub path: String,
    /// Optional 1-based line.
    pub line: Option<u32>,
}

/// The fields of a tool call that an update may carry; `None` = unchanged.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallFields {
    pub title: Option<String>,
    pub kind: Option<ToolKind>,
    pub status: Option<WireStatus>,
    pub content: Option<Vec<ToolContent>>,
    pub locations: Option<Vec<Location>>,
    pub raw_input: Option<Value>,
    pub raw_output: Option<Value>,
    /// The agent's own tool name (`name`, or `_meta` such as `claudeCode.toolName`).
    pub tool_name: Option<String>,
    /// What the update's `_meta` says about terminals the agent runs itself
    /// (codex-acp's `terminal_info`, `terminal_output`, `terminal_exit`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terminal_meta: Vec<TerminalMeta>,
}

/// One piece of news about a terminal the agent runs itself and shows only
/// through a tool call's `_meta` (warden never created it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalMeta {
    /// `terminal_info`: the terminal exists (no output yet).
    Started { id: String },
    /// `terminal_output` / `terminal_output_delta`: more output, appended.
    Output { id: String, data: String },
    /// `terminal_exit`: how the command ended, in warden's words
    /// (`exit status 0`, `killed by SIGKILL`).
    Exited { id: String, exit: String },
}

/// Output of a terminal the agent runs itself, as its `_meta` reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AgentTerminal {
    /// The terminal id the tool call's content names.
    pub id: String,
    /// The newest output: at most twice [`AgentTerminal::LIMIT`] bytes;
    /// [`AgentTerminal::output`] is its last `LIMIT` bytes.
    pub output: String,
    /// Older output was dropped to stay within the limit.
    pub truncated: bool,
    /// How it ended, once it has.
    pub exit: Option<String>,
    /// Bytes of output ever reported, to say how much was dropped.
    #[serde(default)]
    pub written: u64,
}

impl AgentTerminal {
    /// Bytes of output kept per terminal (the newest).
    pub(crate) const LIMIT: usize = 256 * 1024;
    /// Terminals kept per tool call; news of more is ignored.
    pub(crate) const PER_CALL: usize = 16;

    fn append(&mut self, data: &str) {
        self.written += data.len() as u64;
        if crate::text::append_capped(&mut self.output, data, Self::LIMIT) {
            self.truncated = true;
        }
    }

    /// Bytes of its output not kept.
    pub(crate) fn dropped(&self) -> u64 {
        self.written.saturating_sub(self.output().len() as u64)
    }

    /// Bytes held in memory.
    pub(crate) fn held(&self) -> usize {
        self.output.len()
    }

    /// Keep only the newest `keep` bytes; returns the bytes freed.
    pub(crate) fn shrink_to(&mut self, keep: usize) -> usize {
        let before = self.output.len();
        let cut = crate::text::ceil_char_boundary(&self.output, before.saturating_sub(keep));
        if cut == 0 {
            return 0;
        }
        self.output.drain(..cut);
        self.output.shrink_to_fit();
        self.truncated = true;
        before - self.output.len()
    }

    /// The kept output: the newest [`AgentTerminal::LIMIT`] bytes.
    pub(crate) fn output(&self) -> &str {
        crate::text::kept(&self.output, Self::LIMIT)
    }
}

/// A whole tool call as first announced by the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: WireStatus,
    pub content: Vec<ToolContent>,
    pub locations: Vec<Location>,
    pub raw_input: Option<Value>,
    pub raw_output: Option<Value>,
    pub tool_name: Option<String>,
    /// Terminals the agent runs itself and reports through `_meta`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_terminals: Vec<AgentTerminal>,
}

impl ToolCall {
    /// A tool call known only by id (a permission request may come first).
    pub fn placeholder(id: impl Into<String>) -> Self {
        ToolCall {
            id: id.into(),
            title: String::new(),
            kind: ToolKind::Other,
            status: WireStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            tool_name: None,
            agent_terminals: Vec::new(),
        }
    }

    /// Apply what `_meta` says about the agent's own terminals.
    pub(crate) fn apply_terminal_meta(&mut self, news: &[TerminalMeta]) {
        for item in news {
            let id = match item {
                TerminalMeta::Started { id }
                | TerminalMeta::Output { id, .. }
                | TerminalMeta::Exited { id, .. } => id,
            };
            let index = match self.agent_terminals.iter().position(|t| &t.id == id) {
                Some(index) => index,
                None if self.agent_terminals.len() < AgentTerminal::PER_CALL => {
                    self.agent_terminals.push(AgentTerminal {
                        id: id.clone(),
                        ..AgentTerminal::default()
                    });
                    self.agent_terminals.len() - 1
                }
                None => continue,
            };
            let terminal = &mut self.agent_terminals[index];
            match item {
                TerminalMeta::Started { .. } => {}
                TerminalMeta::Output { data, .. } => terminal.append(data),
                TerminalMeta::Exited { exit, .. } => terminal.exit = Some(exit.clone()),
            }
        }
    }

    /// The output the agent reported for its own terminal `id`, if any.
    pub(crate) fn agent_terminal(&self, id: &str) -> Option<&AgentTerminal> {
        self.agent_terminals.iter().find(|t| t.id == id)
    }

    /// Merge an update's fields into this call.
    pub fn apply(&mut self, fields: &ToolCallFields) {
        if let Some(title) = &fields.title {
            self.title.clone_from(title);
        }
        if let Some(kind) = fields.kind {
            self.kind = kind;
        }
        if let Some(status) = fields.status {
            self.status = status;
        }
        if let Some(content) = &fields.content {
            self.content.clone_from(content);
        }
        if let Some(locations) = &fields.locations {
            self.locations.clone_from(locations);
        }
        if let Some(raw) = &fields.raw_input {
            self.raw_input = Some(raw.clone());
        }
        if let Some(raw) = &fields.raw_output {
            self.raw_output = Some(raw.clone());
        }
        if let Some(name) = &fields.tool_name {
            self.tool_name = Some(name.clone());
        }
        self.apply_terminal_meta(&fields.terminal_meta);
    }
}

/// What a permission option means (ACP `PermissionOptionKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionKind {
    /// Allow this one call.
    AllowOnce,
    /// Allow this and later calls like it (the agent remembers).
    AllowAlways,
    /// Reject this one call.
    RejectOnce,
    /// Reject this and later calls like it.
    RejectAlways,
}

impl OptionKind {
    /// The wire name (`allow_once`, ...).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OptionKind::AllowOnce => "allow_once",
            OptionKind::AllowAlways => "allow_always",
            OptionKind::RejectOnce => "reject_once",
            OptionKind::RejectAlways => "reject_always",
        }
    }

    /// Whether choosing it lets the call run.
    pub(crate) fn is_allow(self) -> bool {
        matches!(self, OptionKind::AllowOnce | OptionKind::AllowAlways)
    }
}

/// One choice the agent offers on a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// A `session/request_permission` from the agent, in domain terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub session_id: String,
    /// The tool call as the request describes it (fields may be partial).
    pub tool_call_id: String,
    pub fields: ToolCallFields,
    pub options: Vec<PermissionOption>,
    /// Made by warden for the agent's own file or terminal request (not a
    /// `session/request_permission`).
    #[serde(default)]
    pub client: bool,
}

/// How a permission request is answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PermissionOutcome {
    /// One of the agent's options, by id.
    Selected(String),
    /// The turn was cancelled (or the request went stale).
    Cancelled,
}

/// Status of one plan entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One entry of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    pub status: PlanStatus,
}

/// A mode the agent itself offers (`modes` or a `mode` config option).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMode {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

/// The agent's own modes and which one is current.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AgentModes {
    pub current: String,
    pub available: Vec<AgentMode>,
    /// Set when the modes come from a config option (then `set_config_option` is used).
    pub config_option_id: Option<String>,
}

/// Why a turn ended (ACP `StopReason`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The agent finished.
    EndTurn,
    /// The model ran out of tokens.
    MaxTokens,
    /// Too many model requests in one turn.
    MaxTurnRequests,
    /// The agent refused.
    Refusal,
    /// The client cancelled.
    Cancelled,
    /// A reason this version of ACP does not name, as the agent sent it
    /// (shown as itself rather than guessed at).
    Other(String),
}

impl StopReason {
    /// The wire name.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
            StopReason::Other(reason) => reason,
        }
    }
}

/// A `session/update` notification, in domain terms.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionUpdate {
    /// A chunk of the user's message (replayed on load).
    UserChunk(String),
    /// A chunk of the agent's answer (markdown).
    AgentChunk(String),
    /// A chunk of the agent's reasoning.
    ThoughtChunk(String),
    /// A chunk of the agent's answer (or, with `thought`, its reasoning)
    /// that names its message: a new `message_id` starts a new block.
    MessageChunk {
        message_id: String,
        text: String,
        thought: bool,
    },
    /// A new tool call.
    ToolCall(Box<ToolCall>),
    /// A change to a known (or not yet known) tool call.
    ToolCallUpdate {
        id: String,
        fields: Box<ToolCallFields>,
    },
    /// The whole plan, replacing the previous one.
    Plan(Vec<PlanEntry>),
    /// Slash commands the agent offers (`available_commands_update`): the whole list.
    AvailableCommands(Vec<SlashCommand>),
    /// The agent's current mode changed.
    CurrentMode(String),
    /// The agent's modes, from a config option update.
    ConfigModes(AgentModes),
    /// Session metadata: the title.
    SessionInfo { title: Option<String> },
    /// The agent's session options besides its modes (model, thought
    /// level, ...), each with its current value: the whole list.
    Options(Vec<SessionOption>),
    /// Context window use and cost (`usage_update`).
    Usage(Usage),
    /// Anything else (usage, notices, ...): its name, for the log.
    Other(String),
}

impl SessionUpdate {
    /// Whether this is part of the conversation (what a replay repeats),
    /// not the session's state (commands, modes, options, usage, title).
    pub fn is_conversation(&self) -> bool {
        matches!(
            self,
            SessionUpdate::UserChunk(_)
                | SessionUpdate::AgentChunk(_)
                | SessionUpdate::ThoughtChunk(_)
                | SessionUpdate::MessageChunk { .. }
                | SessionUpdate::ToolCall(_)
                | SessionUpdate::ToolCallUpdate { .. }
                | SessionUpdate::Plan(_)
        )
    }
}

/// What goes with a prompt's text: a file the user `@`-mentioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PromptBlock {
    /// A `resource_link`: the agent reads the file itself.
    Link { uri: String, name: String },
    /// A `resource` with the file's text embedded (the agent advertised
    /// `promptCapabilities.embeddedContext`).
    Embedded { uri: String, text: String },
    /// An `image` (the agent advertised `promptCapabilities.image`): its
    /// MIME type and its bytes in base64.
    Image {
        uri: String,
        mime: String,
        data: String,
    },
}

/// One slash command the agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    /// Its name, without the `/`.
    pub name: String,
    /// What it does, in the agent's words.
    pub description: String,
    /// What to type after the name (`input.hint`), when it takes input.
    pub hint: Option<String>,
}

/// How a session came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionOrigin {
    /// `session/new`.
    #[default]
    New,
    /// `session/load`: the agent replayed the conversation.
    Loaded,
    /// `session/resume`: the agent continues it, without a replay.
    Resumed,
}

/// A session as opened by `session/new`, `session/load` or `session/resume`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionInfo {
    pub session_id: String,
    pub modes: Option<AgentModes>,
    pub origin: SessionOrigin,
}

/// One of the agent's session config options other than its modes: a
/// model, a thought level, a toggle (`configOptions` entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionOption {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    /// `model`, `thought_level`, or the agent's own category.
    pub category: Option<String>,
    pub value: SessionOptionValue,
}

/// The kind of a session option, with its current value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionOptionValue {
    /// One of `choices`, by id.
    Select {
        current: String,
        choices: Vec<OptionChoice>,
    },
    /// On or off.
    Boolean(bool),
}

/// One choice of a select option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionChoice {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

impl SessionOption {
    /// The id of the option made from a session's `models` (not one of its
    /// `configOptions`): a change is sent with `session/set_model`.
    pub const MODELS_ID: &'static str = "session/set_model";

    /// Whether this option picks the model (category `model`, or id `model`).
    pub fn is_model(&self) -> bool {
        self.category.as_deref() == Some("model") || self.id == "model"
    }

    /// The current value as shown: a choice's name, or `on`/`off`.
    pub fn current_label(&self) -> String {
        match &self.value {
            SessionOptionValue::Select { current, choices } => choices
                .iter()
                .find(|c| &c.id == current)
                .map_or_else(|| current.clone(), |c| c.name.clone()),
            SessionOptionValue::Boolean(on) => if *on { "on" } else { "off" }.to_string(),
        }
    }
}

/// What the agent said about its context window and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the context window now (`used`), when known.
    pub used: Option<u64>,
    /// The context window's size in tokens, when known.
    pub size: Option<u64>,
    /// The session's cost so far: amount and currency.
    pub cost: Option<(f64, String)>,
    /// Tokens of the last turn (the prompt answer's `usage`), when sent.
    pub turn_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_terminal_output_keeps_the_newest_bytes() {
        let mut call = ToolCall::placeholder("c");
        let big = "é".repeat(AgentTerminal::LIMIT);
        call.apply_terminal_meta(&[
            TerminalMeta::Output {
                id: "t".into(),
                data: big,
            },
            TerminalMeta::Output {
                id: "t".into(),
                data: "END".into(),
            },
        ]);
        let terminal = call.agent_terminal("t").expect("kept");
        assert!(terminal.truncated);
        assert!(terminal.output().len() <= AgentTerminal::LIMIT);
        assert!(terminal.output().ends_with("END"));
    }

    #[test]
    fn agent_terminals_per_call_are_bounded() {
        let mut call = ToolCall::placeholder("c");
        let news: Vec<TerminalMeta> = (0..AgentTerminal::PER_CALL + 5)
            .map(|i| TerminalMeta::Started {
                id: format!("t{i}"),
            })
            .collect();
        call.apply_terminal_meta(&news);
        assert_eq!(call.agent_terminals.len(), AgentTerminal::PER_CALL);
    }
}

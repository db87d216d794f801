//! Scenario files: what the demo agent does for a prompt, as lists of steps.
//!
//! A scenario file (TOML or JSON, chosen by extension) scripts exact turns so
//! that tests and demos can replay any sequence of ACP updates, permission
//! requests, stops and crashes. The built-in scenarios (`builtin.rs`) are
//! written with the same [`Step`]s. The format is described for users in
//! `assets/scenarios/README.md`.
//!
//! ```toml
//! protocol_version = 1
//!
//! [[turns]]
//! match = "hello"
//! steps = [
//!   { type = "text", text = "Hi!\n" },
//!   { type = "stop", reason = "end_turn" },
//! ]
//! ```

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, PlanEntryPriority, PlanEntryStatus, StopReason, ToolCallStatus, ToolKind,
};
use serde::Deserialize;
use serde_json::Value;

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScenarioError {
    /// The file could not be read at all.
    #[error("cannot read scenario file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML, or not a scenario.
    #[error("invalid scenario file {path}: {source}")]
    Toml {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },
    /// The file is not valid JSON, or not a scenario.
    #[error("invalid scenario file {path}: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The extension says neither TOML nor JSON, so the format is unknown.
    #[error("scenario file {path} must end in .toml or .json")]
    Extension { path: PathBuf },
}

/// A whole scenario file: agent-level settings and the scripted turns.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// The protocol version answered at `initialize`; anything but 1 lets a
    /// test see how a client treats an agent speaking another version.
    #[serde(default = "default_protocol_version", alias = "protocolVersion")]
    pub(crate) protocol_version: u16,
    /// The `agentInfo.name` answered at `initialize` (default `warden-demo`).
    #[serde(default, alias = "agentName")]
    pub(crate) agent_name: Option<String>,
    /// Whether a prompt no turn matches plays the built-in scenarios
    /// (default true); when false it gets a one-line answer.
    #[serde(default = "default_true")]
    pub(crate) builtin: bool,
    /// Session ids `session-1`, `session-2`, ... instead of random UUIDs,
    /// so that transcripts of scripted runs are identical.
    #[serde(default, alias = "sequentialSessionIds")]
    pub(crate) sequential_session_ids: bool,
    /// The session modes every session offers, in order (default: the
    /// demo's `plan`, `default`, `auto`); `session/set_mode` accepts only these.
    #[serde(default)]
    pub(crate) modes: Option<Vec<ModeSpec>>,
    /// The mode a new session starts in (default `default`).
    #[serde(default, alias = "currentMode")]
    pub(crate) current_mode: Option<String>,
    /// Also advertise the modes as a `mode` config option (category `mode`,
    /// a select), as qwen-code and Claude Code do, and accept
    /// `session/set_config_option` for it.
    #[serde(default, alias = "modeConfigOption")]
    pub(crate) mode_config_option: bool,
    /// Advertise `loadSession` (default true).
    #[serde(default = "default_true", alias = "loadSession")]
    pub(crate) load_session: bool,
    /// Advertise `sessionCapabilities.resume` (default true).
    #[serde(default = "default_true", alias = "resumeSession")]
    pub(crate) resume_session: bool,
    /// Advertise `sessionCapabilities.close` and accept `session/close`
    /// (default false).
    #[serde(default, alias = "closeSession")]
    pub(crate) close_session: bool,
    /// Advertise `sessionCapabilities.additionalDirectories` (default
    /// false); the directories a session opens with go into its record.
    #[serde(default, alias = "additionalDirectories")]
    pub(crate) additional_directories: bool,
    /// Answer `session/list` in pages of this many sessions, with a
    /// `nextCursor` while more follow (default: one page).
    #[serde(default, alias = "listPageSize")]
    pub(crate) list_page_size: Option<usize>,
    /// More session config options (model, thought level, ...), as the
    /// agent's JSON (`SessionConfigOption`), advertised after the mode
    /// option; `session/set_config_option` accepts one of a select's values
    /// or a boolean for them, process-wide.
    #[serde(default, alias = "configOptions")]
    pub(crate) config_options: Vec<Value>,
    /// `authMethods` answered at `initialize`, as the agent's JSON.
    #[serde(default, alias = "authMethods")]
    pub(crate) auth_methods: Vec<Value>,
    /// `session/new` answers "auth required" (-32000) until `authenticate`
    /// succeeded with one of `auth_methods` that is not a terminal login.
    #[serde(default, alias = "authRequired")]
    pub(crate) auth_required: bool,
    /// `models` of `session/new` answers, as the agent's JSON
    /// (`currentModelId`, `availableModels`); `session/set_model` accepts
    /// one of them, process-wide.
    #[serde(default)]
    pub(crate) models: Option<Value>,
    /// `usage` of every `session/prompt` answer, as the agent's JSON.
    #[serde(default, alias = "promptUsage")]
    pub(crate) prompt_usage: Option<Value>,
    /// `mcpCapabilities.http` at `initialize` (default false).
    #[serde(default)]
    pub(crate) mcp_http: bool,
    /// `mcpCapabilities.sse` at `initialize` (default false).
    #[serde(default)]
    pub(crate) mcp_sse: bool,
    /// The scripted turns, tried in order.
    #[serde(default)]
    pub(crate) turns: Vec<Turn>,
    /// Slash commands (`AvailableCommand` JSON: `name`, `description`,
    /// `input`?) sent as an `available_commands_update` right after each
    /// `session/new` is answered, as claude-agent-acp does.
    #[serde(default)]
    pub(crate) commands: Vec<Value>,
    /// Send the last this many updates of a `session/load` replay after
    /// the answer, then a `session_info_update` titled "replayed", as
    /// gemini-cli 0.61.0 does with its rig (default 0: all before, as ACP
    /// asks).
    #[serde(default, alias = "replayAfterAnswer")]
    pub(crate) replay_after_answer: usize,
    /// After a turn ends `cancelled`, answer every prompt `end_turn` at
    /// once and run it after its answer, as claude-agent-acp 0.23.1 does:
    /// its cancel leaves the cancelled turn's end unread, the next prompt
    /// reads it as its own, and every reply comes a turn late.
    #[serde(default, alias = "lateAfterCancel")]
    pub(crate) late_after_cancel: bool,
    /// `promptCapabilities.embeddedContext` at `initialize` (default false).
    #[serde(default)]
    pub(crate) embedded_context: bool,
    /// `promptCapabilities.image` at `initialize` (default false).
    #[serde(default)]
    pub(crate) image: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            protocol_version: default_protocol_version(),
            agent_name: None,
            builtin: true,
            sequential_session_ids: false,
            modes: None,
            current_mode: None,
            mode_config_option: false,
            load_session: true,
            resume_session: true,
            close_session: false,
            additional_directories: false,
            replay_after_answer: 0,
            list_page_size: None,
            config_options: Vec::new(),
            auth_methods: Vec::new(),
            auth_required: false,
            models: None,
            prompt_usage: None,
            mcp_http: false,
            mcp_sse: false,
            turns: Vec::new(),
            commands: Vec::new(),
            late_after_cancel: false,
            embedded_context: false,
            image: false,
        }
    }
}

/// One session mode the agent advertises.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModeSpec {
    pub(crate) id: String,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) description: Option<String>,
}

fn default_protocol_version() -> u16 {
    1
}

fn default_true() -> bool {
    true
}

/// One scripted turn: which prompts it answers and what it does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    /// A case-insensitive prefix of the prompt text. A turn without one is a
    /// fallback, used when no turn with a `match` fits.
    #[serde(default, rename = "match")]
    pub(crate) prefix: Option<String>,
    /// Play this turn at most once per agent process, so that turns without
    /// `match` can script a conversation in order.
    #[serde(default)]
    pub(crate) once: bool,
    /// What the agent does, in order. A turn that runs out of steps ends
    /// with `end_turn`.
    #[serde(default)]
    pub(crate) steps: Vec<Step>,
}

/// One thing the agent does during a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Step {
    /// An `agent_message_chunk`: streamed answer text (markdown).
    Text { text: String },
    /// An `agent_thought_chunk`: streamed reasoning, shown apart from the answer.
    Thought { text: String },
    /// A `user_message_chunk`: replays the user's side, as agents do when
    /// they load a session.
    User { text: String },
    /// Any `session/update`, sent exactly as written (the `update` object of
    /// a recorded notification, with its `_meta`, `messageId`, ...), to play
    /// what a real agent sent; one the SDK cannot read ends the turn with an
    /// error.
    Update { update: Value },
    /// A `tool_call` notification: the agent starts a tool call.
    ToolCall(ToolCallStep),
    /// A `tool_call_update` notification: status, content or input of an
    /// existing tool call changes.
    ToolUpdate(ToolUpdateStep),
    /// A `plan` notification: the full list of plan entries (each one
    /// replaces the previous plan).
    Plan { entries: Vec<PlanEntryStep> },
    /// A `session/request_permission` request; the turn waits for the answer,
    /// reports it as a text line and runs the matching branch.
    Permission(PermissionStep),
    /// Several permission requests sent at once, before any is answered:
    /// clients must queue them. Outcomes are reported in order once all are in.
    Permissions { requests: Vec<PermissionStep> },
    /// A pause, so that streaming, timing and cancel can be seen.
    Sleep { ms: u64 },
    /// A `current_mode_update` notification; the session's mode changes.
    Mode { mode: String },
    /// `count` agent message chunks of exactly 64 bytes each, as fast as
    /// possible (or `per_second` of them, chunk `i` at `i / per_second`
    /// seconds after the first): load for benchmarks without a huge file.
    /// The chunks are numbered lines, or cut from `text` (cycled; at most 64
    /// bytes each, cut at a character boundary).
    Flood {
        count: u64,
        #[serde(default)]
        per_second: Option<u64>,
        #[serde(default)]
        text: Option<String>,
    },
    /// Ends the turn now with this stop reason.
    Stop { reason: StopReason },
    /// Ends the whole agent process with this exit code, mid-turn, as a
    /// crashing agent would.
    Exit { code: i32 },
    /// A line on the agent's stderr, where agents write their logs.
    Stderr {
        text: String,
        /// Write `text` this many times on the one line (default once): an
        /// agent that writes a huge line.
        #[serde(default)]
        repeat: Option<usize>,
    },
    /// Answers `session/prompt` with a JSON-RPC error (internal error,
    /// with this message and optional `data`) instead of a stop reason, as
    /// an agent whose turn failed does.
    Fail {
        message: String,
        #[serde(default)]
        data: Option<Value>,
    },
    /// A line written straight to stdout, past the protocol: `text`, then
    /// the raw `bytes` (which may be invalid UTF-8), then a newline, as an
    /// agent that prints debug output or garbage would.
    Raw {
        #[serde(default)]
        text: String,
        #[serde(default)]
        bytes: Vec<u8>,
    },
    /// Close stdout and keep running (an agent whose output broke).
    CloseStdout,
    /// Never go on, and ignore a cancel: the prompt is never answered.
    Hang,
    /// `fs/read_text_file` through the client (it must offer
    /// `fs.readTextFile`); reports `read ok: <N> lines` and the text in a
    /// fenced block, or `read failed: <message>` and ends the turn.
    ReadFile(ReadFileStep),
    /// `fs/write_text_file` through the client (it must offer
    /// `fs.writeTextFile`); reports `write ok`, or `write failed: <message>`
    /// and ends the turn.
    WriteFile(WriteFileStep),
    /// A command in a terminal of the client (it must offer `terminal`):
    /// `terminal/create`, `terminal/wait_for_exit` (a cancel of the turn
    /// sends `terminal/kill` instead), `terminal/output`, then
    /// `terminal/release`, each answer reported as a line.
    Terminal(TerminalStep),
    /// The agent creates an empty file itself (its own tool, not through
    /// the client), as agents do in modes that act without asking; a
    /// relative path is taken from the session's cwd. Reports `touched <path>`.
    Touch { path: PathBuf },
    /// The agent writes `content` to a file itself (its own tool, not
    /// through the client), replacing what was there; a relative path is
    /// taken from the session's cwd. Reports `saved <path>`.
    Save { path: PathBuf, content: String },
    /// Unless the session is in its mode `mode`, say `message` and end the
    /// turn (as Claude Code's ExitPlanMode fails with "You are not in plan
    /// mode" outside its plan mode).
    RequireMode { mode: String, message: String },
    /// An `elicitation/create` request (`request`: its params without
    /// `sessionId`, which is the turn's); reports `elicitation answer:
    /// <the response as JSON>`, or `elicitation failed: <message>`.
    Elicitation { request: Value },
    /// Reports the model in use: `model: <id>` (the last
    /// `session/set_model`, else the scenario's `currentModelId`).
    Model,
    /// Reports the MCP servers the session was opened with (`session/new`
    /// or `session/load`): `mcp servers: none`, or one line `mcp server:
    /// NAME (stdio: COMMAND ARGS; env NAMES)` / `(http: URL; headers NAMES)`
    /// each.
    Mcp,
    /// A `usage_update`: `used` of `size` tokens in the context window,
    /// and the session's cost so far in `currency` (default USD). Without
    /// `used` it is sent as `null`, as claude-agent-acp does.
    Usage {
        #[serde(default)]
        used: Option<u64>,
        size: u64,
        #[serde(default)]
        cost: Option<f64>,
        #[serde(default)]
        currency: Option<String>,
    },
}

/// The fields of a `read_file` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileStep {
    /// The file; a relative path is taken from the session's cwd (the
    /// request always carries an absolute path).
    pub(crate) path: PathBuf,
    /// The first line to read (1-based).
    #[serde(default)]
    pub(crate) line: Option<u32>,
    /// How many lines to read at most.
    #[serde(default)]
    pub(crate) limit: Option<u32>,
    /// A tool call this read belongs to: it ends `completed` or `failed`.
    #[serde(default, alias = "toolCallId")]
    pub(crate) tool_call_id: Option<String>,
    /// Send it with this `sessionId` instead of the turn's (a hostile
    /// agent acting through another chat's session).
    #[serde(default, alias = "sessionId")]
    pub(crate) session_id: Option<String>,
}

/// The fields of a `write_file` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFileStep {
    /// The file; a relative path is taken from the session's cwd.
    pub(crate) path: PathBuf,
    /// The whole new text of the file.
    pub(crate) content: String,
    /// A tool call this write belongs to: it ends `completed` or `failed`.
    #[serde(default, alias = "toolCallId")]
    pub(crate) tool_call_id: Option<String>,
    /// Send it with this `sessionId` instead of the turn's (a hostile
    /// agent acting through another chat's session).
    #[serde(default, alias = "sessionId")]
    pub(crate) session_id: Option<String>,
}

/// The fields of a `terminal` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TerminalStep {
    /// The program, or a whole shell line when `args` is empty.
    pub(crate) command: String,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub(crate) env: Vec<EnvVar>,
    /// The working directory; a relative path is taken from the session's
    /// cwd. Left out, the client picks (normally the session's cwd).
    #[serde(default)]
    pub(crate) cwd: Option<PathBuf>,
    /// How many bytes of output the client keeps (the newest); the step
    /// then also reports `truncated: <bool>, bytes: <len>`.
    #[serde(default, alias = "outputByteLimit")]
    pub(crate) output_byte_limit: Option<u64>,
    /// A tool call to embed the terminal in (a `tool_call_update` with the
    /// terminal as content, status `in_progress`); it ends `completed`
    /// when the command exits with code 0, else `failed`.
    #[serde(default, alias = "toolCallId")]
    pub(crate) tool_call_id: Option<String>,
    /// Whether to send `terminal/release` at the end (default true).
    #[serde(default = "default_true")]
    pub(crate) release: bool,
    /// Send it with this `sessionId` instead of the turn's (a hostile
    /// agent acting through another chat's session).
    #[serde(default, alias = "sessionId")]
    pub(crate) session_id: Option<String>,
    /// Whether to report the output itself (default true); else only its
    /// size: `output: <N> bytes, truncated: <bool>`.
    #[serde(default = "default_true", alias = "reportOutput")]
    pub(crate) report_output: bool,
}

/// One environment variable of a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvVar {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// The client capabilities a scenario uses, or that a client offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClientFeatures {
    /// `fs.readTextFile`
    pub(crate) read_text_file: bool,
    /// `fs.writeTextFile`
    pub(crate) write_text_file: bool,
    /// `terminal`
    pub(crate) terminal: bool,
}

impl ClientFeatures {
    /// What `steps` use, including the steps of permission branches.
    pub(crate) fn needed_by(steps: &[Step]) -> Self {
        let mut needed = Self::default();
        needed.add(steps);
        needed
    }

    fn add(&mut self, steps: &[Step]) {
        for step in steps {
            match step {
                Step::ReadFile(_) => self.read_text_file = true,
                Step::WriteFile(_) => self.write_text_file = true,
                Step::Terminal(_) => self.terminal = true,
                Step::Permission(request) => self.add_branches(request),
                Step::Permissions { requests } => {
                    for request in requests {
                        self.add_branches(request);
                    }
                }
                _ => {}
            }
        }
    }

    fn add_branches(&mut self, request: &PermissionStep) {
        self.add(&request.allowed);
        self.add(&request.rejected);
        self.add(&request.cancelled);
    }

    /// One line for each feature `self` needs that `offered` lacks.
    pub(crate) fn missing_from(self, offered: Self) -> Vec<&'static str> {
        [
            (
                self.read_text_file && !offered.read_text_file,
                "the client does not offer reading files (fs.readTextFile)",
            ),
            (
                self.write_text_file && !offered.write_text_file,
                "the client does not offer writing files (fs.writeTextFile)",
            ),
            (
                self.terminal && !offered.terminal,
                "the client does not offer terminals",
            ),
        ]
        .into_iter()
        .filter_map(|(missing, line)| missing.then_some(line))
        .collect()
    }
}

/// The fields of a `tool_call` notification.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCallStep {
    /// The tool call id, unique within the session.
    pub(crate) id: String,
    /// What the user reads, e.g. "Edit src/main.rs".
    pub(crate) title: String,
    /// The ACP tool kind (read, edit, delete, move, search, execute, think,
    /// fetch, switch_mode, other).
    #[serde(default)]
    pub(crate) kind: Option<ToolKind>,
    /// The status; pending when left out.
    #[serde(default)]
    pub(crate) status: Option<ToolCallStatus>,
    /// The tool's input as the agent sees it.
    #[serde(default, alias = "rawInput")]
    pub(crate) raw_input: Option<Value>,
    /// The tool's output as the agent sees it.
    #[serde(default, alias = "rawOutput")]
    pub(crate) raw_output: Option<Value>,
    /// What the client shows in the tool call: text, diffs, terminals.
    #[serde(default)]
    pub(crate) content: Vec<ContentItem>,
    /// The files the tool call touches.
    #[serde(default)]
    pub(crate) locations: Vec<Location>,
}

/// The fields of a `tool_call_update` notification; only those given are sent.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolUpdateStep {
    /// The tool call this updates.
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<ToolKind>,
    #[serde(default)]
    pub(crate) status: Option<ToolCallStatus>,
    #[serde(default, alias = "rawInput")]
    pub(crate) raw_input: Option<Value>,
    #[serde(default, alias = "rawOutput")]
    pub(crate) raw_output: Option<Value>,
    /// Replaces the whole content of the tool call.
    #[serde(default)]
    pub(crate) content: Option<Vec<ContentItem>>,
    /// Replaces the locations of the tool call.
    #[serde(default)]
    pub(crate) locations: Option<Vec<Location>>,
}

/// One item of tool call content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ContentItem {
    /// Plain text (markdown): command output, a plan, a summary.
    Text { text: String },
    /// A file change, shown as a diff; no `old_text` means a new file.
    Diff {
        path: PathBuf,
        #[serde(default, alias = "oldText")]
        old_text: Option<String>,
        #[serde(alias = "newText")]
        new_text: String,
    },
    /// A terminal the client created for the agent, embedded by id.
    Terminal {
        #[serde(alias = "terminalId")]
        terminal_id: String,
    },
}

/// A file location a tool call touches.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Location {
    pub(crate) path: PathBuf,
    #[serde(default)]
    pub(crate) line: Option<u32>,
}

/// One plan entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanEntryStep {
    pub(crate) content: String,
    /// pending when left out.
    #[serde(default = "default_plan_status")]
    pub(crate) status: PlanEntryStatus,
    /// medium when left out.
    #[serde(default = "default_plan_priority")]
    pub(crate) priority: PlanEntryPriority,
}

fn default_plan_status() -> PlanEntryStatus {
    PlanEntryStatus::Pending
}

fn default_plan_priority() -> PlanEntryPriority {
    PlanEntryPriority::Medium
}

/// A `session/request_permission` request and what to do with each answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermissionStep {
    /// The tool call the request is about (it need not have been announced).
    #[serde(alias = "toolCallId")]
    pub(crate) tool_call_id: String,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<ToolKind>,
    #[serde(default, alias = "rawInput")]
    pub(crate) raw_input: Option<Value>,
    #[serde(default)]
    pub(crate) content: Option<Vec<ContentItem>>,
    #[serde(default)]
    pub(crate) locations: Option<Vec<Location>>,
    /// The options offered; one of each kind (ids `allow-once`,
    /// `allow-always`, `reject-once`, `reject-always`) when left out.
    #[serde(default)]
    pub(crate) options: Option<Vec<OptionSpec>>,
    /// What a reject does after the `rejected` steps: continue (default) or
    /// stop the turn with `end_turn`.
    #[serde(default, alias = "onReject")]
    pub(crate) on_reject: OnReject,
    /// Steps run when an allow option is chosen.
    #[serde(default)]
    pub(crate) allowed: Vec<Step>,
    /// Steps run when a reject option (or an unknown option id) is chosen.
    #[serde(default)]
    pub(crate) rejected: Vec<Step>,
    /// Steps run when the outcome is `cancelled` (also when the turn is
    /// cancelled while waiting); the turn then stops with `cancelled`
    /// unless these steps stop it otherwise.
    #[serde(default)]
    pub(crate) cancelled: Vec<Step>,
    /// Session modes in which the agent does not ask at all: no request is
    /// sent, the line `ran unasked in mode <mode>` is reported and the
    /// `allowed` steps run (as qwen-code does in `auto` and `yolo`).
    #[serde(default, alias = "unaskedInModes")]
    pub(crate) unasked_in_modes: Vec<String>,
    /// Send it with this `sessionId` instead of the turn's (a hostile
    /// agent acting through another chat's session).
    #[serde(default, alias = "sessionId")]
    pub(crate) session_id: Option<String>,
    /// Steps run once the request is sent, before its answer is awaited
    /// (notifications such as a `tool_call_update` that reaches the client
    /// while its card waits).
    #[serde(default)]
    pub(crate) meanwhile: Vec<Step>,
    /// While the request waits, this many milliseconds after it was sent,
    /// the agent withdraws it: a `tool_call_update` that completes its tool
    /// call (an agent that changed its mind, or one racing the user's keys).
    #[serde(default, alias = "withdrawAfterMs")]
    pub(crate) withdraw_after_ms: Option<u64>,
}

/// One permission option offered to the user.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionSpec {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) kind: PermissionOptionKind,
}

impl OptionSpec {
    pub(crate) fn new(id: &str, name: &str, kind: PermissionOptionKind) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            kind,
        }
    }

    /// The options offered when a step names none: one of each kind.
    pub(crate) fn default_four() -> Vec<Self> {
        vec![
            Self::new("allow-once", "Allow once", PermissionOptionKind::AllowOnce),
            Self::new(
                "allow-always",
                "Always allow",
                PermissionOptionKind::AllowAlways,
            ),
            Self::new("reject-once", "Reject", PermissionOptionKind::RejectOnce),
            Self::new(
                "reject-always",
                "Always reject",
                PermissionOptionKind::RejectAlways,
            ),
        ]
    }
}

/// What a rejected permission does to the rest of the turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OnReject {
    /// Go on with the next step, as agents do that try another way.
    #[default]
    Continue,
    /// End the turn (`end_turn`), as agents do that give up.
    Stop,
}

impl Scenario {
    /// Read a scenario file; the extension (`.toml` or `.json`) picks the format.
    pub(crate) fn load(path: &Path) -> Result<Self, ScenarioError> {
        let extension = path
            .extension()
            .and_then(|ext| ext.to_str())
            .map(str::to_ascii_lowercase);
        let is_toml = match extension.as_deref() {
            Some("toml") => true,
            Some("json") => false,
            _ => {
                return Err(ScenarioError::Extension {
                    path: path.to_owned(),
                });
            }
        };
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        if is_toml {
            Self::from_toml(&text).map_err(|source| ScenarioError::Toml {
                path: path.to_owned(),
                source: Box::new(source),
            })
        } else {
            Self::from_json(&text).map_err(|source| ScenarioError::Json {
                path: path.to_owned(),
                source,
            })
        }
    }

    pub(crate) fn from_toml(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }

    pub(crate) fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The index of the turn that answers `prompt`: the first unused turn
    /// whose `match` is a case-insensitive prefix of the trimmed prompt,
    /// else the first unused turn without `match`. `used` holds the indexes
    /// of `once` turns already played; the chosen one is added when it is
    /// `once`.
    pub(crate) fn select(&self, prompt: &str, used: &mut HashSet<usize>) -> Option<usize> {
        let prompt = prompt.trim().to_lowercase();
        let available = |(index, turn): &(usize, &Turn)| !(turn.once && used.contains(index));
        let matching = self
            .turns
            .iter()
            .enumerate()
            .filter(available)
            .find(|(_, turn)| {
                turn.prefix
                    .as_ref()
                    .is_some_and(|prefix| prompt.starts_with(&prefix.trim().to_lowercase()))
            });
        let chosen = matching.or_else(|| {
            self.turns
                .iter()
                .enumerate()
                .filter(available)
                .find(|(_, turn)| turn.prefix.is_none())
        });
        let (index, turn) = chosen?;
        if turn.once {
            used.insert(index);
        }
        Some(index)
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;

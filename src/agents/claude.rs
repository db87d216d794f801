//! Claude Code (`claude-agent-acp`, the Claude Code CLI inside it).
//!
//! - It keeps its shell state in `/tmp/claude-<uid>` whatever `TMPDIR`
//!   says; `CLAUDE_CODE_TMPDIR` moves it. Under the sandbox it goes to the
//!   process's private temp dir.
//! - Its settings file is `~/.claude.json`, a file directly in the home
//!   directory (besides `~/.claude/`). Claude Code 2.1 writes it through a
//!   temporary file renamed over it and a lock directory beside it, and
//!   when those fail (nothing new can be made in the home directory under
//!   the sandbox) writes it in place. On a first run it does not exist: it
//!   is created empty (`{}`) before the start, so that the in-place write
//!   works and the session opens.

use super::quirks::{KnownMode, MetaReading, WorkspaceConfig};
use super::{Confined, Launch, Sandbox, is_set};
use crate::policy::agent_mode::ModeAsks;
use agent_client_protocol::v1::schema as acp;

use crate::acp::AgentCommand;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &[
    "claude-agent-acp",
    "claude-code-acp",
    "claude-code",
    "claude",
];

/// Its modes (claude-agent-acp-0.23.1-mockllm-all.jsonl, `session/new`).
/// In its own `plan` it runs commands without asking, whatever its
/// description says: warden's Plan never relies on it unless the user
/// opts in (`agent_plan_mode`).
pub(super) const MODES: &[KnownMode] = &[
    ("default", ModeAsks::Asks),
    ("acceptEdits", ModeAsks::NeverAsks),
    ("plan", ModeAsks::Unknown),
    ("dontAsk", ModeAsks::NeverAsks),
    ("bypassPermissions", ModeAsks::NeverAsks),
];

/// Its project settings (hooks), its project MCP servers (`.mcp.json`),
/// its hooks and commands in a workspace.
pub(super) const WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig {
    files: &[
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mcp.json",
    ],
    dirs: &[".claude/hooks", ".claude/commands"],
};

/// Its tool calls name its own tool in `_meta.claudeCode.toolName`.
pub(super) const META: MetaReading = MetaReading {
    tool_name: true,
    terminals: false,
};

/// The hosts of its model it reaches without asking (issue 35): the Anthropic API, and where its sign-in refreshes its token.
pub const API_HOSTS: &[&str] = &[
    "api.anthropic.com",
    "console.anthropic.com",
    "platform.claude.com",
];

/// What the sandbox gives it. Its config that runs programs (settings
/// hooks, plugins, its commands, subagents and skills) is read-only in the
/// kernel: it makes nothing new directly in `~/.claude` once its usual
/// directories exist ([`Sandbox::state_subdirs`], made first).
/// `~/.claude.json` it rewrites all the time (its bookkeeping): its
/// `mcpServers`, at the top and in each project, are put back when it
/// exits ([`Sandbox::guarded_keys`]).
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".claude*", ".claude", ".config/claude"],
    state_env: &["CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TMPDIR"],
    env: &[
        "ANTHROPIC_*",
        "CLAUDE_*",
        "IS_SANDBOX",
        "DISABLE_*",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
        "MAX_THINKING_TOKENS",
        "MAX_MCP_OUTPUT_TOKENS",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
        "CLOUD_ML_REGION",
        "VERTEX_REGION_*",
    ],
    auth: &[".claude/.credentials.json", ".claude.json"],
    code_config: &[
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/plugins",
        ".claude/hooks",
        ".claude/commands",
        ".claude/agents",
        ".claude/skills",
    ],
    guarded: &[],
    guarded_keys: &[".claude.json"],
    state_subdirs: &[
        ".claude/projects",
        ".claude/plans",
        ".claude/backups",
        ".claude/shell-snapshots",
        ".claude/session-env",
        ".claude/todos",
        ".claude/statsig",
        ".claude/ide",
        ".claude/file-history",
        ".claude/debug",
    ],
    moved_by: &[
        ("CLAUDE_CONFIG_DIR", ".claude", ""),
        ("CLAUDE_CONFIG_DIR", ".claude.json", ".claude.json"),
    ],
};

/// Moves Claude Code's temp dir (`/tmp/claude-<uid>`).
pub const TMPDIR_VAR: &str = "CLAUDE_CODE_TMPDIR";

/// State files in the home directory, and what an empty one holds.
pub const STATE_FILES: &[(&str, &str)] = &[(".claude.json", "{}\n")];

/// Its temp dir in the private one, unless the user moved it.
pub(super) fn launch(command: &AgentCommand, confined: Confined<'_>) -> Launch {
    let mut launch = Launch::default();
    if let Some(tmp) = confined.tmp
        && !is_set(command, TMPDIR_VAR)
    {
        launch
            .env
            .push((TMPDIR_VAR.to_string(), tmp.display().to_string()));
    }
    launch
}

/// The agent's own tool name: `_meta.claudeCode.toolName` and the like, else none.
pub(crate) fn tool_name(meta: Option<&acp::Meta>) -> Option<String> {
    let meta = meta?;
    meta.values().find_map(|v| {
        v.get("toolName")
            .and_then(|n| n.as_str())
            .map(str::to_string)
    })
}

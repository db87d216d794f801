//! Gemini CLI (`gemini --acp`, `@google/gemini-cli`).

use super::Sandbox;
use super::quirks::{KnownMode, WorkspaceConfig};
use crate::policy::agent_mode::ModeAsks;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["gemini", "gemini-cli"];

/// Its modes (gemini-cli-0.61.0-fakellm-shell-allow.jsonl, `session/new`).
pub(super) const MODES: &[KnownMode] = &[
    ("default", ModeAsks::Asks),
    ("autoEdit", ModeAsks::NeverAsks),
    ("yolo", ModeAsks::NeverAsks),
    ("plan", ModeAsks::Unknown),
];

/// Its project settings (MCP servers, hooks).
pub(super) const WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig {
    files: &[".gemini/settings.json"],
    dirs: &[],
};

/// gemini-cli 0.61.0 answers `session/load` before the last updates of
/// its replay: the end of the conversation arrives after the answer. After
/// a reload that must not show the conversation again (a restart), what
/// it sends until the next prompt is not shown
/// (`assets/scenarios/gemini-replays-after-its-answer.toml`).
pub(super) const REPLAYS_AFTER_LOAD: bool = true;

/// The hosts of its model it reaches without asking (issue 35): the Gemini API, Code Assist (a Google sign-in) and its token refresh.
pub const API_HOSTS: &[&str] = &[
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".gemini"],
    state_env: &["GEMINI_CLI_HOME"],
    env: &["GEMINI_*", "GOOGLE_*"],
    auth: &[
        ".gemini/oauth_creds.json",
        ".gemini/mcp-oauth-tokens.json",
        ".gemini/gemini-credentials.json",
    ],
    code_config: &[],
    guarded: &[
        ".gemini/settings.json",
        ".gemini/extensions",
        ".gemini/commands",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[("GEMINI_CLI_HOME", "", "")],
};

//! Qwen Code (`qwen --acp`, `@qwen-code/qwen-code`, whose script is
//! `cli-entry.js`: its folder names it).

use super::Sandbox;
use super::quirks::{KnownMode, WorkspaceConfig};
use crate::policy::agent_mode::ModeAsks;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["qwen", "qwen-code"];

/// Its modes (qwen-code-0.24.4-fakellm-defaultmode-touch-allow.jsonl,
/// `session/new`). It starts in `auto` when its settings say so
/// (qwen-code-0.24.4-fakellm-automode-touch-unasked.jsonl): warden moves it
/// to `default` first.
pub(super) const MODES: &[KnownMode] = &[
    ("plan", ModeAsks::Unknown),
    ("default", ModeAsks::Asks),
    ("auto-edit", ModeAsks::NeverAsks),
    ("auto", ModeAsks::NeverAsks),
    ("yolo", ModeAsks::NeverAsks),
];

/// Its project settings (MCP servers, hooks).
pub(super) const WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig {
    files: &[".qwen/settings.json"],
    dirs: &[],
};

/// The hosts of its model it reaches without asking (issue 35): DashScope and Qwen's own sign-in.
pub const API_HOSTS: &[&str] = &[
    "dashscope.aliyuncs.com",
    "dashscope-intl.aliyuncs.com",
    "chat.qwen.ai",
    "portal.qwen.ai",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".qwen"],
    state_env: &[],
    env: &["QWEN_*", "DASHSCOPE_*", "OPENAI_*"],
    auth: &[".qwen/oauth_creds.json"],
    code_config: &[],
    guarded: &[
        ".qwen/settings.json",
        ".qwen/extensions",
        ".qwen/commands",
        ".qwen/skills",
        ".qwen/hooks",
        ".qwen/extension-store",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[("QWEN_HOME", ".qwen", "")],
};

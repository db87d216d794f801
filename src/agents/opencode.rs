//! OpenCode (`opencode acp`, `opencode-ai`).

use super::Sandbox;
use super::quirks::{KnownMode, SettingsModes, WorkspaceConfig};
use crate::policy::agent_mode::ModeAsks;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["opencode", "opencode-ai"];

/// Its modes, a `mode` config option
/// (opencode-1.18.33-fakellm-bash-allow.jsonl, `session/new`): `build`
/// asks only where its `opencode.json` says so ([`SETTINGS_MODES`]).
pub(super) const MODES: &[KnownMode] = &[("build", ModeAsks::Unknown), ("plan", ModeAsks::Unknown)];

/// opencode 1.18's `build`: "Executes tools based on configured
/// permissions.", which by opencode's defaults allow every edit and
/// command; warden says what to set.
pub(super) const SETTINGS_MODES: SettingsModes = SettingsModes {
    phrases: &[
        "based on configured permissions",
        "configured permissions",
        "permission settings",
    ],
    hint: "opencode: \"permission\": {\"edit\": \"ask\", \"bash\": \"ask\"} in opencode.json; its default allows both",
};

/// Its project config (MCP servers, plugins, commands).
pub(super) const WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig {
    files: &["opencode.json", "opencode.jsonc"],
    dirs: &[],
};
/// The hosts of its model it reaches without asking (issue 35): OpenCode Zen and its model list.
pub const API_HOSTS: &[&str] = &["opencode.ai", "models.dev"];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[
        ".local/share/opencode",
        ".local/state/opencode",
        ".config/opencode",
        ".cache/opencode",
    ],
    state_env: &[],
    env: &["OPENCODE_*"],
    auth: &[
        ".local/share/opencode/auth.json",
        ".local/share/opencode/mcp-auth.json",
        ".config/opencode/opencode.json",
    ],
    code_config: &[],
    guarded: &[
        ".config/opencode/opencode.json",
        ".config/opencode/opencode.jsonc",
        ".config/opencode/config.json",
        ".config/opencode/plugin",
        ".config/opencode/plugins",
        ".config/opencode/tool",
        ".config/opencode/tools",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[
        ("XDG_CONFIG_HOME", ".config", ""),
        ("XDG_DATA_HOME", ".local/share", ""),
        ("XDG_STATE_HOME", ".local/state", ""),
    ],
};

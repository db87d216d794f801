//! OpenCode (`opencode acp`, `opencode-ai`).

use super::Sandbox;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["opencode", "opencode-ai"];

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
};

//! Kimi CLI (`kimi acp`, `kimi-cli` from PyPI).

use super::Sandbox;
use super::quirks::KnownMode;
use crate::policy::agent_mode::ModeAsks;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["kimi", "kimi-cli", "kimi code cli"];

/// Its one mode (kimi-cli-1.51.0-fakellm-shell-allow-terminal.jsonl,
/// `session/new`).
pub(super) const MODES: &[KnownMode] = &[("default", ModeAsks::Asks)];
/// The hosts of its model it reaches without asking (issue 35): Moonshot's API.
pub const API_HOSTS: &[&str] = &["api.moonshot.ai", "api.moonshot.cn", "api.kimi.com"];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".kimi"],
    state_env: &[],
    env: &["KIMI_*", "MOONSHOT_*"],
    auth: &[".kimi/credentials", ".kimi/config.toml"],
    code_config: &[],
    // Its config (hooks, MCP servers), its plugins and skills, and `bin/`,
    // where it looks for `rg` before the PATH.
    guarded: &[
        ".kimi/config.toml",
        ".kimi/mcp.json",
        ".kimi/plugins",
        ".kimi/skills",
        ".kimi/bin",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[("KIMI_SHARE_DIR", ".kimi", "")],
};

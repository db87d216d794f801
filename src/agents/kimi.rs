//! Kimi CLI (`kimi acp`, `kimi-cli` from PyPI).

use super::Sandbox;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["kimi", "kimi-cli", "kimi code cli"];

/// The hosts of its model it reaches without asking (issue 35): Moonshot's API.
pub const API_HOSTS: &[&str] = &["api.moonshot.ai", "api.moonshot.cn", "api.kimi.com"];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".kimi"],
    state_env: &[],
    env: &["KIMI_*", "MOONSHOT_*"],
    auth: &[".kimi/credentials", ".kimi/config.toml"],
    code_config: &[],
    guarded: &[".kimi/config.toml", ".kimi/mcp.json"],
    guarded_keys: &[],
    state_subdirs: &[],
};

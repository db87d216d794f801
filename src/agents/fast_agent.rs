//! fast-agent (`fast-agent`, `python3 -m fast_agent`).

use super::{EMPTY, Sandbox};

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &[
    "fast-agent",
    "fast_agent",
    "fast-agent-mcp",
    "fast-agent-acp",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".fast-agent"],
    env: &["FAST_AGENT_*"],
    ..EMPTY
};

//! fast-agent (`fast-agent`, `python3 -m fast_agent`).

use super::quirks::KnownMode;
use super::{EMPTY, Sandbox};
use crate::policy::agent_mode::ModeAsks;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &[
    "fast-agent",
    "fast_agent",
    "fast-agent-mcp",
    "fast-agent-acp",
];

/// Its one mode (fast-agent-0.10.46-passthrough-fs-cancel.jsonl,
/// `session/new`), whose words say nothing about asking.
pub(super) const MODES: &[KnownMode] = &[("agent", ModeAsks::Unknown)];
/// The hosts of its model it reaches without asking (issue 35): the model APIs it uses by default.
pub const API_HOSTS: &[&str] = &[
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".fast-agent"],
    env: &["FAST_AGENT_*"],
    ..EMPTY
};

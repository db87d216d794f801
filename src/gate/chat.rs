//! What one chat's gate holds: its mode, the user's rules and bypasses,
//! this chat's grants, the agent's modes as the gate keeps them, and the
//! cards waiting. It is the `gate` part of `ChatState`; the rest of this
//! room acts on it.

use std::path::PathBuf;

use crate::policy::{AgentPolicy, ChatGrant, Mode, Rule};
use crate::state::{AllowedScope, Approval, OnAsk, RuleDraft};

/// What may run without asking, and what waits: the chat's mode, the user's
/// rules and bypasses, this chat's grants, and the cards.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The chat's permission mode.
    pub mode: Mode,
    /// Requests waiting for the user, oldest first.
    pub approvals: Vec<Approval>,
    /// "Allow for this chat" grants.
    pub grants: Vec<ChatGrant>,
    /// The agent's name and bypass setting.
    pub agent_policy: AgentPolicy,
    /// The user's rules, in file order.
    pub rules: Vec<Rule>,
    /// Agents with `bypass_permissions = true` in the settings (and set this run).
    pub bypassed_agents: Vec<String>,
    /// The rule being kept from a card, while its pattern is edited.
    pub rule_draft: Option<RuleDraft>,
    /// What allowed requests of this turn named (for client writes and terminals).
    pub allowed_scopes: Vec<AllowedScope>,
    /// The agent's own mode to switch to in Plan (opt-in per agent).
    pub agent_plan_mode: Option<String>,
    /// The agent's mode that asks before acting, where warden keeps it.
    pub asking_mode: Option<String>,
    /// The asking mode the settings name (`asking_mode`), if any.
    pub configured_asking_mode: Option<String>,
    /// The agent offers modes but none known to ask: Plan is refused.
    pub no_asking_mode: bool,
    /// Why no prompt may be sent (the agent would not leave a mode that may
    /// act without asking).
    pub prompt_blocked: Option<String>,
    /// Home directory, for `~` in rules.
    pub home: Option<PathBuf>,
    /// Set for `warden exec`: how asks are answered without a user.
    pub headless: Option<OnAsk>,
}

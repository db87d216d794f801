//! Which of an agent's own modes still ask before acting.
//!
//! warden's gate sees only what the agent asks about, so the agent must stay
//! in a mode that asks. Agents name their modes freely; these are the names
//! seen in the recorded agents (Claude Code, Codex, Gemini CLI, qwen-code,
//! kimi-cli, fast-agent): `default`, `read-only` and `ask` ask; `auto`,
//! `yolo`, `bypassPermissions`, `dontAsk`, `acceptEdits`, `autoEdit`,
//! `auto-edit` and `full-access` act without asking. A mode known by neither
//! its id, its name nor its description is [`ModeAsks::Unknown`], which the
//! gate treats like one that does not ask (fail closed). What each known
//! agent's own modes do, as recorded, is in its file of `src/agents/`
//! (`agents::quirks::mode_asks` reads that first, then these words).

use crate::model::AgentMode;

/// What warden can tell about an agent mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModeAsks {
    /// The agent asks before editing or running anything in this mode.
    Asks,
    /// The agent edits or runs some things without asking in this mode.
    NeverAsks,
    /// Nothing says which: treated as [`ModeAsks::NeverAsks`] where it matters.
    Unknown,
}

/// Ids and names (lowercase, letters and digits only) of modes that act without asking.
const NEVER_ASKS: &[&str] = &[
    "auto",
    "yolo",
    "bypasspermissions",
    "bypass",
    "dontask",
    "acceptedits",
    "autoedit",
    "autoaccept",
    "fullaccess",
    "fullauto",
    "agentfullaccess",
];

/// Ids and names of modes that ask, in order of preference.
const ASKS: &[&str] = &["default", "readonly", "ask", "askfirst", "manual"];

/// Phrases in a description that mean the mode acts without asking.
const NEVER_ASKS_PHRASES: &[&str] = &[
    "auto-approve",
    "auto approve",
    "autoapprove",
    "auto-accept",
    "auto accept",
    "automatically approve",
    "automatically accept",
    "without asking",
    "without approval",
    "without prompting",
    "without confirmation",
    "bypass",
    "don't prompt",
    "do not prompt",
    "don't ask",
    "do not ask",
    "never ask",
    "skip permission",
    "skips permission",
];

/// Phrases in a description that mean the mode asks.
const ASKS_PHRASES: &[&str] = &[
    "prompts for approval",
    "prompts for dangerous",
    "require approval",
    "requires approval",
    "approval is required to edit",
    "asks before",
    "ask before",
    "asks for permission",
    "ask for permission",
];

fn key(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// What the id, name and description of a mode say about asking. A mode
/// whose id or name says it never asks never asks, whatever its
/// description; then the id or name that says it asks; then the description.
pub(crate) fn classify(id: &str, name: &str, description: Option<&str>) -> ModeAsks {
    let (id, name) = (key(id), key(name));
    if NEVER_ASKS.contains(&id.as_str()) || NEVER_ASKS.contains(&name.as_str()) {
        return ModeAsks::NeverAsks;
    }
    if ASKS.contains(&id.as_str()) || ASKS.contains(&name.as_str()) {
        return ModeAsks::Asks;
    }
    let description = description.unwrap_or_default().to_lowercase();
    if NEVER_ASKS_PHRASES.iter().any(|p| description.contains(p)) {
        return ModeAsks::NeverAsks;
    }
    if ASKS_PHRASES.iter().any(|p| description.contains(p)) {
        return ModeAsks::Asks;
    }
    ModeAsks::Unknown
}

/// [`classify`] for a mode of the agent's.
pub(crate) fn mode_asks(mode: &AgentMode) -> ModeAsks {
    classify(&mode.id, &mode.name, mode.description.as_deref())
}

/// The mode to keep the agent in: the one the settings name (`asking_mode`)
/// when the agent offers it, else the first mode that asks, preferring
/// `default`, then `read-only`, then `ask`, then any whose description says
/// it asks. `None` when the agent offers none.
///
/// What each mode does is read by `asks`: [`mode_asks`], or the agent's
/// own table first (`agents::quirks::mode_asks`).
pub(crate) fn asking_mode<'a>(
    modes: &'a [AgentMode],
    configured: Option<&str>,
    asks: impl Fn(&AgentMode) -> ModeAsks,
) -> Option<&'a AgentMode> {
    if let Some(id) = configured {
        return modes.iter().find(|m| m.id == id);
    }
    let by_name = ASKS.iter().find_map(|want| {
        modes
            .iter()
            .filter(|m| asks(m) == ModeAsks::Asks)
            .find(|m| key(&m.id) == *want || key(&m.name) == *want)
    });
    by_name.or_else(|| modes.iter().find(|m| asks(m) == ModeAsks::Asks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(id: &str, name: &str, description: &str) -> AgentMode {
        AgentMode {
            id: id.into(),
            name: name.into(),
            description: Some(description.into()),
        }
    }

    #[test]
    fn recorded_agents_modes() {
        let cases = [
            (
                "default",
                "Default",
                "Standard behavior, prompts for dangerous operations",
                ModeAsks::Asks,
            ),
            (
                "acceptEdits",
                "Accept Edits",
                "Auto-accept file edit operations",
                ModeAsks::NeverAsks,
            ),
            (
                "dontAsk",
                "Don't Ask",
                "Don't prompt for permissions, deny if not pre-approved",
                ModeAsks::NeverAsks,
            ),
            (
                "bypassPermissions",
                "Bypass Permissions",
                "Bypass all permission checks",
                ModeAsks::NeverAsks,
            ),
            (
                "read-only",
                "Read Only",
                "Codex can read files in the current workspace. Approval is required to edit files or access the internet.",
                ModeAsks::Asks,
            ),
            (
                "auto",
                "Default",
                "Codex can read and edit files in the current workspace, and run commands.",
                ModeAsks::NeverAsks,
            ),
            (
                "full-access",
                "Full Access",
                "Codex can edit files outside this workspace",
                ModeAsks::NeverAsks,
            ),
            (
                "autoEdit",
                "Auto Edit",
                "Auto-approves edit tools",
                ModeAsks::NeverAsks,
            ),
            (
                "yolo",
                "YOLO",
                "Auto-approves all tools",
                ModeAsks::NeverAsks,
            ),
            (
                "auto-edit",
                "Auto Edit",
                "Automatically approve file edits",
                ModeAsks::NeverAsks,
            ),
            (
                "auto",
                "Auto",
                "LLM classifier auto-approves safe actions, blocks risky ones",
                ModeAsks::NeverAsks,
            ),
            (
                "default",
                "Default",
                "Require approval for file edits or shell commands",
                ModeAsks::Asks,
            ),
            (
                "agent",
                "Agent",
                "You are a helpful AI Agent.",
                ModeAsks::Unknown,
            ),
            (
                "custom",
                "Custom",
                "Runs tools without asking",
                ModeAsks::NeverAsks,
            ),
            (
                "careful",
                "Careful",
                "Asks before every edit",
                ModeAsks::Asks,
            ),
        ];
        for (id, name, description, want) in cases {
            assert_eq!(classify(id, name, Some(description)), want, "{id}");
        }
    }

    #[test]
    fn the_asking_mode_is_found_or_named() {
        let qwen = [
            mode(
                "plan",
                "Plan",
                "Analyze only, do not modify files or execute commands",
            ),
            mode(
                "default",
                "Default",
                "Require approval for file edits or shell commands",
            ),
            mode("auto", "Auto", "LLM classifier auto-approves safe actions"),
        ];
        assert_eq!(
            asking_mode(&qwen, None, mode_asks).map(|m| m.id.as_str()),
            Some("default")
        );
        assert_eq!(
            asking_mode(&qwen, Some("plan"), mode_asks).map(|m| m.id.as_str()),
            Some("plan")
        );
        assert_eq!(asking_mode(&qwen, Some("missing"), mode_asks), None);
        let codex = [
            mode(
                "read-only",
                "Read Only",
                "Approval is required to edit files",
            ),
            mode("auto", "Default", "Codex can read and edit files"),
        ];
        assert_eq!(
            asking_mode(&codex, None, mode_asks).map(|m| m.id.as_str()),
            Some("read-only")
        );
        let fast_agent = [mode("agent", "Agent", "You are a helpful AI Agent.")];
        assert_eq!(asking_mode(&fast_agent, None, mode_asks), None);
        assert_eq!(asking_mode(&[], None, mode_asks), None);
    }
}

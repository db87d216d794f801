//! Who the agent is, and how warden reads what it sends: the [`Agent`]
//! enum and its quirks, chosen once at `initialize` from the agent's
//! identity (`agents::identify`) and kept on its chats. Pure (no IO): the
//! state may read it (`crate::agents::quirks` is the door the purity test
//! lets `state/` through). Each quirk's data lives in its agent's file;
//! this file only picks it.
//!
//! - Its own modes (`claude::MODES`, ...): what each of them does, as
//!   recorded; a mode not in the table is read by its words
//!   (`policy::agent_mode::classify`).
//! - A mode that asks only where the agent's own settings say
//!   (`opencode::SETTINGS_MODES`): what to set.
//! - The `_meta` it sends that warden reads (`claude::META`: its tool name;
//!   `codex::META`: the terminals it runs itself).
//! - A replay that ends after its answer to `session/load`
//!   (`gemini::REPLAYS_AFTER_LOAD`).
//! - Its files in a workspace that make it run programs
//!   (`claude::WORKSPACE_CONFIG`, ...): every agent's, as any may run there
//!   next.
//! - What its output says when its own sandbox cannot start inside
//!   warden's (`codex::OWN_SANDBOX_FAILED`).
//!
//! An agent warden does not know ([`None`]) gets every quirk that could
//! apply: what warden did before it knew agents apart.

use crate::model::AgentMode;
use crate::policy::agent_mode::{self, ModeAsks};

use super::{claude, codex, demo, fast_agent, gemini, kimi, opencode, qwen};

/// An agent warden knows: its launch quirks and what its sandbox gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`claude-agent-acp`, `claude-code-acp`): its temp dir,
    /// `~/.claude.json` and its state in `~/.claude`.
    Claude,
    /// Codex (`codex-acp`): its own sandbox inside warden's.
    Codex,
    /// Gemini CLI (`gemini --acp`).
    Gemini,
    /// Qwen Code (`qwen --acp`).
    Qwen,
    /// Kimi CLI (`kimi acp`).
    Kimi,
    /// OpenCode (`opencode acp`).
    OpenCode,
    /// fast-agent (`fast-agent`).
    FastAgent,
    /// warden's own demo agent (`warden demo-agent`).
    Demo,
}

/// One of an agent's own modes as recorded, and what it does.
pub(crate) type KnownMode = (&'static str, ModeAsks);

/// Modes that ask only where the agent's own permission settings say
/// "ask": warden cannot tell whether they ask, but can say what to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SettingsModes {
    /// Phrases of such a mode's description.
    pub phrases: &'static [&'static str],
    /// What to set, said in the warning.
    pub hint: &'static str,
}

/// The agent's own files in a workspace that make it run programs the
/// next time it starts there (hooks, MCP servers): a turn that changes one
/// is said, and checkpoints keep them even when git ignores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceConfig {
    /// Files, relative to a directory of the workspace.
    pub files: &'static [&'static str],
    /// Directories whose every file is one.
    pub dirs: &'static [&'static str],
}

impl WorkspaceConfig {
    /// None.
    pub const NONE: WorkspaceConfig = WorkspaceConfig {
        files: &[],
        dirs: &[],
    };
}

/// An agent's own sandbox failing inside warden's, as its output says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnSandboxFailed {
    /// What its output holds then.
    pub marker: &'static str,
    /// What warden says.
    pub line: &'static str,
}

/// The `_meta` of the agent's tool calls that warden reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaReading {
    /// The agent's own tool name (`_meta.claudeCode.toolName`).
    pub tool_name: bool,
    /// The terminals the agent runs itself (`terminal_info`,
    /// `terminal_output`, `terminal_exit`).
    pub terminals: bool,
}

impl MetaReading {
    /// Nothing of `_meta`.
    pub const NONE: MetaReading = MetaReading {
        tool_name: false,
        terminals: false,
    };
    /// Everything warden knows how to read.
    pub const ALL: MetaReading = MetaReading {
        tool_name: true,
        terminals: true,
    };
}

impl Agent {
    /// Every agent warden knows.
    pub const ALL: [Agent; 8] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Qwen,
        Agent::Kimi,
        Agent::OpenCode,
        Agent::FastAgent,
        Agent::Demo,
    ];

    /// The names its command gives it (`settings::agent_name_for`, lower
    /// case, a version taken away): the program, the package a runner
    /// runs, the script an interpreter runs or the folder that holds it.
    pub(super) fn names(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => claude::NAMES,
            Agent::Codex => codex::NAMES,
            Agent::Gemini => gemini::NAMES,
            Agent::Qwen => qwen::NAMES,
            Agent::Kimi => kimi::NAMES,
            Agent::OpenCode => opencode::NAMES,
            Agent::FastAgent => fast_agent::NAMES,
            Agent::Demo => demo::NAMES,
        }
    }

    /// Its own modes as recorded, and what each does.
    pub(crate) fn modes(self) -> &'static [KnownMode] {
        match self {
            Agent::Claude => claude::MODES,
            Agent::Codex => codex::MODES,
            Agent::Gemini => gemini::MODES,
            Agent::Qwen => qwen::MODES,
            Agent::Kimi => kimi::MODES,
            Agent::OpenCode => opencode::MODES,
            Agent::FastAgent => fast_agent::MODES,
            Agent::Demo => &[],
        }
    }

    /// Its files in a workspace that make it run programs.
    pub fn workspace_config(self) -> &'static WorkspaceConfig {
        match self {
            Agent::Claude => &claude::WORKSPACE_CONFIG,
            Agent::Codex => &codex::WORKSPACE_CONFIG,
            Agent::Gemini => &gemini::WORKSPACE_CONFIG,
            Agent::Qwen => &qwen::WORKSPACE_CONFIG,
            Agent::OpenCode => &opencode::WORKSPACE_CONFIG,
            Agent::Kimi | Agent::FastAgent | Agent::Demo => &WorkspaceConfig::NONE,
        }
    }

    /// Its modes that ask only where its own settings say, if it has such.
    pub(crate) fn settings_modes(self) -> Option<&'static SettingsModes> {
        match self {
            Agent::OpenCode => Some(&opencode::SETTINGS_MODES),
            _ => None,
        }
    }

    /// The `_meta` of its tool calls that warden reads. The demo agent
    /// plays the others' recordings: everything.
    pub fn meta(self) -> MetaReading {
        match self {
            Agent::Claude => claude::META,
            Agent::Codex => codex::META,
            Agent::Demo => MetaReading::ALL,
            _ => MetaReading::NONE,
        }
    }

    /// Whether it may send the end of a session's replay after its answer
    /// to `session/load` (the demo agent plays gemini's).
    pub fn replays_after_load(self) -> bool {
        match self {
            Agent::Gemini => gemini::REPLAYS_AFTER_LOAD,
            Agent::Demo => true,
            _ => false,
        }
    }
}

/// The agent that names itself `name` at `initialize` (`agentInfo.name`:
/// `@zed-industries/claude-agent-acp`, `Kimi Code CLI`), when warden knows
/// it. The agent says this itself: it picks how warden reads what the
/// agent sends, never what the sandbox gives it (`agents::known`, from the
/// command line, does that before it starts).
pub fn from_info(name: &str) -> Option<Agent> {
    let name = name.trim().to_lowercase();
    let name = match name.strip_prefix('@') {
        Some(scoped) => scoped.split_once('/').map_or(scoped, |(_, n)| n),
        None => name.as_str(),
    };
    Agent::ALL
        .into_iter()
        .find(|agent| agent.names().contains(&name))
}

/// What the agent's mode `mode` does: its own table's word when warden
/// knows the agent and the mode, else what the mode's id, name and
/// description say.
pub(crate) fn mode_asks(agent: Option<Agent>, mode: &AgentMode) -> ModeAsks {
    agent
        .and_then(|a| a.modes().iter().find(|(id, _)| *id == mode.id))
        .map_or_else(|| agent_mode::mode_asks(mode), |(_, asks)| *asks)
}

/// What to set when the agent's mode `mode` asks only where the agent's
/// own settings say: the agent's own hint, or, for an agent warden does
/// not know, the hint of any agent whose such modes read like it. `None`
/// for a mode that is known to ask or not.
pub(crate) fn settings_hint(agent: Option<Agent>, mode: &AgentMode) -> Option<&'static str> {
    if mode_asks(agent, mode) != ModeAsks::Unknown {
        return None;
    }
    let description = mode
        .description
        .as_deref()
        .unwrap_or_default()
        .to_lowercase();
    let reads_like = |s: &&SettingsModes| s.phrases.iter().any(|p| description.contains(p));
    match agent {
        Some(agent) => agent.settings_modes().filter(reads_like),
        None => Agent::ALL
            .iter()
            .filter_map(|a| a.settings_modes())
            .find(reads_like),
    }
    .map(|s| s.hint)
}

/// Every known agent's files in a workspace that make it run programs
/// ([`Agent::workspace_config`]): whichever agent runs there next.
pub fn workspace_files() -> impl Iterator<Item = &'static str> {
    Agent::ALL
        .into_iter()
        .flat_map(|a| a.workspace_config().files.iter().copied())
}

/// Every known agent's directories in a workspace whose files make it run
/// programs.
pub fn workspace_dirs() -> impl Iterator<Item = &'static str> {
    Agent::ALL
        .into_iter()
        .flat_map(|a| a.workspace_config().dirs.iter().copied())
}

/// What warden says when an agent's output shows its own sandbox failing
/// inside warden's (codex's bubblewrap): by the output alone, whoever ran
/// the command.
pub fn own_sandbox_failed(text: &str) -> Option<&'static str> {
    [codex::OWN_SANDBOX_FAILED]
        .into_iter()
        .find(|f| text.contains(f.marker))
        .map(|f| f.line)
}

/// The `_meta` warden reads from the agent's tool calls.
pub fn meta(agent: Option<Agent>) -> MetaReading {
    agent.map_or(MetaReading::ALL, Agent::meta)
}

/// Whether what the agent sends after its answer to `session/load` (until
/// the next prompt) may still be its replay.
pub fn replays_after_load(agent: Option<Agent>) -> bool {
    agent.is_none_or(Agent::replays_after_load)
}

#[cfg(test)]
#[path = "quirks_tests.rs"]
mod tests;

//! What the agents warden knows need to run under its sandbox, each in a
//! file of its own (`claude.rs`, `codex.rs`), chosen once from the agent's
//! command line ([`known`]): the state files it writes in the home
//! directory before they exist, the environment and arguments it is
//! started with, and what start-up says about them. The sandbox's own
//! tables (`sandbox::AGENT_STATE`) say which existing state it may write.

use std::path::{Path, PathBuf};

use crate::acp::AgentCommand;
use crate::sandbox::{Profile, SandboxMode, Support};

pub mod claude;
pub mod codex;

/// An agent warden knows: its launch quirks, and the sandbox's tables of
/// its state, config, variables and sign-in files (`sandbox::AGENT_STATE`
/// and the tables of `sandbox::env`, keyed by [`Agent::word`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`claude-agent-acp`, `claude-code-acp`): its temp dir and
    /// `~/.claude.json`.
    Claude,
    /// Codex (`codex-acp`): its own sandbox inside warden's.
    Codex,
    /// Gemini CLI (`gemini --acp`, `@google/gemini-cli`).
    Gemini,
    /// Qwen Code (`qwen --acp`, `@qwen-code/qwen-code`).
    Qwen,
    /// Kimi CLI (`kimi acp`, `kimi-cli`).
    Kimi,
    /// OpenCode (`opencode acp`).
    OpenCode,
    /// fast-agent (`fast-agent`, `fast-agent-acp`, `fast_agent`).
    FastAgent,
    /// warden's own demo agent (`warden demo-agent`).
    Demo,
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

    /// The start of the name its command gives it, and its key in the
    /// sandbox's tables.
    pub fn word(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::Kimi => "kimi",
            Agent::OpenCode => "opencode",
            Agent::FastAgent => "fast-agent",
            Agent::Demo => "demo-agent",
        }
    }
}

/// The agent `program args` (started in `cwd`) runs, when warden knows it:
/// by the name the command gives the agent (`settings::agent_name_for`: the
/// program's file name, the package a runner runs, the script an
/// interpreter runs or the folder that holds it), when that name starts
/// with the agent's (`claude-agent-acp`, `claude-code-acp`, `codex-acp`,
/// `gemini`, `qwen-code`, `kimi`, `opencode`, `fast-agent-acp`; `_` counts
/// as `-`); warden's own demo agent is warden's program with `demo-agent`.
/// Other arguments (a scenario file, a model name) and the folders that
/// hold the program never count: a script named `my-claude-tool` is no
/// Claude Code.
pub fn known(program: &str, args: &[String], cwd: &Path) -> Option<Agent> {
    if args.first().is_some_and(|a| a == "demo-agent") && is_warden(program) {
        return Some(Agent::Demo);
    }
    let name = crate::settings::agent_name_for(program, args, cwd)
        .to_lowercase()
        .replace('_', "-");
    Agent::ALL
        .into_iter()
        .filter(|agent| *agent != Agent::Demo)
        .find(|agent| name.starts_with(agent.word()))
}

/// Whether `program` is warden's own program (its demo agent's).
fn is_warden(program: &str) -> bool {
    let own = std::env::current_exe().ok();
    let named = Path::new(program).file_name().and_then(|n| n.to_str()) == Some("warden");
    named || own.is_some_and(|own| Path::new(program) == own)
}

/// What an agent is started with beyond its command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Arguments appended to its own.
    pub args: Vec<String>,
    /// Environment variables set for it.
    pub env: Vec<(String, String)>,
}

/// How the agent's process is confined, as a quirk needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct Confined<'a> {
    /// Landlock applies (the sandbox is on and the kernel confines).
    pub landlock: bool,
    /// The private temporary directory (`TMPDIR`) the confinement made.
    pub tmp: Option<&'a Path>,
}

/// What `command` gets at its start, confined as `confined` says (nothing
/// for an agent warden does not know, or one that runs unconfined).
pub fn launch(command: &AgentCommand, confined: Confined<'_>) -> Launch {
    if !confined.landlock {
        return Launch::default();
    }
    match known(&command.program, &command.args, &command.cwd) {
        Some(Agent::Claude) => claude::launch(command, confined),
        Some(Agent::Codex) => codex::launch(command),
        Some(_) | None => Launch::default(),
    }
}

/// The lines start-up shows about what [`launch`] will add for `command`
/// under `profile`.
pub fn start_notes(command: &AgentCommand, profile: Option<&Profile>) -> Vec<String> {
    if !confines(profile) {
        return Vec::new();
    }
    match known(&command.program, &command.args, &command.cwd) {
        Some(Agent::Codex) => codex::start_note(command).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// State files in `home` the agent writes, which may not exist yet when it
/// starts: they are made writable, and created before it starts
/// ([`prepare`]), as the sandbox lets nothing new be made in `home`.
pub fn state_files(command: &AgentCommand, home: &Path) -> Vec<PathBuf> {
    match known(&command.program, &command.args, &command.cwd) {
        Some(Agent::Claude) => claude::STATE_FILES.iter().map(|f| home.join(f.0)).collect(),
        _ => Vec::new(),
    }
}

/// Create the state files of [`state_files`] that `profile` lets the agent
/// write and that do not exist yet, each with the content the agent reads
/// as empty; never replacing anything (a file made meanwhile is kept).
pub fn prepare(command: &AgentCommand, profile: &Profile) {
    if profile.mode == SandboxMode::Off {
        return;
    }
    let Some(Agent::Claude) = known(&command.program, &command.args, &command.cwd) else {
        return;
    };
    for path in &profile.writable {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((_, empty)) = claude::STATE_FILES.iter().find(|(file, _)| *file == name) else {
            continue;
        };
        create_new(path, empty);
    }
}

/// Write `content` to a new file at `path` (mode 0600), unless something is
/// there already (a symlink included).
fn create_new(path: &Path, content: &str) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match made {
        Ok(mut file) => {
            if let Err(err) = file.write_all(content.as_bytes()) {
                tracing::warn!(path = %path.display(), "agent state file not written: {err}");
            } else {
                tracing::info!(path = %path.display(), "created the agent's state file");
            }
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => tracing::warn!(path = %path.display(), "agent state file not created: {err}"),
    }
}

/// Whether `profile` confines on this kernel.
fn confines(profile: Option<&Profile>) -> bool {
    profile.is_some_and(|p| p.mode != SandboxMode::Off)
        && matches!(crate::sandbox::kernel_support(), Support::Landlock(_))
}

/// Whether `var` is set for `command`: in its own environment, or in
/// warden's, which it inherits.
fn is_set(command: &AgentCommand, var: &str) -> bool {
    command.env.iter().any(|(k, _)| k == var) || std::env::var_os(var).is_some()
}

#[cfg(test)]
mod tests;

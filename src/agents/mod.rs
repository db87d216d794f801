//! What the agents warden knows need to run under its sandbox, each in a
//! file of its own (`claude.rs`, `codex.rs`, `gemini.rs`, ...), chosen once
//! from the name the agent's command line gives it ([`known`]): what the
//! sandbox gives it ([`Sandbox`]: its state, its variables, its sign-in,
//! its config that runs programs), the state files it writes in the home
//! directory before they exist, the environment and arguments it is
//! started with, and what start-up says about them. Who the agent is
//! ([`Agent`], [`identify`] at `initialize`) and how warden reads what it
//! sends (its modes, its `_meta`, its replay) are in `quirks.rs`, pure.

use std::path::{Path, PathBuf};

use crate::acp::AgentCommand;
use crate::sandbox::{Profile, SandboxMode, Support};

pub mod claude;
pub mod codex;
pub mod demo;
pub mod fast_agent;
pub mod gemini;
pub mod kimi;
pub mod opencode;
pub mod quirks;
pub mod qwen;

pub use quirks::{Agent, from_info};

impl Agent {
    /// The hosts of its model it reaches without asking (the network
    /// gate, issue 35).
    pub fn api_hosts(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => claude::API_HOSTS,
            Agent::Codex => codex::API_HOSTS,
            Agent::Gemini => gemini::API_HOSTS,
            Agent::Qwen => qwen::API_HOSTS,
            Agent::Kimi => kimi::API_HOSTS,
            Agent::OpenCode => opencode::API_HOSTS,
            Agent::FastAgent => fast_agent::API_HOSTS,
            Agent::Demo => demo::API_HOSTS,
        }
    }

    /// What the sandbox gives it ([`Sandbox`]).
    pub fn sandbox(self) -> &'static Sandbox {
        match self {
            Agent::Claude => &claude::SANDBOX,
            Agent::Codex => &codex::SANDBOX,
            Agent::Gemini => &gemini::SANDBOX,
            Agent::Qwen => &qwen::SANDBOX,
            Agent::Kimi => &kimi::SANDBOX,
            Agent::OpenCode => &opencode::SANDBOX,
            Agent::FastAgent => &fast_agent::SANDBOX,
            Agent::Demo => &demo::SANDBOX,
        }
    }
}

/// What the sandbox gives an agent beyond every agent's share, paths
/// relative to the home directory (`sandbox::Profile::new` reads it).
#[derive(Debug, Clone, Copy)]
pub struct Sandbox {
    /// Its state, writable; a trailing `*` stands for every entry of the
    /// home directory whose name starts with what is before it.
    pub state: &'static [&'static str],
    /// Variables that move its state (its own, or warden's it inherits):
    /// where an absolute one points is writable.
    pub state_env: &'static [&'static str],
    /// Its variables of warden's environment (keys, base URLs, switches):
    /// they pass to it only.
    pub env: &'static [&'static str],
    /// Its sign-in files and the config files that hold a key: hidden from
    /// every other agent.
    pub auth: &'static [&'static str],
    /// Its files that make it run a program later (hooks, MCP servers,
    /// plugins, commands), that the kernel keeps read-only to it: only
    /// where it creates nothing new directly in their directory.
    pub code_config: &'static [&'static str],
    /// Its files and directories that make it run a program later
    /// (settings, extensions, plugins, custom tools and commands), in a
    /// directory it writes new files in: copied when it starts, put back
    /// when it exits (`sandbox::guard`).
    pub guarded: &'static [&'static str],
    /// Its settings files that it writes itself, in which only the keys
    /// that run a program ([`CODE_KEYS`]) are put back when it exits.
    pub guarded_keys: &'static [&'static str],
    /// Directories beside its read-only config that it writes directly
    /// in: made when missing, as the directory that holds the config only
    /// lets it write in entries that exist when it starts.
    pub state_subdirs: &'static [&'static str],
    /// Variables that move its files out of the home directory: each
    /// `(VAR, from, to)` says that, where `VAR` holds an absolute path,
    /// the home-relative `from` (and all below it; `""`: the whole home)
    /// is `$VAR/to` instead (`CODEX_HOME`: `.codex` is `$CODEX_HOME`).
    /// Every path above (state, sign-in, read-only and guarded config)
    /// is then kept at both places.
    pub moved_by: &'static [(&'static str, &'static str, &'static str)],
}

/// A table with nothing in it, for the agents that need little.
pub(crate) const EMPTY: Sandbox = Sandbox {
    state: &[],
    state_env: &[],
    env: &[],
    auth: &[],
    code_config: &[],
    guarded: &[],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[],
};

/// Keys of an agent's JSON settings that make it run a program later, at
/// any depth (`mcpServers` at the top of `~/.claude.json` and in each of
/// its `projects`): [`Sandbox::guarded_keys`] files keep their values.
pub const CODE_KEYS: &[&str] = &[
    "mcpServers",
    "hooks",
    "statusLine",
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "enabledMcpjsonServers",
    "enableAllProjectMcpServers",
];

/// The agent `program args` (started in `cwd`) runs, when warden knows it:
/// by the name the command gives the agent (`settings::agent_name_for`: the
/// program's file name, the package a runner runs, the script an
/// interpreter runs or the folder that holds it), which must be one of the
/// agent's own names (`claude-agent-acp`, `codex-acp`, `qwen-code`).
/// Other arguments (a scenario file, a model name) never count, nor a name
/// that only holds an agent's (`foo-claude-bar`).
pub fn known(program: &str, args: &[String], cwd: &Path) -> Option<Agent> {
    let name = crate::settings::agent_name_for(program, args, cwd).to_lowercase();
    if name == "warden" && args.first().is_some_and(|a| a == "demo-agent") {
        return Some(Agent::Demo);
    }
    Agent::ALL
        .into_iter()
        .find(|agent| agent.names().contains(&name.as_str()))
}

/// The agent a chat talks to: what it says it is at `initialize`, else
/// what its command line names (all that is known before).
pub fn identify(command: Option<Agent>, info_name: Option<&str>) -> Option<Agent> {
    info_name.and_then(from_info).or(command)
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
        _ => Launch::default(),
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

//! Making an agent's [`Profile`] from the settings' words and the agent's
//! own tables (`crate::agents::Sandbox`): its state, its sign-in hidden
//! from the others, its config that runs programs read-only or guarded,
//! each at the place a variable may move it to, and the secrets.

use std::path::{Path, PathBuf};

use super::*;

/// What a profile's settings say, before paths are expanded.
#[derive(Debug, Clone, Default)]
pub struct ProfileInput<'a> {
    pub agent: &'a str,
    /// The program and its arguments: the agent they name
    /// (`agents::known`) gets its state, variables and sign-in.
    pub command_line: Vec<&'a str>,
    pub mode: SandboxMode,
    pub when_unavailable: WhenUnavailable,
    pub workspace: Vec<PathBuf>,
    /// `sandbox.writable` of `[sandbox]` and of the agent block (`~` expands).
    pub writable: Vec<String>,
    /// `sandbox.hidden` of both.
    pub hidden: Vec<String>,
    /// warden's own files: settings, decision log, chat records, data dir.
    pub warden_files: Vec<PathBuf>,
    /// The home directory (none: no home-relative paths).
    pub home: Option<PathBuf>,
    /// The agent's own environment variables (its block's `env`).
    pub env: Vec<(String, String)>,
    /// `env_pass` of `[sandbox]` and of the agent block.
    pub env_pass: Vec<String>,
    /// The agent's own cache directory (under warden's state directory).
    pub cache: Option<PathBuf>,
}

/// Where a variable moves the home-relative `rel` (see
/// [`crate::agents::Sandbox::moved_by`]): only an absolute value counts.
fn moved(
    rel: &str,
    moves: &[(&str, &str, &str)],
    var: &dyn Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    let mut at = Vec::new();
    for (name, from, to) in moves {
        let rest = if from.is_empty() {
            Some(rel)
        } else if rel == *from {
            Some("")
        } else {
            rel.strip_prefix(from).and_then(|r| r.strip_prefix('/'))
        };
        let (Some(rest), Some(value)) = (rest, var(name)) else {
            continue;
        };
        let base = PathBuf::from(value);
        if base.is_absolute() {
            // No empty component: `join("")` would end the path in `/`.
            let place = [*to, rest]
                .into_iter()
                .filter(|part| !part.is_empty())
                .fold(base, |path, part| path.join(part));
            if !at.contains(&place) {
                at.push(place);
            }
        }
    }
    at
}

impl Profile {
    /// The profile of `input`: its paths expanded, the known state
    /// directories of the agent its command line names, and the secrets.
    pub fn new(input: &ProfileInput<'_>) -> Profile {
        let home = input.home.as_deref();
        let expand = |p: &str| expand_home(p, home);
        // The agent by the name its command gives it, never by a word of
        // its command line (`foo-claude-bar` is no Claude).
        let agent = input
            .command_line
            .split_first()
            .and_then(|(program, args)| {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                let cwd = input
                    .workspace
                    .first()
                    .map_or(Path::new("/"), PathBuf::as_path);
                crate::agents::known(program, &args, cwd)
            });
        let tables = agent.map(crate::agents::Agent::sandbox);
        let of = |pick: fn(&crate::agents::Sandbox) -> &'static [&'static str]| {
            tables.map(pick).unwrap_or_default().iter().copied()
        };
        let mut writable: Vec<PathBuf> = Vec::new();
        let mut read_only: Vec<PathBuf> = Vec::new();
        let mut state_subdirs: Vec<PathBuf> = Vec::new();
        let mut guarded: Vec<PathBuf> = Vec::new();
        let mut guarded_keys: Vec<PathBuf> = Vec::new();
        let own_var = |var: &str| {
            let own = input.env.iter().rev().find(|(k, _)| k == var);
            own.map(|(_, v)| v.clone())
                .or_else(|| std::env::var(var).ok())
        };
        // Where a home-relative path of an agent's is: in the home, and
        // wherever a variable moves it (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`).
        let placed = |table: &crate::agents::Sandbox, rel: &str| {
            let mut at: Vec<PathBuf> = home.map(|h| h.join(rel)).into_iter().collect();
            at.extend(moved(rel, table.moved_by, &own_var));
            at
        };
        if let Some(table) = tables {
            for rel in table.state {
                match rel.strip_suffix('*') {
                    Some(prefix) => {
                        if let Some(home) = home {
                            writable.extend(prefixed_entries(home, prefix));
                        }
                    }
                    None => writable.extend(placed(table, rel)),
                }
            }
            read_only.extend(table.code_config.iter().flat_map(|r| placed(table, r)));
            guarded.extend(table.guarded.iter().flat_map(|r| placed(table, r)));
            guarded_keys.extend(table.guarded_keys.iter().flat_map(|r| placed(table, r)));
            state_subdirs.extend(table.state_subdirs.iter().flat_map(|r| placed(table, r)));
        }
        writable.extend(input.cache.iter().cloned());
        let mut env_pass: Vec<String> = env::ENV_PASS.iter().map(|p| p.to_string()).collect();
        env_pass.extend(of(|t| t.env).map(str::to_string));
        if agent == Some(crate::agents::Agent::Codex) {
            // codex reads its key from the variable its config names.
            let codex_home = own_var("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(".codex")));
            env_pass.extend(codex_home.iter().flat_map(|h| env::codex_env_keys(h)));
        }
        env_pass.extend(input.env_pass.iter().cloned());
        let moved = of(|t| t.state_env)
            .filter_map(|var| own_var(var).filter(|v| Path::new(v).is_absolute()));
        writable.extend(moved.map(PathBuf::from));
        writable.extend(input.writable.iter().map(|p| expand(p)));
        let mut hidden: Vec<PathBuf> = home
            .map(|home| HIDDEN_IN_HOME.iter().map(|rel| home.join(rel)).collect())
            .unwrap_or_default();
        // Each other agent's sign-in, wherever a variable moved it.
        for other in crate::agents::Agent::ALL {
            if Some(other) != agent {
                let table = other.sandbox();
                hidden.extend(table.auth.iter().flat_map(|r| placed(table, r)));
            }
        }
        hidden.extend(input.warden_files.iter().cloned());
        hidden.extend(input.hidden.iter().map(|p| expand(p)));
        let mut profile = Profile {
            agent: input.agent.to_string(),
            mode: input.mode,
            when_unavailable: input.when_unavailable,
            workspace: input.workspace.clone(),
            writable: dedup(writable),
            hidden: dedup(hidden),
            read_only: dedup(read_only),
            guarded: dedup(guarded),
            guarded_keys: dedup(guarded_keys),
            state_subdirs: dedup(state_subdirs),
            cache: input.cache.clone(),
            env_pass: dedup_words(env_pass),
            network: crate::net::NetworkMode::default(),
            allow_hosts: Vec::new(),
            hold: None,
        };
        // The hosts of its model: known, and named by the variables it gets.
        let mut hosts: Vec<String> = agent
            .map(crate::agents::Agent::api_hosts)
            .unwrap_or_default()
            .iter()
            .map(|h| h.to_string())
            .collect();
        let given: Vec<(String, String)> = env::environment(&profile, std::env::vars_os())
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .chain(input.env.iter().cloned())
            .collect();
        hosts.extend(crate::net::hosts::base_url_hosts(
            given.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
        profile.allow_hosts = dedup_words(hosts);
        profile
    }
}

/// The entries of `dir` whose name starts with `prefix`.
fn prefixed_entries(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return vec![dir.join(prefix)];
    };
    let mut found: Vec<PathBuf> = read
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    if found.is_empty() {
        found.push(dir.join(prefix));
    }
    found.sort();
    found
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;

//! The kernel holds the line: every agent process, and everything it
//! starts, runs confined. This module is platform-neutral: the settings'
//! words ([`SandboxMode`], [`WhenUnavailable`]), what an agent is given
//! ([`Profile`]: the workspace, the writable state directories, the hidden
//! secrets) and the rules that follow from it ([`grants`]: which paths may
//! be read, written or only listed). The kernel side is behind
//! [`Confinement`]: Landlock on Linux (`linux.rs`); elsewhere nothing can
//! confine yet, which is reported as [`SandboxError::Unavailable`].
//!
//! Landlock only allows. Reads are "everything but the secrets", so the
//! rules allow each entry of `/`, and descend into every directory that
//! holds a hidden path (`~`, `~/.config`, ...), allowing each of its other
//! entries; the directory itself is only listable. What is created in such
//! a directory after the agent started is out of reach.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub mod env;
pub mod explain;
pub mod guard;
pub use explain::{Badge, blocked_by, explain_denial, is_told, told, told_terminal};
mod guard_keys;
mod guard_tree;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod self_test;
mod session;
#[cfg(target_os = "linux")]
mod tmpdir;
#[cfg(target_os = "linux")]
mod walls;

#[cfg(test)]
mod tests;

mod loader_env;
mod profile;
pub use profile::ProfileInput;
mod rules;
pub use loader_env::{is_loader_var, strip_loader_env};
pub use rules::{Access, Entry, Grant, Lister, RealFs, grants};

#[cfg(target_os = "linux")]
pub use linux::{Confinement, LoopbackPorts, NetWall, kernel_support};
#[cfg(target_os = "linux")]
pub use self_test::self_test;
pub use session::{own_session, own_session_std};
#[cfg(target_os = "linux")]
pub use walls::{KernelWalls, Namespace, kernel_walls, receive_listeners};

/// `[sandbox] mode` and `[agents.NAME.sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the workspace, the agent's own state and a private
    /// temporary directory; reads everywhere but the secrets.
    #[default]
    WorkspaceWrite,
    /// As `workspace-write`, but the workspace is read-only too (what a
    /// chat in Plan gets).
    ReadOnly,
    /// No confinement: the agent runs as you, with all your rights.
    Off,
}

impl SandboxMode {
    /// The setting's word.
    pub fn word(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }
}

/// `[sandbox] when_unavailable`: what happens where the kernel cannot
/// confine (no Landlock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WhenUnavailable {
    /// The agent does not start; the error names this setting.
    #[default]
    Refuse,
    /// The agent starts unconfined, under a red badge.
    RunUnconfined,
}

/// Secrets, relative to the home directory: never readable, never
/// writable (`sandbox.hidden` adds to them; each agent's sign-in files are
/// hidden from the others too: `agents::Sandbox::auth`).
pub const HIDDEN_IN_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".authinfo",
    ".authinfo.gpg",
    ".git-credentials",
    ".config/git/credentials",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraformrc",
    ".terraform.d/credentials.tfrc.json",
    ".config/rclone",
    ".config/age",
    ".config/sops/age",
    ".age",
    ".s3cfg",
    ".boto",
    ".databrickscfg",
    ".config/containers/auth.json",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".gem/credentials",
    ".local/share/gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".Xauthority",
    ".ICEauthority",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/vivaldi",
    ".config/opera",
    ".config/microsoft-edge",
    "snap/firefox",
    "snap/chromium",
    "snap/brave",
    "snap/slack",
    "snap/discord",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    ".var/app/org.chromium.Chromium",
    ".var/app/com.brave.Browser",
    ".var/app/com.slack.Slack",
    ".var/app/com.discordapp.Discord",
    ".config/Slack",
    ".config/discord",
    ".config/Signal",
];

/// Files of `/dev` an agent may read and write (the rest of `/dev`, raw
/// disks among it, is out of reach). `/dev/pts` is not among them: the
/// agent gets a private one (`walls.rs`), or, where the kernel cannot, the
/// shared one. `/dev/tty` is only ever the agent's own pty: it runs in a
/// session of its own, without warden's terminal.
const DEV_WRITABLE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/shm",
];
/// Files of `/dev` an agent may read.
const DEV_READABLE: &[&str] = &["/dev/random", "/dev/urandom"];

/// What an agent process may touch, before it is turned into rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// The agent's name (for messages).
    pub agent: String,
    /// `workspace-write`, `read-only` or `off`.
    pub mode: SandboxMode,
    /// What to do without Landlock.
    pub when_unavailable: WhenUnavailable,
    /// The session's cwd and the configured roots.
    pub workspace: Vec<PathBuf>,
    /// The agent's state directories and `sandbox.writable` (what does not
    /// exist yet is created when it is a directory of the agent's own).
    pub writable: Vec<PathBuf>,
    /// The secrets and warden's own files (`sandbox.hidden` adds to them).
    pub hidden: Vec<PathBuf>,
    /// The agent's own config that makes it run programs later (hooks,
    /// MCP servers, notify commands): readable, never writable.
    pub read_only: Vec<PathBuf>,
    /// The agent's own config that makes it run programs later, in a
    /// directory it must be able to write new files in: copied when it
    /// starts and put back when it exits ([`guard::Guard`]).
    pub guarded: Vec<PathBuf>,
    /// The agent's own settings files it rewrites itself, whose keys that
    /// run programs (`agents::CODE_KEYS`) are put back when it exits.
    pub guarded_keys: Vec<PathBuf>,
    /// Directories of the agent's state made before it starts, beside its
    /// read-only config (it can write in them, not create new ones there).
    pub state_subdirs: Vec<PathBuf>,
    /// The agent's own cache directory (`XDG_CACHE_HOME` and npm's cache
    /// in it), under warden's state directory: `~/.cache` and `~/.npm`
    /// are read-only to agents.
    pub cache: Option<PathBuf>,
    /// The variables of warden's environment that reach it ([`mod@env`]): the
    /// defaults, its own, `env_pass`.
    pub env_pass: Vec<String>,
    /// `[sandbox] network` (its agent block's wins): how its process tree
    /// reaches the network (issue 35).
    pub network: crate::net::NetworkMode,
    /// The hosts it reaches without asking: its model's (its known API
    /// hosts, the host of each base-URL variable it is given), then
    /// `allow_hosts` of `[sandbox]` and its block, then `--allow-host`.
    pub allow_hosts: Vec<String>,
    /// Tests only, never set from the settings: a file read before the
    /// agent is prepared, so that a FIFO nobody writes yet holds the
    /// preparation as a slow disk would (the preparation runs off the
    /// loop; `tests/it/spawn_off_loop.rs`).
    #[doc(hidden)]
    pub hold: Option<PathBuf>,
}

impl Profile {
    /// The same profile with the workspace read-only (a chat in Plan).
    pub fn read_only(&self) -> Profile {
        let mut profile = self.clone();
        if profile.mode == SandboxMode::WorkspaceWrite {
            profile.mode = SandboxMode::ReadOnly;
        }
        profile
    }

    /// What the footer says about a process confined by this profile.
    pub fn badge(&self) -> Badge {
        match self.mode {
            SandboxMode::WorkspaceWrite => Badge::Confined,
            SandboxMode::ReadOnly => Badge::ReadOnly,
            SandboxMode::Off => Badge::Off,
        }
    }
}

/// The badge of a process confined by `profile` on this kernel: red when
/// it runs unconfined, yellow when its network is open.
pub fn badge_of(profile: &Profile) -> Badge {
    let badge = profile.badge();
    if badge.is_unconfined() {
        badge
    } else if !matches!(kernel_support(), Support::Landlock(_)) {
        Badge::Unconfined
    } else if profile.network == crate::net::NetworkMode::Open || net_wall() == NetKind::Open {
        if badge == Badge::ReadOnly {
            Badge::NetOpenReadOnly
        } else {
            Badge::NetOpen
        }
    } else if open_doors().is_empty() {
        badge
    } else if badge == Badge::ReadOnly {
        Badge::PartialReadOnly
    } else {
        Badge::Partial
    }
}

/// What this kernel cannot close, one line each (`warden sandbox` and the
/// start-up notes say them).
#[cfg(target_os = "linux")]
pub fn open_doors() -> Vec<String> {
    walls::kernel_walls().open_doors()
}

/// Elsewhere nothing confines: the badge says so already.
#[cfg(not(target_os = "linux"))]
pub fn open_doors() -> Vec<String> {
    Vec::new()
}

#[cfg(target_os = "linux")]
fn walls_lines() -> Vec<String> {
    walls::kernel_walls().describe()
}

/// How an agent's network is walled on this kernel.
#[cfg(target_os = "linux")]
pub fn net_wall() -> NetKind {
    walls::kernel_walls().net_kind()
}

/// Nothing walls the network elsewhere.
#[cfg(not(target_os = "linux"))]
pub fn net_wall() -> NetKind {
    NetKind::Open
}

/// How the agent's process tree is kept off the network but for
/// warden's proxy (issue 35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetKind {
    /// A network namespace of its own with only loopback up; the proxy's
    /// listening socket was made inside it: no other door exists.
    Namespace,
    /// Landlock (ABI 4+) allows TCP connect to the proxy's port only, and
    /// seccomp refuses UDP, raw and packet sockets. The narrow door: a
    /// host that listens on the proxy's port number.
    Landlock,
    /// Neither works here: the proxy variables are set, nothing enforces
    /// them ("net open").
    Open,
}

/// What `warden sandbox` says about the network of `profile`.
pub fn network_lines(profile: &Profile) -> Vec<String> {
    let mut out = vec![format!("network: {}", profile.network.word())];
    out.push(match (profile.network, net_wall()) {
        (crate::net::NetworkMode::Open, _) => {
            "network wall: none (network = \"open\"): the agent reaches any host".to_string()
        }
        (_, NetKind::Namespace) => "network wall: a network namespace of its own (only loopback \
             up; its own localhost servers work inside it); the proxy's socket is made inside \
             it: no other way out"
            .to_string(),
        (_, NetKind::Landlock) => "network wall: Landlock allows TCP connect to the proxy's \
             port only, seccomp refuses UDP, raw and packet sockets. OPEN (narrow): a host \
             listening on the proxy's port number is reachable directly"
            .to_string(),
        (_, NetKind::Open) => "OPEN: network wall: none here (no network namespace, no \
             Landlock ABI 4 with seccomp): the proxy variables are set, nothing enforces them"
            .to_string(),
    });
    if profile.network != crate::net::NetworkMode::Open {
        out.push(format!(
            "hosts reached without asking: {}",
            if profile.allow_hosts.is_empty() {
                "none".to_string()
            } else {
                profile.allow_hosts.join(", ")
            }
        ));
        out.push(match profile.network {
            crate::net::NetworkMode::Closed => {
                "other hosts: refused without asking (network = \"closed\")".to_string()
            }
            _ => "other hosts: a card asks (network = \"gated\")".to_string(),
        });
        let services = crate::net::hosts::loopback_services(&profile.allow_hosts);
        if net_wall() == NetKind::Namespace && !services.is_empty() {
            let named: Vec<String> = services.iter().map(|(h, p)| format!("{h}:{p}")).collect();
            out.push(format!(
                "the host's loopback services reached on the agent's own loopback (forwarded): {}",
                named.join(", ")
            ));
        }
        out.extend(crate::net::upstream::own().report());
    }
    out
}

#[cfg(not(target_os = "linux"))]
fn walls_lines() -> Vec<String> {
    Vec::new()
}

/// What to say at start when a workspace holds a hidden path (warden run
/// in the home directory): nothing new can be made directly in it.
pub fn workspace_note(profile: &Profile) -> Option<String> {
    if profile.mode == SandboxMode::Off {
        return None;
    }
    let real = canonical(profile);
    real.workspace.iter().find_map(|w| {
        let inside: Vec<String> = real
            .hidden
            .iter()
            .filter(|h| h.starts_with(w) && *h != w)
            .take(3)
            .map(|h| h.display().to_string())
            .collect();
        (!inside.is_empty()).then(|| {
            format!(
                "the workspace {} holds paths hidden from the agent ({}, ...): under the sandbox \
                 it can write inside the workspace's other entries but create nothing directly \
                 in it; start warden in a project directory (or set [sandbox] mode = \"off\")",
                w.display(),
                inside.join(", ")
            )
        })
    })
}

/// The profile with every path made canonical where it exists (a hidden
/// path that is a symlink is hidden where it leads too), and the agent's
/// own state directories created when missing.
pub fn canonical(profile: &Profile) -> Profile {
    let real = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    let mut hidden = Vec::new();
    for path in &profile.hidden {
        hidden.push(absolute_parent(path));
        if let Ok(target) = path.canonicalize() {
            hidden.push(target);
        }
    }
    let mut read_only = Vec::new();
    for path in &profile.read_only {
        read_only.push(absolute_parent(path));
        if let Ok(target) = path.canonicalize() {
            read_only.push(target);
        }
    }
    if let Some(cache) = &profile.cache {
        for (_, dir) in env::cache_vars(cache) {
            let _ = std::fs::create_dir_all(dir);
        }
    }
    let writable = profile
        .writable
        .iter()
        .filter_map(|p| {
            let made = profile.cache.as_ref() == Some(p);
            if !p.exists() && (made || is_creatable_state(p)) {
                let _ = std::fs::create_dir_all(p);
            }
            p.exists().then(|| real(p))
        })
        .collect();
    for dir in &profile.state_subdirs {
        // Only inside a state directory the agent has.
        if !dir.exists() && dir.parent().is_some_and(Path::is_dir) {
            let _ = std::fs::create_dir(dir);
        }
    }
    Profile {
        workspace: profile.workspace.iter().map(real).collect(),
        writable: dedup(writable),
        hidden: dedup(hidden),
        read_only: dedup(read_only),
        ..profile.clone()
    }
}

/// A missing state directory warden creates for the agent: below a dot
/// directory (`~/.codex`, `~/.local/share/opencode`), never a dot file such
/// as `~/.claude.json`.
fn is_creatable_state(path: &Path) -> bool {
    let dotted = path
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    dotted
        && path
            .file_name()
            .is_some_and(|n| !n.to_string_lossy().contains(".json"))
}

/// `path` with its parent made canonical (the file itself may not exist).
fn absolute_parent(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map_or_else(|_| path.to_path_buf(), |p| p.join(name)),
        _ => path.to_path_buf(),
    }
}

fn dedup_words(mut words: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    words.retain(|w| seen.insert(w.clone()));
    words
}

fn dedup(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// `~/x` -> `HOME/x`.
pub fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (None, Some(home)) if path == "~" => home.to_path_buf(),
        _ => PathBuf::from(path),
    }
}

/// The kernel cannot confine, or the rules could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No Landlock (or not Linux): the setting decides.
    #[error(
        "the sandbox is unavailable: {why}. warden refuses to start the agent `{agent}` \
         unconfined; set `[sandbox] when_unavailable = \"run-unconfined\"` to run it with all \
         your rights, or `mode = \"off\"` in [sandbox] or [agents.{agent}.sandbox]"
    )]
    Unavailable {
        /// The agent.
        agent: String,
        /// Why (kernel version, LSM list).
        why: String,
    },
    /// The ruleset could not be made.
    #[error("could not build the sandbox of `{agent}`: {message}")]
    Rules {
        /// The agent.
        agent: String,
        /// What failed.
        message: String,
    },
    /// The private temporary directory could not be made.
    #[error("could not create the agent's private temporary directory: {0}")]
    TempDir(std::io::Error),
}

/// Where the kernel cannot confine at all (not Linux): an unconfined run,
/// or the refusal, as the profile says.
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
pub use other::{Confinement, kernel_support, self_test};

/// What the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock at this ABI version (warden uses up to 5).
    Landlock(i32),
    /// None, and why.
    Missing(String),
}

/// What `warden sandbox` prints: the profile, the kernel's support and,
/// with `rules`, every rule.
pub fn describe(profile: &Profile, rules: bool) -> Vec<String> {
    let mut out = vec![
        format!("agent: {}", profile.agent),
        format!("mode: {}", profile.mode.word()),
        match kernel_support() {
            Support::Landlock(abi) => format!("kernel: Landlock ABI {abi}"),
            Support::Missing(why) => format!(
                "kernel: no sandbox ({why}); when_unavailable = {}",
                match profile.when_unavailable {
                    WhenUnavailable::Refuse => "refuse: agents do not start",
                    WhenUnavailable::RunUnconfined =>
                        "run-unconfined: agents run with all your rights",
                }
            ),
        },
    ];
    let list = |name: &str, paths: &[PathBuf]| {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        format!(
            "{name}: {}",
            if shown.is_empty() {
                "none".into()
            } else {
                shown.join(", ")
            }
        )
    };
    let real = canonical(profile);
    out.push(list(
        if profile.mode == SandboxMode::WorkspaceWrite {
            "workspace (writable)"
        } else {
            "workspace (read-only)"
        },
        &real.workspace,
    ));
    out.push(list("writable state", &real.writable));
    out.push(
        "writable too: a private temporary directory per process (TMPDIR), /dev/null, /dev/tty (the agent's own pty only), /dev/ptmx and its ptys, /dev/shm and the like"
            .to_string(),
    );
    out.push(list("hidden (neither read nor written)", &real.hidden));
    out.push(list(
        "read-only (its own config that runs programs: hooks, MCP servers)",
        &real.read_only,
    ));
    out.push(list(
        "put back when it exits (its own config that runs programs, in a directory it writes)",
        &profile.guarded,
    ));
    out.push(list(
        "its MCP servers and hooks put back when it exits (the rest of the file is its own)",
        &profile.guarded_keys,
    ));
    out.push(
        "readable: everything else that exists now; what is created later in a directory that holds a hidden path (`~`, `~/.config`) is not"
            .to_string(),
    );
    if let Some(cache) = &profile.cache {
        let vars: Vec<String> = env::cache_vars(cache)
            .iter()
            .map(|(name, dir)| format!("{name}={}", dir.display()))
            .collect();
        out.push(format!(
            "own cache: {} (~/.cache and ~/.npm are read-only)",
            vars.join(", ")
        ));
    }
    out.push(format!(
        "environment passed (from warden's; the agent block's `env` is set too): {}",
        profile.env_pass.join(", ")
    ));
    let withheld = env::withheld(profile);
    out.push(format!(
        "environment withheld: {}",
        if withheld.is_empty() {
            "none".to_string()
        } else {
            withheld.join(", ")
        }
    ));
    if matches!(kernel_support(), Support::Landlock(_)) {
        out.extend(walls_lines().into_iter().map(|l| format!("walls: {l}")));
    }
    out.extend(network_lines(profile));
    if rules {
        for grant in grants(&real, None, &RealFs) {
            out.push(format!("rule: {:?} {}", grant.access, grant.path.display()));
        }
    }
    out
}

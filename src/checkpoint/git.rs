//! The `git` program run against warden's own repository of snapshots,
//! never the user's: its own `GIT_DIR`, index and work tree, no system or
//! user configuration, no hooks, no filters, no line-ending conversion.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::CheckpointError;

/// Configuration given on every command line (`-c`), over an empty
/// configuration: nothing the user set can run a program or change bytes.
const CONFIG: [&str; 17] = [
    "core.looseCompression=1",
    "core.hooksPath=/dev/null",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.symlinks=true",
    "core.filemode=true",
    "core.quotePath=false",
    "core.longpaths=true",
    "core.logAllRefUpdates=false",
    "core.bigFileThreshold=1m",
    "gc.auto=0",
    "commit.gpgSign=false",
    "advice.addEmbeddedRepo=false",
    "protocol.allow=never",
    "submodule.recurse=false",
];

/// Attributes that win over any `.gitattributes` in the workspace: no
/// text conversion, no filter drivers, no encoding changes.
pub(crate) const ATTRIBUTES: &str = "* -text -filter -ident !eol !working-tree-encoding\n";

/// One git invocation's surroundings.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    /// The `git` program, by its absolute path ([`find_git`]).
    pub(crate) program: PathBuf,
    /// The `PATH` git itself runs with: the one `program` was found on.
    pub(crate) path: std::ffi::OsString,
    /// warden's repository (bare).
    pub(crate) git_dir: PathBuf,
    /// A scratch `HOME`, so no user file is read.
    pub(crate) home: PathBuf,
}

/// `untrusted` (the workspace's roots, the agent's writable directories)
/// and the temporary directory, each as given and as it resolves.
fn untrusted_places(untrusted: &[PathBuf]) -> Vec<PathBuf> {
    untrusted
        .iter()
        .chain(std::iter::once(&std::env::temp_dir()))
        .flat_map(|p| [p.clone(), p.canonicalize().unwrap_or_else(|_| p.clone())])
        .collect()
}

/// `PATH`'s directories that no agent can write: absolute ones, none
/// beneath an untrusted place, each as it resolves.
pub(crate) fn trusted_path(path: &std::ffi::OsStr, untrusted: &[PathBuf]) -> Vec<PathBuf> {
    let places = untrusted_places(untrusted);
    let beneath = |dir: &Path| places.iter().any(|u| dir.starts_with(u));
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute() && !beneath(dir))
        .filter_map(|dir| dir.canonicalize().ok())
        .filter(|dir| !beneath(dir))
        .collect()
}

/// The `git` program on `path` (a `PATH` value) outside `untrusted`, by
/// its absolute, resolved path (a `git` that is a symlink into the
/// workspace is refused too), and the `PATH` it was found on. Found once,
/// when a store opens: never again through a `PATH` an agent could write
/// (an activated `.venv/bin` in the workspace, say).
pub(crate) fn find_git(
    path: &std::ffi::OsStr,
    untrusted: &[PathBuf],
) -> Result<(PathBuf, std::ffi::OsString), CheckpointError> {
    use std::os::unix::fs::PermissionsExt as _;
    let dirs = trusted_path(path, untrusted);
    let joined = std::env::join_paths(&dirs).unwrap_or_default();
    let places = untrusted_places(untrusted);
    for dir in &dirs {
        let Ok(program) = dir.join("git").canonicalize() else {
            continue;
        };
        if places.iter().any(|u| program.starts_with(u)) {
            continue;
        }
        let runnable = std::fs::metadata(&program)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if runnable {
            return Ok((program, joined));
        }
    }
    Err(CheckpointError::Git {
        what: "git".into(),
        message: "no git program on PATH outside the workspace and the agent's writable \
                  directories"
            .into(),
    })
}

impl Git {
    /// A command with the isolation applied; `work` is the work tree and
    /// `index` its index file, when the command needs them.
    pub(crate) fn command(&self, work: Option<(&Path, &Path)>, excludes: Option<&Path>) -> Command {
        let mut cmd = Command::new(&self.program);
        // Nothing of the caller's git environment (a hook's GIT_DIR, an
        // alternate object directory) may reach the user's repository.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("GIT_DIR", &self.git_dir)
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_AUTHOR_NAME", "warden")
            .env("GIT_AUTHOR_EMAIL", "warden@localhost")
            .env("GIT_COMMITTER_NAME", "warden")
            .env("GIT_COMMITTER_EMAIL", "warden@localhost")
            .env("LC_ALL", "C");
        for item in CONFIG {
            cmd.arg("-c").arg(item);
        }
        match excludes {
            Some(file) => cmd
                .arg("-c")
                .arg(format!("core.excludesFile={}", file.display())),
            None => cmd.arg("-c").arg("core.excludesFile=/dev/null"),
        };
        match work {
            Some((tree, index)) => {
                cmd.env("GIT_WORK_TREE", tree)
                    .env("GIT_INDEX_FILE", index)
                    .current_dir(tree);
            }
            None => {
                cmd.current_dir(&self.git_dir);
            }
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

/// Run `cmd` with `input` on its stdin; its stdout, or an error with its stderr.
pub(crate) fn run(mut cmd: Command, input: Option<&[u8]>) -> Result<Vec<u8>, CheckpointError> {
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let what = format!(
        "git {}",
        cmd.get_args()
            .filter(|a| !a.to_string_lossy().contains('='))
            .filter(|a| *a != "-c")
            .take(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = cmd.spawn().map_err(|e| CheckpointError::Git {
        what: what.clone(),
        message: e.to_string(),
    })?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || stdin.write_all(&bytes)))
        }
        _ => None,
    };
    let out = child.wait_with_output().map_err(|e| CheckpointError::Git {
        what: what.clone(),
        message: e.to_string(),
    })?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr);
        return Err(CheckpointError::Git {
            what,
            message: message.lines().take(3).collect::<Vec<_>>().join(" / "),
        });
    }
    Ok(out.stdout)
}

/// The first line of `out`, trimmed (an object id).
pub(crate) fn first_line(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

//! The files of a root that a tool runs and git may leave out (the
//! repository's `.git/config` and hooks, ignored config of editors and
//! agents, ignored executables): found on disk for each snapshot.

use std::path::Path;

use super::{Store, is_own, records};
use crate::checkpoint::CheckpointError;
use crate::checkpoint::git;

/// Where a root's `.git/config` and `.git/hooks/` are kept in a snapshot's
/// tree (git takes no path with a `.git` part).
pub(crate) const DOTGIT: &str = ".warden-dotgit";
/// Files a tool runs, looked for in each root at most.
const TOOL_FILES: usize = 2000;

/// A path of a snapshot's tree (root-relative) as on disk: [`DOTGIT`] is `.git`.
pub(crate) fn on_disk(rel: &str) -> String {
    match rel.strip_prefix(DOTGIT) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!(".git{rest}"),
        _ => rel.to_string(),
    }
}

/// The files of `root` that a tool runs and git may leave out: the
/// repository's `.git/config` and `.git/hooks/*`, and `.envrc`, `.vscode/`,
/// `.idea/`, `.husky/`, a virtualenv's `bin/` (an activated one is on the
/// user's `PATH`), `node_modules/.bin/` (regular files: a symlink there is
/// npm's), the agents' workspace config (`agents::quirks::workspace_files`:
/// `.claude/settings.local.json`,
/// `.mcp.json`, ...) (when ignored): (path on disk, path in the tree, x bit). Regular
/// files only, none over `max_size`.
pub(super) fn tool_files(root: &Path, max_size: u64) -> Vec<(String, String, bool)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut out = Vec::new();
    let add = |disk: String, out: &mut Vec<(String, String, bool)>| {
        if out.len() >= TOOL_FILES {
            return;
        }
        if let Ok(meta) = std::fs::symlink_metadata(root.join(&disk))
            && meta.is_file()
            && meta.len() <= max_size
        {
            let repo = match disk.strip_prefix(".git/") {
                Some(rest) => format!("{DOTGIT}/{rest}"),
                None => disk.clone(),
            };
            out.push((disk, repo, meta.permissions().mode() & 0o100 != 0));
        }
    };
    // A `.git` directory (a worktree's `.git` file has no hooks of its own).
    if std::fs::symlink_metadata(root.join(".git")).is_ok_and(|m| m.is_dir()) {
        add(".git/config".into(), &mut out);
        for rel in walk(root, ".git/hooks") {
            add(rel, &mut out);
        }
    }
    add(".envrc".into(), &mut out);
    for file in crate::agents::quirks::workspace_files() {
        add(file.into(), &mut out);
    }
    for dir in [
        ".vscode",
        ".idea",
        ".husky",
        ".venv/bin",
        "venv/bin",
        "node_modules/.bin",
    ]
    .into_iter()
    .chain(crate::agents::quirks::workspace_dirs())
    {
        for rel in walk(root, dir) {
            add(rel, &mut out);
        }
    }
    out
}

/// The files under `root/dir`, as root-relative paths (no symlink
/// followed), at most [`TOOL_FILES`].
fn walk(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_string()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&at)) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= TOOL_FILES {
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{at}/{name}");
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(rel),
                Ok(t) if t.is_file() => out.push(rel),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

impl Store {
    /// The ignored files of root `i` with an executable bit, as
    /// [`tool_files`] lists them (none of `known`): a tool may run them and
    /// git leaves them out. Not those in an ignored directory (a build's
    /// output, listed whole by git), nor warden's own files.
    pub(super) fn ignored_executables(
        &self,
        i: usize,
        max_size: u64,
        known: &[(String, String, bool)],
    ) -> Result<Vec<(String, String, bool)>, CheckpointError> {
        use std::os::unix::fs::PermissionsExt as _;
        // The project's ignore rules only: warden's own files are
        // filtered below (`is_own`).
        let mut cmd = self
            .git
            .command(Some((&self.roots[i], &self.index(i))), None);
        cmd.args([
            "ls-files",
            "-z",
            "-o",
            "-i",
            "--exclude-standard",
            "--directory",
        ]);
        let own = std::fs::read_to_string(self.excludes(i))?;
        let mut out = Vec::new();
        for rel in records(&git::run(cmd, None)?) {
            if known.len() + out.len() >= TOOL_FILES {
                break;
            }
            if rel.ends_with('/') || is_own(&own, &rel) || known.iter().any(|k| k.0 == rel) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.roots[i].join(&rel)) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_file() && meta.len() <= max_size && mode & 0o111 != 0 {
                self.ignored_tools.borrow_mut().insert(format!("{i}/{rel}"));
                out.push((rel.clone(), rel, mode & 0o100 != 0));
            }
        }
        Ok(out)
    }
}

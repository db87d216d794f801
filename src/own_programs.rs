//! The programs warden runs for itself, outside any sandbox (`sh` for the
//! editor, `tmux` for the clipboard): found on a `PATH` with every place an
//! agent can write taken out (the workspace, the agent's writable state,
//! the temporary directory), and run with that `PATH`, so that a `sh`, a
//! `tmux` or an `$EDITOR` an agent planted in an activated `.venv/bin` or
//! `node_modules/.bin` never runs as the user. `git` for checkpoints is
//! found the same way, once per store (`checkpoint::git::find_git`).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The places agents can write, as start-up knew them.
static UNTRUSTED: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Say once, at start, where agents can write (the workspace roots, the
/// writable state of the agent's sandbox); the current directory counts
/// too. Later calls change nothing.
pub fn set_untrusted(mut places: Vec<PathBuf>) {
    places.extend(std::env::current_dir().ok());
    let _ = UNTRUSTED.set(places);
}

/// The places agents can write: what start-up said, else the current
/// directory.
fn untrusted() -> Vec<PathBuf> {
    match UNTRUSTED.get() {
        Some(places) => places.clone(),
        None => std::env::current_dir().ok().into_iter().collect(),
    }
}

/// The program `name` on `PATH` without the places agents can write, by
/// its absolute path, and that `PATH` (for what it runs in turn); `None`
/// when there is none.
pub(crate) fn find(name: &str) -> Option<(PathBuf, OsString)> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_in(name, &path, &untrusted())
}

/// [`find`] on `path` (a `PATH` value) outside `untrusted`.
fn find_in(name: &str, path: &OsStr, untrusted: &[PathBuf]) -> Option<(PathBuf, OsString)> {
    use std::os::unix::fs::PermissionsExt as _;
    let dirs = crate::checkpoint::git::trusted_path(path, untrusted);
    let joined = std::env::join_paths(&dirs).unwrap_or_default();
    let places: Vec<PathBuf> = untrusted
        .iter()
        .cloned()
        .chain(std::iter::once(std::env::temp_dir()))
        .flat_map(|p| [p.canonicalize().unwrap_or_else(|_| p.clone()), p])
        .collect();
    dirs.iter()
        .filter_map(|dir| dir.join(name).canonicalize().ok())
        .filter(|program| !places.iter().any(|u| program.starts_with(u)))
        .find(|program| {
            std::fs::metadata(program)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|program| (program, joined))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32: a `sh` planted in a directory an agent can write, early
    /// on `PATH`, is never the one warden runs, nor is that directory on
    /// the `PATH` warden's program gets.
    #[test]
    fn a_program_planted_where_agents_write_is_not_found() {
        use std::os::unix::fs::PermissionsExt as _;
        let work = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
        let bin = work.path().join(".venv/bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let planted = bin.join("sh");
        std::fs::write(&planted, "#!/bin/sh\necho planted\n").expect("write");
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let path =
            std::env::join_paths([bin.clone(), "/usr/bin".into(), "/bin".into()]).expect("join");
        let untrusted = [work.path().to_path_buf()];
        let (program, on) = find_in("sh", &path, &untrusted).expect("a sh outside");
        assert!(!program.starts_with(work.path()), "{}", program.display());
        assert!(!std::env::split_paths(&on).any(|d| d.starts_with(work.path())));
        // Not planted anywhere else: nothing found, never the planted one.
        assert_eq!(
            find_in(
                "sh",
                &std::env::join_paths([&bin]).expect("join"),
                &untrusted
            ),
            None
        );
        // A trusted directory's symlink into the workspace is refused too.
        let trusted = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
        std::os::unix::fs::symlink(&planted, trusted.path().join("tmux")).expect("symlink");
        let path = std::env::join_paths([trusted.path()]).expect("join");
        assert_eq!(find_in("tmux", &path, &untrusted), None);
    }
}

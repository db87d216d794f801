//! The programs warden runs for itself outside the sandbox (the editor's
//! `sh` and the editor it names, `tmux` for the clipboard), found as
//! checkpoints find `git`: on a `PATH` without the workspaces and the
//! agents' writable directories, by an absolute, resolved path beneath
//! none of them. An agent that plants `sh` in an activated `.venv/bin`,
//! or in a directory of its own early on `PATH`, never has it run
//! unconfined.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::Mutex;

/// The places agents may write, gathered as chats start.
static UNTRUSTED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// No program warden runs for itself is found beneath `places` (a chat's
/// roots and its agent's writable directories) from now on.
pub(crate) fn distrust(places: impl IntoIterator<Item = PathBuf>) {
    if let Ok(mut list) = UNTRUSTED.lock() {
        for place in places {
            if !list.contains(&place) {
                list.push(place);
            }
        }
    }
}

/// The places no program warden runs for itself may come from.
pub(crate) fn untrusted() -> Vec<PathBuf> {
    UNTRUSTED.lock().map(|l| l.clone()).unwrap_or_default()
}

/// `program` on `path` (a `PATH` value) outside `untrusted` (and the
/// temporary directory), by its absolute, resolved path, with the `PATH`
/// of the trusted directories that the program should run with. `None`:
/// there is none.
pub(crate) fn find_on(
    program: &str,
    path: &OsStr,
    untrusted: &[PathBuf],
) -> Option<(PathBuf, OsString)> {
    use std::os::unix::fs::PermissionsExt as _;
    let dirs = crate::checkpoint::trusted_path(path, untrusted);
    let joined = std::env::join_paths(&dirs).unwrap_or_default();
    dirs.iter().find_map(|dir| {
        let found = dir.join(program).canonicalize().ok()?;
        // A link out of a trusted directory into an untrusted one.
        let parent = found.parent()?.as_os_str();
        if crate::checkpoint::trusted_path(parent, untrusted).is_empty() {
            return None;
        }
        let runnable = std::fs::metadata(&found)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        runnable.then(|| (found, joined.clone()))
    })
}

/// [`find_on`] warden's own `PATH` outside every place distrusted so far;
/// the error to show when there is none.
pub(crate) fn find(program: &str) -> Result<(PathBuf, OsString), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_on(program, &path, &untrusted()).ok_or_else(|| {
        format!("no `{program}` on PATH outside the workspace and the agent's writable directories")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn plant(dir: &std::path::Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_program_planted_in_an_untrusted_dir_early_on_path_is_passed_over() {
        let agent = tempfile::tempdir().unwrap();
        let planted = plant(agent.path(), "sh");
        let path =
            std::env::join_paths([agent.path(), "/usr/bin".as_ref(), "/bin".as_ref()]).unwrap();
        let untrusted = [agent.path().to_path_buf()];
        let (found, trusted) = find_on("sh", &path, &untrusted).unwrap();
        assert_ne!(found, planted.canonicalize().unwrap());
        assert!(!std::env::split_paths(&trusted).any(|d| d.starts_with(agent.path())));
        // With only the planted directory on PATH there is nothing to run.
        assert_eq!(find_on("sh", agent.path().as_os_str(), &untrusted), None);
    }

    #[test]
    fn a_link_from_a_trusted_dir_into_an_untrusted_one_is_refused() {
        // The temporary directory is never trusted, so the trusted side
        // lives in the build's target directory, when that is elsewhere.
        let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let tmp = std::env::temp_dir().canonicalize().unwrap();
        if target.canonicalize().map_or(true, |t| t.starts_with(&tmp)) {
            eprintln!("skipped: the target directory is inside the temporary directory");
            return;
        }
        let agent = tempfile::tempdir_in(&target).unwrap();
        let user = tempfile::tempdir_in(&target).unwrap();
        plant(agent.path(), "tmux");
        let real = plant(user.path(), "tmux");
        let path = std::env::join_paths([agent.path(), user.path()]).unwrap();
        let untrusted = [agent.path().to_path_buf()];
        let (found, _) = find_on("tmux", &path, &untrusted).unwrap();
        assert_eq!(found, real.canonicalize().unwrap());
        std::fs::remove_file(&real).unwrap();
        std::os::unix::fs::symlink(agent.path().join("tmux"), &real).unwrap();
        assert_eq!(find_on("tmux", &path, &untrusted), None);
    }
}

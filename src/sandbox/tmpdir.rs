//! Private temporary directories (`$TMPDIR/warden-<agent>-<id>`), each
//! locked (`flock` on the directory) by the warden that made it for as
//! long as it lives. A warden that was killed leaves its directories
//! behind, unlocked: the next confinement any warden prepares removes
//! every such directory of this user whose lock it can take.

use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

/// The names' start.
const PREFIX: &str = "warden-";

/// Hex digits of a name's id. 16, where wardens before the lock used 12:
/// a sweep never touches the directory of an older warden still running
/// (it holds no lock).
const ID_DIGITS: usize = 16;

/// A private temporary directory, removed when dropped.
#[derive(Debug)]
pub(super) struct PrivateTmp {
    path: PathBuf,
    /// The open directory, locked.
    _lock: OwnedFd,
}

impl PrivateTmp {
    /// A fresh directory only this user can enter, under warden's temp dir,
    /// for the agent `agent`.
    pub(super) fn new(agent: &str) -> std::io::Result<PrivateTmp> {
        Self::new_in(&std::env::temp_dir(), agent)
    }

    pub(super) fn new_in(parent: &Path, agent: &str) -> std::io::Result<PrivateTmp> {
        let word: String = agent
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(32)
            .collect();
        // A sweep may take the lock of a directory just made, before its
        // maker does, and remove it: then make another.
        let mut last = None;
        for _ in 0..8 {
            let path = parent.join(format!(
                "{PREFIX}{word}-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..ID_DIGITS]
            ));
            std::fs::DirBuilder::new().mode(0o700).create(&path)?;
            match lock(&path, false) {
                Ok(Some(fd)) if same(&path, &fd) => return Ok(PrivateTmp { path, _lock: fd }),
                Ok(_) => last = None,
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("a sweep kept taking the new directory")))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_dir_all(&self.path) {
            tracing::debug!(tmp = %self.path.display(), "private temporary directory not removed: {err}");
        }
    }
}

/// Open `dir` (not through a symlink) and take its lock; `None` when
/// another holds it (with `wait`, wait for it).
pub(super) fn lock(dir: &Path, wait: bool) -> std::io::Result<Option<OwnedFd>> {
    use rustix::fs::{FlockOperation, Mode, OFlags};
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let op = if wait {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::NonBlockingLockExclusive
    };
    match rustix::fs::flock(fd.as_fd(), op) {
        Ok(()) => Ok(Some(fd)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Whether `path` is still the directory `fd` holds.
pub(super) fn same(path: &Path, fd: &OwnedFd) -> bool {
    match (std::fs::symlink_metadata(path), rustix::fs::fstat(fd)) {
        (Ok(meta), Ok(st)) => meta.ino() == st.st_ino && meta.dev() == st.st_dev,
        _ => false,
    }
}

/// Whether `name` is one [`PrivateTmp::new`] makes: `warden-WORD-` and
/// [`ID_DIGITS`] hex digits (nothing else of the user's named `warden-*`
/// is touched).
fn is_private_name(name: &str) -> bool {
    let Some((word, id)) = name
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.rsplit_once('-'))
    else {
        return false;
    };
    id.len() == ID_DIGITS
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Remove this user's private directories under `parent` that no living
/// warden holds; what was removed.
pub(super) fn sweep(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    // SAFETY: a plain query.
    let uid = unsafe { libc::geteuid() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        if !is_private_name(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let Ok(Some(fd)) = lock(&path, false) else {
            continue;
        };
        if same(&path, &fd) && std::fs::remove_dir_all(&path).is_ok() {
            tracing::info!(tmp = %path.display(), "removed a private temporary directory left by a warden that was killed");
            removed.push(path);
        }
    }
    removed
}

/// [`sweep`] of warden's temp dir, once per process.
pub(super) fn sweep_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        sweep(&std::env::temp_dir());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_removes_only_directories_no_living_warden_holds() {
        let parent = tempfile::tempdir().unwrap();
        let live = PrivateTmp::new_in(parent.path(), "codex").unwrap();
        std::fs::write(live.path().join("f"), "x").unwrap();
        // What a killed warden leaves: the directory, nobody holding it.
        let dead = parent.path().join("warden-claude-0123456789abcdef");
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        std::fs::write(dead.join("sub/f"), "x").unwrap();
        let other = parent.path().join("not-warden");
        std::fs::create_dir(&other).unwrap();
        // Named like warden's, but not one of its private directories.
        let lookalike = parent.path().join("warden-build");
        std::fs::create_dir(&lookalike).unwrap();
        // An older warden's (no lock): it may still be running.
        let older = parent.path().join("warden-claude-0123456789ab");
        std::fs::create_dir(&older).unwrap();
        let removed = sweep(parent.path());
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(live.path().join("f").exists(), "a living warden's stays");
        assert!(other.exists());
        assert!(lookalike.exists());
        assert!(older.exists());
        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists(), "dropped: removed");
    }

    #[test]
    fn a_directory_held_by_another_process_is_kept() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("warden-gemini-aaaaaaaaaaaaaaaa");
        std::fs::create_dir(&dir).unwrap();
        // Another process (a child holding the lock) stands for a living warden.
        // (`-o`: `flock` holds the lock itself, not the `sleep` it runs.)
        let mut holder = std::process::Command::new("flock")
            .arg("-o")
            .arg(&dir)
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Probed from another process: a lock this test took itself, even
        // for a moment, would stay held by any child another test forks
        // meanwhile (its copy of the descriptor, until it `exec`s).
        let free = || {
            std::process::Command::new("flock")
                .args(["-n".as_ref(), dir.as_os_str(), "true".as_ref()])
                .status()
                .unwrap()
                .success()
        };
        while free() {
            assert!(std::time::Instant::now() < deadline, "flock never took it");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(sweep(parent.path()).is_empty());
        assert!(dir.exists());
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert_eq!(sweep(parent.path()), vec![dir.clone()]);
    }
}

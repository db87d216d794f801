//! The file side of a settings write: the sidecar lock, reading, and the
//! atomic replace.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::edit::WriteError;

/// How long a write waits for another warden's write to finish (one takes
/// milliseconds; this only guards against a stuck process).
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The file a settings path names, with symlinks followed, so that the
/// replace writes the link's target and a linked dotfile stays linked.
pub(super) fn resolve(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&current) {
            Ok(target) => {
                current = match current.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Err(_) => break,
        }
    }
    current
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// `config.toml` -> `config.toml.lock` (or another suffix), same directory.
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    parent_dir(path).join(name)
}

fn io_error(path: &Path, what: &str, err: &io::Error) -> WriteError {
    WriteError::Io {
        path: path.to_path_buf(),
        message: format!("{what}: {err}"),
    }
}

/// Create the directory the file goes in, if missing.
pub(super) fn create_parent(path: &Path) -> Result<(), WriteError> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir).map_err(|err| io_error(dir, "cannot create the directory", &err))
}

/// The file's text; `None` when it does not exist.
pub(super) fn read(path: &Path) -> Result<Option<String>, WriteError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_error(path, "cannot read the file", &err)),
    }
}

/// An exclusive `flock` on `<config>.lock`, held until dropped. The lock is
/// on a sidecar file because the settings file itself is replaced by a
/// rename, and a lock on the replaced file would lock nothing.
#[derive(Debug)]
pub(super) struct Lock {
    _file: File,
}

impl Lock {
    pub(super) fn acquire(target: &Path) -> Result<Lock, WriteError> {
        let path = sidecar(target, ".lock");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|err| io_error(&path, "cannot open the lock file", &err))?;
        let start = Instant::now();
        loop {
            // SAFETY: flock has no memory-safety preconditions; the
            // descriptor stays open (owned by `file`) for the call.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(Lock { _file: file });
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                io::ErrorKind::WouldBlock => {
                    return Err(WriteError::Io {
                        path,
                        message: format!(
                            "another warden has held the lock for {}s",
                            LOCK_WAIT.as_secs()
                        ),
                    });
                }
                _ => return Err(io_error(&path, "cannot lock", &err)),
            }
        }
    }
}

/// Whether warden must leave the file alone because the user made it
/// read-only: no write permission bit at all (`chmod 0444`, which root's
/// rename would otherwise ignore), or no write access for this user.
pub(super) fn read_only(target: &Path) -> bool {
    let Ok(meta) = fs::metadata(target) else {
        return false;
    };
    if meta.permissions().mode() & 0o222 == 0 {
        return true;
    }
    let Ok(c_path) = std::ffi::CString::new(target.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string for the call.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) != 0 }
}

/// Temporary files of earlier writes older than this are removed even when
/// their writer's pid is in use again.
const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Remove temporary files that earlier writes left behind (a writer killed
/// between creating its temporary file and the rename). Called under the
/// lock: every writer creates its temporary file only while it holds the
/// lock, so none found now belongs to a write in progress. Even so, a file
/// is removed only when the pid in its name is not running, or the file is
/// older than [`STALE_AFTER`]; failures are ignored (the next write retries).
pub(super) fn remove_stale_temps(target: &Path) {
    let dir = parent_dir(target);
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(middle) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        // `<pid>.<counter>`.
        let Some(pid) = middle
            .split_once('.')
            .filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
            .filter(|pid| *pid > 0)
        else {
            continue;
        };
        let old = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old || !pid_running(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this pid exists (zombies included).
fn pid_running(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Replace the file's contents atomically: write a temporary file in the
/// same directory (with the old file's permissions, or owner-only for a new
/// file), flush and sync it, rename it over the file, then sync the
/// directory. Any failure before the rename leaves the old file as it was.
pub(super) fn replace(target: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mode = fs::metadata(target)
        .ok()
        .map(|meta| meta.permissions().mode() & 0o7777);
    let (temp, file) = create_temp(target)?;
    let written = write_temp(file, &temp, bytes, mode).and_then(|()| {
        fs::rename(&temp, target).map_err(|err| {
            io_error(
                target,
                &format!("cannot rename {} over the file", temp.display()),
                &err,
            )
        })
    });
    if let Err(err) = written {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    let dir = parent_dir(target);
    if let Err(err) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::warn!(
            "settings saved, but syncing {} failed: {err}",
            dir.display()
        );
    }
    Ok(())
}

fn create_temp(target: &Path) -> Result<(PathBuf, File), WriteError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = parent_dir(target);
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => {
                return Err(io_error(dir, "cannot create a temporary file", &err));
            }
        }
    }
}

fn write_temp(
    mut file: File,
    temp: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<(), WriteError> {
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(|err| io_error(temp, "cannot write the temporary file", &err))?;
    if let Some(mode) = mode {
        file.set_permissions(Permissions::from_mode(mode))
            .map_err(|err| io_error(temp, "cannot set the permissions", &err))?;
    }
    file.sync_all()
        .map_err(|err| io_error(temp, "cannot sync the temporary file", &err))?;
    before_rename().map_err(|err| io_error(temp, "interrupted before the rename", &err))
}

#[cfg(test)]
thread_local! {
    /// Tests set this to make the write fail after the temporary file is
    /// complete and before the rename (a crash at the worst moment).
    pub(super) static FAIL_BEFORE_RENAME: std::cell::Cell<bool> =
        const { std::cell::Cell::new(false) };
}

fn before_rename() -> io::Result<()> {
    #[cfg(test)]
    if FAIL_BEFORE_RENAME.with(std::cell::Cell::get) {
        return Err(io::Error::other("simulated failure"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_symlinks_and_keeps_plain_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.toml");
        fs::write(&real, "").expect("write");
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink("real.toml", &link).expect("symlink");
        assert_eq!(resolve(&link), real);
        assert_eq!(resolve(&real), real);
        let missing = dir.path().join("none.toml");
        assert_eq!(resolve(&missing), missing);
        assert_eq!(
            sidecar(Path::new("config.toml"), ".lock"),
            Path::new("./config.toml.lock")
        );
    }
}

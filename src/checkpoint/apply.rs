//! A restore's writes to the workspace, by warden itself, each beneath a
//! descriptor of its root (`openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`, `client::beneath`): a directory swapped for a
//! symlink (before or during the restore, by `RENAME_EXCHANGE` or
//! otherwise) fails the open, so nothing is ever written, renamed or
//! removed outside the workspace. git only reads (the snapshots' blobs);
//! it never writes a file of the workspace.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::CheckpointError;
use crate::client::beneath;

/// What a restore does to one path of a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Remove the file or symlink (its directories go when left empty).
    Remove(PathBuf),
    /// Put a regular file (`exec`: with the x bits) with these bytes.
    File {
        rel: PathBuf,
        exec: bool,
        bytes: Vec<u8>,
    },
    /// Put a symlink to `target` (the link itself, never followed).
    Symlink { rel: PathBuf, target: Vec<u8> },
}

impl Edit {
    fn rel(&self) -> &Path {
        match self {
            Edit::Remove(rel) | Edit::File { rel, .. } | Edit::Symlink { rel, .. } => rel,
        }
    }
}

/// Why a write was refused: the message the user reads.
fn refused(root: &Path, rel: &Path, err: &std::io::Error) -> CheckpointError {
    let why = match Errno::from_io_error(err) {
        Some(Errno::LOOP) | Some(Errno::XDEV) | Some(Errno::NOTDIR) => {
            "a directory on its way is a symlink or not a directory (swapped in?)"
        }
        _ => "it could not be written",
    };
    CheckpointError::Restore(format!(
        "{} in {}: {why} ({err}); the restore stopped there, nothing was written outside the \
         workspace",
        rel.display(),
        root.display()
    ))
}

/// Apply `edits` beneath `root` (absolute, canonical): removals first (so
/// that a file may take the place of a directory), then the files. Every
/// directory on the way is checked before anything is written; a check
/// that fails, or a directory swapped meanwhile, stops the restore with a
/// clear error.
pub(crate) fn apply(root: &Path, edits: &[Edit]) -> Result<(), CheckpointError> {
    let root_fd = beneath::open_dir(root).map_err(|e| refused(root, Path::new("."), &e))?;
    // First every directory that exists on the way must be a plain one.
    // (A file where a directory goes is no danger: it is removed first, or
    // the write fails.)
    for edit in edits {
        let parent = edit.rel().parent().unwrap_or(Path::new(""));
        match existing_dir(root_fd.as_fd(), parent) {
            Err(err) if Errno::from_io_error(&err) != Some(Errno::NOTDIR) => {
                return Err(refused(root, edit.rel(), &err));
            }
            _ => {}
        }
    }
    for edit in edits.iter().filter(|e| matches!(e, Edit::Remove(_))) {
        remove(root_fd.as_fd(), edit.rel()).map_err(|e| refused(root, edit.rel(), &e))?;
    }
    for (n, edit) in edits.iter().enumerate() {
        put(root_fd.as_fd(), edit, n).map_err(|e| refused(root, edit.rel(), &e))?;
    }
    Ok(())
}

/// The directory `rel` under `root`, if there (`None`: some part is missing).
fn existing_dir(root: BorrowedFd<'_>, rel: &Path) -> std::io::Result<Option<OwnedFd>> {
    match beneath::open_subdir(root, rel) {
        Ok(fd) => Ok(Some(fd)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// The parent directory of `rel`, made when missing, and `rel`'s name.
fn make_parent<'a>(root: BorrowedFd<'_>, rel: &'a Path) -> std::io::Result<(OwnedFd, &'a OsStr)> {
    let name = rel
        .file_name()
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let mut dir = beneath::open_subdir(root, Path::new(""))?;
    for part in rel.parent().into_iter().flat_map(Path::iter) {
        let next = match beneath::open_subdir(dir.as_fd(), Path::new(part)) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                match rustix::fs::mkdirat(dir.as_fd(), part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(err) => return Err(err.into()),
                }
                beneath::open_subdir(dir.as_fd(), Path::new(part))?
            }
            other => other?,
        };
        dir = next;
    }
    Ok((dir, name))
}

fn remove(root: BorrowedFd<'_>, rel: &Path) -> std::io::Result<()> {
    let Some(name) = rel.file_name() else {
        return Ok(());
    };
    let parent = rel.parent().unwrap_or(Path::new(""));
    let Some(dir) = existing_dir(root, parent)? else {
        return Ok(());
    };
    match rustix::fs::unlinkat(dir.as_fd(), name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(err) => return Err(err.into()),
    }
    // Directories the removal left empty go too, up to the root.
    let mut at = parent;
    while let (Some(up), Some(name)) = (at.parent(), at.file_name()) {
        let Ok(Some(dir)) = existing_dir(root, up) else {
            break;
        };
        if rustix::fs::unlinkat(dir.as_fd(), name, AtFlags::REMOVEDIR).is_err() {
            break;
        }
        at = up;
    }
    Ok(())
}

fn put(root: BorrowedFd<'_>, edit: &Edit, n: usize) -> std::io::Result<()> {
    if matches!(edit, Edit::Remove(_)) {
        return Ok(());
    }
    let (dir, name) = make_parent(root, edit.rel())?;
    // Written beside under a name of its own, then renamed over: a
    // symlink in the file's place is replaced, never followed.
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".warden-{}-{n}", std::process::id()));
    let _ = rustix::fs::unlinkat(dir.as_fd(), temp.as_os_str(), AtFlags::empty());
    let written = (|| {
        match edit {
            Edit::File { exec, bytes, .. } => {
                let mode = if *exec { 0o777 } else { 0o666 };
                let fd = rustix::fs::openat(
                    dir.as_fd(),
                    temp.as_os_str(),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(mode),
                )?;
                std::fs::File::from(fd).write_all(bytes)?;
            }
            Edit::Symlink { target, .. } => {
                rustix::fs::symlinkat(target.as_slice(), dir.as_fd(), temp.as_os_str())?;
            }
            Edit::Remove(_) => {}
        }
        rustix::fs::renameat(dir.as_fd(), temp.as_os_str(), dir.as_fd(), name)?;
        Ok::<_, std::io::Error>(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir.as_fd(), temp.as_os_str(), AtFlags::empty());
    }
    written
}

//! Text files on the agent's behalf: path resolution against the chat's
//! roots, reading with `line`/`limit`, and atomic writes that keep the
//! file's permissions.
//!
//! [`resolve`] gives the canonical path the policy decides on; the IO then
//! opens exactly that path, from its root down, without following any
//! symlink (module `beneath`), so a directory swapped for a symlink between
//! the check and the IO makes the call fail instead of reaching elsewhere.
//! warden's own files ([`Protected`]) are refused whatever the roots say,
//! by path and by identity (device and inode, which catches hard links).
//!
//! Everything here is synchronous and does blocking IO on the calling
//! thread; files are small and local, callers that care may wrap a call in
//! `spawn_blocking`.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::beneath;

#[path = "fs_walk.rs"]
mod walk;

use walk::is_process_relative;
pub(crate) use walk::normalize;
pub use walk::{lenient_readings, resolve, resolve_lenient};

/// Why a file request failed. The message is shown to the agent (as the
/// JSON-RPC error) and to the user.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The ACP spec requires absolute paths; a relative one has no meaning
    /// for the client, whose working directory is not the agent's.
    #[error("{} is not an absolute path (the protocol requires absolute paths)", .path.display())]
    NotAbsolute {
        /// The path as the agent sent it.
        path: PathBuf,
    },
    /// After resolving `..` and symlinks the path is not inside the chat's
    /// working directory or any extra root from the settings.
    #[error(
        "{} is outside the allowed roots ({}) after resolving `..` and symlinks",
        .path.display(),
        list_roots(.roots)
    )]
    OutsideRoots {
        /// The path as the agent sent it.
        path: PathBuf,
        /// The roots it was checked against.
        roots: Vec<PathBuf>,
    },
    /// The file to read does not exist.
    #[error("{} does not exist", .path.display())]
    NotFound {
        /// The missing path.
        path: PathBuf,
    },
    /// A directory cannot be read or written as a text file.
    #[error("{} is a directory, not a file", .path.display())]
    IsDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// A FIFO, socket or device: reading one could block forever or never
    /// end, and it holds no text to edit.
    #[error("{} is not a regular file", .path.display())]
    NotRegularFile {
        /// The special file.
        path: PathBuf,
    },
    /// A symlink whose target does not exist: writing through it would
    /// create a file wherever it points, which cannot be checked.
    #[error("{} is a symlink to a missing target", .path.display())]
    BrokenSymlink {
        /// The symlink.
        path: PathBuf,
    },
    /// `..` follows a symlink and the path leads elsewhere read lexically
    /// than for the kernel: warden cannot tell which file the agent means.
    #[error(
        "{} has `..` after a symlink, so it names one file read as written and another \
         with `..` applied first; send the path without `..`",
        .path.display()
    )]
    Ambiguous {
        /// The path as the agent sent it.
        path: PathBuf,
    },
    /// Larger than [`MAX_TEXT`]: its text could not be sent in one
    /// message, and reading it whole could exhaust warden's memory.
    #[error("{} is larger than {} MiB", .path.display(), MAX_TEXT >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not UTF-8 text; the protocol only carries text.
    #[error("{} is not valid UTF-8 text", .path.display())]
    NotUtf8 {
        /// The binary (or otherwise encoded) file.
        path: PathBuf,
    },
    /// The path changed between the check and the IO: a symlink appeared
    /// where the resolved path had a directory or a file. Nothing was read
    /// or written.
    #[error(
        "{} changed while it was being opened (a symlink appeared on the way); nothing was read or written",
        .path.display()
    )]
    Changed {
        /// The resolved path.
        path: PathBuf,
    },
    /// One of warden's own files (settings, decision log, chat records...):
    /// the agent's file calls never touch them, whatever the roots say.
    #[error("{} is {what}: the agent's file calls may not {access} it", .path.display())]
    Protected {
        /// The path as resolved.
        path: PathBuf,
        /// What the file is ("warden's settings file").
        what: String,
        /// `read` or `write`.
        access: Access,
    },
    /// Any other IO failure (permissions, a full disk, a file where a
    /// directory was expected...).
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path the failing operation was about.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn list_roots(roots: &[PathBuf]) -> String {
    if roots.is_empty() {
        return "none".to_owned();
    }
    let mut out = String::new();
    for (i, root) in roots.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}", root.display());
    }
    out
}

/// Whether a call reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `fs/read_text_file` (and a diff preview).
    Read,
    /// `fs/write_text_file`.
    Write,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
        })
    }
}

/// A file's identity: device and inode. Two names with the same identity
/// are the same file (a hard link, a bind mount, a symlink followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    fn of_stat(stat: &rustix::fs::Stat) -> FileId {
        FileId {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
        }
    }

    fn of_fd(fd: &OwnedFd) -> io::Result<FileId> {
        Ok(FileId::of_stat(&rustix::fs::fstat(fd)?))
    }

    /// The identity of what `path` names (symlinks followed), if it exists.
    fn of_path(path: &Path) -> Option<FileId> {
        rustix::fs::stat(path).ok().map(|s| FileId::of_stat(&s))
    }
}

/// warden's own files, which the agent's file calls never read or write
/// whatever the roots say: the settings file in use with its lock and
/// temporary files (neither read nor written), and files and directories
/// that are never written (the decision log, warden's log, the chat
/// records, the demo agent's state, warden's data directory).
///
/// Checked on the resolved path (so a symlink to one is refused) and, once
/// opened, on the identity of the file and its directory (so a hard link to
/// one, or another path to the same directory, is refused too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    settings: Vec<PathBuf>,
    files: Vec<(PathBuf, String)>,
    trees: Vec<(PathBuf, String)>,
}

impl Protected {
    /// Nothing protected.
    pub fn new() -> Self {
        Self::default()
    }

    /// A settings file (the one in use, the default one): it,
    /// `<name>.lock` and `.<name>.*.tmp` next to it are neither read nor
    /// written.
    #[must_use]
    pub(crate) fn settings(mut self, path: &Path) -> Self {
        if !self.settings.iter().any(|p| p == path) {
            self.settings.push(path.to_path_buf());
        }
        self
    }

    /// A file that is never written; `what` names it in the refusal.
    #[must_use]
    pub(crate) fn file(mut self, path: &Path, what: &str) -> Self {
        self.files.push((path.to_path_buf(), what.to_string()));
        self
    }

    /// A directory nothing is written under; `what` names it in the refusal.
    #[must_use]
    pub(crate) fn tree(mut self, path: &Path, what: &str) -> Self {
        self.trees.push((path.to_path_buf(), what.to_string()));
        self
    }

    /// Every protected file and directory as given: the settings files
    /// with their locks, the files, the trees.
    pub(crate) fn places(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for path in &self.settings {
            out.push(path.clone());
            if let Some(name) = path.file_name() {
                let mut lock = name.to_os_string();
                lock.push(".lock");
                out.push(path.with_file_name(lock));
            }
        }
        out.extend(self.files.iter().map(|(p, _)| p.clone()));
        out.extend(self.trees.iter().map(|(p, _)| p.clone()));
        out
    }

    /// The settings file's directory and name, through symlinks; both the
    /// path as given and as resolved.
    fn settings_places(&self) -> Vec<(PathBuf, OsString)> {
        let mut out = Vec::new();
        let candidates = self.settings.iter().flat_map(|path| lenient_readings(path));
        for candidate in candidates {
            if let (Some(dir), Some(name)) = (candidate.parent(), candidate.file_name()) {
                let place = (resolve_lenient(dir), name.to_os_string());
                if !out.contains(&place) {
                    out.push(place);
                }
            }
        }
        out
    }

    /// What `name` is when it is the settings file `settings`, its lock or
    /// one of its temporary files (`.config.toml.<pid>.<n>.tmp`).
    fn settings_family(settings: &OsStr, name: &OsStr) -> Option<&'static str> {
        if name == settings {
            return Some("warden's settings file");
        }
        let (settings, name) = (settings.to_str()?, name.to_str()?);
        if name == format!("{settings}.lock") {
            Some("the lock file of warden's settings")
        } else if name.starts_with(&format!(".{settings}.")) && name.ends_with(".tmp") {
            Some("a temporary file of warden's settings")
        } else {
            None
        }
    }

    /// Refuse `access` to the resolved path `real` as it is on disk now
    /// (its directory's and its own identity looked up by path): for
    /// requests whose IO the agent does itself, where no opened file can be
    /// checked.
    ///
    /// A path through `/proc/self` as written (one of [`lenient_readings`])
    /// is refused: it names a different file for each process.
    pub(crate) fn check_path(&self, real: &Path, access: Access) -> Result<(), FsError> {
        if is_process_relative(real) {
            return Err(FsError::Protected {
                path: real.to_path_buf(),
                what: "a path through /proc/self, which names another file in each process"
                    .to_string(),
                access,
            });
        }
        let dir = real.parent().and_then(FileId::of_path);
        let target = rustix::fs::lstat(real).ok().map(|s| FileId::of_stat(&s));
        self.check(real, dir, target, access)
    }

    /// Refuse `access` to the resolved path `real`, whose directory has the
    /// identity `dir` and which (when it exists) has the identity `target`.
    pub(crate) fn check(
        &self,
        real: &Path,
        dir: Option<FileId>,
        target: Option<FileId>,
        access: Access,
    ) -> Result<(), FsError> {
        let refuse = |what: &str| {
            Err(FsError::Protected {
                path: real.to_path_buf(),
                what: what.to_string(),
                access,
            })
        };
        let name = real.file_name().unwrap_or_default();
        for (settings_dir, settings_name) in self.settings_places() {
            let same_dir = real.parent() == Some(settings_dir.as_path())
                || dir.is_some_and(|d| FileId::of_path(&settings_dir) == Some(d));
            if same_dir && let Some(what) = Self::settings_family(&settings_name, name) {
                return refuse(what);
            }
            let mut lock = settings_name.clone();
            lock.push(".lock");
            let linked = target.is_some_and(|t| {
                [settings_dir.join(&settings_name), settings_dir.join(lock)]
                    .iter()
                    .any(|p| FileId::of_path(p) == Some(t))
            });
            if linked {
                return refuse("a hard link to warden's settings file or its lock");
            }
        }
        if access == Access::Read {
            return Ok(());
        }
        for (file, what) in &self.files {
            if lenient_readings(file).iter().any(|f| f == real)
                || target.is_some_and(|t| FileId::of_path(file) == Some(t))
            {
                return refuse(what);
            }
        }
        for (tree, what) in &self.trees {
            if lenient_readings(tree).iter().any(|t| real.starts_with(t))
                || dir.is_some_and(|d| FileId::of_path(tree) == Some(d))
            {
                return refuse(what);
            }
        }
        Ok(())
    }
}

/// The directories an agent's file requests may touch: the chat's working
/// directory plus extra roots from the settings, each canonicalized, and
/// the files inside them that are still off-limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<PathBuf>,
    protected: Protected,
}

impl Roots {
    /// The roots for a chat in `cwd` with `extra` roots. Relative extra
    /// roots are taken relative to `cwd`. A root that does not exist (or
    /// cannot be canonicalized) is skipped: nothing can be inside it.
    pub(crate) fn new(cwd: &Path, extra: &[PathBuf]) -> Self {
        let mut roots: Vec<PathBuf> = Vec::with_capacity(1 + extra.len());
        for root in std::iter::once(cwd.to_path_buf()).chain(extra.iter().map(|r| cwd.join(r))) {
            match root.canonicalize() {
                Ok(canonical) => {
                    if !roots.contains(&canonical) {
                        roots.push(canonical);
                    }
                }
                Err(error) => {
                    tracing::debug!(root = %root.display(), %error, "skipping a root");
                }
            }
        }
        Self {
            roots,
            protected: Protected::default(),
        }
    }

    /// The same roots with warden's own files off-limits.
    #[must_use]
    pub(crate) fn protecting(mut self, protected: Protected) -> Self {
        self.protected = protected;
        self
    }

    /// The canonical roots, the chat's cwd first (when it exists).
    pub(crate) fn as_slice(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a canonical `path` lies inside one of the roots (component
    /// by component: `/w/proj2` is not inside `/w/proj`).
    pub(crate) fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// warden's own files, off-limits whatever the roots say.
    pub(crate) fn protected(&self) -> &Protected {
        &self.protected
    }
}

/// An opened directory and its identity.
struct Dir {
    fd: OwnedFd,
    id: FileId,
}

/// The directory holding the resolved path `real` (which must lie inside a
/// root), opened without following any symlink from the root down, and the
/// file's name in it. With `create`, missing directories are made on the way.
fn open_parent(roots: &Roots, real: &Path, create: bool) -> Result<(Dir, OsString), FsError> {
    let outside = || FsError::OutsideRoots {
        path: real.to_path_buf(),
        roots: roots.as_slice().to_vec(),
    };
    let root = roots
        .roots
        .iter()
        .filter(|root| real.starts_with(root))
        .max_by_key(|root| root.components().count())
        .ok_or_else(outside)?;
    let rel = real.strip_prefix(root).map_err(|_| outside())?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(FsError::IsDirectory {
            path: real.to_path_buf(),
        });
    };
    let io_error = |source: io::Error| open_error(real, source);
    let mut dir = beneath::open_dir(root).map_err(io_error)?;
    if create {
        for component in parent.components() {
            let name = component.as_os_str();
            match rustix::fs::mkdirat(&dir, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(errno) => return Err(io_error(errno.into())),
            }
            dir = beneath::open_subdir(dir.as_fd(), Path::new(name)).map_err(io_error)?;
        }
    } else if !parent.as_os_str().is_empty() {
        dir = beneath::open_subdir(dir.as_fd(), parent).map_err(io_error)?;
    }
    let id = FileId::of_fd(&dir).map_err(io_error)?;
    Ok((Dir { fd: dir, id }, name.to_os_string()))
}

/// An open failure: a symlink met where the resolved path had none means
/// the tree changed since the check.
fn open_error(path: &Path, source: io::Error) -> FsError {
    let changed = [libc::ELOOP, libc::EXDEV, libc::EAGAIN];
    match source.raw_os_error() {
        Some(code) if changed.contains(&code) => FsError::Changed {
            path: path.to_path_buf(),
        },
        Some(libc::ENOENT) => FsError::NotFound {
            path: path.to_path_buf(),
        },
        Some(libc::EISDIR) => FsError::IsDirectory {
            path: path.to_path_buf(),
        },
        _ => FsError::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Open the existing entry `name` of `dir` for reading, never following a
/// symlink, and never blocking on a FIFO.
fn open_existing(
    dir: &Dir,
    name: &OsStr,
    real: &Path,
) -> Result<(File, rustix::fs::Stat), FsError> {
    let fd = beneath::open_in(
        dir.fd.as_fd(),
        Path::new(name),
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|source| open_error(real, source))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| open_error(real, errno.into()))?;
    Ok((File::from(fd), stat))
}

fn is_dir(stat: &rustix::fs::Stat) -> bool {
    rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory
}

fn is_file(stat: &rustix::fs::Stat) -> bool {
    rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile
}

/// The text of the file at the resolved path `real` (from [`resolve`]),
/// from 1-based `line` (default 1; 0 counts as 1) and at most `limit` lines
/// (default all). Line endings are kept as they are in the file; a start
/// past the end gives an empty string.
///
/// The file is opened from its root down without following any symlink
/// (see the module `beneath`): one swapped in since [`resolve`] makes the
/// read fail ([`FsError::Changed`]) rather than read elsewhere. warden's own
/// settings are refused ([`FsError::Protected`]), also through a hard link.
pub fn read_text(
    roots: &Roots,
    real: &Path,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, FsError> {
    let (dir, name) = open_parent(roots, real, false)?;
    let (mut file, stat) = open_existing(&dir, &name, real)?;
    if is_dir(&stat) {
        return Err(FsError::IsDirectory {
            path: real.to_path_buf(),
        });
    }
    if !is_file(&stat) {
        return Err(FsError::NotRegularFile {
            path: real.to_path_buf(),
        });
    }
    roots.protected.check(
        real,
        Some(dir.id),
        Some(FileId::of_stat(&stat)),
        Access::Read,
    )?;
    let too_large = || FsError::TooLarge {
        path: real.to_path_buf(),
    };
    if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > MAX_TEXT {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // A file growing while it is read stops at the cap too.
    (&mut file)
        .take(MAX_TEXT + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FsError::Io {
            path: real.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > MAX_TEXT {
        return Err(too_large());
    }
    let text = String::from_utf8(bytes).map_err(|_| FsError::NotUtf8 {
        path: real.to_path_buf(),
    })?;
    if line.is_none_or(|l| l <= 1) && limit.is_none() {
        return Ok(text);
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1)) as usize;
    let take = limit.map_or(usize::MAX, |l| l as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// The largest file warden reads for the agent (or for a write's diff):
/// 64 MiB, the most one protocol message carries.
pub(crate) const MAX_TEXT: u64 = 64 << 20;

/// Write `content` to the resolved path `real` (from [`resolve`])
/// atomically: missing parent directories are created, the text goes to a
/// temporary file in the same directory which is flushed to disk and renamed
/// over the target, so a reader sees the old or the new file, never half of
/// one. An existing file keeps its permission bits; a new one gets the
/// default (0o666 less the umask).
///
/// Every step happens relative to the directory opened from the root down
/// without following a symlink: the temporary file is created in it, and
/// renamed within it, so nothing swapped in since [`resolve`] can redirect
/// the write ([`FsError::Changed`]). A symlink at the target itself is
/// refused the same way. warden's own files are refused
/// ([`FsError::Protected`]), also through a hard link to them.
pub fn write_text(roots: &Roots, real: &Path, content: &str) -> Result<(), FsError> {
    let io_error = |source: io::Error| FsError::Io {
        path: real.to_path_buf(),
        source,
    };
    let (dir, name) = open_parent(roots, real, true)?;
    let existing = match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(stat),
        Err(rustix::io::Errno::NOENT) => None,
        Err(errno) => return Err(open_error(real, errno.into())),
    };
    if let Some(stat) = &existing {
        if is_dir(stat) {
            return Err(FsError::IsDirectory {
                path: real.to_path_buf(),
            });
        }
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Symlink {
            return Err(FsError::Changed {
                path: real.to_path_buf(),
            });
        }
    }
    roots.protected.check(
        real,
        Some(dir.id),
        existing.as_ref().map(FileId::of_stat),
        Access::Write,
    )?;
    let mut temp_name = OsString::from(".");
    temp_name.push(&name);
    temp_name.push(format!(".warden-{}.tmp", uuid::Uuid::new_v4().simple()));
    let permissions = existing
        .as_ref()
        .map(|stat| Mode::from_bits_truncate(stat.st_mode & 0o7777));
    let result = write_and_rename(&dir.fd, &temp_name, &name, content, permissions);
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir.fd, &temp_name, AtFlags::empty());
    }
    result.map_err(io_error)?;
    // Make the rename itself durable; best effort (not every filesystem
    // lets a directory be synced).
    let _ = rustix::fs::fsync(&dir.fd);
    Ok(())
}

fn write_and_rename(
    dir: &OwnedFd,
    temp: &OsStr,
    target: &OsStr,
    content: &str,
    permissions: Option<Mode>,
) -> io::Result<()> {
    let fd = rustix::fs::openat(
        dir,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o666),
    )?;
    if let Some(permissions) = permissions {
        // Set explicitly: the mode given to open is masked by the umask.
        rustix::fs::fchmod(&fd, permissions)?;
    }
    let mut file = File::from(fd);
    file.write_all(content.as_bytes())?;
    file.sync_all()?;
    drop(file);
    rustix::fs::renameat(dir, temp, dir, target)?;
    Ok(())
}

/// The file's current text at the resolved path `real`, for a diff preview:
/// `None` when it does not exist, is not UTF-8, cannot be read, or is one
/// of warden's own files the agent may not read.
pub fn current_text(roots: &Roots, real: &Path) -> Option<String> {
    read_text(roots, real, None, None).ok()
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "fs_protected_tests.rs"]
mod protected_tests;

#[cfg(test)]
#[path = "fs_race_tests.rs"]
mod race_tests;

#[cfg(test)]
#[path = "fs_resolve_tests.rs"]
mod resolve_tests;

#[cfg(test)]
#[path = "fs_walk_attack_tests.rs"]
mod walk_attack_tests;

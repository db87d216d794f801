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
use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::beneath;

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
    pub fn settings(mut self, path: &Path) -> Self {
        if !self.settings.iter().any(|p| p == path) {
            self.settings.push(path.to_path_buf());
        }
        self
    }

    /// A file that is never written; `what` names it in the refusal.
    #[must_use]
    pub fn file(mut self, path: &Path, what: &str) -> Self {
        self.files.push((path.to_path_buf(), what.to_string()));
        self
    }

    /// A directory nothing is written under; `what` names it in the refusal.
    #[must_use]
    pub fn tree(mut self, path: &Path, what: &str) -> Self {
        self.trees.push((path.to_path_buf(), what.to_string()));
        self
    }

    /// The settings file's directory and name, through symlinks; both the
    /// path as given and as resolved.
    fn settings_places(&self) -> Vec<(PathBuf, OsString)> {
        let mut out = Vec::new();
        let candidates = self
            .settings
            .iter()
            .flat_map(|path| [normalize(path), resolve_lenient(path)]);
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
    pub fn check_path(&self, real: &Path, access: Access) -> Result<(), FsError> {
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
            if real == resolve_lenient(file)
                || target.is_some_and(|t| FileId::of_path(file) == Some(t))
            {
                return refuse(what);
            }
        }
        for (tree, what) in &self.trees {
            if real.starts_with(resolve_lenient(tree))
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
    pub fn new(cwd: &Path, extra: &[PathBuf]) -> Self {
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
    pub fn protecting(mut self, protected: Protected) -> Self {
        self.protected = protected;
        self
    }

    /// The canonical roots, the chat's cwd first (when it exists).
    pub fn as_slice(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a canonical `path` lies inside one of the roots (component
    /// by component: `/w/proj2` is not inside `/w/proj`).
    pub fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// warden's own files, off-limits whatever the roots say.
    pub fn protected(&self) -> &Protected {
        &self.protected
    }
}

/// `path` with `.` dropped and `..` applied lexically (never above `/`).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// Where `path` really is, as far as it exists: the longest existing prefix
/// canonicalized (symlinks, `..`, `/proc` magic links resolved), the rest
/// appended with `.` and `..` applied lexically. A dangling symlink is
/// followed to where it points. For the policy, which must see every path
/// a call touches; no check against any root.
pub fn resolve_lenient(path: &Path) -> PathBuf {
    resolve_lenient_at(path, 0)
}

fn resolve_lenient_at(path: &Path, depth: u8) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let normalized = normalize(path);
    let mut existing = normalized.as_path();
    let mut missing: Vec<&OsStr> = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            out.extend(missing.iter().rev());
            return out;
        }
        if depth < 40
            && let Ok(target) = fs::read_link(existing)
        {
            // A dangling symlink: follow it to where a write would land.
            let mut out = match existing.parent() {
                Some(dir) => dir.join(target),
                None => target,
            };
            out.extend(missing.iter().rev());
            return resolve_lenient_at(&out, depth + 1);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            _ => return normalized,
        }
    }
}

/// Where an agent's `path` really is, checked against `roots`.
///
/// The path must be absolute. `.` and `..` are applied lexically, then
/// symlinks are resolved: an existing path is canonicalized; for one that
/// does not exist yet the deepest existing ancestor is canonicalized and the
/// rest appended. The result must lie inside one of the roots, so a symlink
/// inside a root that points outside is refused.
///
/// For a read (`for_write == false`) a path that does not exist is
/// [`FsError::NotFound`] (checked after the roots, so nothing is revealed
/// about paths outside them). For a write, missing parent directories are
/// fine (they are inside the roots by the check), an existing directory is
/// [`FsError::IsDirectory`] and a dangling symlink [`FsError::BrokenSymlink`].
pub fn resolve(roots: &Roots, path: &Path, for_write: bool) -> Result<PathBuf, FsError> {
    if !path.is_absolute() {
        return Err(FsError::NotAbsolute {
            path: path.to_path_buf(),
        });
    }
    let normalized = normalize(path);
    let outside = || FsError::OutsideRoots {
        path: path.to_path_buf(),
        roots: roots.as_slice().to_vec(),
    };

    // Walk up from the full path to the deepest ancestor that exists.
    let mut existing = normalized.as_path();
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let canonical = loop {
        match existing.canonicalize() {
            Ok(canonical) => break canonical,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(existing).is_ok() {
                    // It exists as a link but its target does not.
                    let link = existing.to_path_buf();
                    let parent_inside = link
                        .parent()
                        .and_then(|p| p.canonicalize().ok())
                        .is_some_and(|p| roots.contains(&p));
                    if !parent_inside {
                        return Err(outside());
                    }
                    return Err(if for_write {
                        FsError::BrokenSymlink { path: link }
                    } else {
                        FsError::NotFound {
                            path: path.to_path_buf(),
                        }
                    });
                }
                match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        missing.push(name);
                        existing = parent;
                    }
                    // Even `/` does not exist: nothing to resolve against.
                    _ => return Err(outside()),
                }
            }
            Err(source) => {
                return Err(FsError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    };

    let mut resolved = canonical;
    for name in missing.iter().rev() {
        resolved.push(name);
    }
    if !roots.contains(&resolved) {
        return Err(outside());
    }
    let access = if for_write {
        Access::Write
    } else {
        Access::Read
    };
    roots.protected.check(&resolved, None, None, access)?;
    if !missing.is_empty() {
        if for_write {
            return Ok(resolved);
        }
        return Err(FsError::NotFound {
            path: path.to_path_buf(),
        });
    }
    if for_write && resolved.is_dir() {
        return Err(FsError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(resolved)
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
pub const MAX_TEXT: u64 = 64 << 20;

/// What [`write_text`] replaced, so the caller can show a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The file's text before the write, when it existed and was UTF-8.
    pub previous: Option<String>,
    /// The file did not exist before.
    pub created: bool,
}

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
pub fn write_text(roots: &Roots, real: &Path, content: &str) -> Result<WriteOutcome, FsError> {
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
    let previous = match &existing {
        Some(stat) if is_file(stat) => {
            open_existing(&dir, &name, real).ok().and_then(|(file, _)| {
                // Kept for the diff only: a file too large for a message is not.
                let mut bytes = Vec::new();
                file.take(MAX_TEXT + 1).read_to_end(&mut bytes).ok()?;
                let small = bytes.len() as u64 <= MAX_TEXT;
                small.then(|| String::from_utf8(bytes).ok()).flatten()
            })
        }
        _ => None,
    };

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
    Ok(WriteOutcome {
        previous,
        created: existing.is_none(),
    })
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
mod tests {
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_file_larger_than_a_message_is_never_read_whole() {
        let t = tree();
        let big = t.proj.join("big.txt");
        let file = fs::File::create(&big).expect("create");
        file.set_len(MAX_TEXT + 1).expect("sparse file");
        let roots = Roots::new(&t.proj, &[]);
        let real = resolve(&roots, &big, false).expect("resolve");
        assert!(
            matches!(
                read_text(&roots, &real, None, Some(1)),
                Err(FsError::TooLarge { .. })
            ),
            "read whole"
        );
        assert_eq!(current_text(&roots, &real), None);
    }

    /// A temporary tree: `<tmp>/proj` (the cwd root) with `src/main.rs`,
    /// `<tmp>/proj2` and `<tmp>/outside/secret.txt`.
    struct Tree {
        _dir: tempfile::TempDir,
        base: PathBuf,
        proj: PathBuf,
    }

    fn tree() -> Tree {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical tempdir");
        let proj = base.join("proj");
        fs::create_dir_all(proj.join("src")).expect("mkdir proj/src");
        fs::write(proj.join("src/main.rs"), "fn main() {}\n").expect("write main.rs");
        fs::create_dir_all(base.join("proj2")).expect("mkdir proj2");
        fs::create_dir_all(base.join("outside")).expect("mkdir outside");
        fs::write(base.join("outside/secret.txt"), "secret\n").expect("write secret");
        Tree {
            _dir: dir,
            base,
            proj,
        }
    }

    /// A scratch directory (canonical, removed when the guard drops) that
    /// is also the only root.
    fn scratch() -> (Scratch, Roots) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().canonicalize().expect("canonical");
        let roots = Roots::new(&path, &[]);
        (Scratch { _dir: dir, path }, roots)
    }

    struct Scratch {
        _dir: tempfile::TempDir,
        path: PathBuf,
    }

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.path
        }
    }

    fn roots(t: &Tree) -> Roots {
        Roots::new(&t.proj, &[])
    }

    #[test]
    fn existing_file_inside_resolves_to_itself() {
        let t = tree();
        let path = t.proj.join("src/main.rs");
        assert_eq!(resolve(&roots(&t), &path, false).expect("inside"), path);
        let dotted = t.proj.join("src/./../src/main.rs");
        assert_eq!(resolve(&roots(&t), &dotted, false).expect("inside"), path);
    }

    #[test]
    fn dot_dot_escaping_the_root_is_refused() {
        let t = tree();
        let path = t.proj.join("../outside/secret.txt");
        let err = resolve(&roots(&t), &path, false).expect_err("outside");
        assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
        assert!(err.to_string().contains("outside the allowed roots"));
        let err = resolve(&roots(&t), &path, true).expect_err("outside");
        assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
    }

    #[test]
    fn symlink_inside_pointing_outside_is_refused() {
        let t = tree();
        symlink(t.base.join("outside"), t.proj.join("link")).expect("symlink dir");
        symlink(
            t.base.join("outside/secret.txt"),
            t.proj.join("secret-link.txt"),
        )
        .expect("symlink file");
        for path in [
            t.proj.join("link/secret.txt"),
            t.proj.join("secret-link.txt"),
        ] {
            for for_write in [false, true] {
                let err = resolve(&roots(&t), &path, for_write).expect_err("outside");
                assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
            }
        }
        // A new file under the linked directory is outside too.
        let err =
            resolve(&roots(&t), &t.proj.join("link/new/file.txt"), true).expect_err("outside");
        assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
    }

    #[test]
    fn symlink_inside_pointing_inside_resolves_to_the_target() {
        let t = tree();
        symlink(t.proj.join("src/main.rs"), t.proj.join("alias.rs")).expect("symlink");
        let resolved = resolve(&roots(&t), &t.proj.join("alias.rs"), true).expect("inside");
        assert_eq!(resolved, t.proj.join("src/main.rs"));
    }

    #[test]
    fn dangling_symlink_is_refused_for_writes() {
        let t = tree();
        symlink(t.proj.join("nowhere.txt"), t.proj.join("dangling")).expect("symlink");
        let err = resolve(&roots(&t), &t.proj.join("dangling"), true).expect_err("dangling");
        assert!(matches!(err, FsError::BrokenSymlink { .. }), "{err:?}");
        let err = resolve(&roots(&t), &t.proj.join("dangling"), false).expect_err("dangling");
        assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn lenient_resolution_follows_links_magic_links_and_dangling_links() {
        let t = tree();
        symlink(t.base.join("outside"), t.proj.join("link")).expect("symlink");
        symlink(t.base.join("outside/new.txt"), t.proj.join("dangling")).expect("symlink");
        let outside = t.base.join("outside");
        assert_eq!(
            resolve_lenient(&t.proj.join("link/secret.txt")),
            outside.join("secret.txt")
        );
        assert_eq!(
            resolve_lenient(&t.proj.join("link/missing/../x/y.txt")),
            outside.join("x/y.txt")
        );
        assert_eq!(
            resolve_lenient(&t.proj.join("dangling")),
            outside.join("new.txt")
        );
        let magic = PathBuf::from(format!(
            "/proc/self/root{}",
            t.proj.join("link/secret.txt").display()
        ));
        assert_eq!(resolve_lenient(&magic), outside.join("secret.txt"));
    }

    #[test]
    fn relative_path_is_refused() {
        let t = tree();
        let err = resolve(&roots(&t), Path::new("src/main.rs"), false).expect_err("relative");
        assert!(matches!(err, FsError::NotAbsolute { .. }), "{err:?}");
        assert!(err.to_string().contains("not an absolute path"));
    }

    #[test]
    fn new_file_in_existing_dir_is_ok_for_write_only() {
        let t = tree();
        let path = t.proj.join("src/new.rs");
        assert_eq!(resolve(&roots(&t), &path, true).expect("write"), path);
        let err = resolve(&roots(&t), &path, false).expect_err("read of missing");
        assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
    }

    #[test]
    fn missing_parents_inside_the_root_are_ok_for_write() {
        let t = tree();
        let path = t.proj.join("a/b/../c/new.rs");
        assert_eq!(
            resolve(&roots(&t), &path, true).expect("write"),
            t.proj.join("a/c/new.rs")
        );
    }

    #[test]
    fn directory_is_refused_for_write() {
        let t = tree();
        let err = resolve(&roots(&t), &t.proj.join("src"), true).expect_err("dir");
        assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");
    }

    #[test]
    fn sibling_with_a_common_string_prefix_is_outside() {
        let t = tree();
        for for_write in [false, true] {
            let err =
                resolve(&roots(&t), &t.base.join("proj2/file.txt"), for_write).expect_err("out");
            assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
        }
    }

    #[test]
    fn extra_roots_are_honoured_and_missing_ones_skipped() {
        let t = tree();
        let roots = Roots::new(
            &t.proj,
            &[t.base.join("outside"), t.base.join("does-not-exist")],
        );
        assert_eq!(
            roots.as_slice(),
            &[t.proj.clone(), t.base.join("outside")][..]
        );
        let secret = t.base.join("outside/secret.txt");
        assert_eq!(resolve(&roots, &secret, false).expect("extra root"), secret);
        let err = resolve(&roots, &t.base.join("proj2/x"), true).expect_err("still outside");
        assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
    }

    #[test]
    fn read_honours_line_and_limit() {
        let (dir, r) = scratch();
        let path = dir.join("f.txt");
        fs::write(&path, "one\r\ntwo\nthree\nfour").expect("write");
        assert_eq!(
            read_text(&r, &path, None, None).expect("all"),
            "one\r\ntwo\nthree\nfour"
        );
        assert_eq!(
            read_text(&r, &path, Some(1), Some(2)).expect("first two"),
            "one\r\ntwo\n"
        );
        assert_eq!(
            read_text(&r, &path, Some(3), None).expect("from 3"),
            "three\nfour"
        );
        assert_eq!(
            read_text(&r, &path, Some(2), Some(1)).expect("line 2"),
            "two\n"
        );
        assert_eq!(
            read_text(&r, &path, None, Some(1)).expect("limit"),
            "one\r\n"
        );
        assert_eq!(read_text(&r, &path, Some(9), None).expect("past end"), "");
        assert_eq!(
            read_text(&r, &path, Some(0), Some(1)).expect("0 as 1"),
            "one\r\n"
        );
    }

    #[test]
    fn read_errors() {
        let (dir, r) = scratch();
        let missing = dir.join("missing.txt");
        let err = read_text(&r, &missing, None, None).expect_err("missing");
        assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("does not exist"));

        let err = read_text(&r, &dir, None, None).expect_err("dir");
        assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");

        let binary = dir.join("bin");
        fs::write(&binary, [0x66, 0x6f, 0xff, 0xfe, 0x00]).expect("write");
        let err = read_text(&r, &binary, None, None).expect_err("binary");
        assert!(matches!(err, FsError::NotUtf8 { .. }), "{err:?}");
        assert!(err.to_string().contains("not valid UTF-8"));
    }

    #[test]
    fn write_replaces_atomically_and_keeps_the_mode() {
        let (dir, r) = scratch();
        let path = dir.join("f.txt");
        fs::write(&path, "old\n").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");

        let outcome = write_text(&r, &path, "new\n").expect("write_text");
        assert_eq!(
            outcome,
            WriteOutcome {
                previous: Some("old\n".to_owned()),
                created: false
            }
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "new\n");
        let mode = fs::metadata(&path).expect("metadata").permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(&*dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
    }

    #[test]
    fn write_creates_parent_directories() {
        let (dir, r) = scratch();
        let path = dir.join("a/b/c.txt");
        let outcome = write_text(&r, &path, "hello").expect("write_text");
        assert_eq!(
            outcome,
            WriteOutcome {
                previous: None,
                created: true
            }
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "hello");
        assert_eq!(current_text(&r, &path).as_deref(), Some("hello"));
        assert_eq!(current_text(&r, &dir.join("nope")), None);
    }

    #[test]
    fn write_over_binary_has_no_previous_text() {
        let (dir, r) = scratch();
        let path = dir.join("bin");
        fs::write(&path, [0xff, 0xfe]).expect("write");
        let outcome = write_text(&r, &path, "text").expect("write_text");
        assert_eq!(
            outcome,
            WriteOutcome {
                previous: None,
                created: false
            }
        );
        let err = write_text(&r, &dir, "x").expect_err("dir");
        assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");
    }
}

#[cfg(test)]
mod protected_tests {
    use std::os::unix::fs::symlink;

    use pretty_assertions::assert_eq;

    use super::*;

    /// A home that is the only root, holding warden's settings, its
    /// decision log and chat records, and links to them.
    fn home() -> (tempfile::TempDir, PathBuf, Roots) {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().canonicalize().expect("canonical");
        fs::create_dir_all(home.join("cfg")).expect("mkdir");
        fs::create_dir_all(home.join("data/chats")).expect("mkdir");
        fs::write(home.join("cfg/config.toml"), "settings\n").expect("write");
        fs::write(home.join("data/decisions.jsonl"), "{}\n").expect("write");
        fs::hard_link(home.join("cfg/config.toml"), home.join("hard.toml")).expect("link");
        fs::hard_link(home.join("data/decisions.jsonl"), home.join("hard.jsonl")).expect("link");
        symlink(home.join("cfg/config.toml"), home.join("soft.toml")).expect("symlink");
        symlink(home.join("data/decisions.jsonl"), home.join("soft.jsonl")).expect("symlink");
        symlink(home.join("cfg"), home.join("cfg-link")).expect("symlink");
        let protected = Protected::new()
            .settings(&home.join("cfg-link/config.toml"))
            .file(&home.join("data/decisions.jsonl"), "warden's decision log")
            .tree(&home.join("data/chats"), "warden's chat records");
        let roots = Roots::new(&home, &[]).protecting(protected);
        (dir, home, roots)
    }

    fn refused(result: Result<impl std::fmt::Debug, FsError>) -> bool {
        matches!(result, Err(FsError::Protected { .. }))
    }

    /// Resolve, then do the IO, as the runtime does.
    fn write(roots: &Roots, path: &Path) -> Result<WriteOutcome, FsError> {
        let real = resolve(roots, path, true)?;
        write_text(roots, &real, "x")
    }

    fn read(roots: &Roots, path: &Path) -> Result<String, FsError> {
        let real = resolve(roots, path, false)?;
        read_text(roots, &real, None, None)
    }

    #[test]
    fn the_settings_and_their_lock_and_temp_files_are_neither_read_nor_written() {
        let (_dir, home, roots) = home();
        for name in [
            "cfg/config.toml",
            "cfg/config.toml.lock",
            "cfg/.config.toml.123.4.tmp",
            "cfg-link/config.toml",
            "soft.toml",
            "hard.toml",
        ] {
            assert!(refused(write(&roots, &home.join(name))), "write {name}");
        }
        for name in ["cfg/config.toml", "soft.toml", "hard.toml"] {
            assert!(refused(read(&roots, &home.join(name))), "read {name}");
        }
        assert_eq!(
            fs::read_to_string(home.join("cfg/config.toml")).expect("read"),
            "settings\n"
        );
        assert!(!home.join("cfg/config.toml.lock").exists());
        // Other files next to the settings are the user's.
        assert!(write(&roots, &home.join("cfg/notes.txt")).is_ok());
        assert!(write(&roots, &home.join("cfg/config.toml.bak")).is_ok());
    }

    #[test]
    fn the_decision_log_and_chat_records_are_read_but_never_written() {
        let (_dir, home, roots) = home();
        for name in [
            "data/decisions.jsonl",
            "soft.jsonl",
            "hard.jsonl",
            "data/chats/new.json",
            "data/chats/deeper/new.json",
        ] {
            assert!(refused(write(&roots, &home.join(name))), "write {name}");
        }
        assert_eq!(
            read(&roots, &home.join("soft.jsonl")).expect("reads are fine"),
            "{}\n"
        );
        assert_eq!(
            fs::read_to_string(home.join("data/decisions.jsonl")).expect("read"),
            "{}\n"
        );
        assert!(!home.join("data/chats/new.json").exists());
        assert!(!home.join("data/chats/deeper").exists());
    }

    #[test]
    fn the_message_says_what_the_file_is() {
        let (_dir, home, roots) = home();
        let err = write(&roots, &home.join("hard.toml")).expect_err("refused");
        assert_eq!(
            err.to_string(),
            format!(
                "{} is a hard link to warden's settings file or its lock: \
                 the agent's file calls may not write it",
                home.join("hard.toml").display()
            )
        );
    }
}

#[cfg(test)]
mod race_tests {
    use std::os::unix::fs::symlink;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// Swaps `<root>/d` between a real directory and a symlink to
    /// `outside`, each swap one atomic exchange, until `stop` is set.
    fn swapper(root: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) {
        let link = root.join("d.link");
        symlink(&outside, &link).expect("symlink");
        let d = root.join("d");
        let mut swapped = false;
        while !stop.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &d,
                rustix::fs::CWD,
                &link,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .expect("exchange");
            swapped = !swapped;
        }
        if swapped {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &d,
                rustix::fs::CWD,
                &link,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .expect("exchange back");
        }
    }

    #[test]
    fn swapping_a_directory_for_a_symlink_never_reaches_outside() {
        race(false);
    }

    #[test]
    fn swapping_a_directory_for_a_symlink_never_reaches_outside_without_openat2() {
        race(true);
    }

    /// 1,000 writes and 10,000 reads of `<root>/d/f.txt` while `d` is
    /// swapped for a symlink to a directory outside the root: nothing
    /// outside is ever written or read.
    fn race(walk: bool) {
        super::beneath::FORCE_WALK.with(|w| w.set(walk));
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = base.join("root");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("d")).expect("mkdir d");
        fs::create_dir_all(&outside).expect("mkdir outside");
        fs::write(root.join("d/f.txt"), "inside\n").expect("write inside");
        fs::write(outside.join("f.txt"), "outside secret\n").expect("write outside");
        let roots = Roots::new(&root, &[]);

        let stop = Arc::new(AtomicBool::new(false));
        let swap = {
            let (root, outside, stop) = (root.clone(), outside.clone(), stop.clone());
            std::thread::spawn(move || swapper(root, outside, stop))
        };
        let target = root.join("d/f.txt");
        let mut leaked_reads = 0;
        for i in 0..1000 {
            if let Ok(real) = resolve(&roots, &target, true) {
                let _ = write_text(&roots, &real, &format!("inside {i}\n"));
            }
            for _ in 0..10 {
                if let Ok(real) = resolve(&roots, &target, false)
                    && let Ok(text) = read_text(&roots, &real, None, None)
                    && text.contains("outside")
                {
                    leaked_reads += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        swap.join().expect("swapper");

        let mut outside_names: Vec<_> = fs::read_dir(&outside)
            .expect("read outside")
            .map(|e| e.expect("entry").file_name())
            .collect();
        outside_names.sort();
        assert_eq!(
            (
                fs::read_to_string(outside.join("f.txt")).expect("outside file"),
                outside_names,
                leaked_reads
            ),
            (
                "outside secret\n".to_owned(),
                vec![std::ffi::OsString::from("f.txt")],
                0
            )
        );
    }
}

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

/// The most symlinks one walk follows: Linux's `MAXSYMLINKS`, so a chain
/// the kernel follows is followed here too, and one it refuses stops here.
const MAX_LINKS: usize = 40;

/// What one walk of a path met, the way the kernel walks it: from the left,
/// each symlink replaced by its target (a relative one taken from the link's
/// real directory), `..` going up from where the walk really is.
///
/// Both public resolvers are built on it ([`resolve`] checks it against the
/// roots, [`resolve_lenient`] only reports it), so the two cannot disagree
/// on where a path leads.
#[derive(Debug)]
struct Walk {
    /// The deepest part of the path that exists, canonical.
    real: PathBuf,
    /// The components past `real` that do not exist (yet), with `.` and
    /// `..` applied lexically: there is nothing on disk to resolve them by.
    missing: Vec<OsString>,
    /// The first symlink met whose target does not exist (its parent
    /// canonical). Its target was followed: `real` and `missing` say where
    /// a file created through it would land.
    dangling: Option<PathBuf>,
    /// Why the walk stopped following the path before its end: a loop or
    /// a chain longer than the kernel follows (`ELOOP`), a file where a
    /// directory was expected, a directory it may not search. The rest of
    /// the path is in `missing`, lexically.
    stopped: Option<io::Error>,
    /// The path from the first `/proc/self` (or `/proc/thread-self`) met
    /// on, as written: what it names depends on the process that opens it
    /// (its working directory, its file descriptors), and for the agent's
    /// own tools that process is not warden. `/proc/self/root` is `/` for
    /// both and not counted.
    through_self: Option<PathBuf>,
}

impl Walk {
    /// Where the path leads: `real` with the missing components appended.
    fn path(&self) -> PathBuf {
        let mut out = self.real.clone();
        out.extend(&self.missing);
        out
    }
}

/// One step of a walk still to take.
enum Step {
    /// Back to `/` (an absolute path or link target).
    Root,
    /// `..`.
    Up,
    /// A name to look up.
    Name(OsString),
}

/// Push `path`'s components onto `todo` so that the first pops first.
fn push_steps(todo: &mut Vec<Step>, path: &Path) {
    for component in path.components().rev() {
        todo.push(match component {
            Component::Prefix(_) | Component::RootDir => Step::Root,
            Component::CurDir => continue,
            Component::ParentDir => Step::Up,
            Component::Normal(name) => Step::Name(name.to_os_string()),
        });
    }
}

/// `/proc/<name>` and the steps after it as a path, when `name` is the
/// calling process's own directory and what follows is not `root`.
fn process_relative(name: &OsStr, todo: &[Step]) -> Option<PathBuf> {
    if name != "self" && name != "thread-self" {
        return None;
    }
    if matches!(todo.last(), Some(Step::Name(next)) if next == "root") {
        return None;
    }
    let mut out = Path::new("/proc").join(name);
    for step in todo.iter().rev() {
        match step {
            Step::Root => out.push("/"),
            Step::Up => out.push(".."),
            Step::Name(next) => out.push(next),
        }
    }
    Some(out)
}

/// Whether `path` (as written, not resolved) starts in the calling
/// process's own `/proc` directory, anywhere but its `root`.
fn is_process_relative(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/proc") else {
        return false;
    };
    let mut names = rest.components();
    let (first, second) = (names.next(), names.next());
    matches!(first, Some(Component::Normal(n)) if n == "self" || n == "thread-self")
        && !matches!(second, Some(Component::Normal(n)) if n == "root")
}

/// Walk `path` (a relative one from the process's working directory) as
/// the kernel would, following dangling symlinks to where they point. Once
/// a component is missing the rest is applied lexically, until a `..`
/// climbs back onto what exists, where following resumes: a tool that
/// normalizes `missing/..` away before opening lands there.
fn walk(path: &Path) -> Walk {
    let mut out = Walk {
        real: PathBuf::from("/"),
        missing: Vec::new(),
        dangling: None,
        stopped: None,
        through_self: None,
    };
    let mut todo = Vec::new();
    push_steps(&mut todo, path);
    if path.is_relative() {
        match std::env::current_dir() {
            Ok(cwd) => push_steps(&mut todo, &cwd),
            Err(error) => {
                out.real = PathBuf::new();
                out.stopped = Some(error);
            }
        }
    }
    let mut links = 0;
    while let Some(step) = todo.pop() {
        match step {
            Step::Root => {
                out.real = PathBuf::from("/");
                out.missing.clear();
            }
            Step::Up => {
                if out.missing.pop().is_none() {
                    out.real.pop();
                }
            }
            Step::Name(name) if out.stopped.is_some() || !out.missing.is_empty() => {
                out.missing.push(name);
            }
            Step::Name(name) => {
                let candidate = out.real.join(&name);
                let meta = match fs::symlink_metadata(&candidate) {
                    Ok(meta) => meta,
                    Err(error) => {
                        if error.kind() != io::ErrorKind::NotFound {
                            out.stopped = Some(error);
                        }
                        out.missing.push(name);
                        continue;
                    }
                };
                if !meta.file_type().is_symlink() {
                    out.real = candidate;
                    continue;
                }
                if links == MAX_LINKS {
                    out.stopped = Some(io::Error::from_raw_os_error(libc::ELOOP));
                    out.missing.push(name);
                    continue;
                }
                match fs::read_link(&candidate) {
                    Ok(target) => {
                        links += 1;
                        if out.dangling.is_none()
                            && fs::metadata(&candidate)
                                .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
                        {
                            out.dangling = Some(candidate);
                        }
                        if out.through_self.is_none() && out.real == Path::new("/proc") {
                            out.through_self = process_relative(&name, &todo);
                        }
                        push_steps(&mut todo, &target);
                    }
                    Err(error) => {
                        out.stopped = Some(error);
                        out.missing.push(name);
                    }
                }
            }
        }
    }
    out
}

/// Where `path` really is, as far as it exists: every symlink and `/proc`
/// magic link on the way followed and `..` applied where the walk really
/// is, as the kernel does; the rest, which does not exist, appended with
/// `.` and `..` applied lexically. A dangling symlink is followed to where
/// it points. For the policy, which must see every path a call touches; no
/// check against any root.
///
/// `/proc/self` is warden's own process here, not the agent's
/// ([`lenient_readings`] says when a path goes through it).
pub fn resolve_lenient(path: &Path) -> PathBuf {
    walk(path).path()
}

/// Every place `path` may name for a tool that opens it: where the kernel
/// goes ([`resolve_lenient`]), where a tool that first applies `..`
/// lexically (as Node's `path.resolve` does) goes (differs only when `..`
/// follows a symlink), and the path as written with `.` and `..` applied
/// lexically. The protected-file check runs on each. A path through
/// `/proc/self` (other than its `root`) adds that part as written, which
/// [`Protected::check_path`] refuses: what it names depends on the process
/// that opens it, and warden cannot tell which file the agent's tool meets.
pub fn lenient_readings(path: &Path) -> Vec<PathBuf> {
    let walked = walk(path);
    let mut out = vec![walked.path()];
    if let Some(through_self) = walked.through_self {
        out.push(through_self);
    }
    let normalized = normalize(path);
    if path.components().any(|c| c == Component::ParentDir) {
        let lexical = walk(&normalized).path();
        if !out.contains(&lexical) {
            out.push(lexical);
        }
    }
    if !out.contains(&normalized) {
        out.push(normalized);
    }
    out
}

/// Where an agent's `path` really is, checked against `roots`.
///
/// The path must be absolute. It is walked as the kernel walks it: every
/// symlink followed, `..` applied where the walk really is; the part that
/// does not exist yet is appended with `.` and `..` applied lexically. The
/// result must lie inside one of the roots, so a symlink inside a root that
/// points outside is refused, whether its target exists or not. When `..`
/// follows a symlink, the path read lexically must lead to the same place,
/// else it is [`FsError::Ambiguous`]: warden cannot tell which file the
/// agent means.
///
/// For a read (`for_write == false`) a path that does not exist, or a
/// dangling symlink inside the roots, is [`FsError::NotFound`] (checked after
/// the roots, so nothing is revealed about paths outside them). For a write,
/// missing parent directories are fine (they are inside the roots by the
/// check), an existing directory is [`FsError::IsDirectory`] and a dangling
/// symlink [`FsError::BrokenSymlink`].
pub fn resolve(roots: &Roots, path: &Path, for_write: bool) -> Result<PathBuf, FsError> {
    if !path.is_absolute() {
        return Err(FsError::NotAbsolute {
            path: path.to_path_buf(),
        });
    }
    let kernel = walk(path);
    if !path.components().any(|c| c == Component::ParentDir) {
        return check_walk(roots, path, kernel, for_write);
    }
    let lexical = walk(&normalize(path));
    let same = kernel.path() == lexical.path();
    let (kernel, lexical) = (
        check_walk(roots, path, kernel, for_write),
        check_walk(roots, path, lexical, for_write),
    );
    // A reading outside the roots or on warden's own files is refused as
    // such; otherwise two places are refused before either is found missing.
    let unsafe_reading = |r: &Result<PathBuf, FsError>| {
        matches!(
            r,
            Err(FsError::OutsideRoots { .. } | FsError::Protected { .. })
        )
    };
    if unsafe_reading(&kernel) || (same && kernel.is_err()) {
        return kernel;
    }
    if unsafe_reading(&lexical) || same {
        return lexical;
    }
    Err(FsError::Ambiguous {
        path: path.to_path_buf(),
    })
}

/// [`resolve`]'s checks on one walk of the agent's `path`.
fn check_walk(roots: &Roots, path: &Path, walk: Walk, for_write: bool) -> Result<PathBuf, FsError> {
    let outside = || FsError::OutsideRoots {
        path: path.to_path_buf(),
        roots: roots.as_slice().to_vec(),
    };
    let resolved = walk.path();
    // The roots first: an error about a path outside them would reveal
    // what is there.
    if !roots.contains(&resolved) {
        return Err(outside());
    }
    if let Some(link) = &walk.dangling
        && !link.parent().is_some_and(|dir| roots.contains(dir))
    {
        return Err(outside());
    }
    if let Some(source) = walk.stopped {
        return Err(FsError::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    let access = if for_write {
        Access::Write
    } else {
        Access::Read
    };
    roots.protected.check(&resolved, None, None, access)?;
    if let Some(link) = walk.dangling {
        return Err(if for_write {
            FsError::BrokenSymlink { path: link }
        } else {
            FsError::NotFound {
                path: path.to_path_buf(),
            }
        });
    }
    if !walk.missing.is_empty() {
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

//! Where a path really leads: one walk of it as the kernel walks it
//! (symlinks followed, `..` applied where the walk really is, `/proc`
//! links, the kernel's limit of 40 links), and the two answers built on
//! it: [`resolve`] (inside the chat's roots, or an error) and
//! [`resolve_lenient`] / [`lenient_readings`] (never fails; for the
//! protected-file check and the policy's locations).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::{Access, FsError, Roots};

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
pub(super) fn is_process_relative(path: &Path) -> bool {
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
/// [`super::Protected::check_path`] refuses: what it names depends on the process
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

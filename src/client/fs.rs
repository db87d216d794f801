//! Text files on the agent's behalf: path resolution against the chat's
//! roots, reading with `line`/`limit`, and atomic writes that keep the
//! file's permissions.
//!
//! Everything here is synchronous and does blocking IO on the calling
//! thread; files are small and local, callers that care may wrap a call in
//! `spawn_blocking`.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};

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
    /// The file is not UTF-8 text; the protocol only carries text.
    #[error("{} is not valid UTF-8 text", .path.display())]
    NotUtf8 {
        /// The binary (or otherwise encoded) file.
        path: PathBuf,
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

/// The directories an agent's file requests may touch: the chat's working
/// directory plus extra roots from the settings, each canonicalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<PathBuf>,
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
        Self { roots }
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
}

/// `path` with `.` dropped and `..` applied lexically (never above `/`).
fn normalize(path: &Path) -> PathBuf {
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

/// The text of the file at `path`, from 1-based `line` (default 1; 0 counts
/// as 1) and at most `limit` lines (default all). Line endings are kept as
/// they are in the file; a start past the end gives an empty string.
pub fn read_text(path: &Path, line: Option<u32>, limit: Option<u32>) -> Result<String, FsError> {
    let io_error = |source: io::Error| match source.kind() {
        io::ErrorKind::NotFound => FsError::NotFound {
            path: path.to_path_buf(),
        },
        io::ErrorKind::IsADirectory => FsError::IsDirectory {
            path: path.to_path_buf(),
        },
        _ => FsError::Io {
            path: path.to_path_buf(),
            source,
        },
    };
    let metadata = fs::metadata(path).map_err(io_error)?;
    if metadata.is_dir() {
        return Err(FsError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    if !metadata.is_file() {
        return Err(FsError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    let bytes = fs::read(path).map_err(io_error)?;
    let text = String::from_utf8(bytes).map_err(|_| FsError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    if line.is_none_or(|l| l <= 1) && limit.is_none() {
        return Ok(text);
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1)) as usize;
    let take = limit.map_or(usize::MAX, |l| l as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// What [`write_text`] replaced, so the caller can show a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The file's text before the write, when it existed and was UTF-8.
    pub previous: Option<String>,
    /// The file did not exist before.
    pub created: bool,
}

/// Write `content` to `path` atomically: missing parent directories are
/// created, the text goes to a temporary file in the same directory which
/// is flushed to disk and renamed over the target, so a reader sees the old
/// or the new file, never half of one. An existing file keeps its
/// permission bits; a new one gets the default (0o666 less the umask).
///
/// `path` should come from [`resolve`]: a symlink given here is replaced by
/// a regular file rather than followed.
pub fn write_text(path: &Path, content: &str) -> Result<WriteOutcome, FsError> {
    let io_error = |source: io::Error| FsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(FsError::IsDirectory {
            path: path.to_path_buf(),
        });
    };
    fs::create_dir_all(parent).map_err(io_error)?;

    let (previous, permissions, created) = match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(FsError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        Ok(metadata) => {
            let previous = if metadata.is_file() {
                fs::read(path)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
            } else {
                None
            };
            (previous, Some(metadata.permissions()), false)
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => (None, None, true),
        Err(error) => return Err(io_error(error)),
    };

    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".warden-{}.tmp", uuid::Uuid::new_v4().simple()));
    let temp = parent.join(temp_name);
    let result = write_and_rename(&temp, path, content, permissions);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(io_error)?;
    // Make the rename itself durable; best effort (not every filesystem
    // lets a directory be synced).
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(WriteOutcome { previous, created })
}

fn write_and_rename(
    temp: &Path,
    target: &Path,
    content: &str,
    permissions: Option<fs::Permissions>,
) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(temp)?;
    if let Some(permissions) = permissions {
        // Set explicitly: the mode given to open is masked by the umask.
        file.set_permissions(permissions)?;
    }
    file.write_all(content.as_bytes())?;
    file.sync_all()?;
    drop(file);
    fs::rename(temp, target)
}

/// The file's current text, for a diff preview: `None` when it does not
/// exist, is not UTF-8 or cannot be read.
pub fn current_text(path: &Path) -> Option<String> {
    if !fs::metadata(path).ok()?.is_file() {
        return None;
    }
    fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    use pretty_assertions::assert_eq;

    use super::*;

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
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f.txt");
        fs::write(&path, "one\r\ntwo\nthree\nfour").expect("write");
        assert_eq!(
            read_text(&path, None, None).expect("all"),
            "one\r\ntwo\nthree\nfour"
        );
        assert_eq!(
            read_text(&path, Some(1), Some(2)).expect("first two"),
            "one\r\ntwo\n"
        );
        assert_eq!(
            read_text(&path, Some(3), None).expect("from 3"),
            "three\nfour"
        );
        assert_eq!(read_text(&path, Some(2), Some(1)).expect("line 2"), "two\n");
        assert_eq!(read_text(&path, None, Some(1)).expect("limit"), "one\r\n");
        assert_eq!(read_text(&path, Some(9), None).expect("past end"), "");
        assert_eq!(
            read_text(&path, Some(0), Some(1)).expect("0 as 1"),
            "one\r\n"
        );
    }

    #[test]
    fn read_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.txt");
        let err = read_text(&missing, None, None).expect_err("missing");
        assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("does not exist"));

        let err = read_text(dir.path(), None, None).expect_err("dir");
        assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");

        let binary = dir.path().join("bin");
        fs::write(&binary, [0x66, 0x6f, 0xff, 0xfe, 0x00]).expect("write");
        let err = read_text(&binary, None, None).expect_err("binary");
        assert!(matches!(err, FsError::NotUtf8 { .. }), "{err:?}");
        assert!(err.to_string().contains("not valid UTF-8"));
    }

    #[test]
    fn write_replaces_atomically_and_keeps_the_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f.txt");
        fs::write(&path, "old\n").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");

        let outcome = write_text(&path, "new\n").expect("write_text");
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
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
    }

    #[test]
    fn write_creates_parent_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b/c.txt");
        let outcome = write_text(&path, "hello").expect("write_text");
        assert_eq!(
            outcome,
            WriteOutcome {
                previous: None,
                created: true
            }
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "hello");
        assert_eq!(current_text(&path).as_deref(), Some("hello"));
        assert_eq!(current_text(&dir.path().join("nope")), None);
    }

    #[test]
    fn write_over_binary_has_no_previous_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bin");
        fs::write(&path, [0xff, 0xfe]).expect("write");
        let outcome = write_text(&path, "text").expect("write_text");
        assert_eq!(
            outcome,
            WriteOutcome {
                previous: None,
                created: false
            }
        );
        let err = write_text(dir.path(), "x").expect_err("dir");
        assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");
    }
}

//! The rules a profile gives the kernel: which paths may be read, written
//! or only listed ([`grants`]), walking `/` around the hidden paths.

use std::path::{Path, PathBuf};

use super::{DEV_READABLE, DEV_WRITABLE, Profile, SandboxMode};

/// What a rule allows beneath its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Only listing: a directory that holds a hidden path.
    List,
    /// Reading and running.
    Read,
    /// Reading, running, creating, writing, removing.
    Write,
}

/// One rule: `access` beneath `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: Access,
}

/// One entry of a directory, as the rules need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    /// A symbolic link: never a rule of its own (access through it is
    /// checked where it leads).
    pub symlink: bool,
}

/// Reads directories for [`grants`] (the real file system, or a table in tests).
pub trait Lister {
    /// The entries of `dir` (none when it cannot be read).
    fn entries(&self, dir: &Path) -> Vec<Entry>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Lister for RealFs {
    fn entries(&self, dir: &Path) -> Vec<Entry> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        read.flatten()
            .map(|e| Entry {
                path: e.path(),
                symlink: e.file_type().is_ok_and(|t| t.is_symlink()),
            })
            .collect()
    }
}

/// The rules of `profile` (in `mode`, a private temporary directory
/// `tmp` writable): reads everywhere but the hidden paths and most of
/// `/dev`, writes in the workspace (unless read-only), the state
/// directories, `tmp` and the `/dev` files of [`DEV_WRITABLE`]. Paths are
/// taken as they are (callers pass canonical ones: [`canonical`](super::canonical)).
pub fn grants(profile: &Profile, tmp: Option<&Path>, fs: &dyn Lister) -> Vec<Grant> {
    let mut out = Vec::new();
    let hidden = &profile.hidden;
    // `/dev` is covered file by file below.
    let mut read_hidden = hidden.clone();
    read_hidden.push(PathBuf::from("/dev"));
    cover(Path::new("/"), Access::Read, &read_hidden, fs, &mut out);
    for dev in DEV_READABLE {
        cover(Path::new(dev), Access::Read, hidden, fs, &mut out);
    }
    let mut writable: Vec<&Path> = DEV_WRITABLE.iter().map(Path::new).collect();
    if profile.mode == SandboxMode::WorkspaceWrite {
        writable.extend(profile.workspace.iter().map(PathBuf::as_path));
    }
    writable.extend(profile.writable.iter().map(PathBuf::as_path));
    writable.extend(tmp);
    // The read-only config is readable (above) and, like a secret, no
    // write rule reaches it: its directory is listable, its other entries
    // writable one by one.
    let mut unwritable = hidden.clone();
    unwritable.extend(profile.read_only.iter().cloned());
    for path in writable {
        cover(path, Access::Write, &unwritable, fs, &mut out);
    }
    out
}

/// Allow `access` beneath `path`, except beneath a hidden path: a
/// directory holding one is only listable, and each of its other entries
/// is covered the same way.
fn cover(path: &Path, access: Access, hidden: &[PathBuf], fs: &dyn Lister, out: &mut Vec<Grant>) {
    if hidden.iter().any(|h| path.starts_with(h)) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(path)) {
        out.push(Grant {
            path: path.to_path_buf(),
            access,
        });
        return;
    }
    out.push(Grant {
        path: path.to_path_buf(),
        access: Access::List,
    });
    let mut entries = fs.entries(path);
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    for entry in entries {
        if !entry.symlink {
            cover(&entry.path, access, hidden, fs, out);
        }
    }
}

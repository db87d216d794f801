//! A directory of the agent's config that runs programs (gemini's and
//! qwen's `extensions/`, opencode's `plugin/`), as it was when the agent
//! started: every entry, its bytes and mode, symlinks as symlinks (never
//! followed), so that [`super::guard::Guard`] can put the whole directory
//! back.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The most a guarded directory may hold: a larger one is not guarded
/// (and said so).
pub const LIMIT: u64 = 64 << 20;

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A file: its bytes and permission bits.
    File { bytes: Vec<u8>, mode: u32 },
    /// A symlink and where it points.
    Link(PathBuf),
}

/// Every entry beneath a directory, by its path from it, in order.
pub type Tree = Vec<(PathBuf, Entry)>;

/// The tree at `root` (`None`: nothing there); an error when it is not a
/// directory, cannot be read, or holds more than `limit` bytes.
pub fn read(root: &Path, limit: u64) -> std::io::Result<Option<Tree>> {
    match std::fs::symlink_metadata(root) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
        Ok(meta) if !meta.is_dir() => {
            return Err(std::io::Error::other("not a directory"));
        }
        Ok(_) => {}
    }
    let mut tree = Vec::new();
    let mut total = 0;
    walk(root, Path::new(""), &mut tree, &mut total, limit)?;
    Ok(Some(tree))
}

fn walk(
    root: &Path,
    rel: &Path,
    tree: &mut Tree,
    total: &mut u64,
    limit: u64,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(root.join(rel))?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let rel = rel.join(entry.file_name());
        let path = root.join(&rel);
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_dir() {
            tree.push((rel.clone(), Entry::Dir));
            walk(root, &rel, tree, total, limit)?;
        } else if meta.file_type().is_symlink() {
            tree.push((rel, Entry::Link(std::fs::read_link(&path)?)));
        } else if meta.is_file() {
            *total += meta.len();
            if *total > limit {
                return Err(std::io::Error::other("too large to guard"));
            }
            let bytes = read_regular(&path)?;
            let mode = meta.permissions().mode() & 0o777;
            tree.push((rel, Entry::File { bytes, mode }));
        }
    }
    Ok(())
}

/// Make `tree` at `root`, which must not exist.
pub fn write(root: &Path, tree: &Tree) -> std::io::Result<()> {
    std::fs::create_dir(root)?;
    for (rel, entry) in tree {
        let path = root.join(rel);
        match entry {
            Entry::Dir => std::fs::create_dir(&path)?,
            Entry::Link(target) => std::os::unix::fs::symlink(target, &path)?,
            Entry::File { bytes, mode } => {
                std::fs::write(&path, bytes)?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))?;
            }
        }
    }
    Ok(())
}

/// Whether `now` is `before` with only directories added, and files that
/// hold an empty JSON object or array: they change nothing the agent runs
/// (qwen-code makes `skills/` and writes
/// `extensions/extension-enablement.json` as `{}` when it starts).
pub fn only_empty_added(before: &Tree, now: &Tree) -> bool {
    let empty = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| match v {
            serde_json::Value::Object(map) => map.is_empty(),
            serde_json::Value::Array(list) => list.is_empty(),
            _ => false,
        })
    };
    before.iter().all(|entry| now.contains(entry))
        && now
            .iter()
            .filter(|entry| !before.contains(entry))
            .all(|(_, entry)| match entry {
                Entry::Dir => true,
                Entry::File { bytes, .. } => empty(bytes),
                Entry::Link(_) => false,
            })
}

/// The bytes of the regular file at `path`, read without blocking on what
/// an agent may have put there instead (a FIFO, a device): opened
/// non-blocking and checked on the open file, not on its name. Follows a
/// symbolic link as `std::fs::read` does; where that matters, the caller
/// checks for one first.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

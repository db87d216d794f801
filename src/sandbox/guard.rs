//! The agent's config that runs programs later, where the kernel cannot
//! keep it read-only: the agent writes new files beside it (atomic
//! replaces of its state), so its directory must stay writable. warden
//! keeps a copy of each when the agent starts and puts it back when the
//! agent exits, keeping what the agent wrote beside it:
//! - a file, whole (unless it says the same, reformatted);
//! - in a file the agent keeps its own bookkeeping in (`~/.claude.json`),
//!   only the keys that run programs or widen what runs unasked
//!   ([`CODE_KEYS`]), at the top and in each of its `projects`;
//! - a directory of plugins, extensions or commands, whole.
//!
//! The copies are on disk, in a directory of warden's state hidden from
//! every agent, locked (`flock`) while their warden lives: a warden that
//! was killed leaves them unlocked, and the next warden that confines an
//! agent puts back what they hold ([`sweep_once`]).

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The keys of `~/.claude.json` that make a later `claude` run programs
/// (MCP servers, the workspace's `.mcp.json` servers enabled) or run tools
/// unasked, at its top and in each of its `projects`.
pub const CODE_KEYS: &[&str] = &[
    "mcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
    "allowedTools",
    "hooks",
    "env",
];

/// Files whose [`CODE_KEYS`] alone are guarded.
const KEYED_FILES: &[&str] = &[".claude.json"];

/// At most this many entries, and bytes, of one guarded directory; a
/// larger one is not guarded (said in the log).
const DIR_ENTRIES: usize = 4096;
const DIR_BYTES: u64 = 64 << 20;

/// What is guarded of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum How {
    File,
    Keys,
    Dir,
}

/// One guarded path, as the copy's manifest says it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Item {
    path: PathBuf,
    how: How,
    /// The copy's name in the snapshot directory; `None`: it was absent.
    copy: Option<String>,
}

/// The agent's guarded config as it was when it started.
#[derive(Debug, Default)]
pub struct Guard {
    /// The snapshot directory, locked while this guard lives.
    dir: Option<(PathBuf, OwnedFd)>,
    items: Vec<Item>,
}

/// Where the snapshots live: warden's state directory (hidden from agents:
/// [`snapshots_dir`] is one of warden's own files).
pub fn snapshots_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "warden")
        .and_then(|dirs| dirs.state_dir().map(|d| d.join("guards")))
}

impl Guard {
    /// Copies of `paths` now, under warden's state directory.
    pub fn take(paths: &[PathBuf]) -> Guard {
        if paths.is_empty() {
            return Guard::default();
        }
        match snapshots_dir() {
            Some(parent) => Self::take_in(&parent, paths),
            None => {
                tracing::warn!("no state directory: the agent's config is not guarded");
                Guard::default()
            }
        }
    }

    /// Copies of `paths` now, in a new snapshot directory under `parent`.
    /// A path that cannot be read, or a directory too large, is left out.
    pub fn take_in(parent: &Path, paths: &[PathBuf]) -> Guard {
        let made = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .and_then(|()| {
                let dir = parent.join(uuid::Uuid::new_v4().simple().to_string());
                std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
                match super::tmpdir::lock(&dir, false)? {
                    Some(fd) => Ok((dir, fd)),
                    None => Err(std::io::Error::other("its lock is taken")),
                }
            });
        let (dir, fd) = match made {
            Ok(made) => made,
            Err(err) => {
                tracing::warn!(parent = %parent.display(), "the agent's config is not guarded: {err}");
                return Guard::default();
            }
        };
        let mut items = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            if let Some(item) = snapshot(path, &dir, &i.to_string()) {
                items.push(item);
            }
        }
        let manifest = serde_json::to_vec(&items).unwrap_or_default();
        if let Err(err) = std::fs::write(dir.join("manifest.json"), manifest) {
            tracing::warn!(dir = %dir.display(), "guard manifest not written: {err}");
        }
        Guard {
            dir: Some((dir, fd)),
            items,
        }
    }

    /// Put back what changed since [`Guard::take`] (the changed one kept
    /// beside it as `NAME.warden-rejected-TIME`); one line for each.
    pub fn restore(&self) -> Vec<String> {
        match &self.dir {
            Some((dir, _)) => restore_items(dir, &self.items),
            None => Vec::new(),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some((dir, _)) = &self.dir
            && let Err(err) = std::fs::remove_dir_all(dir)
        {
            tracing::debug!(dir = %dir.display(), "guard snapshot not removed: {err}");
        }
    }
}

/// Copy `path` into `dir` as `name`; its manifest item.
fn snapshot(path: &Path, dir: &Path, name: &str) -> Option<Item> {
    let keyed = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| KEYED_FILES.contains(&n));
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let how = if keyed { How::Keys } else { How::File };
            return Some(Item {
                path: path.to_path_buf(),
                how,
                copy: None,
            });
        }
        Err(err) => {
            tracing::warn!(path = %path.display(), "not guarded: {err}");
            return None;
        }
    };
    let copy = dir.join(name);
    let (how, done) = if meta.is_dir() {
        let mut budget = (DIR_ENTRIES, DIR_BYTES);
        (How::Dir, copy_tree(path, &copy, &mut budget))
    } else if meta.is_file() {
        let how = if keyed { How::Keys } else { How::File };
        (how, std::fs::copy(path, &copy).map(|_| ()))
    } else {
        // A symlink or a special file: put back as absent.
        return Some(Item {
            path: path.to_path_buf(),
            how: How::File,
            copy: None,
        });
    };
    match done {
        Ok(()) => Some(Item {
            path: path.to_path_buf(),
            how,
            copy: Some(name.to_string()),
        }),
        Err(err) => {
            tracing::warn!(path = %path.display(), "not guarded: {err}");
            None
        }
    }
}

/// Copy the tree `from` to `to`: directories, files (their mode), symlinks
/// (as symlinks, never followed), within `budget` (entries, bytes).
fn copy_tree(from: &Path, to: &Path, budget: &mut (usize, u64)) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if budget.0 == 0 {
            return Err(std::io::Error::other("too many entries"));
        }
        budget.0 -= 1;
        let meta = std::fs::symlink_metadata(entry.path())?;
        let dest = to.join(entry.file_name());
        if meta.is_dir() {
            copy_tree(&entry.path(), &dest, budget)?;
        } else if meta.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &dest)?;
        } else if meta.is_file() {
            budget.1 = budget
                .1
                .checked_sub(meta.len())
                .ok_or_else(|| std::io::Error::other("too large"))?;
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

/// Whether the trees `a` and `b` hold the same: the same names, kinds,
/// contents, executable bits and symlink targets.
fn same_tree(a: &Path, b: &Path) -> bool {
    let list = |dir: &Path| -> Option<Vec<(std::ffi::OsString, std::fs::Metadata)>> {
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .ok()?
            .map(|e| {
                let e = e.ok()?;
                Some((e.file_name(), std::fs::symlink_metadata(e.path()).ok()?))
            })
            .collect::<Option<_>>()?;
        out.sort_by(|x, y| x.0.cmp(&y.0));
        Some(out)
    };
    let (Some(left), Some(right)) = (list(a), list(b)) else {
        return false;
    };
    left.len() == right.len()
        && left.iter().zip(&right).all(|((n1, m1), (n2, m2))| {
            let (p1, p2) = (a.join(n1), b.join(n2));
            n1 == n2
                && if m1.is_dir() {
                    m2.is_dir() && same_tree(&p1, &p2)
                } else if m1.is_symlink() {
                    m2.is_symlink() && std::fs::read_link(&p1).ok() == std::fs::read_link(&p2).ok()
                } else {
                    m2.is_file()
                        && m1.mode() & 0o111 == m2.mode() & 0o111
                        && std::fs::read(&p1).ok() == std::fs::read(&p2).ok()
                }
        })
}

/// Put back `items`, whose copies are in `dir`; one line for each put back.
fn restore_items(dir: &Path, items: &[Item]) -> Vec<String> {
    let mut said = Vec::new();
    for item in items {
        let copy = item.copy.as_ref().map(|name| dir.join(name));
        let line = match item.how {
            How::File | How::Keys => {
                let before = match &copy {
                    Some(copy) => match std::fs::read(copy) {
                        Ok(bytes) => Some(bytes),
                        Err(err) => {
                            tracing::warn!(copy = %copy.display(), "guard copy unreadable: {err}");
                            continue;
                        }
                    },
                    None => None,
                };
                if item.how == How::Keys {
                    restore_keys(&item.path, before.as_deref())
                } else {
                    restore_file(&item.path, before.as_deref())
                }
            }
            How::Dir => restore_dir(&item.path, copy.as_deref()),
        };
        if let Some(line) = line {
            tracing::warn!("{line}");
            said.push(line);
        }
    }
    said
}

/// What is at `path` now, never through a symlink: `None` absent,
/// `Some(None)` something that is not a readable file.
fn read_now(path: &Path) -> Option<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Ok(meta) if meta.is_file() => Some(std::fs::read(path).ok()),
        _ => Some(None),
    }
}

/// Put back the file `path` as `before` (`None`: absent) when it changed.
fn restore_file(path: &Path, before: Option<&[u8]>) -> Option<String> {
    // Never read through a symlink the agent made: it may lead to a secret
    // it cannot read, which would land beside it.
    if before.is_none() && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        // A directory made where nothing was (a plugin folder): aside, whole.
        return restore_dir(path, None);
    }
    let now = read_now(path);
    let unchanged = match (&now, before) {
        (None, None) => true,
        (Some(Some(now)), Some(before)) => same_settings(path, before, now),
        _ => false,
    };
    if unchanged {
        return None;
    }
    let kept = now.flatten().and_then(|bytes| keep_rejected(path, &bytes));
    let put_back = match before {
        Some(bytes) => replace(path, bytes),
        None => remove(path),
    };
    Some(said(path, "", put_back, kept))
}

/// Put back the [`CODE_KEYS`] of the JSON file `path` as they were in
/// `before`, keeping every other key as the agent left it. A file that is
/// no JSON object now is put back whole.
fn restore_keys(path: &Path, before: Option<&[u8]>) -> Option<String> {
    let now = read_now(path);
    let parse = |bytes: &[u8]| {
        serde_json::from_slice::<Value>(bytes)
            .ok()
            .filter(Value::is_object)
    };
    let before_doc = before.map_or(Some(Value::Object(Default::default())), parse);
    let (Some(Some(bytes)), Some(before_doc)) = (&now, before_doc) else {
        return match now {
            None => None,
            Some(_) => restore_file(path, before),
        };
    };
    let Some(mut doc) = parse(bytes) else {
        return restore_file(path, before);
    };
    let mut changed = put_keys(&mut doc, &before_doc);
    let projects = |v: &Value| v.get("projects").and_then(Value::as_object).cloned();
    if let Some(now_projects) = doc.get_mut("projects").and_then(Value::as_object_mut) {
        let before_projects = projects(&before_doc).unwrap_or_default();
        for (name, project) in now_projects.iter_mut() {
            let empty = Value::Object(Default::default());
            let was = before_projects.get(name).unwrap_or(&empty);
            changed |= put_keys(project, was);
        }
    }
    if !changed {
        return None;
    }
    let kept = keep_rejected(path, bytes);
    let mut text = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    text.push(b'\n');
    Some(said(
        path,
        "what runs programs in ",
        replace(path, &text),
        kept,
    ))
}

/// Set the [`CODE_KEYS`] of the object `now` to those of `before`; whether
/// any changed.
fn put_keys(now: &mut Value, before: &Value) -> bool {
    let Some(map) = now.as_object_mut() else {
        return false;
    };
    let mut changed = false;
    for key in CODE_KEYS {
        let was = before.get(*key);
        if map.get(*key) == was {
            continue;
        }
        changed = true;
        match was {
            Some(value) => map.insert((*key).to_string(), value.clone()),
            None => map.remove(*key),
        };
    }
    changed
}

/// Put back the directory `path` from `copy` (`None`: absent) when it
/// changed; the agent's version moves beside it.
fn restore_dir(path: &Path, copy: Option<&Path>) -> Option<String> {
    let now = std::fs::symlink_metadata(path).ok();
    let unchanged = match (&now, copy) {
        (None, None) => true,
        (Some(meta), Some(copy)) => meta.is_dir() && same_tree(path, copy),
        _ => false,
    };
    if unchanged {
        return None;
    }
    let kept = now.and_then(|_| {
        let aside = rejected_name(path)?;
        std::fs::rename(path, &aside).ok().map(|()| aside)
    });
    if std::fs::symlink_metadata(path).is_ok() {
        let err = std::io::Error::other("it could not be moved aside");
        return Some(said(path, "", Err(err), None));
    }
    let put_back = match copy {
        Some(copy) => copy_tree(copy, path, &mut (usize::MAX, u64::MAX))
            .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))),
        None => Ok(()),
    };
    Some(said(path, "", put_back, kept))
}

/// The line that says what was put back.
fn said(path: &Path, what: &str, put_back: std::io::Result<()>, kept: Option<PathBuf>) -> String {
    match (put_back, kept) {
        (Ok(()), Some(kept)) => format!(
            "warden put back {what}{}, which the agent changed (its version: {})",
            path.display(),
            kept.display()
        ),
        (Ok(()), None) => format!(
            "warden put back {what}{}, which the agent changed",
            path.display()
        ),
        (Err(err), _) => format!(
            "the agent changed {what}{} and warden could not put it back: {err}",
            path.display()
        ),
    }
}

/// Put back what the snapshots under `parent` that no living warden holds
/// keep (their warden was killed), then remove them; what was said.
pub fn sweep(parent: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    // SAFETY: a plain query.
    let uid = unsafe { libc::geteuid() };
    let mut said = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let Ok(Some(fd)) = super::tmpdir::lock(&dir, false) else {
            continue;
        };
        if !super::tmpdir::same(&dir, &fd) {
            continue;
        }
        let items: Vec<Item> = std::fs::read(dir.join("manifest.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        said.extend(restore_items(&dir, &items));
        if let Err(err) = std::fs::remove_dir_all(&dir) {
            tracing::warn!(dir = %dir.display(), "guard snapshot not removed: {err}");
        }
    }
    said
}

/// [`sweep`] of warden's snapshots, once per process; what it said.
pub fn sweep_once() -> Vec<String> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut said = Vec::new();
    ONCE.call_once(|| {
        if let Some(parent) = snapshots_dir() {
            said = sweep(&parent);
        }
    });
    said
}

/// Keys an agent may change in its own config: its format's version
/// (qwen and gemini migrate their settings when they start).
const BENIGN_KEYS: &[&str] = &["$version"];

/// Whether `now` says the same as `before`: the same bytes, or the same
/// JSON or TOML (by `path`'s extension) once reformatted and without
/// [`BENIGN_KEYS`]. Anything that does not parse must be the same bytes.
fn same_settings(path: &Path, before: &[u8], now: &[u8]) -> bool {
    if before == now {
        return true;
    }
    let parse = |bytes: &[u8]| -> Option<serde_json::Value> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut value = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str::<serde_json::Value>(text).ok()?,
            Some("toml") => serde_json::to_value(text.parse::<toml::Table>().ok()?).ok()?,
            _ => return None,
        };
        if let Some(map) = value.as_object_mut() {
            for key in BENIGN_KEYS {
                map.remove(*key);
            }
        }
        Some(value)
    };
    match (parse(before), parse(now)) {
        (Some(before), Some(now)) => before == now,
        _ => false,
    }
}

/// A new name beside `path` for the agent's version of it.
fn rejected_name(path: &Path) -> Option<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut name = path.file_name()?.to_os_string();
    name.push(format!(".warden-rejected-{stamp}"));
    Some(path.with_file_name(name))
}

/// The agent's version of `path`, beside it under a new name.
fn keep_rejected(path: &Path, bytes: &[u8]) -> Option<PathBuf> {
    let kept = rejected_name(path)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&kept)
        .ok()?;
    file.write_all(bytes).ok()?;
    Some(kept)
}

/// Replace `path` by a new file holding `bytes` (a rename: a symlink or
/// directory the agent put there is replaced, never followed).
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("no file name"))?
        .to_os_string();
    name.push(format!(
        ".warden-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    ));
    let tmp = path.with_file_name(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(path)?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Remove what the agent made at `path`.
fn remove(path: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;

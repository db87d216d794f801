//! The agent's config files that run programs later, where the kernel
//! cannot keep them read-only: the agent writes new files beside them
//! (atomic replaces of its state), so their directory must stay writable.
//! warden keeps a copy of each when the agent starts and puts it back when
//! the agent exits, keeping what the agent wrote beside it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Each guarded file as it was when the agent started (`None`: absent).
#[derive(Debug, Default)]
pub struct Guard {
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Guard {
    /// Copies of `paths` now. A path that is a directory, or that cannot
    /// be read, is left out.
    pub fn take(paths: &[PathBuf]) -> Guard {
        let files = paths
            .iter()
            .filter(|path| !path.is_dir())
            .filter_map(|path| match std::fs::read(path) {
                Ok(bytes) => Some((path.clone(), Some(bytes))),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    Some((path.clone(), None))
                }
                Err(err) => {
                    tracing::warn!(path = %path.display(), "not guarded: {err}");
                    None
                }
            })
            .collect();
        Guard { files }
    }

    /// Put back every file that changed since [`Guard::take`] (the changed
    /// one kept as `NAME.warden-rejected-TIME`); one line for each.
    pub fn restore(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, before) in &self.files {
            // Never read through a symlink the agent made: it may lead to
            // a secret it cannot read, which would land beside it.
            let now = match std::fs::symlink_metadata(path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                Ok(meta) if meta.is_file() => Some(std::fs::read(path).ok()),
                _ => Some(None),
            };
            let unchanged = match (&now, before) {
                (None, None) => true,
                (Some(Some(now)), Some(before)) => same_settings(path, before, now),
                _ => false,
            };
            if unchanged {
                continue;
            }
            let kept = now.flatten().and_then(|bytes| keep_rejected(path, &bytes));
            let put_back = match before {
                Some(bytes) => replace(path, bytes),
                None => remove(path),
            };
            let line = match (put_back, kept) {
                (Ok(()), Some(kept)) => format!(
                    "warden put back {}, which the agent changed (its version: {})",
                    path.display(),
                    kept.display()
                ),
                (Ok(()), None) => format!(
                    "warden put back {}, which the agent changed",
                    path.display()
                ),
                (Err(err), _) => format!(
                    "the agent changed {} and warden could not put it back: {err}",
                    path.display()
                ),
            };
            tracing::warn!("{line}");
            said.push(line);
        }
        said
    }
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

/// The agent's version of `path`, beside it under a new name.
fn keep_rejected(path: &Path, bytes: &[u8]) -> Option<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut name = path.file_name()?.to_os_string();
    name.push(format!(".warden-rejected-{stamp}"));
    let kept = path.with_file_name(name);
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
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_put_back_and_the_agents_version_kept_beside_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("config.toml");
        let made = dir.path().join("settings.json");
        let same = dir.path().join("same.toml");
        let linked = dir.path().join("linked.toml");
        std::fs::write(&config, "model = \"x\"\n").expect("write");
        std::fs::write(&same, "a\n").expect("write");
        std::fs::write(&linked, "b\n").expect("write");
        let guard = Guard::take(&[config.clone(), made.clone(), same.clone(), linked.clone()]);
        std::fs::write(&config, "notify = [\"sh\", \"-c\", \"evil\"]\n").expect("write");
        std::fs::write(&made, "{\"hooks\": {}}").expect("write");
        let target = dir.path().join("bashrc");
        std::fs::write(&target, "b\n").expect("write");
        std::fs::remove_file(&linked).expect("rm");
        std::os::unix::fs::symlink(&target, &linked).expect("symlink");
        let said = guard.restore();
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(
            std::fs::read_to_string(&config).expect("read"),
            "model = \"x\"\n"
        );
        assert!(!made.exists(), "made by the agent: removed");
        assert!(
            std::fs::symlink_metadata(&linked).is_ok_and(|m| m.is_file()),
            "a symlink is replaced, not followed"
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "b\n");
        let rejected: Vec<String> = std::fs::read_dir(dir.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("warden-rejected"))
            .collect();
        // The symlink's target is never copied beside it.
        assert_eq!(rejected.len(), 2, "{rejected:?}");
        assert!(said[0].contains("put back"), "{said:?}");
        assert_eq!(
            guard.restore(),
            Vec::<String>::new(),
            "nothing changed since"
        );
    }

    #[test]
    fn a_reformatted_or_migrated_config_stays_and_a_new_hook_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = dir.path().join("settings.json");
        let config = dir.path().join("config.toml");
        std::fs::write(&settings, "{\"model\": {\"name\": \"m\"}}").expect("write");
        std::fs::write(&config, "model = \"m\"\n").expect("write");
        let guard = Guard::take(&[settings.clone(), config.clone()]);
        let migrated = "{\n  \"model\": {\n    \"name\": \"m\"\n  },\n  \"$version\": 4\n}";
        std::fs::write(&settings, migrated).expect("write");
        std::fs::write(&config, "model   = \"m\"\n").expect("write");
        assert_eq!(guard.restore(), Vec::<String>::new());
        assert_eq!(std::fs::read_to_string(&settings).expect("read"), migrated);
        std::fs::write(
            &settings,
            "{\"model\": {\"name\": \"m\"}, \"hooks\": {\"Stop\": [\"sh\"]}}",
        )
        .expect("write");
        std::fs::write(&config, "model = \"m\"\nnotify = [\"sh\"]\n").expect("write");
        assert_eq!(guard.restore().len(), 2);
        assert_eq!(
            std::fs::read_to_string(&config).expect("read"),
            "model = \"m\"\n"
        );
    }
}

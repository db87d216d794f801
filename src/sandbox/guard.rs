//! The agent's config files that run programs later, where the kernel
//! cannot keep them read-only: the agent writes new files beside them
//! (atomic replaces of its state), so their directory must stay writable.
//! warden keeps a copy of each when the agent starts and puts it back when
//! the agent exits, keeping what the agent wrote beside it; a directory of
//! such config (`extensions/`, `plugin/`) is copied whole
//! ([`super::guard_tree`]); of a settings file the agent rewrites for its
//! own bookkeeping (`~/.claude.json`), only the keys that run programs are
//! put back ([`super::guard_keys`]). A warden that was killed has its
//! guards put back at the next start, from their journals.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::guard_keys::{self, Keyed};
use super::guard_tree::{self, Tree};

/// The agent's config that runs programs as it was when the agent
/// started: put back when it exits, or, when warden was killed, at the
/// next start ([`recover`]: each guard is kept in a journal in warden's own
/// data directory, hidden from every agent, until it has put back).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Guard {
    /// Each guarded file (`None`: absent).
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
    /// Each guarded directory (`None`: absent).
    #[serde(default)]
    dirs: Vec<(PathBuf, Option<Tree>)>,
    /// Each settings file of which only the keys that run programs are
    /// guarded, and those keys.
    #[serde(default)]
    keyed: Vec<(PathBuf, Keyed)>,
    /// Where this guard is kept until it has put back (and its lock,
    /// held while the warden that took it lives).
    #[serde(skip)]
    journal: Option<(PathBuf, std::fs::File)>,
}

impl Guard {
    /// Copies of `paths` now: files, and directories with all they hold.
    /// A path that cannot be read is left out.
    pub fn take(paths: &[PathBuf]) -> Guard {
        let mut guard = Guard::default();
        for path in paths {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                match guard_tree::read(path, guard_tree::LIMIT) {
                    Ok(tree) => guard.dirs.push((path.clone(), tree)),
                    Err(err) => tracing::warn!(path = %path.display(), "not guarded: {err}"),
                }
                continue;
            }
            match guard_tree::read_regular(path) {
                Ok(bytes) => guard.files.push((path.clone(), Some(bytes))),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    guard.files.push((path.clone(), None));
                }
                // A FIFO or a device where a config goes (read, it would
                // block warden): no config, so it goes when the agent ends.
                Err(_) if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) => {
                    guard.files.push((path.clone(), None));
                }
                Err(err) => tracing::warn!(path = %path.display(), "not guarded: {err}"),
            }
        }
        guard
    }

    /// The guard of `profile` (its guarded files and directories, and the
    /// keys that run programs of its keyed settings), after putting back
    /// what a killed warden's guards left, kept in a journal in `journals`
    /// (warden's data directory; `None`: no journal).
    pub fn of(profile: &super::Profile, journals: Option<&Path>) -> Guard {
        if let Some(dir) = journals {
            for line in recover(dir) {
                tracing::warn!("{line}");
            }
        }
        let mut guard = Guard::take(&profile.guarded);
        for path in &profile.guarded_keys {
            let keys = guard_tree::read_regular(path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .map(|doc| guard_keys::code_keys(&doc))
                .unwrap_or_default();
            guard.keyed.push((path.clone(), keys));
        }
        if let Some(dir) = journals {
            guard.journal = keep(dir, &guard);
        }
        guard
    }

    /// Let go of a guard whose agent never started: nothing can have
    /// changed, and its journal goes (no later start recovers it).
    pub fn discard(self) {
        if let Some((path, _)) = &self.journal {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Put back every file and directory that changed since
    /// [`Guard::take`] (the changed one kept as `NAME.warden-rejected-TIME`),
    /// and the keys that run programs of each keyed file; one line for each.
    pub fn restore(&self) -> Vec<String> {
        let mut said = self.restore_files();
        said.extend(self.restore_dirs());
        said.extend(self.restore_keys());
        if let Some((path, _)) = &self.journal {
            let _ = std::fs::remove_file(path);
        }
        said
    }

    fn restore_dirs(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, before) in &self.dirs {
            let now = guard_tree::read(path, guard_tree::LIMIT).ok();
            let benign = match (&now, before) {
                (Some(now), before) if now == before => true,
                (Some(Some(now)), Some(before)) => guard_tree::only_empty_added(before, now),
                (Some(Some(now)), None) => guard_tree::only_empty_added(&Vec::new(), now),
                _ => false,
            };
            if benign {
                continue;
            }
            let kept = std::fs::symlink_metadata(path)
                .is_ok()
                .then(|| {
                    let aside = rejected_name(path)?;
                    std::fs::rename(path, &aside).ok().map(|()| aside)
                })
                .flatten();
            let put_back = match before {
                Some(tree) => guard_tree::write(path, tree),
                None => Ok(()),
            };
            said.push(put_back_line(path, put_back, kept));
        }
        said
    }

    fn restore_keys(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, before) in &self.keyed {
            let meta = std::fs::symlink_metadata(path);
            let (now, kept) = match &meta {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    if before.is_empty() {
                        continue;
                    }
                    (serde_json::json!({}), None)
                }
                Ok(meta) if meta.is_file() => {
                    let Ok(bytes) = guard_tree::read_regular(path) else {
                        continue;
                    };
                    // What does not parse runs nothing: the agent reads
                    // no server from it either.
                    let Ok(now) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                        continue;
                    };
                    if guard_keys::put_back(&now, before) == now {
                        continue;
                    }
                    let kept = keep_rejected(path, &bytes);
                    (now, kept)
                }
                _ => {
                    // A symlink or a directory: set aside, never followed.
                    let kept = rejected_name(path)
                        .and_then(|aside| std::fs::rename(path, &aside).ok().map(|()| aside));
                    (serde_json::json!({}), kept)
                }
            };
            let doc = guard_keys::put_back(&now, before);
            let put_back = serde_json::to_vec_pretty(&doc)
                .map_err(std::io::Error::other)
                .and_then(|bytes| replace(path, &bytes))
                .and_then(|()| {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                });
            said.push(put_back_line(path, put_back, kept).replace(
                "which the agent changed",
                "whose MCP servers or hooks the agent changed",
            ));
        }
        said
    }

    fn restore_files(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, before) in &self.files {
            // Never read through a symlink the agent made: it may lead to
            // a secret it cannot read, which would land beside it.
            let now = match std::fs::symlink_metadata(path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                Ok(meta) if meta.is_file() => Some(guard_tree::read_regular(path).ok()),
                _ => Some(None),
            };
            let unchanged = match (&now, before) {
                (None, None) => true,
                // A directory made where nothing was (qwen-code's
                // `skills/`), holding nothing that runs.
                (Some(None), None) => guard_tree::read(path, guard_tree::LIMIT)
                    .ok()
                    .flatten()
                    .is_some_and(|tree| guard_tree::only_empty_added(&Vec::new(), &tree)),
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
            said.push(put_back_line(path, put_back, kept));
        }
        said
    }
}

/// What is said of one put-back.
fn put_back_line(path: &Path, put_back: std::io::Result<()>, kept: Option<PathBuf>) -> String {
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
    line
}

/// Where guards keep their journals: in warden's own data directory,
/// which every agent's sandbox hides.
pub fn journals() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "warden").map(|d| d.data_local_dir().join("guards"))
}

/// Write `guard` to a new journal in `dir`, locked for as long as this
/// warden lives.
fn keep(dir: &Path, guard: &Guard) -> Option<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::create_dir_all(dir).ok()?;
    let name = format!("guard-{}.json", uuid::Uuid::new_v4().simple());
    let path = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).ok()?;
    let bytes = serde_json::to_vec(guard).ok()?;
    let written = file.write_all(&bytes).and_then(|()| file.sync_all());
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), "guard journal not written: {err}");
        let _ = std::fs::remove_file(&path);
        return None;
    }
    Some((path, file))
}

/// Put back what the guards of wardens that were killed kept in `dir`
/// (their journals, which no living warden holds locked); one line for
/// each thing put back.
pub fn recover(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("guard-") || !name.ends_with(".json") {
            continue;
        }
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let free = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive);
        if free.is_err() {
            continue;
        }
        match guard_tree::read_regular(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Guard>(&bytes).ok())
        {
            Some(guard) => said.extend(guard.restore()),
            None => tracing::warn!(path = %path.display(), "unreadable guard journal"),
        }
        let _ = std::fs::remove_file(&path);
    }
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
        .map_or(0, |d| d.as_nanos());
    let mut name = path.file_name()?.to_os_string();
    name.push(format!(".warden-rejected-{stamp}"));
    Some(path.with_file_name(name))
}

/// The agent's version of `path`, beside it under a new name.
/// Readable by the user only: it may hold the agent's sign-in
/// (`~/.claude.json`).
fn keep_rejected(path: &Path, bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let kept = rejected_name(path)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
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

    #[test]
    fn claudes_mcp_servers_go_back_and_its_bookkeeping_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path();
        let file = home.join(".claude.json");
        std::fs::write(
            &file,
            r#"{"numStartups": 1, "projects": {"/w": {"allowedTools": []}}}"#,
        )
        .expect("write");
        let profile = crate::sandbox::Profile {
            guarded_keys: vec![file.clone()],
            ..crate::sandbox::Profile::default()
        };
        let guard = Guard::of(&profile, None);
        // What Claude writes itself, and what an attacker adds.
        std::fs::write(
            &file,
            r#"{"numStartups": 2, "mcpServers": {"x": {"command": "sh", "args": ["-c", "evil"]}},
               "projects": {"/w": {"allowedTools": ["Bash"],
                                   "mcpServers": {"y": {"command": "evil"}}}}}"#,
        )
        .expect("write");
        let said = guard.restore();
        assert_eq!(said.len(), 1, "{said:?}");
        let now: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        assert_eq!(
            now,
            serde_json::json!({"numStartups": 2, "projects": {"/w": {"allowedTools": ["Bash"]}}})
        );
        assert!(guard.restore().is_empty(), "nothing left to put back");
        // The agent's version, which holds Claude's sign-in, is the user's only.
        let kept = std::fs::read_dir(home)
            .expect("ls")
            .flatten()
            .find(|e| e.file_name().to_string_lossy().contains("warden-rejected"))
            .expect("kept aside");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = kept.metadata().expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A symlink swapped in is set aside, never followed.
        let target = home.join("elsewhere.json");
        std::fs::write(&target, r#"{"mcpServers": {"z": {}}}"#).expect("write");
        std::fs::remove_file(&file).expect("rm");
        std::os::unix::fs::symlink(&target, &file).expect("symlink");
        assert_eq!(guard.restore().len(), 1);
        assert!(std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()));
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            r#"{"mcpServers": {"z": {}}}"#
        );
    }

    #[test]
    fn an_extension_the_agent_adds_or_changes_is_taken_away() {
        let dir = tempfile::tempdir().expect("tempdir");
        let extensions = dir.path().join("extensions");
        let plugin = dir.path().join("plugin");
        std::fs::create_dir_all(extensions.join("mine")).expect("mkdir");
        std::fs::write(extensions.join("mine/gemini-extension.json"), "{}").expect("write");
        let guard = Guard::take(&[extensions.clone(), plugin.clone()]);
        assert!(guard.restore().is_empty(), "unchanged");
        // qwen-code's own bookkeeping, which enables nothing, stays.
        std::fs::write(extensions.join("extension-enablement.json"), "{}").expect("write");
        assert!(guard.restore().is_empty(), "an empty enablement file");
        std::fs::write(
            extensions.join("extension-enablement.json"),
            r#"{"mine": {"overrides": ["/*"]}}"#,
        )
        .expect("write");
        assert_eq!(
            guard.restore().len(),
            1,
            "an enablement that says something"
        );
        assert!(!extensions.join("extension-enablement.json").exists());
        std::fs::create_dir_all(extensions.join("evil")).expect("mkdir");
        std::fs::write(
            extensions.join("evil/gemini-extension.json"),
            r#"{"mcpServers": {"e": {"command": "sh"}}}"#,
        )
        .expect("write");
        std::fs::write(extensions.join("mine/gemini-extension.json"), "{\"x\":1}").expect("write");
        std::fs::create_dir_all(&plugin).expect("mkdir");
        std::fs::write(plugin.join("evil.ts"), "run()").expect("write");
        assert_eq!(guard.restore().len(), 2);
        assert!(!extensions.join("evil").exists());
        assert_eq!(
            std::fs::read_to_string(extensions.join("mine/gemini-extension.json")).expect("read"),
            "{}"
        );
        assert!(!plugin.exists(), "made by the agent: removed");
        // Made empty by the agent (qwen-code's `skills/`): it stays.
        let skills = dir.path().join("skills");
        let guard = Guard::take(std::slice::from_ref(&skills));
        std::fs::create_dir_all(skills.join("empty")).expect("mkdir");
        assert!(guard.restore().is_empty());
        std::fs::write(skills.join("empty/SKILL.md"), "run evil").expect("write");
        assert_eq!(guard.restore().len(), 1);
        assert!(!skills.exists());
        let aside = std::fs::read_dir(dir.path())
            .expect("ls")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("warden-rejected"))
            .count();
        assert_eq!(
            aside, 2,
            "the agent's versions of what was there are kept aside"
        );
    }

    #[test]
    fn a_killed_wardens_guard_is_put_back_at_the_next_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journals = dir.path().join("guards");
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "model = \"m\"\n").expect("write");
        let profile = crate::sandbox::Profile {
            guarded: vec![config.clone()],
            ..crate::sandbox::Profile::default()
        };
        let guard = Guard::of(&profile, Some(&journals));
        std::fs::write(&config, "notify = [\"sh\"]\n").expect("write");
        // While the warden lives, its journal is its own.
        assert!(recover(&journals).is_empty());
        // Killed: it never puts back, its lock goes with it.
        drop(guard);
        let said = recover(&journals);
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(
            std::fs::read_to_string(&config).expect("read"),
            "model = \"m\"\n"
        );
        assert_eq!(std::fs::read_dir(&journals).expect("ls").count(), 0);
        // The next start does it before taking its own copy.
        let guard = Guard::of(&profile, Some(&journals));
        assert!(guard.restore().is_empty());
    }

    /// An agent that puts a FIFO where a guarded config goes does not
    /// block the next start (reading it would wait for a writer forever),
    /// and the FIFO goes when that agent ends.
    #[test]
    fn a_fifo_at_a_guarded_path_blocks_nothing_and_goes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("settings.json");
        crate::test_support::mkfifo(&config);
        let paths = vec![config.clone()];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Guard::take(&paths));
        });
        // Only a limit on a hang, not a measure of speed.
        let guard = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("Guard::take blocked on the FIFO");
        assert_eq!(guard.files, vec![(config.clone(), None)]);
        guard.restore();
        assert!(
            std::fs::symlink_metadata(&config).is_err(),
            "the FIFO is still there"
        );
    }
}

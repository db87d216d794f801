//! Taking a snapshot of every root: git's index per root, new files
//! counted and hashed within the limits, the files a tool runs grafted on
//! (`tool_files.rs`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use super::tool_files::tool_files;
use super::{Stat, Store, anchored, anchored_file, now_secs, records};
use crate::checkpoint::git;
use crate::checkpoint::{CheckpointError, Limits};

/// The first snapshot of a workspace, which hashes every file, may take
/// this many times the budget.
const FIRST_BUDGET_FACTOR: u32 = 15;

/// What a snapshot found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snap {
    /// The tree of every root.
    pub(crate) tree: String,
    /// Files left out for their size: (path as shown, bytes).
    pub(crate) skipped: Vec<(String, u64)>,
    /// Directories left out as repositories of their own (a nested
    /// `.git`), as shown, ending in `/`.
    pub(crate) nested: Vec<String>,
}

/// How many times a snapshot is tried when files vanish under it.
const SNAPSHOT_TRIES: usize = 3;

/// Above this many changed paths a snapshot adds the whole tree.
const PATHSPEC_MAX: usize = 256;

impl Store {
    /// Snapshot every root: files over `limits.max_file_size` are left out
    /// (and said), more than `limits.max_files` new files is an error
    /// before anything is hashed, and so is taking longer than `limits.budget`.
    pub(crate) fn snapshot(&self, limits: &Limits) -> Result<Snap, CheckpointError> {
        // A file listed and gone before git adds it (a turn writing while
        // the snapshot runs: a temporary file renamed into place) fails
        // the add; the scan then starts again.
        let mut tries = 0;
        loop {
            tries += 1;
            match self.snapshot_once(limits) {
                Err(CheckpointError::Git { .. }) if tries < SNAPSHOT_TRIES => {}
                done => return done,
            }
        }
    }

    fn snapshot_once(&self, limits: &Limits) -> Result<Snap, CheckpointError> {
        let started = Instant::now();
        let mut skipped = Vec::new();
        let mut nested = Vec::new();
        let mut trees = String::new();
        // The first snapshot hashes every file; later ones only what changed.
        let budget = if (0..self.roots.len()).all(|i| self.index(i).exists()) {
            limits.budget
        } else {
            limits.budget.saturating_mul(FIRST_BUDGET_FACTOR)
        };
        for i in 0..self.roots.len() {
            let index = self.index(i);
            let mut cmd = self.in_root(i, &index);
            cmd.args(["ls-files", "-z", "-o", "-m", "-d", "--exclude-standard"]);
            let mut listed: BTreeSet<String> = records(&git::run(cmd, None)?).collect();
            // A directory listed whole is a repository of its own (a
            // nested `.git`, with or without commits): git would refuse
            // the whole add for an empty one, or keep only its commit id.
            // Its subtree is left out, and said; the rest is snapshotted.
            let repos: Vec<String> = listed
                .iter()
                .filter(|p| p.ends_with('/'))
                .cloned()
                .collect();
            for repo in &repos {
                listed.remove(repo);
                nested.push(self.shown(i, repo));
            }
            if listed.len() > limits.max_files {
                return Err(CheckpointError::TooLarge(format!(
                    "over {} files",
                    limits.max_files
                )));
            }
            let mut add = Vec::new();
            let mut drop = Vec::new();
            let mut large = Vec::new();
            let paths = listed.len();
            for path in listed {
                let full = self.roots[i].join(&path);
                match std::fs::symlink_metadata(&full) {
                    Ok(meta) if meta.is_file() && meta.len() > limits.max_file_size => {
                        skipped.push((self.shown(i, &path), meta.len()));
                        large.push((path.clone(), meta.len()));
                        drop.extend_from_slice(path.as_bytes());
                        drop.push(0);
                    }
                    _ => {
                        add.extend_from_slice(path.as_bytes());
                        add.push(0);
                    }
                }
            }
            if !drop.is_empty() {
                let mut cmd = self.in_root(i, &index);
                cmd.args([
                    "rm",
                    "--cached",
                    "-f",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ]);
                git::run(cmd, Some(&drop))?;
            }
            if paths > PATHSPEC_MAX {
                // Many files (a first snapshot): one walk of the whole
                // tree, the large files excluded for its length (matching
                // thousands of pathspecs is quadratic).
                let own = std::fs::read_to_string(self.excludes(i))?;
                let mut patterns = own.clone();
                for (path, _) in &large {
                    patterns.push_str(&anchored_file(path));
                    patterns.push('\n');
                }
                for repo in &repos {
                    patterns.push_str(&anchored(Path::new(repo.trim_end_matches('/'))));
                    patterns.push('\n');
                }
                std::fs::write(self.excludes(i), patterns)?;
                let mut cmd = self.in_root(i, &index);
                cmd.args(["add", "-A", "."]);
                let added = git::run(cmd, None);
                std::fs::write(self.excludes(i), own)?;
                added?;
            } else if !add.is_empty() {
                let mut cmd = self.in_root(i, &index);
                cmd.args(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"]);
                git::run(cmd, Some(&add))?;
            }
            let mut cmd = self.in_root(i, &index);
            cmd.arg("write-tree");
            let tree = git::first_line(&git::run(cmd, None)?);
            let tree = self.with_tool_files(i, &tree, limits)?;
            trees.push_str(&format!("040000 tree {tree}\t{i}\n"));
            if started.elapsed() > budget {
                return Err(CheckpointError::TooLarge(format!(
                    "a snapshot took over {} ms",
                    budget.as_millis()
                )));
            }
        }
        let mut cmd = self.bare();
        cmd.arg("mktree");
        let tree = git::first_line(&git::run(cmd, Some(trees.as_bytes()))?);
        Ok(Snap {
            tree,
            skipped,
            nested,
        })
    }

    /// `tree` (root `i`'s snapshot) with the files a tool runs that git
    /// leaves out (`tool_files`): `.git/config` and `.git/hooks/*` under
    /// `DOTGIT` (`tool_files.rs`), an ignored `.envrc`, `.vscode/`, `.idea/` under their
    /// names. Hashed each snapshot (a few small files), kept out of the
    /// root's index.
    fn with_tool_files(
        &self,
        i: usize,
        tree: &str,
        limits: &Limits,
    ) -> Result<String, CheckpointError> {
        let mut files = tool_files(&self.roots[i], limits.max_file_size);
        let ignored = self.ignored_executables(i, limits.max_file_size, &files)?;
        files.extend(ignored);
        if files.is_empty() {
            return Ok(tree.to_string());
        }
        // The same tree and the same files as last time (by their stat):
        // the same result, with no git run.
        let stamp: Vec<(String, Option<Stat>)> = files
            .iter()
            .map(|(disk, _, _)| {
                use std::os::unix::fs::MetadataExt as _;
                let meta = std::fs::symlink_metadata(self.roots[i].join(disk)).ok();
                let sig = meta.map(|m| {
                    (
                        m.ino(),
                        m.mtime(),
                        m.mtime_nsec(),
                        m.ctime(),
                        m.ctime_nsec(),
                        m.size(),
                    )
                });
                (disk.clone(), sig)
            })
            .collect();
        // A file changed within a tick of the clock may change again
        // with the same stat (racy, as git's index says): not trusted.
        let racy = stamp.iter().any(|(_, sig)| {
            sig.is_none_or(|(_, _, _, ctime, _, _)| {
                u64::try_from(ctime).map_or(true, |c| c + 2 >= now_secs())
            })
        });
        let key = (tree.to_string(), stamp);
        if !racy
            && let Some((seen, grafted)) = self.tools_seen.borrow().get(&i)
            && *seen == key
        {
            return Ok(grafted.clone());
        }
        let disk: Vec<std::path::PathBuf> = files
            .iter()
            .map(|(d, _, _)| self.roots[i].join(d))
            .collect();
        let out = self.hash_files(&disk, limits.max_file_size)?;
        let shas: Vec<&str> = std::str::from_utf8(&out)
            .unwrap_or_default()
            .lines()
            .collect();
        if shas.len() != files.len() {
            return Err(CheckpointError::Git {
                what: "git hash-object".into(),
                message: "a file a tool runs changed while it was read".into(),
            });
        }
        let mut info = Vec::new();
        for ((_, repo, exec), sha) in files.iter().zip(shas) {
            let mode = if *exec { "100755" } else { "100644" };
            info.extend_from_slice(format!("{mode} {sha}\t{repo}").as_bytes());
            info.push(0);
        }
        let index = self.dir.join("index-tools");
        let _ = std::fs::remove_file(&index);
        let built = (|| {
            let mut cmd = self.in_root(i, &index);
            cmd.args(["read-tree", tree]);
            git::run(cmd, None)?;
            let mut cmd = self.in_root(i, &index);
            cmd.args(["update-index", "-z", "--index-info"]);
            git::run(cmd, Some(&info))?;
            let mut cmd = self.in_root(i, &index);
            cmd.arg("write-tree");
            Ok(git::first_line(&git::run(cmd, None)?))
        })();
        let _ = std::fs::remove_file(&index);
        if let (Ok(grafted), false) = (&built, racy) {
            self.tools_seen
                .borrow_mut()
                .insert(i, (key, grafted.clone()));
        }
        built
    }
}

impl Store {
    /// Store `paths` as blobs: their stdout is one object id a line. Each
    /// file is read by warden first (non-blocking, a regular file, at most
    /// `max_size`) into a copy in the store's own directory, which git
    /// hashes: a file the agent swaps for a FIFO after it was listed would
    /// hold `git hash-object`, and the checkpoint worker, forever.
    pub(super) fn hash_files(
        &self,
        paths: &[std::path::PathBuf],
        max_size: u64,
    ) -> Result<Vec<u8>, CheckpointError> {
        let changed = || CheckpointError::Git {
            what: "git hash-object".into(),
            message: "a file a tool runs changed while it was read".into(),
        };
        let copies = self.dir.join("tool-copies");
        let _ = std::fs::remove_dir_all(&copies);
        std::fs::create_dir_all(&copies).map_err(|_| changed())?;
        let mut list = Vec::new();
        for (n, path) in paths.iter().enumerate() {
            let bytes = read_small_regular(path, max_size).map_err(|_| changed())?;
            let copy = copies.join(n.to_string());
            std::fs::write(&copy, bytes).map_err(|_| changed())?;
            list.extend_from_slice(copy.as_os_str().as_encoded_bytes());
            list.push(b'\n');
        }
        let mut cmd = self.bare();
        cmd.args(["hash-object", "-w", "--no-filters", "--stdin-paths"]);
        let out = git::run(cmd, Some(&list));
        let _ = std::fs::remove_dir_all(&copies);
        out
    }
}

/// The bytes of the regular file at `path` (not through a symlink), at
/// most `max_size`: opened non-blocking and checked on the open file.
fn read_small_regular(path: &Path, max_size: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > max_size {
        return Err(std::io::Error::other("not a small regular file"));
    }
    let mut bytes = Vec::new();
    file.take(max_size + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_size {
        return Err(std::io::Error::other("grew while read"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool file the agent swaps for a FIFO after it was listed holds
    /// nothing: the snapshot says it changed, and the worker goes on.
    #[test]
    fn a_fifo_among_the_tool_files_fails_the_hash_and_blocks_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("mkdir");
        let store =
            Store::open(&dir.path().join("base"), std::slice::from_ref(&work), &[]).expect("store");
        std::fs::write(work.join(".envrc"), "export A=1\n").expect("write");
        let ok = store
            .hash_files(&[work.join(".envrc")], 1000)
            .expect("a regular file hashes");
        assert_eq!(String::from_utf8_lossy(&ok).lines().count(), 1);
        let fifo = work.join(".husky-hook");
        crate::test_support::mkfifo(&fifo);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(store.hash_files(&[fifo], 1000).is_err());
        });
        // Only a limit on a hang, not a measure of speed.
        let failed = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("hashing blocked on the FIFO");
        assert!(failed, "a FIFO is no file a tool runs");
    }
}

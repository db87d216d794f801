//! Checkpoints: snapshots of a chat's workspace (its cwd and roots) before
//! every prompt and at every turn end, so that what a turn did to the files
//! can be seen (`/changes`) and undone (`/undo`, `/checkpoints`), whoever
//! wrote them: the agent, its commands, warden's `fs/write_text_file` or a
//! terminal.
//!
//! The snapshots live in warden's data dir, one bare git repository per
//! workspace (`store.rs`), written by the `git` program (found once, on a
//! `PATH` the agent cannot write) with its own `GIT_DIR`, index and work
//! tree and no user configuration (`git.rs`): of the user's `.git` only
//! `config` and `hooks/` are snapshotted (a turn may plant a program
//! there), its index and refs are never read or written. A restore writes
//! the files itself, beneath the workspace (`apply.rs`); removals are
//! timed as they happen (`gone.rs`).
//! Content is addressed, so an unchanged file costs nothing, and the index's
//! stat cache means a later snapshot hashes only what changed. `.gitignore`
//! is respected; files over `[checkpoints] max_file_size` are left out and
//! said. All of it runs on one worker thread (`worker.rs`), in the order
//! the jobs were queued.

mod apply;
mod git;
pub(crate) use git::trusted_path;
mod gone;
pub mod report;
pub use report::{Change, FileChange, FileDiff, ListedStep, Report, Resolution, RestorePlan};
use store::Store;
pub mod headless;
pub(crate) mod store;
pub(crate) mod worker;

use std::path::PathBuf;
use std::time::Duration;

/// What can go wrong with a checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A git command failed (or could not start: no `git` installed).
    #[error("{what}: {message}")]
    Git { what: String, message: String },
    /// The store's files.
    #[error("checkpoint store: {0}")]
    Io(#[from] std::io::Error),
    /// A restore refused to write where it was not safe (a directory of
    /// the workspace swapped for a symlink).
    #[error("restore: {0}")]
    Restore(String),
    /// The workspace is too large to snapshot within the limits.
    #[error("the workspace is too large to checkpoint ({0})")]
    TooLarge(String),
}

/// How many checkpoints a workspace keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The last N steps (turns and restores).
    Last(usize),
    /// Steps of the last D days.
    Days(u64),
}

impl Keep {
    /// `"50"` or `50`: the last 50; `"7d"`: seven days.
    pub fn parse(text: &str) -> Option<Keep> {
        let text = text.trim();
        match text.strip_suffix('d') {
            Some(days) => days.trim().parse().ok().map(Keep::Days),
            None => text.parse().ok().filter(|n| *n > 0).map(Keep::Last),
        }
    }
}

/// What bounds one snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files larger than this are left out.
    pub max_file_size: u64,
    /// A workspace with more new files than this is not snapshotted.
    pub max_files: usize,
    /// A snapshot that takes longer switches checkpoints off for the workspace.
    pub budget: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_size: 10 * 1024 * 1024,
            max_files: 100_000,
            budget: Duration::from_secs(2),
        }
    }
}

/// Where and how a chat's workspace is checkpointed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointOptions {
    /// The directory of the stores (`<data dir>/warden/checkpoints`).
    pub dir: PathBuf,
    pub limits: Limits,
    pub keep: Keep,
    /// After an undo, the next prompt tells the agent.
    pub tell_agent: bool,
    /// warden's own files and directories (settings, decision log, chat
    /// records, log): never in a snapshot, so never put back by an undo.
    pub own: Vec<PathBuf>,
    /// Where the agent may write besides the workspace (its sandbox's
    /// writable directories): no `git` is run from there.
    pub writable: Vec<PathBuf>,
}

impl CheckpointOptions {
    /// The default options with stores under `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        CheckpointOptions {
            dir: dir.into(),
            limits: Limits::default(),
            keep: Keep::Last(100),
            tell_agent: true,
            own: Vec::new(),
            writable: Vec::new(),
        }
    }

    /// The default place: beside the chat records.
    pub fn default_dir() -> Option<PathBuf> {
        crate::chats::ChatStore::default_dir().map(|d| d.with_file_name("checkpoints"))
    }
}

/// A chat id made safe for a ref name.
pub(crate) fn ref_safe(chat: &str) -> String {
    let safe: String = chat
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() { "_".into() } else { safe }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

/// One root's store driven directly, for the bench (`benches/checkpoints.rs`).
pub struct Bench {
    store: Store,
    limits: Limits,
}

impl Bench {
    /// The store of `root` under `base`.
    pub fn open(base: &std::path::Path, root: &std::path::Path) -> Result<Bench, CheckpointError> {
        let root = root.canonicalize()?;
        Ok(Bench {
            store: Store::open(base, &[root], &[])?,
            limits: Limits::default(),
        })
    }

    /// Take and keep a checkpoint; its commit.
    pub fn snapshot(&mut self) -> Result<String, CheckpointError> {
        let snap = self.store.snapshot(&self.limits)?;
        let step = self.store.new_step();
        let point = store::Point {
            chat: "bench".into(),
            step,
            side: store::Side::Before,
            what: store::What::Turn {
                prompt: String::new(),
            },
            time: 0,
            commit: String::new(),
        };
        Ok(self.store.record(&snap.tree, point)?.commit)
    }

    /// The tree of the workspace as it was at `sent`, from the snapshot
    /// `base` (a commit or tree) and a scan now: the "before" of a prompt
    /// whose turn was already writing when its snapshot ran.
    pub fn as_of(
        &self,
        base: &str,
        sent: std::time::SystemTime,
    ) -> Result<String, CheckpointError> {
        let now = self.store.snapshot(&self.limits)?;
        let base = self.store.tree_of(base)?;
        self.store
            .as_of(&base, &now.tree, store::AsOf::Sent(sent), &|_| None)
    }

    /// Put the files back as `to` has them; how many changed.
    pub fn restore(&mut self, to: &str) -> Result<usize, CheckpointError> {
        let now = self.snapshot()?;
        let done = self.store.restore(&now, to, &[], Resolution::Overwrite)?;
        Ok(done.changed.len())
    }

    /// Bytes the store takes on disk.
    pub fn disk_use(&self, base: &std::path::Path) -> u64 {
        store::disk_use(base)
    }
}

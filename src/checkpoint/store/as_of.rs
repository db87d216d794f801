//! The workspace as it was at an instant (a prompt sent, a turn ended),
//! from two snapshots and the files' timestamps, and the directories the
//! removal watcher watches.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::tool_files::on_disk;
use super::{Store, records};
use crate::checkpoint::CheckpointError;
use crate::checkpoint::git;

/// How far the kernel's file timestamps (its coarse clock, one tick) may
/// lag the instant a prompt was sent: a write after the prompt may carry a
/// timestamp up to this much older.
const CLOCK_LAG: Duration = Duration::from_millis(50);
/// A timestamp with no nanoseconds comes from a filesystem that keeps
/// whole seconds (two, for FAT): the change may be this much later.
const COARSE_GRANULE: Duration = Duration::from_secs(2);

/// How late the removal watcher's stamp may be (`gone.rs`): its thread
/// reads the event after the kernel queued it.
const STAMP_LAG: Duration = Duration::from_millis(250);

/// The instant a snapshot stands for, when that is not the instant it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsOf {
    /// The prompt was sent then: a file whose timestamps might be that
    /// late was written by the turn (ties and doubt go to the turn).
    Sent(SystemTime),
    /// The turn ended then: a file written by then belongs to the turn.
    Ended(SystemTime),
}

impl AsOf {
    pub(crate) fn instant(self) -> SystemTime {
        match self {
            AsOf::Sent(at) | AsOf::Ended(at) => at,
        }
    }

    /// A removal the watcher stamped `seen` (as it read it, a moment after
    /// it happened) happened after this instant. The stamp is late, never
    /// early: for a turn's end, a removal stamped up to [`STAMP_LAG`]
    /// after it still counts as the turn's (the agent removes, then
    /// answers; a busy machine may read the event later than that answer).
    pub(crate) fn is_after_seen(self, seen: SystemTime) -> bool {
        match self {
            AsOf::Sent(_) => self.is_after(seen),
            AsOf::Ended(at) => seen > at + STAMP_LAG,
        }
    }

    /// A file (or directory) whose last change is `changed` changed after
    /// this instant.
    pub(crate) fn is_after(self, changed: SystemTime) -> bool {
        match self {
            AsOf::Sent(at) => {
                let coarse = changed
                    .duration_since(UNIX_EPOCH)
                    .is_ok_and(|d| d.subsec_nanos() == 0);
                let latest = if coarse {
                    changed + COARSE_GRANULE
                } else {
                    changed
                };
                latest + CLOCK_LAG >= at
            }
            AsOf::Ended(at) => changed > at,
        }
    }
}

/// The last change of `path`'s inode: the later of its mtime and ctime
/// (a write, a rename, a chmod or `cp -p` moves the ctime, which no
/// program can set back).
fn last_change(meta: &std::fs::Metadata) -> SystemTime {
    use std::os::unix::fs::MetadataExt as _;
    let at = |secs: i64, nanos: i64| {
        let secs = u64::try_from(secs).unwrap_or(0);
        let nanos = u32::try_from(nanos).unwrap_or(0);
        UNIX_EPOCH + Duration::new(secs, nanos)
    };
    at(meta.mtime(), meta.mtime_nsec()).max(at(meta.ctime(), meta.ctime_nsec()))
}

impl Store {
    /// The workspace as it was at `as_of`, from `base` (a snapshot taken
    /// before that instant) and `now` (one taken since): a path that
    /// differs between them is as `now` has it when its file last changed
    /// before `as_of` (the user's edit before the prompt), and as `base` has
    /// it when it changed after (the turn's write). A path gone from the
    /// disk is judged by its nearest directory still there: one changed
    /// after `as_of` lost it then, so `base`'s copy stays.
    ///
    /// `left` tells when a path (absolute) was last seen leaving the disk,
    /// if it was (`gone::Watcher`): a gone path it knows is judged by that
    /// instant instead of by its directory.
    pub(crate) fn as_of(
        &self,
        base: &str,
        now: &str,
        as_of: AsOf,
        left: &dyn Fn(&Path) -> Option<SystemTime>,
    ) -> Result<String, CheckpointError> {
        if base == now {
            return Ok(now.to_string());
        }
        let mut cmd = self.bare();
        cmd.args(["diff-tree", "-r", "-z", "--no-renames", "--raw", base, now]);
        let out = git::run(cmd, None)?;
        let mut fields = records(&out);
        let mut info = Vec::new();
        while let (Some(head), Some(repo)) = (fields.next(), fields.next()) {
            // ":old-mode new-mode old-sha new-sha status"
            let mut parts = head.trim_start_matches(':').split(' ');
            let (Some(mode), Some(_), Some(sha)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if self.changed_after(&repo, as_of, left) {
                info.extend_from_slice(format!("{mode} {sha}\t{repo}").as_bytes());
                info.push(0);
            }
        }
        if info.is_empty() {
            return Ok(now.to_string());
        }
        let index = self.dir.join("index-as-of");
        let _ = std::fs::remove_file(&index);
        let built = (|| {
            let mut cmd = self.in_root(0, &index);
            cmd.args(["read-tree", now]);
            git::run(cmd, None)?;
            let mut cmd = self.in_root(0, &index);
            cmd.args(["update-index", "-z", "--index-info"]);
            git::run(cmd, Some(&info))?;
            let mut cmd = self.in_root(0, &index);
            cmd.arg("write-tree");
            Ok(git::first_line(&git::run(cmd, None)?))
        })();
        let _ = std::fs::remove_file(&index);
        built
    }

    /// Whether the snapshot path `repo` (`ROOT/rel`) changed on disk after
    /// `as_of`: by its own timestamps, or, gone, by its nearest directory's.
    /// A path that cannot be judged counts as changed after.
    fn changed_after(
        &self,
        repo: &str,
        as_of: AsOf,
        left: &dyn Fn(&Path) -> Option<SystemTime>,
    ) -> bool {
        let Some((i, rel)) = repo.split_once('/') else {
            return true;
        };
        let Some(root) = i.parse::<usize>().ok().and_then(|i| self.roots.get(i)) else {
            return true;
        };
        let mut path = root.join(on_disk(rel));
        // Gone, and seen leaving: then is when.
        if std::fs::symlink_metadata(&path).is_err()
            && let Some(at) = left(&path)
        {
            return as_of.is_after_seen(at);
        }
        loop {
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                return as_of.is_after(last_change(&meta));
            }
            if path == *root || !path.pop() || !path.starts_with(root) {
                return true;
            }
        }
    }

    /// The directories of a snapshot's tree, on disk: each root and every
    /// directory under it.
    pub(crate) fn dirs_of(&self, tree: &str) -> Result<Vec<PathBuf>, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args(["ls-tree", "-r", "-d", "-z", "--name-only", tree]);
        let out = git::run(cmd, None)?;
        let mut dirs = self.roots.clone();
        for repo in records(&out) {
            if let Some((i, rel)) = repo.split_once('/')
                && let Some(root) = i.parse::<usize>().ok().and_then(|i| self.roots.get(i))
            {
                dirs.push(root.join(on_disk(rel)));
            }
        }
        Ok(dirs)
    }
}

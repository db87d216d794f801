//! What changed between two checkpoints, and a file's text in one.

use std::collections::BTreeMap;

use super::{Store, records};
use crate::checkpoint::CheckpointError;
use crate::checkpoint::git;
use crate::checkpoint::{Change, FileChange};

impl Store {
    /// The files that differ from `a` to `b` (commits or trees).
    pub(crate) fn diff(&self, a: &str, b: &str) -> Result<Vec<FileChange>, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-status",
            a,
            b,
        ]);
        let out = git::run(cmd, None)?;
        let mut fields = records(&out);
        let mut changes: BTreeMap<String, FileChange> = BTreeMap::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let change = match status.chars().next() {
                Some('A') => Change::Added,
                Some('D') => Change::Deleted,
                _ => Change::Modified,
            };
            changes.insert(
                path.clone(),
                FileChange {
                    path: self.shown_repo(&path),
                    tool: self.ignored_tools.borrow().contains(&path),
                    repo_path: path,
                    change,
                    added: None,
                    removed: None,
                },
            );
        }
        let mut cmd = self.bare();
        cmd.args(["diff-tree", "-r", "-z", "--no-renames", "--numstat", a, b]);
        let out = git::run(cmd, None)?;
        for record in records(&out) {
            let mut parts = record.splitn(3, '\t');
            let (Some(added), Some(removed), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if let Some(change) = changes.get_mut(path) {
                change.added = added.parse().ok();
                change.removed = removed.parse().ok();
            }
        }
        Ok(changes.into_values().collect())
    }

    /// The text of `repo_path` in `commit`: `None` when absent, binary or
    /// over `limit` bytes.
    pub(crate) fn text(&self, commit: &str, repo_path: &str, limit: u64) -> Option<String> {
        let mut cmd = self.bare();
        cmd.args(["cat-file", "-s", &format!("{commit}:{repo_path}")]);
        let size: u64 = git::first_line(&git::run(cmd, None).ok()?).parse().ok()?;
        if size > limit {
            return None;
        }
        let mut cmd = self.bare();
        cmd.args(["cat-file", "blob", &format!("{commit}:{repo_path}")]);
        let bytes = git::run(cmd, None).ok()?;
        if bytes.contains(&0) {
            return None;
        }
        String::from_utf8(bytes).ok()
    }
}

//! Putting the workspace back to a checkpoint: what to write, read from
//! the store, and the files the user changed since treated as asked
//! (`apply.rs` writes them).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::tool_files::on_disk;
use super::{Store, records};
use crate::checkpoint::CheckpointError;
use crate::checkpoint::Resolution;
use crate::checkpoint::git;

/// A missing object.
const ZERO: &str = "0000000000000000000000000000000000000000";
/// The suffix of the checkpoint's copy of a file kept both ways.
pub(crate) const BOTH_SUFFIX: &str = ".warden-restored";

/// What a restore did, by path as shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Restored {
    pub(crate) changed: Vec<String>,
    pub(crate) kept: Vec<String>,
    pub(crate) both: Vec<String>,
}

impl Store {
    /// Put the workspace, which is `from` now, back to `to`; `changed_since`
    /// (paths in the snapshot trees) are treated as `resolution` says.
    pub(crate) fn restore(
        &self,
        from: &str,
        to: &str,
        changed_since: &[String],
        resolution: Resolution,
    ) -> Result<Restored, CheckpointError> {
        let mut restored = Restored::default();
        for i in 0..self.roots.len() {
            let prefix = format!("{i}/");
            let target_index = self.dir.join("index-target");
            let _ = std::fs::remove_file(&target_index);
            let mut cmd = self.in_root(i, &target_index);
            cmd.args(["read-tree", &format!("{to}:{i}")]);
            git::run(cmd, None)?;
            let mut info = Vec::new();
            if resolution != Resolution::Overwrite {
                for repo in changed_since.iter().filter(|p| p.starts_with(&prefix)) {
                    let rel = &repo[prefix.len()..];
                    let now = self.entry(from, i, rel)?;
                    let then = self.entry(to, i, rel)?;
                    let keep = now.unwrap_or_else(|| format!("0 {ZERO}"));
                    info.extend_from_slice(format!("{keep}\t{rel}").as_bytes());
                    info.push(0);
                    restored.kept.push(self.shown(i, rel));
                    if resolution == Resolution::KeepBoth
                        && let Some(then) = then
                    {
                        let beside = format!("{rel}{BOTH_SUFFIX}");
                        info.extend_from_slice(format!("{then}\t{beside}").as_bytes());
                        info.push(0);
                        restored.both.push(self.shown(i, &beside));
                    }
                }
            }
            if !info.is_empty() {
                let mut cmd = self.in_root(i, &target_index);
                cmd.args(["update-index", "-z", "--index-info"]);
                git::run(cmd, Some(&info))?;
            }
            let mut cmd = self.in_root(i, &target_index);
            cmd.arg("write-tree");
            let target = git::first_line(&git::run(cmd, None)?);
            let _ = std::fs::remove_file(&target_index);
            // warden writes the files itself, beneath the root's
            // descriptor (`apply`): git only names what changes and hands
            // over the bytes.
            let mut cmd = self.bare();
            cmd.args([
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--raw",
                &format!("{from}:{i}"),
                &target,
            ]);
            let out = git::run(cmd, None)?;
            let mut fields = records(&out);
            let mut wanted = Vec::new();
            while let (Some(head), Some(rel)) = (fields.next(), fields.next()) {
                // ":old-mode new-mode old-sha new-sha status"
                let mut parts = head.trim_start_matches(':').split(' ');
                let (Some(_), Some(mode), Some(_), Some(sha)) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                restored.changed.push(self.shown(i, &rel));
                wanted.push((rel, mode.to_string(), sha.to_string()));
            }
            let edits = self.edits(wanted)?;
            crate::checkpoint::apply::apply(&self.roots[i], &edits)?;
        }
        Ok(restored)
    }

    /// What to do to each `(path, new mode, new sha)` of a diff: the
    /// bytes of every file and symlink to put, read from the store in one
    /// `cat-file --batch`. A nested repository's commit (a gitlink) is
    /// left alone.
    fn edits(
        &self,
        wanted: Vec<(String, String, String)>,
    ) -> Result<Vec<crate::checkpoint::apply::Edit>, CheckpointError> {
        use crate::checkpoint::apply::Edit;
        let put: Vec<&(String, String, String)> = wanted
            .iter()
            .filter(|(_, mode, _)| matches!(mode.as_str(), "100644" | "100755" | "120000"))
            .collect();
        let mut input = String::new();
        for (_, _, sha) in &put {
            input.push_str(sha);
            input.push('\n');
        }
        let mut blobs: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        if !put.is_empty() {
            let mut cmd = self.bare();
            cmd.args(["cat-file", "--batch"]);
            let out = git::run(cmd, Some(input.as_bytes()))?;
            let mut rest = out.as_slice();
            while let Some(end) = rest.iter().position(|b| *b == b'\n') {
                let head = String::from_utf8_lossy(&rest[..end]).into_owned();
                let mut parts = head.split(' ');
                let (Some(sha), Some(_), Some(size)) = (parts.next(), parts.next(), parts.next())
                else {
                    break;
                };
                let Ok(size) = size.parse::<usize>() else {
                    break;
                };
                let body = end + 1;
                let Some(bytes) = rest.get(body..body + size) else {
                    break;
                };
                blobs.insert(sha.to_string(), bytes.to_vec());
                rest = rest.get(body + size + 1..).unwrap_or_default();
            }
        }
        let mut edits = Vec::new();
        for (rel, mode, sha) in wanted {
            let rel = PathBuf::from(on_disk(&rel));
            let bytes = || {
                blobs
                    .get(&sha)
                    .cloned()
                    .ok_or_else(|| CheckpointError::Git {
                        what: "git cat-file".into(),
                        message: format!("{sha} is missing from the store"),
                    })
            };
            edits.push(match mode.as_str() {
                "000000" => Edit::Remove(rel),
                "100644" | "100755" => Edit::File {
                    rel,
                    exec: mode == "100755",
                    bytes: bytes()?,
                },
                "120000" => Edit::Symlink {
                    rel,
                    target: bytes()?,
                },
                _ => continue,
            });
        }
        Ok(edits)
    }

    /// `mode sha` of `rel` in root `i` of `commit`, if there.
    fn entry(&self, commit: &str, i: usize, rel: &str) -> Result<Option<String>, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args(["ls-tree", "-z", &format!("{commit}:{i}"), "--", rel]);
        let out = git::run(cmd, None)?;
        Ok(records(&out).next().and_then(|line| {
            let (head, _) = line.split_once('\t')?;
            let mut parts = head.split(' ');
            let mode = parts.next()?;
            let _kind = parts.next()?;
            let sha = parts.next()?;
            Some(format!("{mode} {sha}"))
        }))
    }
}

//! One workspace's checkpoints: a bare repository in warden's data dir
//! whose commits are snapshots of the workspace's roots (one subtree per
//! root, named by its index), found through refs named by chat and step.
//! This file opens the store (warden's own files kept out) and keeps its
//! checkpoints (refs, steps, prune); taking a snapshot is `snapshot.rs`,
//! the files a tool runs that git leaves out `tool_files.rs`, the
//! workspace as of an instant `as_of.rs`, diffs `diff.rs`, restores
//! `restore.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CheckpointError;
use super::git::{self, Git};

mod as_of;
mod diff;
mod restore;
mod snapshot;
mod tool_files;

pub(crate) use as_of::AsOf;
pub(crate) use snapshot::Snap;
use tool_files::on_disk;

/// Ref prefix of every checkpoint.
const REFS: &str = "refs/warden/";

/// Which side of a step a checkpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Side {
    /// Before the turn (or the restore) changed anything.
    Before,
    /// After it.
    After,
}

/// What a step was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub(crate) enum What {
    /// A turn of the agent; the prompt's first line.
    Turn { prompt: String },
    /// warden put files back; what it put back ("before turn 3"), and
    /// why (absent in stores written before `/redo` existed).
    Restore {
        to: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<RestoreBy>,
    },
}

/// What asked for a restore: it decides what the next `/undo` and `/redo`
/// go back to (`worker::History`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "step")]
pub(crate) enum RestoreBy {
    /// `/undo`, or `/checkpoints` Enter: to before this step.
    Undo(u64),
    /// `/redo`: to before this restore (it undoes it).
    Redo(u64),
}

/// One checkpoint: a commit and what it stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Point {
    pub(crate) chat: String,
    pub(crate) step: u64,
    pub(crate) side: Side,
    pub(crate) what: What,
    /// Seconds since the epoch.
    pub(crate) time: u64,
    #[serde(skip)]
    pub(crate) commit: String,
}

/// A step with both its checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) before: Point,
    pub(crate) after: Point,
}

/// A workspace's store.
#[derive(Debug)]
pub(crate) struct Store {
    dir: PathBuf,
    git: Git,
    roots: Vec<PathBuf>,
    next_step: u64,
    /// Per root, the last tool files grafted: the tree and the files'
    /// stat they were grafted on, and the result.
    tools_seen: std::cell::RefCell<BTreeMap<usize, (ToolsKey, String)>>,
    /// Snapshot paths (`ROOT/rel`) seen as ignored executables: a diff
    /// marks them as files a tool runs (`FileChange::tool`).
    ignored_tools: std::cell::RefCell<BTreeSet<String>>,
}

/// A file's inode, mtime, ctime (seconds and nanoseconds) and size.
type Stat = (u64, i64, i64, i64, i64, u64);
/// A tree and the stat of the tool files grafted on it.
type ToolsKey = (String, Vec<(String, Option<Stat>)>);

/// FNV-1a, 64 bits: the store's directory name from its roots.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The directory of the store for `roots` under `base`.
pub(crate) fn store_dir(base: &Path, roots: &[PathBuf]) -> PathBuf {
    let mut key = Vec::new();
    for root in roots {
        key.extend_from_slice(root.as_os_str().as_encoded_bytes());
        key.push(0);
    }
    base.join(format!("{:016x}", fnv1a(&key)))
}

/// A gitignore pattern matching exactly the file `rel`.
fn anchored_file(rel: &str) -> String {
    let mut pattern = anchored(Path::new(rel));
    pattern.pop();
    pattern
}

/// Whether root-relative `rel` is one of warden's own files, by the
/// patterns of its exclude file ([`anchored`], [`anchored_file`]).
fn is_own(patterns: &str, rel: &str) -> bool {
    patterns.lines().any(|pattern| {
        let mut plain = String::new();
        let mut chars = pattern.strip_prefix('/').unwrap_or(pattern).chars();
        while let Some(c) = chars.next() {
            plain.extend(if c == '\\' { chars.next() } else { Some(c) });
        }
        match plain.strip_suffix('/') {
            Some(dir) => rel.starts_with(&format!("{dir}/")),
            None => rel == plain,
        }
    })
}

/// `path` as given and through symlinks (its directory resolved when the
/// file does not exist yet): each way a root may hold it.
fn own_readings(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    let resolved = path.canonicalize().ok().or_else(|| {
        let dir = path.parent()?.canonicalize().ok()?;
        Some(dir.join(path.file_name()?))
    });
    if let Some(resolved) = resolved.filter(|r| r != path) {
        out.push(resolved);
    }
    out
}

/// A gitignore pattern matching exactly `rel` (a directory).
fn anchored(rel: &Path) -> String {
    let mut out = String::from("/");
    for c in rel.to_string_lossy().chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | ' ') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('/');
    out
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Split NUL-terminated records.
fn records(out: &[u8]) -> impl Iterator<Item = String> + '_ {
    out.split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| String::from_utf8_lossy(r).into_owned())
}

impl Store {
    /// Open (or create) the store of `roots` under `base`; `base` itself,
    /// and warden's own files (`own`: its settings, decision log, chat
    /// records, log), are kept out of every snapshot, so that an undo never
    /// puts back an older copy of what warden keeps.
    pub(crate) fn open(
        base: &Path,
        roots: &[PathBuf],
        own: &[PathBuf],
    ) -> Result<Store, CheckpointError> {
        Store::open_beside(base, roots, own, &[])
    }

    /// [`Store::open`] for an agent that may also write in `writable`:
    /// the `git` program is found on a `PATH` without those directories
    /// nor the roots (`git::find_git`).
    pub(crate) fn open_beside(
        base: &Path,
        roots: &[PathBuf],
        own: &[PathBuf],
        writable: &[PathBuf],
    ) -> Result<Store, CheckpointError> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        Store::open_on_path(base, roots, own, writable, &path)
    }

    /// [`Store::open_beside`] with `path` for the `PATH`.
    pub(crate) fn open_on_path(
        base: &Path,
        roots: &[PathBuf],
        own: &[PathBuf],
        writable: &[PathBuf],
        path: &std::ffi::OsStr,
    ) -> Result<Store, CheckpointError> {
        let dir = store_dir(base, roots);
        let untrusted: Vec<PathBuf> = roots.iter().chain(writable).cloned().collect();
        let (program, path) = git::find_git(path, &untrusted)?;
        let git = Git {
            program,
            path,
            git_dir: dir.join("git"),
            home: dir.join("home"),
        };
        std::fs::create_dir_all(&git.home)?;
        if !git.git_dir.join("HEAD").exists() {
            let mut cmd = git.command(None, None);
            cmd.current_dir(&dir).args(["init", "--bare", "-q"]);
            git::run(cmd, None)?;
            std::fs::create_dir_all(git.git_dir.join("info"))?;
            std::fs::write(git.git_dir.join("info/attributes"), git::ATTRIBUTES)?;
            let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            std::fs::write(dir.join("roots"), listed.join("\n") + "\n")?;
        }
        // warden's own data never goes into a snapshot of a root that holds it.
        let base = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
        let own: Vec<PathBuf> = own.iter().flat_map(|p| own_readings(p)).collect();
        for (i, root) in roots.iter().enumerate() {
            let mut patterns = String::new();
            if let Ok(rel) = base.strip_prefix(root) {
                patterns.push_str(&anchored(rel));
                patterns.push('\n');
            }
            for path in &own {
                if let Ok(rel) = path.strip_prefix(root) {
                    if rel.as_os_str().is_empty() {
                        continue;
                    }
                    // A directory's pattern ends in `/`, a file's does not.
                    if path.is_dir() {
                        patterns.push_str(&anchored(rel));
                    } else {
                        patterns.push_str(&anchored_file(&rel.to_string_lossy()));
                    }
                    patterns.push('\n');
                }
            }
            std::fs::write(dir.join(format!("exclude-{i}")), patterns)?;
        }
        let mut store = Store {
            dir,
            git,
            roots: roots.to_vec(),
            next_step: 1,
            tools_seen: std::cell::RefCell::default(),
            ignored_tools: std::cell::RefCell::default(),
        };
        store.next_step = store
            .points()?
            .iter()
            .map(|p| p.step + 1)
            .max()
            .unwrap_or(1);
        Ok(store)
    }

    fn index(&self, i: usize) -> PathBuf {
        self.dir.join(format!("index-{i}"))
    }

    fn excludes(&self, i: usize) -> PathBuf {
        self.dir.join(format!("exclude-{i}"))
    }

    fn in_root(&self, i: usize, index: &Path) -> std::process::Command {
        self.git
            .command(Some((&self.roots[i], index)), Some(&self.excludes(i)))
    }

    fn bare(&self) -> std::process::Command {
        self.git.command(None, None)
    }

    /// A new step number.
    pub(crate) fn new_step(&mut self) -> u64 {
        let step = self.next_step;
        self.next_step += 1;
        step
    }

    /// A root-relative path as shown: relative in the first root (the
    /// cwd), absolute in the others.
    pub(super) fn shown(&self, i: usize, rel: &str) -> String {
        let rel = on_disk(rel);
        if i == 0 {
            rel
        } else {
            self.roots[i].join(rel).display().to_string()
        }
    }

    /// `i/rel` in a snapshot's tree, as shown.
    pub(super) fn shown_repo(&self, repo: &str) -> String {
        match repo.split_once('/') {
            Some((i, rel)) => match i.parse::<usize>() {
                Ok(i) if i < self.roots.len() => self.shown(i, rel),
                _ => repo.to_string(),
            },
            None => repo.to_string(),
        }
    }

    /// Keep `tree`'s objects from a prune under `name` (a ref outside the
    /// checkpoints' own).
    pub(crate) fn keep_tree(&self, tree: &str, name: &str) -> Result<(), CheckpointError> {
        let mut cmd = self.bare();
        cmd.args(["commit-tree", tree, "-m", "baseline"]);
        let commit = git::first_line(&git::run(cmd, None)?);
        let mut cmd = self.bare();
        cmd.args(["update-ref", name, &commit]);
        git::run(cmd, None)?;
        Ok(())
    }

    /// Keep `tree` as the checkpoint `point` (its commit filled in).
    pub(crate) fn record(&self, tree: &str, mut point: Point) -> Result<Point, CheckpointError> {
        point.time = now_secs();
        let subject = serde_json::to_string(&point).map_err(|e| CheckpointError::Git {
            what: "record".into(),
            message: e.to_string(),
        })?;
        let mut cmd = self.bare();
        cmd.args(["commit-tree", tree, "-m", &subject]);
        let commit = git::first_line(&git::run(cmd, None)?);
        let mut cmd = self.bare();
        cmd.args(["update-ref", &ref_name(&point), &commit]);
        git::run(cmd, None)?;
        point.commit = commit;
        Ok(point)
    }

    /// Every checkpoint, by step then side.
    pub(crate) fn points(&self) -> Result<Vec<Point>, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args([
            "for-each-ref",
            "--format=%(objectname) %(contents:subject)",
            REFS,
        ]);
        let out = git::run(cmd, None)?;
        let mut points: Vec<Point> = String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| {
                let (commit, subject) = line.split_once(' ')?;
                let mut point: Point = serde_json::from_str(subject).ok()?;
                point.commit = commit.to_string();
                Some(point)
            })
            .collect();
        points.sort_by_key(|p| (p.step, p.side == Side::After));
        Ok(points)
    }

    /// The chat's steps with both checkpoints, oldest first.
    pub(crate) fn steps(&self, chat: &str) -> Result<Vec<Step>, CheckpointError> {
        let mut open: BTreeMap<u64, Point> = BTreeMap::new();
        let mut steps = Vec::new();
        for point in self.points()? {
            if point.chat != chat {
                continue;
            }
            match point.side {
                Side::Before => {
                    open.insert(point.step, point);
                }
                Side::After => {
                    if let Some(before) = open.remove(&point.step) {
                        steps.push(Step {
                            before,
                            after: point,
                        });
                    }
                }
            }
        }
        Ok(steps)
    }

    /// The tree of a commit.
    pub(crate) fn tree_of(&self, commit: &str) -> Result<String, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args(["rev-parse", "--verify", "-q", &format!("{commit}^{{tree}}")]);
        Ok(git::first_line(&git::run(cmd, None)?))
    }

    /// Drop the steps `keep` does not keep (the newest is always kept) and
    /// the objects only they held; how many steps went.
    pub(crate) fn prune(&mut self, keep: super::Keep) -> Result<usize, CheckpointError> {
        let points = self.points()?;
        let newest = points.iter().map(|p| p.step).max().unwrap_or(0);
        let mut steps: Vec<u64> = points.iter().map(|p| p.step).collect();
        steps.dedup();
        let kept: BTreeSet<u64> = match keep {
            super::Keep::Last(n) => steps.iter().rev().take(n.max(1)).copied().collect(),
            super::Keep::Days(days) => {
                let since = now_secs().saturating_sub(days.saturating_mul(86_400));
                points
                    .iter()
                    .filter(|p| p.time >= since || p.step == newest)
                    .map(|p| p.step)
                    .collect()
            }
        };
        let gone: Vec<&Point> = points.iter().filter(|p| !kept.contains(&p.step)).collect();
        if gone.is_empty() {
            return Ok(0);
        }
        let mut input = String::new();
        for point in &gone {
            input.push_str(&format!("delete {}\n", ref_name(point)));
        }
        let mut cmd = self.bare();
        cmd.args(["update-ref", "--stdin"]);
        git::run(cmd, Some(input.as_bytes()))?;
        let mut cmd = self.bare();
        // Objects younger than the grace are kept: another warden (`warden
        // undo` beside a running one) may have written some that no ref
        // names yet. They go at a later prune.
        cmd.args(["prune", "--expire=10.minutes.ago"]);
        git::run(cmd, None)?;
        let steps_gone: BTreeSet<u64> = gone.iter().map(|p| p.step).collect();
        Ok(steps_gone.len())
    }
}

/// The ref of a checkpoint.
fn ref_name(point: &Point) -> String {
    let side = match point.side {
        Side::Before => "b",
        Side::After => "a",
    };
    format!("{REFS}{}/{:010}-{side}", point.chat, point.step)
}

/// Bytes under `dir` (what a store takes on disk).
pub(crate) fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(_) => total += entry.metadata().map_or(0, |m| m.len()),
                Err(_) => {}
            }
        }
    }
    total
}

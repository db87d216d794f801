//! One workspace's checkpoints: a bare repository in warden's data dir
//! whose commits are snapshots of the workspace's roots (one subtree per
//! root, named by its index), found through refs named by chat and step.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::git::{self, Git};
use super::{CheckpointError, Limits};
use crate::state::checkpoints::{Change, FileChange};

/// Ref prefix of every checkpoint.
const REFS: &str = "refs/warden/";
/// A missing object.
const ZERO: &str = "0000000000000000000000000000000000000000";
/// The first snapshot of a workspace, which hashes every file, may take
/// this many times the budget.
const FIRST_BUDGET_FACTOR: u32 = 15;
/// The suffix of the checkpoint's copy of a file kept both ways.
pub(crate) const BOTH_SUFFIX: &str = ".warden-restored";

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

/// What a restore did, by path as shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Restored {
    pub(crate) changed: Vec<String>,
    pub(crate) kept: Vec<String>,
    pub(crate) both: Vec<String>,
}

pub(crate) use crate::state::checkpoints::Resolution;

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

/// How many times a snapshot is tried when files vanish under it.
const SNAPSHOT_TRIES: usize = 3;

/// Above this many changed paths a snapshot adds the whole tree.
const PATHSPEC_MAX: usize = 256;

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

/// Where a root's `.git/config` and `.git/hooks/` are kept in a snapshot's
/// tree (git takes no path with a `.git` part).
pub(crate) const DOTGIT: &str = ".warden-dotgit";
/// Files a tool runs, looked for in each root at most.
const TOOL_FILES: usize = 2000;

/// A path of a snapshot's tree (root-relative) as on disk: [`DOTGIT`] is `.git`.
pub(crate) fn on_disk(rel: &str) -> String {
    match rel.strip_prefix(DOTGIT) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!(".git{rest}"),
        _ => rel.to_string(),
    }
}

/// The files of `root` that a tool runs and git may leave out: the
/// repository's `.git/config` and `.git/hooks/*`, and `.envrc`, `.vscode/`,
/// `.idea/`, `.husky/`, a virtualenv's `bin/` (an activated one is on the
/// user's `PATH`), `node_modules/.bin/` (regular files: a symlink there is
/// npm's), the agents' workspace config (`.claude/settings.local.json`,
/// `.mcp.json`, ...) (when ignored): (path on disk, path in the tree, x bit). Regular
/// files only, none over `max_size`.
fn tool_files(root: &Path, max_size: u64) -> Vec<(String, String, bool)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut out = Vec::new();
    let add = |disk: String, out: &mut Vec<(String, String, bool)>| {
        if out.len() >= TOOL_FILES {
            return;
        }
        if let Ok(meta) = std::fs::symlink_metadata(root.join(&disk))
            && meta.is_file()
            && meta.len() <= max_size
        {
            let repo = match disk.strip_prefix(".git/") {
                Some(rest) => format!("{DOTGIT}/{rest}"),
                None => disk.clone(),
            };
            out.push((disk, repo, meta.permissions().mode() & 0o100 != 0));
        }
    };
    // A `.git` directory (a worktree's `.git` file has no hooks of its own).
    if std::fs::symlink_metadata(root.join(".git")).is_ok_and(|m| m.is_dir()) {
        add(".git/config".into(), &mut out);
        for rel in walk(root, ".git/hooks") {
            add(rel, &mut out);
        }
    }
    add(".envrc".into(), &mut out);
    for file in crate::state::checkpoints::AGENT_FILES {
        add((*file).into(), &mut out);
    }
    for dir in [
        ".vscode",
        ".idea",
        ".husky",
        ".venv/bin",
        "venv/bin",
        "node_modules/.bin",
        ".claude/hooks",
        ".claude/commands",
    ] {
        for rel in walk(root, dir) {
            add(rel, &mut out);
        }
    }
    out
}

/// The files under `root/dir`, as root-relative paths (no symlink
/// followed), at most [`TOOL_FILES`].
fn walk(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_string()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&at)) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= TOOL_FILES {
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{at}/{name}");
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(rel),
                Ok(t) if t.is_file() => out.push(rel),
                _ => {}
            }
        }
    }
    out.sort();
    out
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
    /// [`DOTGIT`], an ignored `.envrc`, `.vscode/`, `.idea/` under their
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
        let mut paths = Vec::new();
        for (disk, _, _) in &files {
            paths.extend_from_slice(self.roots[i].join(disk).as_os_str().as_encoded_bytes());
            paths.push(b'\n');
        }
        let mut cmd = self.bare();
        cmd.args(["hash-object", "-w", "--no-filters", "--stdin-paths"]);
        let out = git::run(cmd, Some(&paths))?;
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

    /// A root-relative path as shown: relative in the first root (the
    /// cwd), absolute in the others.
    fn shown(&self, i: usize, rel: &str) -> String {
        let rel = on_disk(rel);
        if i == 0 {
            rel
        } else {
            self.roots[i].join(rel).display().to_string()
        }
    }

    /// `i/rel` in a snapshot's tree, as shown.
    fn shown_repo(&self, repo: &str) -> String {
        match repo.split_once('/') {
            Some((i, rel)) => match i.parse::<usize>() {
                Ok(i) if i < self.roots.len() => self.shown(i, rel),
                _ => repo.to_string(),
            },
            None => repo.to_string(),
        }
    }

    /// The ignored files of root `i` with an executable bit, as
    /// [`tool_files`] lists them (none of `known`): a tool may run them and
    /// git leaves them out. Not those in an ignored directory (a build's
    /// output, listed whole by git), nor warden's own files.
    fn ignored_executables(
        &self,
        i: usize,
        max_size: u64,
        known: &[(String, String, bool)],
    ) -> Result<Vec<(String, String, bool)>, CheckpointError> {
        use std::os::unix::fs::PermissionsExt as _;
        // The project's ignore rules only: warden's own files are
        // filtered below (`is_own`).
        let mut cmd = self
            .git
            .command(Some((&self.roots[i], &self.index(i))), None);
        cmd.args([
            "ls-files",
            "-z",
            "-o",
            "-i",
            "--exclude-standard",
            "--directory",
        ]);
        let own = std::fs::read_to_string(self.excludes(i))?;
        let mut out = Vec::new();
        for rel in records(&git::run(cmd, None)?) {
            if known.len() + out.len() >= TOOL_FILES {
                break;
            }
            if rel.ends_with('/') || is_own(&own, &rel) || known.iter().any(|k| k.0 == rel) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.roots[i].join(&rel)) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_file() && meta.len() <= max_size && mode & 0o111 != 0 {
                self.ignored_tools.borrow_mut().insert(format!("{i}/{rel}"));
                out.push((rel.clone(), rel, mode & 0o100 != 0));
            }
        }
        Ok(out)
    }

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

    /// The tree of a commit.
    pub(crate) fn tree_of(&self, commit: &str) -> Result<String, CheckpointError> {
        let mut cmd = self.bare();
        cmd.args(["rev-parse", "--verify", "-q", &format!("{commit}^{{tree}}")]);
        Ok(git::first_line(&git::run(cmd, None)?))
    }

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
            super::apply::apply(&self.roots[i], &edits)?;
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
    ) -> Result<Vec<super::apply::Edit>, CheckpointError> {
        use super::apply::Edit;
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

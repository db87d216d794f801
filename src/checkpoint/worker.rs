//! The checkpoint worker: one thread that runs every snapshot, plan,
//! restore, listing and prune in the order they were queued (so a prompt's
//! "before" always follows the previous turn's end), and answers with
//! messages for the chat. Pruning runs when the queue has been idle.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use super::store::{AsOf, Point, RestoreBy, Side, Snap, Step, Store, What};
use super::{CheckpointError, Keep, Limits};
use super::{FileDiff, ListedStep, Report, Resolution, RestorePlan};

/// Where the answers go (the runtime's inbox, for one chat).
pub(crate) type Reply = Box<dyn Fn(Report) + Send>;

/// How long the queue stays idle before due prunes run.
const IDLE: Duration = Duration::from_millis(500);
/// Steps `/checkpoints` lists at most (the newest).
const LISTED: usize = 30;
/// Files and bytes per file `/changes` shows as diffs at most.
const DIFF_FILES: usize = 40;
const DIFF_BYTES: u64 = 256 * 1024;

/// A chat's workspace and its limits.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    /// The directory of the stores.
    pub(crate) base: PathBuf,
    /// The cwd first, then the other roots (canonical).
    pub(crate) roots: Vec<PathBuf>,
    /// The chat, safe for a ref name.
    pub(crate) chat: String,
    pub(crate) limits: Limits,
    pub(crate) keep: Keep,
    pub(crate) tell_agent: bool,
    /// warden's own files, never snapshotted nor restored.
    pub(crate) own: Vec<PathBuf>,
    /// The agent's other writable directories: no `git` from there.
    pub(crate) writable: Vec<PathBuf>,
}

/// What a snapshot left out: files over the size limit (as shown, bytes)
/// and nested repositories (as shown).
type Left = (Vec<(String, u64)>, Vec<String>);

/// Snapshots of a workspace kept in memory as bases for the next ones.
const HISTORY: usize = 8;
/// The ref that keeps a chat-open baseline's objects from a prune.
const BASELINE_REF: &str = "refs/warden-baseline";

/// A job for the worker; each answers through its `Reply`.
pub(crate) enum Job {
    /// The workspace as a chat opens: the base of its first prompt's
    /// "before" (always answered with `Baseline`).
    Baseline { ws: Workspace },
    /// The checkpoint before a prompt sent at `sent` (always answered with
    /// `Before`). The prompt went at once: the turn may already be
    /// writing, so this is the workspace as it was at `sent`.
    Before {
        ws: Workspace,
        prompt: String,
        sent: SystemTime,
    },
    /// The checkpoint at a turn's end, the workspace as it was at `ended`.
    After { ws: Workspace, ended: SystemTime },
    /// Run nothing until `until` hangs up (tests: a worker that is busy).
    Hold { until: mpsc::Receiver<()> },
    /// Plan a restore.
    Plan { ws: Workspace, target: Target },
    /// Carry out a plan.
    Restore {
        ws: Workspace,
        plan: Box<RestorePlan>,
        resolution: Resolution,
    },
    /// The chat's steps.
    List { ws: Workspace },
    /// A step's diff (`None`: the last step's).
    Changes { ws: Workspace, step: Option<u64> },
}

/// What a restore goes back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Before the last turn not yet undone (`/undo`).
    Undo,
    /// Before the last undo not yet redone (`/redo`).
    Redo,
    /// Before this step (`/checkpoints`).
    Step(u64),
}

/// The chat's undo and redo stacks, read from its steps: what the next
/// `/undo` and `/redo` go back to.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct History {
    /// Indexes (in the steps) of the turns not undone, oldest first.
    pub(crate) done: Vec<usize>,
    /// Indexes of the undos not redone, each with the `done` it undid.
    pub(crate) undone: Vec<(usize, Vec<usize>)>,
}

impl History {
    pub(crate) fn of(steps: &[Step]) -> History {
        let mut history = History::default();
        // The turns not undone before each step: a restore to before step
        // `t` brings back what was done then (fewer turns, or, to before a
        // restore, the turns that restore took back).
        let mut done_before: Vec<Vec<usize>> = Vec::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            done_before.push(history.done.clone());
            match &step.before.what {
                What::Turn { .. } => {
                    history.done.push(i);
                    history.undone.clear();
                }
                What::Restore {
                    by: Some(RestoreBy::Undo(to)),
                    ..
                } => {
                    let saved = history.done.clone();
                    history.done = steps[..i]
                        .iter()
                        .position(|s| s.before.step == *to)
                        .and_then(|t| done_before.get(t).cloned())
                        .unwrap_or_default();
                    history.undone.push((i, saved));
                }
                What::Restore {
                    by: Some(RestoreBy::Redo(of)),
                    ..
                } => match history.undone.pop() {
                    Some((undo, saved)) if steps[undo].before.step == *of => history.done = saved,
                    _ => history = History::default(),
                },
                // A restore of an older warden: nothing before it to step through.
                What::Restore { by: None, .. } => history = History::default(),
            }
        }
        history
    }
}

/// The handle the runtime keeps.
#[derive(Debug)]
pub(crate) struct Worker {
    tx: mpsc::Sender<(Job, Reply)>,
}

impl Worker {
    /// Start the thread.
    pub(crate) fn start() -> Worker {
        let (tx, rx) = mpsc::channel::<(Job, Reply)>();
        let spawned = std::thread::Builder::new()
            .name("warden-checkpoints".into())
            .spawn(move || Runner::default().run(&rx));
        if let Err(err) = spawned {
            tracing::warn!("the checkpoint worker did not start: {err}");
        }
        Worker { tx }
    }

    /// Queue a job; false when the worker is gone.
    pub(crate) fn send(&self, job: Job, reply: Reply) -> bool {
        self.tx.send((job, reply)).is_ok()
    }
}

/// The worker's own memory.
#[derive(Default)]
pub(crate) struct Runner {
    stores: HashMap<PathBuf, Store>,
    /// Workspaces whose checkpoints are off, and why.
    off: HashMap<PathBuf, String>,
    /// A chat's turn whose end is still to come: (step, its before commit).
    open: HashMap<(PathBuf, String), (u64, String)>,
    /// Stores to prune when idle, with what they keep.
    due: HashMap<PathBuf, Keep>,
    /// Each store's latest snapshots, oldest first: the instant each
    /// stands for, and its tree.
    history: HashMap<PathBuf, Vec<(SystemTime, String)>>,
    /// Each store's removals seen, and the tree whose directories it
    /// watches.
    watchers: HashMap<PathBuf, (super::gone::Watcher, String)>,
}

impl Runner {
    fn run(mut self, rx: &mpsc::Receiver<(Job, Reply)>) {
        loop {
            match rx.recv_timeout(IDLE) {
                Ok((job, reply)) => self.job(job, &reply),
                Err(mpsc::RecvTimeoutError::Timeout) => self.prune_due(),
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn prune_due(&mut self) {
        for (dir, keep) in std::mem::take(&mut self.due) {
            if let Some(store) = self.stores.get_mut(&dir)
                && let Err(err) = store.prune(keep)
            {
                tracing::warn!("pruning checkpoints in {}: {err}", dir.display());
            }
        }
    }

    fn job(&mut self, job: Job, reply: &Reply) {
        match job {
            Job::Hold { until } => {
                let _ = until.recv();
            }
            Job::Baseline { ws } => {
                let (skipped, nested) = self.baseline(&ws, reply);
                reply(Report::Baseline { skipped, nested });
            }
            Job::Before { ws, prompt, sent } => {
                let ((skipped, nested), unsure) = self.before(&ws, prompt, sent, reply);
                reply(Report::Before {
                    skipped,
                    nested,
                    unsure,
                });
            }
            Job::After { ws, ended } => self.after(&ws, ended, reply),
            Job::Plan { ws, target } => match self.plan(&ws, target) {
                Ok(msg) => reply(msg),
                Err(err) => self.failed(&ws, &err, reply),
            },
            Job::Restore {
                ws,
                plan,
                resolution,
            } => match self.restore(&ws, &plan, resolution) {
                Ok(msg) => reply(msg),
                Err(err) => self.failed(&ws, &err, reply),
            },
            Job::List { ws } => match self.list(&ws) {
                Ok(steps) => reply(Report::Listed(steps)),
                Err(err) => self.failed(&ws, &err, reply),
            },
            Job::Changes { ws, step } => match self.changes(&ws, step) {
                Ok(msg) => reply(msg),
                Err(err) => self.failed(&ws, &err, reply),
            },
        }
    }

    fn failed(&mut self, ws: &Workspace, err: &CheckpointError, reply: &Reply) {
        if let CheckpointError::TooLarge(why) = err {
            let dir = super::store::store_dir(&ws.base, &ws.roots);
            self.off.insert(dir, why.clone());
            reply(Report::Off(why.clone()));
        } else {
            reply(Report::Failed(err.to_string()));
        }
    }

    /// The workspace's store, unless its checkpoints are off.
    fn store(&mut self, ws: &Workspace) -> Result<Option<&mut Store>, CheckpointError> {
        let dir = super::store::store_dir(&ws.base, &ws.roots);
        if self.off.contains_key(&dir) {
            return Ok(None);
        }
        if !self.stores.contains_key(&dir) {
            let store = Store::open_beside(&ws.base, &ws.roots, &ws.own, &ws.writable)?;
            self.stores.insert(dir.clone(), store);
        }
        Ok(self.stores.get_mut(&dir))
    }

    /// Snapshot the workspace now, and keep the tree as a base for the
    /// snapshots after it (it stands for the instant the scan ended).
    fn snapshot_now(
        &mut self,
        ws: &Workspace,
    ) -> Result<Option<(Snap, &mut Store)>, CheckpointError> {
        let dir = super::store::store_dir(&ws.base, &ws.roots);
        let Some(store) = self.store(ws)? else {
            return Ok(None);
        };
        let snap = store.snapshot(&ws.limits)?;
        self.remember(dir.clone(), SystemTime::now(), &snap.tree);
        self.watch(&dir, &snap.tree);
        Ok(self.store(ws)?.map(|store| (snap, store)))
    }

    /// Watch the directories of `tree`, the store's newest snapshot, for
    /// removals (`gone::Watcher`).
    fn watch(&mut self, dir: &PathBuf, tree: &str) {
        if self.watchers.get(dir).is_some_and(|(_, t)| t == tree) {
            return;
        }
        let Some(store) = self.stores.get(dir) else {
            return;
        };
        let Ok(dirs) = store.dirs_of(tree) else {
            return;
        };
        if !self.watchers.contains_key(dir) {
            let Some(watcher) = super::gone::Watcher::start() else {
                return;
            };
            self.watchers.insert(dir.clone(), (watcher, String::new()));
        }
        if let Some((watcher, watched)) = self.watchers.get_mut(dir) {
            watcher.watch(dirs);
            *watched = tree.to_string();
        }
    }

    fn remember(&mut self, dir: PathBuf, at: SystemTime, tree: &str) {
        let kept = self.history.entry(dir).or_default();
        kept.push((at, tree.to_string()));
        if kept.len() > HISTORY {
            kept.remove(0);
        }
    }

    /// The workspace as it was at `as_of`, though the scan runs later:
    /// from the newest snapshot that stands for an instant before it, with
    /// what changed since taken from the disk when it changed before
    /// `as_of` (`Store::as_of`). Also whether no such snapshot was known
    /// (the base is then the oldest known, and a write of the turn made
    /// before that one's scan ended may be in the result).
    fn snapshot_as_of(
        &mut self,
        ws: &Workspace,
        as_of: AsOf,
    ) -> Result<Option<(Snap, bool)>, CheckpointError> {
        let dir = super::store::store_dir(&ws.base, &ws.roots);
        let at = as_of.instant();
        let kept = self.history.get(&dir).cloned().unwrap_or_default();
        let base = kept
            .iter()
            .filter(|(when, _)| *when <= at)
            .max_by_key(|(when, _)| *when)
            .or_else(|| kept.first())
            .map(|(when, tree)| (tree.clone(), *when > at));
        if self.store(ws)?.is_none() {
            return Ok(None);
        }
        let watcher = self.watchers.get(&dir).map(|(w, _)| w);
        let Some(store) = self.stores.get(&dir) else {
            return Ok(None);
        };
        let mut snap = store.snapshot(&ws.limits)?;
        let scanned = snap.tree.clone();
        let left = |path: &std::path::Path| watcher.and_then(|w| w.left(path));
        let unsure = match base {
            Some((tree, late)) => {
                snap.tree = store.as_of(&tree, &snap.tree, as_of, &left)?;
                late
            }
            None => true,
        };
        self.remember(dir.clone(), at, &snap.tree);
        self.watch(&dir, &scanned);
        Ok(Some((snap, unsure)))
    }

    /// The chat-open snapshot; the files left out.
    fn baseline(&mut self, ws: &Workspace, reply: &Reply) -> Left {
        let taken = (|| {
            let Some((snap, store)) = self.snapshot_now(ws)? else {
                return Ok(Left::default());
            };
            store.keep_tree(&snap.tree, BASELINE_REF)?;
            Ok::<_, CheckpointError>((snap.skipped, snap.nested))
        })();
        taken.unwrap_or_else(|err| {
            self.failed(ws, &err, reply);
            Left::default()
        })
    }

    /// Take the "before" checkpoint of a prompt sent at `sent`; the files
    /// left out, and whether the turn may have written before its base.
    fn before(
        &mut self,
        ws: &Workspace,
        prompt: String,
        sent: SystemTime,
        reply: &Reply,
    ) -> (Left, bool) {
        let dir = super::store::store_dir(&ws.base, &ws.roots);
        let taken = (|| {
            let Some((snap, unsure)) = self.snapshot_as_of(ws, AsOf::Sent(sent))? else {
                return Ok(None);
            };
            let Some(store) = self.store(ws)? else {
                return Ok(None);
            };
            let step = store.new_step();
            let point = store.record(
                &snap.tree,
                point(ws, step, Side::Before, What::Turn { prompt }),
            )?;
            let left = (snap.skipped, snap.nested);
            Ok::<_, CheckpointError>(Some((step, point.commit, left, unsure)))
        })();
        match taken {
            Ok(Some((step, commit, left, unsure))) => {
                self.open.insert((dir, ws.chat.clone()), (step, commit));
                (left, unsure)
            }
            Ok(None) => (Left::default(), false),
            Err(err) => {
                self.failed(ws, &err, reply);
                (Left::default(), false)
            }
        }
    }

    fn after(&mut self, ws: &Workspace, ended: SystemTime, reply: &Reply) {
        let dir = super::store::store_dir(&ws.base, &ws.roots);
        let Some((step, before)) = self.open.remove(&(dir.clone(), ws.chat.clone())) else {
            return;
        };
        let done = (|| {
            let Some((snap, _)) = self.snapshot_as_of(ws, AsOf::Ended(ended))? else {
                return Ok(None);
            };
            let Some(store) = self.store(ws)? else {
                return Ok(None);
            };
            let what = What::Turn {
                prompt: String::new(),
            };
            let point = store.record(&snap.tree, point(ws, step, Side::After, what))?;
            Ok::<_, CheckpointError>(Some(store.diff(&before, &point.commit)?))
        })();
        match done {
            Ok(Some(files)) => {
                self.due.insert(dir, ws.keep);
                reply(Report::TurnChanged { files });
            }
            Ok(None) => {}
            Err(err) => self.failed(ws, &err, reply),
        }
    }

    pub(crate) fn plan(
        &mut self,
        ws: &Workspace,
        target: Target,
    ) -> Result<Report, CheckpointError> {
        let Some(store) = self.store(ws)? else {
            return Ok(Report::Nothing("checkpoints are off here".into()));
        };
        let steps = store.steps(&ws.chat)?;
        let history = History::of(&steps);
        // What a redo goes back to reads best as the turn it brings back.
        let mut redone = None;
        let (index, by) = match target {
            Target::Undo => match history.done.last() {
                Some(&i) => (i, RestoreBy::Undo(steps[i].before.step)),
                None if steps.is_empty() => {
                    return Ok(Report::Nothing("no turn of this chat to undo yet".into()));
                }
                None => {
                    return Ok(Report::Nothing(
                        "no turn left to undo (/redo reverses an undo; /checkpoints lists every step)"
                            .into(),
                    ));
                }
            },
            Target::Redo => match history.undone.last() {
                Some((i, done)) => {
                    redone = done.last().copied();
                    (*i, RestoreBy::Redo(steps[*i].before.step))
                }
                None => {
                    return Ok(Report::Nothing(
                        "no undo to reverse (/checkpoints lists every step)".into(),
                    ));
                }
            },
            Target::Step(step) => match steps.iter().position(|s| s.before.step == step) {
                Some(i) => (i, RestoreBy::Undo(step)),
                None => {
                    return Ok(Report::Nothing("that checkpoint is gone (pruned)".into()));
                }
            },
        };
        let Some(last) = steps.last() else {
            return Ok(Report::Nothing("no turn of this chat to undo yet".into()));
        };
        let label = match redone {
            Some(turn) => format!("after {}", step_name(&steps, turn)),
            None => format!("before {}", step_name(&steps, index)),
        };
        let target = steps[index].before.commit.clone();
        let seen = last.after.commit.clone();
        let Some((snap, store)) = self.snapshot_now(ws)? else {
            return Ok(Report::Nothing("checkpoints are off here".into()));
        };
        let new_step = store.new_step();
        let what = What::Restore {
            to: label.clone(),
            by: Some(by),
        };
        let now = store.record(&snap.tree, point(ws, new_step, Side::Before, what))?;
        let files = store.diff(&now.commit, &target)?;
        if files.is_empty() {
            return Ok(Report::Nothing(format!(
                "nothing to restore: the files are already as {label}"
            )));
        }
        let since: BTreeSet<String> = store
            .diff(&seen, &now.commit)?
            .into_iter()
            .map(|f| f.repo_path)
            .collect();
        let conflicts = files
            .iter()
            .filter(|f| since.contains(&f.repo_path))
            .map(|f| f.repo_path.clone())
            .collect();
        Ok(Report::Plan(RestorePlan {
            step: new_step,
            label,
            from: now.commit,
            to: target,
            files,
            conflicts,
        }))
    }

    pub(crate) fn restore(
        &mut self,
        ws: &Workspace,
        plan: &RestorePlan,
        resolution: Resolution,
    ) -> Result<Report, CheckpointError> {
        // The files must still be as the plan saw them.
        let Some((snap, store)) = self.snapshot_now(ws)? else {
            return Ok(Report::Nothing("checkpoints are off here".into()));
        };
        if snap.tree != store.tree_of(&plan.from)? {
            return Ok(Report::Failed(
                "the files changed since the restore was asked for: nothing restored (ask again)"
                    .into(),
            ));
        }
        let done = store.restore(&plan.from, &plan.to, &plan.conflicts, resolution)?;
        let Some((snap, store)) = self.snapshot_now(ws)? else {
            return Ok(Report::Nothing("checkpoints are off here".into()));
        };
        let what = What::Restore {
            to: plan.label.clone(),
            by: None,
        };
        store.record(&snap.tree, point(ws, plan.step, Side::After, what))?;
        Ok(Report::Restored {
            label: plan.label.clone(),
            changed: done.changed,
            kept: done.kept,
            both: done.both,
            tell_agent: ws.tell_agent,
        })
    }

    pub(crate) fn list(&mut self, ws: &Workspace) -> Result<Vec<ListedStep>, CheckpointError> {
        let Some(store) = self.store(ws)? else {
            return Ok(Vec::new());
        };
        let steps = store.steps(&ws.chat)?;
        let first = steps.len().saturating_sub(LISTED);
        let mut listed = Vec::new();
        for (i, step) in steps.iter().enumerate().skip(first) {
            listed.push(ListedStep {
                step: step.before.step,
                label: step_label(&steps, i),
                files: store.diff(&step.before.commit, &step.after.commit)?,
            });
        }
        Ok(listed)
    }

    pub(crate) fn changes(
        &mut self,
        ws: &Workspace,
        step: Option<u64>,
    ) -> Result<Report, CheckpointError> {
        let Some(store) = self.store(ws)? else {
            return Ok(Report::Nothing("checkpoints are off here".into()));
        };
        let steps = store.steps(&ws.chat)?;
        let index = match step {
            None => steps.len().checked_sub(1),
            Some(step) => steps.iter().position(|s| s.before.step == step),
        };
        let Some(index) = index else {
            return Ok(Report::Nothing(match step {
                None => "no turn of this chat has ended yet".into(),
                Some(_) => "that checkpoint is gone (pruned)".into(),
            }));
        };
        let last = &steps[index];
        let label = step_name(&steps, index);
        let files = store.diff(&last.before.commit, &last.after.commit)?;
        let diffs = files
            .into_iter()
            .enumerate()
            .map(|(i, change)| {
                let (old, new) = if i < DIFF_FILES {
                    (
                        store.text(&last.before.commit, &change.repo_path, DIFF_BYTES),
                        store.text(&last.after.commit, &change.repo_path, DIFF_BYTES),
                    )
                } else {
                    (None, None)
                };
                FileDiff { change, old, new }
            })
            .collect();
        Ok(Report::Changes {
            label,
            files: diffs,
        })
    }
}

fn point(ws: &Workspace, step: u64, side: Side, what: What) -> Point {
    Point {
        chat: ws.chat.clone(),
        step,
        side,
        what,
        time: 0,
        commit: String::new(),
    }
}

/// "turn 3", "the undo to before turn 2", "the redo to after turn 2".
pub(crate) fn step_name(steps: &[Step], index: usize) -> String {
    match &steps[index].before.what {
        What::Turn { .. } => {
            let n = steps[..=index]
                .iter()
                .filter(|s| matches!(s.before.what, What::Turn { .. }))
                .count();
            format!("turn {n}")
        }
        What::Restore {
            to,
            by: Some(RestoreBy::Undo(_)),
        } => format!("the undo to {to}"),
        What::Restore {
            to,
            by: Some(RestoreBy::Redo(_)),
        } => format!("the redo to {to}"),
        What::Restore { to, by: None } => format!("the restore to {to}"),
    }
}

/// The line of a step in a list: its name and the prompt's first line.
pub(crate) fn step_label(steps: &[Step], index: usize) -> String {
    let name = step_name(steps, index);
    match &steps[index].before.what {
        What::Turn { prompt } if !prompt.is_empty() => format!("{name}: {prompt}"),
        _ => name,
    }
}

/// A prompt's first line, short, for the list (warden's own notes before
/// the user's words left out).
pub(crate) fn prompt_label(text: &str) -> String {
    let first = text
        .split("\n\n")
        .find(|p| !p.starts_with("[warden:"))
        .and_then(|p| p.lines().next())
        .unwrap_or_default();
    let line = crate::sanitize::one_line(first);
    let mut out: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        out.push('…');
    }
    out
}

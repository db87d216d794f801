//! Checkpoints as the chat sees them (pure): the line after a turn that
//! changed files, the `/undo` card that lists the files and asks `y` (and
//! what to do with files the user changed since), the `/checkpoints` list,
//! the `/changes` diff, and the note the next prompt gives the agent after
//! an undo. The snapshots and restores themselves run on the runtime's
//! checkpoint worker (`src/checkpoint/`).

use std::collections::BTreeSet;

use super::drafts::{Popup, PopupItem};
use super::{Action, ChatState, Effect, EntryKind};
use crate::agents::quirks;
use crate::model::{ToolCall, ToolContent, ToolKind, WireStatus};

// The plain types of a checkpoint's report are the checkpoint room's own
// (`checkpoint::report`, which imports nothing): the state reads them as
// they come, and the runtime needs no mapping.
pub use crate::checkpoint::report::{
    Change, FileChange, FileDiff, ListedStep, Report as CheckpointMsg, Resolution, RestorePlan,
};

impl Change {
    fn letter(self) -> char {
        match self {
            Change::Added => 'A',
            Change::Modified => 'M',
            Change::Deleted => 'D',
        }
    }
}

/// Checkpoint work for the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointEffect {
    /// The turn ended: take its end checkpoint.
    TurnEnded,
    /// Plan a restore to before the chat's last turn not yet undone (`/undo`).
    Undo,
    /// Plan a restore that undoes the last undo (`/redo`).
    Redo,
    /// Plan a restore to before this step (`/checkpoints`, Enter).
    Plan(u64),
    /// Restore, as planned, treating changed files this way.
    Restore(Box<RestorePlan>, Resolution),
    /// List the chat's steps.
    List,
    /// The diff of this step (`/checkpoints`, `d`), or of the chat's last
    /// (`/changes`).
    Changes(Option<u64>),
}

/// The chat's checkpoint view.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Checkpoints {
    /// The restore card, while open.
    pub confirm: Option<RestorePlan>,
    /// The `/checkpoints` list, while open, and its highlighted row.
    pub list: Option<(Vec<ListedStep>, usize)>,
    /// Files restored since the last prompt: the next one tells the agent.
    pub restored: Option<String>,
    /// Checkpoints are off for this workspace.
    pub off: Option<String>,
    /// Files already said to be too large.
    skipped_seen: BTreeSet<String>,
    /// `/changes` entries made, for their ids.
    shown: u64,
}

/// Totals of a list of changes: files, lines added, lines removed.
pub fn totals(files: &[FileChange]) -> (usize, u64, u64) {
    let added = files.iter().filter_map(|f| f.added).sum();
    let removed = files.iter().filter_map(|f| f.removed).sum();
    (files.len(), added, removed)
}

/// "3 files (+12 −4)".
pub fn summary(files: &[FileChange]) -> String {
    let (n, added, removed) = totals(files);
    let noun = if n == 1 { "file" } else { "files" };
    format!("{n} {noun} (+{added} −{removed})")
}

fn counts(file: &FileChange) -> String {
    match (file.added, file.removed) {
        (Some(a), Some(r)) => format!("+{a} −{r}"),
        _ => "binary".into(),
    }
}

/// Whether a changed file is one a tool runs or reads for commands: the
/// repository's `.git/` (hooks, config), `.envrc` (direnv), `.vscode/`,
/// `.idea/` (editor tasks and run configurations), `.husky/` (git hooks),
/// a virtualenv's `bin/` (on the user's `PATH` once activated),
/// `node_modules/.bin/` (what npm scripts and `npx` run), and the
/// workspace's config of the agents (hooks, MCP servers: each agent's
/// file says which, `agents::quirks::workspace_files` and
/// `workspace_dirs`).
pub(crate) fn runs_as_tool(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    dirs.iter()
        .any(|d| matches!(*d, ".git" | ".vscode" | ".idea" | ".husky"))
        || dirs.windows(2).any(|w| {
            matches!(
                (w[0], w[1]),
                (".venv" | "venv", "bin") | ("node_modules", ".bin")
            )
        })
        || parts.last() == Some(&".envrc")
        || quirks::workspace_files().any(|f| path == f || path.ends_with(&format!("/{f}")))
        || quirks::workspace_dirs()
            .any(|d| path.starts_with(&format!("{d}/")) || path.contains(&format!("/{d}/")))
}

/// What the agent is told after an undo, before the user's next prompt.
pub(crate) fn agent_note(restored: &str) -> String {
    format!(
        "[warden: since your last turn the user restored files in the workspace ({restored}). \
         Your earlier changes to them are undone; read the files again before relying on \
         what the conversation says about them.]"
    )
}

impl ChatState {
    /// `/undo`, `/redo`, `/changes`, `/checkpoints`.
    pub(super) fn checkpoint_command(&mut self, name: &str) -> Vec<Effect> {
        if let Some(why) = &self.view.checkpoints.off {
            self.view.notice = Some(format!("checkpoints are off here: {why}"));
            return Vec::new();
        }
        if self.is_busy() && name != "changes" {
            self.view.notice = Some("wait for the turn to end (Esc cancels it)".into());
            return Vec::new();
        }
        let effect = match name {
            "undo" => CheckpointEffect::Undo,
            "redo" => CheckpointEffect::Redo,
            "changes" => CheckpointEffect::Changes(None),
            _ => CheckpointEffect::List,
        };
        vec![Effect::Checkpoint(effect)]
    }

    /// A message from the checkpoint worker.
    pub(super) fn on_checkpoint(&mut self, msg: CheckpointMsg) -> Vec<Effect> {
        let msg_unsure = match &msg {
            CheckpointMsg::Before { unsure, .. } => Some(*unsure),
            _ => None,
        };
        let view = &mut self.view.checkpoints;
        match msg {
            CheckpointMsg::Baseline { skipped, nested }
            | CheckpointMsg::Before {
                skipped, nested, ..
            } => {
                if matches!(msg_unsure, Some(true)) {
                    self.info(
                        "the turn began before the workspace's first checkpoint was complete: \
                         /undo may not put back what it wrote first",
                    );
                }
                let view = &mut self.view.checkpoints;
                let new: Vec<String> = skipped
                    .into_iter()
                    .filter(|(path, _)| view.skipped_seen.insert(path.clone()))
                    .map(|(path, size)| format!("{} ({} MB)", path, size / (1024 * 1024)))
                    .collect();
                if !new.is_empty() {
                    self.info(format!(
                        "not checkpointed, over [checkpoints] max_file_size: {}",
                        crate::sanitize::one_line(&new.join(", "))
                    ));
                }
                let view = &mut self.view.checkpoints;
                let nested: Vec<String> = nested
                    .into_iter()
                    .filter(|path| view.skipped_seen.insert(path.clone()))
                    .collect();
                if !nested.is_empty() {
                    self.info(format!(
                        "not checkpointed, a repository of its own (/undo leaves it as it is): {}",
                        crate::sanitize::one_line(&nested.join(", "))
                    ));
                }
            }
            CheckpointMsg::TurnChanged { files } => {
                if !files.is_empty() {
                    self.info(format!(
                        "turn changed {} · /undo · /changes",
                        crate::sanitize::one_line(&summary(&files))
                    ));
                }
                let run: Vec<&str> = files
                    .iter()
                    .filter(|f| f.tool || runs_as_tool(&f.path))
                    .map(|f| f.path.as_str())
                    .collect();
                if !run.is_empty() {
                    self.error(
                        format!(
                            "the turn changed files a tool runs: {}",
                            crate::sanitize::one_line(&run.join(", "))
                        ),
                        vec![
                            "git, direnv or your editor may run them: /changes shows them, \
                             /undo puts them back"
                                .into(),
                        ],
                    );
                }
            }
            CheckpointMsg::Off(why) => {
                let first = view.off.is_none();
                view.off = Some(why.clone());
                if first {
                    self.error(
                        format!(
                            "checkpoints are off for this workspace: {}",
                            crate::sanitize::one_line(&why)
                        ),
                        vec!["turns go on as before; /undo cannot restore them".into()],
                    );
                }
            }
            CheckpointMsg::Plan(plan) => {
                view.list = None;
                view.confirm = Some(plan);
            }
            CheckpointMsg::Nothing(why) => self.info(crate::sanitize::one_line(&why)),
            CheckpointMsg::Restored {
                label,
                changed,
                kept,
                both,
                tell_agent,
            } => {
                let noun = if changed.len() == 1 { "file" } else { "files" };
                let mut text = format!(
                    "restored {} {noun} to {label} · /undo steps back a turn · /redo reverses an undo",
                    changed.len(),
                );
                if !kept.is_empty() {
                    text.push_str(&format!("; left as you changed them: {}", kept.join(", ")));
                }
                if !both.is_empty() {
                    text.push_str(&format!("; the checkpoint's copies: {}", both.join(", ")));
                }
                text.push_str(if tell_agent {
                    ". The agent still remembers its changes: your next prompt tells it the files were restored"
                } else {
                    ". The agent still remembers its changes (it is not told: [checkpoints] tell_agent = false)"
                });
                self.info(crate::sanitize::one_line(&text));
                if tell_agent && !changed.is_empty() {
                    let shown: Vec<&str> = changed.iter().take(20).map(String::as_str).collect();
                    let mut names = shown.join(", ");
                    if changed.len() > shown.len() {
                        names.push_str(&format!(" and {} more", changed.len() - shown.len()));
                    }
                    // Every restore since the last prompt is told, oldest first.
                    let this = format!("{label}: {names}");
                    let restored = &mut self.view.checkpoints.restored;
                    *restored = Some(match restored.take() {
                        Some(before) => format!("{before}; {this}"),
                        None => this,
                    });
                }
            }
            CheckpointMsg::Listed(steps) => {
                if steps.is_empty() {
                    self.info("no checkpoints of this chat yet");
                } else {
                    let last = steps.len() - 1;
                    view.list = Some((steps, last));
                }
            }
            CheckpointMsg::Changes { label, files } => {
                if files.is_empty() {
                    self.info(format!("{label} changed no files"));
                    return Vec::new();
                }
                view.shown += 1;
                let changes: Vec<FileChange> = files.iter().map(|f| f.change.clone()).collect();
                let mut call = ToolCall::placeholder(format!("warden-changes-{}", view.shown));
                call.title = format!("{label} changed {}", summary(&changes));
                call.kind = ToolKind::Edit;
                call.status = WireStatus::Completed;
                call.tool_name = Some("warden:changes".into());
                for file in files {
                    match (&file.new, file.change.change) {
                        (Some(new), _) => call.content.push(ToolContent::Diff {
                            path: file.change.path.clone(),
                            old: file.old.clone(),
                            new: new.clone(),
                        }),
                        (None, Change::Deleted) if file.old.is_some() => {
                            call.content.push(ToolContent::Diff {
                                path: file.change.path.clone(),
                                old: file.old.clone(),
                                new: String::new(),
                            });
                        }
                        _ => call.content.push(ToolContent::Text {
                            text: format!(
                                "{} {} ({})",
                                file.change.change.letter(),
                                file.change.path,
                                counts(&file.change)
                            ),
                        }),
                    }
                }
                self.session.transcript.upsert_tool(call);
            }
            CheckpointMsg::Failed(why) => {
                self.error(
                    format!("checkpoint: {}", crate::sanitize::one_line(&why)),
                    Vec::new(),
                );
            }
        }
        Vec::new()
    }

    /// A key while the restore card or the list is open; `None` when
    /// neither is.
    pub(crate) fn checkpoint_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
        if let Some(plan) = &self.view.checkpoints.confirm {
            let conflicts = !plan.conflicts.is_empty();
            let pick = match action {
                Action::Char('y') if !conflicts => Some(Resolution::Overwrite),
                Action::Char('o') if conflicts => Some(Resolution::Overwrite),
                Action::Char('k') if conflicts => Some(Resolution::KeepBoth),
                Action::Char('s') if conflicts => Some(Resolution::Skip),
                Action::Char('n') | Action::Cancel | Action::Interrupt(_) => {
                    self.view.checkpoints.confirm = None;
                    self.info("nothing restored");
                    return Some(Vec::new());
                }
                Action::Quit => return None,
                _ => return Some(Vec::new()),
            };
            let plan = self.view.checkpoints.confirm.take()?;
            return pick.map(|pick| {
                vec![Effect::Checkpoint(CheckpointEffect::Restore(
                    Box::new(plan),
                    pick,
                ))]
            });
        }
        let (steps, selected) = self.view.checkpoints.list.as_mut()?;
        match action {
            Action::Up => *selected = selected.saturating_sub(1),
            Action::Down => *selected = (*selected + 1).min(steps.len().saturating_sub(1)),
            Action::Submit => {
                let step = steps.get(*selected).map(|s| s.step);
                self.view.checkpoints.list = None;
                return Some(step.map_or_else(Vec::new, |step| {
                    vec![Effect::Checkpoint(CheckpointEffect::Plan(step))]
                }));
            }
            Action::Char('d') => {
                let step = steps.get(*selected).map(|s| s.step);
                self.view.checkpoints.list = None;
                return Some(step.map_or_else(Vec::new, |step| {
                    vec![Effect::Checkpoint(CheckpointEffect::Changes(Some(step)))]
                }));
            }
            Action::Cancel | Action::Interrupt(_) | Action::Char('q') => {
                self.view.checkpoints.list = None;
            }
            Action::Quit => return None,
            _ => {}
        }
        Some(Vec::new())
    }

    /// The restore card or the list, drawn as the composer's popup.
    pub(super) fn checkpoint_popup(&self) -> Option<Popup> {
        if let Some(plan) = &self.view.checkpoints.confirm {
            let title = if plan.conflicts.is_empty() {
                format!(
                    "restore {} to {}? y restore · n keep them",
                    summary(&plan.files),
                    plan.label
                )
            } else {
                format!(
                    "restore {} to {}? {} changed since: k keep both · s skip them · o overwrite · n cancel",
                    summary(&plan.files),
                    plan.label,
                    plan.conflicts.len()
                )
            };
            let items = plan
                .files
                .iter()
                .map(|f| PopupItem {
                    label: format!("{} {}", f.change.letter(), f.path),
                    detail: if plan.conflicts.contains(&f.repo_path) {
                        format!("{} · changed since the turn", counts(f))
                    } else {
                        counts(f)
                    },
                })
                .collect();
            return Some(Popup {
                title,
                items,
                selected: 0,
            });
        }
        let (steps, selected) = self.view.checkpoints.list.as_ref()?;
        Some(Popup {
            title: "checkpoints · ↑↓ pick · Enter restore to before it · d its diff · Esc close"
                .into(),
            selected: *selected,
            items: steps
                .iter()
                .map(|s| PopupItem {
                    label: s.label.clone(),
                    detail: if s.files.is_empty() {
                        "no files changed".into()
                    } else {
                        let names: Vec<&str> =
                            s.files.iter().take(4).map(|f| f.path.as_str()).collect();
                        format!("{}: {}", summary(&s.files), names.join(", "))
                    },
                })
                .collect(),
        })
    }

    /// The prompt as sent: after an undo, with the note for the agent first.
    pub(super) fn with_checkpoint_note(&mut self, text: String) -> String {
        match self.view.checkpoints.restored.take() {
            Some(restored) => {
                self.session.transcript.push(EntryKind::Info(
                    "this prompt tells the agent that files were restored".into(),
                ));
                format!("{}\n\n{text}", agent_note(&restored))
            }
            None => text,
        }
    }
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;

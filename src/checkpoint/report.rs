//! What the checkpoint room reports and is handed, in its own plain types:
//! the files a step changed, a restore's plan and how it treats files
//! changed since, the chat's steps, a step's diff, and [`Report`], what a
//! job answers. Plain data importing nothing: `checkpoint/` needs nothing
//! of `state/`, and the state reads these as they come (a pure door the
//! purity test allows), so no copy of them and no mapping is kept.

/// How a file changed between two checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Absent before, there after.
    Added,
    /// There both times, different.
    Modified,
    /// There before, absent after.
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// As shown: relative to the cwd, absolute in another root.
    pub path: String,
    /// Its path in the snapshot (`ROOT/rel`), to name it to the worker.
    pub repo_path: String,
    pub change: Change,
    /// Lines added and removed (`None` for a binary file).
    pub added: Option<u64>,
    pub removed: Option<u64>,
    /// An ignored file with an executable bit: a tool may run it, and
    /// git shows no change to it (the store knows; its path does not say).
    pub tool: bool,
}

/// How files the user changed since the turn are treated by a restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Leave them as they are.
    Skip,
    /// Leave them, and write the checkpoint's copy beside each.
    KeepBoth,
    /// Put the checkpoint's copy in their place.
    Overwrite,
}

/// A restore, planned, to carry out once the user says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePlan {
    /// The restore's own step (its "before" checkpoint is taken).
    pub step: u64,
    /// What it goes back to: "before turn 3".
    pub label: String,
    /// The checkpoint of the workspace as it is now, and the one restored.
    pub from: String,
    pub to: String,
    /// The files it changes.
    pub files: Vec<FileChange>,
    /// Of those, the ones changed since the turn (repo paths).
    pub conflicts: Vec<String>,
}

/// One step of a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedStep {
    pub step: u64,
    /// "turn 3: fix the parser", "restore: before turn 2".
    pub label: String,
    pub files: Vec<FileChange>,
}

/// A changed file before and after (`None`: absent, binary or large).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub change: FileChange,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What a checkpoint job answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The chat's workspace as it opened is snapshotted; the files left
    /// out for their size, and the directories left out as repositories
    /// of their own.
    Baseline {
        skipped: Vec<(String, u64)>,
        nested: Vec<String>,
    },
    /// The prompt's "before" checkpoint is taken; the files it left out
    /// for their size; `unsure`: the prompt went before any snapshot of
    /// the workspace was complete.
    Before {
        skipped: Vec<(String, u64)>,
        nested: Vec<String>,
        unsure: bool,
    },
    /// The turn's end checkpoint: what the turn changed.
    TurnChanged { files: Vec<FileChange> },
    /// Checkpoints are off for this workspace, and why.
    Off(String),
    /// A restore is ready to ask about.
    Plan(RestorePlan),
    /// Nothing to restore, and why.
    Nothing(String),
    /// Files were restored; `tell_agent`: the next prompt says so.
    Restored {
        label: String,
        changed: Vec<String>,
        kept: Vec<String>,
        both: Vec<String>,
        tell_agent: bool,
    },
    /// The chat's steps, oldest first.
    Listed(Vec<ListedStep>),
    /// A step's diff.
    Changes { label: String, files: Vec<FileDiff> },
    /// A job failed.
    Failed(String),
}

/// "3 files (+12 −4)", for `warden checkpoints` and `warden undo`.
pub(crate) fn summary(files: &[FileChange]) -> String {
    let added: u64 = files.iter().filter_map(|f| f.added).sum();
    let removed: u64 = files.iter().filter_map(|f| f.removed).sum();
    let noun = if files.len() == 1 { "file" } else { "files" };
    format!("{} {noun} (+{added} −{removed})", files.len())
}

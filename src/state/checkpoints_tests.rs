#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::state::Msg;
use crate::state::infos;

fn change(path: &str, added: u64, removed: u64) -> FileChange {
    FileChange {
        path: path.into(),
        repo_path: format!("0/{path}"),
        change: Change::Modified,
        added: Some(added),
        removed: Some(removed),
        tool: false,
    }
}

fn plan(conflicts: Vec<String>) -> RestorePlan {
    RestorePlan {
        step: 4,
        label: "before turn 2".into(),
        from: "n".into(),
        to: "t".into(),
        files: vec![change("a.rs", 3, 1), change("b.rs", 9, 3)],
        conflicts,
    }
}

#[test]
fn a_turn_that_changed_files_says_so_with_its_totals() {
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::TurnChanged {
        files: vec![
            change("a.rs", 3, 1),
            change("b.rs", 9, 3),
            change("c.rs", 0, 0),
        ],
    })));
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::TurnChanged {
        files: Vec::new(),
    })));
    assert_eq!(
        infos(&s),
        vec!["turn changed 3 files (+12 −4) · /undo · /changes".to_string()]
    );
}

#[test]
fn the_card_restores_on_y_and_keeps_everything_on_n() {
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Plan(plan(
        Vec::new(),
    )))));
    let popup = s.composer_popup().unwrap();
    assert_eq!(
        popup.title,
        "restore 2 files (+12 −4) to before turn 2? y restore · n keep them"
    );
    assert_eq!(popup.items[0].label, "M a.rs");
    let effects = s.update(Msg::Action(Action::ch('y')));
    assert_eq!(
        effects,
        vec![Effect::Checkpoint(CheckpointEffect::Restore(
            Box::new(plan(Vec::new())),
            Resolution::Overwrite
        ))]
    );
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Plan(plan(
        Vec::new(),
    )))));
    assert!(s.update(Msg::Action(Action::ch('n'))).is_empty());
    assert!(s.view.checkpoints.confirm.is_none());
    assert_eq!(s.view.composer.text(), "");
}

#[test]
fn a_changed_file_is_never_overwritten_by_y() {
    let mut s = ChatState::new("demo", "/w");
    let conflicted = plan(vec!["0/a.rs".into()]);
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Plan(
        conflicted.clone(),
    ))));
    assert!(s.update(Msg::Action(Action::ch('y'))).is_empty());
    assert_eq!(
        s.update(Msg::Action(Action::ch('s'))),
        vec![Effect::Checkpoint(CheckpointEffect::Restore(
            Box::new(conflicted),
            Resolution::Skip
        ))]
    );
}

#[test]
fn after_a_restore_the_next_prompt_tells_the_agent_once() {
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Restored {
        label: "before turn 1".into(),
        changed: vec!["a.rs".into()],
        kept: Vec::new(),
        both: Vec::new(),
        tell_agent: true,
    })));
    let sent = s.with_checkpoint_note("go on".into());
    assert!(sent.starts_with("[warden: since your last turn the user restored files"));
    assert!(sent.contains("before turn 1: a.rs"));
    assert!(sent.ends_with("\n\ngo on"));
    assert_eq!(s.with_checkpoint_note("again".into()), "again");
}

#[test]
fn two_undos_before_a_prompt_are_both_told_to_the_agent() {
    let mut s = ChatState::new("demo", "/w");
    for (label, file) in [("before turn 2", "b.rs"), ("before turn 1", "a.rs")] {
        s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Restored {
            label: label.into(),
            changed: vec![file.into()],
            kept: Vec::new(),
            both: Vec::new(),
            tell_agent: true,
        })));
    }
    let sent = s.with_checkpoint_note("go on".into());
    assert!(
        sent.contains("before turn 2: b.rs; before turn 1: a.rs"),
        "{sent}"
    );
}

#[test]
fn a_turn_end_takes_its_checkpoint_before_a_queued_prompt() {
    let mut s = ChatState::new("demo", "/w");
    s.session.turn = Some(crate::state::Turn {
        cancelling: false,
        started: None,
    });
    let effects = s.update(Msg::TurnEnded(crate::model::StopReason::EndTurn));
    assert_eq!(
        effects.first(),
        Some(&Effect::Checkpoint(CheckpointEffect::TurnEnded))
    );
}

#[test]
fn a_prompt_sent_before_any_snapshot_was_complete_says_undo_may_miss_its_first_writes() {
    let mut s = ChatState::new("demo", "/w");
    let big = ("big.bin".to_string(), 20 * 1024 * 1024);
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Baseline {
        skipped: vec![big.clone()],
        nested: vec!["sub/".into()],
    })));
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Before {
        skipped: vec![big.clone()],
        nested: vec!["sub/".into()],
        unsure: false,
    })));
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::Before {
        skipped: vec![big],
        nested: Vec::new(),
        unsure: true,
    })));
    assert_eq!(
        infos(&s),
        vec![
            "not checkpointed, over [checkpoints] max_file_size: big.bin (20 MB)".to_string(),
            "not checkpointed, a repository of its own (/undo leaves it as it is): sub/"
                .to_string(),
            "the turn began before the workspace's first checkpoint was complete: \
             /undo may not put back what it wrote first"
                .to_string(),
        ]
    );
}

#[test]
fn a_turn_that_changed_files_a_tool_runs_names_them_as_an_error() {
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::Checkpoint(Box::new(CheckpointMsg::TurnChanged {
        files: vec![
            change(".git/hooks/pre-commit", 2, 0),
            change("src/main.rs", 1, 1),
            change(".envrc", 1, 0),
            change("/other/root/.vscode/tasks.json", 1, 0),
            change("docs/.git-notes", 1, 0),
            FileChange {
                tool: true,
                ..change("run.sh", 1, 0)
            },
        ],
    })));
    let errors: Vec<String> = s
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        vec![
            "the turn changed files a tool runs: .git/hooks/pre-commit, .envrc, \
             /other/root/.vscode/tasks.json, run.sh"
                .to_string()
        ]
    );
    assert!(runs_as_tool(".git/config"));
    assert!(runs_as_tool(".venv/bin/git"));
    assert!(!runs_as_tool(".venv/lib/x.py"));
    assert!(!runs_as_tool(".gitignore"));
    assert!(!runs_as_tool("src/.envrc.md"));
    // Issue 32: what a later agent or npm runs in this workspace.
    assert!(runs_as_tool(".claude/settings.local.json"));
    assert!(runs_as_tool("sub/.mcp.json"));
    assert!(runs_as_tool(".claude/hooks/stop.sh"));
    assert!(runs_as_tool("node_modules/.bin/tsc"));
    assert!(runs_as_tool(".husky/pre-commit"));
    assert!(!runs_as_tool("node_modules/tsc/index.js"));
    assert!(!runs_as_tool("docs/mcp.json"));
}

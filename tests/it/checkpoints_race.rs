//! A prompt goes to the agent at once, whatever the checkpoint worker is
//! doing; its "before" is still the workspace the prompt saw: the agent's
//! first write is not in it, the user's edit between turns is.

use std::time::Duration;

use crate::checkpoints::{count, read, turn, undo, workspace};
use crate::common::{pump_until, send, started_scenario};

/// Longer than the kernel's file clock may lag (`store::CLOCK_LAG`): an
/// edit made this long after a turn's end and before a prompt is, by its
/// timestamps, between them.
const USER_PAUSE: Duration = Duration::from_millis(300);

#[tokio::test]
async fn a_prompt_goes_while_the_worker_is_busy_and_its_before_is_what_it_saw() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    // From here the worker runs nothing (the chat-open snapshot is queued
    // before this): every snapshot of both turns waits behind it.
    let hold = app.hold_checkpoints().expect("a checkpointed chat");

    send(&mut app, "two");
    pump_until(&mut app, "turn 1", |s| {
        !s.is_busy() && work.join("c.txt").exists()
    })
    .await;
    // The user edits a file between the turns (a moment after the first
    // ended: a write within the file clock's lag of a turn's end counts
    // as the turn's).
    std::thread::sleep(USER_PAUSE);
    std::fs::write(work.join("notes.txt"), "user notes\n").unwrap();
    std::thread::sleep(USER_PAUSE);

    // The agent rewrites a.txt the moment the prompt comes.
    send(&mut app, "at once");
    assert_eq!(app.prompts_held(), 0, "the prompt waited for a checkpoint");
    pump_until(&mut app, "turn 2", |s| {
        !s.is_busy() && read(&work.join("a.txt")).as_deref() == Some("agent a\n")
    })
    .await;
    // Both turns ran with no snapshot taken yet.
    assert_eq!(count(app.state(), "turn changed"), 0);

    drop(hold);
    pump_until(&mut app, "both turns' checkpoints", |s| {
        count(s, "turn changed") == 2
    })
    .await;
    let lines: Vec<String> = crate::common::infos(app.state())
        .into_iter()
        .filter(|i| i.starts_with("turn changed"))
        .collect();
    assert_eq!(
        lines,
        vec![
            // Turn 1 wrote b.txt and c.txt; a.txt and notes.txt changed after it.
            "turn changed 2 files (+2 −0) · /undo · /changes".to_string(),
            // Turn 2 wrote a.txt; the user's edit was before its prompt.
            "turn changed 1 file (+1 −1) · /undo · /changes".to_string(),
        ]
    );

    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
    assert_eq!(
        read(&work.join("notes.txt")).as_deref(),
        Some("user notes\n")
    );
    assert_eq!(read(&work.join("b.txt")).as_deref(), Some("b\n"));
}

#[tokio::test]
async fn an_agent_that_writes_at_once_is_undone_and_the_user_s_edit_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "two").await;
    std::thread::sleep(USER_PAUSE);
    std::fs::write(work.join("notes.txt"), "user notes\n").unwrap();
    std::thread::sleep(USER_PAUSE);

    turn(&mut app, "at once").await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("agent a\n"));
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
    assert_eq!(
        read(&work.join("notes.txt")).as_deref(),
        Some("user notes\n")
    );
    assert_eq!(read(&work.join("c.txt")).as_deref(), Some("c\n"));
}

/// Issue 33 item 7, as reported: in Auto, `fs-write` creates `hello.txt`;
/// the user deletes it by hand; 1.5 s later `fs-write-direct` writes
/// `direct.txt` in the same directory. That turn changed one file: the
/// user's deletion is no turn's, `/changes` and `/checkpoints` do not list
/// it and `/undo` does not bring `hello.txt` back.
#[tokio::test]
async fn a_file_the_user_deleted_between_turns_is_not_the_next_turn_s() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = crate::common::started_with(&work, options).await;
    turn(&mut app, "fs-write").await;
    assert!(work.join("hello.txt").exists());
    std::fs::remove_file(work.join("hello.txt")).unwrap();
    std::thread::sleep(Duration::from_millis(1500));

    turn(&mut app, "fs-write-direct").await;
    assert!(work.join("direct.txt").exists());
    let lines: Vec<String> = crate::common::infos(app.state())
        .into_iter()
        .filter(|i| i.starts_with("turn changed"))
        .collect();
    assert_eq!(
        lines,
        vec![
            "turn changed 1 file (+1 −0) · /undo · /changes".to_string(),
            "turn changed 1 file (+1 −0) · /undo · /changes".to_string(),
        ]
    );

    send(&mut app, "/changes");
    pump_until(&mut app, "the changes", |s| {
        !crate::checkpoints::shown_diffs(s).is_empty()
    })
    .await;
    let paths: Vec<String> = crate::checkpoints::shown_diffs(app.state())
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(paths, vec!["direct.txt".to_string()]);

    send(&mut app, "/checkpoints");
    pump_until(&mut app, "the list", |s| s.view.checkpoints.list.is_some()).await;
    let listed: Vec<Vec<String>> = app
        .state()
        .view
        .checkpoints
        .list
        .as_ref()
        .unwrap()
        .0
        .iter()
        .map(|s| s.files.iter().map(|f| f.path.clone()).collect())
        .collect();
    assert_eq!(
        listed,
        vec![
            vec!["hello.txt".to_string()],
            vec!["direct.txt".to_string()]
        ]
    );
    crate::common::key(&mut app, warden::state::Action::Cancel);

    undo(&mut app, 'y').await;
    assert!(!work.join("direct.txt").exists());
    assert!(
        !work.join("hello.txt").exists(),
        "/undo brought back the user's deletion"
    );
}

/// The worker busy through both turns: the user's deletion before the
/// second prompt stays the user's, the second turn's own deletion in the
/// same directory is the turn's (told apart by when each file left, which
/// the worker saw as it happened).
#[tokio::test]
async fn with_the_worker_busy_a_user_s_deletion_and_the_turn_s_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    let hold = app.hold_checkpoints().expect("a checkpointed chat");
    send(&mut app, "two");
    pump_until(&mut app, "turn 1", |s| {
        !s.is_busy() && work.join("c.txt").exists()
    })
    .await;
    std::thread::sleep(USER_PAUSE);
    std::fs::remove_file(work.join("b.txt")).unwrap();
    std::thread::sleep(USER_PAUSE);
    // A terminal of the turn removes notes.txt.
    send(&mut app, "delete");
    pump_until(&mut app, "turn 2", |s| {
        !s.is_busy() && !work.join("notes.txt").exists()
    })
    .await;
    drop(hold);
    pump_until(&mut app, "both turns' checkpoints", |s| {
        count(s, "turn changed") == 2
    })
    .await;
    let lines: Vec<String> = crate::common::infos(app.state())
        .into_iter()
        .filter(|i| i.starts_with("turn changed"))
        .collect();
    assert_eq!(
        lines,
        vec![
            // b.txt was gone before any snapshot could read it: its bytes
            // are lost to turn 1's "after", which has c.txt only.
            "turn changed 1 file (+1 −0) · /undo · /changes".to_string(),
            // Turn 2 removed notes.txt; b.txt left before its prompt.
            "turn changed 1 file (+0 −1) · /undo · /changes".to_string(),
        ]
    );
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("notes.txt")).as_deref(), Some("notes\n"));
    assert!(
        !work.join("b.txt").exists(),
        "/undo brought back the user's deletion"
    );
}

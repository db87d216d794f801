//! Checkpoints end to end: the demo agent changes the workspace through
//! warden's `fs/write_text_file`, by itself, and through a terminal; `/undo`
//! puts it back, asks about files the user changed since, can itself be
//! undone; old checkpoints are pruned; the user's `.git` is never touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use warden::state::Code;

use warden::app::{App, ChatOptions};
use warden::checkpoint::{CheckpointOptions, Keep};
use warden::policy::Mode;
use warden::state::{Action, ChatState};

use crate::common::{GUARD, errors, infos, key, pump_until, send, started_scenario};

/// A workspace with two files, `.demo-state` ignored (the demo agent's
/// records), and the checkpoint options of `dir` (as the TUI's data dir).
pub(crate) fn workspace(dir: &Path) -> (PathBuf, ChatOptions) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("a.txt"), "old a\n").unwrap();
    std::fs::write(work.join("notes.txt"), "notes\n").unwrap();
    std::fs::write(work.join(".gitignore"), ".demo-state\n").unwrap();
    let options = ChatOptions {
        mode: Mode::Auto,
        checkpoints: Some(CheckpointOptions::in_dir(
            dir.join("data/warden/checkpoints"),
        )),
        ..ChatOptions::default()
    };
    (work, options)
}

pub(crate) fn count(state: &ChatState, prefix: &str) -> usize {
    infos(state)
        .iter()
        .filter(|i| i.starts_with(prefix))
        .count()
}

/// Send `prompt` and wait for the turn's end checkpoint line (or the
/// turn's end when it changed nothing).
pub(crate) async fn turn(app: &mut App, prompt: &str) {
    let changed = count(app.state(), "turn changed");
    send(app, prompt);
    pump_until(app, "the turn's checkpoint", |s| {
        count(s, "turn changed") > changed
    })
    .await;
}

/// `/undo`, wait for the card, press `answer`, wait for the restore.
pub(crate) async fn undo(app: &mut App, answer: char) {
    let restored = count(app.state(), "restored ");
    send(app, "/undo");
    pump_until(app, "the undo card", |s| {
        s.view.checkpoints.confirm.is_some()
    })
    .await;
    key(app, Action::ch(answer));
    pump_until(app, "the restore", |s| count(s, "restored ") > restored).await;
}

pub(crate) fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[tokio::test]
async fn undo_puts_back_a_client_write_an_agent_write_and_a_terminal_delete() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;

    // warden's fs/write_text_file.
    turn(&mut app, "write").await;
    assert_eq!(
        read(&work.join("a.txt")).as_deref(),
        Some("new a\nsecond line\n")
    );
    assert!(
        infos(app.state()).contains(&"turn changed 1 file (+2 −1) · /undo · /changes".to_string()),
        "{:?}",
        infos(app.state())
    );
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));

    // The agent's own write.
    turn(&mut app, "touch").await;
    assert!(work.join("made.txt").exists());
    undo(&mut app, 'y').await;
    assert!(!work.join("made.txt").exists());

    // A terminal that deletes a file.
    turn(&mut app, "delete").await;
    assert!(!work.join("notes.txt").exists());
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("notes.txt")).as_deref(), Some("notes\n"));

    // The next prompt tells the agent; the transcript tells the user.
    assert!(
        infos(app.state())
            .iter()
            .any(|i| i.contains("your next prompt tells it the files were restored"))
    );
    let told = count(app.state(), "this prompt tells the agent");
    send(&mut app, "hello");
    pump_until(&mut app, "the note", |s| {
        count(s, "this prompt tells the agent") > told
    })
    .await;
    // The ignored file was never restored or removed.
    assert!(work.join(".demo-state").exists());
}

#[tokio::test]
async fn a_file_the_user_changed_after_the_turn_is_asked_about_and_kept_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    std::fs::write(work.join("a.txt"), "mine\n").unwrap();

    send(&mut app, "/undo");
    pump_until(&mut app, "the undo card", |s| {
        s.view.checkpoints.confirm.is_some()
    })
    .await;
    let plan = app.state().view.checkpoints.confirm.clone().unwrap();
    assert_eq!(plan.conflicts, vec!["0/a.txt".to_string()]);
    let popup = app.state().composer_popup().unwrap();
    assert!(popup.title.contains("k keep both"), "{}", popup.title);
    assert!(popup.items[0].detail.contains("changed since the turn"));
    // `y` alone does not overwrite a changed file.
    key(&mut app, Action::ch('y'));
    assert!(app.state().view.checkpoints.confirm.is_some());
    key(&mut app, Action::ch('k'));
    pump_until(&mut app, "the restore", |s| count(s, "restored ") > 0).await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("mine\n"));
    assert_eq!(
        read(&work.join("a.txt.warden-restored")).as_deref(),
        Some("old a\n")
    );
}

/// `/redo`, wait for the card, press `y`, wait for the restore.
async fn redo(app: &mut App) {
    let restored = count(app.state(), "restored ");
    send(app, "/redo");
    pump_until(app, "the redo card", |s| {
        s.view.checkpoints.confirm.is_some()
    })
    .await;
    key(app, Action::Char('y'));
    pump_until(app, "the restore", |s| count(s, "restored ") > restored).await;
}

/// The texts of the last `/changes` entry's diffs: (path, new).
pub(crate) fn shown_diffs(state: &ChatState) -> Vec<(String, String)> {
    let last = state
        .session
        .transcript
        .entries()
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            warden::state::EntryKind::Tool(t) if t.call.id.starts_with("warden-changes") => {
                Some(t.call.clone())
            }
            _ => None,
        });
    last.map(|call| {
        call.content
            .iter()
            .filter_map(|c| match c {
                warden::model::ToolContent::Diff { path, new, .. } => {
                    Some((path.clone(), new.clone()))
                }
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default()
}

#[tokio::test]
async fn undo_again_steps_back_a_turn_and_redo_reverses_each_undo() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    turn(&mut app, "two").await;
    let new_a = Some("new a\nsecond line\n");

    // The first /undo takes back turn 2, the second turn 1 too.
    undo(&mut app, 'y').await;
    assert!(!work.join("b.txt").exists() && !work.join("c.txt").exists());
    assert_eq!(read(&work.join("a.txt")).as_deref(), new_a);
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
    assert!(!work.join("b.txt").exists());
    // Nothing is left to undo.
    let before = infos(app.state()).len();
    send(&mut app, "/undo");
    pump_until(&mut app, "the answer", |s| infos(s).len() > before).await;
    assert!(
        infos(app.state())
            .last()
            .unwrap()
            .starts_with("no turn left to undo"),
        "{:?}",
        infos(app.state())
    );

    // /redo reverses the second undo, then the first.
    redo(&mut app).await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), new_a);
    assert!(!work.join("b.txt").exists());
    redo(&mut app).await;
    assert_eq!(read(&work.join("b.txt")).as_deref(), Some("b\n"));
    assert_eq!(read(&work.join("c.txt")).as_deref(), Some("c\n"));

    // After a redo, /undo steps back from the newest turn again.
    undo(&mut app, 'y').await;
    assert!(!work.join("b.txt").exists());
    assert_eq!(read(&work.join("a.txt")).as_deref(), new_a);
}

#[tokio::test]
async fn checkpoints_shows_any_listed_turn_s_diff() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    turn(&mut app, "two").await;

    send(&mut app, "/checkpoints");
    pump_until(&mut app, "the list", |s| s.view.checkpoints.list.is_some()).await;
    let popup = app.state().composer_popup().unwrap();
    assert!(popup.title.contains("d its diff"), "{}", popup.title);
    // The highlighted row is the newest; `d` on the first turn shows its diff.
    key(&mut app, Action::Up);
    key(&mut app, Action::Char('d'));
    assert!(app.state().view.checkpoints.list.is_none());
    pump_until(&mut app, "the diff", |s| !shown_diffs(s).is_empty()).await;
    assert_eq!(
        shown_diffs(app.state()),
        vec![("a.txt".to_string(), "new a\nsecond line\n".to_string())]
    );
    let _ = work;
}

#[tokio::test]
async fn an_undo_can_be_undone() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "two").await;
    assert!(work.join("b.txt").exists() && work.join("c.txt").exists());
    undo(&mut app, 'y').await;
    assert!(!work.join("b.txt").exists() && !work.join("c.txt").exists());
    redo(&mut app).await;
    assert_eq!(read(&work.join("b.txt")).as_deref(), Some("b\n"));
    assert_eq!(read(&work.join("c.txt")).as_deref(), Some("c\n"));

    // /checkpoints lists the turn and both restores; Enter on the turn
    // plans a restore to before it.
    send(&mut app, "/checkpoints");
    pump_until(&mut app, "the list", |s| s.view.checkpoints.list.is_some()).await;
    let (steps, _) = app.state().view.checkpoints.list.clone().unwrap();
    let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "turn 1: two",
            "the undo to before turn 1",
            "the redo to after turn 1"
        ]
    );
    key(&mut app, Action::key(Code::Up));
    key(&mut app, Action::key(Code::Up));
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "the card", |s| {
        s.view.checkpoints.confirm.is_some()
    })
    .await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "the restore", |s| count(s, "restored ") == 3).await;
    assert!(!work.join("b.txt").exists());

    // /changes shows the last step's diff as a tool call with diffs.
    send(&mut app, "/changes");
    pump_until(&mut app, "the diff", |s| {
        s.session.transcript.entries().iter().any(|e| {
            matches!(&e.kind, warden::state::EntryKind::Tool(t) if t.call.id.starts_with("warden-changes"))
        })
    })
    .await;
}

#[tokio::test]
async fn a_turn_s_writes_in_another_root_are_undone() {
    let dir = tempfile::tempdir().unwrap();
    let (work, mut options) = workspace(dir.path());
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("o.txt"), "old o\n").unwrap();
    options.extra_roots = vec![other.clone()];
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;

    turn(&mut app, "elsewhere").await;
    assert_eq!(read(&other.join("o.txt")).as_deref(), Some("new o\n"));
    assert!(other.join("made.txt").exists());
    // The line counts both files; the card names them by their full path.
    assert!(
        infos(app.state()).contains(&"turn changed 2 files (+1 −1) · /undo · /changes".to_string()),
        "{:?}",
        infos(app.state())
    );
    send(&mut app, "/undo");
    pump_until(&mut app, "the undo card", |s| {
        s.view.checkpoints.confirm.is_some()
    })
    .await;
    let plan = app.state().view.checkpoints.confirm.clone().unwrap();
    let other = other.canonicalize().unwrap();
    let mut paths: Vec<String> = plan.files.iter().map(|f| f.path.clone()).collect();
    paths.sort();
    assert_eq!(
        paths,
        vec![
            other.join("made.txt").display().to_string(),
            other.join("o.txt").display().to_string()
        ]
    );
    key(&mut app, Action::Char('y'));
    pump_until(&mut app, "the restore", |s| count(s, "restored ") > 0).await;
    assert_eq!(read(&other.join("o.txt")).as_deref(), Some("old o\n"));
    assert!(!other.join("made.txt").exists());
    // The cwd's files were not touched.
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
}

#[tokio::test]
async fn a_workspace_over_max_files_is_switched_off_and_turns_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (work, mut options) = workspace(dir.path());
    let cp = options.checkpoints.as_mut().unwrap();
    // The workspace has three files: more than this, from the first snapshot.
    cp.limits.max_files = 2;
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;

    send(&mut app, "write");
    pump_until(&mut app, "the notice", |s| {
        s.view.checkpoints.off.is_some() && !s.is_busy()
    })
    .await;
    let notices: Vec<(String, Vec<String>)> = errors(app.state())
        .into_iter()
        .filter(|(e, _)| e.starts_with("checkpoints are off"))
        .collect();
    assert_eq!(
        notices,
        vec![(
            "checkpoints are off for this workspace: over 2 files".to_string(),
            vec!["turns go on as before; /undo cannot restore them".to_string()]
        )]
    );
    // The turn ran.
    assert_eq!(
        read(&work.join("a.txt")).as_deref(),
        Some("new a\nsecond line\n")
    );

    // Later turns go on with no checkpoint and no second notice.
    send(&mut app, "touch");
    pump_until(&mut app, "the next turn", |s| !s.is_busy()).await;
    pump_until(&mut app, "the turn's end", |_| {
        work.join("made.txt").exists()
    })
    .await;
    send(&mut app, "/undo");
    assert_eq!(
        app.state().view.notice.as_deref(),
        Some("checkpoints are off here: over 2 files")
    );
    assert_eq!(count(app.state(), "turn changed"), 0);
    assert_eq!(
        errors(app.state())
            .iter()
            .filter(|(e, _)| e.starts_with("checkpoints are off"))
            .count(),
        1
    );
    // No checkpoint of this chat was kept.
    let cp = CheckpointOptions::in_dir(dir.path().join("data/warden/checkpoints"));
    let listed = warden::checkpoint::headless::list(&cp, &work, None).unwrap_or_default();
    assert!(!listed.contains("turn 1"), "{listed}");
}

#[tokio::test]
async fn old_checkpoints_are_pruned_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let (work, mut options) = workspace(dir.path());
    let cp = options.checkpoints.as_mut().unwrap();
    cp.keep = Keep::Last(2);
    let cp = cp.clone();
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    for _ in 0..2 {
        turn(&mut app, "write").await;
        undo(&mut app, 'y').await;
    }
    // Four steps were taken; the idle worker keeps the last two.
    let listed = tokio::time::timeout(GUARD, async {
        loop {
            let text = warden::checkpoint::headless::list(&cp, &work, None).unwrap();
            if text.contains(" 4 checkpoints ") {
                return text;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("pruned to two steps");
    let steps: Vec<&str> = listed.lines().filter(|l| l.starts_with("    ")).collect();
    assert_eq!(steps.len(), 2, "{listed}");
    assert!(steps[0].trim_start().starts_with("3 "), "{listed}");
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn a_repository_s_git_dir_is_byte_identical_after_turns_and_undos() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    git(&work, &["init", "-q"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "start"]);
    // A staged change the index holds, and a hook that must never run.
    std::fs::write(work.join("notes.txt"), "staged\n").unwrap();
    git(&work, &["add", "notes.txt"]);
    std::fs::write(
        work.join(".git/hooks/pre-commit"),
        "#!/bin/sh\ntouch /tmp/hooked\n",
    )
    .unwrap();
    let before = tree(&work.join(".git"));

    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    undo(&mut app, 'y').await;
    turn(&mut app, "delete").await;
    undo(&mut app, 'y').await;
    assert_eq!(read(&work.join("notes.txt")).as_deref(), Some("staged\n"));

    let after = tree(&work.join(".git"));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert!(before == after, "the user's .git changed");
}

#[tokio::test]
async fn headless_checkpoints_lists_and_undo_restores() {
    let dir = tempfile::tempdir().unwrap();
    let (work, options) = workspace(dir.path());
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    app.shutdown().await;

    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["--config", "/nonexistent/warden.toml"])
            .args(args)
            .current_dir(&work)
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("HOME", dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, listed) = run(&["checkpoints"]);
    assert!(ok, "{listed}");
    assert!(listed.contains("turn 1: write"), "{listed}");
    assert!(listed.contains("1 file (+2 −1): a.txt"), "{listed}");
    assert!(listed.contains("B on disk"), "{listed}");

    let (ok, asked) = run(&["undo"]);
    assert!(ok, "{asked}");
    assert!(asked.contains("--yes restores"), "{asked}");
    assert_eq!(
        read(&work.join("a.txt")).as_deref(),
        Some("new a\nsecond line\n")
    );
    let (ok, done) = run(&["undo", "--yes"]);
    assert!(ok, "{done}");
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
}

#[tokio::test]
async fn an_undo_never_puts_back_wardens_own_files_in_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let (work, mut options) = workspace(dir.path());
    // warden's decision log, chat records and prompt history inside the
    // workspace (a workspace that is the home directory holds them so).
    let log = work.join("state/decisions.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    options.decision_log = Some(log.clone());
    options.chats_dir = Some(work.join("records"));
    let mut app = started_scenario(&work, "checkpoints.toml", options).await;
    turn(&mut app, "write").await;
    app.settle_disk().await;
    let logged = read(&log).unwrap_or_default();
    assert!(logged.contains("write"), "the turn's decisions: {logged}");
    undo(&mut app, 'y').await;
    app.settle_disk().await;
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("old a\n"));
    // The turn's decisions stay: the log was never in a snapshot.
    let after = read(&log).unwrap_or_default();
    assert!(
        after.starts_with(&logged),
        "the log lost lines:\n{logged}\n---\n{after}"
    );
    let listed = warden::checkpoint::headless::list(
        &CheckpointOptions::in_dir(dir.path().join("data/warden/checkpoints")),
        &work,
        None,
    )
    .unwrap();
    assert!(!listed.contains("decisions.jsonl"), "{listed}");
    app.shutdown().await;
}

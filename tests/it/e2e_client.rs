//! End to end: files and terminals on the agent's behalf, through the same
//! gate as permission requests.

use std::path::Path;
use std::time::Duration;
use warden::state::Code;

use warden::app::App;
use warden::policy::Mode;
use warden::state::{Action, ChatState, EntryKind, ToolState};

use crate::common::*;

fn tool_titles(state: &ChatState) -> Vec<(String, ToolState)> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Tool(t) => Some((t.call.title.clone(), t.state)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn client_read_honours_line_and_limit_and_the_roots() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("notes.txt"),
        "one\ntwo\nthree\nfour\nfive\n",
    )
    .expect("seed");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "fs-read");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("read ok: 2 lines"), "{text}");
    assert!(
        text.contains("two\nthree\n") && !text.contains("four"),
        "{text}"
    );
    assert!(app.state().gate.approvals.is_empty(), "reads need no card");
    send(&mut app, "fs-escape");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("read failed") && text.contains("outside the allowed roots"),
        "{text}"
    );
    // The gate refused it, said so and logged it (issue 22: one place for
    // every decision).
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("warden refused") && m.contains("outside the allowed roots")),
        "{:?}",
        errors(app.state())
    );
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert!(
        log.iter()
            .any(|r| r.decision == "denied" && r.source == "safety" && r.kind == "read"),
        "{log:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn client_write_after_an_allowed_edit_needs_no_second_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "fs-write");
    pump_until(&mut app, "the edit card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() || !s.gate.approvals.is_empty()
    })
    .await;
    assert!(
        app.state().gate.approvals.is_empty(),
        "no second card: {:?}",
        tool_titles(app.state())
    );
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    let written = std::fs::read_to_string(dir.path().join("hello.txt")).expect("written");
    assert_eq!(written, "hello from warden-demo\n");
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert!(
        log.iter()
            .any(|r| r.reason.starts_with("covered by the allowed request")),
        "{log:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn client_write_with_no_request_gets_a_card_then_lands_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "fs-write-direct");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let card = &app.state().gate.approvals[0];
    assert!(card.request.client && card.view.kind == warden::model::ToolKind::Edit);
    assert!(
        card.request
            .fields
            .content
            .iter()
            .flatten()
            .any(|c| matches!(c, warden::model::ToolContent::Diff { .. })),
        "the card shows the diff against the file on disk"
    );
    assert!(
        !dir.path().join("direct.txt").exists(),
        "nothing is written before the decision"
    );
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("write ok"));
    assert!(dir.path().join("direct.txt").exists());
    assert!(
        tool_titles(app.state())
            .iter()
            .any(|(t, s)| t.starts_with("Write ") && *s == ToolState::Completed),
        "{:?}",
        tool_titles(app.state())
    );
    app.shutdown().await;
}

#[tokio::test]
async fn client_write_in_plan_is_refused_and_the_agent_reports_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Plan)).await;
    send(&mut app, "fs-write-direct");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(app.state().gate.approvals.is_empty());
    let text = agent_text(app.state());
    assert!(
        text.contains("write failed") && text.contains("refused"),
        "{text}"
    );
    assert!(!dir.path().join("direct.txt").exists());
    app.shutdown().await;
}

#[tokio::test]
async fn client_terminals_print_honour_limits_and_are_released() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    send(&mut app, "term");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("terminal exited: code 0"), "{text}");
    assert!(text.contains("green") && text.contains("done"), "{text}");
    assert!(text.contains("released"), "{text}");
    let view = app
        .state()
        .session
        .terminals
        .values()
        .next()
        .expect("the terminal's output is in the state");
    assert!(
        view.output.contains("\u{1b}[32mgreen"),
        "kept raw for the emulator: {:?}",
        view.output
    );
    assert_eq!(view.exit.as_deref(), Some("exit status 0"));

    send(&mut app, "term-args");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains(r#"a b-c\n"#),
        "{}",
        agent_text(app.state())
    );

    send(&mut app, "term-limit");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("truncated: true, bytes: 100"),
        "{}",
        agent_text(app.state())
    );
    app.shutdown().await;
}

fn sleepers() -> usize {
    let out = std::process::Command::new("ps")
        .args(["-e", "-o", "stat=,args="])
        .output()
        .expect("ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim_start().starts_with('Z') && l.contains("sleep 1000"))
        .count()
}

#[tokio::test]
async fn esc_kills_a_terminal_that_runs_forever_and_quit_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = sleepers();
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    send(&mut app, "term-forever");
    pump_until(&mut app, "the terminal", |s| {
        !s.session.terminals.is_empty()
    })
    .await;
    assert!(sleepers() > before, "the command runs");
    key(&mut app, Action::key(Code::Esc));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    for _ in 0..50 {
        if sleepers() <= before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(sleepers() <= before, "Esc killed the agent's terminal");
    // Start another and quit: nothing is left behind either.
    send(&mut app, "term-forever");
    pump_until(&mut app, "the terminal", |s| s.session.terminals.len() == 2).await;
    app.shutdown().await;
    for _ in 0..50 {
        if sleepers() <= before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(sleepers() <= before, "quitting killed it");
}

#[tokio::test]
async fn three_queued_cards_reviewed_by_keyboard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/three-cards.toml");
    let scenario = scenario.display().to_string();
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &["--scenario", &scenario]),
        logged_options(dir.path(), Mode::Default),
    ))
    .await;
    send(&mut app, "three");
    pump_until(&mut app, "three cards", |s| s.gate.approvals.len() == 3).await;
    let titles: Vec<String> = app
        .state()
        .gate
        .approvals
        .iter()
        .map(|a| a.title())
        .collect();
    assert_eq!(
        titles,
        [
            "Edit src/lib.rs",
            "Run cargo test",
            "Fetch https://docs.rs/ratatui"
        ],
        "FIFO"
    );
    key(&mut app, Action::key(Code::Tab));
    key(&mut app, Action::ch('n'));
    key(&mut app, Action::ch('A'));
    key(&mut app, Action::ch('y'));
    assert!(app.state().gate.approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    let outcomes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("permission outcome"))
        .collect();
    assert_eq!(
        outcomes,
        [
            "permission outcome: selected allow-once",
            "permission outcome: selected reject-once",
            "permission outcome: selected allow-once"
        ]
    );
    app.shutdown().await;
}

/// `up/../notes.txt` where `up` links to `a/sub`: the kernel reads
/// `a/notes.txt`, a tool that applies `..` first reads `notes.txt`. warden
/// cannot tell which file the agent means: the read is refused, and the
/// user sees why, as for any refused file call.
#[tokio::test]
async fn an_ambiguous_path_is_refused_with_an_error_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(cwd.join("a/sub")).expect("mkdir");
    std::os::unix::fs::symlink(cwd.join("a/sub"), cwd.join("up")).expect("link");
    for file in ["notes.txt", "a/notes.txt"] {
        std::fs::write(cwd.join(file), format!("{file}\n2\n3\n")).expect("seed");
    }
    let mut app = started_with(&cwd, logged_options(&cwd, Mode::Default)).await;
    send(&mut app, "fs-read up/../notes.txt");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("read failed"), "{text}");
    let errors = errors(app.state());
    assert!(
        errors
            .iter()
            .any(|(message, _)| message.starts_with("warden refused the agent's call Read")),
        "{errors:?}"
    );
    // The gate refused it, and the decision log has it (issue 22: one
    // place for every decision).
    app.settle_disk().await;
    let log = warden::decision_log::read(&cwd.join("decisions.jsonl")).expect("log");
    assert!(
        log.iter().any(|r| r.title.contains("up/../notes.txt")
            && r.decision == "denied"
            && r.source == "safety"),
        "{log:?}"
    );
    app.shutdown().await;
}

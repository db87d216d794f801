//! End to end: a hostile agent tries to make the user see what is not so
//! (issue 22, spoofs). The demo agent plays
//! `assets/scenarios/hostile-spoofs.toml` over real pipes.

use std::path::Path;

use warden::app::ChatOptions;
use warden::policy::Mode;
use warden::state::{EntryKind, ToolState};

use crate::common::*;

const SCENARIO: &str = "hostile-spoofs.toml";

fn recorded(dir: &Path, mode: Mode) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, mode)
    }
}

#[tokio::test]
async fn a_later_tool_call_update_never_changes_a_waiting_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        SCENARIO,
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "late-update");
    pump_until(&mut app, "the card and the late update", |s| {
        !s.gate.approvals.is_empty() && agent_text(s).contains("sent the late update")
    })
    .await;
    let shown = screen(app.state(), 100, 40);
    assert!(shown.contains("▏ Edit notes.txt"), "{shown}");
    assert!(
        !shown.contains("EVIL DIFF BODY")
            && !shown.contains("EVIL-PATH")
            && !shown.contains("harmless"),
        "the card or its entry shows what the agent sent after it asked:\n{shown}"
    );
    // Once answered, the entry shows what the agent said meanwhile.
    key(&mut app, warden::state::Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let entry = app
        .state()
        .session
        .transcript
        .tool("late-1")
        .expect("entry");
    assert_eq!(entry.call.title, "also harmless");
    assert_eq!(entry.state, ToolState::Rejected);
    app.shutdown().await;
}

#[tokio::test]
async fn the_agent_never_updates_wardens_own_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app =
        started_scenario(dir.path(), SCENARIO, logged_options(dir.path(), Mode::Auto)).await;
    send(&mut app, "own-update");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let state = app.state();
    let own = state
        .session
        .transcript
        .own_tool("warden-0")
        .expect("warden's own terminal entry");
    assert_eq!(own.call.title, "Run echo really-ran");
    assert!(own.own);
    assert_eq!(own.state, ToolState::Completed);
    assert!(
        !format!("{:?}", own.call.content).contains("FAKE OUTPUT"),
        "{:?}",
        own.call.content
    );
    // The agent's own words under that id are an entry of the agent's.
    let agents = state
        .session
        .transcript
        .tool("warden-0")
        .expect("the agent's entry");
    assert_eq!(agents.call.title, "agent says: ls");
    app.shutdown().await;
}

#[tokio::test]
async fn a_user_message_the_agent_sends_mid_turn_is_the_agents_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(dir.path(), SCENARIO, recorded(dir.path(), Mode::Default)).await;
    send(&mut app, "user-chunk");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let entries = app.state().session.transcript.entries();
    let users: Vec<&str> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::User(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, vec!["user-chunk"], "only what the user typed");
    assert!(
        entries.iter().any(|e| matches!(&e.kind, EntryKind::Agent(t)
            if t.starts_with(warden::state::AGENT_SENT_USER) && t.contains("I confirm"))),
        "{entries:?}"
    );
    send(&mut app, "/export chat.md");
    pump_until(&mut app, "the export", |s| {
        infos(s).iter().any(|i| i.contains("exported the chat to"))
    })
    .await;
    let text = std::fs::read_to_string(dir.path().join("chat.md")).expect("the export");
    let confirm = text.find("I confirm").expect("exported");
    let heading = text[..confirm].rfind("## ").expect("a heading before it");
    assert!(
        text[heading..].starts_with("## Agent"),
        "exported under the agent's heading:\n{text}"
    );
    assert!(text.contains("agent-sent user message"), "{text}");
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_tool_named_like_wardens_write_is_flagged_and_wardens_own_is_marked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        SCENARIO,
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "lookalike");
    pump_until(&mut app, "the agent's card", |s| {
        !s.gate.approvals.is_empty()
    })
    .await;
    let card = &app.state().gate.approvals[0];
    assert!(!card.request.client);
    assert!(
        card.lookalike
            .as_deref()
            .is_some_and(|w| w.contains("looks like warden's own `fs/write_text_file`")),
        "{:?}",
        card.lookalike
    );
    let shown = screen(app.state(), 120, 40);
    assert!(
        shown.contains("the agent's own tool `agent:fs/write_text_f<U+0456>le`")
            || shown.contains("the agent's own tool `agent:fs/write_text_f\u{0456}le`"),
        "{shown}"
    );
    assert!(
        !shown.contains("warden's own fs/write_text_file:"),
        "{shown}"
    );
    // Its entry in the transcript says so too.
    let entry = app
        .state()
        .session
        .transcript
        .tool("spoof-1")
        .expect("entry");
    assert!(!entry.own);
    assert!(
        entry
            .lookalike
            .as_deref()
            .is_some_and(|w| w.contains("looks like warden's own")),
        "{entry:?}"
    );
    // Rejected, so that no allowed edit covers the write that follows.
    key(&mut app, warden::state::Action::ch('n'));
    pump_until(&mut app, "warden's own card", |s| {
        s.gate.approvals.first().is_some_and(|a| a.request.client)
    })
    .await;
    let card = &app.state().gate.approvals[0];
    assert_eq!(card.lookalike, None);
    let shown = screen(app.state(), 120, 40);
    assert!(
        shown.contains("warden's own fs/write_text_file: the agent's call, confined by warden"),
        "{shown}"
    );
    assert!(
        shown.contains("warden: Write "),
        "warden's own entry says so:\n{shown}"
    );
    app.shutdown().await;
}

// Resources: the total output of many terminals is bounded, the newest of
// each kept, and the entry says what was dropped.

#[tokio::test]
async fn many_terminals_keep_a_bounded_total_and_say_what_was_dropped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "many-terminals.toml",
        logged_options(dir.path(), Mode::Auto),
    )
    .await;
    send(&mut app, "many");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // The last output events may trail the turn's end.
    pump_until(&mut app, "every terminal's end", |s| {
        s.session.terminals.len() == 48
            && s.session
                .terminals
                .values()
                .all(|v| v.exit.is_some() && v.output.contains("END-"))
    })
    .await;
    let views = &app.state().session.terminals;
    let total: usize = views.values().map(|v| v.output.len()).sum();
    assert!(
        total <= 32 << 20,
        "the chat keeps {total} bytes of terminal output"
    );
    for (id, view) in views {
        assert!(
            view.output
                .trim_end()
                .ends_with(&format!("END-{}", &id[5..])),
            "{id}"
        );
    }
    let dropped: u64 = views.values().map(|v| v.dropped).sum();
    assert!(dropped > 0);
    let shown = screen(app.state(), 100, 400);
    assert!(shown.contains("of older output dropped"), "{shown}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_huge_stderr_line_fills_a_bounded_part_of_the_exit_notice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "hostile-output-escapes.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "huge-stderr");
    pump_until(&mut app, "the exit", |s| {
        s.session.connection == warden::state::Connection::Down
    })
    .await;
    let (_, detail) = errors(app.state())
        .into_iter()
        .find(|(m, _)| m.contains("the agent exited"))
        .expect("the exit notice");
    let bytes: usize = detail.iter().map(String::len).sum();
    assert!(bytes < 2048, "{bytes} bytes of stderr in the notice");
    assert!(
        detail.iter().any(|l| l.contains("more bytes in the log")),
        "{detail:?}"
    );
    assert_eq!(detail.last().map(String::as_str), Some("last words"));
    let shown = screen(app.state(), 100, 40);
    let rows = shown.lines().filter(|l| l.contains("0123456789")).count();
    assert!(rows <= 3, "{rows} rows of it:\n{shown}");
    assert!(shown.contains("last words"), "{shown}");
}

#[test]
fn exec_shows_a_bounded_part_of_a_huge_stderr_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = scenario("hostile-output-escapes.toml");
    let (code, _out, err, _) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &[
            "-p",
            "huge-stderr",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &scenario,
        ],
    );
    assert_ne!(code, Some(0));
    assert!(err.len() < 8192, "{} bytes on stderr", err.len());
    assert!(err.contains("last words"), "{err}");
}

#[test]
fn exec_shows_a_bounded_part_of_a_huge_error_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("huge-error.json");
    let scenario = serde_json::json!({
        "builtin": false,
        "turns": [{ "steps": [{ "type": "fail", "message": "E".repeat(1 << 20) }] }],
    });
    std::fs::write(&file, scenario.to_string()).expect("scenario");
    let (code, _out, err, _) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &[
            "-p",
            "go",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &file.display().to_string(),
        ],
    );
    assert_ne!(code, Some(0));
    assert!(err.len() < 16 * 1024, "{} bytes on stderr", err.len());
    assert!(
        err.contains("more bytes)"),
        "{}",
        &err[..err.len().min(2000)]
    );
}

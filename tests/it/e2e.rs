//! End to end over real pipes: warden's runtime drives `warden demo-agent`
//! (spawned as a subprocess, like any agent) without a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use warden::acp::{AgentCommand, LaunchError};
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Action, AppState, Connection, EntryKind, Focus, Msg, ToolState};

use crate::common::*;

#[tokio::test]
async fn connects_and_sees_the_agents_modes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let modes = app
        .state()
        .agent_modes
        .clone()
        .expect("demo agent advertises modes");
    assert_eq!(modes.current, "default");
    let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
    assert!(ids.contains(&"plan") && ids.contains(&"auto"), "{ids:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn prompt_streams_a_markdown_answer_to_the_end_of_the_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "hello there");
    assert!(app.state().is_busy());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("hello there"),
        "the answer echoes the prompt: {text}"
    );
    assert!(text.contains("```"), "the answer has a code block: {text}");
    let user = app
        .state()
        .transcript
        .entries()
        .iter()
        .any(|e| e.kind == EntryKind::User("hello there".into()));
    assert!(user, "the user's message is in the transcript");
    assert_eq!(
        app.state()
            .transcript
            .entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Agent(_)))
            .count(),
        1,
        "streamed chunks join into one entry"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn default_mode_shows_a_card_and_the_agent_gets_exactly_the_chosen_option() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    assert_eq!(
        app.state().focus,
        Focus::Cards,
        "the composer was empty: focus moves to the card"
    );
    let card = &app.state().approvals[0];
    assert_eq!(card.request.options.len(), 4);
    let tool = app
        .state()
        .transcript
        .tool(&card.request.tool_call_id)
        .expect("tool call shown");
    assert_eq!(tool.state, ToolState::AwaitingApproval);
    assert!(
        tool.call
            .content
            .iter()
            .any(|c| matches!(c, warden::model::ToolContent::Diff { .. })),
        "the edit carries its diff"
    );
    // `1` picks the agent's first option: allow-once. (Its allow-always is
    // answered allow-once plus a chat grant: tests/gate_answers.rs.)
    key(&mut app, Action::Char('1'));
    assert!(app.state().approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected allow-once"),
        "{text}"
    );
    let lines = decisions(app.state());
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].0 && lines[0].1.starts_with("allowed by you"),
        "{lines:?}"
    );
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].source, "user");
    assert_eq!(log[0].option_id.as_deref(), Some("allow-once"));
    assert_eq!(log[0].kind, "edit");
    assert_eq!(log[0].category, "write");
    assert_eq!(log[0].mode, "default");
    assert_eq!(log[0].agent, "demo");
    assert!(!log[0].time.is_empty() && !log[0].session.is_empty());
    app.shutdown().await;
}

#[tokio::test]
async fn plan_mode_rejects_an_edit_without_a_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Plan)).await;
    send(&mut app, "edit");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(app.state().approvals.is_empty(), "no card in Plan");
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected reject-once"),
        "{text}"
    );
    assert!(
        text.contains("was not changed"),
        "the agent reports the edit not done: {text}"
    );
    let lines = decisions(app.state());
    assert!(
        !lines[0].0 && lines[0].1.starts_with("blocked: plan mode"),
        "{lines:?}"
    );
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.starts_with("plan mode:")),
        "the plan instruction is visible"
    );
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log[0].source, "plan");
    assert_eq!(log[0].decision, "denied");
    app.shutdown().await;
}

#[tokio::test]
async fn auto_mode_answers_allow_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    send(&mut app, "execute");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(app.state().approvals.is_empty());
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected allow-once"),
        "{text}"
    );
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(
        (log[0].source.as_str(), log[0].option_kind.as_deref()),
        ("auto", Some("allow_once"))
    );
    app.shutdown().await;
}

#[tokio::test]
async fn esc_with_two_pending_cards_answers_both_cancelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "two");
    pump_until(&mut app, "two cards", |s| s.approvals.len() == 2).await;
    key(&mut app, Action::Cancel);
    assert!(app.state().approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert_eq!(
        text.matches("permission outcome: cancelled").count(),
        2,
        "{text}"
    );
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(
        log.iter().filter(|r| r.decision == "cancelled").count(),
        2,
        "{log:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn deny_with_a_reason_rejects_cancels_and_tells_the_agent_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    key(&mut app, Action::Char('r'));
    assert!(matches!(app.state().focus, Focus::Reason(_)));
    key(
        &mut app,
        Action::Paste("use the existing parser instead".into()),
    );
    key(&mut app, Action::Submit);
    // The turn is cancelled; the reason goes out as the next prompt when it ends.
    pump_until(&mut app, "the reason prompt's turn", |s| {
        s.transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("use the existing parser instead".into()))
            && !s.is_busy()
    })
    .await;
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected reject-once"),
        "{text}"
    );
    assert!(
        text.contains("use the existing parser instead"),
        "the agent answered the reason: {text}"
    );
    let lines = decisions(app.state());
    assert!(lines.iter().any(|(allowed, l)| !allowed && l.starts_with("denied by you: use the existing parser")), "{lines:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn esc_cancels_a_slow_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "slow");
    pump_until(&mut app, "first chunk", |s| !agent_text(s).is_empty()).await;
    app.handle(Msg::Action(Action::Cancel));
    assert!(app.state().turn.as_ref().is_some_and(|t| t.cancelling));
    pump_until(&mut app, "cancelled turn", |s| !s.is_busy()).await;
    assert!(
        infos(app.state()).contains(&"turn cancelled".to_string()),
        "{:?}",
        infos(app.state())
    );
    // The session still works afterwards.
    send(&mut app, "hi again");
    pump_until(&mut app, "second turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("hi again"));
    app.shutdown().await;
}

#[tokio::test]
async fn crash_shows_status_and_stderr_then_r_restarts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "crash");
    pump_until(&mut app, "agent exit", |s| s.connection == Connection::Down).await;
    assert!(!app.state().is_busy(), "the turn ended with the agent");
    let errs = errors(app.state());
    let (message, detail) = errs.last().expect("an error entry");
    assert!(message.contains("exit status 3"), "{message}");
    assert!(
        detail.iter().any(|l| l.contains("simulated crash")),
        "{detail:?}"
    );
    let before = app.state().transcript.len();
    // `r` on an empty composer restarts the agent with a new session.
    app.handle(Msg::Action(Action::Char('r')));
    pump_until(&mut app, "new session", |s| {
        matches!(s.connection, Connection::Ready { .. })
    })
    .await;
    assert!(
        app.state().transcript.len() >= before,
        "the transcript stays"
    );
    send(&mut app, "after restart");
    pump_until(&mut app, "turn after restart", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("after restart"));
    app.shutdown().await;
}

#[tokio::test]
async fn another_protocol_version_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/protocol-v0.toml");
    let scenario = scenario.display().to_string();
    let mut app = App::new(demo_command(dir.path(), &["--scenario", &scenario]));
    app.start_agent().expect("spawns");
    pump_until(&mut app, "connect failure", |s| {
        s.connection == Connection::Down
    })
    .await;
    let errs = errors(app.state());
    let message = &errs.first().expect("an error").0;
    assert!(
        message.contains("version 0") && message.contains("version 1"),
        "{message}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn missing_agent_command_is_a_launch_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(AgentCommand {
        name: "nope".into(),
        program: "/definitely/not/an/agent".into(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: dir.path().to_path_buf(),
    });
    let err = app.start_agent().expect_err("no such program");
    assert!(matches!(err, LaunchError::NotFound { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/definitely/not/an/agent"),
        "{err}"
    );
}

#[test]
fn missing_agent_command_exits_non_zero_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([
            "--config",
            "/nonexistent/warden.toml",
            "--",
            "/definitely/not/an/agent",
            "--acp",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("agent command not found: `/definitely/not/an/agent`"),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("\u{1b}[?1049h"),
        "never entered the alternate screen"
    );
}

/// An agent that ignores stdin EOF (as several real ones do), with a child
/// in its process group: shutdown ends the whole group.
#[tokio::test]
async fn shutdown_ends_an_agent_that_ignores_eof_and_its_children() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(AgentCommand {
        name: "stubborn".into(),
        program: "sh".into(),
        args: vec!["-c".into(), "trap '' HUP; sleep 300 & sleep 300".into()],
        env: Vec::new(),
        cwd: dir.path().to_path_buf(),
    });
    app.start_agent().expect("sh spawns");
    let pgid = app_pid(&app);
    assert!(group_alive(pgid));
    app.shutdown().await;
    // Give the kernel a moment to reap.
    for _ in 0..50 {
        if !group_alive(pgid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !group_alive(pgid),
        "no process of the agent's group is left"
    );
}

fn app_pid(app: &App) -> i32 {
    i32::try_from(app.agent_pid().expect("running")).expect("pid fits")
}

fn group_alive(pgid: i32) -> bool {
    // Zombies still count for kill(0); ask ps for live members instead.
    let out = std::process::Command::new("ps")
        .args(["-e", "-o", "pgid=,stat="])
        .output()
        .expect("ps runs");
    String::from_utf8_lossy(&out.stdout).lines().any(|line| {
        let mut cols = line.split_whitespace();
        cols.next() == Some(pgid.to_string().as_str())
            && !cols.next().unwrap_or("Z").starts_with('Z')
    })
}

#[test]
fn exec_in_each_mode() {
    // Default: the ask is denied (the default --on-ask), the agent reports it, exit 0.
    let (code, out, err, log) = exec(&["-p", "edit"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}"
    );
    assert!(
        err.contains("denied: --on-ask (Reject) · Edit src/main.rs"),
        "{err}"
    );
    assert_eq!(
        (log.len(), log[0].source.as_str(), log[0].mode.as_str()),
        (1, "user", "default")
    );

    // Plan: blocked by the policy, no ask at all.
    let (code, out, err, log) = exec(&["--mode", "plan", "-p", "execute"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}"
    );
    assert!(err.contains("blocked: plan mode"), "{err}");
    assert_eq!(log[0].source, "plan");

    // Auto: allowed once.
    let (code, out, err, log) = exec(&["--mode", "auto", "-p", "edit"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected allow-once"),
        "{out}"
    );
    assert!(err.contains("allowed: auto mode"), "{err}");
    assert_eq!(
        (log[0].source.as_str(), log[0].decision.as_str()),
        ("auto", "allowed")
    );

    // --on-ask allow and fail.
    let (code, out, _, _) = exec(&["--on-ask", "allow", "-p", "delete"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("permission outcome: selected allow-once"),
        "{out}"
    );
    let (code, _, err, log) = exec(&["--on-ask", "fail", "-p", "edit"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--on-ask is fail"), "{err}");
    assert_eq!(log[0].decision, "cancelled");

    // A plain answer streams to stdout.
    let (code, out, _, log) = exec(&["-p", "hello exec"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("hello exec"), "{out}");
    assert!(log.is_empty());
}

/// A chat as `warden` would start it with no agent named, on this settings file.
async fn launched(dir: &Path, config: &Path) -> App {
    let start = warden::launch::resolve(&warden::launch::Want {
        config: Some(config),
        agent: None,
        command: &[],
        cwd: Some(dir),
        mode: None,
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .expect("resolves");
    let mut start = start;
    start.command.env.push(demo_state(dir));
    start.options.decision_log = Some(dir.join("decisions.jsonl"));
    start.options.notify = warden::app::Notify::default();
    ready(start.into_app()).await
}

fn last_log(dir: &Path) -> warden::decision_log::DecisionRecord {
    warden::decision_log::read(&dir.join("decisions.jsonl"))
        .expect("log")
        .pop()
        .expect("a decision")
}

#[tokio::test]
async fn bypass_is_written_to_the_settings_and_honoured_by_the_next_warden() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("conf/config.toml");
    let mut app = launched(dir.path(), &config).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    key(&mut app, Action::Char('b'));
    key(&mut app, Action::Char('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    let text = std::fs::read_to_string(&config).expect("the first write created the file");
    let parsed = warden::settings::parse(&text, &config).expect("valid settings");
    assert!(parsed.agents["demo"].bypass_permissions, "{text}");
    assert_eq!(last_log(dir.path()).source, "bypass");

    let mut again = launched(dir.path(), &config).await;
    assert!(again.state().agent_policy.bypass);
    send(&mut again, "delete");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(again.state()).contains("permission outcome: selected allow-once"));
    let record = last_log(dir.path());
    assert_eq!(
        (record.source.as_str(), record.kind.as_str()),
        ("bypass", "delete")
    );
    again.shutdown().await;
}

#[tokio::test]
async fn a_kept_rule_allows_after_restart_and_revoking_it_brings_the_card_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "# my settings\nunknown_top = 1\n").expect("seed file");
    let mut app = launched(dir.path(), &config).await;
    send(&mut app, "execute");
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    key(&mut app, Action::Char('p'));
    let Focus::KeepRule(field) = &app.state().focus else {
        panic!("keep-as-rule field: {:?}", app.state().focus)
    };
    assert_eq!(field.text(), "cargo test *", "the narrowest sensible rule");
    key(&mut app, Action::Submit);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("permission outcome: selected allow-once"),
        "the kept rule allowed this request"
    );
    app.shutdown().await;
    let text = std::fs::read_to_string(&config).expect("file");
    assert!(
        text.starts_with("# my settings\nunknown_top = 1\n"),
        "the rest of the file is kept: {text}"
    );
    assert!(
        text.contains("[[rules]]") && text.contains("cargo test *"),
        "{text}"
    );

    let mut again = launched(dir.path(), &config).await;
    send(&mut again, "execute");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(again.state().approvals.is_empty());
    assert_eq!(last_log(dir.path()).source, "rule");
    // Revoke it on the review screen: the card comes back.
    key(&mut again, Action::RulesScreen);
    let items = again.state().grant_items();
    let at = items
        .iter()
        .position(|i| matches!(i, warden::state::GrantItem::Rule(_)))
        .expect("the rule is listed");
    for _ in 0..at {
        key(&mut again, Action::Down);
    }
    key(&mut again, Action::Char('d'));
    key(&mut again, Action::Char('y'));
    assert!(again.state().rules.is_empty());
    key(&mut again, Action::Cancel);
    // The write runs off the event loop and reports back.
    pump_until(&mut again, "the revoke written", |s| {
        infos(s).iter().any(|i| i.starts_with("rule removed from"))
    })
    .await;
    assert!(
        !std::fs::read_to_string(&config)
            .expect("file")
            .contains("cargo test")
    );
    send(&mut again, "execute");
    pump_until(&mut again, "a card again", |s| {
        !s.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert_eq!(
        again.state().approvals.len(),
        1,
        "{:?}",
        decisions(again.state())
    );
    again.shutdown().await;
}

#[tokio::test]
async fn a_malformed_settings_file_is_reported_and_never_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    let bad = "[agents.demo]\ncommand = 3\n";
    std::fs::write(&config, bad).expect("seed");
    let mut app = launched(dir.path(), &config).await;
    let errs = errors(app.state());
    assert!(
        errs.iter().any(|(m, _)| m.contains("config.toml:2:11")),
        "{errs:?}"
    );
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    key(&mut app, Action::Char('b'));
    key(&mut app, Action::Char('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("permission outcome: selected allow-once"),
        "the choice still holds for this run"
    );
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.starts_with("settings not written"))
    );
    assert_eq!(
        std::fs::read_to_string(&config).expect("file"),
        bad,
        "bytes unchanged"
    );
    app.shutdown().await;
}

// ---- files and terminals on the agent's behalf (through the same gate) ----

fn tool_titles(state: &AppState) -> Vec<(String, ToolState)> {
    state
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
    assert!(app.state().approvals.is_empty(), "reads need no card");
    send(&mut app, "fs-escape");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("read failed") && text.contains("outside the allowed roots"),
        "{text}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn client_write_after_an_allowed_edit_needs_no_second_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "fs-write");
    pump_until(&mut app, "the edit card", |s| !s.approvals.is_empty()).await;
    key(&mut app, Action::Char('y'));
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() || !s.approvals.is_empty()
    })
    .await;
    assert!(
        app.state().approvals.is_empty(),
        "no second card: {:?}",
        tool_titles(app.state())
    );
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    let written = std::fs::read_to_string(dir.path().join("hello.txt")).expect("written");
    assert_eq!(written, "hello from warden-demo\n");
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
    pump_until(&mut app, "a card", |s| !s.approvals.is_empty()).await;
    let card = &app.state().approvals[0];
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
    key(&mut app, Action::Char('y'));
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
    assert!(app.state().approvals.is_empty());
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
    pump_until(&mut app, "the terminal", |s| !s.terminals.is_empty()).await;
    assert!(sleepers() > before, "the command runs");
    key(&mut app, Action::Cancel);
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
    pump_until(&mut app, "the terminal", |s| s.terminals.len() == 2).await;
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
    pump_until(&mut app, "three cards", |s| s.approvals.len() == 3).await;
    let titles: Vec<String> = app.state().approvals.iter().map(|a| a.title()).collect();
    assert_eq!(
        titles,
        [
            "Edit src/lib.rs",
            "Run cargo test",
            "Fetch https://docs.rs/ratatui"
        ],
        "FIFO"
    );
    key(&mut app, Action::Tab);
    key(&mut app, Action::Char('n'));
    key(&mut app, Action::Char('A'));
    key(&mut app, Action::Char('y'));
    assert!(app.state().approvals.is_empty());
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

// ---- chat records and reopening a past chat ----

fn recorded_options(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, Mode::Default)
    }
}

#[tokio::test]
async fn a_recorded_chat_reopens_with_its_transcript_and_continues_the_same_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    let session = first.state().session_id().expect("open").to_string();
    send(&mut first, "hello from the first run");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;

    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].title.as_deref(), Some("hello from the first run"));
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(chat.entries.iter().any(
        |e| matches!(e.to_kind(), EntryKind::Agent(t) if t.contains("hello from the first run"))
    ));

    let mut options = recorded_options(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&chat));
    let mut again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_eq!(
        again.state().session_id(),
        Some(session.as_str()),
        "the same session"
    );
    let users: Vec<String> = again
        .state()
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::User(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        ["hello from the first run"],
        "replayed by session/load"
    );
    assert!(
        infos(again.state())
            .iter()
            .any(|l| l.starts_with("reopened"))
    );
    send(&mut again, "and the second");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(again.state()).contains("and the second"));
    again.shutdown().await;
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(
        chat.entries
            .iter()
            .any(|e| e.to_kind() == EntryKind::User("and the second".into())),
        "the record goes on"
    );
    assert_eq!(store.list().len(), 1, "still one chat");
}

#[tokio::test]
async fn a_chat_the_agent_cannot_continue_shows_the_saved_transcript_and_a_new_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    send(&mut first, "remember me");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;
    // The agent has lost its own record of the session.
    std::fs::remove_dir_all(dir.path().join(".demo-state")).expect("forget");
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chat = store.load(&store.list()[0].chat_id).expect("loads");
    let mut options = recorded_options(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&chat));
    let mut again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_ne!(
        again.state().session_id(),
        Some(chat.session_id.as_str()),
        "a new session"
    );
    assert!(
        again
            .state()
            .transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("remember me".into())),
        "saved transcript shown"
    );
    assert!(
        infos(again.state())
            .iter()
            .any(|l| l.contains("could not continue this chat"))
    );
    again.shutdown().await;
}

/// Feed agent events until `done` holds for the whole workspace.
async fn pump_ws(app: &mut App, what: &str, done: impl Fn(&warden::state::Workspace) -> bool) {
    let result = tokio::time::timeout(GUARD, async {
        while !done(&app.ws) {
            match app.next_agent_event().await {
                Some(event) => app.on_agent_event(event),
                None => panic!("agent event channel closed while waiting for {what}"),
            }
        }
    })
    .await;
    assert!(result.is_ok(), "timed out waiting for {what}");
}

fn chat_state(app: &App, n: usize) -> &AppState {
    &app.ws.chats[n - 1].state
}

#[tokio::test]
async fn two_chats_on_one_agent_process_plan_blocks_and_auto_allows_the_same_edit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Plan)).await;
    let pid = app.agent_pid().expect("agent runs");
    // Ctrl-N: a second chat of the same agent, on screen, starting at Default.
    key(&mut app, Action::NewChat);
    assert_eq!(app.ws.chats.len(), 2);
    assert_eq!(app.ws.active, 1);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(ws.chats[1].state.connection, Connection::Ready { .. })
    })
    .await;
    assert_eq!(app.agent_count(), 1, "one agent process serves both chats");
    assert_eq!(app.agent_pid(), Some(pid));
    let first = chat_state(&app, 1).session_id().map(str::to_string);
    let second = chat_state(&app, 2).session_id().map(str::to_string);
    assert!(
        first.is_some() && second.is_some() && first != second,
        "two sessions"
    );
    assert_eq!(chat_state(&app, 2).mode, Mode::Default);
    // Shift+Tab on chat 2: Default -> Auto; chat 1 stays in Plan.
    key(&mut app, Action::BackTab);
    assert_eq!(chat_state(&app, 2).mode, Mode::Auto);
    assert_eq!(chat_state(&app, 1).mode, Mode::Plan);

    // The same edit in both: chat 2 (on screen) first, then chat 1.
    send(&mut app, "edit");
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "edit");
    pump_ws(&mut app, "both turns", |ws| {
        ws.chats.iter().all(|c| !c.state.is_busy())
    })
    .await;
    assert!(
        app.ws.chats.iter().all(|c| c.state.approvals.is_empty()),
        "no card in either"
    );
    let plan = agent_text(chat_state(&app, 1));
    let auto = agent_text(chat_state(&app, 2));
    assert!(
        plan.contains("permission outcome: selected reject-once"),
        "{plan}"
    );
    assert!(
        auto.contains("permission outcome: selected allow-once"),
        "{auto}"
    );
    assert!(!plan.contains("allow-once") && !auto.contains("reject-once"));
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    let mut by_session: Vec<(String, String, String)> = log
        .iter()
        .map(|r| (r.session.clone(), r.mode.clone(), r.decision.clone()))
        .collect();
    by_session.sort();
    let mut want = vec![
        (
            first.clone().unwrap_or_default(),
            "plan".to_string(),
            "denied".to_string(),
        ),
        (
            second.clone().unwrap_or_default(),
            "auto".to_string(),
            "allowed".to_string(),
        ),
    ];
    want.sort();
    assert_eq!(by_session, want);
    app.shutdown().await;
    assert!(!group_alive(pid as i32), "the shared agent is gone");
}

#[tokio::test]
async fn a_card_in_a_chat_off_screen_waits_there_and_closing_it_cancels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(ws.chats[1].state.connection, Connection::Ready { .. })
    })
    .await;
    // Chat 1 asks while chat 2 is on screen.
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "two");
    key(&mut app, Action::GoToChat(2));
    pump_ws(&mut app, "two cards in chat 1", |ws| {
        ws.chats[0].state.approvals.len() == 2
    })
    .await;
    assert!(
        chat_state(&app, 2).approvals.is_empty(),
        "nothing on chat 2's card"
    );
    assert_eq!(app.ws.waiting_elsewhere(), [(1, 2)]);
    // Close chat 1 from chat 2's list: it asks, then answers both cancelled.
    key(&mut app, Action::ChatList);
    key(&mut app, Action::Up);
    key(&mut app, Action::Char('x'));
    assert!(matches!(
        app.ws.focus,
        warden::state::ChatFocus::ConfirmClose { .. }
    ));
    key(&mut app, Action::Char('y'));
    assert_eq!(app.ws.chats.len(), 1);
    assert!(app.ws.waiting_elsewhere().is_empty());
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|r| r.decision == "cancelled"), "{log:?}");
    // Chat 2 goes on working on the same agent process.
    send(&mut app, "hello again");
    pump_until(&mut app, "chat 2's turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("hello again"));
    app.shutdown().await;
}

#[tokio::test]
async fn the_picker_in_the_tui_lists_the_agents_own_sessions_and_reopens_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A chat warden did not record: only the agent knows its session.
    let mut first = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    let session = first.state().session_id().expect("open").to_string();
    send(&mut first, "only the agent remembers this");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;

    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    // Alt-O: no records yet; the agent's session/list answer fills the picker.
    key(&mut app, Action::PastChats);
    assert!(app.ws.picker().is_some(), "the picker is open");
    pump_ws(&mut app, "the agent's sessions", |ws| {
        ws.picker()
            .is_some_and(|p| p.items().iter().any(|c| c.session_id == session))
    })
    .await;
    let picker = app.ws.picker().expect("open");
    let listed = picker
        .items()
        .iter()
        .find(|c| c.session_id == session)
        .expect("listed");
    assert!(listed.is_agent_listed());
    assert_eq!(
        listed.title.as_deref(),
        Some("only the agent remembers this")
    );
    // Filter down to it and open it: session/load replays it in a new chat,
    // which takes the place of the untouched one.
    key(&mut app, Action::Paste("remembers".into()));
    key(&mut app, Action::Submit);
    assert_eq!(app.ws.chats.len(), 1, "the untouched chat gave way");
    pump_until(&mut app, "the reopened session", |s| {
        s.session_id() == Some(session.as_str())
    })
    .await;
    assert!(
        app.state()
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::User(t) if t == "only the agent remembers this")),
        "replayed"
    );
    send(&mut app, "and now it is recorded");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0].session_id, session);
}

#[tokio::test]
async fn chats_of_different_agents_run_side_by_side_and_an_unused_agent_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let first_pid = app.agent_pid().expect("runs");
    // A second agent (the demo under another name) whose chats start in Auto.
    let mut other = demo_command(dir.path(), &[]);
    other.name = "other".into();
    app.set_choices(vec![warden::app::AgentChoice {
        command: other,
        options: ChatOptions {
            mode: Mode::Auto,
            ..ChatOptions::default()
        },
    }]);
    assert_eq!(app.ws.agents, ["demo", "other"]);
    // Ctrl-N asks which agent; the chat on screen's agent is highlighted.
    key(&mut app, Action::NewChat);
    assert_eq!(
        app.ws.focus,
        warden::state::ChatFocus::NewChat { selected: 0 }
    );
    key(&mut app, Action::Down);
    key(&mut app, Action::Submit);
    pump_ws(&mut app, "the other agent's session", |ws| {
        matches!(ws.chats[1].state.connection, Connection::Ready { .. })
    })
    .await;
    assert_eq!(app.agent_count(), 2, "one process per agent");
    let other_pid = app.agent_pid().expect("runs");
    assert_ne!(other_pid, first_pid);
    assert_eq!(chat_state(&app, 2).agent_name, "other");
    assert_eq!(chat_state(&app, 2).mode, Mode::Auto, "its default mode");
    assert_eq!(chat_state(&app, 1).mode, Mode::Default);
    send(&mut app, "execute");
    pump_until(&mut app, "the Auto turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("permission outcome: selected allow-once"));
    // Closing the only chat of `other` ends its process; demo runs on.
    key(&mut app, Action::CloseChat);
    assert_eq!(app.ws.chats.len(), 1);
    assert_eq!(app.agent_count(), 1);
    let gone = tokio::time::timeout(GUARD, async {
        while group_alive(other_pid as i32) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the unused agent's process group ended");
    assert!(group_alive(first_pid as i32));
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_crash_takes_down_all_its_chats_and_r_reconnects_each() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(ws.chats[1].state.connection, Connection::Ready { .. })
    })
    .await;
    // Chat 1 waits on a card while chat 2 crashes the shared process.
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "edit");
    pump_ws(&mut app, "a card in chat 1", |ws| {
        !ws.chats[0].state.approvals.is_empty()
    })
    .await;
    key(&mut app, Action::GoToChat(2));
    send(&mut app, "crash");
    pump_ws(&mut app, "both chats down", |ws| {
        ws.chats
            .iter()
            .all(|c| c.state.connection == Connection::Down)
    })
    .await;
    assert_eq!(app.agent_count(), 0);
    assert!(
        chat_state(&app, 1).approvals.is_empty(),
        "its card was cancelled"
    );
    assert!(!errors(chat_state(&app, 1)).is_empty() && !errors(chat_state(&app, 2)).is_empty());
    // r in chat 2 starts a new process, and chat 1 comes back on it too
    // (every chat of the crashed process restarts together).
    key(&mut app, Action::Char('r'));
    pump_ws(&mut app, "both chats back", |ws| {
        ws.chats
            .iter()
            .all(|c| matches!(c.state.connection, Connection::Ready { .. }))
    })
    .await;
    let pid = app.agent_pid();
    key(&mut app, Action::GoToChat(1));
    assert_eq!(app.agent_count(), 1);
    assert_eq!(app.agent_pid(), pid, "the same new process");
    send(&mut app, "still here");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("still here"));
    app.shutdown().await;
}

#[tokio::test]
async fn closing_a_chat_mid_turn_keeps_what_streamed_in_its_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(ws.chats[1].state.connection, Connection::Ready { .. })
    })
    .await;
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "slow");
    pump_until(&mut app, "some output", |s| {
        agent_text(s).contains("Still working")
    })
    .await;
    // Alt-W asks (a turn runs); y closes it.
    key(&mut app, Action::CloseChat);
    key(&mut app, Action::Char('y'));
    assert_eq!(app.ws.chats.len(), 1);
    assert!(
        app.ws
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("closed chat 1"))
    );
    app.shutdown().await;
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(
        chats.len(),
        1,
        "the untouched chat left no record: {chats:?}"
    );
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(
        chat.entries
            .iter()
            .any(|e| matches!(e.to_kind(), EntryKind::Agent(t) if t.contains("Still working"))),
        "the streamed part is kept: {:?}",
        chat.entries
    );
}

#[tokio::test]
async fn a_renamed_chat_is_listed_under_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    send(&mut app, "first words");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // Ctrl-L, r, a new name, Enter.
    key(&mut app, Action::ChatList);
    key(&mut app, Action::Char('r'));
    key(&mut app, Action::KillLineStart);
    key(&mut app, Action::Paste("parser work".into()));
    key(&mut app, Action::Submit);
    key(&mut app, Action::Cancel);
    assert_eq!(app.ws.chats[0].label(), "parser work");
    app.shutdown().await;
    let chats = warden::chats::ChatStore::new(dir.path().join("chats")).list();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].title.as_deref(), Some("parser work"));
}

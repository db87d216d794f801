//! End to end over real pipes: warden's runtime drives `warden demo-agent`
//! (spawned as a subprocess, like any agent) without a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;
use warden::state::{Code, Key};

use warden::acp::{AgentCommand, LaunchError};
use warden::app::App;
use warden::policy::Mode;
use warden::state::{Action, Connection, EntryKind, Focus, Modal, Msg, ToolState};

use crate::common::*;

#[tokio::test]
async fn connects_and_sees_the_agents_modes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let modes = app
        .state()
        .session
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
        .session
        .transcript
        .entries()
        .iter()
        .any(|e| e.kind == EntryKind::User("hello there".into()));
    assert!(user, "the user's message is in the transcript");
    assert_eq!(
        app.state()
            .session
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
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    assert_eq!(
        app.state().view.focus,
        Focus::CARDS,
        "the composer was empty: focus moves to the card"
    );
    let card = &app.state().gate.approvals[0];
    assert_eq!(card.request.options.len(), 4);
    let tool = app
        .state()
        .session
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
    key(&mut app, Action::ch('1'));
    assert!(app.state().gate.approvals.is_empty());
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
    app.settle_disk().await;
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
    assert!(app.state().gate.approvals.is_empty(), "no card in Plan");
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
    app.settle_disk().await;
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
    assert!(app.state().gate.approvals.is_empty());
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected allow-once"),
        "{text}"
    );
    app.settle_disk().await;
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
    pump_until(&mut app, "two cards", |s| s.gate.approvals.len() == 2).await;
    key(&mut app, Action::key(Code::Esc));
    assert!(app.state().gate.approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert_eq!(
        text.matches("permission outcome: cancelled").count(),
        2,
        "{text}"
    );
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(
        log.iter().filter(|r| r.decision == "cancelled").count(),
        2,
        "{log:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn deny_with_a_reason_rejects_and_tells_the_agent_why_after_the_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('r'));
    assert!(matches!(
        app.state().view.focus.modal,
        Some(Modal::Reason { .. })
    ));
    key(
        &mut app,
        Action::Paste("use the existing parser instead".into()),
    );
    key(&mut app, Action::key(Code::Enter));
    // The turn ends by itself; the reason goes out as the next prompt then.
    pump_until(&mut app, "the reason prompt's turn", |s| {
        s.session
            .transcript
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

/// claude-agent-acp 0.23.1 answers every prompt after a cancel a turn late
/// (assets/scenarios/claude-late-after-cancel.toml): deny with a reason
/// must leave the turn to end by itself, so that the reason's turn is the
/// reason's and the next prompt's card and output come in its own turn.
#[tokio::test]
async fn deny_with_a_reason_keeps_a_late_after_cancel_agent_in_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "claude-late-after-cancel.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "create a file with touch");
    pump_until(&mut app, "the touch card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('r'));
    key(&mut app, Action::Paste("use a different name".into()));
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "the reason's turn", |s| {
        s.session
            .transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("use a different name".into()))
            && !s.is_busy()
    })
    .await;
    let text = agent_text(app.state());
    assert!(
        text.contains("User refused permission"),
        "the denied turn ended by itself: {text}"
    );
    assert!(
        text.contains("Hello from the fake model."),
        "the reason's turn has its own answer: {text}"
    );
    send(&mut app, "list the files");
    pump_until(&mut app, "the ls card", |s| !s.gate.approvals.is_empty()).await;
    assert!(app.state().is_busy(), "the card came in its own turn");
    key(&mut app, Action::ch('2'));
    pump_until(&mut app, "the ls turn", |s| !s.is_busy()).await;
    let tool = app
        .state()
        .session
        .transcript
        .tool("toolu_ls")
        .expect("the ls call is shown");
    assert_eq!(tool.state, ToolState::Completed);
    assert!(
        format!("{:?}", tool.call.content).contains("listed-by-ls.txt"),
        "{:?}",
        tool.call.content
    );
    assert!(
        !errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("warden refused")),
        "{:?}",
        errors(app.state())
    );
    app.shutdown().await;
}

#[tokio::test]
async fn esc_cancels_a_slow_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "slow");
    pump_until(&mut app, "first chunk", |s| !agent_text(s).is_empty()).await;
    app.handle(Msg::Action(Action::key(Code::Esc)));
    assert!(
        app.state()
            .session
            .turn
            .as_ref()
            .is_some_and(|t| t.cancelling)
    );
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
    pump_until(&mut app, "agent exit", |s| {
        s.session.connection == Connection::Down
    })
    .await;
    assert!(!app.state().is_busy(), "the turn ended with the agent");
    let errs = errors(app.state());
    let (message, detail) = errs.last().expect("an error entry");
    assert!(message.contains("exit status 3"), "{message}");
    assert!(
        detail.iter().any(|l| l.contains("simulated crash")),
        "{detail:?}"
    );
    let before = app.state().session.transcript.len();
    // `r` on an empty composer restarts the agent with a new session.
    app.handle(Msg::Action(Action::ch('r')));
    pump_until(&mut app, "new session", |s| {
        matches!(s.session.connection, Connection::Ready { .. })
    })
    .await;
    assert!(
        app.state().session.transcript.len() >= before,
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
        s.session.connection == Connection::Down
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
    assert_eq!(
        stderr.matches("os error").count(),
        1,
        "the OS error is said once: {stderr}"
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

pub(crate) fn group_alive(pgid: i32) -> bool {
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

/// `warden log` names the project each decision was made in: the last part
/// of the chat's working directory (issue 33 item 8).
#[test]
fn warden_log_has_a_project_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("lighthouse-app");
    std::fs::create_dir(&project).expect("project dir");
    let (code, _, err, log) = exec_in(
        &project,
        std::path::Path::new("/nonexistent/warden.toml"),
        &["--mode", "plan", "-p", "execute"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(log[0].cwd, project.display().to_string());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["--config", "/nonexistent/warden.toml", "log"])
        .env("XDG_DATA_HOME", project.join("data"))
        .env("HOME", &project)
        .output()
        .expect("warden log runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default();
    assert!(head.contains("project") && head.contains("agent"), "{text}");
    let row = lines.next().unwrap_or_default();
    assert!(row.contains("lighthouse-app"), "{text}");
    assert!(
        row.find("lighthouse-app") < row.find("demo"),
        "the project comes before the agent: {text}"
    );
}

/// A `warden exec` run is recorded like a chat, marked as an exec run and
/// with its entries, so the resume picker does not list it as a bare
/// "0 entries" session of the agent's; its prompt stays out of the Up
/// history (issue 33 item 8).
#[test]
fn an_exec_run_is_a_marked_record_with_its_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, err, _) = exec_in(
        dir.path(),
        std::path::Path::new("/nonexistent/warden.toml"),
        &["-p", "remember the lighthouse"],
    );
    assert_eq!(code, Some(0), "{err}");
    let chats = warden::chats::ChatStore::new(dir.path().join("data/warden/chats")).list();
    let [run] = chats.as_slice() else {
        panic!("{chats:?}")
    };
    assert!(run.exec, "{run:?}");
    assert!(run.entries >= 2, "the prompt and the answer: {run:?}");
    assert_eq!(run.title.as_deref(), Some("remember the lighthouse"));
    assert!(!dir.path().join("data/warden/history").exists());
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
        (1, "on-ask", "default")
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
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('b'));
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    let text = std::fs::read_to_string(&config).expect("the first write created the file");
    let parsed = warden::settings::parse(&text, &config).expect("valid settings");
    assert!(parsed.agents["demo"].bypass_permissions, "{text}");
    assert_eq!(last_log(dir.path()).source, "bypass");

    let mut again = launched(dir.path(), &config).await;
    assert!(again.state().gate.agent_policy.bypass);
    send(&mut again, "delete");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(again.state()).contains("permission outcome: selected allow-once"));
    again.settle_disk().await;
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
    std::fs::write(&config, "# my settings\nroots = []\n").expect("seed file");
    let mut app = launched(dir.path(), &config).await;
    send(&mut app, "execute");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('p'));
    let Some(Modal::KeepRule(field)) = &app.state().view.focus.modal else {
        panic!("keep-as-rule field: {:?}", app.state().view.focus)
    };
    assert_eq!(field.text(), "cargo test *", "the narrowest sensible rule");
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("permission outcome: selected allow-once"),
        "the kept rule allowed this request"
    );
    app.shutdown().await;
    let text = std::fs::read_to_string(&config).expect("file");
    assert!(
        text.starts_with("# my settings\nroots = []\n"),
        "the rest of the file is kept: {text}"
    );
    assert!(
        text.contains("[[rules]]") && text.contains("cargo test *"),
        "{text}"
    );

    let mut again = launched(dir.path(), &config).await;
    send(&mut again, "execute");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(again.state().gate.approvals.is_empty());
    again.settle_disk().await;
    assert_eq!(last_log(dir.path()).source, "rule");
    // Revoke it on the review screen: the card comes back.
    key(&mut again, Action::Key(Key::ctrl(Code::Char('g'))));
    let items = again.state().grant_items();
    let at = items
        .iter()
        .position(|i| matches!(i, warden::state::GrantItem::Rule(_)))
        .expect("the rule is listed");
    for _ in 0..at {
        key(&mut again, Action::key(Code::Down));
    }
    key(&mut again, Action::ch('d'));
    key(&mut again, Action::ch('y'));
    assert!(again.state().gate.rules.is_empty());
    key(&mut again, Action::key(Code::Esc));
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
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert_eq!(
        again.state().gate.approvals.len(),
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
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('b'));
    key(&mut app, Action::ch('y'));
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

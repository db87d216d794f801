//! End to end: warden answers agents only with options that keep them
//! asking, and an allowed request covers only the same write or command,
//! once (issue 10 items 2 and 4, issue 11 item 1). The demo agent plays the
//! recorded quirks of real agents from `assets/scenarios/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use warden::app::App;
use warden::policy::Mode;
use warden::state::{Action, ChatState};

use crate::common::*;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
}

/// A copy of a scenario in `dir` with `@CWD@` filled in.
fn scenario_in(dir: &Path, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(scenario(name)).expect("scenario");
    let path = dir.join(format!(".{name}"));
    std::fs::write(&path, text.replace("@CWD@", &dir.display().to_string())).expect("write");
    path
}

async fn playing(dir: &Path, file: &Path, mode: Mode) -> App {
    let command = demo_command(dir, &["--scenario", &file.display().to_string()]);
    let options = logged_options(dir, mode);
    let mut app = App::with_options(command, options);
    app.start_agent().expect("the agent spawns");
    pump_until(&mut app, "session", |s| {
        matches!(
            s.session.connection,
            warden::state::Connection::Ready { .. }
        )
    })
    .await;
    app
}

fn outcomes(state: &ChatState) -> Vec<String> {
    agent_text(state)
        .lines()
        .filter(|l| l.starts_with("permission outcome:"))
        .map(str::to_string)
        .collect()
}

/// `warden exec` of a scenario in `dir`, with the settings `config`.
fn exec_scenario(dir: &Path, config: &Path, file: &Path, args: &[&str]) -> ExecRun {
    let file = file.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--",
        env!("CARGO_BIN_EXE_warden"),
        "demo-agent",
        "--scenario",
        &file,
    ]);
    exec_in(dir, config, &all)
}

#[tokio::test]
async fn claude_always_allow_answers_allow_and_becomes_a_chat_grant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("claude-always-and-exit-plan.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "test");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('1'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        outcomes(app.state()),
        vec![
            "permission outcome: selected allow",
            "permission outcome: selected allow"
        ],
        "the agent never sees allow_always; warden's grant answers the second"
    );
    assert_eq!(app.state().gate.grants.len(), 1);
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert!(
        log.iter()
            .all(|r| r.option_kind.as_deref() == Some("allow_once")),
        "{log:?}"
    );
    assert!(log.iter().all(|r| r.source == "chat grant"), "{log:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn claude_exit_plan_answers_the_mode_that_still_asks() {
    for pick in ['1', '2', 'y'] {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = scenario("claude-always-and-exit-plan.toml");
        let mut app = playing(dir.path(), &file, Mode::Plan).await;
        send(&mut app, "plan");
        pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
        key(&mut app, Action::ch(pick));
        pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
        assert_eq!(
            outcomes(app.state()),
            vec!["permission outcome: selected default"],
            "{pick}"
        );
        assert_eq!(app.state().gate.mode, Mode::Default);
        app.shutdown().await;
    }
}

#[test]
fn exec_never_answers_allow_always() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("claude-always-and-exit-plan.toml");
    let none = Path::new("/nonexistent/warden.toml");
    for args in [
        &["--mode", "auto", "-p", "only-always"][..],
        &["--on-ask", "allow", "-p", "only-always"][..],
    ] {
        let (_, out, err, log) = exec_scenario(dir.path(), none, &file, args);
        assert!(
            out.contains("permission outcome: selected reject"),
            "{args:?}: {out}\n{err}"
        );
        assert!(
            log.iter()
                .all(|r| r.option_kind.as_deref() != Some("allow_always")),
            "{log:?}"
        );
    }
    let (_, out, err, _) = exec_scenario(
        dir.path(),
        none,
        &file,
        &["--on-ask", "allow", "-p", "plan"],
    );
    assert!(
        out.contains("permission outcome: selected default"),
        "{out}\n{err}"
    );
}

#[tokio::test]
async fn kimi_ask_then_terminal_is_one_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("kimi-asks-then-runs-terminal.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "go");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn or a second card", |s| {
        !s.is_busy() || !s.gate.approvals.is_empty()
    })
    .await;
    // warden can cover the terminal only once it reads the command from a
    // title-only request (issue 10 item 3); until then the terminal asks too.
    let title_only = warden::policy::RequestView {
        title: "Shell: touch created-by-agent.txt".into(),
        ..Default::default()
    };
    if title_only.command().is_some() {
        assert!(app.state().gate.approvals.is_empty(), "one card only");
        assert!(dir.path().join("created-by-agent.txt").exists());
    } else {
        let card = &app.state().gate.approvals[0];
        assert!(card.request.client, "only the terminal asks again");
        key(&mut app, Action::ch('n'));
        pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    }
    app.shutdown().await;
}

#[tokio::test]
async fn fast_agent_sh_rerun_is_one_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("fast-agent-reruns-through-sh.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "go");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn or a second card", |s| {
        !s.is_busy() || !s.gate.approvals.is_empty()
    })
    .await;
    assert!(app.state().gate.approvals.is_empty(), "one card only");
    let text = agent_text(app.state());
    assert!(text.contains(r#"output: "a\nb\n""#), "{text}");
    app.shutdown().await;
}

#[test]
fn exec_fast_agent_sh_rerun_is_covered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("fast-agent-reruns-through-sh.toml");
    let none = Path::new("/nonexistent/warden.toml");
    let (_, out, err, log) =
        exec_scenario(dir.path(), none, &file, &["--on-ask", "allow", "-p", "go"]);
    assert!(out.contains(r#"output: "a\nb\n""#), "{out}\n{err}");
    assert!(
        log.iter()
            .any(|r| r.reason.starts_with("covered by the allowed request")),
        "{log:?}"
    );
}

#[tokio::test]
async fn hostile_read_then_write_is_not_covered() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("victim.txt"), "original\n").expect("victim");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "read-then-write");
    pump_until(&mut app, "a card for the write", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert_eq!(app.state().gate.approvals.len(), 1, "the write asks");
    assert!(app.state().gate.approvals[0].request.client);
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim.txt")).expect("read"),
        "original\n"
    );
    app.shutdown().await;
}

#[test]
fn exec_hostile_coverage_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("victim.txt"), "original\n").expect("victim");
    std::fs::write(dir.path().join("protected.txt"), "original\n").expect("protected");
    let config = dir.path().join("warden.toml");
    std::fs::write(
        &config,
        "[[rules]]\ndecision = \"deny\"\nkind = \"write\"\npath = \"**/protected.txt\"\n",
    )
    .expect("config");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");

    // --on-ask deny: the write is refused, the file unchanged.
    let (_, out, err, log) = exec_scenario(dir.path(), &config, &file, &["-p", "read-then-write"]);
    assert!(out.contains("write failed"), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim.txt")).expect("read"),
        "original\n"
    );
    assert!(
        !log.iter().any(|r| r.reason.starts_with("covered")),
        "{log:?}"
    );

    // Past a deny rule: never, even with --on-ask allow.
    let (_, out, err, log) = exec_scenario(
        dir.path(),
        &config,
        &file,
        &["--on-ask", "allow", "-p", "protected"],
    );
    assert!(out.contains("write failed"), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("protected.txt")).expect("read"),
        "original\n"
    );
    assert!(
        log.iter()
            .any(|r| r.decision == "denied" && r.reason.contains("protected.txt")),
        "{log:?}"
    );

    // A search covers no terminal.
    let (_, out, err, _) =
        exec_scenario(dir.path(), &config, &file, &["-p", "search-then-terminal"]);
    assert!(out.contains("terminal/create failed"), "{out}\n{err}");
    assert!(!dir.path().join("searched.txt").exists());

    // An allowed command covers one terminal: the second asks again.
    let (_, out, err, log) = exec_scenario(
        dir.path(),
        &config,
        &file,
        &["--on-ask", "allow", "-p", "run-twice"],
    );
    assert!(out.contains("released"), "{out}\n{err}");
    let terminals: Vec<&str> = log
        .iter()
        .filter(|r| r.title.starts_with("Run touch twice.txt"))
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(terminals.len(), 2, "{log:?}");
    assert!(
        terminals[0].starts_with("covered by the allowed request"),
        "{terminals:?}"
    );
    assert!(!terminals[1].starts_with("covered"), "{terminals:?}");
}

#[tokio::test]
async fn hostile_second_terminal_asks_again_in_the_tui() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "run-twice");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "the second terminal's card", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    let state = app.state();
    assert_eq!(state.gate.approvals.len(), 1, "{:?}", decisions(state));
    assert!(state.gate.approvals[0].request.client);
    assert!(
        decisions(state)
            .iter()
            .any(|(allowed, text)| *allowed && text.contains("covered by the allowed request")),
        "{:?}",
        decisions(state)
    );
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
}

#[tokio::test]
async fn a_terminal_with_its_own_environment_is_not_covered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "run-with-env");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "the terminal's card", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    let state = app.state();
    assert_eq!(state.gate.approvals.len(), 1, "{:?}", decisions(state));
    let card = &state.gate.approvals[0];
    assert!(card.request.client);
    assert!(
        card.view
            .raw_input
            .as_ref()
            .and_then(|r| r.get("env"))
            .and_then(|e| e.get("PATH"))
            .is_some(),
        "the card shows the environment: {:?}",
        card.view.raw_input
    );
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
}

#[test]
fn exec_kimi_ask_then_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario("kimi-asks-then-runs-terminal.toml");
    // The terminal creates a file directly in the cwd, which is HOME here.
    let settings = sandbox_off(dir.path());
    let (_, out, err, log) = exec_scenario(
        dir.path(),
        &settings,
        &file,
        &["--on-ask", "allow", "-p", "go"],
    );
    assert!(out.contains("terminal exited: code 0"), "{out}\n{err}");
    assert!(dir.path().join("created-by-agent.txt").exists());
    let title_only = warden::policy::RequestView {
        title: "Shell: touch created-by-agent.txt".into(),
        ..Default::default()
    };
    let covered = log
        .iter()
        .filter(|r| r.reason.starts_with("covered by the allowed request"))
        .count();
    // One question once warden reads the command from the title (issue 10
    // item 3); the terminal asks again until then.
    let want = usize::from(title_only.command().is_some());
    assert_eq!(covered, want, "{log:?}");
}

/// Issue 22 item 4: an allowed edit covers a write of exactly the text its
/// card showed; the agent's other body for the same path asks (and is
/// refused here), the body shown needs no second card.
#[tokio::test]
async fn an_approved_diff_covers_only_the_text_the_card_showed() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.py"), "debug = 0\n").expect("config");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "diff-then-other-body");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "a card for the other body, or the end", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.py")).expect("read"),
        "debug = 0\n",
        "a body the card never showed was written unasked"
    );
    let state = app.state();
    assert_eq!(state.gate.approvals.len(), 1, "{:?}", decisions(state));
    assert!(state.gate.approvals[0].request.client);
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // Refused, the agent's turn ended; the file is as it was.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.py")).expect("read"),
        "debug = 0\n"
    );
    app.shutdown().await;
}

/// A terminal covered by an allowed command runs where the card said.
#[tokio::test]
async fn an_allowed_command_never_covers_its_terminal_in_another_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("sub");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "run-elsewhere");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "the terminal's card", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert!(!dir.path().join("sub/here.txt").exists());
    assert_eq!(app.state().gate.approvals.len(), 1);
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
}

/// A terminal whose directory is outside the roots is refused whatever the
/// mode, said, and logged (issue 22: one place for every decision).
#[tokio::test]
async fn a_terminal_outside_the_roots_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario_in(dir.path(), "hostile-coverage.toml");
    let mut app = playing(dir.path(), &file, Mode::Auto).await;
    send(&mut app, "terminal-outside");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("terminal/create failed"), "{text}");
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert!(
        log.iter().any(|r| r.kind == "execute"
            && r.decision == "denied"
            && r.source == "safety"
            && r.reason.contains("outside")),
        "{log:?}"
    );
    app.shutdown().await;
}

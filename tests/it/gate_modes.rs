//! End to end over real pipes: warden keeps agents in a mode that asks,
//! mode changes never approve waiting cards unseen, and a bypass is
//! confirmed first (issue 10, items 1 and 5, and the bypass extras).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use warden::state::{Code, Key};

use crate::common::*;
use warden::policy::Mode;
use warden::state::{Action, Connection};

const TOUCHED: &str = "created-by-agent.txt";

#[tokio::test]
async fn an_agent_starting_in_auto_is_moved_to_its_asking_mode_before_the_first_prompt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "qwen-starts-in-auto.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    let current = app
        .state()
        .session
        .agent_modes
        .as_ref()
        .map(|m| m.current.clone());
    assert_eq!(current.as_deref(), Some("default"), "moved before ready");
    let option = app
        .state()
        .session
        .agent_modes
        .as_ref()
        .and_then(|m| m.config_option_id.clone());
    assert_eq!(option.as_deref(), Some("mode"), "through the config option");
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.contains("`Auto`") && l.contains("`Default`")),
        "the move is said: {:?}",
        infos(app.state())
    );
    send(&mut app, "create a file with touch");
    pump_until(&mut app, "a card for the touch", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "{}",
        agent_text(app.state())
    );
    assert!(!dir.path().join(TOUCHED).exists());
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(!text.contains("ran unasked"), "{text}");
    assert!(!dir.path().join(TOUCHED).exists());
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_moves_itself_into_auto_is_moved_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "qwen-starts-in-auto.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "yolo");
    pump_until(&mut app, "the move back", |s| {
        !s.is_busy()
            && s.session
                .agent_modes
                .as_ref()
                .is_some_and(|m| m.current == "default")
    })
    .await;
    let warned = errors(app.state())
        .iter()
        .any(|(m, _)| m.contains("YOLO") && m.contains("moves it back"));
    assert!(warned, "{:?}", errors(app.state()));
    app.shutdown().await;
}

#[test]
fn exec_does_not_let_an_agent_starting_in_auto_run_unasked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let scenario = scenario("qwen-starts-in-auto.toml");
    let (code, out, err, log) = exec_in(
        &cwd,
        &PathBuf::from("/nonexistent/warden.toml"),
        &[
            "--on-ask",
            "deny",
            "-p",
            "create a file with touch",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &scenario,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("ran unasked"), "{out}");
    assert!(out.contains("The command was rejected"), "{out}");
    assert!(!cwd.join(TOUCHED).exists());
    assert_eq!(log.len(), 1, "{err}");
    assert_eq!(log[0].decision, "denied");
}

#[tokio::test]
async fn plan_is_refused_for_an_agent_without_an_asking_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "fast-agent-unknown-mode.toml",
        logged_options(dir.path(), Mode::Plan),
    )
    .await;
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("no mode") || m.contains("none of")),
        "{:?}",
        errors(app.state())
    );
    send(&mut app, "fs-write");
    assert!(!app.state().is_busy(), "the turn is refused");
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("Plan") && m.contains("refused")),
        "{:?}",
        errors(app.state())
    );
    assert_eq!(
        app.state().view.composer.text(),
        "fs-write",
        "the text is kept"
    );
    // In Default the turn runs and asks as usual.
    key(&mut app, Action::Interrupt(std::time::Instant::now()));
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Default);
    send(&mut app, "fs-write");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.shutdown().await;
}

#[tokio::test]
async fn cycling_through_auto_never_allows_waiting_cards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "three-cards.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "three");
    pump_until(&mut app, "three cards", |s| s.gate.approvals.len() == 3).await;
    key(&mut app, Action::Key(Key::ctrl(Code::Char('p'))));
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Auto);
    assert_eq!(
        app.state().gate.approvals.len(),
        3,
        "Auto allowed nothing yet"
    );
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Plan);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        decisions(app.state()).iter().all(|(allowed, _)| !allowed),
        "{:?}",
        decisions(app.state())
    );
    let text = agent_text(app.state());
    assert!(!text.contains("allow-once"), "{text}");
    app.shutdown().await;
}

#[tokio::test]
async fn switching_into_auto_asks_before_approving_waiting_cards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "three-cards.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "three");
    pump_until(&mut app, "three cards", |s| s.gate.approvals.len() == 3).await;
    key(&mut app, Action::Key(Key::ctrl(Code::Char('p'))));
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Auto);
    key(&mut app, Action::ch('n'));
    assert_eq!(app.state().gate.approvals.len(), 3, "n keeps them as cards");
    assert_eq!(app.state().gate.mode, Mode::Auto, "the mode stays Auto");
    // The dropdown into Default and back into Auto asks again; y approves.
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(1));
    assert_eq!(app.state().gate.mode, Mode::Default);
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(2));
    assert_eq!(app.state().gate.approvals.len(), 3);
    key(&mut app, Action::ch('y'));
    assert!(app.state().gate.approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(decisions(app.state()).len(), 3);
    assert!(decisions(app.state()).iter().all(|(allowed, _)| *allowed));
    app.shutdown().await;
}

#[tokio::test]
async fn bypass_asks_to_confirm_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "three-cards.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "three");
    pump_until(&mut app, "three cards", |s| s.gate.approvals.len() == 3).await;
    key(&mut app, Action::ch('b'));
    key(&mut app, Action::ch('n'));
    assert!(!app.state().gate.agent_policy.bypass, "n does not bypass");
    assert_eq!(app.state().gate.approvals.len(), 3);
    key(&mut app, Action::ch('b'));
    key(&mut app, Action::ch('y'));
    assert!(app.state().gate.agent_policy.bypass, "y bypasses");
    assert_eq!(
        app.state().gate.approvals.len(),
        2,
        "the card b was pressed on"
    );
    assert!(matches!(
        app.state().session.connection,
        Connection::Ready { .. }
    ));
    app.shutdown().await;
}

#[test]
fn exec_refuses_plan_for_an_agent_without_an_asking_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = scenario("fast-agent-unknown-mode.toml");
    let (code, out, err, log) = exec_in(
        dir.path(),
        &PathBuf::from("/nonexistent/warden.toml"),
        &[
            "--mode",
            "plan",
            "-p",
            "fs-write",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &scenario,
        ],
    );
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("Plan is refused"), "{err}");
    assert!(out.is_empty(), "no turn ran: {out}");
    assert!(log.is_empty());
}

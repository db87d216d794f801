//! A chat's process under the sandbox as its mode changes: Plan runs on a
//! read-only process of its own, and moving there and back keeps the
//! session (or asks when it cannot).

use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::sandbox::SandboxMode;

use super::sandbox::*;
use crate::common::*;

#[tokio::test]
async fn entering_plan_moves_the_chat_to_a_read_only_process_and_leaving_moves_it_back() {
    use warden::sandbox::Badge;
    use warden::state::Action;
    if !landlock() {
        return;
    }
    let rig = rig();
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(&rig, SandboxMode::WorkspaceWrite)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command(&rig), options)).await;
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write a.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    let session = app.state().session.connection.clone();

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    assert_eq!(app.state().gate.mode, Mode::Plan);
    on_process(&mut app, Badge::ReadOnly).await;
    assert_eq!(
        app.state().session.connection,
        session,
        "the same session, on another process"
    );
    let lines = say(&mut app, "own-write b.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: failed"),
        "{lines:?}"
    );
    assert!(!rig.work.join("b.txt").exists());

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(2));
    assert_eq!(app.state().gate.mode, Mode::Auto);
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write c.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    assert!(rig.work.join("c.txt").exists());
    app.shutdown().await;
}

/// Whether the chat waits on the question of a move it cannot make with
/// its session.
fn asked(state: &warden::state::ChatState) -> bool {
    state.view.stuck_move.is_some()
}

#[tokio::test]
async fn an_agent_that_can_neither_load_nor_resume_asks_fresh_session_or_stay() {
    use warden::sandbox::Badge;
    use warden::state::Action;
    if !landlock() {
        return;
    }
    let rig = rig();
    let scenario = rig.state.join("no-sessions.toml");
    std::fs::write(&scenario, "load_session = false\nresume_session = false\n").unwrap();
    let mut app = auto_with_scenario(&rig, &scenario, SandboxMode::WorkspaceWrite).await;
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write a.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    let first = app.state().session.connection.clone();

    // Entering Plan: the chat cannot take its session along, so it asks.
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    pump_until(&mut app, "the question", asked).await;
    let popup = app.state().composer_popup().expect("the question is drawn");
    assert!(
        popup.title.contains("f fresh session · s stay"),
        "{popup:?}"
    );
    // Typing goes nowhere until it is answered; staying keeps the process.
    key(&mut app, Action::ch('x'));
    assert!(asked(app.state()));
    key(&mut app, Action::ch('s'));
    assert!(!asked(app.state()));
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.contains("stays on its agent process")),
        "{:?}",
        infos(app.state())
    );
    let lines = say(&mut app, "own-write b.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: ok"),
        "staying put, the kernel still lets it write: {lines:?}"
    );
    assert_eq!(
        app.state().session.sandbox.map(Badge::plain),
        Some(Badge::Confined)
    );
    assert_eq!(app.state().session.connection, first, "the same session");

    // Leaving Plan and entering it again asks again; a fresh session moves.
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(1));
    assert_eq!(app.state().gate.mode, Mode::Default);
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    pump_until(&mut app, "the question again", asked).await;
    key(&mut app, Action::ch('f'));
    on_process(&mut app, Badge::ReadOnly).await;
    assert_ne!(
        app.state().session.connection,
        first,
        "a fresh session on the read-only process"
    );
    assert!(
        agent_text(app.state()).contains("own-write: ok"),
        "the transcript stays on screen"
    );
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.contains("does not remember")),
        "{:?}",
        infos(app.state())
    );
    let lines = say(&mut app, "own-write c.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: failed"),
        "{lines:?}"
    );
    assert!(!rig.work.join("c.txt").exists());
    app.shutdown().await;
}

/// Issue 33, item 6: Shift-Tab into Plan and out again moves nothing (no
/// "restarting the agent…"); a message sent in Plan before the mode has
/// settled waits for the read-only process and runs there.
#[tokio::test]
async fn cycling_through_plan_moves_nothing_and_the_first_turn_in_plan_moves() {
    use warden::sandbox::Badge;
    use warden::state::{Action, Msg};
    if !landlock() {
        return;
    }
    let rig = rig();
    let options = ChatOptions {
        mode: Mode::Default,
        sandbox: Some(profile(&rig, SandboxMode::WorkspaceWrite)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command(&rig), options)).await;
    on_process(&mut app, Badge::Confined).await;
    let restarts = |app: &App| {
        infos(app.state())
            .iter()
            .filter(|l| l.contains("restarting the agent"))
            .count()
    };
    // Keys stamped ahead of the runtime's clock: the mode never settles by
    // itself within the test.
    let t0 = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let tab = |app: &mut App, ms: u64| {
        app.handle(Msg::Key {
            action: Action::BackTab,
            at: t0 + std::time::Duration::from_millis(ms),
        });
    };
    tab(&mut app, 0);
    tab(&mut app, 150);
    assert_eq!(app.state().gate.mode, Mode::Plan);
    tab(&mut app, 300);
    assert_eq!(app.state().gate.mode, Mode::Default);
    let lines = say(&mut app, "own-write a.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    assert_eq!(restarts(&app), 0, "{:?}", infos(app.state()));
    assert_eq!(app.state().session.sandbox, Some(Badge::Confined));

    // Into Plan, and a message at once: it goes on the read-only process.
    tab(&mut app, 1_000);
    tab(&mut app, 1_100);
    assert_eq!(app.state().gate.mode, Mode::Plan);
    let lines = say(&mut app, "own-write b.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: failed"),
        "{lines:?}"
    );
    assert!(!rig.work.join("b.txt").exists());
    assert_eq!(app.state().session.sandbox, Some(Badge::ReadOnly));
    assert_eq!(restarts(&app), 1, "{:?}", infos(app.state()));
    app.shutdown().await;
}

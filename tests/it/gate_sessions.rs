//! End to end (issue 22 item 2): an agent running two chats acts through
//! the session of the chat that has no turn running. A write, a terminal,
//! a read or a permission request for a session with no turn in flight is
//! never decided by that session's mode: it is refused, the chat says so,
//! and the decision log has it (assets/scenarios/hostile-other-session.toml).

use std::path::Path;
use warden::state::Code;

use warden::app::App;
use warden::policy::Mode;
use warden::state::{Action, Connection};

use crate::common::*;

/// Chat 1 in Plan playing the hostile scenario; chat 2 on the same agent
/// process, opened, never prompted, in Auto. Chat 1 is on screen.
async fn two_chats(dir: &Path) -> App {
    let scenario = scenario("hostile-other-session.toml");
    let mut app = ready(App::with_options(
        demo_command(dir, &["--scenario", &scenario]),
        logged_options(dir, Mode::Plan),
    ))
    .await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    assert_eq!(app.agent_count(), 1, "one agent process serves both chats");
    assert_eq!(chat(&app, 2).session_id(), Some("session-2"));
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(chat(&app, 2).gate.mode, Mode::Auto);
    key(&mut app, Action::GoToChat(1));
    assert_eq!(chat(&app, 1).gate.mode, Mode::Plan);
    app
}

async fn turn(app: &mut App, prompt: &str) {
    send(app, prompt);
    pump_ws(app, "the turn", |ws| {
        ws.chats.iter().all(|c| !c.state.is_busy())
    })
    .await;
}

async fn log(app: &mut App, dir: &Path) -> Vec<warden::decision_log::DecisionRecord> {
    app.settle_disk().await;
    let path = dir.join("decisions.jsonl");
    if path.exists() {
        warden::decision_log::read(&path).expect("log")
    } else {
        Vec::new()
    }
}

fn refused_in_chat_2(app: &App, what: &str) {
    let errors = errors(chat(app, 2));
    assert!(
        errors
            .iter()
            .any(|(m, _)| m.contains("warden refused") && m.contains("no turn running")),
        "{what}: chat 2 says why: {errors:?}"
    );
}

#[tokio::test]
async fn a_write_through_an_idle_chats_session_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = two_chats(dir.path()).await;
    turn(&mut app, "write").await;
    assert!(
        !dir.path().join("written-through-2.txt").exists(),
        "the write ran under chat 2's Auto"
    );
    let text = agent_text(chat(&app, 1));
    assert!(text.contains("write failed"), "{text}");
    refused_in_chat_2(&app, "write");
    let log = log(&mut app, dir.path()).await;
    let record = log
        .iter()
        .find(|r| r.title.contains("written-through-2.txt"))
        .unwrap_or_else(|| panic!("the refusal is logged: {log:?}"));
    assert_eq!(
        (record.decision.as_str(), record.source.as_str()),
        ("denied", "safety"),
        "{record:?}"
    );
    assert_eq!(record.session, "session-2");
    app.shutdown().await;
}

#[tokio::test]
async fn a_terminal_through_an_idle_chats_session_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = two_chats(dir.path()).await;
    turn(&mut app, "terminal").await;
    assert!(
        !dir.path().join("ran-through-2.txt").exists(),
        "the terminal ran under chat 2's Auto"
    );
    assert!(
        agent_text(chat(&app, 1)).contains("terminal/create failed"),
        "{}",
        agent_text(chat(&app, 1))
    );
    refused_in_chat_2(&app, "terminal");
    let log = log(&mut app, dir.path()).await;
    assert!(
        log.iter().any(|r| r.title.contains("ran-through-2.txt")
            && r.decision == "denied"
            && r.source == "safety"),
        "{log:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_read_or_a_permission_request_through_an_idle_chats_session_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("secret.txt"), "the secret\n").expect("secret");
    let mut app = two_chats(dir.path()).await;
    turn(&mut app, "read").await;
    let text = agent_text(chat(&app, 1));
    assert!(!text.contains("the secret"), "{text}");
    assert!(text.contains("read failed"), "{text}");
    turn(&mut app, "ask").await;
    let text = agent_text(chat(&app, 1));
    assert!(
        text.contains("permission outcome: selected reject-once"),
        "chat 2's Auto answered: {text}"
    );
    assert!(chat(&app, 2).gate.approvals.is_empty(), "no card either");
    refused_in_chat_2(&app, "ask");
    let log = log(&mut app, dir.path()).await;
    for title in ["secret.txt", "asked-through-2.txt"] {
        assert!(
            log.iter()
                .any(|r| r.title.contains(title) && r.decision == "denied" && r.source == "safety"),
            "{title}: {log:?}"
        );
    }
    assert!(log.iter().all(|r| r.decision != "allowed"), "{log:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_call_for_a_closed_chats_session_or_a_made_up_one_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = two_chats(dir.path()).await;
    key(&mut app, Action::GoToChat(2));
    key(&mut app, Action::CloseChat);
    assert_eq!(app.ws.chats.len(), 1, "chat 2 closed");
    turn(&mut app, "closed").await;
    assert!(!dir.path().join("written-through-closed.txt").exists());
    turn(&mut app, "made-up").await;
    let text = agent_text(chat(&app, 1));
    assert!(text.contains("write failed"), "{text}");
    assert!(
        !text.contains("selected allow"),
        "a made-up session's request is never allowed: {text}"
    );
    let errors = errors(chat(&app, 1));
    for session in ["session-2", "session-99"] {
        assert!(
            errors
                .iter()
                .any(|(m, _)| m.contains(session) && m.contains("no chat has open")),
            "{session}: {errors:?}"
        );
    }
    let log = log(&mut app, dir.path()).await;
    for title in ["written-through-closed.txt", "made-up.txt"] {
        assert!(
            log.iter()
                .any(|r| r.title.contains(title) && r.source == "safety"),
            "{title}: {log:?}"
        );
    }
    app.shutdown().await;
}

#[tokio::test]
async fn the_chats_own_turn_still_acts_in_its_own_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = two_chats(dir.path()).await;
    // Chat 2 (Auto) runs its own turn: its own write is its own mode's.
    key(&mut app, Action::GoToChat(2));
    send(&mut app, "own");
    pump_ws(&mut app, "chat 2's turn", |ws| !ws.chats[1].state.is_busy()).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("own.txt")).expect("written"),
        "mine\n"
    );
    app.shutdown().await;
}

/// An elicitation for a session no chat has open: no card anywhere, the
/// agent gets a decline, the chat of the same process says so and the log
/// has it.
#[tokio::test]
async fn an_elicitation_for_a_session_nobody_has_open_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = two_chats(dir.path()).await;
    turn(&mut app, "elicit").await;
    assert!(
        app.ws
            .chats
            .iter()
            .all(|c| c.state.gate.approvals.is_empty()),
        "no card"
    );
    let text = agent_text(chat(&app, 1));
    assert!(text.contains("elicitation answer"), "{text}");
    assert!(!text.contains("accept"), "{text}");
    let log = log(&mut app, dir.path()).await;
    assert!(
        log.iter()
            .any(|r| r.tool_call_id.starts_with("elicitation-") && r.source == "safety"),
        "{log:?}"
    );
    app.shutdown().await;
}

//! Keys end to end (issues 14 and 16): Ctrl-C through the real keymap into
//! a chat with the demo agent; the help overlay; the README's key tables.

use std::time::{Duration, Instant};
use warden::state::Code;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use warden::state::{Action, Msg};
use warden::tui::keymap::{Input, map_key_at};

use crate::common::*;

/// Press a key at `now` through the keymap, as the terminal loop does.
fn press(app: &mut warden::app::App, code: KeyCode, modifiers: KeyModifiers, now: Instant) {
    let empty = app.state().view.composer.is_empty();
    match map_key_at(&KeyEvent::new(code, modifiers), empty, now) {
        Some(Input::Action(action)) => app.handle(Msg::Action(action)),
        other => panic!("{code:?} mapped to {other:?}"),
    }
}

fn ctrl_c(app: &mut warden::app::App, now: Instant) {
    press(app, KeyCode::Char('c'), KeyModifiers::CONTROL, now);
}

#[tokio::test]
async fn ctrl_c_during_a_turn_cancels_it_and_does_not_quit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "slow");
    pump_until(&mut app, "first chunk", |s| !agent_text(s).is_empty()).await;
    let t0 = Instant::now();
    ctrl_c(&mut app, t0);
    assert!(!app.should_quit(), "one Ctrl-C mid-turn does not quit");
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
    assert!(!app.should_quit());
    // The chat goes on.
    send(&mut app, "hi again");
    pump_until(&mut app, "second turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("hi again"));
    app.shutdown().await;
}

#[tokio::test]
async fn on_an_idle_chat_the_second_ctrl_c_within_a_second_quits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let t0 = Instant::now();
    ctrl_c(&mut app, t0);
    assert!(!app.should_quit(), "the first Ctrl-C only warns");
    let notice = app.state().view.notice.clone().unwrap_or_default();
    assert!(notice.contains("Ctrl-C again"), "{notice}");
    // Too late: it warns again.
    let late = t0 + warden::state::QUIT_WINDOW + Duration::from_millis(1);
    ctrl_c(&mut app, late);
    assert!(!app.should_quit());
    ctrl_c(&mut app, late + Duration::from_millis(300));
    assert!(
        app.should_quit(),
        "the second press within the window quits"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn ctrl_c_on_a_card_cancels_the_turn_and_answers_the_card_cancelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    ctrl_c(&mut app, Instant::now());
    assert!(!app.should_quit());
    assert!(
        app.state().gate.approvals.is_empty(),
        "the card is answered"
    );
    pump_until(&mut app, "cancelled turn", |s| !s.is_busy()).await;
    assert!(
        decisions(app.state())
            .iter()
            .any(|(allowed, text)| !allowed && text.contains("turn cancelled")),
        "{:?}",
        decisions(app.state())
    );
    app.shutdown().await;
}

#[tokio::test]
async fn f1_shows_the_keys_and_any_key_closes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let now = Instant::now();
    press(&mut app, KeyCode::F(1), KeyModifiers::NONE, now);
    assert!(app.state().view.help);
    press(&mut app, KeyCode::Char('x'), KeyModifiers::NONE, now);
    assert!(!app.state().view.help);
    assert!(
        app.state().view.composer.is_empty(),
        "the closing key is not typed"
    );
    press(&mut app, KeyCode::Char('?'), KeyModifiers::SHIFT, now);
    assert!(app.state().view.help, "? on an empty message");
    key(&mut app, Action::key(Code::Esc));
    assert!(!app.state().view.help);
    app.shutdown().await;
}

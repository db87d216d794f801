//! End to end: keys that would land on the wrong card (issue 22, item 8)
//! and Enter on a fresh card (item 9), with the demo agent playing
//! `assets/scenarios/hostile-card-races.toml`. Keys carry their instant as
//! the terminal's do; the instants are set from the card's own (never from
//! the wall clock), so the races are exact.

use std::time::{Duration, Instant};
use warden::state::{Code, Key};

use warden::app::App;
use warden::policy::Mode;
use warden::state::{ARM_DELAY, Action, ChatState, Focus, Msg, TYPING_WINDOW};

use crate::common::*;

fn press(app: &mut App, action: Action, at: Instant) {
    app.handle(Msg::Key { action, at });
}

fn outcomes(state: &ChatState) -> Vec<String> {
    agent_text(state)
        .lines()
        .filter(|l| l.starts_with("permission outcome:"))
        .map(str::to_string)
        .collect()
}

/// Since when the selected card is the selected one, by the runtime's clock.
fn seen_since(app: &App) -> Instant {
    app.state()
        .view
        .cursor
        .seen
        .and_then(|s| s.since)
        .expect("the runtime's clock stamped the card")
}

#[tokio::test]
async fn a_y_just_after_the_selected_card_is_withdrawn_does_not_allow_the_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = logged_options(dir.path(), Mode::Default);
    let mut app = started_scenario(dir.path(), "hostile-card-races.toml", options).await;
    send(&mut app, "withdraw");
    pump_until(&mut app, "two cards", |s| s.gate.approvals.len() == 2).await;
    pump_until(&mut app, "the first card withdrawn", |s| {
        s.gate.approvals.len() == 1
    })
    .await;
    assert_eq!(
        app.state().gate.approvals[0].request.tool_call_id,
        "race-sh"
    );
    // A `y` 50 ms after the card slid under the cursor.
    let since = seen_since(&app);
    press(&mut app, Action::ch('y'), since + Duration::from_millis(50));
    assert_eq!(app.state().gate.approvals.len(), 1, "the sh -c still waits");
    assert!(!app.state().card_armed());
    // Once the user could have seen it, `n` answers it.
    press(&mut app, Action::ch('n'), since + ARM_DELAY);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        outcomes(app.state()),
        vec![
            "permission outcome: cancelled",
            "permission outcome: selected reject-once"
        ]
    );
    app.shutdown().await;
}

/// Type `text` into the chat with keys at `from`, 40 ms apart.
fn type_at(app: &mut App, text: &str, from: Instant) {
    for (i, c) in text.chars().enumerate() {
        let action = if c == '\n' {
            Action::key(Code::Enter)
        } else {
            Action::ch(c)
        };
        press(app, action, from + Duration::from_millis(40 * i as u64));
    }
}

#[tokio::test]
async fn a_card_arriving_while_a_follow_up_is_typed_never_takes_its_keys() {
    for follow_up in ["also add tests", "hello\n"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = logged_options(dir.path(), Mode::Default);
        let mut app = started_scenario(dir.path(), "hostile-card-races.toml", options).await;
        // The prompt is typed and sent with keys stamped a little ahead of
        // the runtime's clock: however slow the machine, the card comes
        // within the typing window.
        let t0 = Instant::now() + Duration::from_secs(30);
        type_at(&mut app, "late\n", t0);
        pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
        assert_eq!(
            app.state().view.focus,
            Focus::COMPOSER,
            "the user was typing"
        );
        type_at(&mut app, follow_up, t0 + Duration::from_millis(300));
        let state = app.state();
        assert_eq!(
            state.gate.approvals.len(),
            1,
            "{follow_up:?} answered nothing"
        );
        assert!(state.gate.grants.is_empty(), "{:?}", state.gate.grants);
        assert!(outcomes(state).is_empty());
        if follow_up.ends_with('\n') {
            assert_eq!(state.view.drafts.queue.len(), 1, "hello is queued");
        } else {
            assert_eq!(state.view.composer.text(), follow_up);
        }
        // Ctrl-P reaches the card on purpose.
        let later = t0 + Duration::from_secs(5);
        press(&mut app, Action::Key(Key::ctrl(Code::Char('p'))), later);
        press(
            &mut app,
            Action::ch('n'),
            later + Duration::from_millis(100),
        );
        pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
        assert_eq!(
            outcomes(app.state()),
            vec!["permission outcome: selected reject-once"]
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn enter_on_a_fresh_claude_card_allows_once_and_grants_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = logged_options(dir.path(), Mode::Default);
    let mut app = started_scenario(dir.path(), "hostile-card-races.toml", options).await;
    send(&mut app, "enter");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    let since = seen_since(&app);
    press(&mut app, Action::key(Code::Enter), since + ARM_DELAY);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        outcomes(app.state()),
        vec!["permission outcome: selected allow"]
    );
    assert!(app.state().gate.grants.is_empty());
    app.shutdown().await;
}

/// Issue 33, item 1: the README's first run, `edit` then `y`, with the
/// card coming a moment after Enter (as the demo's and every fast agent's
/// do). It waits while the user could be typing, takes the keys at the
/// runtime's clock after the typing window, ignores a `y` in its first
/// moment (which goes nowhere else either), then takes the `y`.
#[tokio::test]
async fn the_readme_first_run_edit_then_y_allows_the_card() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    let options = logged_options(dir.path(), Mode::Default);
    let mut app = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    // Stamped ahead of the runtime's clock: however slow the machine,
    // the card comes within the typing window.
    let t0 = Instant::now() + Duration::from_secs(30);
    type_at(&mut app, "edit\n", t0);
    let enter = t0 + Duration::from_millis(160);
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    assert_eq!(
        app.state().view.focus,
        Focus::COMPOSER,
        "Enter was just now"
    );
    for (w, h) in [(120, 40), (80, 24)] {
        let shown = screen(app.state(), w, h);
        assert!(
            shown.contains("your message has the keys"),
            "{w}x{h}:\n{shown}"
        );
    }
    // The clock the runtime sends when the typing window ends.
    app.handle(Msg::Tick(enter + TYPING_WINDOW));
    assert_eq!(app.state().view.focus, Focus::CARDS, "nobody is typing");
    let since = seen_since(&app);
    press(
        &mut app,
        Action::ch('y'),
        since + Duration::from_millis(100),
    );
    assert_eq!(app.state().gate.approvals.len(), 1, "too early: ignored");
    assert_eq!(app.state().view.composer.text(), "", "and not typed either");
    app.handle(Msg::Tick(since + ARM_DELAY));
    for (w, h) in [(120, 40), (80, 24)] {
        let shown = screen(app.state(), w, h);
        assert!(shown.contains("y allow"), "{w}x{h}:\n{shown}");
        assert!(!shown.contains("your message has the keys"), "{w}x{h}");
    }
    press(&mut app, Action::ch('y'), since + ARM_DELAY);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        outcomes(app.state()),
        vec!["permission outcome: selected allow-once"]
    );
    assert_eq!(app.state().view.composer.text(), "");
    app.shutdown().await;
}

//! End to end: what the agent says of its usage reaches the footer while
//! it works ("● working 1s · 1.6k tokens") and `/usage` (issue 25).

use warden::state::ChatState;

use crate::common::*;

fn turn_tokens(s: &ChatState) -> Option<String> {
    s.session.controls.turn_tokens_label()
}

#[tokio::test]
async fn working_shows_the_tokens_the_turn_added_so_far() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "usage");
    // The first report is the base; the second is half the turn's tokens.
    pump_until(&mut app, "the second report", |s| {
        s.is_busy() && turn_tokens(s).is_some()
    })
    .await;
    assert_eq!(turn_tokens(app.state()).as_deref(), Some("1.6k tokens"));
    let shown = screen(app.state(), 120, 20);
    let footer = shown.lines().last().unwrap_or_default();
    assert!(
        footer.contains("● working") && footer.contains("1.6k tokens · Esc cancel"),
        "{footer}"
    );
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let footer = screen(app.state(), 120, 20);
    let footer = footer.lines().last().unwrap_or_default().to_string();
    assert!(!footer.contains("tokens ·"), "{footer}");
    assert!(footer.contains("ctx 5%"), "{footer}");

    // The next turn counts from where the last one ended.
    send(&mut app, "usage");
    pump_until(&mut app, "a report of the second turn", |s| {
        s.is_busy() && turn_tokens(s).is_some()
    })
    .await;
    assert_eq!(turn_tokens(app.state()).as_deref(), Some("1.6k tokens"));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
}

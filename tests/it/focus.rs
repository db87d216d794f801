//! The focus as a pane and a modal, end to end with the demo agent: a menu
//! closed over the cards or over the composer gives the keys back where
//! they were (issue 16).

use warden::policy::Mode;
use warden::state::{Action, Focus, Modal, Pane};
use warden::state::{Code, Key};

use crate::common::*;

#[tokio::test]
async fn the_mode_menu_closes_back_to_the_pane_beneath_and_the_card_is_answered_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    assert_eq!(app.state().view.focus, Focus::CARDS);

    // Over the cards: Esc closes the menu, the card has the keys again.
    key(&mut app, Action::OpenModeMenu);
    assert!(matches!(
        app.state().view.focus.modal,
        Some(Modal::ModeMenu(_))
    ));
    key(&mut app, Action::key(Code::Esc));
    assert_eq!(app.state().view.focus, Focus::CARDS);
    assert!(app.state().is_busy(), "Esc closed the menu only");

    // Over the composer with the card waiting: the draft keeps the keys.
    key(&mut app, Action::Key(Key::ctrl(Code::Char('p'))));
    for c in "draft".chars() {
        key(&mut app, Action::ch(c));
    }
    key(&mut app, Action::OpenModeMenu);
    assert_eq!(app.state().view.focus.pane, Pane::Composer);
    key(&mut app, Action::key(Code::Esc));
    assert_eq!(app.state().view.focus, Focus::COMPOSER);
    key(&mut app, Action::ch('1'));
    assert_eq!(app.state().view.composer.text(), "draft1");
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "no key of the draft answered"
    );

    // Back to the card on purpose: it is answered there.
    key(&mut app, Action::Key(Key::ctrl(Code::Char('p'))));
    key(&mut app, Action::ch('1'));
    assert!(app.state().gate.approvals.is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("permission outcome: selected allow-once"),
        "{}",
        agent_text(app.state())
    );
    app.shutdown().await;
}

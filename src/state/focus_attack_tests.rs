//! Attacks on the focus: a card arriving or leaving while a modal is open,
//! a modal replaced by another, a question whose card is gone. No key typed
//! for one thing may answer a card the user did not mean.

use crate::state::Code;
use pretty_assertions::assert_eq;

use super::focus_tests::{answers, busy, card, finished, key, typed};
use super::*;

fn answered(effects: &[Effect], id: RequestId) -> bool {
    answers(effects).iter().any(|(i, _)| *i == id)
}

#[test]
fn approve_all_never_answers_a_card_that_came_after_the_question() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('A'));
    assert!(matches!(s.view.focus.modal, Some(Modal::ConfirmAll(_))));
    finished(&mut s, "a");
    card(&mut s, 3, "c");
    let effects = key(&mut s, Action::ch('y'));
    assert!(!answered(&effects, 3), "{effects:?}");
    assert!(
        s.gate.approvals.iter().any(|a| a.id == 3),
        "card 3 still waits"
    );
}

#[test]
fn a_reason_whose_card_left_allows_nothing() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('r'));
    assert!(matches!(
        s.view.focus.modal,
        Some(Modal::Reason { card: 1, .. })
    ));
    finished(&mut s, "a");
    let mut effects = typed(&mut s, "yay");
    effects.extend(key(&mut s, Action::key(Code::Enter)));
    assert!(
        answers(&effects)
            .iter()
            .all(|(_, option)| option != "allow-once"),
        "{effects:?}"
    );
    assert!(!answered(&effects, 2), "card 2 was not the one denied");
}

#[test]
fn a_bypass_question_whose_card_left_answers_no_other_card_on_no() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('b'));
    assert!(matches!(s.view.focus.modal, Some(Modal::Confirm(_))));
    finished(&mut s, "a");
    let effects = key(&mut s, Action::ch('n'));
    assert!(answers(&effects).is_empty(), "{effects:?}");
    assert!(!s.gate.agent_policy.bypass);
    // The next key is for the cards again, as the user now sees them.
    assert!(s.gate.approvals.iter().any(|a| a.id == 2));
}

#[test]
fn the_last_card_leaving_under_a_question_sends_the_keys_to_the_composer() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::ch('A'));
    finished(&mut s, "a");
    assert_eq!(s.view.focus, Focus::COMPOSER);
    card(&mut s, 2, "b");
    // No stale modal is left for a key meant for the gone question: card 2
    // is answered only as the card it is, in plain sight.
    assert!(s.view.focus.modal.is_none());
}

#[test]
fn the_mode_menu_replacing_a_half_typed_reason_sends_nothing() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::ch('r'));
    typed(&mut s, "not th");
    let effects = key(&mut s, Action::OpenModeMenu);
    assert!(answers(&effects).is_empty(), "{effects:?}");
    let effects = key(&mut s, Action::key(Code::Esc));
    assert!(answers(&effects).is_empty(), "{effects:?}");
    assert!(s.is_busy());
    assert_eq!(s.gate.approvals.len(), 1, "the card still waits");
}

#[test]
fn letters_in_the_mode_menu_answer_no_card_that_arrives_meanwhile() {
    let mut s = busy();
    key(&mut s, Action::OpenModeMenu);
    card(&mut s, 1, "a");
    let effects = typed(&mut s, "yaA");
    assert!(answers(&effects).is_empty(), "{effects:?}");
    assert_eq!(s.gate.approvals.len(), 1);
}

#[test]
fn a_card_arriving_while_the_user_types_a_reason_for_another_is_not_answered() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::ch('r'));
    card(&mut s, 2, "b");
    let effects = typed(&mut s, "yyyy");
    assert!(answers(&effects).is_empty(), "{effects:?}");
    let effects = key(&mut s, Action::key(Code::Enter));
    // The reason cancels the turn: card 2 may be cancelled, never allowed.
    assert!(
        !answers(&effects).contains(&(2, "allow-once".to_string())),
        "{effects:?}"
    );
}

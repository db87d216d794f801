//! What the screen shows of the focus as a pane and a modal (issue 16).

use crate::state::Code;
use pretty_assertions::assert_eq;

use super::card::REASON_PROMPT;
use super::gate_tests::{asking, edit_request, execute_request, screen};
use crate::model::{SessionUpdate, ToolCallFields, WireStatus};
use crate::state::{Action, Focus, Modal, Msg};

#[test]
fn a_reason_whose_card_was_withdrawn_says_so_under_the_card_now_shown() {
    let mut state = asking(vec![edit_request(), execute_request()]);
    state.update(Msg::Action(Action::ch('r')));
    let text = screen(&state, 100, 36);
    assert!(text.contains(REASON_PROMPT.trim_end()), "{text}");
    state.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: "call-edit".into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        }),
    }));
    assert!(matches!(
        state.view.focus.modal,
        Some(Modal::Reason { card: 1, .. })
    ));
    let text = screen(&state, 100, 36);
    assert!(!text.contains(REASON_PROMPT.trim_end()), "{text}");
    assert!(
        text.contains("was withdrawn: nothing will be denied"),
        "{text}"
    );
}

#[test]
fn closing_the_mode_menu_over_the_cards_highlights_the_choice_again() {
    let mut state = asking(vec![edit_request()]);
    let before = screen(&state, 100, 36);
    state.update(Msg::Action(Action::OpenModeMenu));
    state.update(Msg::Action(Action::key(Code::Esc)));
    assert_eq!(state.view.focus, Focus::CARDS);
    assert_eq!(screen(&state, 100, 36), before);
}

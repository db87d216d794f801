//! The focus as a pane and a modal (issue 16): closing a modal gives the
//! keys back to the pane beneath, exactly where the user was; the pane
//! changes only for a reason of its own; no key meant for a modal, or for
//! a card that is gone, answers another card.

use crate::state::{Code, Key};
use pretty_assertions::assert_eq;

use super::*;
use crate::model::ToolCallFields;

pub(super) fn request(tool: &str) -> PermissionRequest {
    crate::test_support::edit_request("s", tool, &format!("Do {tool}"))
}

/// A ready chat with a turn running (cards only come during a turn).
pub(super) fn busy() -> ChatState {
    let mut s = crate::test_support::ready_chat("/w");
    key(&mut s, Action::Paste("go".into()));
    key(&mut s, Action::key(Code::Enter));
    assert!(s.is_busy());
    s
}

pub(super) fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

pub(super) fn typed(s: &mut ChatState, text: &str) -> Vec<Effect> {
    text.chars().flat_map(|c| key(s, Action::ch(c))).collect()
}

/// Card `id` asks about the tool call `tool`.
pub(super) fn card(s: &mut ChatState, id: RequestId, tool: &str) -> Vec<Effect> {
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(request(tool)),
    })
}

/// The agent says the tool call finished: its card is withdrawn.
pub(super) fn finished(s: &mut ChatState, tool: &str) -> Vec<Effect> {
    s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: tool.into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        }),
    }))
}

/// The permission answers among the effects, as (id, option picked).
pub(super) fn answers(effects: &[Effect]) -> Vec<(RequestId, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RespondPermission { id, outcome } => Some((
                *id,
                match outcome {
                    PermissionOutcome::Selected(option) => option.clone(),
                    PermissionOutcome::Cancelled => "cancelled".into(),
                },
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn the_mode_menu_opened_on_the_cards_closes_back_to_the_cards() {
    let mut s = busy();
    card(&mut s, 1, "a");
    assert_eq!(s.view.focus, Focus::CARDS);
    key(&mut s, Action::OpenModeMenu);
    assert_eq!(s.view.focus.pane, Pane::Cards);
    assert!(matches!(s.view.focus.modal, Some(Modal::ModeMenu(_))));
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus, Focus::CARDS);
    assert!(
        s.is_busy(),
        "Esc closed the menu, it did not cancel the turn"
    );
    assert_eq!(
        answers(&key(&mut s, Action::ch('y'))),
        vec![(1, "allow-once".to_string())]
    );
}

#[test]
fn the_mode_menu_opened_in_the_composer_closes_back_to_the_draft_though_cards_wait() {
    let mut s = busy();
    typed(&mut s, "half a sentence");
    card(&mut s, 1, "a");
    assert_eq!(s.view.focus, Focus::COMPOSER, "typing: the card waits");
    key(&mut s, Action::OpenModeMenu);
    assert_eq!(s.view.focus.pane, Pane::Composer);
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus, Focus::COMPOSER);
    assert!(typed(&mut s, " y").is_empty(), "no card answered");
    assert_eq!(s.view.composer.text(), "half a sentence y");
    assert_eq!(s.gate.approvals.len(), 1);
}

#[test]
fn picking_a_mode_also_returns_to_the_pane_beneath() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::Key(Key::ctrl(Code::Char('p'))));
    assert_eq!(s.view.focus, Focus::COMPOSER, "Ctrl-P: back to typing");
    key(&mut s, Action::OpenModeMenu);
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(s.view.focus, Focus::COMPOSER);
    assert!(typed(&mut s, "y").is_empty());
    assert_eq!(s.view.composer.text(), "y");
}

#[test]
fn the_rules_screen_closes_back_to_the_pane_it_was_opened_over() {
    for pane in [Pane::Composer, Pane::Cards] {
        let mut s = busy();
        card(&mut s, 1, "a");
        if pane == Pane::Composer {
            key(&mut s, Action::Key(Key::ctrl(Code::Char('p'))));
        }
        key(&mut s, Action::Key(Key::ctrl(Code::Char('g'))));
        assert_eq!(s.view.focus.pane, pane);
        assert!(matches!(s.view.focus.modal, Some(Modal::Rules { .. })));
        key(&mut s, Action::key(Code::Esc));
        assert_eq!(s.view.focus, Focus { pane, modal: None });
    }
}

#[test]
fn a_card_arriving_under_a_modal_takes_no_key_typed_into_it() {
    // The mode menu and the rules screen over an empty composer: a card
    // arriving would take the bare composer's keys, never the modal's, and
    // the modal's close (any other key for the menu, Esc for the screen)
    // goes back to the composer.
    let cases = [
        (
            Action::OpenModeMenu,
            vec![Action::key(Code::Down), Action::ch('y')],
        ),
        (
            Action::Key(Key::ctrl(Code::Char('g'))),
            vec![
                Action::ch('y'),
                Action::ch('a'),
                Action::ch('y'),
                Action::key(Code::Esc),
            ],
        ),
    ];
    for (open, keys) in cases {
        let mut s = busy();
        key(&mut s, open.clone());
        card(&mut s, 1, "a");
        assert!(
            s.view.focus.modal.is_some(),
            "{open:?}: the modal keeps the keys"
        );
        let effects: Vec<Effect> = keys.into_iter().flat_map(|a| key(&mut s, a)).collect();
        assert_eq!(answers(&effects), vec![], "{open:?}");
        assert_eq!(
            s.view.focus,
            Focus::COMPOSER,
            "{open:?}: the keys go back where the user was"
        );
        assert_eq!(answers(&typed(&mut s, "y")), vec![], "{open:?}");
        assert_eq!(s.view.composer.text(), "y", "{open:?}");
        assert_eq!(s.gate.approvals.len(), 1, "{open:?}");
    }
}

#[test]
fn a_card_arriving_while_a_reason_is_typed_takes_none_of_its_letters() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::ch('r'));
    card(&mut s, 2, "b");
    let effects = typed(&mut s, "yay no");
    assert_eq!(answers(&effects), vec![]);
    let Some(Modal::Reason { card, field }) = &s.view.focus.modal else {
        panic!("{:?}", s.view.focus)
    };
    assert_eq!((*card, field.text()), (1, "yay no"));
    assert_eq!(s.gate.approvals.len(), 2);
}

#[test]
fn a_reason_denies_the_card_it_was_typed_for_when_the_queue_moved() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    card(&mut s, 3, "c");
    key(&mut s, Action::ch('j'));
    assert_eq!(s.gate.approvals[s.view.cursor.selected].id, 2);
    key(&mut s, Action::ch('r'));
    // The agent withdraws card 1 while the reason is typed: card 3 now
    // sits where card 2 was.
    finished(&mut s, "a");
    typed(&mut s, "not that file");
    // The denial denies the turn: card 3 gets its reject option too.
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(
        answers(&effects),
        vec![
            (2, "reject-once".to_string()),
            (3, "reject-once".to_string())
        ]
    );
}

#[test]
fn a_reason_for_a_withdrawn_card_keeps_its_letters_and_denies_nothing() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('r'));
    finished(&mut s, "a");
    // Still typing the reason: none of its letters answers card 2.
    assert_eq!(answers(&typed(&mut s, "yes, ay")), vec![]);
    assert_eq!(answers(&key(&mut s, Action::key(Code::Enter))), vec![]);
    assert_eq!(
        s.view.notice.as_deref(),
        Some("that card was withdrawn meanwhile: nothing denied")
    );
    assert_eq!(s.view.focus, Focus::CARDS);
    assert_eq!(s.gate.approvals.len(), 1);
    assert!(
        s.session.queued_prompt.is_none(),
        "no reason sent for a card not denied"
    );
}

#[test]
fn the_cursor_stays_on_its_card_when_an_earlier_one_is_withdrawn() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    card(&mut s, 3, "c");
    key(&mut s, Action::ch('j'));
    finished(&mut s, "a");
    assert_eq!(s.gate.approvals[s.view.cursor.selected].id, 2);
    assert_eq!(
        answers(&key(&mut s, Action::ch('y'))),
        vec![(2, "allow-once".to_string())]
    );
}

#[test]
fn a_modal_closed_over_an_emptied_cards_pane_gives_the_keys_to_the_composer() {
    for open in [
        Action::OpenModeMenu,
        Action::Key(Key::ctrl(Code::Char('g'))),
    ] {
        let mut s = busy();
        card(&mut s, 1, "a");
        assert_eq!(s.view.focus, Focus::CARDS);
        key(&mut s, open.clone());
        finished(&mut s, "a");
        assert_eq!(
            s.view.focus.pane,
            Pane::Composer,
            "{open:?}: no card to review"
        );
        key(&mut s, Action::key(Code::Esc));
        assert_eq!(s.view.focus, Focus::COMPOSER, "{open:?}");
        typed(&mut s, "ok");
        assert_eq!(s.view.composer.text(), "ok", "{open:?}");
    }
}

#[test]
fn a_question_about_cards_that_all_went_closes_with_them() {
    let mut s = busy();
    card(&mut s, 1, "a");
    key(&mut s, Action::ch('A'));
    assert_eq!(s.view.focus.modal, Some(Modal::ConfirmAll(vec![1])));
    finished(&mut s, "a");
    assert_eq!(s.view.focus, Focus::COMPOSER);
    card(&mut s, 2, "b");
    assert_eq!(
        s.view.focus,
        Focus::CARDS,
        "a new card, nothing typed: it takes the keys"
    );
    assert_eq!(s.view.focus.modal, None, "no stale 'approve all?' over it");
}

#[test]
fn approve_all_confirmed_late_approves_only_the_cards_it_asked_about() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('A'));
    assert_eq!(s.view.focus.modal, Some(Modal::ConfirmAll(vec![1, 2])));
    finished(&mut s, "a");
    card(&mut s, 3, "c");
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(answers(&effects), vec![(2, "allow-once".to_string())]);
    assert_eq!(s.view.focus, Focus::CARDS);
    assert_eq!(
        s.gate.approvals.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![3]
    );
}

#[test]
fn the_key_context_is_the_modal_if_any_else_the_pane() {
    use crate::keys::Context;
    let mut s = busy();
    assert_eq!(s.view.focus.context(), Context::Composer);
    card(&mut s, 1, "a");
    assert_eq!(s.view.focus.context(), Context::Cards);
    key(&mut s, Action::OpenModeMenu);
    assert_eq!(s.view.focus.context(), Context::ModeMenu);
    key(&mut s, Action::key(Code::Esc));
    key(&mut s, Action::ch('r'));
    assert_eq!(s.view.focus.context(), Context::Reason);
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus.context(), Context::Cards);
}

#[test]
fn letters_typed_into_a_form_whose_card_was_withdrawn_never_answer_another_card() {
    let mut s = busy();
    let mut form = request("elicitation-form-1");
    form.fields.raw_input = Some(serde_json::json!({
        "mode": "form",
        "message": "token?",
        "requestedSchema": {
            "type": "object",
            "properties": {"token": {"type": "string"}},
            "required": ["token"],
        },
    }));
    form.options[0].id = "accept".into();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(form),
    });
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('y'));
    assert!(
        matches!(s.view.focus.modal, Some(Modal::Form(_))),
        "{:?}",
        s.view.focus
    );
    typed(&mut s, "ab");
    finished(&mut s, "elicitation-form-1");
    assert_eq!(
        s.view.focus,
        Focus::COMPOSER,
        "the form closed with its card"
    );
    assert_eq!(answers(&typed(&mut s, "c yay")), vec![]);
    assert_eq!(s.view.composer.text(), "c yay");
    assert_eq!(
        s.gate.approvals.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![2]
    );
}

#[test]
fn the_highlighted_choice_stays_when_an_earlier_card_is_withdrawn() {
    let mut s = busy();
    card(&mut s, 1, "a");
    card(&mut s, 2, "b");
    key(&mut s, Action::ch('j'));
    key(&mut s, Action::key(Code::Down));
    assert_eq!(s.view.cursor.choice, 1, "reject-once highlighted");
    finished(&mut s, "a");
    assert_eq!(
        answers(&key(&mut s, Action::key(Code::Enter))),
        vec![(2, "reject-once".to_string())],
        "Enter picks what was highlighted, never the allow above it"
    );
}

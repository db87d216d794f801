//! Ctrl-C, the help overlay and the key tables in the state (issue 14:
//! help, Ctrl-C; issue 16: one table of keys).

use crate::state::{Code, Key};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::*;
use crate::keys::{self, CardCmd, Context};

fn request(tool: &str) -> PermissionRequest {
    crate::test_support::edit_request("s", tool, &format!("Do {tool}"))
}

/// A ready chat, idle.
fn idle() -> ChatState {
    crate::test_support::ready_chat("/w")
}

/// A ready chat with a turn running.
fn busy() -> ChatState {
    let mut s = idle();
    key(&mut s, Action::Paste("go".into()));
    key(&mut s, Action::key(Code::Enter));
    assert!(s.is_busy());
    s
}

fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

fn ctrl_c(s: &mut ChatState, at: Instant) -> Vec<Effect> {
    key(s, Action::Interrupt(at))
}

#[test]
fn ctrl_c_cancels_a_running_turn_and_does_not_quit() {
    let mut s = busy();
    let t0 = Instant::now();
    assert_eq!(ctrl_c(&mut s, t0), vec![Effect::CancelTurn]);
    assert!(!s.view.quitting);
    assert!(s.session.turn.as_ref().is_some_and(|t| t.cancelling));
    // Pressed again at once while the agent ends the turn: it only arms.
    assert_eq!(ctrl_c(&mut s, t0 + Duration::from_millis(100)), vec![]);
    assert!(!s.view.quitting);
    assert_eq!(s.view.notice.as_deref(), Some(interrupt::QUIT_NOTICE));
}

#[test]
fn ctrl_c_on_a_card_during_a_turn_cancels_the_turn_and_answers_the_card() {
    let mut s = busy();
    s.update(Msg::PermissionRequested {
        id: 7,
        request: Box::new(request("t1")),
    });
    assert_eq!(s.view.focus, Focus::CARDS);
    let effects = ctrl_c(&mut s, Instant::now());
    assert_eq!(effects.first(), Some(&Effect::CancelTurn));
    assert!(effects.contains(&Effect::RespondPermission {
        id: 7,
        outcome: PermissionOutcome::Cancelled
    }));
    assert!(!effects.contains(&Effect::Quit));
    assert!(s.gate.approvals.is_empty());
}

#[test]
fn ctrl_c_clears_a_typed_message_first() {
    let mut s = idle();
    key(&mut s, Action::Paste("half typed".into()));
    assert_eq!(ctrl_c(&mut s, Instant::now()), vec![]);
    assert!(s.view.composer.is_empty());
    assert!(!s.view.quitting);
    assert_eq!(s.view.notice, None);
}

#[test]
fn two_ctrl_c_within_the_window_quit_an_idle_chat() {
    let mut s = idle();
    let t0 = Instant::now();
    assert_eq!(ctrl_c(&mut s, t0), vec![]);
    assert!(!s.view.quitting, "one Ctrl-C does not quit");
    assert_eq!(s.view.notice.as_deref(), Some(interrupt::QUIT_NOTICE));
    let effects = ctrl_c(&mut s, t0 + QUIT_WINDOW);
    assert_eq!(effects, vec![Effect::Quit]);
    assert!(s.view.quitting);
}

#[test]
fn a_second_ctrl_c_too_late_or_after_another_key_only_arms_again() {
    let mut s = idle();
    let t0 = Instant::now();
    ctrl_c(&mut s, t0);
    let late = t0 + QUIT_WINDOW + Duration::from_millis(1);
    assert_eq!(ctrl_c(&mut s, late), vec![]);
    assert!(!s.view.quitting);
    assert_eq!(s.view.quit_armed, Some(late), "the late press arms anew");
    key(&mut s, Action::ToggleThoughts);
    assert_eq!(s.view.quit_armed, None, "another key disarms");
    assert_eq!(ctrl_c(&mut s, late + Duration::from_millis(10)), vec![]);
    assert!(!s.view.quitting);
}

#[test]
fn ctrl_c_in_a_field_backs_out_as_esc() {
    let mut s = busy();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request("t1")),
    });
    key(&mut s, Action::ch('r'));
    assert!(matches!(s.view.focus.modal, Some(Modal::Reason { .. })));
    assert_eq!(ctrl_c(&mut s, Instant::now()), vec![]);
    assert_eq!(
        s.view.focus,
        Focus::CARDS,
        "back to the choices, the turn runs on"
    );
    assert!(s.session.turn.as_ref().is_some_and(|t| !t.cancelling));
}

#[test]
fn f1_and_question_mark_on_an_empty_message_open_the_help_and_any_key_closes_it() {
    let mut s = idle();
    key(&mut s, Action::key(Code::F(1)));
    assert!(s.view.help);
    assert_eq!(key(&mut s, Action::ch('y')), vec![]);
    assert!(!s.view.help, "a key closes the help");
    assert!(s.view.composer.is_empty(), "and does nothing else");
    key(&mut s, Action::ch('?'));
    assert!(s.view.help, "? on an empty message");
    key(&mut s, Action::key(Code::Esc));
    assert!(!s.view.help);
    key(&mut s, Action::ch('a'));
    key(&mut s, Action::ch('?'));
    assert!(!s.view.help, "? in a message is typed");
    assert_eq!(s.view.composer.text(), "a?");
}

#[test]
fn question_mark_on_a_card_shows_the_card_keys() {
    let mut s = busy();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request("t1")),
    });
    key(&mut s, Action::ch('?'));
    assert!(s.view.help);
    assert_eq!(s.view.focus.context(), Context::Cards);
    assert_eq!(s.gate.approvals.len(), 1, "the card is not answered");
    // Ctrl-D still quits through the help.
    let effects = key(&mut s, Action::Quit);
    assert!(effects.contains(&Effect::Quit));
}

#[test]
fn every_card_key_of_the_table_does_what_the_table_says() {
    // Each letter the card's choices and its moving keys bind reaches its
    // command through the state: the card's hint line cannot promise a key
    // the state ignores.
    enum Does {
        Choice(crate::state::Choice),
        Move(CardCmd),
    }
    let choices = crate::state::CHOICES
        .iter()
        .map(|d| (d.binding.keys, Does::Choice(d.binding.cmd)));
    let moves = keys::CARDS.iter().map(|b| (b.keys, Does::Move(b.cmd)));
    for (bound, does) in choices.chain(moves) {
        for k in bound {
            let keys::Code::Char(c) = k.code else {
                continue;
            };
            if k.ctrl || k.alt {
                continue;
            }
            let mut s = busy();
            // An edit of a file: `p` has a rule to propose.
            let mut first = request("t1");
            first.fields.locations = Some(vec![crate::model::Location {
                path: "/w/src/a.rs".into(),
                line: None,
            }]);
            s.update(Msg::PermissionRequested {
                id: 1,
                request: Box::new(first),
            });
            s.update(Msg::PermissionRequested {
                id: 2,
                request: Box::new(request("t2")),
            });
            let before = s.clone();
            let effects = key(&mut s, Action::ch(c));
            let answered = effects
                .iter()
                .any(|e| matches!(e, Effect::RespondPermission { .. }));
            let changed = s != before || !effects.is_empty();
            assert!(changed, "{c} did nothing");
            use crate::state::Choice as C;
            match does {
                Does::Choice(C::Allow | C::Deny | C::AllowForChat) => {
                    assert!(answered, "{c} answers the card")
                }
                Does::Move(CardCmd::Next | CardCmd::Prev) => {
                    assert_eq!(s.view.cursor.selected, 1)
                }
                Does::Move(CardCmd::Expand) => assert!(s.view.cursor.expanded),
                Does::Move(CardCmd::Help) => assert!(s.view.help),
                Does::Choice(C::KeepRule) => {
                    assert!(matches!(s.view.focus.modal, Some(Modal::KeepRule(_))))
                }
                Does::Choice(C::DenyWithReason) => {
                    assert!(matches!(s.view.focus.modal, Some(Modal::Reason { .. })))
                }
                Does::Choice(C::ApproveAll) => {
                    assert!(matches!(s.view.focus.modal, Some(Modal::ConfirmAll(_))))
                }
                Does::Choice(C::Bypass) => {
                    assert!(matches!(s.view.focus.modal, Some(Modal::Confirm(_))))
                }
                Does::Choice(other) => panic!("{c} picks {other:?}, not checked here"),
                Does::Move(other) => panic!("{c} bound to {other:?}, not checked here"),
            }
        }
    }
}

#[test]
fn unbound_letters_on_a_card_say_which_keys_answer() {
    let mut s = busy();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request("t1")),
    });
    key(&mut s, Action::ch('z'));
    assert_eq!(
        s.view.notice.as_deref(),
        Some(
            "a card is waiting: typing went to the message · Ctrl-P answers it (y allow · n deny)"
        )
    );
    assert_eq!(s.view.composer.text(), "z", "the letter is not lost");
    assert_eq!(s.gate.approvals.len(), 1);
}

/// Two idle chats in a workspace, the list open on chat 2.
fn listing() -> Workspace {
    let mut ws = Workspace::new(vec!["demo".into()]);
    ws.add_chat(idle());
    ws.add_chat(idle());
    ws.update(WsMsg::Action(Action::Key(Key::ctrl(Code::Char('l')))));
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 });
    ws
}

#[test]
fn the_chat_list_keys_come_from_its_table() {
    let mut ws = listing();
    ws.update(WsMsg::Action(Action::key(Code::Up)));
    assert_eq!(ws.focus, ChatFocus::List { selected: 0 });
    ws.update(WsMsg::Action(Action::ch('s')));
    assert!(!ws.sidebar, "s hides the sidebar");
    ws.update(WsMsg::Action(Action::ch('r')));
    assert!(matches!(ws.focus, ChatFocus::Rename { .. }));
    ws.update(WsMsg::Action(Action::key(Code::Esc)));
    ws.update(WsMsg::Action(Action::key(Code::Enter)));
    assert_eq!(ws.active, 0, "Enter goes to the highlighted chat");
    assert_eq!(ws.focus, ChatFocus::Chat);
    let mut ws = listing();
    ws.update(WsMsg::Action(Action::ch('2')));
    assert_eq!(ws.active, 1, "a digit goes to that chat");
    let mut ws = listing();
    ws.update(WsMsg::Action(Action::ch('x')));
    assert_eq!(ws.chats.len(), 1, "x closes the highlighted idle chat");
}

#[test]
fn question_mark_in_the_chat_list_shows_its_keys_and_any_key_closes_them() {
    let mut ws = listing();
    ws.update(WsMsg::Action(Action::ch('?')));
    assert!(ws.help);
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 }, "the list stays");
    let effects = ws.update(WsMsg::Action(Action::ch('x')));
    assert!(effects.is_empty());
    assert!(!ws.help);
    assert_eq!(ws.chats.len(), 2, "the closing key closes nothing else");
    ws.update(WsMsg::Action(Action::key(Code::F(1))));
    assert!(ws.help, "F1 too");
}

#[test]
fn keep_as_rule_on_a_card_with_no_path_or_command_proposes_nothing_and_says_why() {
    // An edit that names no file: a rule of its kind and tool alone would
    // cover every edit (issue 22 item 10), so none is proposed.
    let mut s = busy();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request("t1")),
    });
    let effects = key(&mut s, Action::ch('p'));
    assert!(effects.is_empty());
    assert_eq!(s.view.focus.modal, None);
    assert_eq!(s.gate.rule_draft, None);
    let notice = s.view.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("no rule to keep: it names no path"),
        "{notice}"
    );
    assert_eq!(s.gate.approvals.len(), 1, "the card waits");
}

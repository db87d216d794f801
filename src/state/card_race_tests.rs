//! Keys that would land on the wrong card (issue 22, item 8), and the
//! default choice (item 9): the instants come in the messages, as the
//! terminal and the runtime's clock send them.

use crate::state::{Code, Key};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::tests::{answers, ask, chat, key, option, request, selected};
use super::*;
use crate::model::{OptionKind, ToolCallFields, ToolKind};

fn at(s: &mut ChatState, action: Action, t: Instant) -> Vec<Effect> {
    s.update(Msg::Key { action, at: t })
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn completed(tool: &str) -> Msg {
    Msg::Update(SessionUpdate::ToolCallUpdate {
        id: tool.into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        }),
    })
}

fn card_ids(s: &ChatState) -> Vec<RequestId> {
    s.gate.approvals.iter().map(|a| a.id).collect()
}

/// The agent withdraws the selected card; a `y` 50 ms later must not
/// allow the card that slid under the cursor (a `sh -c`).
#[test]
fn a_key_just_after_the_selected_card_is_withdrawn_answers_nothing() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    ask(&mut s, 2, "t2", ToolKind::Execute);
    s.update(Msg::Tick(t0));
    assert_eq!(s.view.focus, Focus::CARDS);
    // The user has been reading card 1 for a while.
    let t1 = t0 + ms(5_000);
    let effects = s.update(completed("t1"));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    // The runtime's clock right after the withdrawal (the pump sends it).
    s.update(Msg::Tick(t1));
    let effects = at(&mut s, Action::ch('y'), t1 + ms(50));
    assert_eq!(answers(&effects), vec![], "the y was meant for card 1");
    assert_eq!(card_ids(&s), vec![2]);
    assert_eq!(
        s.view.notice.as_deref(),
        Some(crate::gate::card_keys::NOT_ARMED)
    );
    assert!(!s.card_armed(), "the card says it is not taking keys yet");
    // Once the user could have seen it, it is answered as usual.
    let effects = at(&mut s, Action::ch('y'), t1 + ARM_DELAY);
    assert_eq!(answers(&effects), vec![(2, selected("allow-once"))]);
}

/// Without the runtime's clock in between, the first key after the change
/// is itself the first sight of the new card: ignored.
#[test]
fn the_first_key_after_a_withdrawal_is_ignored_even_without_a_clock() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    ask(&mut s, 2, "t2", ToolKind::Execute);
    s.update(Msg::Tick(t0));
    s.update(completed("t1"));
    let effects = at(&mut s, Action::ch('y'), t0 + ms(9_000));
    assert_eq!(answers(&effects), vec![]);
    let effects = at(&mut s, Action::key(Code::Enter), t0 + ms(9_050));
    assert_eq!(answers(&effects), vec![], "nor Enter");
    let effects = at(&mut s, Action::ClickChoice(0), t0 + ms(9_100));
    assert_eq!(answers(&effects), vec![], "nor a click");
    let effects = at(&mut s, Action::ch('A'), t0 + ms(9_150));
    assert_eq!(answers(&effects), vec![]);
    assert_eq!(s.view.focus, Focus::CARDS, "no approve-all question opened");
    assert_eq!(card_ids(&s), vec![2]);
}

/// Answering a card moves the cursor to the next one: a double press
/// does not answer that one unseen.
#[test]
fn a_double_press_answers_one_card() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    ask(&mut s, 2, "t2", ToolKind::Execute);
    s.update(Msg::Tick(t0));
    let effects = at(&mut s, Action::ch('y'), t0 + ms(2_000));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    s.update(Msg::Tick(t0 + ms(2_001)));
    let effects = at(&mut s, Action::ch('y'), t0 + ms(2_080));
    assert_eq!(answers(&effects), vec![]);
    assert_eq!(card_ids(&s), vec![2]);
}

/// Tab to a card is the user's own move: that card answers at once.
#[test]
fn a_card_the_user_moved_to_takes_keys_at_once() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    ask(&mut s, 2, "t2", ToolKind::Execute);
    s.update(Msg::Tick(t0));
    at(&mut s, Action::key(Code::Tab), t0 + ms(3_000));
    let effects = at(&mut s, Action::ch('n'), t0 + ms(3_050));
    assert_eq!(answers(&effects), vec![(2, selected("reject-once"))]);
}

/// A ready chat where the user typed and sent "do it" at `t0` (keys with
/// their instants, as the terminal sends them).
fn typed_chat(t0: Instant) -> ChatState {
    let mut s = ChatState::new("demo", "/w");
    s.gate.agent_policy.name = "demo".into();
    s.session.cwd_path = "/w".into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    for (i, c) in "do it".chars().enumerate() {
        at(&mut s, Action::ch(c), t0 - ms(500) + ms(10 * i as u64));
    }
    let effects = at(&mut s, Action::key(Code::Enter), t0);
    assert!(matches!(effects.as_slice(), [Effect::SendPrompt(_)]));
    s
}

fn type_text(s: &mut ChatState, text: &str, from: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (i, c) in text.chars().enumerate() {
        let action = if c == '\n' {
            Action::key(Code::Enter)
        } else {
            Action::ch(c)
        };
        effects.extend(at(s, action, from + ms(40 * i as u64)));
    }
    effects
}

/// A card arriving 100 ms after a prompt does not take the keys of the
/// follow-up being typed: "also add tests" is not an `a` grant, and
/// "hello⏎" is not an allow.
#[test]
fn a_card_just_after_a_prompt_never_takes_the_follow_up_being_typed() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t0 + ms(100)));
    assert_eq!(s.view.focus, Focus::COMPOSER, "the user was typing");
    let effects = type_text(&mut s, "also add tests", t0 + ms(150));
    assert_eq!(answers(&effects), vec![]);
    assert!(s.gate.grants.is_empty(), "{:?}", s.gate.grants);
    assert_eq!(s.view.composer.text(), "also add tests");
    assert_eq!(card_ids(&s), vec![1]);

    let t1 = t0 + ms(60_000);
    let mut s = typed_chat(t1);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t1 + ms(100)));
    let effects = type_text(&mut s, "hello\n", t1 + ms(120));
    assert_eq!(answers(&effects), vec![]);
    assert_eq!(card_ids(&s), vec![1]);
    assert_eq!(s.view.focus, Focus::COMPOSER);
    // Ctrl-P reaches the card on purpose; it was on screen all along.
    at(
        &mut s,
        Action::Key(Key::ctrl(Code::Char('p'))),
        t1 + ms(2_000),
    );
    let effects = at(&mut s, Action::ch('n'), t1 + ms(2_100));
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
}

/// A card that comes when the user stopped typing a while ago takes the
/// keys, and still ignores them for a moment.
#[test]
fn a_card_after_a_pause_takes_the_keys_but_not_at_once() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    let t1 = t0 + ms(5_000);
    s.update(Msg::Tick(t1));
    assert_eq!(s.view.focus, Focus::CARDS);
    let effects = at(&mut s, Action::ch('y'), t1 + ms(100));
    assert_eq!(answers(&effects), vec![]);
    let effects = at(&mut s, Action::ch('y'), t1 + ARM_DELAY);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
}

/// "Approve all" leaves out a card that came just before the key press.
#[test]
fn approve_all_leaves_out_a_card_the_user_could_not_have_seen() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    s.update(Msg::Tick(t0));
    ask(&mut s, 2, "t2", ToolKind::Execute);
    let t1 = t0 + ms(4_000);
    s.update(Msg::Tick(t1));
    at(&mut s, Action::ch('A'), t1 + ms(50));
    assert_eq!(s.view.focus.modal, Some(Modal::ConfirmAll(vec![1])));
    let effects = at(&mut s, Action::ch('y'), t1 + ms(900));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(card_ids(&s), vec![2]);
}

/// Claude lists "Always Allow" first: Enter on a fresh card allows once
/// and makes no chat grant.
#[test]
fn enter_on_a_fresh_card_is_the_plain_allow_once() {
    let mut s = chat(Mode::Default);
    let mut req = request("t1", ToolKind::Execute, "Run make");
    req.fields.raw_input = Some(serde_json::json!({ "command": "make" }));
    req.options = vec![
        option("always", "Always Allow", OptionKind::AllowAlways),
        option("allow", "Allow", OptionKind::AllowOnce),
        option("reject", "Reject", OptionKind::RejectOnce),
    ];
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    assert_eq!(s.view.cursor.choice, 1);
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow"))]);
    assert!(s.gate.grants.is_empty(), "{:?}", s.gate.grants);
}

/// With no plain allow once, the highlight is the reject; never an
/// "always" (even one named like a plain allow).
#[test]
fn with_no_allow_once_the_default_is_the_reject() {
    let mut s = chat(Mode::Default);
    let mut req = request("t1", ToolKind::Execute, "Run make");
    req.options = vec![
        option("always", "Allow", OptionKind::AllowAlways),
        option("once", "Allow for this session", OptionKind::AllowOnce),
        option("reject", "Reject", OptionKind::RejectOnce),
    ];
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    assert_eq!(s.view.cursor.choice, 2);
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("reject"))]);
}

/// A form elicitation that just appeared: the `y` that would open its
/// form (and send the letters after it into the form) is ignored too.
#[test]
fn a_y_on_a_form_card_that_just_appeared_opens_nothing() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    let mut form = crate::test_support::edit_request("s", "elicitation-form-1", "Token?");
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
    s.update(Msg::Tick(t0));
    for (i, action) in [
        Action::ch('y'),
        Action::key(Code::Enter),
        Action::ClickChoice(0),
    ]
    .into_iter()
    .enumerate()
    {
        at(&mut s, action, t0 + ms(30 * (i as u64 + 1)));
        assert_eq!(s.view.focus, Focus::CARDS, "no form opened");
    }
    at(&mut s, Action::ch('y'), t0 + ARM_DELAY);
    assert!(matches!(s.view.focus.modal, Some(Modal::Form(_))));
}

/// A mode change asks before it allows the waiting cards; a card that
/// came just before the key press is not among them (it stays a card).
#[test]
fn a_mode_change_does_not_offer_to_allow_a_card_just_arrived() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    s.update(Msg::Tick(t0));
    let t1 = t0 + ms(3_000);
    at(&mut s, Action::Key(Key::ctrl(Code::Char('p'))), t1);
    assert_eq!(s.view.focus, Focus::COMPOSER);
    ask(&mut s, 2, "t2", ToolKind::Edit);
    s.update(Msg::Tick(t1 + ms(10)));
    if s.view.focus != Focus::COMPOSER {
        at(&mut s, Action::Key(Key::ctrl(Code::Char('p'))), t1 + ms(30));
    }
    at(&mut s, Action::key(Code::BackTab), t1 + ms(60));
    assert_eq!(s.gate.mode, Mode::Auto);
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::AllowWaiting(vec![1])))
    );
    let effects = at(&mut s, Action::ch('y'), t1 + ms(900));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(card_ids(&s), vec![2]);
}

/// A card that came while the user was typing, reached later with Ctrl-P:
/// Enter still allows once, never the "Always Allow" listed first (seen
/// with claude-agent-acp 0.23.1 in the TUI).
#[test]
fn enter_on_a_card_reached_with_ctrl_p_after_typing_is_the_plain_allow_once() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    let mut req = request("t1", ToolKind::Execute, "Run make");
    req.fields.raw_input = Some(serde_json::json!({ "command": "make" }));
    req.options = vec![
        option("always", "Always Allow", OptionKind::AllowAlways),
        option("allow", "Allow", OptionKind::AllowOnce),
        option("reject", "Reject", OptionKind::RejectOnce),
    ];
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    s.update(Msg::Tick(t0 + ms(100)));
    assert_eq!(s.view.focus, Focus::COMPOSER, "the user was typing");
    at(
        &mut s,
        Action::Key(Key::ctrl(Code::Char('p'))),
        t0 + ms(2_000),
    );
    let effects = at(&mut s, Action::key(Code::Enter), t0 + ms(2_100));
    assert_eq!(answers(&effects), vec![(1, selected("allow"))]);
    assert!(s.gate.grants.is_empty(), "{:?}", s.gate.grants);
}

/// Issue 33, item 1: the README's first run. A card that comes a moment
/// after Enter waits while the user could still be typing, then takes the
/// keys at the first clock after the typing window (the runtime sends one
/// then), ignores answers for [`ARM_DELAY`] from that moment, and then
/// takes a plain `y`.
#[test]
fn a_card_just_after_enter_takes_the_keys_once_the_typing_stopped() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t0 + ms(300)));
    assert_eq!(s.view.focus, Focus::COMPOSER, "Enter was 300 ms ago");
    assert_eq!(
        s.arming_deadline(),
        Some(t0 + TYPING_WINDOW),
        "the runtime is told when to look again"
    );
    s.update(Msg::Tick(t0 + TYPING_WINDOW));
    assert_eq!(s.view.focus, Focus::CARDS, "nobody typed for the window");
    let took = t0 + TYPING_WINDOW;
    let effects = at(&mut s, Action::ch('y'), took + ms(100));
    assert_eq!(answers(&effects), vec![], "the card just took the keys");
    assert_eq!(s.view.composer.text(), "", "and the y went nowhere else");
    let effects = at(&mut s, Action::ch('y'), took + ARM_DELAY);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
}

/// A card never takes the keys while the composer holds text, however
/// long the user pauses; once the message is sent (or erased) and the
/// window passes, it does.
#[test]
fn a_card_waits_while_the_composer_holds_text() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t0 + ms(100)));
    type_text(&mut s, "also", t0 + ms(200));
    for secs in [2, 5, 30] {
        s.update(Msg::Tick(t0 + ms(secs * 1_000)));
        assert_eq!(s.view.focus, Focus::COMPOSER, "text in the composer");
    }
    assert_eq!(s.arming_deadline(), None, "only a key empties the composer");
    let t1 = t0 + ms(40_000);
    for i in 0..4 {
        at(&mut s, Action::key(Code::Backspace), t1 + ms(10 * i));
    }
    assert_eq!(s.view.composer.text(), "");
    assert!(!s.needs_clock(), "the window runs from the last key");
    s.update(Msg::Tick(t1 + ms(500)));
    assert_eq!(s.view.focus, Focus::COMPOSER, "a key came 500 ms ago");
    s.update(Msg::Tick(t1 + ms(30) + TYPING_WINDOW));
    assert_eq!(s.view.focus, Focus::CARDS);
}

/// Ctrl-P back to the composer is the user's choice: the card does not
/// take the keys back by itself.
#[test]
fn after_ctrl_p_to_the_composer_the_card_stays_put() {
    let t0 = Instant::now();
    let mut s = typed_chat(t0);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t0 + ms(100)));
    at(
        &mut s,
        Action::Key(Key::ctrl(Code::Char('p'))),
        t0 + ms(400),
    );
    assert_eq!(s.view.focus, Focus::CARDS);
    at(
        &mut s,
        Action::Key(Key::ctrl(Code::Char('p'))),
        t0 + ms(600),
    );
    assert_eq!(s.view.focus, Focus::COMPOSER);
    s.update(Msg::Tick(t0 + ms(5_000)));
    assert_eq!(s.view.focus, Focus::COMPOSER);
}

/// A card that came while the user was away (a connection at start-up)
/// is in front of the keys; the user comes back and types a message
/// without looking: the first letter no card takes sends the text to the
/// composer, and the letters after it (`r`: deny with a reason) answer
/// nothing. The card waits, whole.
#[test]
fn typing_a_message_at_a_card_that_waited_goes_to_the_composer() {
    let t0 = Instant::now();
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Execute);
    s.update(Msg::Tick(t0));
    assert_eq!(s.view.focus, Focus::CARDS);
    let mut t = t0 + ms(10_000);
    let mut effects = Vec::new();
    for c in "create a file".chars() {
        effects.extend(at(&mut s, Action::ch(c), t));
        t += ms(60);
    }
    assert_eq!(answers(&effects), vec![], "no letter answered the card");
    assert_eq!(card_ids(&s), vec![1]);
    assert_eq!(s.view.composer.text(), "create a file");
    assert!(s.view.focus.is(Pane::Composer), "{:?}", s.view.focus);
    // The message sent and the typing stopped, the card takes the keys
    // again, and answers once it could have been seen.
    s.view.composer.take();
    s.update(Msg::Tick(t + ms(1_500)));
    assert_eq!(s.view.focus, Focus::CARDS);
    let effects = at(&mut s, Action::ch('y'), t + ms(2_500));
    assert_eq!(answers(&effects).len(), 1);
}

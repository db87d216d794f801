//! Several chats: separate queues, modes and answers; badges; closing.

use crate::state::{Code, Key};
use pretty_assertions::assert_eq;

use super::*;
use crate::model::{PermissionOutcome, PermissionRequest, SessionInfo};
use crate::policy::Mode;
use crate::state::{Connection, RequestId};

fn request(session: &str, tool: &str) -> PermissionRequest {
    crate::test_support::edit_request(session, tool, &format!("Edit {tool}"))
}

/// A chat with its session open and a turn running.
fn chat(session: &str, mode: Mode) -> ChatState {
    let mut s = ChatState::new("demo", "/w");
    s.gate.mode = mode;
    s.gate.agent_policy.name = "demo".into();
    s.session.cwd_path = "/w".into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: session.into(),
        modes: None,
        origin: Default::default(),
    }));
    s.update(Msg::Action(Action::Paste(format!("work in {session}"))));
    s.update(Msg::Action(Action::key(Code::Enter)));
    s
}

/// Two chats of the demo agent, chat 2 on screen.
fn two() -> (Workspace, ChatId, ChatId) {
    let mut ws = Workspace::new(vec!["demo".into()]);
    let a = ws.add_chat(chat("sa", Mode::Default));
    let b = ws.add_chat(chat("sb", Mode::Default));
    (ws, a, b)
}

fn ask(ws: &mut Workspace, chat: ChatId, id: RequestId, tool: &str) -> Vec<WsEffect> {
    let session = ws
        .chat(chat)
        .and_then(|c| c.state.session_id())
        .unwrap_or("?")
        .to_string();
    ws.update(WsMsg::Chat(
        chat,
        Msg::PermissionRequested {
            id,
            request: Box::new(request(&session, tool)),
        },
    ))
}

fn key(ws: &mut Workspace, action: Action) -> Vec<WsEffect> {
    ws.update(WsMsg::Action(action))
}

/// (chat, request, outcome) of every permission answer among the effects.
fn answers(effects: &[WsEffect]) -> Vec<(ChatId, RequestId, PermissionOutcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            WsEffect::Chat(chat, Effect::RespondPermission { id, outcome }) => {
                Some((*chat, *id, outcome.clone()))
            }
            _ => None,
        })
        .collect()
}

fn queue(ws: &Workspace, chat: ChatId) -> Vec<String> {
    ws.chat(chat)
        .map(|c| {
            c.state
                .gate
                .approvals
                .iter()
                .map(|a| a.request.tool_call_id.clone())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn interleaved_requests_keep_separate_fifo_queues() {
    let (mut ws, a, b) = two();
    ask(&mut ws, a, 1, "a1");
    ask(&mut ws, b, 2, "b1");
    ask(&mut ws, a, 3, "a2");
    ask(&mut ws, b, 4, "b2");
    ask(&mut ws, a, 5, "a3");
    assert_eq!(queue(&ws, a), ["a1", "a2", "a3"]);
    assert_eq!(queue(&ws, b), ["b1", "b2"]);
    // Chat 2 is on screen: its card is the oldest of its own queue.
    assert_eq!(ws.active_id(), Some(b));
    assert_eq!(
        ws.active_chat().map(|c| c.state.view.focus.clone()),
        Some(Focus::CARDS)
    );
}

#[test]
fn approving_in_one_chat_never_answers_the_other() {
    let (mut ws, a, b) = two();
    ask(&mut ws, a, 1, "a1");
    ask(&mut ws, b, 2, "b1");
    // y on chat 2's card.
    let effects = key(&mut ws, Action::ch('y'));
    assert_eq!(
        answers(&effects),
        [(b, 2, PermissionOutcome::Selected("allow-once".into()))]
    );
    assert_eq!(queue(&ws, a), ["a1"], "chat 1's card still waits");
    assert!(queue(&ws, b).is_empty());
    // Over to chat 1; its card is its own.
    key(&mut ws, Action::GoToChat(1));
    assert_eq!(ws.active_id(), Some(a));
    assert_eq!(
        ws.active_chat().map(|c| c.state.view.focus.clone()),
        Some(Focus::CARDS)
    );
    let effects = key(&mut ws, Action::ch('n'));
    assert_eq!(
        answers(&effects),
        [(a, 1, PermissionOutcome::Selected("reject-once".into()))]
    );
}

#[test]
fn a_background_request_updates_the_badge_and_what_the_footer_says() {
    let (mut ws, a, _b) = two();
    assert!(ws.waiting_elsewhere().is_empty());
    let effects = ask(&mut ws, a, 1, "a1");
    // The bell / desktop notification is asked for, tagged with chat 1.
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, WsEffect::Chat(c, Effect::Notify(_)) if *c == a)),
        "{effects:?}"
    );
    assert_eq!(ws.chat(a).map(ChatSlot::pending), Some(1));
    assert_eq!(ws.waiting_elsewhere(), [(1, 1)]);
    ask(&mut ws, a, 2, "a2");
    assert_eq!(ws.waiting_elsewhere(), [(1, 2)]);
    // Jumping there (Alt+1) puts it on screen: nothing waits elsewhere.
    key(&mut ws, Action::GoToChat(1));
    assert!(ws.waiting_elsewhere().is_empty());
    assert_eq!(ws.active_chat().map(ChatSlot::pending), Some(2));
}

#[test]
fn modes_are_per_chat() {
    let (mut ws, a, b) = two();
    // Shift+Tab on chat 2 (empty composer) cycles its mode only.
    key(&mut ws, Action::key(Code::BackTab));
    assert_eq!(
        ws.chat(b).map(|c| c.state.gate.mode),
        Some(Mode::Default.next())
    );
    assert_eq!(ws.chat(a).map(|c| c.state.gate.mode), Some(Mode::Default));
    key(&mut ws, Action::PrevChat);
    assert_eq!(ws.active_id(), Some(a));
    assert_eq!(
        ws.chat(b).map(|c| c.state.gate.mode),
        Some(Mode::Default.next())
    );
}

#[test]
fn closing_a_busy_chat_asks_then_cancels_its_turn_and_answers_its_requests() {
    let (mut ws, a, b) = two();
    ask(&mut ws, a, 1, "a1");
    ask(&mut ws, a, 2, "a2");
    ask(&mut ws, b, 3, "b1");
    key(&mut ws, Action::GoToChat(1));
    let asked = key(&mut ws, Action::CloseChat);
    assert!(asked.is_empty(), "nothing happens before the answer");
    assert_eq!(ws.focus, ChatFocus::ConfirmClose { chat: a });
    let question = close_question(ws.chat(a).expect("chat 1"));
    assert!(question.contains("2 pending requests"), "{question}");
    assert!(question.contains("running turn"), "{question}");
    // n keeps it.
    assert!(key(&mut ws, Action::ch('n')).is_empty());
    assert_eq!(ws.chats.len(), 2);
    key(&mut ws, Action::CloseChat);
    let effects = key(&mut ws, Action::ch('y'));
    assert_eq!(
        answers(&effects),
        [
            (a, 1, PermissionOutcome::Cancelled),
            (a, 2, PermissionOutcome::Cancelled)
        ]
    );
    assert!(effects.contains(&WsEffect::Chat(a, Effect::CancelTurn)));
    assert!(
        matches!(effects.last(), Some(WsEffect::Closed(slot)) if slot.id == a),
        "closed after its answers"
    );
    assert_eq!(ws.chats.len(), 1);
    assert_eq!(ws.active_id(), Some(b));
    assert_eq!(queue(&ws, b), ["b1"], "the other chat's card is untouched");
}

#[test]
fn an_idle_chat_closes_at_once_and_the_last_one_stays() {
    let mut ws = Workspace::new(vec!["demo".into()]);
    let a = ws.add_chat(ChatState::new("demo", "/w"));
    let b = ws.add_chat(ChatState::new("demo", "/w"));
    let effects = key(&mut ws, Action::CloseChat);
    assert!(matches!(effects.as_slice(), [WsEffect::Closed(slot)] if slot.id == b));
    assert_eq!(ws.active_id(), Some(a));
    assert!(key(&mut ws, Action::CloseChat).is_empty());
    assert_eq!(ws.chats.len(), 1);
    assert!(
        ws.notice
            .as_deref()
            .is_some_and(|n| n.contains("only chat"))
    );
}

#[test]
fn switching_wraps_and_alt_digits_reach_only_open_chats() {
    let (mut ws, a, b) = two();
    let c = ws.add_chat(ChatState::new("demo", "/w"));
    assert_eq!(ws.active_id(), Some(c));
    key(&mut ws, Action::NextChat);
    assert_eq!(ws.active_id(), Some(a));
    key(&mut ws, Action::PrevChat);
    assert_eq!(ws.active_id(), Some(c));
    key(&mut ws, Action::GoToChat(2));
    assert_eq!(ws.active_id(), Some(b));
    key(&mut ws, Action::GoToChat(7));
    assert_eq!(ws.active_id(), Some(b));
    assert!(ws.notice.is_some());
}

#[test]
fn the_list_renames_switches_and_opens_the_picker() {
    let (mut ws, a, _b) = two();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 });
    key(&mut ws, Action::key(Code::Up));
    key(&mut ws, Action::ch('r'));
    assert!(matches!(ws.focus, ChatFocus::Rename { chat, .. } if chat == a));
    key(&mut ws, Action::KillLineStart);
    key(&mut ws, Action::Paste("parser\nrefactor".into()));
    key(&mut ws, Action::key(Code::Enter));
    assert_eq!(
        ws.chat(a).map(ChatSlot::label).as_deref(),
        Some("parser refactor")
    );
    assert_eq!(ws.focus, ChatFocus::List { selected: 0 });
    key(&mut ws, Action::key(Code::Enter));
    assert_eq!(ws.active_id(), Some(a));
    assert_eq!(ws.focus, ChatFocus::Chat);
    assert_eq!(key(&mut ws, Action::PastChats), [WsEffect::OpenPicker]);
}

#[test]
fn labels_prefer_the_name_then_the_title_then_the_first_prompt() {
    let (mut ws, a, _) = two();
    assert_eq!(
        ws.chat(a).map(ChatSlot::label).as_deref(),
        Some("work in sa")
    );
    ws.update(WsMsg::Chat(
        a,
        Msg::Update(crate::model::SessionUpdate::SessionInfo {
            title: Some("Fix\x1b[2J the parser".into()),
        }),
    ));
    let label = ws.chat(a).map(ChatSlot::label).unwrap_or_default();
    assert!(
        label.starts_with("Fix") && !label.contains('\x1b'),
        "{label:?}"
    );
    let fresh = ws.add_chat(ChatState::new("demo", "/w"));
    assert_eq!(
        ws.chat(fresh).map(ChatSlot::label).as_deref(),
        Some("new chat")
    );
}

#[test]
fn a_new_chat_asks_which_agent_when_there_are_several() {
    let mut ws = Workspace::new(vec!["demo".into()]);
    ws.add_chat(ChatState::new("demo", "/w"));
    assert_eq!(
        key(&mut ws, Action::NewChat),
        [WsEffect::NewChat {
            agent: "demo".into()
        }]
    );
    ws.agents = vec!["claude".into(), "demo".into(), "gemini".into()];
    assert!(key(&mut ws, Action::NewChat).is_empty());
    assert_eq!(
        ws.focus,
        ChatFocus::NewChat { selected: 1 },
        "the current agent first"
    );
    key(&mut ws, Action::key(Code::Down));
    assert_eq!(
        key(&mut ws, Action::key(Code::Enter)),
        [WsEffect::NewChat {
            agent: "gemini".into()
        }]
    );
    // A digit picks the agent by its number in the chooser.
    key(&mut ws, Action::NewChat);
    assert!(key(&mut ws, Action::ch('7')).is_empty(), "no agent 7");
    assert_eq!(
        key(&mut ws, Action::ch('1')),
        [WsEffect::NewChat {
            agent: "claude".into()
        }]
    );
}

#[test]
fn quitting_from_one_chat_answers_every_chats_requests() {
    let (mut ws, a, b) = two();
    ask(&mut ws, a, 1, "a1");
    ask(&mut ws, b, 2, "b1");
    let effects = key(&mut ws, Action::Quit);
    let mut got = answers(&effects);
    got.sort_by_key(|(_, id, _)| *id);
    assert_eq!(
        got,
        [
            (a, 1, PermissionOutcome::Cancelled),
            (b, 2, PermissionOutcome::Cancelled)
        ]
    );
    assert!(effects.contains(&WsEffect::Chat(b, Effect::Quit)));
}

#[test]
fn ctrl_d_quits_from_any_screen_and_ctrl_c_backs_out_of_them() {
    let (mut ws, a, _b) = two();
    ask(&mut ws, a, 1, "a1");
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    assert!(key(&mut ws, Action::Interrupt(std::time::Instant::now())).is_empty());
    assert_eq!(ws.focus, ChatFocus::Chat, "Ctrl-C closed the list");
    ws.show_picker(Vec::new());
    key(&mut ws, Action::Interrupt(std::time::Instant::now()));
    assert_eq!(ws.focus, ChatFocus::Chat, "Ctrl-C closed the picker");
    // A close question open: Ctrl-D still quits, and chat 1's card is answered.
    key(&mut ws, Action::CloseChat);
    assert!(matches!(ws.focus, ChatFocus::ConfirmClose { .. }));
    let effects = key(&mut ws, Action::Quit);
    assert_eq!(answers(&effects), [(a, 1, PermissionOutcome::Cancelled)]);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, WsEffect::Chat(_, Effect::Quit)))
    );
    assert!(ws.chats.iter().all(|c| c.state.view.quitting));
}

#[test]
fn messages_for_a_closed_chat_are_dropped() {
    let (mut ws, a, _) = two();
    key(&mut ws, Action::GoToChat(1));
    key(&mut ws, Action::key(Code::Esc));
    // Idle after Esc? The turn is still running until the agent answers.
    assert!(matches!(
        ws.chat(a).map(|c| &c.state.session.connection),
        Some(Connection::Ready { .. })
    ));
    ws.update(WsMsg::Chat(
        a,
        Msg::TurnEnded(crate::model::StopReason::Cancelled),
    ));
    key(&mut ws, Action::CloseChat);
    assert!(ws.chat(a).is_none());
    assert!(ask(&mut ws, a, 9, "late").is_empty());
}

#[test]
fn picking_a_chat_already_open_goes_there() {
    let (mut ws, a, _) = two();
    let summary = |id: &str, session: &str| ChatSummary {
        chat_id: id.into(),
        agent: "demo".into(),
        session_id: session.into(),
        cwd: "/w".into(),
        title: None,
        mode: None,
        updated: std::time::SystemTime::UNIX_EPOCH,
        entries: 0,
        exec: false,
    };
    ws.show_picker(vec![summary("c1", "sa"), summary("c2", "old")]);
    assert!(key(&mut ws, Action::key(Code::Enter)).is_empty());
    assert_eq!(ws.active_id(), Some(a));
    ws.show_picker(vec![summary("c1", "sa"), summary("c2", "old")]);
    key(&mut ws, Action::key(Code::Down));
    assert_eq!(
        key(&mut ws, Action::key(Code::Enter)),
        [WsEffect::Reopen(Box::new(summary("c2", "old")))]
    );
}

mod random {
    //! Random sequences of keys and requests across chats: every request is
    //! answered at most once, only by its own chat, and quitting answers
    //! every one still pending.

    use std::collections::{HashMap, HashSet};

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// A request in chat number N (modulo the chats open).
        Ask(usize),
        Key(Action),
        /// The turn of chat N ends.
        TurnEnds(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let keys = prop_oneof![
            Just(Action::ch('y')),
            Just(Action::ch('n')),
            Just(Action::ch('x')),
            Just(Action::ch('r')),
            Just(Action::ch('A')),
            Just(Action::key(Code::Tab)),
            Just(Action::Key(Key::ctrl(Code::Char('p')))),
            Just(Action::key(Code::Esc)),
            Just(Action::key(Code::Enter)),
            Just(Action::key(Code::Up)),
            Just(Action::key(Code::Down)),
            Just(Action::NewChat),
            Just(Action::NextChat),
            Just(Action::PrevChat),
            Just(Action::Key(Key::ctrl(Code::Char('l')))),
            Just(Action::CloseChat),
            Just(Action::key(Code::BackTab)),
            (1usize..5).prop_map(Action::GoToChat),
            Just(Action::Paste("go".into())),
        ];
        prop_oneof![
            3 => (0usize..4).prop_map(Op::Ask),
            6 => keys.prop_map(Op::Key),
            1 => (0usize..4).prop_map(Op::TurnEnds),
        ]
    }

    /// Take the answers out of `open` (each must be there: asked, not yet
    /// answered, by that chat); a closed chat must leave none behind.
    /// Returns how many new chats the effects ask for.
    fn check(
        effects: Vec<WsEffect>,
        ws: &Workspace,
        open: &mut HashSet<(ChatId, RequestId)>,
    ) -> Result<usize, TestCaseError> {
        let mut new_chats = 0;
        for effect in effects {
            match effect {
                WsEffect::Chat(chat, Effect::RespondPermission { id, .. }) => {
                    prop_assert!(
                        open.remove(&(chat, id)),
                        "answered twice or never asked: {chat}/{id}"
                    );
                }
                WsEffect::NewChat { .. } => new_chats += 1,
                WsEffect::Closed(slot) => {
                    prop_assert!(
                        !open.iter().any(|(c, _)| *c == slot.id),
                        "a closed chat left requests unanswered"
                    );
                }
                _ => {}
            }
        }
        prop_assert!(ws.active < ws.chats.len().max(1));
        Ok(new_chats)
    }

    proptest! {
        #[test]
        fn every_request_is_answered_once_by_its_own_chat(ops in prop::collection::vec(op(), 0..80)) {
            let mut ws = Workspace::new(vec!["demo".into()]);
            let mut sessions = 0;
            let mut fresh = |ws: &mut Workspace| {
                sessions += 1;
                ws.add_chat(chat(&format!("s{sessions}"), Mode::Default))
            };
            fresh(&mut ws);
            // (chat, request) asked and not yet answered.
            let mut open: HashSet<(ChatId, RequestId)> = HashSet::new();
            let mut next: HashMap<ChatId, RequestId> = HashMap::new();
            for op in ops {
                let effects = match op {
                    Op::Ask(n) => {
                        let slot = &ws.chats[n % ws.chats.len()];
                        let (chat, session) = (slot.id, slot.state.session_id().unwrap_or("?").to_string());
                        let id = *next.entry(chat).or_default();
                        next.insert(chat, id + 1);
                        open.insert((chat, id));
                        ws.update(WsMsg::Chat(chat, Msg::PermissionRequested {
                            id,
                            request: Box::new(request(&session, &format!("t{id}"))),
                        }))
                    }
                    Op::Key(action) => ws.update(WsMsg::Action(action)),
                    Op::TurnEnds(n) => {
                        let chat = ws.chats[n % ws.chats.len()].id;
                        ws.update(WsMsg::Chat(chat, Msg::TurnEnded(crate::model::StopReason::EndTurn)))
                    }
                };
                let new_chats = check(effects, &ws, &mut open)?;
                for _ in 0..new_chats {
                    fresh(&mut ws);
                }
                prop_assert!(!ws.chats.is_empty(), "the last chat stays");
            }
            let effects = ws.update(WsMsg::Action(Action::Quit));
            check(effects, &ws, &mut open)?;
            prop_assert!(open.is_empty(), "unanswered after quit: {open:?}");
        }
    }
}

/// The footer says "Shift-Tab mode" while the chat list has the keys:
/// Shift-Tab changes the mode of the chat on screen, and the list stays.
#[test]
fn shift_tab_in_the_chat_list_changes_the_mode() {
    let (mut ws, _a, b) = two();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 });
    key(&mut ws, Action::key(Code::BackTab));
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 });
    assert_eq!(
        ws.chat(b).map(|c| c.state.gate.mode),
        Some(Mode::Default.next())
    );
}

/// `--resume` replaces the empty starting chat with the reopened one:
/// no "closed chat 1: new chat" notice about a chat the user never used.
#[test]
fn a_reopened_chat_replaces_the_empty_one_without_a_closed_notice() {
    let mut ws = Workspace::new(vec!["demo".into()]);
    let a = ws.add_chat(ChatState::new("demo", "/w"));
    let b = ws.add_chat(chat("sb", Mode::Default));
    ws.update(WsMsg::DiscardUntouched(a));
    assert!(ws.chat(a).is_none());
    assert_eq!(ws.active_id(), Some(b));
    assert_eq!(ws.notice, None);
    // A chat the user closes still says so.
    let c = ws.add_chat(ChatState::new("demo", "/w"));
    key(&mut ws, Action::CloseChat);
    assert!(ws.chat(c).is_none());
    assert!(
        ws.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("closed chat")),
        "{:?}",
        ws.notice
    );
}

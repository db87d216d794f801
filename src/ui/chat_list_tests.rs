//! Snapshots and behaviour of several chats on screen: the sidebar, the
//! list over a narrow screen, renaming, the close question, the chooser of
//! a new chat's agent, the footer's parts about other chats, and clicks.

use crate::state::{Code, Key};
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::tests::buffer_text;
use super::theme::Theme;
use super::{Scroll, Views, draw_workspace, footer};
use crate::chats::ChatSummary;
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, SessionInfo, ToolCallFields, ToolKind,
};
use crate::policy::Mode;
use crate::state::{Action, ChatFocus, ChatState, EntryKind, Msg, Workspace, WsMsg};

fn views() -> Views {
    Views::with_theme(Theme::with_color(true))
}

fn terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(width, height)).expect("test terminal")
}

/// Draw once; the screen as text, with the cursor's place when it shows.
fn draw_on(term: &mut Terminal<TestBackend>, ws: &Workspace, views: &mut Views) -> String {
    term.hide_cursor().expect("hide cursor");
    let completed = term.draw(|f| draw_workspace(f, ws, views)).expect("draw");
    let mut text = buffer_text(completed.buffer);
    if term.backend().cursor_visible() {
        let at = term.get_cursor_position().expect("cursor");
        text.push_str(&format!("cursor: ({}, {})\n", at.x, at.y));
    } else {
        text.push_str("cursor: hidden\n");
    }
    text
}

fn screen(ws: &Workspace, width: u16, height: u16) -> String {
    draw_on(&mut terminal(width, height), ws, &mut views())
}

fn edit(session: &str, tool: &str, path: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: session.into(),
        tool_call_id: tool.into(),
        fields: ToolCallFields {
            title: Some(format!("Edit {path}")),
            kind: Some(ToolKind::Edit),
            ..Default::default()
        },
        options: [
            ("allow", "Allow", OptionKind::AllowOnce),
            ("reject", "Reject", OptionKind::RejectOnce),
        ]
        .into_iter()
        .map(|(id, name, kind)| PermissionOption {
            id: id.into(),
            name: name.into(),
            kind,
        })
        .collect(),
        client: false,
    }
}

/// A connected chat of `agent` in `mode`.
fn chat(agent: &str, session: &str, mode: Mode) -> ChatState {
    let mut s = ChatState::new(agent, "~/src/warden");
    s.gate.mode = mode;
    s.gate.agent_policy.name = agent.into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: session.into(),
        modes: None,
        origin: Default::default(),
    }));
    s
}

fn prompt(s: &mut ChatState, text: &str) {
    s.update(Msg::Action(Action::Paste(text.into())));
    s.update(Msg::Action(Action::key(Code::Enter)));
    assert!(s.is_busy());
}

/// Three chats: 1 claude-code waits on two edits, 2 gemini works in Auto,
/// 3 demo in Plan is on screen.
fn three() -> Workspace {
    let mut ws = Workspace::new(vec!["claude-code".into(), "gemini".into(), "demo".into()]);

    let mut a = chat("claude-code", "sa", Mode::Default);
    prompt(&mut a, "Fix the flaky config test on CI");
    a.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit("sa", "call-1", "src/config.rs")),
    });
    a.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(edit("sa", "call-2", "tests/config.rs")),
    });
    assert_eq!(a.gate.approvals.len(), 2);
    ws.add_chat(a);

    let mut b = chat("gemini", "sb", Mode::Auto);
    b.session.title = Some("Refactor the approval queue into a module".into());
    prompt(&mut b, "Refactor the approval queue");
    ws.add_chat(b);

    let mut c = chat("demo", "sc", Mode::Plan);
    c.session
        .transcript
        .push(EntryKind::User("What does the reaper do?".into()));
    c.session
        .transcript
        .push_agent_text("It waits for child processes so none stay as zombies.");
    ws.add_chat(c);
    assert_eq!(ws.active, 2);
    ws
}

fn key(ws: &mut Workspace, action: Action) {
    ws.update(WsMsg::Action(action));
}

/// The row of the screen that contains `text`.
fn row_of(text: &str, screen: &str) -> u16 {
    let row = screen
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("{text:?} not on screen:\n{screen}"));
    u16::try_from(row).expect("row")
}

/// The column where `text` starts on its row.
fn column_of(text: &str, screen: &str) -> u16 {
    let line = &screen
        .lines()
        .nth(usize::from(row_of(text, screen)))
        .expect("row");
    let at = line.find(text).expect("text");
    u16::try_from(super::wrap::str_width(&line[..at])).expect("column")
}

#[test]
fn sidebar_three_chats_120x40() {
    assert_snapshot!(screen(&three(), 120, 40));
}

#[test]
fn sidebar_list_focus_120x40() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::key(Code::Up));
    assert_eq!(ws.focus, ChatFocus::List { selected: 1 });
    assert_snapshot!(screen(&ws, 120, 40));
}

#[test]
fn narrow_list_overlay_80x24() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    assert_snapshot!(screen(&ws, 80, 24));
}

#[test]
fn narrow_list_closed_80x24() {
    let ws = three();
    let text = screen(&ws, 80, 24);
    assert!(text.contains("chat 3/3"), "{text}");
    assert!(text.contains("chat 1: 2 pending · Alt-1"), "{text}");
    assert_snapshot!(text);
}

#[test]
fn sidebar_off_on_a_wide_screen_120x40() {
    let mut ws = three();
    ws.sidebar = false;
    let text = screen(&ws, 120, 40);
    assert!(!text.contains("Chats"), "{text}");
    assert!(text.contains("chat 3/3"), "{text}");
}

#[test]
fn rename_in_the_overlay_80x24() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::key(Code::Up));
    key(&mut ws, Action::ch('r'));
    key(&mut ws, Action::KillLineStart);
    for c in "queue".chars() {
        key(&mut ws, Action::ch(c));
    }
    assert!(matches!(ws.focus, ChatFocus::Rename { .. }));
    assert_snapshot!(screen(&ws, 80, 24));
}

#[test]
fn rename_in_the_sidebar_puts_the_cursor_in_the_field() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::ch('r'));
    key(&mut ws, Action::KillLineStart);
    for c in "plan it".chars() {
        key(&mut ws, Action::ch(c));
    }
    key(&mut ws, Action::key(Code::Left));
    let text = screen(&ws, 120, 40);
    let row = row_of("3 demo · plan it", &text);
    let col = column_of("plan it", &text) + 6;
    assert!(
        text.ends_with(&format!("cursor: ({col}, {row})\n")),
        "{text}"
    );
    assert!(text.contains("Enter save · Esc cancel"), "{text}");
}

#[test]
fn confirm_close_80x24() {
    let mut ws = three();
    key(&mut ws, Action::GoToChat(1));
    key(&mut ws, Action::CloseChat);
    assert!(matches!(ws.focus, ChatFocus::ConfirmClose { .. }));
    assert_snapshot!(screen(&ws, 80, 24));
}

#[test]
fn confirm_close_sidebar_120x40() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::key(Code::Up));
    key(&mut ws, Action::key(Code::Up));
    key(&mut ws, Action::ch('x'));
    assert!(matches!(ws.focus, ChatFocus::ConfirmClose { .. }));
    assert_snapshot!(screen(&ws, 120, 40));
}

#[test]
fn new_chat_chooser_80x24() {
    let mut ws = three();
    key(&mut ws, Action::NewChat);
    assert_eq!(
        ws.focus,
        ChatFocus::NewChat { selected: 2 },
        "the agent on screen"
    );
    key(&mut ws, Action::key(Code::Up));
    assert_eq!(ws.focus, ChatFocus::NewChat { selected: 1 });
    assert_snapshot!(screen(&ws, 80, 24));
}

#[test]
fn a_click_on_a_sidebar_row_goes_to_that_chat() {
    let mut ws = three();
    let mut term = terminal(120, 40);
    let mut views = views();
    let text = draw_on(&mut term, &ws, &mut views);
    for (n, label) in [(1, "1 claude-code"), (2, "2 gemini"), (3, "3 demo")] {
        let row = row_of(label, &text);
        assert_eq!(views.hit(3, row), Some(Action::GoToChat(n)), "{label}");
        assert_eq!(
            views.hit(20, row + 1),
            Some(Action::GoToChat(n)),
            "the badge row"
        );
    }
    assert_eq!(views.hit(3, 0), None, "the title row");
    let row = row_of("2 gemini", &text);
    if let Some(action) = views.hit(5, row) {
        ws.update(WsMsg::Action(action));
    }
    assert_eq!(ws.active, 1);
}

#[test]
fn a_click_on_a_row_of_the_overlay_goes_to_that_chat() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    let mut term = terminal(80, 24);
    let mut views = views();
    let text = draw_on(&mut term, &ws, &mut views);
    let row = row_of("1 claude-code", &text);
    let col = column_of("1 claude-code", &text);
    assert_eq!(views.hit(col, row), Some(Action::GoToChat(1)));
    let hint = row_of("Enter open", &text);
    assert_eq!(views.hit(col, hint), None, "the box takes its clicks");
    if let Some(action) = views.hit(col, row + 1) {
        ws.update(WsMsg::Action(action));
    }
    assert_eq!(ws.active, 0);
    assert_eq!(ws.focus, ChatFocus::Chat);
}

#[test]
fn a_click_on_the_footers_pending_part_goes_to_that_chat() {
    for (width, height) in [(120, 40), (80, 24), (60, 20)] {
        let mut ws = three();
        let mut term = terminal(width, height);
        let mut views = views();
        let text = draw_on(&mut term, &ws, &mut views);
        let footer = height - 1;
        let col = column_of("chat 1: 2 pending", &text);
        assert_eq!(row_of("chat 1: 2 pending", &text), footer, "{text}");
        assert_eq!(views.hit(col, footer), Some(Action::GoToChat(1)));
        assert_eq!(views.hit(col + 10, footer), Some(Action::GoToChat(1)));
        if let Some(action) = views.hit(col, footer) {
            ws.update(WsMsg::Action(action));
        }
        assert_eq!(ws.active, 0);
    }
}

/// The footer's parts about other chats give way after the hints, the
/// directory and the agent's name; the key goes last.
#[test]
fn footer_with_other_chats() {
    let ws = three();
    let state = &ws.chats[2].state;
    let mut out = String::new();
    let cases = [
        ("position", Some((3, 3)), None),
        ("waiting", None, Some((1, 2, 0))),
        ("both", Some((3, 3)), Some((1, 2, 0))),
        ("more", Some((3, 4)), Some((1, 2, 1))),
    ];
    for (label, position, waiting) in cases {
        let chats = footer::Chats {
            position,
            waiting: waiting.map(|(chat, pending, more)| footer::Waiting {
                chat,
                pending,
                more,
            }),
        };
        for width in [140, 100, 80, 60, 40, 30] {
            let area = Rect::new(0, 0, width, 1);
            let mut buf = Buffer::empty(area);
            let hits = footer::render_with(&mut buf, area, state, chats, Theme::with_color(true));
            assert_eq!(
                hits.elsewhere.is_some(),
                waiting.is_some(),
                "{label} {width}"
            );
            out.push_str(&format!("{label:<8} {width:>3} |{}", buffer_text(&buf)));
        }
    }
    assert_snapshot!(out);
}

#[test]
fn several_chats_waiting_say_how_many_more() {
    let mut ws = three();
    let mut d = chat("gemini", "sd", Mode::Default);
    d.update(Msg::PermissionRequested {
        id: 9,
        request: Box::new(edit("sd", "call-9", "README.md")),
    });
    ws.add_chat(d);
    key(&mut ws, Action::GoToChat(3));
    let text = screen(&ws, 120, 40);
    assert!(text.contains("chat 1: 2 pending · Alt-1 +1 more"), "{text}");
    let narrow = screen(&ws, 40, 20);
    assert!(narrow.contains("chat 1: 2 pending +1 more"), "{narrow}");
}

#[test]
fn a_card_choice_beside_the_sidebar_is_clicked_where_it_is_drawn() {
    let mut ws = three();
    key(&mut ws, Action::GoToChat(1));
    let mut term = terminal(120, 40);
    let mut views = views();
    let text = draw_on(&mut term, &ws, &mut views);
    let row = row_of("Reject", &text);
    let col = column_of("Reject", &text);
    assert!(col > super::chat_list::SIDEBAR_W, "{text}");
    let choice = views.hit(col, row);
    assert!(
        matches!(choice, Some(Action::ClickChoice(_))),
        "{choice:?}\n{text}"
    );
    assert_eq!(views.hit(110, row), choice, "the whole row is the choice");
    assert_ne!(views.hit(5, row), choice, "the sidebar is not the card");
    let before = ws.chats[0].pending();
    if let Some(action) = choice {
        ws.update(WsMsg::Action(action));
    }
    assert_eq!(
        ws.chats[0].pending(),
        before - 1,
        "the click answered a card"
    );

    // The mode slot moved right with the chat too.
    let footer = 39;
    let slot = column_of("⏵ Default ▾", &text);
    assert_eq!(slot, super::chat_list::SIDEBAR_W + 1);
    assert_eq!(views.hit(slot, footer), Some(Action::OpenModeMenu));
    assert_eq!(views.hit(slot - 1, footer), None);
}

#[test]
fn the_picker_covers_the_screen_and_takes_every_click() {
    let mut ws = three();
    ws.show_picker(vec![ChatSummary {
        chat_id: "c1".into(),
        agent: "claude-code".into(),
        session_id: "s-old".into(),
        cwd: PathBuf::from("/home/ada/src/warden"),
        title: Some("An older chat".into()),
        mode: None,
        updated: UNIX_EPOCH + Duration::from_secs(1_767_268_800),
        entries: 3,
        exec: false,
    }]);
    let mut term = terminal(100, 20);
    let mut views = views();
    let text = draw_on(&mut term, &ws, &mut views);
    assert!(text.starts_with("Resume a chat"), "{text}");
    assert!(text.contains("An older chat"), "{text}");
    assert!(!text.contains("Chats"), "{text}");
    assert!(text.contains("cursor: (9, 1)"), "{text}");
    for (x, y) in [(0, 0), (5, 10), (50, 19), (99, 5)] {
        assert_eq!(views.hit(x, y), None);
    }
}

#[test]
fn the_workspace_notice_replaces_the_chats() {
    let mut ws = three();
    ws.chats[2].state.view.notice = Some("the chat's own notice".into());
    let text = screen(&ws, 120, 40);
    assert!(text.contains("the chat's own notice"), "{text}");
    ws.notice = Some("there is no chat 7".into());
    let text = screen(&ws, 120, 40);
    assert!(text.contains("there is no chat 7"), "{text}");
    assert!(!text.contains("the chat's own notice"), "{text}");
}

#[test]
fn the_selected_row_is_reversed_and_the_chat_on_screen_marked() {
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::key(Code::Up));
    let mut term = terminal(120, 40);
    draw_on(&mut term, &ws, &mut views());
    let buf = term.backend().buffer().clone();
    let text = buffer_text(&buf);
    let selected = row_of("2 gemini", &text);
    for y in [selected, selected + 1] {
        assert!(buf[(10, y)].modifier.contains(Modifier::REVERSED));
    }
    let on_screen = row_of("3 demo", &text);
    assert_eq!(buf[(0, on_screen)].symbol(), "▌");
    assert_eq!(buf[(0, on_screen + 1)].symbol(), "▌");
    assert!(!buf[(10, on_screen)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn agent_names_and_labels_are_sanitized_and_cut() {
    let mut ws = three();
    ws.chats[1].state.session.agent_name = "evil\u{1b}[2J".into();
    ws.chats[1].name = Some(format!("\u{1b}]0;title\u{7}{}", "long ".repeat(30)));
    let mut term = terminal(120, 40);
    let text = draw_on(&mut term, &ws, &mut views());
    assert!(text.contains("2 evil␛[2J · ␛]0;title"), "{text}");
    assert!(text.contains("…"), "{text}");
    for cell in &term.backend().buffer().content {
        assert!(!cell.symbol().chars().any(char::is_control));
    }
    // The label stops at the sidebar's border.
    let row = row_of("2 evil", &text);
    let line = text.lines().nth(usize::from(row)).expect("row");
    assert!(line.contains("…│"), "{line}");
}

#[test]
fn each_chat_keeps_its_own_scroll_and_closed_chats_are_forgotten() {
    let mut ws = three();
    for i in 0..200 {
        ws.chats[2]
            .state
            .session
            .transcript
            .push(EntryKind::Info(format!("entry {i}")));
    }
    let mut term = terminal(120, 40);
    let mut views = views();
    draw_on(&mut term, &ws, &mut views);
    let on_screen = ws.chats[2].id;
    let other = ws.chats[1].id;
    views.scroll(on_screen, Scroll::Top);
    views.scroll(other, Scroll::Top);
    let text = draw_on(&mut term, &ws, &mut views);
    assert!(text.contains("What does the reaper do?"), "{text}");
    assert!(views.view(other).is_none(), "a chat not drawn has no view");
    key(&mut ws, Action::GoToChat(2));
    draw_on(&mut term, &ws, &mut views);
    assert!(views.view(other).is_some_and(super::View::is_following));
    assert!(views.view(on_screen).is_some_and(|v| !v.is_following()));

    views.forget(on_screen);
    assert!(views.view(on_screen).is_none());
    // Closing without telling the views: the next draw drops it anyway.
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut ws, Action::ch('x'));
    key(&mut ws, Action::ch('y'));
    assert_eq!(ws.chats.len(), 2);
    draw_on(&mut term, &ws, &mut views);
    assert!(views.view(other).is_none());
}

#[test]
fn no_chat_and_tiny_terminals_do_not_panic() {
    let mut empty = Workspace::new(vec!["demo".into()]);
    let text = screen(&empty, 80, 24);
    assert!(text.contains("no chat open"), "{text}");
    empty.focus = ChatFocus::List { selected: 3 };
    screen(&empty, 120, 40);
    screen(&empty, 80, 24);
    let mut focuses = vec![ChatFocus::Chat, ChatFocus::NewChat { selected: 9 }];
    let mut ws = three();
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    focuses.push(ws.focus.clone());
    key(&mut ws, Action::ch('r'));
    focuses.push(ws.focus.clone());
    let mut ws = three();
    key(&mut ws, Action::GoToChat(1));
    key(&mut ws, Action::CloseChat);
    focuses.push(ws.focus.clone());
    for focus in focuses {
        ws.focus = focus;
        for (w, h) in [
            (1, 1),
            (2, 2),
            (5, 4),
            (12, 6),
            (30, 8),
            (100, 3),
            (100, 6),
            (101, 40),
        ] {
            let mut term = terminal(w, h);
            let mut views = views();
            draw_on(&mut term, &ws, &mut views);
            for y in 0..h {
                for x in 0..w {
                    views.hit(x, y);
                }
            }
        }
    }
}

#[test]
fn many_chats_scroll_to_the_selection_and_say_how_many_are_hidden() {
    let mut ws = Workspace::new(vec!["demo".into()]);
    for i in 1..=14 {
        let mut s = chat("demo", &format!("s{i}"), Mode::Default);
        s.session.title = Some(format!("chat number {i}"));
        ws.add_chat(s);
    }
    key(&mut ws, Action::Key(Key::ctrl(Code::Char('l'))));
    for _ in 0..6 {
        key(&mut ws, Action::key(Code::Up));
    }
    assert_eq!(ws.focus, ChatFocus::List { selected: 7 });
    let mut out = String::new();
    for (w, h) in [(120, 24), (80, 24)] {
        out.push_str(&format!("── {w}x{h}\n{}", screen(&ws, w, h)));
    }
    assert!(out.contains("8 demo · chat number 8"), "{out}");
    assert_snapshot!(out);
}

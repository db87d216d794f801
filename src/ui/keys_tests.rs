//! Snapshots of what the key tables put on screen: the help overlay (F1,
//! or `?`) over the composer and over a card, and a card's hint line.

use crate::state::{Code, Key};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::tests::buffer_text;
use super::theme::Theme;
use super::{View, draw};
use crate::keys;
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, SessionInfo, ToolCallFields, ToolKind,
};
use crate::state::{Action, ChatState, Msg};

fn ready() -> ChatState {
    let mut state = ChatState::new("demo", "~/src/warden");
    state.update(Msg::SessionStarted(SessionInfo {
        session_id: "s1".into(),
        modes: None,
        origin: Default::default(),
    }));
    state
}

/// A chat with a turn running and one edit card.
fn with_card() -> ChatState {
    let mut state = ready();
    state.update(Msg::Action(Action::Paste("tidy the config".into())));
    state.update(Msg::Action(Action::key(Code::Enter)));
    state.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(PermissionRequest {
            session_id: "s1".into(),
            tool_call_id: "call-1".into(),
            fields: ToolCallFields {
                title: Some("Edit src/config.rs".into()),
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
        }),
    });
    state
}

fn screen(state: &ChatState, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let mut view = View::with_theme(Theme::with_color(false));
    let frame = term.draw(|f| draw(f, state, &mut view)).expect("draw");
    buffer_text(frame.buffer)
}

#[test]
fn help_over_the_composer_100x40() {
    let mut state = ready();
    state.update(Msg::Action(Action::key(Code::F(1))));
    let text = screen(&state, 100, 40);
    for row in keys::Context::Composer.rows('-').iter().take(5) {
        // Long help wraps: its first words are on a row of their own.
        let start: String = row.help.chars().take(30).collect();
        assert!(text.contains(&start), "{} is listed", row.help);
    }
    assert_snapshot!(text);
}

/// F1 lists every slash command of the table the composer runs them from
/// (issue 33: `/undo`, `/redo`, `/checkpoints`, `/changes`, `/remote` were
/// missing), each with what it does.
#[test]
fn help_lists_every_slash_command_of_the_table() {
    let mut state = ready();
    state.update(Msg::Action(Action::key(Code::F(1))));
    // Tall enough that the whole help fits: nothing scrolled away.
    let text = screen(&state, 120, 200);
    assert!(text.contains("any key closes this"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for (name, help, _) in crate::state::drafts::WARDEN_COMMANDS {
        let command = format!("│ /{name}");
        let line = lines
            .iter()
            .find(|l| l.starts_with(&command) && l[command.len()..].starts_with([' ', '\u{a0}']))
            .unwrap_or_else(|| panic!("/{name} is not in F1's list:\n{text}"));
        let start: String = help.chars().take(20).collect();
        assert!(line.contains(&start), "/{name}: {line}");
    }
    for name in ["undo", "redo", "checkpoints", "changes", "remote"] {
        assert!(text.contains(&format!("/{name} ")), "/{name}\n{text}");
    }
}

#[test]
fn help_over_a_card_100x30() {
    let mut state = with_card();
    state.update(Msg::Action(Action::ch('?')));
    assert!(state.view.help);
    let text = screen(&state, 100, 30);
    assert!(text.contains("Keys: on a card"));
    assert!(text.contains("allow once / deny"));
    assert_snapshot!(text);
}

#[test]
fn help_in_a_small_terminal_scrolls_40x12() {
    let mut state = ready();
    state.update(Msg::Action(Action::key(Code::F(1))));
    let text = screen(&state, 40, 12);
    assert!(text.contains("more"), "{text}");
    assert!(!text.contains("│ ↑ "), "nothing above yet: {text}");
    assert!(text.contains("↑↓ scroll · other keys close"), "{text}");
    assert_snapshot!(text);
    let first = keys::Context::Composer.rows('-')[0].keys.clone();
    assert!(text.contains(&first), "{first}\n{text}");
    for _ in 0..3 {
        state.update(Msg::Action(Action::key(Code::Down)));
    }
    assert!(state.view.help, "↑/↓ scroll, they do not close it");
    let scrolled = screen(&state, 40, 12);
    assert!(scrolled.contains("│ ↑ "), "{scrolled}");
    assert_ne!(text, scrolled);
    state.update(Msg::Action(Action::LineStart));
    assert_eq!(screen(&state, 40, 12), text, "Home goes back to the top");
    // Far past the end: the last line is at the bottom, nothing below.
    for _ in 0..500 {
        state.update(Msg::Action(Action::key(Code::Down)));
    }
    let end = screen(&state, 40, 12);
    assert!(!end.contains("│ ↓ "), "{end}");
    state.update(Msg::Action(Action::ch('x')));
    assert!(!state.view.help, "any other key closes it");
    assert_eq!(state.view.composer.text(), "", "and is not typed");
}

#[test]
fn card_hint_line_comes_from_the_card_table_100x30() {
    let state = with_card();
    let text = screen(&state, 100, 30);
    // The full hint line (wrapped at the card's width) is on screen: its
    // first hints and its last.
    let card = |h: keys::Hint| matches!(h, keys::Hint::Card | keys::Hint::CardShort);
    let mut hints: Vec<String> = keys::hints(&crate::state::choice_bindings(), card);
    hints.extend(keys::hints(keys::CARDS, card));
    let first = hints[..3].join(" · ");
    assert!(text.contains(&first), "{first}\n{text}");
    assert!(text.contains(&hints[hints.len() - 1]), "{text}");
    assert_snapshot!(text);
}

#[test]
fn help_over_the_chat_list_80x24() {
    let mut ws = crate::state::Workspace::new(vec!["demo".into()]);
    ws.add_chat(ready());
    ws.update(crate::state::WsMsg::Action(Action::Key(Key::ctrl(
        Code::Char('l'),
    ))));
    ws.update(crate::state::WsMsg::Action(Action::ch('?')));
    assert!(ws.help);
    let mut term = Terminal::new(TestBackend::new(80, 24)).expect("test terminal");
    let mut views = super::Views::with_theme(Theme::with_color(false));
    let frame = term
        .draw(|f| super::draw_workspace(f, &ws, &mut views))
        .expect("draw");
    let text = buffer_text(frame.buffer);
    assert!(text.contains("Keys: the chat list"), "{text}");
    assert!(text.contains("hide / show the sidebar"), "{text}");
    assert_snapshot!(text);
}

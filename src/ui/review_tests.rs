//! Snapshots and behaviour of the review screen (Ctrl-G): bypasses, rules and
//! grants, revoking with confirmation, and the footer naming it.

use crate::state::{Code, Key};
use insta::assert_snapshot;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::footer;
use super::gate_tests::*;
use super::tests::buffer_text;
use super::theme::Theme;
use crate::model::ToolKind;
use crate::policy::{ChatGrant, KindMatch, Rule, RuleDecision};
use crate::state::{Action, ChatState, Modal, Msg};

/// A chat with one agent on bypass, two rules (the second with a note) and
/// one "allow for this chat" grant, its review screen open.
fn reviewing() -> ChatState {
    let mut state = chat(None);
    state.gate.bypassed_agents = vec!["claude-code".into()];
    let mut run_tests = Rule::new(RuleDecision::Allow);
    run_tests.agent = Some("claude-code".into());
    run_tests.kind = Some("execute".parse::<KindMatch>().expect("kind"));
    run_tests.command = Some("cargo test *".into());
    let mut keys = Rule::new(RuleDecision::Deny);
    keys.kind = Some("read".parse::<KindMatch>().expect("kind"));
    keys.path = Some("~/.ssh/**".into());
    keys.note = Some("keys stay private, whoever asks and whatever the mode".into());
    state.gate.rules = vec![run_tests, keys];
    state.gate.grants = vec![ChatGrant {
        kind: ToolKind::Edit,
        tool: "Edit".into(),
        commands: None,
        host: None,
    }];
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('g')))));
    state
}

#[test]
fn review_screen_second_selected_80x24() {
    let mut state = reviewing();
    state.update(Msg::Action(Action::key(Code::Down)));
    assert_eq!(
        state.view.focus.modal,
        Some(Modal::Rules {
            selected: 1,
            confirm: false
        })
    );
    assert_snapshot!(screen(&state, 80, 24));

    // The selected line is reversed, the others are not.
    let mut term = terminal(80, 24);
    let mut view = view();
    let text = draw_on(&mut term, &state, &mut view);
    let buf = term.backend().buffer().clone();
    for (text_at, reversed) in [
        ("rule 1: allow", true),
        ("bypass: every", false),
        ("rule 2: deny", false),
        ("this chat: allow", false),
    ] {
        let cell = style_at(&buf, &text, text_at);
        assert_eq!(
            cell.modifier.contains(Modifier::REVERSED),
            reversed,
            "{text_at}"
        );
    }
}

#[test]
fn review_screen_second_selected_120x40() {
    let mut state = reviewing();
    state.update(Msg::Action(Action::key(Code::Down)));
    assert_snapshot!(screen(&state, 120, 40));
}

#[test]
fn review_screen_revoke_confirmation_80x24() {
    let mut state = reviewing();
    state.update(Msg::Action(Action::key(Code::Down)));
    state.update(Msg::Action(Action::ch('d')));
    assert_eq!(
        state.view.focus.modal,
        Some(Modal::Rules {
            selected: 1,
            confirm: true
        })
    );
    assert_snapshot!(screen(&state, 80, 24));
}

#[test]
fn review_screen_revoke_confirmation_120x40() {
    let mut state = reviewing();
    state.update(Msg::Action(Action::key(Code::Down)));
    state.update(Msg::Action(Action::ch('d')));
    assert_snapshot!(screen(&state, 120, 40));
}

#[test]
fn review_screen_empty_80x24() {
    let mut state = chat(None);
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('g')))));
    assert!(state.grant_items().is_empty());
    assert_snapshot!(screen(&state, 80, 24));
}

#[test]
fn review_screen_takes_every_click() {
    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('g')))));
    let mut term = terminal(100, 36);
    let mut view = view();
    draw_on(&mut term, &state, &mut view);
    for (x, y) in [(0, 0), (3, 20), (50, 30), (0, 35), (10, 35)] {
        assert_eq!(view.hit(x, y), None, "({x}, {y})");
    }
}

#[test]
fn review_screen_scrolls_to_keep_the_selection_in_view() {
    let mut state = reviewing();
    state.gate.rules = (0..30)
        .map(|i| {
            let mut rule = Rule::new(RuleDecision::Allow);
            rule.kind = Some("execute".parse::<KindMatch>().expect("kind"));
            rule.command = Some(format!("tool-{i:02} *"));
            rule
        })
        .collect();
    let mut term = terminal(80, 24);
    let mut view = view();
    let first = draw_on(&mut term, &state, &mut view);
    assert!(first.contains("Bypass"), "{first}");
    assert!(first.contains("↓ "), "{first}");
    assert!(!first.contains("tool-29"), "{first}");

    let last = state.grant_items().len() - 1;
    for _ in 0..last {
        state.update(Msg::Action(Action::key(Code::Down)));
    }
    let bottom = draw_on(&mut term, &state, &mut view);
    assert!(bottom.contains("this chat: allow edit calls"), "{bottom}");
    assert!(bottom.contains("↑ "), "{bottom}");
    assert!(!bottom.contains("Bypass"), "{bottom}");

    // Going back up a few moves the selection, not the list.
    for _ in 0..3 {
        state.update(Msg::Action(Action::key(Code::Up)));
    }
    let up = draw_on(&mut term, &state, &mut view);
    assert_eq!(
        row_of("tool-29", &up),
        row_of("tool-29", &bottom),
        "{bottom}\n{up}"
    );
    let buf = term.backend().buffer().clone();
    let cell = style_at(&buf, &up, "rule 28:");
    assert!(cell.modifier.contains(Modifier::REVERSED), "{up}");
    let cell = style_at(&buf, &up, "rule 29:");
    assert!(!cell.modifier.contains(Modifier::REVERSED), "{up}");

    // Back at the top, the first heading shows again.
    for _ in 0..last {
        state.update(Msg::Action(Action::key(Code::Up)));
    }
    let top = draw_on(&mut term, &state, &mut view);
    assert_eq!(top, first);
}

#[test]
fn review_screen_shows_agent_names_visibly() {
    let mut state = chat(None);
    state.gate.bypassed_agents = vec!["evil\u{1b}[31magent".into()];
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('g')))));
    state.update(Msg::Action(Action::ch('d')));
    let text = screen(&state, 120, 40);
    assert!(text.contains("`evil␛[31magent`"), "{text}");
    assert!(
        text.contains("Revoke bypass: every request of `evil␛[31magent`"),
        "{text}"
    );
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
}

#[test]
fn footer_names_the_review_screen_at_the_usual_width() {
    let state = chat(None);
    let line = |width: u16| {
        let area = Rect::new(0, 0, width, 1);
        let mut buf = Buffer::empty(area);
        footer::render(&mut buf, area, &state, Theme::with_color(true));
        buffer_text(&buf)
    };
    let wide = line(160);
    assert!(
        wide.contains("PgUp/PgDn scroll · Ctrl-T thoughts · Ctrl-G rules"),
        "{wide}"
    );
    let usual = line(120);
    assert!(
        usual.contains("Ctrl-G rules"),
        "shown at 120 columns: {usual}"
    );
    assert!(
        !usual.contains("PgUp"),
        "scrolling is dropped first: {usual}"
    );
    let narrower = line(80);
    assert!(!narrower.contains("Ctrl-G"), "{narrower}");
}

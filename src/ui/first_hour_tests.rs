//! Snapshots of what a newcomer's first hour showed wrong (issue 25): a
//! card with a long diff at 80x24 keeps its choices and keys in sight, the
//! footer keeps a hint beside BYPASS and another chat's requests, and says
//! how long and how many tokens the turn took so far; the open mode
//! dropdown lists each mode once and ends above the message box.

use std::time::{Duration, Instant};

use insta::assert_snapshot;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::footer;
use super::gate_tests::{agent_modes, asking, chat, claude_options, request, screen};
use super::tests::buffer_text;
use super::theme::Theme;
use crate::model::{SessionUpdate, ToolCallFields, ToolContent, ToolKind, Usage};
use crate::state::{Action, ChatState, Code, Msg};

/// A Write of a new 60-line file: its diff is far taller than the card.
fn long_write() -> crate::model::PermissionRequest {
    let new: String = (1..=60)
        .map(|i| format!("line {i} of the new file\n"))
        .collect();
    request(
        "call-write",
        ToolCallFields {
            title: Some("Write src/long.rs".into()),
            kind: Some(ToolKind::Edit),
            content: Some(vec![ToolContent::Diff {
                path: "src/long.rs".into(),
                old: None,
                new,
            }]),
            tool_name: Some("Write".into()),
            ..Default::default()
        },
        claude_options(),
    )
}

#[test]
fn card_with_a_long_diff_keeps_choices_and_keys_80x24() {
    let mut state = asking(vec![long_write()]);
    let text = screen(&state, 80, 24);
    // Below 30 rows the choices fold into one row; `e` shows them all.
    for want in [
        "y allow · n deny · a chat · r reason · e more",
        "Tab next",
        "more · Shift-↓",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    state.update(Msg::Action(Action::ch('e')));
    let all = screen(&state, 80, 24);
    for want in [
        "allow once",
        "Deny with a reason",
        "Approve all pending",
        "y allow",
    ] {
        assert!(all.contains(want), "{want}: {all}");
    }
    // The marker is on a row of its own content, never on a choice.
    for line in text.lines().filter(|l| l.contains("Shift-↓")) {
        assert!(!line.contains('“'), "the marker is on a choice: {line}");
    }
    assert_snapshot!(text);
}

/// A bypassed chat, one of two, while its turn has run 75 s and added
/// 4.3k tokens; the other chat has a request waiting.
fn bypassed_and_working() -> ChatState {
    let mut state = chat(None);
    state.gate.agent_policy.bypass = true;
    let t0 = Instant::now();
    state.update(Msg::Tick(t0));
    state.update(Msg::Action(Action::Paste("tidy the config".into())));
    state.update(Msg::Action(Action::key(Code::Enter)));
    for used in [8_000, 12_300] {
        state.update(Msg::Update(SessionUpdate::Usage(Usage {
            used: Some(used),
            size: Some(200_000),
            ..Usage::default()
        })));
    }
    state.update(Msg::Tick(t0 + Duration::from_secs(75)));
    assert!(state.is_busy());
    state
}

#[test]
fn footer_with_bypass_two_chats_and_a_working_turn() {
    let state = bypassed_and_working();
    let chats = footer::Chats {
        position: Some((2, 2)),
        waiting: Some(footer::Waiting {
            chat: 1,
            pending: 1,
            more: 0,
        }),
    };
    let mut out = String::new();
    for (label, chats) in [("alone", footer::Chats::default()), ("two chats", chats)] {
        for width in [160, 120, 100, 80] {
            let area = Rect::new(0, 0, width, 1);
            let mut buf = Buffer::empty(area);
            footer::render_with(&mut buf, area, &state, chats, Theme::with_color(true));
            let line = buffer_text(&buf);
            assert!(line.contains("BYPASS"), "{label} {width}: {line}");
            // The rules key outlasts the other hints while BYPASS shows.
            if label == "alone" || width >= 120 {
                assert!(line.contains("Ctrl-G rules"), "{label} {width}: {line}");
            }
            out.push_str(&format!("{label:<9} {width:>3} |{line}"));
        }
    }
    assert!(
        out.contains("● working 1m 15s · 4.3k tokens · Esc cancel"),
        "{out}"
    );
    assert_snapshot!(out);
}

#[test]
fn mode_dropdown_open_80x24() {
    let mut state = chat(Some(agent_modes()));
    state.update(Msg::Action(Action::OpenModeMenu));
    let text = screen(&state, 80, 24);
    // warden's modes once each, then the agent's own under their heading.
    for row in ["Plan     read", "Default  reads", "Auto     every"] {
        assert_eq!(text.matches(row).count(), 1, "{row}: {text}");
    }
    assert_eq!(text.matches("'s own modes").count(), 1, "{text}");
    // The dropdown's bottom border is its own row, above the message box's top.
    let lines: Vec<&str> = text.lines().collect();
    let composer_top = lines
        .iter()
        .rposition(|l| l.starts_with('╭'))
        .expect("the message box");
    assert!(
        lines[composer_top - 1].starts_with('╰') && lines[composer_top - 1].ends_with('╯'),
        "{text}"
    );
    assert_snapshot!(text);
}

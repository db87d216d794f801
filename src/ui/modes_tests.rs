//! Snapshots of what warden shows about trust widening: the bypass
//! question on a card, the question before a mode change approves waiting
//! cards, and the `BYPASS` badge in the footer and the chat list.

use crate::state::{Code, Key};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::tests::buffer_text;
use super::theme::Theme;
use super::{View, Views, draw, draw_workspace, footer};
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, SessionInfo, ToolCallFields, ToolKind,
};
use crate::policy::Mode;
use crate::state::{Action, ChatState, Msg, Question, Workspace};

fn request(tool: &str, title: &str, kind: ToolKind) -> PermissionRequest {
    PermissionRequest {
        session_id: "s1".into(),
        tool_call_id: tool.into(),
        fields: ToolCallFields {
            title: Some(title.into()),
            kind: Some(kind),
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

/// A connected chat of `agent` with two edit cards waiting.
fn two_cards(agent: &str) -> ChatState {
    let mut state = ChatState::new(agent, "~/src/warden");
    state.gate.agent_policy.name = agent.into();
    state.update(Msg::SessionStarted(SessionInfo {
        session_id: "s1".into(),
        modes: None,
        origin: Default::default(),
    }));
    state.update(Msg::Action(Action::Paste("tidy the config".into())));
    state.update(Msg::Action(Action::key(Code::Enter)));
    for (id, (tool, title)) in (1..).zip([
        ("call-1", "Edit src/config.rs"),
        ("call-2", "Edit tests/config.rs"),
    ]) {
        state.update(Msg::PermissionRequested {
            id,
            request: Box::new(request(tool, title, ToolKind::Edit)),
        });
    }
    assert_eq!(state.gate.approvals.len(), 2);
    state
}

fn screen(state: &ChatState, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let mut view = View::with_theme(Theme::with_color(true));
    let completed = term.draw(|f| draw(f, state, &mut view)).expect("draw");
    buffer_text(completed.buffer)
}

#[test]
fn bypass_question_100x30() {
    let mut state = two_cards("claude-code");
    state.update(Msg::Action(Action::ch('b')));
    assert_eq!(
        state.view.focus.modal,
        Some(crate::state::Modal::Confirm(Question::Bypass(1)))
    );
    assert!(!state.gate.agent_policy.bypass, "nothing is bypassed yet");
    let text = screen(&state, 100, 30);
    assert!(text.contains("Bypass claude-code from now on?"), "{text}");
    assert_snapshot!(text);
}

#[test]
fn mode_change_question_100x30() {
    let mut state = two_cards("claude-code");
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    state.update(Msg::Action(Action::key(Code::BackTab)));
    assert_eq!(state.gate.mode, Mode::Auto);
    assert_eq!(state.gate.approvals.len(), 2, "nothing approved unseen");
    let text = screen(&state, 100, 30);
    assert!(
        text.contains("The 2 waiting cards would now be allowed"),
        "{text}"
    );
    assert_snapshot!(text);
}

#[test]
fn footer_says_bypass() {
    let mut state = two_cards("claude-code");
    state.update(Msg::Action(Action::ch('b')));
    state.update(Msg::Action(Action::ch('y')));
    assert!(state.gate.agent_policy.bypass);
    let mut out = String::new();
    for width in [120, 80, 40] {
        let area = Rect::new(0, 0, width, 1);
        let mut buf = Buffer::empty(area);
        footer::render(&mut buf, area, &state, Theme::with_color(true));
        out.push_str(&format!("{width:>3} |{}", buffer_text(&buf)));
    }
    assert!(out.contains("BYPASS"), "{out}");
    assert_snapshot!(out);
}

#[test]
fn chat_list_says_bypass_120x30() {
    let mut ws = Workspace::new(vec!["claude-code".into(), "gemini".into()]);
    let mut bypassed = two_cards("claude-code");
    bypassed.gate.agent_policy.bypass = true;
    ws.add_chat(bypassed);
    ws.add_chat(two_cards("gemini"));
    let mut term = Terminal::new(TestBackend::new(120, 30)).expect("test terminal");
    let mut views = Views::with_theme(Theme::with_color(true));
    let completed = term
        .draw(|f| draw_workspace(f, &ws, &mut views))
        .expect("draw");
    let text = buffer_text(completed.buffer);
    assert_eq!(text.matches("BYPASS").count(), 1, "{text}");
    assert_snapshot!(text);
}

#[test]
fn footer_says_when_the_agent_enforces_plan() {
    let mut state = two_cards("claude-code");
    state.gate.mode = Mode::Plan;
    let line = |state: &ChatState| {
        let area = Rect::new(0, 0, 120, 1);
        let mut buf = Buffer::empty(area);
        footer::render(&mut buf, area, state, Theme::with_color(true));
        buffer_text(&buf)
    };
    let text = line(&state);
    assert!(text.contains("⏵ Plan ▾"), "{text}");
    state.gate.agent_plan_mode = Some("plan".into());
    let text = line(&state);
    assert!(text.contains("⏵ Plan (agent-enforced) ▾"), "{text}");
}

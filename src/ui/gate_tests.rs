//! Snapshots and behaviour of the permission gate on screen: approval cards,
//! the footer's mode slot and pending count, the mode dropdown, clicks.

use crate::state::{Code, Key};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use serde_json::json;

use super::tests::buffer_text;
use super::theme::Theme;
use super::{View, draw, footer};
use crate::model::{
    AgentMode, AgentModes, Location, OptionKind, PermissionOption, PermissionRequest, SessionInfo,
    ToolCallFields, ToolContent, ToolKind,
};
use crate::policy::{ChatGrant, KindMatch, Mode, RequestView, Rule, RuleDecision};
use crate::state::{Action, Approval, ChatState, Composer, Focus, Modal, ModeItem, Msg, Pane};

pub(super) fn view() -> View {
    View::with_theme(Theme::with_color(true))
}

pub(super) fn terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(width, height)).expect("test terminal")
}

/// Draw once; the screen as text, and the cursor when it is shown.
pub(super) fn draw_on(
    term: &mut Terminal<TestBackend>,
    state: &ChatState,
    view: &mut View,
) -> String {
    term.hide_cursor().expect("hide cursor");
    let completed = term.draw(|f| draw(f, state, view)).expect("draw");
    buffer_text(completed.buffer)
}

/// The screen at `width` x `height`, with the cursor's place when it shows.
pub(super) fn screen(state: &ChatState, width: u16, height: u16) -> String {
    let mut term = terminal(width, height);
    let mut view = view();
    let mut text = draw_on(&mut term, state, &mut view);
    let visible = term.backend().cursor_visible();
    if visible {
        let at = term.get_cursor_position().expect("cursor");
        text.push_str(&format!("cursor: ({}, {})\n", at.x, at.y));
    } else {
        text.push_str("cursor: hidden\n");
    }
    text
}

pub(super) use crate::test_support::{claude_options, option, permission_request as request};

const OLD: &str = "use std::env;\n\npub fn home() -> String {\n    env::var(\"HOME\").unwrap()\n}\n\npub fn load() -> Config {\n    Config::from(home())\n}\n";
const NEW: &str = "use std::env;\n\npub fn home() -> Option<String> {\n    env::var(\"HOME\").ok()\n}\n\npub fn load() -> Config {\n    Config::from(home())\n}\n";

pub(super) fn edit_request() -> PermissionRequest {
    request(
        "call-edit",
        ToolCallFields {
            title: Some("Edit src/config.rs".into()),
            kind: Some(ToolKind::Edit),
            content: Some(vec![ToolContent::Diff {
                path: "src/config.rs".into(),
                old: Some(OLD.into()),
                new: NEW.into(),
            }]),
            locations: Some(vec![Location {
                path: "src/config.rs".into(),
                line: Some(3),
            }]),
            raw_input: Some(json!({
                "file_path": "src/config.rs",
                "old_string": "pub fn home() -> String {\n    env::var(\"HOME\").unwrap()",
                "new_string": "pub fn home() -> Option<String> {\n    env::var(\"HOME\").ok()"
            })),
            tool_name: Some("Edit".into()),
            ..Default::default()
        },
        claude_options(),
    )
}

pub(super) fn execute_request() -> PermissionRequest {
    request(
        "call-run",
        ToolCallFields {
            title: Some("cargo test && rm -rf target".into()),
            kind: Some(ToolKind::Execute),
            raw_input: Some(json!({
                "command": "cargo test && rm -rf target",
                "description": "Run tests"
            })),
            tool_name: Some("Bash".into()),
            ..Default::default()
        },
        claude_options(),
    )
}

const PLAN: &str = "## Plan: make the config test hermetic

1. Read `HOME` through **`home()`**, which returns an `Option`
2. Create a `tempfile::tempdir()` in the test
3. Run the whole suite

> Nothing outside `src/config.rs` and `tests/` changes.
";

pub(super) fn switch_mode_request() -> PermissionRequest {
    request(
        "call-plan",
        ToolCallFields {
            title: Some("Ready to code?".into()),
            kind: Some(ToolKind::SwitchMode),
            raw_input: Some(json!({ "plan": PLAN })),
            tool_name: Some("ExitPlanMode".into()),
            ..Default::default()
        },
        vec![
            option(
                "acceptEdits",
                "Yes, and auto-accept edits",
                OptionKind::AllowAlways,
            ),
            option(
                "default",
                "Yes, and manually approve edits",
                OptionKind::AllowOnce,
            ),
            option("plan", "No, keep planning", OptionKind::RejectOnce),
        ],
    )
}

/// A write of a long file: many JSON rows once pretty-printed and wrapped.
pub(super) fn long_request() -> PermissionRequest {
    let body: Vec<String> = (1..=12)
        .map(|i| format!("- item {i}: a line of the notes file that is long enough to wrap"))
        .collect();
    let edits: Vec<serde_json::Value> = (1..=4)
        .map(|i| json!({ "old_string": format!("old {i}"), "new_string": format!("new {i}") }))
        .collect();
    request(
        "call-write",
        ToolCallFields {
            title: Some("Write notes.md".into()),
            kind: Some(ToolKind::Edit),
            raw_input: Some(json!({
                "file_path": "notes.md",
                "content": body.join("\n"),
                "edits": edits,
            })),
            tool_name: Some("Write".into()),
            ..Default::default()
        },
        claude_options(),
    )
}

/// A connected chat in Default mode, as claude-code.
pub(super) fn chat(modes: Option<AgentModes>) -> ChatState {
    let mut state = ChatState::new("claude-code", "~/src/warden");
    state.update(Msg::SessionStarted(SessionInfo {
        session_id: "s1".into(),
        modes,
        origin: Default::default(),
    }));
    state.session.transcript.push(crate::state::EntryKind::User(
        "Make the config test hermetic.".into(),
    ));
    state
}

pub(super) fn agent_modes() -> AgentModes {
    let mode = |id: &str, name: &str| AgentMode {
        id: id.into(),
        name: name.into(),
        description: None,
    };
    AgentModes {
        current: "default".into(),
        available: vec![
            mode("default", "Default"),
            mode("acceptEdits", "Accept Edits"),
            mode("plan", "Plan Mode"),
            mode("bypassPermissions", "Bypass Permissions"),
        ],
        config_option_id: None,
    }
}

/// A chat with these requests asked through the real policy.
pub(super) fn asking(requests: Vec<PermissionRequest>) -> ChatState {
    let mut state = chat(None);
    for (id, req) in (1..).zip(requests) {
        state.update(Msg::PermissionRequested {
            id,
            request: Box::new(req),
        });
    }
    assert!(!state.gate.approvals.is_empty(), "the policy asks");
    state
}

#[test]
fn card_edit_with_diff_100x36() {
    let state = asking(vec![edit_request()]);
    assert_eq!(state.view.focus, Focus::CARDS);
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn card_edit_with_diff_80x24() {
    let state = asking(vec![edit_request()]);
    assert_snapshot!(screen(&state, 80, 24));
}

#[test]
fn card_execute_100x36() {
    let state = asking(vec![execute_request()]);
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn card_switch_mode_plan_100x36() {
    let state = asking(vec![switch_mode_request()]);
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn card_long_input_collapsed_100x36() {
    let state = asking(vec![long_request()]);
    assert!(!state.view.cursor.expanded);
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn card_long_input_expanded_100x36() {
    let mut state = asking(vec![long_request()]);
    state.update(Msg::Action(Action::ch('e')));
    assert!(state.view.cursor.expanded);
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn card_long_input_expanded_scrolled_100x36() {
    let mut state = asking(vec![long_request()]);
    state.update(Msg::Action(Action::ch('e')));
    for _ in 0..2 {
        state.update(Msg::Action(Action::Key(Key::shift(Code::Down))));
    }
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn queue_of_three_second_selected_100x36() {
    let mut state = asking(vec![edit_request(), execute_request(), long_request()]);
    state.update(Msg::Action(Action::key(Code::Tab)));
    state.update(Msg::Action(Action::key(Code::Down)));
    assert_eq!(state.view.cursor.selected, 1);
    assert_eq!(state.view.cursor.choice, 2, "from the allow once, one down");
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn queue_of_three_second_selected_80x24() {
    let mut state = asking(vec![edit_request(), execute_request(), long_request()]);
    state.update(Msg::Action(Action::key(Code::Tab)));
    assert_snapshot!(screen(&state, 80, 24));
}

#[test]
fn reason_field_80x24() {
    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Action(Action::ch('r')));
    for c in "deletes the build cache".chars() {
        state.update(Msg::Action(Action::ch(c)));
    }
    assert!(matches!(
        state.view.focus.modal,
        Some(crate::state::Modal::Reason { .. })
    ));
    assert_snapshot!(screen(&state, 80, 24));
}

#[test]
fn approve_all_confirmation_100x36() {
    let mut state = asking(vec![edit_request(), execute_request()]);
    state.update(Msg::Action(Action::ch('A')));
    assert!(matches!(
        state.view.focus.modal,
        Some(crate::state::Modal::ConfirmAll(_))
    ));
    assert_snapshot!(screen(&state, 100, 36));
}

/// The footer's mode slot and the dropdown, over a short transcript.
#[test]
fn footer_and_mode_dropdown_100x16() {
    let mut out = String::new();
    let mut show = |label: &str, state: &ChatState| {
        out.push_str(&format!("── {label}\n{}", screen(state, 100, 16)));
    };
    let mut state = chat(None);
    show("closed", &state);
    state.update(Msg::Action(Action::OpenModeMenu));
    show("open, warden's modes only (Default current)", &state);

    let mut state = chat(Some(agent_modes()));
    state.update(Msg::Action(Action::key(Code::BackTab)));
    state.update(Msg::Action(Action::key(Code::BackTab)));
    assert_eq!(state.gate.mode, Mode::Plan);
    show("closed, Plan, agent modes", &state);
    state.update(Msg::Action(Action::OpenModeMenu));
    state.update(Msg::Action(Action::key(Code::Down)));
    state.update(Msg::Action(Action::key(Code::Down)));
    state.update(Msg::Action(Action::key(Code::Down)));
    assert_eq!(
        state.view.focus.modal,
        Some(crate::state::Modal::ModeMenu(3))
    );
    show("open, agent modes, agent's Default highlighted", &state);
    assert_snapshot!(out);
}

#[test]
fn footer_with_pending_cards() {
    let mut state = asking(vec![edit_request(), execute_request()]);
    state.view.composer.insert_str("half-typed");
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    assert_eq!(state.view.focus, Focus::COMPOSER);
    let mut auto = state.clone();
    auto.gate.mode = Mode::Auto;
    auto.session.agent_modes = Some(agent_modes());
    let mut out = String::new();
    for (label, state) in [("default", &state), ("auto+agent", &auto)] {
        for width in [120, 80, 50, 30] {
            let area = Rect::new(0, 0, width, 1);
            let mut buf = Buffer::empty(area);
            footer::render(&mut buf, area, state, Theme::with_color(true));
            out.push_str(&format!("{label:<10} {width:>3} |{}", buffer_text(&buf)));
        }
    }
    out.push_str(&format!("── whole screen\n{}", screen(&state, 100, 36)));
    assert_snapshot!(out);
}

/// The row of the screen that contains `text`.
pub(super) fn row_of(text: &str, screen: &str) -> u16 {
    let row = screen
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("{text:?} not on screen:\n{screen}"));
    u16::try_from(row).expect("row")
}

#[test]
fn clicks_on_choices_mode_slot_and_dropdown() {
    let state = asking(vec![execute_request()]);
    let mut term = terminal(100, 36);
    let mut view = view();
    assert_eq!(view.hit(5, 5), None, "nothing before the first draw");
    let text = draw_on(&mut term, &state, &mut view);
    let labels = [
        "1  allow always  “Always Allow”",
        "2  allow once  “Allow”",
        "3  reject  “Reject”",
        "a  Allow for this chat",
        "b  Bypass claude-code",
        "r  Deny with a reason…",
        "A  Approve all pending (1)",
    ];
    let list = &state.gate.approvals[0].card.rows;
    assert_eq!(list.len(), labels.len());
    for (i, label) in labels.iter().enumerate() {
        let row = row_of(label, &text);
        assert_eq!(view.hit(3, row), Some(Action::ClickChoice(i)), "{label}");
        assert_eq!(view.hit(90, row), Some(Action::ClickChoice(i)), "{label}");
        assert_eq!(view.hit(0, row), None, "the border is not a choice");
    }
    let header = row_of("Permission · ", &text);
    assert_eq!(view.hit(5, header), None);

    let footer = 35;
    assert_eq!(view.hit(0, footer), Some(Action::OpenModeMenu));
    assert_eq!(view.hit(10, footer), Some(Action::OpenModeMenu));
    assert_eq!(view.hit(40, footer), None);

    // The click goes through the state as the runtime would send it.
    let mut state = state;
    if let Some(action) = view.hit(0, footer) {
        state.update(Msg::Action(action));
    }
    assert!(matches!(
        state.view.focus.modal,
        Some(crate::state::Modal::ModeMenu(_))
    ));
    let text = draw_on(&mut term, &state, &mut view);
    let items = state.mode_menu_items();
    for (i, label) in ["● Default", "Plan ", "Auto "].iter().enumerate() {
        let row = row_of(label, &text);
        let index = match i {
            0 => 1,
            1 => 0,
            _ => 2,
        };
        assert_eq!(items[index], ModeItem::Chat(Mode::ALL[index]));
        assert_eq!(
            view.hit(4, row),
            Some(Action::PickModeItem(index)),
            "{label}"
        );
    }
    // The dropdown covers what is under it.
    let title = row_of("warden's modes", &text);
    assert_eq!(view.hit(4, title), None);
    let auto = row_of("Auto ", &text);
    if let Some(action) = view.hit(4, auto) {
        state.update(Msg::Action(action));
    }
    assert_eq!(state.gate.mode, Mode::Auto);
}

#[test]
fn clicks_follow_a_scrolled_card() {
    let mut state = asking(vec![long_request()]);
    state.update(Msg::Action(Action::ch('e')));
    let mut term = terminal(80, 24);
    let mut view = view();
    let before = draw_on(&mut term, &state, &mut view);
    state.update(Msg::Action(Action::Key(Key::shift(Code::Down))));
    let after = draw_on(&mut term, &state, &mut view);
    assert_ne!(before, after, "the request part scrolled");
    let row = row_of("r  Deny with a reason…", &after);
    assert_eq!(view.hit(4, row), Some(Action::ClickChoice(5)));
}

#[test]
fn agent_text_on_a_card_is_made_visible() {
    let evil = "\u{1b}[31mrm -rf /\u{1b}[0m\u{7}";
    let mut req = execute_request();
    req.fields.title = Some(evil.into());
    req.fields.raw_input = Some(json!({ "command": evil, "note": "a\u{202E}b" }));
    req.fields.locations = Some(vec![Location {
        path: evil.into(),
        line: None,
    }]);
    req.options[0].name = evil.into();
    let mut state = ChatState::new("agent\u{1b}]0;x\u{7}", "~");
    state.update(Msg::SessionStarted(SessionInfo {
        session_id: "s1".into(),
        modes: Some(AgentModes {
            current: "m".into(),
            available: vec![AgentMode {
                id: "m".into(),
                name: evil.into(),
                description: None,
            }],
            config_option_id: None,
        }),
        origin: Default::default(),
    }));
    state.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req.clone()),
    });
    state.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(req),
    });
    let mut term = terminal(100, 48);
    let mut view = view();
    let text = draw_on(&mut term, &state, &mut view);
    assert!(text.contains("▏ ␛[31mrm -rf /␛[0m␇"), "{text}");
    assert!(text.contains("▸ 2 of 2  ␛[31mrm -rf /␛[0m␇"), "{text}");
    assert!(
        text.contains("1  allow always  “␛[31mrm -rf /␛[0m␇”"),
        "{text}"
    );
    assert!(text.contains("a<U+202E>b"), "{text}");
    assert!(text.contains("Bypass agent␛]0;x␇"), "{text}");
    state.update(Msg::Action(Action::OpenModeMenu));
    let menu = draw_on(&mut term, &state, &mut view);
    assert!(menu.contains("● ␛[31mrm -rf /␛[0m␇"), "{menu}");
    for screen in [&text, &menu] {
        assert!(
            !screen.chars().any(|c| c.is_control() && c != '\n'),
            "{screen:?}"
        );
    }
}

/// The style of the cell where `text` starts.
pub(super) fn style_at(buf: &Buffer, screen: &str, text: &str) -> ratatui::buffer::Cell {
    let row = row_of(text, screen);
    let line = screen.lines().nth(usize::from(row)).unwrap_or("");
    let byte = line.find(text).unwrap_or(0);
    let col = super::wrap::str_width(&line[..byte]);
    buf[(u16::try_from(col).expect("col"), row)].clone()
}

#[test]
fn choices_are_coloured_and_the_highlight_follows_focus() {
    let mut state = asking(vec![execute_request()]);
    let mut term = terminal(100, 36);
    let mut view = view();
    let text = draw_on(&mut term, &state, &mut view);
    let buf = term.backend().buffer().clone();
    assert_eq!(style_at(&buf, &text, "allow always").fg, Color::Green);
    assert_eq!(style_at(&buf, &text, "reject  “Reject”").fg, Color::Red);
    // Enter on a fresh card is the plain allow once, never Claude's
    // "Always Allow" listed first (issue 22, item 9).
    let first = style_at(&buf, &text, "1  allow always");
    assert!(!first.modifier.contains(Modifier::REVERSED), "{first:?}");
    let second = style_at(&buf, &text, "2  allow once");
    assert!(second.modifier.contains(Modifier::REVERSED), "{second:?}");
    assert_eq!(
        style_at(&buf, &text, "╭").fg,
        Color::Yellow,
        "a focused card has a loud border"
    );

    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    assert_eq!(state.view.focus, Focus::COMPOSER);
    let text = draw_on(&mut term, &state, &mut view);
    let buf = term.backend().buffer().clone();
    let second = style_at(&buf, &text, "2  allow once");
    assert!(!second.modifier.contains(Modifier::REVERSED));
    assert_eq!(style_at(&buf, &text, "╭").fg, Color::DarkGray);
    assert_eq!(
        style_at(&buf, &text, "1 pending · Ctrl-P review").fg,
        Color::Yellow
    );
    assert_eq!(
        view.hit(
            u16::try_from(
                text.lines()
                    .last()
                    .unwrap_or("")
                    .find("1 pending")
                    .unwrap_or(0)
            )
            .unwrap_or(0),
            35
        ),
        Some(Action::ToggleCards)
    );
}

#[test]
fn card_scroll_is_clamped() {
    let mut state = asking(vec![long_request()]);
    state.update(Msg::Action(Action::ch('e')));
    state.view.cursor.scroll = 10_000;
    let far = screen(&state, 80, 24);
    state.view.cursor.scroll = 200;
    assert_eq!(screen(&state, 80, 24), far);
    assert!(far.contains("↑"), "{far}");
    assert!(!far.contains("↓ "), "at the end: {far}");
}

#[test]
fn an_approval_built_by_hand_renders() {
    let req = edit_request();
    let view_ = RequestView::from_request(&req, None);
    let mut state = chat(None);
    state.gate.approvals.push(Approval {
        id: 7,
        category: view_.category(),
        grant: ChatGrant::for_request(&view_),
        view: view_,
        request: req,
        reason: "an ask rule: edits of src/**".into(),
        readings: Vec::new(),
        lookalike: None,
        card: Default::default(),
        shown_at: None,
    });
    state.gate.approvals[0].card = state.card_view(&state.gate.approvals[0]);
    state.view.focus = Focus {
        pane: Pane::Cards,
        modal: Some(Modal::Reason {
            card: 7,
            field: Composer::default(),
        }),
    };
    let text = screen(&state, 100, 36);
    assert!(
        text.contains("edit (write) · an ask rule: edits of src/**"),
        "{text}"
    );
    assert!(text.contains("Why not? (sent to the agent) ›"), "{text}");
    assert!(
        text.contains("a  Allow for this chat — edit calls of the tool `Edit` in this chat"),
        "{text}"
    );
}

#[test]
fn tiny_terminals_with_cards_and_the_dropdown_do_not_panic() {
    let mut state = asking(vec![edit_request(), execute_request(), long_request()]);
    state.session.agent_modes = Some(agent_modes());
    state.view.cursor.scroll = 50;
    state.gate.bypassed_agents = vec!["claude-code".into()];
    state.gate.rules = vec![Rule::new(RuleDecision::Deny); 3];
    state.gate.rule_draft = Some(draft(Rule::new(RuleDecision::Allow)));
    for modal in [
        None,
        Some(Modal::Reason {
            card: 1,
            field: Composer::default(),
        }),
        Some(Modal::ConfirmAll(vec![1, 2, 3])),
        Some(Modal::ModeMenu(5)),
        Some(Modal::KeepRule(Composer::default())),
        Some(Modal::Rules {
            selected: 9,
            confirm: true,
        }),
    ] {
        state.view.focus = Focus {
            pane: Pane::Cards,
            modal,
        };
        for (w, h) in [
            (1, 1),
            (2, 2),
            (3, 3),
            (5, 4),
            (10, 5),
            (80, 1),
            (1, 40),
            (20, 8),
        ] {
            let mut term = terminal(w, h);
            let mut view = view();
            draw_on(&mut term, &state, &mut view);
            for x in 0..w {
                for y in 0..h {
                    view.hit(x, y);
                }
            }
        }
    }
}

#[test]
fn the_diff_comes_from_the_transcript_when_the_request_has_none() {
    let mut req = edit_request();
    let diff = req.fields.content.take();
    let mut state = chat(None);
    let mut call = crate::model::ToolCall::placeholder("call-edit");
    call.kind = ToolKind::Edit;
    call.content = diff.clone().unwrap_or_default();
    state.update(Msg::Update(crate::model::SessionUpdate::ToolCall(
        Box::new(call),
    )));
    state.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    let mut term = terminal(100, 60);
    let mut view = view();
    let text = draw_on(&mut term, &state, &mut view);
    assert!(
        text.contains("│   +pub fn home() -> Option<String> {"),
        "{text}"
    );

    // A later change of the transcript's content does not reach the card:
    // it shows the diff known when the policy judged the request.
    let fields = ToolCallFields {
        content: Some(vec![ToolContent::Diff {
            path: "src/config.rs".into(),
            old: Some(OLD.into()),
            new: OLD.replace("Config::from", "Config::load"),
        }]),
        ..Default::default()
    };
    state.session.transcript.update_tool("call-edit", &fields);
    let text = draw_on(&mut term, &state, &mut view);
    assert!(!text.contains("│   +    Config::load(home())"), "{text}");
    assert!(text.contains("│   +pub fn home()"), "{text}");
}

#[test]
fn expanding_shows_the_whole_input_and_back() {
    let mut state = asking(vec![long_request()]);
    let mut term = terminal(100, 80);
    let mut view = view();
    let collapsed = draw_on(&mut term, &state, &mut view);
    assert!(collapsed.contains("more lines · e expand"), "{collapsed}");
    assert!(!collapsed.contains("\"new_string\": \"new 4\""));
    state.update(Msg::Action(Action::ch('e')));
    let expanded = draw_on(&mut term, &state, &mut view);
    assert!(!expanded.contains("more lines · e expand"), "{expanded}");
    assert!(expanded.contains("\"new_string\": \"new 4\""), "{expanded}");
    state.update(Msg::Action(Action::ch('e')));
    assert_eq!(draw_on(&mut term, &state, &mut view), collapsed);
}

/// A shell command through claude-code's options.
pub(super) fn cargo_test_request(options: Vec<PermissionOption>) -> PermissionRequest {
    request(
        "call-test",
        ToolCallFields {
            title: Some("cargo test --lib".into()),
            kind: Some(ToolKind::Execute),
            raw_input: Some(json!({ "command": "cargo test --lib" })),
            tool_name: Some("Bash".into()),
            ..Default::default()
        },
        options,
    )
}

mod choice_rows;
mod keep_rule;
use keep_rule::draft;
mod small_cards;

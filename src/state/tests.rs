//! Key-driven tests of the permission gate in the state: feed messages and
//! actions, inspect the effects.

use crate::state::{Code, Key};
use pretty_assertions::assert_eq;

use super::*;
use crate::model::{OptionKind, PermissionOption, ToolCall, ToolCallFields, ToolKind};

mod agent_updates;
mod grants;

pub(crate) fn options() -> Vec<PermissionOption> {
    [
        ("allow-once", OptionKind::AllowOnce),
        ("allow-always", OptionKind::AllowAlways),
        ("reject-once", OptionKind::RejectOnce),
        ("reject-always", OptionKind::RejectAlways),
    ]
    .into_iter()
    .map(|(id, kind)| PermissionOption {
        id: id.into(),
        name: id.replace('-', " "),
        kind,
    })
    .collect()
}

pub(crate) fn request(tool: &str, kind: ToolKind, title: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: tool.into(),
        fields: ToolCallFields {
            title: Some(title.into()),
            kind: Some(kind),
            ..Default::default()
        },
        options: options(),
        client: false,
    }
}

/// A ready chat with a turn running.
pub(crate) fn chat(mode: Mode) -> ChatState {
    let mut s = ChatState::new("demo", "/w");
    s.gate.mode = mode;
    s.gate.agent_policy.name = "demo".into();
    s.session.cwd_path = "/w".into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    s.update(Msg::Action(Action::Paste("go".into())));
    let effects = s.update(Msg::Action(Action::key(Code::Enter)));
    assert!(matches!(effects.as_slice(), [Effect::SendPrompt(p)] if p.ends_with("go")));
    s
}

pub(crate) fn ask(s: &mut ChatState, id: RequestId, tool: &str, kind: ToolKind) -> Vec<Effect> {
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(request(tool, kind, &format!("Do {tool}"))),
    })
}

pub(crate) fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

/// The permission answers among the effects, in order.
pub(crate) fn answers(effects: &[Effect]) -> Vec<(RequestId, PermissionOutcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RespondPermission { id, outcome } => Some((*id, outcome.clone())),
            _ => None,
        })
        .collect()
}

pub(crate) fn selected(id: &str) -> PermissionOutcome {
    PermissionOutcome::Selected(id.into())
}

/// The error lines of the transcript.
pub(crate) fn errors_of(s: &ChatState) -> Vec<String> {
    s.session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn logged_sources(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::LogDecision(r) => Some(r.source.to_string()),
            _ => None,
        })
        .collect()
}

pub(crate) use crate::test_support::option;

/// An agent that offers only "Always allow" and "Reject".
pub(crate) fn only_always() -> Vec<PermissionOption> {
    vec![
        option("always", "Always allow", OptionKind::AllowAlways),
        option("reject", "Reject", OptionKind::RejectOnce),
    ]
}

pub(crate) fn shell_request(
    tool_call: &str,
    command: &str,
    options: Vec<PermissionOption>,
) -> PermissionRequest {
    let mut req = request(tool_call, ToolKind::Execute, &format!("Run {command}"));
    req.fields.tool_name = Some("Bash".into());
    req.fields.raw_input = Some(serde_json::json!({ "command": command }));
    req.options = options;
    req
}

pub(crate) fn transcript_decisions(s: &ChatState) -> Vec<String> {
    s.session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Decision { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Claude's ExitPlanMode options.
pub(crate) fn exit_plan_options() -> Vec<PermissionOption> {
    vec![
        option(
            "bypassPermissions",
            "Yes, and bypass permissions",
            OptionKind::AllowAlways,
        ),
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
    ]
}

pub(crate) fn exit_plan(options: Vec<PermissionOption>) -> PermissionRequest {
    let mut req = request("plan", ToolKind::SwitchMode, "Ready to code?");
    req.options = options;
    req
}

/// A synthetic request as the runtime builds it for the agent's own file write.
pub(crate) fn client_write(path: &str) -> PermissionRequest {
    client_write_text(path, EDITED)
}

/// The text the edits and writes of these tests put in a file.
pub(crate) const EDITED: &str = "fn a() {}\n";

/// An edit of the agent's whose card shows `path` getting `text`.
pub(crate) fn edit_showing(tool: &str, path: &str, text: &str) -> PermissionRequest {
    let mut edit = request(tool, ToolKind::Edit, &format!("Edit {path}"));
    edit.fields.content = Some(vec![crate::model::ToolContent::Diff {
        path: path.into(),
        old: Some("old\n".into()),
        new: text.into(),
    }]);
    edit
}

/// warden's synthetic request for the agent's write of `text` to `path`,
/// as the runtime builds it (the diff against the file on disk).
pub(crate) fn client_write_text(path: &str, text: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: format!("warden-{path}"),
        fields: ToolCallFields {
            title: Some(format!("Write {path}")),
            kind: Some(ToolKind::Edit),
            raw_input: Some(serde_json::json!({ "path": path })),
            locations: Some(vec![crate::model::Location {
                path: path.into(),
                line: None,
            }]),
            content: Some(vec![crate::model::ToolContent::Diff {
                path: path.into(),
                old: None,
                new: text.into(),
            }]),
            ..Default::default()
        },
        options: vec![
            PermissionOption {
                id: "allow".into(),
                name: "Allow".into(),
                kind: OptionKind::AllowOnce,
            },
            PermissionOption {
                id: "reject".into(),
                name: "Reject".into(),
                kind: OptionKind::RejectOnce,
            },
        ],
        client: true,
    }
}

#[test]
fn cards_queue_fifo_and_answer_by_request_id() {
    let mut s = chat(Mode::Default);
    let first = ask(&mut s, 7, "t1", ToolKind::Edit);
    assert!(matches!(first.as_slice(), [Effect::Notify(_)]), "{first:?}");
    ask(&mut s, 3, "t2", ToolKind::Execute);
    assert_eq!(
        s.gate.approvals.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![7, 3]
    );
    assert_eq!(s.view.focus, Focus::CARDS);
    assert_eq!(
        s.session.transcript.tool("t1").map(|t| t.state),
        Some(ToolState::AwaitingApproval)
    );
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(answers(&effects), vec![(7, selected("allow-once"))]);
    assert_eq!(logged_sources(&effects), vec!["user"]);
    let effects = key(&mut s, Action::ch('n'));
    assert_eq!(answers(&effects), vec![(3, selected("reject-once"))]);
    assert!(s.gate.approvals.is_empty());
    assert_eq!(
        s.view.focus,
        Focus::COMPOSER,
        "focus returns when the queue empties"
    );
    assert_eq!(
        s.session.transcript.tool("t2").map(|t| t.state),
        Some(ToolState::Rejected)
    );
}

#[test]
fn number_keys_pick_the_agents_options_and_tab_moves_between_cards() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    ask(&mut s, 2, "t2", ToolKind::Edit);
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(s.view.cursor.selected, 1);
    let effects = key(&mut s, Action::ch('3'));
    assert_eq!(answers(&effects), vec![(2, selected("reject-once"))]);
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::key(Code::Down));
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(
        answers(&effects),
        vec![(1, selected("reject-once"))],
        "Enter picks the highlighted choice"
    );
}

#[test]
fn approve_all_covers_only_the_cards_pending_at_the_key_press() {
    let mut s = chat(Mode::Default);
    for (id, tool) in [(1, "a"), (2, "b"), (3, "c")] {
        ask(&mut s, id, tool, ToolKind::Edit);
    }
    assert!(key(&mut s, Action::ch('A')).is_empty(), "asks first");
    assert_eq!(s.view.focus.modal, Some(Modal::ConfirmAll(vec![1, 2, 3])));
    ask(&mut s, 4, "d", ToolKind::Edit);
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(
        answers(&effects),
        vec![
            (1, selected("allow-once")),
            (2, selected("allow-once")),
            (3, selected("allow-once"))
        ]
    );
    assert_eq!(
        s.gate.approvals.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![4]
    );
}

#[test]
fn approve_all_can_be_declined() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    key(&mut s, Action::ch('A'));
    assert!(key(&mut s, Action::ch('n')).is_empty());
    assert_eq!(s.view.focus, Focus::CARDS);
    assert_eq!(s.gate.approvals.len(), 1);
}

#[test]
fn stale_cards_are_answered_cancelled_and_removed() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    ask(&mut s, 2, "b", ToolKind::Edit);
    let effects = s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: "a".into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        }),
    }));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    assert_eq!(
        s.session.transcript.tool("a").map(|t| t.state),
        Some(ToolState::Completed)
    );
    let effects = s.update(Msg::AgentExited {
        status: "exit status 1".into(),
        stderr_tail: Vec::new(),
    });
    assert_eq!(answers(&effects), vec![(2, PermissionOutcome::Cancelled)]);
    assert!(s.gate.approvals.is_empty());
}

#[test]
fn turn_end_and_esc_cancel_every_card() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    ask(&mut s, 2, "b", ToolKind::Fetch);
    let effects = key(&mut s, Action::key(Code::Esc));
    assert_eq!(effects[0], Effect::CancelTurn);
    assert_eq!(
        answers(&effects),
        vec![
            (1, PermissionOutcome::Cancelled),
            (2, PermissionOutcome::Cancelled)
        ]
    );
    let mut s = chat(Mode::Default);
    ask(&mut s, 5, "a", ToolKind::Edit);
    let effects = s.update(Msg::TurnEnded(StopReason::EndTurn));
    assert_eq!(answers(&effects), vec![(5, PermissionOutcome::Cancelled)]);
}

#[test]
fn a_card_never_takes_keys_from_a_half_typed_message() {
    let mut s = chat(Mode::Default);
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    s.update(Msg::Action(Action::Paste("hel".into())));
    s.session.turn = Some(Turn {
        cancelling: false,
        started: None,
    });
    ask(&mut s, 1, "a", ToolKind::Edit);
    assert_eq!(s.view.focus, Focus::COMPOSER);
    assert!(key(&mut s, Action::ch('y')).is_empty());
    assert_eq!(s.view.composer.text(), "hely", "y went into the message");
    assert_eq!(s.gate.approvals.len(), 1, "the card still waits");
    key(&mut s, Action::Key(Key::ctrl(Code::Char('p'))));
    assert_eq!(s.view.focus, Focus::CARDS);
    assert_eq!(
        answers(&key(&mut s, Action::ch('y'))),
        vec![(1, selected("allow-once"))]
    );
}

#[test]
fn deny_with_reason_rejects_without_cancelling_and_sends_the_reason_after_the_turn() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    ask(&mut s, 2, "b", ToolKind::Edit);
    key(&mut s, Action::ch('r'));
    key(&mut s, Action::Paste("not that file".into()));
    let effects = key(&mut s, Action::key(Code::Enter));
    // Every card of the turn gets its reject option; the turn is left to
    // end by itself (claude-agent-acp answers prompts a turn late after a
    // cancel: assets/scenarios/claude-late-after-cancel.toml).
    assert_eq!(
        answers(&effects),
        vec![(1, selected("reject-once")), (2, selected("reject-once"))]
    );
    assert!(!effects.contains(&Effect::CancelTurn), "{effects:?}");
    assert!(s.is_busy());
    // A later request of the denied turn is refused with its reject option.
    let effects = s.update(Msg::PermissionChecked {
        id: 3,
        facts: Box::new(RequestFacts {
            in_session: true,
            ..RequestFacts::of(&request("c", ToolKind::Edit, "Do more"), None)
        }),
        request: Box::new(request("c", ToolKind::Edit, "Do more")),
    });
    assert_eq!(answers(&effects), vec![(3, selected("reject-once"))]);
    assert!(s.gate.approvals.is_empty());
    let effects = s.update(Msg::TurnEnded(StopReason::EndTurn));
    assert_eq!(effects, vec![Effect::SendPrompt("not that file".into())]);
    assert!(s.is_busy());
}

#[test]
fn allow_for_this_chat_grants_same_kind_and_tool_and_redecides_the_queue() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(request("b", ToolKind::Edit, "Do other")),
    });
    ask(&mut s, 3, "c", ToolKind::Delete);
    // Card 1's tool is "Do" (the title's first word); card 2's too.
    let effects = key(&mut s, Action::ch('a'));
    assert_eq!(
        answers(&effects),
        vec![(1, selected("allow-once")), (2, selected("allow-once"))]
    );
    assert_eq!(logged_sources(&effects), vec!["chat grant", "chat grant"]);
    assert_eq!(
        s.gate.approvals.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![3],
        "a delete is not covered"
    );
    let later = ask(&mut s, 4, "d", ToolKind::Edit);
    assert_eq!(answers(&later), vec![(4, selected("allow-once"))]);
    // The decision line says "allowed" once (issue 25).
    let last = transcript_decisions(&s).pop().unwrap_or_default();
    assert!(last.starts_with("allowed for edit calls"), "{last}");
    assert!(!last.contains("allowed: allowed"), "{last}");
}

#[test]
fn bypass_allows_and_asks_to_persist() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Delete);
    assert_eq!(key(&mut s, Action::ch('b')), Vec::new(), "b asks first");
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::Bypass(1)))
    );
    let effects = key(&mut s, Action::ch('y'));
    assert!(
        effects.contains(&Effect::EditSettings(SettingsEdit::SetBypass {
            agent: "demo".into(),
            value: true
        }))
    );
    assert_eq!(s.gate.bypassed_agents, vec!["demo".to_string()]);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert!(s.gate.agent_policy.bypass);
    assert_eq!(
        logged_sources(&ask(&mut s, 2, "b", ToolKind::Execute)),
        vec!["bypass"]
    );
}

#[test]
fn switch_mode_approved_in_plan_moves_the_chat_to_default() {
    let mut s = chat(Mode::Plan);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(exit_plan(exit_plan_options())),
    });
    assert_eq!(
        s.gate.approvals.len(),
        1,
        "switch_mode always asks, even in Plan"
    );
    key(&mut s, Action::ch('3'));
    assert_eq!(s.gate.mode, Mode::Default);
}

#[test]
fn plan_blocks_and_auto_allows_without_a_card() {
    let mut s = chat(Mode::Plan);
    let effects = ask(&mut s, 1, "a", ToolKind::Edit);
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
    assert!(s.gate.approvals.is_empty());
    let mut s = chat(Mode::Auto);
    let effects = ask(&mut s, 1, "a", ToolKind::Edit);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(logged_sources(&effects), vec!["auto"]);
}

#[test]
fn shift_tab_cycles_modes_and_waiting_cards_follow_the_new_mode() {
    let mut s = chat(Mode::Default);
    s.update(Msg::Action(Action::Paste("x".into())));
    ask(&mut s, 1, "a", ToolKind::Edit);
    assert_eq!(s.view.focus, Focus::COMPOSER);
    let effects = key(&mut s, Action::key(Code::BackTab));
    assert_eq!(s.gate.mode, Mode::Auto);
    assert_eq!(answers(&effects), Vec::new(), "Auto allows nothing unasked");
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::AllowWaiting(vec![1])))
    );
    let effects = key(&mut s, Action::key(Code::BackTab));
    assert_eq!(s.gate.mode, Mode::Plan);
    assert_eq!(
        answers(&effects),
        vec![(1, selected("reject-once"))],
        "Plan blocks the waiting edit at once"
    );
    key(&mut s, Action::key(Code::BackTab));
    assert_eq!(s.gate.mode, Mode::Default);
}

#[test]
fn the_mode_dropdown_opens_moves_and_picks() {
    let mut s = chat(Mode::Default);
    s.session.agent_modes = Some(AgentModes {
        current: "default".into(),
        available: vec![
            crate::model::AgentMode {
                id: "default".into(),
                name: "Default".into(),
                description: None,
            },
            crate::model::AgentMode {
                id: "plan".into(),
                name: "Plan".into(),
                description: None,
            },
            crate::model::AgentMode {
                id: "acceptEdits".into(),
                name: "Accept Edits".into(),
                description: None,
            },
        ],
        config_option_id: None,
    });
    s.gate.asking_mode = Some("default".into());
    // warden's three, then only the agent's mode that adds something: its
    // asking mode and a second "Plan" are warden's own to drive.
    assert_eq!(
        s.mode_menu_items(),
        vec![
            ModeItem::Chat(Mode::Plan),
            ModeItem::Chat(Mode::Default),
            ModeItem::Chat(Mode::Auto),
            ModeItem::Agent(2),
        ]
    );
    key(&mut s, Action::OpenModeMenu);
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::ModeMenu(1)),
        "opens on the current mode"
    );
    key(&mut s, Action::key(Code::Up));
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(s.gate.mode, Mode::Plan);
    assert_eq!(s.view.focus, Focus::COMPOSER);
    // The agent's own mode: a warning, and set_mode.
    key(&mut s, Action::OpenModeMenu);
    let effects = key(&mut s, Action::PickModeItem(3));
    assert_eq!(
        effects,
        vec![Effect::SetAgentMode {
            mode_id: "acceptEdits".into(),
            config_option: None
        }]
    );
    assert!(matches!(
        &s.session.transcript.entries().last().map(|e| &e.kind),
        Some(EntryKind::Error { message, .. }) if message.starts_with("warning:")
    ));
}

#[test]
fn plan_mode_prompts_carry_the_visible_instruction() {
    let mut s = ChatState::new("demo", "/w");
    s.gate.mode = Mode::Plan;
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    s.update(Msg::Action(Action::Paste("refactor it".into())));
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(
        effects,
        vec![Effect::SendPrompt(format!(
            "{PLAN_INSTRUCTION}\n\nrefactor it"
        ))]
    );
    assert!(
        s.session
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::Info(t) if t.starts_with("plan mode:")))
    );
}

#[test]
fn agent_plan_mode_is_opt_in_and_restored() {
    let mut s = chat(Mode::Default);
    s.gate.asking_mode = Some("default".into());
    assert!(
        !key(&mut s, Action::key(Code::BackTab))
            .iter()
            .any(|e| matches!(e, Effect::SetAgentMode { .. }))
    );
    s.gate.agent_plan_mode = Some("plan".into());
    let to_plan = key(&mut s, Action::key(Code::BackTab));
    assert_eq!(s.gate.mode, Mode::Plan);
    assert!(to_plan.contains(&Effect::SetAgentMode {
        mode_id: "plan".into(),
        config_option: None
    }));
    let back = key(&mut s, Action::key(Code::BackTab));
    assert!(back.contains(&Effect::SetAgentMode {
        mode_id: "default".into(),
        config_option: None
    }));
}

#[test]
fn quit_cancels_the_turn_and_answers_everything() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    let effects = key(&mut s, Action::Quit);
    assert_eq!(effects.first(), Some(&Effect::CancelTurn));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    assert_eq!(effects.last(), Some(&Effect::Quit));
}

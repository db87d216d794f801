//! Key-driven tests of the permission gate in the state: feed messages and
//! actions, inspect the effects.

use crate::state::{Code, Key};
use pretty_assertions::assert_eq;

use super::*;
use crate::model::{OptionKind, PermissionOption, ToolCall, ToolCallFields, ToolKind};

pub(super) fn options() -> Vec<PermissionOption> {
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

pub(super) fn request(tool: &str, kind: ToolKind, title: &str) -> PermissionRequest {
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
pub(super) fn chat(mode: Mode) -> ChatState {
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

pub(super) fn ask(s: &mut ChatState, id: RequestId, tool: &str, kind: ToolKind) -> Vec<Effect> {
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(request(tool, kind, &format!("Do {tool}"))),
    })
}

pub(super) fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

/// The permission answers among the effects, in order.
pub(super) fn answers(effects: &[Effect]) -> Vec<(RequestId, PermissionOutcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RespondPermission { id, outcome } => Some((*id, outcome.clone())),
            _ => None,
        })
        .collect()
}

pub(super) fn selected(id: &str) -> PermissionOutcome {
    PermissionOutcome::Selected(id.into())
}

/// The error lines of the transcript.
pub(super) fn errors_of(s: &ChatState) -> Vec<String> {
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

pub(super) fn logged_sources(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::LogDecision(r) => Some(r.source.to_string()),
            _ => None,
        })
        .collect()
}

pub(super) use crate::test_support::option;

/// An agent that offers only "Always allow" and "Reject".
pub(super) fn only_always() -> Vec<PermissionOption> {
    vec![
        option("always", "Always allow", OptionKind::AllowAlways),
        option("reject", "Reject", OptionKind::RejectOnce),
    ]
}

pub(super) fn shell_request(
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

pub(super) fn transcript_decisions(s: &ChatState) -> Vec<String> {
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
pub(super) fn exit_plan_options() -> Vec<PermissionOption> {
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

pub(super) fn exit_plan(options: Vec<PermissionOption>) -> PermissionRequest {
    let mut req = request("plan", ToolKind::SwitchMode, "Ready to code?");
    req.options = options;
    req
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
        request: Box::new(request("c", ToolKind::Edit, "Do more")),
        facts: Box::new(RequestFacts {
            in_session: true,
            ..RequestFacts::default()
        }),
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

#[test]
fn keep_as_rule_offers_an_editable_pattern_and_appends_it() {
    let mut s = chat(Mode::Default);
    let mut req = request("t", ToolKind::Execute, "Run cargo test");
    req.fields.raw_input = Some(serde_json::json!({"command": "cargo test --all"}));
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    key(&mut s, Action::ch('p'));
    let Some(Modal::KeepRule(field)) = &s.view.focus.modal else {
        panic!("{:?}", s.view.focus)
    };
    assert_eq!(field.text(), "cargo test *");
    key(&mut s, Action::KillLineStart);
    key(&mut s, Action::Paste("cargo *".into()));
    let effects = key(&mut s, Action::key(Code::Enter));
    let Some(Effect::EditSettings(SettingsEdit::AppendRule(rule))) = effects.first() else {
        panic!("{effects:?}")
    };
    assert_eq!(rule.command.as_deref(), Some("cargo *"));
    assert_eq!(
        answers(&effects),
        vec![(1, selected("allow-once"))],
        "Enter keeps the rule and allows the card"
    );
    assert_eq!(logged_sources(&effects), vec!["user"]);
}

/// An edit card of `path`, asked as request `id`.
fn ask_edit(s: &mut ChatState, id: RequestId, path: &str) {
    let mut req = request(&format!("t{id}"), ToolKind::Edit, &format!("Edit {path}"));
    req.fields.locations = Some(vec![crate::model::Location {
        path: path.into(),
        line: None,
    }]);
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(req),
    });
}

/// The kept rule's field.
fn rule_field(s: &ChatState) -> String {
    match &s.view.focus.modal {
        Some(Modal::KeepRule(field)) => field.text().to_string(),
        other => panic!("{other:?}"),
    }
}

/// Issue 33, item 4: `p` on an edit of a file at the project's root
/// proposes that file, never the whole project; the project's glob is a
/// Tab away; Enter keeps the rule and allows the card in one step, with
/// no question about the card itself.
#[test]
fn keep_as_rule_proposes_the_file_and_allows_its_card_in_one_step() {
    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/README.md");
    key(&mut s, Action::ch('p'));
    assert_eq!(rule_field(&s), "/w/README.md");
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/**", "the wider glob, asked for");
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/README.md", "and back");
    let effects = key(&mut s, Action::key(Code::Enter));
    let kept: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::EditSettings(SettingsEdit::AppendRule(rule)) => rule.path.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(kept, vec!["/w/README.md".to_string()]);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(s.view.focus, Focus::COMPOSER, "no question is left open");
    // The rule's block, written and bound later, asks about nothing.
    s.update(Msg::SettingsChanged {
        rules: s.gate.rules.clone(),
        bypassed: Vec::new(),
        agent_block: Some("demo".into()),
        note: None,
    });
    assert_eq!(s.view.focus.modal, None);
}

/// The other waiting cards the new rule covers are asked about, with
/// words and keys of their own (no "Shift+Tab next mode"); those it does
/// not cover stay as they are, unasked.
#[test]
fn keep_as_rule_asks_about_the_other_cards_only_when_it_covers_some() {
    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/src/a.rs");
    ask_edit(&mut s, 2, "/w/src/b.rs");
    key(&mut s, Action::ch('p'));
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(s.view.focus.modal, None, "src/a.rs does not cover src/b.rs");
    assert_eq!(s.gate.approvals.len(), 1);

    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/src/a.rs");
    ask_edit(&mut s, 2, "/w/src/b.rs");
    ask_edit(&mut s, 3, "/w/docs/c.md");
    key(&mut s, Action::ch('p'));
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/src/**");
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    let Some(Modal::Confirm(question)) = s.view.focus.modal.clone() else {
        panic!("{:?}", s.view.focus)
    };
    assert_eq!(question, Question::AllowCovered(vec![2]));
    let text = question.text("demo");
    assert!(text.contains("the 1 other waiting card"), "{text}");
    assert!(!text.contains("Shift+Tab"), "{text}");
    // Shift-Tab here is a no, not a mode change.
    key(&mut s, Action::BackTab);
    assert_eq!(s.gate.mode, Mode::Default);
    assert_eq!(s.gate.approvals.len(), 2);
}

#[test]
fn the_review_screen_lists_and_revokes_with_confirmation() {
    let mut s = chat(Mode::Default);
    s.gate.bypassed_agents = vec!["demo".into()];
    s.gate.agent_policy.bypass = true;
    s.gate.rules = vec![crate::policy::Rule::new(crate::policy::RuleDecision::Allow)];
    s.gate.grants = vec![ChatGrant {
        kind: ToolKind::Execute,
        tool: "Bash".into(),
        commands: None,
    }];
    key(&mut s, Action::Key(Key::ctrl(Code::Char('g'))));
    assert_eq!(
        s.grant_items(),
        vec![
            GrantItem::Bypass("demo".into()),
            GrantItem::Rule(0),
            GrantItem::ChatGrant(0)
        ]
    );
    key(&mut s, Action::ch('d'));
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Rules {
            selected: 0,
            confirm: true
        })
    );
    assert!(key(&mut s, Action::ch('n')).is_empty(), "n keeps it");
    key(&mut s, Action::ch('d'));
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(
        effects,
        vec![Effect::EditSettings(SettingsEdit::SetBypass {
            agent: "demo".into(),
            value: false
        })]
    );
    assert!(
        !s.gate.agent_policy.bypass,
        "the policy uses the new state at once"
    );
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::ch('d'));
    assert!(
        key(&mut s, Action::ch('y')).is_empty(),
        "a chat grant needs no file write"
    );
    assert!(s.gate.grants.is_empty());
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus, Focus::COMPOSER);
    assert_eq!(s.gate.rules.len(), 1);
}

/// A synthetic request as the runtime builds it for the agent's own file write.
pub(super) fn client_write(path: &str) -> PermissionRequest {
    client_write_text(path, EDITED)
}

/// The text the edits and writes of these tests put in a file.
pub(super) const EDITED: &str = "fn a() {}\n";

/// An edit of the agent's whose card shows `path` getting `text`.
pub(super) fn edit_showing(tool: &str, path: &str, text: &str) -> PermissionRequest {
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
pub(super) fn client_write_text(path: &str, text: &str) -> PermissionRequest {
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
fn a_client_write_covered_by_an_allowed_edit_needs_no_second_card() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit_showing("t", "/w/a.rs", EDITED)),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("allow"))]);
    assert!(s.gate.approvals.is_empty());
    // Another path is not covered: a card.
    let effects = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_write("/w/b.rs")),
    });
    assert!(answers(&effects).is_empty());
    assert_eq!(s.gate.approvals.len(), 1);
    // The cover lasts for the turn only.
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    s.session.turn = Some(Turn {
        cancelling: false,
        started: None,
    });
    let effects = s.update(Msg::PermissionRequested {
        id: 4,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert!(answers(&effects).is_empty(), "a new turn asks again");
}

#[test]
fn plan_refuses_every_client_write_even_a_covered_one() {
    let mut s = chat(Mode::Plan);
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(1, selected("reject"))]);
}

mod grant_properties {
    use proptest::prelude::*;

    use crate::model::ToolKind;
    use crate::policy::{ChatGrant, RequestView};

    const COMMANDS: &[&str] = &[
        "cargo test",
        "cargo test --lib",
        "cargo build",
        "rm -rf x",
        "sudo rm -rf x",
        "sudo cargo test",
        "bash -c 'rm x'",
        "bash -c 'cargo test'",
        "git status",
        "git push",
        "ls",
        "python3 a.py",
        "python3 b.py",
    ];
    const WRAPPERS: &[&str] = &["sudo", "bash", "python3"];
    const SEPARATORS: &[&str] = &["; ", " && ", " || ", " | ", "\n"];

    fn bash(line: &str) -> RequestView {
        RequestView {
            kind: ToolKind::Execute,
            tool_name: Some("Bash".into()),
            raw_input: Some(serde_json::json!({ "command": line })),
            ..RequestView::default()
        }
    }

    /// Program and subcommand, as a person would read them.
    fn prefix(command: &str) -> String {
        let words: Vec<&str> = command.split(' ').collect();
        match words.get(1) {
            Some(w) if w.chars().all(|c| c.is_ascii_lowercase()) => {
                format!("{} {}", words[0], w)
            }
            _ => words[0].to_string(),
        }
    }

    /// What the grant made on `granted` may allow of one command.
    fn allowed(command: &str, granted: &[&str]) -> bool {
        granted.iter().any(|g| {
            *g == command
                || (!WRAPPERS.contains(&g.split(' ').next().unwrap_or_default())
                    && (command == prefix(g) || command.starts_with(&format!("{} ", prefix(g)))))
        })
    }

    fn line() -> impl Strategy<Value = (Vec<&'static str>, String)> {
        (
            proptest::collection::vec(proptest::sample::select(COMMANDS), 1..4),
            proptest::sample::select(SEPARATORS),
        )
            .prop_map(|(commands, separator)| {
                let line = commands.join(separator);
                (commands, line)
            })
    }

    proptest! {
        #[test]
        fn a_grant_covers_its_own_line_and_only_commands_it_names(
            (granted, first) in line(),
            (commands, later) in line(),
        ) {
            let grant = ChatGrant::for_request(&bash(&first));
            prop_assert!(grant.covers(&bash(&first)), "{} covers itself", first);
            if grant.covers(&bash(&later)) {
                for command in &commands {
                    prop_assert!(
                        allowed(command, &granted),
                        "the grant on {:?} ({}) covers {:?} in {:?}",
                        first, grant.describe(), command, later
                    );
                }
            }
        }
    }
}

// Issue 22, spoofs: what the agent sends later never changes a waiting card
// or warden's own entries, and a user message of the agent's is its own.

#[test]
fn an_agents_update_never_withdraws_or_retitles_wardens_own_card() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(client_write("/w/a.txt")),
    });
    assert_eq!(s.gate.approvals.len(), 1);
    let done = ToolCallFields {
        title: Some("harmless".into()),
        status: Some(WireStatus::Completed),
        ..Default::default()
    };
    let effects = s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: "warden-/w/a.txt".into(),
        fields: Box::new(done.clone()),
    }));
    assert_eq!(effects, Vec::new(), "nothing answered");
    assert_eq!(s.gate.approvals.len(), 1, "warden's own card stays");
    let own = s
        .session
        .transcript
        .own_tool("warden-/w/a.txt")
        .expect("own");
    assert_eq!(own.call.title, "Write /w/a.txt");
    assert_eq!(own.state, ToolState::AwaitingApproval);
    // warden's own word reaches it.
    s.update(Msg::OwnToolUpdate {
        id: "warden-/w/a.txt".into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Failed),
            ..Default::default()
        }),
    });
    let own = s
        .session
        .transcript
        .own_tool("warden-/w/a.txt")
        .expect("own");
    assert_eq!(own.state, ToolState::Failed);
    assert_eq!(own.call.title, "Write /w/a.txt");
}

#[test]
fn a_waiting_card_keeps_the_content_it_was_asked_with() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "t1", ToolKind::Edit);
    let late = ToolCallFields {
        title: Some("harmless".into()),
        content: Some(vec![crate::model::ToolContent::Diff {
            path: "/etc/passwd".into(),
            old: None,
            new: "evil".into(),
        }]),
        ..Default::default()
    };
    s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: "t1".into(),
        fields: Box::new(late),
    }));
    let card = &s.gate.approvals[0];
    assert!(
        card.request
            .fields
            .content
            .as_deref()
            .unwrap_or_default()
            .is_empty(),
        "{card:?}"
    );
    assert_eq!(card.title(), "Do t1");
    // The entry beside the card still shows what the card asks about.
    let entry = s.session.transcript.tool("t1").expect("entry");
    assert_eq!(entry.call.title, "Do t1");
    assert!(entry.call.content.is_empty());
    key(&mut s, Action::ch('n'));
    let entry = s.session.transcript.tool("t1").expect("entry");
    assert_eq!(entry.call.title, "harmless", "applied once answered");
    assert_eq!(entry.state, ToolState::Rejected);
}

#[test]
fn a_user_message_outside_a_replay_is_the_agents_marked_text() {
    // Loading: the replay speaks for the user.
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::Update(SessionUpdate::UserChunk("replayed ".into())));
    s.update(Msg::Update(SessionUpdate::UserChunk("prompt".into())));
    assert_eq!(
        s.session.transcript.entries()[0].kind,
        EntryKind::User("replayed prompt".into())
    );
    // Mid-turn: the agent's.
    let mut s = chat(Mode::Default);
    s.update(Msg::Update(SessionUpdate::AgentChunk("Working.".into())));
    s.update(Msg::Update(SessionUpdate::UserChunk("I confirm, ".into())));
    s.update(Msg::Update(SessionUpdate::UserChunk("delete it".into())));
    s.update(Msg::Update(SessionUpdate::AgentChunk("Done.".into())));
    let kinds: Vec<EntryKind> = s
        .session
        .transcript
        .entries()
        .iter()
        .map(|e| e.kind.clone())
        .filter(|k| matches!(k, EntryKind::User(_) | EntryKind::Agent(_)))
        .collect();
    assert_eq!(
        kinds,
        vec![
            EntryKind::User("go".into()),
            EntryKind::Agent("Working.".into()),
            EntryKind::Agent(format!("{AGENT_SENT_USER}I confirm, delete it")),
            EntryKind::Agent("Done.".into()),
        ]
    );
    // Between turns too.
    s.update(Msg::TurnEnded(crate::model::StopReason::EndTurn));
    s.update(Msg::Update(SessionUpdate::UserChunk("later".into())));
    assert!(
        !s.session
            .transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("later".into()))
    );
}

/// Codex never sends the completion of some calls: when the turn ends they
/// stop spinning and say so; a cancelled turn still marks them cancelled
/// (issue 25).
#[test]
fn calls_still_open_at_turn_end_say_no_result() {
    use crate::model::{ToolCall, WireStatus};
    for (reason, want) in [
        (StopReason::EndTurn, ToolState::NoResult),
        (StopReason::Cancelled, ToolState::Cancelled),
    ] {
        let mut s = chat(Mode::Default);
        let mut call = ToolCall::placeholder("ls");
        call.title = "ls".into();
        call.status = WireStatus::InProgress;
        s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(call))));
        let mut done = ToolCall::placeholder("cat");
        done.status = WireStatus::Completed;
        s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(done))));
        assert_eq!(
            s.session.transcript.tool("ls").map(|t| t.state),
            Some(ToolState::InProgress)
        );
        s.update(Msg::TurnEnded(reason));
        assert_eq!(s.session.transcript.tool("ls").map(|t| t.state), Some(want));
        assert_eq!(
            s.session.transcript.tool("cat").map(|t| t.state),
            Some(ToolState::Completed)
        );
    }
    assert_eq!(ToolState::NoResult.label(), "no result from the agent");
}

/// A call's line reads truly through its life: asked, approved (the agent
/// has not run it yet, and a late "pending" from it does not undo that),
/// running, done; a denied one reads "denied".
#[test]
fn a_call_reads_asked_approved_running_done() {
    let mut s = chat(Mode::Default);
    let state = |s: &ChatState, id: &str| s.session.transcript.tool(id).map(|t| t.state);
    let status = |s: &mut ChatState, id: &str, status: WireStatus| {
        s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
            id: id.into(),
            fields: Box::new(ToolCallFields {
                status: Some(status),
                ..Default::default()
            }),
        }));
    };
    let mut call = ToolCall::placeholder("t1");
    call.kind = ToolKind::Execute;
    s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(call))));
    assert_eq!(state(&s, "t1"), Some(ToolState::Pending));
    ask(&mut s, 1, "t1", ToolKind::Execute);
    assert_eq!(state(&s, "t1"), Some(ToolState::AwaitingApproval));
    key(&mut s, Action::ch('y'));
    assert_eq!(state(&s, "t1"), Some(ToolState::Approved));
    assert_eq!(ToolState::Approved.label(), "approved");
    status(&mut s, "t1", WireStatus::Pending);
    assert_eq!(state(&s, "t1"), Some(ToolState::Approved));
    status(&mut s, "t1", WireStatus::InProgress);
    assert_eq!(state(&s, "t1"), Some(ToolState::InProgress));
    status(&mut s, "t1", WireStatus::Completed);
    assert_eq!(state(&s, "t1"), Some(ToolState::Completed));

    // The agent said it runs while the card waited: its word is newer.
    ask(&mut s, 2, "t2", ToolKind::Execute);
    status(&mut s, "t2", WireStatus::InProgress);
    assert_eq!(state(&s, "t2"), Some(ToolState::AwaitingApproval));
    key(&mut s, Action::ch('y'));
    assert_eq!(state(&s, "t2"), Some(ToolState::InProgress));

    ask(&mut s, 3, "t3", ToolKind::Execute);
    key(&mut s, Action::ch('n'));
    assert_eq!(state(&s, "t3"), Some(ToolState::Rejected));
    assert_eq!(ToolState::Rejected.label(), "denied");
}

/// The footer says "Shift-Tab mode" while a card has the keys: Shift-Tab
/// changes the mode there too, not the card (Tab, j and k move between
/// cards).
#[test]
fn shift_tab_on_a_focused_card_changes_the_mode() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    ask(&mut s, 2, "b", ToolKind::Edit);
    assert_eq!(s.view.focus, Focus::CARDS);
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(s.view.cursor.selected, 1);
    key(&mut s, Action::key(Code::BackTab));
    assert_eq!(s.gate.mode, Mode::Default.next());
    assert_eq!(s.view.cursor.selected, 1, "the card stays");
    // Auto asks whether to allow what waits; no.
    key(&mut s, Action::ch('n'));
    key(&mut s, Action::ch('k'));
    assert_eq!(s.view.cursor.selected, 0);
    let hint = crate::keys::footer_hints().join(" · ");
    assert!(hint.contains("Shift-Tab mode"), "{hint}");
}

/// A session/load replay that leaves a call open (a tool call replayed
/// without its result) does not leave it spinning once the session is
/// open: it has no result, as far as warden knows.
#[test]
fn a_call_a_load_replay_left_open_is_not_running() {
    let mut s = ChatState::new("demo", "/w");
    let mut call = ToolCall::placeholder("old");
    call.status = WireStatus::InProgress;
    s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(call))));
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: crate::model::SessionOrigin::Loaded,
    }));
    assert_eq!(
        s.session.transcript.tool("old").map(|t| t.state),
        Some(ToolState::NoResult)
    );
}

/// A deny reason is sent as the next prompt: Up brings it back like one.
#[test]
fn a_deny_reason_goes_into_the_history() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    key(&mut s, Action::ch('r'));
    key(&mut s, Action::Paste("not that file".into()));
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(
        s.view.drafts.history.last().map(String::as_str),
        Some("not that file")
    );
    s.update(Msg::TurnEnded(StopReason::Cancelled));
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    key(&mut s, Action::key(Code::Up));
    assert_eq!(s.view.composer.text(), "not that file");
}

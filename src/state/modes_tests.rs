//! The agent's own modes: warden keeps the agent in a mode that asks
//! (issue 10 item 1), and mode changes or a bypass never approve waiting
//! cards without a yes (item 5, the bypass extras).

use crate::state::{Code, Key};
use pretty_assertions::assert_eq;

use super::*;
use crate::model::{
    AgentMode, OptionKind, PermissionOption, SessionOrigin, ToolCallFields, ToolKind,
};

fn mode(id: &str, name: &str, description: &str) -> AgentMode {
    AgentMode {
        id: id.into(),
        name: name.into(),
        description: Some(description.into()),
    }
}

/// qwen-code 0.24.4's modes, current `auto`.
fn qwen(config_option: Option<&str>) -> AgentModes {
    AgentModes {
        current: "auto".into(),
        available: vec![
            mode(
                "plan",
                "Plan",
                "Analyze only, do not modify files or execute commands",
            ),
            mode(
                "default",
                "Default",
                "Require approval for file edits or shell commands",
            ),
            mode("auto-edit", "Auto Edit", "Automatically approve file edits"),
            mode(
                "auto",
                "Auto",
                "LLM classifier auto-approves safe actions, blocks risky ones",
            ),
            mode("yolo", "YOLO", "Automatically approve all tools"),
        ],
        config_option_id: config_option.map(str::to_string),
    }
}

fn fast_agent() -> AgentModes {
    AgentModes {
        current: "agent".into(),
        available: vec![mode("agent", "Agent", "You are a helpful AI Agent.")],
        config_option_id: None,
    }
}

fn opened(mode: Mode, modes: Option<AgentModes>) -> (ChatState, Vec<Effect>) {
    let mut s = ChatState::new("qwen", "/w");
    s.gate.mode = mode;
    s.gate.agent_policy.name = "qwen".into();
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes,
        origin: Default::default(),
    }));
    (s, effects)
}

fn set_mode(id: &str, config_option: Option<&str>) -> Effect {
    Effect::SetAgentMode {
        mode_id: id.into(),
        config_option: config_option.map(str::to_string),
    }
}

fn submit(s: &mut ChatState, text: &str) -> Vec<Effect> {
    s.update(Msg::Action(Action::Paste(text.into())));
    s.update(Msg::Action(Action::key(Code::Enter)))
}

fn warnings(s: &ChatState) -> Vec<String> {
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

#[test]
fn a_session_opening_in_auto_is_moved_to_the_asking_mode_before_any_prompt() {
    let (mut s, effects) = opened(Mode::Default, Some(qwen(Some("mode"))));
    assert_eq!(effects, vec![set_mode("default", Some("mode"))]);
    assert_eq!(
        s.session.connection,
        Connection::Starting,
        "not ready until it moved"
    );
    assert_eq!(submit(&mut s, "touch x"), Vec::new(), "no prompt yet");
    assert!(s.session.turn.is_none());
    assert_eq!(s.view.drafts.queue, ["touch x"], "queued meanwhile");
    let effects = s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Ok(()),
    });
    assert_eq!(
        s.session.connection,
        Connection::Ready {
            session_id: "s".into()
        }
    );
    assert_eq!(
        s.session.agent_modes.as_ref().map(|m| m.current.as_str()),
        Some("default")
    );
    assert_eq!(
        effects,
        vec![Effect::SendPrompt("touch x".into())],
        "the queued message goes once the agent is in its asking mode"
    );
}

#[test]
fn a_refused_move_blocks_every_prompt() {
    let (mut s, _) = opened(Mode::Default, Some(qwen(None)));
    s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Err("not now".into()),
    });
    assert!(matches!(s.session.connection, Connection::Ready { .. }));
    assert_eq!(submit(&mut s, "touch x"), Vec::new());
    assert!(
        s.session
            .failed
            .as_deref()
            .is_some_and(|f| f.contains("not now"))
    );
    assert!(
        s.view
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("no prompt"))
    );
}

#[test]
fn the_configured_asking_mode_wins_and_an_unknown_one_is_said() {
    let mut s = ChatState::new("qwen", "/w");
    s.gate.configured_asking_mode = Some("plan".into());
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: Some(qwen(None)),
        origin: Default::default(),
    }));
    assert_eq!(effects, vec![set_mode("plan", None)]);
    let mut s = ChatState::new("qwen", "/w");
    s.gate.configured_asking_mode = Some("careful".into());
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: Some(qwen(None)),
        origin: Default::default(),
    }));
    assert_eq!(effects, vec![set_mode("default", None)]);
    assert!(warnings(&s)[0].contains("asking_mode = \"careful\""));
}

#[test]
fn an_agent_in_its_asking_mode_is_ready_at_once() {
    let mut modes = qwen(None);
    modes.current = "default".into();
    let (s, effects) = opened(Mode::Default, Some(modes));
    assert_eq!(effects, Vec::new());
    assert!(matches!(s.session.connection, Connection::Ready { .. }));
    let (s, effects) = opened(Mode::Plan, None);
    assert_eq!(effects, Vec::new(), "no modes: nothing to move");
    assert!(matches!(s.session.connection, Connection::Ready { .. }));
    assert!(!s.gate.no_asking_mode, "no modes is not a refusal of Plan");
}

#[test]
fn an_agent_without_an_asking_mode_is_refused_in_plan_only() {
    let (mut s, effects) = opened(Mode::Plan, Some(fast_agent()));
    assert_eq!(effects, Vec::new());
    assert!(s.gate.no_asking_mode);
    assert!(warnings(&s)[0].contains("none of qwen's modes"));
    assert_eq!(submit(&mut s, "edit it"), Vec::new());
    assert!(s.session.turn.is_none());
    assert!(
        warnings(&s)
            .last()
            .is_some_and(|w| w.contains("Plan is refused"))
    );
    s.update(Msg::Action(Action::key(Code::BackTab)));
    assert_eq!(s.gate.mode, Mode::Default);
    assert_eq!(
        s.update(Msg::Action(Action::key(Code::Enter))),
        vec![Effect::SendPrompt("edit it".into())]
    );
}

#[test]
fn an_agent_moving_itself_into_a_mode_that_never_asks_is_moved_back() {
    let mut modes = qwen(None);
    modes.current = "default".into();
    let (mut s, _) = opened(Mode::Default, Some(modes));
    let effects = s.update(Msg::Update(SessionUpdate::CurrentMode("yolo".into())));
    assert_eq!(effects, vec![set_mode("default", None)]);
    assert!(warnings(&s)[0].contains("moved itself into its mode `YOLO`"));
    // Its confirmation of warden's move is no surprise.
    let effects = s.update(Msg::Update(SessionUpdate::CurrentMode("default".into())));
    assert_eq!(effects, Vec::new());
    // A config option update that says the same is handled alike.
    let mut moved = qwen(Some("mode"));
    moved.current = "auto-edit".into();
    let effects = s.update(Msg::Update(SessionUpdate::ConfigModes(moved)));
    assert_eq!(effects, vec![set_mode("default", Some("mode"))]);
}

#[test]
fn a_mode_the_user_picks_stays_with_its_warning() {
    let mut modes = qwen(None);
    modes.current = "default".into();
    let (mut s, _) = opened(Mode::Default, Some(modes));
    s.update(Msg::Action(Action::OpenModeMenu));
    // Items: Plan, Default, Auto, then the agent's own that add something
    // (`auto-edit`, `yolo`: not its Plan, Default or Auto); `yolo` is last.
    assert_eq!(s.mode_menu_items().len(), 5);
    let effects = s.update(Msg::Action(Action::PickModeItem(4)));
    assert_eq!(effects, vec![set_mode("yolo", None)]);
    assert!(warnings(&s)[0].starts_with("warning: in the agent's mode `YOLO`"));
    let effects = s.update(Msg::Update(SessionUpdate::CurrentMode("yolo".into())));
    assert_eq!(effects, Vec::new(), "the user chose it");
}

#[test]
fn a_restart_moves_the_new_session_again() {
    let (mut s, _) = opened(Mode::Default, Some(qwen(None)));
    s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Ok(()),
    });
    s.update(Msg::AgentExited {
        status: "exit 1".into(),
        stderr_tail: Vec::new(),
    });
    s.update(Msg::Action(Action::Restart));
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s2".into(),
        modes: Some(qwen(None)),
        origin: SessionOrigin::Loaded,
    }));
    assert_eq!(effects, vec![set_mode("default", None)]);
    assert_eq!(s.session.connection, Connection::Starting);
}

fn edit(id: RequestId, tool: &str) -> Msg {
    Msg::PermissionRequested {
        id,
        request: Box::new(PermissionRequest {
            session_id: "s".into(),
            tool_call_id: tool.into(),
            fields: ToolCallFields {
                title: Some(format!("Edit {tool}")),
                kind: Some(ToolKind::Edit),
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
            client: false,
        }),
    }
}

fn two_cards() -> ChatState {
    let (mut s, _) = opened(Mode::Default, None);
    submit(&mut s, "edit both");
    s.update(edit(1, "a"));
    s.update(edit(2, "b"));
    s.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    assert_eq!(s.view.focus, Focus::COMPOSER);
    s
}

fn responses(effects: &[Effect]) -> Vec<(RequestId, PermissionOutcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RespondPermission { id, outcome } => Some((*id, outcome.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn the_dropdown_into_auto_asks_before_approving_waiting_cards() {
    let mut s = two_cards();
    s.update(Msg::Action(Action::OpenModeMenu));
    let effects = s.update(Msg::Action(Action::PickModeItem(2)));
    assert_eq!(s.gate.mode, Mode::Auto);
    assert_eq!(responses(&effects), Vec::new());
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::AllowWaiting(vec![1, 2])))
    );
    let effects = s.update(Msg::Action(Action::ch('n')));
    assert_eq!(responses(&effects), Vec::new());
    assert_eq!(s.gate.approvals.len(), 2, "n keeps them as cards");
    assert_eq!(s.gate.mode, Mode::Auto, "Auto holds for new requests");
    let later = s.update(edit(3, "c"));
    assert_eq!(
        responses(&later),
        vec![(3, PermissionOutcome::Selected("allow".into()))]
    );
}

#[test]
fn yes_approves_only_the_cards_still_allowed() {
    let mut s = two_cards();
    s.update(Msg::Action(Action::key(Code::BackTab)));
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::AllowWaiting(vec![1, 2])))
    );
    let effects = s.update(Msg::Action(Action::ch('y')));
    assert_eq!(
        responses(&effects),
        vec![
            (1, PermissionOutcome::Selected("allow".into())),
            (2, PermissionOutcome::Selected("allow".into()))
        ]
    );
    let reasons: Vec<String> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::LogDecision(r) => Some(r.reason.clone()),
            _ => None,
        })
        .collect();
    assert!(
        reasons.iter().all(|r| r.ends_with("approved by you")),
        "{reasons:?}"
    );
}

#[test]
fn bypass_confirmed_asks_about_the_other_waiting_cards() {
    let mut s = two_cards();
    s.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    assert_eq!(s.view.focus, Focus::CARDS);
    s.update(Msg::Action(Action::ch('b')));
    let effects = s.update(Msg::Action(Action::ch('n')));
    assert_eq!(effects, Vec::new());
    assert!(!s.gate.agent_policy.bypass);
    s.update(Msg::Action(Action::ch('b')));
    let effects = s.update(Msg::Action(Action::ch('y')));
    assert!(s.gate.agent_policy.bypass);
    assert_eq!(
        responses(&effects),
        vec![(1, PermissionOutcome::Selected("allow".into()))],
        "only the card b was pressed on"
    );
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Confirm(Question::AllowCovered(vec![2])))
    );
}

#[test]
fn in_plan_the_agent_stays_in_its_asking_mode_unless_opted_in() {
    // qwen-code's `plan` ("Analyze only") and Claude Code's `plan` are
    // never picked by name: in Claude's the agent ran a `touch` unasked.
    let (mut s, effects) = opened(Mode::Plan, Some(qwen(None)));
    assert_eq!(effects, vec![set_mode("default", None)]);
    s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Ok(()),
    });
    assert!(matches!(s.session.connection, Connection::Ready { .. }));
    assert!(!s.agent_enforces_plan());
    // Leaving Plan and coming back never moves the agent.
    for _ in 0..3 {
        let effects = s.update(Msg::Action(Action::key(Code::BackTab)));
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::SetAgentMode { .. })),
            "{effects:?}"
        );
    }
    assert_eq!(s.gate.mode, Mode::Plan);
    assert_eq!(
        s.session.agent_modes.as_ref().map(|m| m.current.as_str()),
        Some("default")
    );
}

#[test]
fn an_agent_moving_itself_into_its_plan_mode_in_plan_is_moved_back() {
    let (mut s, _) = opened(Mode::Plan, Some(qwen(None)));
    s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Ok(()),
    });
    for sneaked in ["plan", "auto-edit", "made-up"] {
        let effects = s.update(Msg::Update(SessionUpdate::CurrentMode(sneaked.into())));
        assert_eq!(effects, vec![set_mode("default", None)], "{sneaked}");
        assert!(
            warnings(&s)
                .last()
                .is_some_and(|w| w.contains("moved itself into its mode")),
            "{sneaked}"
        );
        s.update(Msg::AgentModeSet {
            mode_id: "default".into(),
            result: Ok(()),
        });
    }
}

#[test]
fn a_mode_warden_once_asked_for_is_not_expected_again() {
    // The user picks `yolo` in the dropdown (expected), the agent is moved
    // back to `default` meanwhile; its own later move into `yolo` is a
    // move like any other.
    let (mut s, _) = opened(Mode::Default, Some(qwen(None)));
    s.update(Msg::AgentModeSet {
        mode_id: "default".into(),
        result: Ok(()),
    });
    let pick = s.switch_agent_mode("yolo");
    assert_eq!(pick, set_mode("yolo", None));
    s.update(Msg::AgentModeSet {
        mode_id: "yolo".into(),
        result: Ok(()),
    });
    s.update(Msg::Update(SessionUpdate::CurrentMode("default".into())));
    let effects = s.update(Msg::Update(SessionUpdate::CurrentMode("yolo".into())));
    assert_eq!(effects, vec![set_mode("default", None)]);
}

#[test]
fn agent_plan_mode_is_an_opt_in_the_chat_says_the_agent_enforces() {
    let mut s = ChatState::new("qwen", "/w");
    s.gate.mode = Mode::Plan;
    s.gate.agent_plan_mode = Some("plan".into());
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: Some(qwen(None)),
        origin: SessionOrigin::New,
    }));
    assert_eq!(effects, vec![set_mode("plan", None)]);
    assert!(s.agent_enforces_plan());
    let text = crate::state::infos(&s);
    assert!(
        text.iter()
            .any(|t| t.contains("Plan is enforced by qwen's own mode")),
        "{text:?}"
    );
    // An opt-in the agent does not offer: a warning, and the asking mode.
    let mut s = ChatState::new("qwen", "/w");
    s.gate.mode = Mode::Plan;
    s.gate.agent_plan_mode = Some("planning".into());
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: Some(qwen(None)),
        origin: SessionOrigin::New,
    }));
    assert_eq!(effects, vec![set_mode("default", None)]);
    assert!(!s.agent_enforces_plan());
    assert!(
        warnings(&s)
            .iter()
            .any(|w| w.contains("agent_plan_mode = \"planning\" is not one of")),
        "{:?}",
        warnings(&s)
    );
}

#[test]
fn agent_plan_mode_still_names_the_mode_for_plan() {
    let mut s = ChatState::new("qwen", "/w");
    s.gate.mode = Mode::Plan;
    s.gate.agent_plan_mode = Some("default".into());
    let effects = s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: Some(qwen(None)),
        origin: SessionOrigin::New,
    }));
    assert_eq!(effects, vec![set_mode("default", None)]);
}

#[test]
fn a_bypass_names_the_agent_it_is_written_for() {
    // The agent calls itself claude-code; its bypass is written to the
    // block of its identity, run-agent: the question, the notice and the
    // log name that, the self-chosen name only in parentheses.
    let mut s = two_cards();
    s.session.agent_name = "claude-code".into();
    s.session.settings_agent = Some("run-agent".into());
    s.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    s.update(Msg::Action(Action::ch('b')));
    let Some(Modal::Confirm(question)) = s.view.focus.modal.clone() else {
        panic!("no question: {:?}", s.view.focus.modal);
    };
    assert!(
        question.text(&s.bypass_name()).starts_with(
            "Bypass run-agent (claude-code) from now on? Every call of run-agent (claude-code) "
        ),
        "{}",
        question.text(&s.bypass_name())
    );
    s.update(Msg::Action(Action::ch('n')));
    assert_eq!(
        s.view.notice.as_deref(),
        Some("run-agent (claude-code) is not bypassed")
    );
    s.update(Msg::Action(Action::ch('b')));
    let effects = s.update(Msg::Action(Action::ch('y')));
    assert!(
        effects.contains(&Effect::EditSettings(SettingsEdit::SetBypass {
            agent: "run-agent".into(),
            value: true
        }))
    );
    let reasons: Vec<String> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::LogDecision(r) => Some(r.reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["bypass for run-agent (claude-code) (set by you)"]);
    // The same name twice is said once.
    s.session.agent_name = "run-agent".into();
    assert_eq!(s.bypass_name(), "run-agent");
}

/// opencode 1.18.33's modes, as its rig's transcripts show them (a
/// `mode` config option).
fn opencode() -> AgentModes {
    AgentModes {
        current: "build".into(),
        available: vec![
            mode(
                "build",
                "build",
                "The default agent. Executes tools based on configured permissions.",
            ),
            mode("plan", "plan", "Plan mode. Disallows all edit tools."),
        ],
        config_option_id: Some("mode".into()),
    }
}

#[test]
fn opencodes_build_mode_is_named_with_what_to_set_and_still_refused_in_plan() {
    let (s, effects) = opened(Mode::Default, Some(opencode()));
    assert_eq!(effects, Vec::new(), "build stays");
    assert!(
        s.gate.no_asking_mode,
        "warden cannot tell it asks: fail closed"
    );
    let all = warnings(&s);
    assert_eq!(all.len(), 1, "{all:?}");
    let warning = &all[0];
    assert!(
        warning.starts_with("warning: qwen's mode `build` asks only where"),
        "{warning}"
    );
    assert!(
        warning.contains("\"permission\": {\"edit\": \"ask\", \"bash\": \"ask\"}"),
        "{warning}"
    );
    assert!(!warning.contains("none of"), "{warning}");
}

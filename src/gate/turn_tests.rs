//! Requests of a session with no turn running (issue 22 item 2), the
//! refusals the runtime's facts call for, and which names an agent's rules
//! find it by (item 5): decided here, every one of them logged.

use crate::state::Code;
use pretty_assertions::assert_eq;

use crate::model::{PermissionOutcome, StopReason, ToolKind};
use crate::policy::{Mode, Rule, RuleDecision};
use crate::record::{Answerer, Verdict};
use crate::state::tests::{answers, chat, client_write, request, selected};
use crate::state::{ChatState, Effect, Msg, Refusal, RequestFacts};

/// What the runtime hands the gate for a request of the agent's.
fn from_the_agent(id: u64, request: crate::model::PermissionRequest) -> Msg {
    Msg::PermissionChecked {
        id,
        facts: Box::new(RequestFacts {
            in_session: true,
            ..RequestFacts::of(&request, None)
        }),
        request: Box::new(request),
    }
}

fn logged(effects: &[Effect]) -> Vec<(Verdict, Answerer)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::LogDecision(r) => Some((r.decision.clone(), r.source.clone())),
            _ => None,
        })
        .collect()
}

fn idle(mode: Mode) -> ChatState {
    let mut s = chat(mode);
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    assert!(!s.is_busy());
    s
}

#[test]
fn a_request_of_a_session_with_no_turn_is_refused_whatever_the_mode() {
    for mode in [Mode::Auto, Mode::Default, Mode::Plan] {
        let mut s = idle(mode);
        s.gate.agent_policy.bypass = true;
        let effects = s.update(from_the_agent(
            1,
            request("t", ToolKind::Execute, "rm -rf x"),
        ));
        assert_eq!(
            answers(&effects),
            vec![(1, selected("reject-once"))],
            "{mode:?}"
        );
        assert_eq!(logged(&effects), vec![(Verdict::Denied, Answerer::Safety)]);
        assert!(s.gate.approvals.is_empty(), "no card");
        // The client's write too.
        let effects = s.update(from_the_agent(2, client_write("/w/a.rs")));
        assert_eq!(answers(&effects), vec![(2, selected("reject"))], "{mode:?}");
        assert_eq!(logged(&effects), vec![(Verdict::Denied, Answerer::Safety)]);
        assert_eq!(
            crate::state::tests::errors_of(&s)
                .iter()
                .filter(|e| e.contains("no turn running"))
                .count(),
            2,
            "the chat says so"
        );
    }
}

/// A request after a turn that was cancelled, or that warden ended when
/// the agent did not: the chat says so, and never that the agent acted
/// unasked (issue 33 item 2).
#[test]
fn a_request_after_a_cancelled_or_overdue_turn_says_whose_end_it_was() {
    let mut s = chat(Mode::Default);
    s.update(Msg::TurnEnded(StopReason::Cancelled));
    s.update(from_the_agent(1, request("t", ToolKind::Execute, "ls")));
    let mut s2 = chat(Mode::Default);
    s2.cancel();
    s2.update(Msg::CancelOverdue(std::time::Duration::from_secs(5)));
    s2.update(from_the_agent(1, request("t", ToolKind::Execute, "ls")));
    let errors = crate::state::tests::errors_of(&s);
    let refused = errors.iter().find(|e| e.contains("warden refused"));
    assert!(
        refused.is_some_and(|e| e.contains("the last one was cancelled")),
        "{errors:?}"
    );
    let errors = crate::state::tests::errors_of(&s2);
    let refused = errors.iter().find(|e| e.contains("warden refused"));
    assert!(
        refused.is_some_and(|e| e.contains("warden ended the last one")),
        "{errors:?}"
    );
    for e in errors.iter().chain(&crate::state::tests::errors_of(&s)) {
        assert!(!e.contains("unasked"), "{e}");
    }
}

/// The prompt's answer came first, the request after it: no turn runs.
#[test]
fn a_request_after_the_turn_ended_is_refused() {
    let mut s = chat(Mode::Auto);
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    let effects = s.update(from_the_agent(1, client_write("/w/late.rs")));
    assert_eq!(answers(&effects), vec![(1, selected("reject"))]);
}

/// A turn that was cancelled (its grace running): cancelled, logged.
#[test]
fn a_request_during_a_cancelled_turn_is_answered_cancelled() {
    let mut s = chat(Mode::Auto);
    s.update(Msg::Action(crate::state::Action::key(Code::Esc)));
    assert!(s.session.turn.as_ref().is_some_and(|t| t.cancelling));
    let effects = s.update(from_the_agent(1, request("t", ToolKind::Edit, "Edit")));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    assert_eq!(
        logged(&effects),
        vec![(Verdict::Cancelled, Answerer::Safety)]
    );
}

/// A session being opened or loaded has no turn either.
#[test]
fn a_request_before_the_session_is_open_is_refused() {
    let mut s = ChatState::new("demo", "/w");
    s.gate.mode = Mode::Auto;
    let effects = s.update(from_the_agent(
        1,
        request("t", ToolKind::Execute, "touch x"),
    ));
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
}

/// The same request in the chat's own turn is the mode's to decide.
#[test]
fn a_request_in_the_chats_own_turn_is_decided_as_usual() {
    let mut s = chat(Mode::Auto);
    let effects = s.update(from_the_agent(
        1,
        request("t", ToolKind::Execute, "touch x"),
    ));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(
        logged(&effects),
        vec![(
            Verdict::Allowed,
            Answerer::Decided(crate::policy::Source::Auto)
        )]
    );
}

/// A refusal the runtime found (one of warden's own files) is the gate's
/// to answer and log, whatever the mode, and leaves the agent's tool call
/// as it was.
#[test]
fn a_protected_refusal_is_answered_and_logged_by_the_gate() {
    let mut s = chat(Mode::Auto);
    s.gate.agent_policy.bypass = true;
    let effects = s.update(Msg::PermissionChecked {
        id: 1,
        request: Box::new(request(
            "t",
            ToolKind::Edit,
            "Edit ~/.config/warden/config.toml",
        )),
        facts: Box::new(RequestFacts {
            refusal: Some(Refusal::Protected("warden's settings file".into())),
            in_session: true,
            ..RequestFacts::of(
                &request("t", ToolKind::Edit, "Edit ~/.config/warden/config.toml"),
                None,
            )
        }),
    });
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
    assert_eq!(
        logged(&effects),
        vec![(Verdict::Denied, Answerer::Protected)]
    );
}

/// The IO refused a call the gate allowed: a second record, and a line.
#[test]
fn a_call_the_io_refused_is_logged_again() {
    let mut s = chat(Mode::Auto);
    s.update(from_the_agent(4, client_write("/w/link")));
    let effects = s.update(Msg::ClientRefused {
        id: 4,
        refusal: Refusal::Protected("a hard link to warden's settings".into()),
    });
    assert_eq!(
        logged(&effects),
        vec![(Verdict::Denied, Answerer::Protected)]
    );
}

fn rule(decision: RuleDecision, agent: &str) -> Rule {
    let mut rule = Rule::new(decision);
    rule.agent = Some(agent.into());
    rule.command = Some("touch *".into());
    rule
}

fn shell(id: &str) -> crate::model::PermissionRequest {
    let mut req = request(id, ToolKind::Execute, "touch x");
    req.fields.raw_input = Some(serde_json::json!({ "command": "touch x" }));
    req
}

/// Item 5: what an agent calls itself is display only: no allow rule of
/// that name; deny rules of every name it had.
#[test]
fn an_agents_own_name_gets_no_allow_rule_and_escapes_no_deny_rule() {
    let mut s = chat(Mode::Default);
    s.gate.rules = vec![rule(RuleDecision::Allow, "claude-code")];
    s.update(Msg::AgentNamed("claude-code".into()));
    assert_eq!(s.session.agent_name, "claude-code");
    let effects = s.update(from_the_agent(1, shell("t1")));
    assert!(answers(&effects).is_empty(), "it asks: {effects:?}");

    for named in ["demo", "claude-code"] {
        let mut s = chat(Mode::Auto);
        s.gate.rules = vec![rule(RuleDecision::Deny, named)];
        s.update(Msg::AgentNamed("claude-code".into()));
        let effects = s.update(from_the_agent(1, shell("t1")));
        assert_eq!(
            answers(&effects),
            vec![(1, selected("reject-once"))],
            "{named}"
        );
    }
    // A name it claimed but was refused still counts for deny rules.
    let mut s = chat(Mode::Auto);
    s.gate.rules = vec![rule(RuleDecision::Deny, "claude-code")];
    s.update(Msg::AgentAlias("claude-code".into()));
    assert_eq!(s.session.agent_name, "demo");
    let effects = s.update(from_the_agent(1, shell("t1")));
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
}

/// An agent no block binds gets no allow rule naming an agent; once a
/// block is written for it, that block's rules are its own.
#[test]
fn allow_rules_naming_an_agent_need_a_block_that_binds_it() {
    let mut s = chat(Mode::Default);
    s.gate.agent_policy.unbound = true;
    s.gate.rules = vec![rule(RuleDecision::Allow, "demo")];
    let effects = s.update(from_the_agent(1, shell("t1")));
    assert!(answers(&effects).is_empty(), "unbound: it asks");
    let effects = s.update(Msg::SettingsChanged {
        rules: vec![rule(RuleDecision::Allow, "demo-2")],
        bypassed: Vec::new(),
        agent_block: Some("demo-2".into()),
        note: None,
    });
    assert!(answers(&effects).is_empty(), "never allowed unseen");
    assert!(matches!(
        s.view.focus.modal,
        Some(crate::state::Modal::Confirm(
            crate::state::Question::AllowCovered(_)
        ))
    ));
    let effects = s.update(Msg::Action(crate::state::Action::ch('y')));
    assert_eq!(
        answers(&effects),
        vec![(1, selected("allow-once"))],
        "bound to its block, the block's rule allows the waiting card once the user says yes"
    );
    assert_eq!(s.gate.agent_policy.name, "demo-2");
    assert!(s.gate.agent_policy.aliases.contains(&"demo".to_string()));
}

/// The block `b` wrote arrives (`SettingsChanged` with the agent's block):
/// the bypass it records never allows the waiting cards unseen.
#[test]
fn binding_to_a_bypassed_block_allows_no_waiting_card_unseen() {
    let mut s = chat(Mode::Default);
    s.gate.agent_policy.unbound = true;
    for id in [1, 2] {
        s.update(from_the_agent(id, shell(&format!("t{id}"))));
    }
    assert_eq!(s.gate.approvals.len(), 2);
    let effects = s.update(Msg::SettingsChanged {
        rules: Vec::new(),
        bypassed: vec!["demo".into()],
        agent_block: Some("demo".into()),
        note: None,
    });
    assert!(s.gate.agent_policy.bypass);
    assert!(answers(&effects).is_empty(), "{effects:?}");
    assert_eq!(s.gate.approvals.len(), 2);
}

/// warden's own call refused for safety is one entry in the transcript:
/// the runtime marking it failed afterwards updates that entry, it does
/// not add an agent's tool call of the same id beside it.
#[test]
fn a_client_call_refused_for_safety_is_one_entry() {
    let mut s = chat(Mode::Default);
    let write = client_write("/w/.git/hooks/pre-commit");
    let id = write.tool_call_id.clone();
    s.update(Msg::PermissionChecked {
        id: 3,
        facts: Box::new(RequestFacts {
            refusal: Some(Refusal::Safety("the network is closed".into())),
            in_session: true,
            ..RequestFacts::of(&write, None)
        }),
        request: Box::new(write),
    });
    s.update(Msg::OwnToolUpdate {
        id: id.clone(),
        fields: Box::new(crate::model::ToolCallFields {
            status: Some(crate::model::WireStatus::Failed),
            ..Default::default()
        }),
    });
    let entries = s
        .session
        .transcript
        .entries()
        .iter()
        .filter(|e| matches!(&e.kind, crate::state::EntryKind::Tool(t) if t.call.id == id))
        .count();
    assert_eq!(entries, 1, "{:#?}", s.session.transcript.entries());
}

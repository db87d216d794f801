//! The agent's own "always" options: what warden really sends for them.

use crate::state::Code;
use pretty_assertions::assert_eq;

use super::tests::*;
use super::*;
use crate::model::{OptionKind, ToolKind};

// ---- The agent's own "always" options (issue 10 item 2) ----

#[test]
fn automatic_allows_never_answer_allow_always() {
    // Auto.
    let mut s = chat(Mode::Auto);
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", only_always())),
    });
    assert!(answers(&effects).is_empty(), "Auto: {effects:?}");
    assert_eq!(
        s.gate.approvals.len(),
        1,
        "Auto with only `allow_always` is a card"
    );
    // An allow rule.
    let mut s = chat(Mode::Default);
    let mut allow = crate::policy::Rule::new(crate::policy::RuleDecision::Allow);
    allow.command = Some("cargo test *".into());
    s.gate.rules = vec![allow];
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", only_always())),
    });
    assert!(answers(&effects).is_empty(), "rule: {effects:?}");
    assert_eq!(s.gate.approvals.len(), 1);
    // A read.
    let mut s = chat(Mode::Default);
    let mut read = request("t1", ToolKind::Read, "Read a.rs");
    read.options = only_always();
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(read),
    });
    assert!(answers(&effects).is_empty(), "read: {effects:?}");
    assert_eq!(s.gate.approvals.len(), 1);
    // Bypass.
    let mut s = chat(Mode::Default);
    s.gate.agent_policy.bypass = true;
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", only_always())),
    });
    assert!(answers(&effects).is_empty(), "bypass: {effects:?}");
    // A chat grant.
    let mut s = chat(Mode::Default);
    s.gate.grants = vec![ChatGrant::for_request(
        &crate::policy::RequestView::from_request(
            &shell_request("t0", "cargo test", options()),
            None,
        ),
    )];
    let covered = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", options())),
    });
    assert_eq!(answers(&covered), vec![(1, selected("allow-once"))]);
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(shell_request("t2", "cargo test", only_always())),
    });
    assert!(answers(&effects).is_empty(), "grant: {effects:?}");
    // --on-ask allow never sends allow_always either: it denies.
    let mut s = chat(Mode::Default);
    s.gate.headless = Some(OnAsk::Allow);
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", only_always())),
    });
    assert_eq!(answers(&effects), vec![(1, selected("reject"))]);
}

#[test]
fn picking_the_agents_always_answers_once_and_grants_for_this_chat() {
    for pick in [Action::ch('2'), Action::ClickChoice(1)] {
        let mut s = chat(Mode::Default);
        s.update(Msg::PermissionRequested {
            id: 1,
            request: Box::new(shell_request("t1", "cargo test --lib", options())),
        });
        let effects = key(&mut s, pick.clone());
        assert_eq!(
            answers(&effects),
            vec![(1, selected("allow-once"))],
            "{pick:?}: the agent is answered once, never always"
        );
        assert_eq!(logged_sources(&effects), vec!["chat grant"]);
        assert_eq!(s.gate.grants.len(), 1, "{pick:?}: warden keeps the always");
        let line = transcript_decisions(&s).join("\n");
        assert!(line.contains("`cargo test …`"), "{line}");
        // The grant covers the same program and subcommand, nothing else.
        let later = s.update(Msg::PermissionRequested {
            id: 2,
            request: Box::new(shell_request("t2", "cargo test --doc", options())),
        });
        assert_eq!(answers(&later), vec![(2, selected("allow-once"))]);
        let other = s.update(Msg::PermissionRequested {
            id: 3,
            request: Box::new(shell_request("t3", "rm -rf target", options())),
        });
        assert!(answers(&other).is_empty(), "another command asks");
    }
    // Enter on the highlighted "always" option.
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", options())),
    });
    key(&mut s, Action::key(Code::Down));
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(s.gate.grants.len(), 1);
}

#[test]
fn reject_always_answers_reject_once() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, "a", ToolKind::Edit);
    let effects = key(&mut s, Action::ch('4'));
    assert_eq!(answers(&effects), vec![(1, selected("reject-once"))]);
}

#[test]
fn with_only_always_on_offer_y_waits_and_the_explicit_pick_is_sent_with_a_warning() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", only_always())),
    });
    for k in ['y', 'a', 'b'] {
        assert!(answers(&key(&mut s, Action::ch(k))).is_empty(), "{k}");
        assert_eq!(s.gate.approvals.len(), 1, "{k}: the card still waits");
        assert!(
            s.view
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("Always allow")),
            "{:?}",
            s.view.notice
        );
    }
    assert!(!s.gate.agent_policy.bypass);
    let effects = key(&mut s, Action::ch('1'));
    assert_eq!(answers(&effects), vec![(1, selected("always"))]);
    let line = transcript_decisions(&s).join("\n");
    assert!(line.contains("may stop asking"), "{line}");
}

#[test]
fn switch_mode_answers_only_an_option_that_keeps_the_agent_asking() {
    for (pick, want) in [
        (Action::ch('1'), "default"),
        (Action::ch('2'), "default"),
        (Action::ch('3'), "default"),
        (Action::ch('y'), "default"),
        (Action::ClickChoice(0), "default"),
        (Action::ch('4'), "plan"),
    ] {
        let mut s = chat(Mode::Plan);
        s.update(Msg::PermissionRequested {
            id: 1,
            request: Box::new(exit_plan(exit_plan_options())),
        });
        let effects = key(&mut s, pick.clone());
        assert_eq!(answers(&effects), vec![(1, selected(want))], "{pick:?}");
    }
    // An agent whose only allow options lead to modes that never ask: nothing is sent.
    let mut s = chat(Mode::Plan);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(exit_plan(vec![
            option(
                "bypassPermissions",
                "Yes, and bypass permissions",
                OptionKind::AllowAlways,
            ),
            option("yolo", "Yes", OptionKind::AllowOnce),
            option("plan", "No, keep planning", OptionKind::RejectOnce),
        ])),
    });
    for k in ['1', '2', 'y'] {
        assert!(answers(&key(&mut s, Action::ch(k))).is_empty(), "{k}");
        assert_eq!(s.gate.approvals.len(), 1);
    }
    assert_eq!(s.gate.mode, Mode::Plan);
    assert_eq!(
        answers(&key(&mut s, Action::ch('n'))),
        vec![(1, selected("plan"))]
    );
}

//! How an automatic decision reads in the transcript.

use insta::assert_snapshot;
use serde_json::json;

use super::gate_tests::{chat, claude_options, request, screen};
use crate::model::{ToolCallFields, ToolKind};
use crate::policy::RuleDecision;
use crate::state::Msg;
use crate::test_support::command_rule;

/// A request a settings rule allows is answered without a card, and the
/// transcript says so on one line naming the rule.
#[test]
fn a_rule_decision_line_in_the_transcript_80x16() {
    let mut state = chat(None);
    state.gate.rules = vec![command_rule(RuleDecision::Allow, "cargo test*")];
    state.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request(
            "call-test",
            ToolCallFields {
                title: Some("cargo test".into()),
                kind: Some(ToolKind::Execute),
                raw_input: Some(json!({ "command": "cargo test" })),
                tool_name: Some("Bash".into()),
                ..Default::default()
            },
            claude_options(),
        )),
    });
    assert!(state.gate.approvals.is_empty(), "the rule answers");
    assert_snapshot!(screen(&state, 80, 16));
}

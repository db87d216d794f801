//! Builders shared by the unit tests of several modules: permission
//! options and requests as agents send them, and settings rules.

use crate::model::{OptionKind, PermissionOption, PermissionRequest, ToolCallFields};
use crate::policy::{Rule, RuleDecision};

/// One permission option.
pub(crate) fn option(id: &str, name: &str, kind: OptionKind) -> PermissionOption {
    PermissionOption {
        id: id.into(),
        name: name.into(),
        kind,
    }
}

/// The options claude-code offers on a tool call.
pub(crate) fn claude_options() -> Vec<PermissionOption> {
    vec![
        option("allow_always", "Always Allow", OptionKind::AllowAlways),
        option("allow", "Allow", OptionKind::AllowOnce),
        option("reject", "Reject", OptionKind::RejectOnce),
    ]
}

/// A request of session `s1` about tool call `id`.
pub(crate) fn permission_request(
    id: &str,
    fields: ToolCallFields,
    options: Vec<PermissionOption>,
) -> PermissionRequest {
    PermissionRequest {
        session_id: "s1".into(),
        tool_call_id: id.into(),
        fields,
        options,
        client: false,
    }
}

/// A rule with no conditions.
pub(crate) fn rule(decision: RuleDecision) -> Rule {
    Rule::new(decision)
}

/// A rule on a shell command pattern.
pub(crate) fn command_rule(decision: RuleDecision, command: &str) -> Rule {
    Rule {
        command: Some(command.into()),
        ..rule(decision)
    }
}

/// A request of `session` about an edit by tool call `tool`, titled
/// `title`, with allow-once and reject-once options.
pub(crate) fn edit_request(session: &str, tool: &str, title: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: session.into(),
        tool_call_id: tool.into(),
        fields: ToolCallFields {
            title: Some(title.into()),
            kind: Some(crate::model::ToolKind::Edit),
            ..Default::default()
        },
        options: vec![
            option("allow-once", "allow-once", OptionKind::AllowOnce),
            option("reject-once", "reject-once", OptionKind::RejectOnce),
        ],
        client: false,
    }
}

/// A chat of the agent `demo` in `cwd` whose session `s` is open, idle.
pub(crate) fn ready_chat(cwd: &str) -> crate::state::ChatState {
    use crate::model::SessionInfo;
    use crate::state::{ChatState, Msg};
    let mut s = ChatState::new("demo", cwd);
    s.gate.agent_policy.name = "demo".into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    s
}

/// A read of `path`, as claude-code asks for one.
pub(crate) fn read_of(path: &str) -> PermissionRequest {
    permission_request(
        "t1",
        ToolCallFields {
            title: Some("Read".into()),
            kind: Some(crate::model::ToolKind::Read),
            locations: Some(vec![crate::model::Location {
                path: path.to_string(),
                line: None,
            }]),
            ..Default::default()
        },
        claude_options(),
    )
}

/// A FIFO at `path` (what a slow or hostile file looks like to a reader).
pub(crate) fn mkfifo(path: &std::path::Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

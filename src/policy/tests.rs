//! Tests of [`decide`]: the mode matrix, rule precedence, option choice,
//! shell lines, paths, and properties that must hold for any input.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::model::ToolKind;

pub(super) const HOME: &str = "/home/u";
pub(super) const CWD: &str = "/home/u/proj";

pub(super) fn opt(id: &str, kind: OptionKind) -> PermissionOption {
    PermissionOption {
        id: id.into(),
        name: id.into(),
        kind,
    }
}

/// The four options most agents send.
pub(super) fn all_options() -> Vec<PermissionOption> {
    vec![
        opt("always", OptionKind::AllowAlways),
        opt("once", OptionKind::AllowOnce),
        opt("reject", OptionKind::RejectOnce),
        opt("never", OptionKind::RejectAlways),
    ]
}

pub(super) fn request(kind: ToolKind) -> RequestView {
    RequestView {
        kind,
        title: "Tool".into(),
        tool_name: Some("Tool".into()),
        options: all_options(),
        ..RequestView::default()
    }
}

pub(super) fn shell(command: &str) -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: command.into(),
        tool_name: Some("Bash".into()),
        raw_input: Some(json!({ "command": command, "description": "run it" })),
        options: all_options(),
        ..RequestView::default()
    }
}

pub(super) fn at(kind: ToolKind, path: &str) -> RequestView {
    RequestView {
        locations: vec![path.into()],
        ..request(kind)
    }
}

pub(super) use crate::test_support::{command_rule, rule};

pub(super) fn path_rule(decision: RuleDecision, path: &str) -> Rule {
    Rule {
        path: Some(path.into()),
        ..rule(decision)
    }
}

/// Decide with the given mode, agent bypass, rules and grants.
pub(super) fn run(
    req: &RequestView,
    mode: Mode,
    bypass: bool,
    rules: &[Rule],
    grants: &[ChatGrant],
) -> Decision {
    let agent = AgentPolicy {
        name: "claude".into(),
        bypass,
        ..AgentPolicy::default()
    };
    decide(
        req,
        &Context {
            mode,
            agent: &agent,
            rules,
            grants,
            home: Some(Path::new(HOME)),
            cwd: Path::new(CWD),
            unattended: false,
        },
    )
}

pub(super) fn default_with(req: &RequestView, rules: &[Rule]) -> Decision {
    run(req, Mode::Default, false, rules, &[])
}

/// A short form for tables: "allow/auto", "deny/plan", "ask".
pub(super) fn short(d: &Decision) -> String {
    match d {
        Decision::Allow {
            option_id, source, ..
        } => format!("allow/{source}/{option_id}"),
        Decision::Deny {
            option_id, source, ..
        } => {
            format!(
                "deny/{source}/{}",
                option_id.as_deref().unwrap_or("cancelled")
            )
        }
        Decision::Ask { .. } => "ask".to_string(),
    }
}

#[test]
fn mode_by_kind_matrix_without_rules() {
    use ToolKind::*;
    let table: [(ToolKind, [&str; 3]); 10] = [
        (
            Read,
            ["allow/read/once", "allow/read/once", "allow/auto/once"],
        ),
        (
            Search,
            ["allow/read/once", "allow/read/once", "allow/auto/once"],
        ),
        (
            Think,
            ["allow/read/once", "allow/read/once", "allow/auto/once"],
        ),
        (Edit, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (Delete, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (Move, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (Execute, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (Fetch, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (Other, ["deny/plan/reject", "ask", "allow/auto/once"]),
        (SwitchMode, ["ask", "ask", "ask"]),
    ];
    let mut kinds = table.map(|(k, _)| k.as_str());
    let mut all = ToolKind::ALL.map(ToolKind::as_str);
    kinds.sort_unstable();
    all.sort_unstable();
    assert_eq!(kinds, all, "every kind, once");
    for (kind, want) in table {
        let got = Mode::ALL.map(|mode| short(&run(&request(kind), mode, false, &[], &[])));
        assert_eq!(got, want, "{kind:?} in plan, default, auto");
    }
}

#[test]
fn reasons_name_what_decided() {
    let plan = run(&request(ToolKind::Edit), Mode::Plan, false, &[], &[]);
    assert_eq!(
        plan,
        Decision::Deny {
            option_id: Some("reject".into()),
            source: Source::Plan,
            reason: "plan mode".into(),
        }
    );
    assert_eq!(
        run(&request(ToolKind::Fetch), Mode::Default, false, &[], &[]),
        Decision::Ask {
            reason: "external calls ask in default mode".into()
        }
    );
    assert_eq!(
        run(&request(ToolKind::Edit), Mode::Default, true, &[], &[]).reason(),
        "bypass for claude"
    );
    let note = Rule {
        note: Some("never in CI".into()),
        ..command_rule(RuleDecision::Deny, "rm *")
    };
    assert_eq!(
        default_with(&shell("rm -rf x"), &[note]),
        Decision::Deny {
            option_id: Some("reject".into()),
            source: Source::Rule,
            reason: "deny rule command=\"rm *\": never in CI".into(),
        }
    );
}

#[test]
fn precedence() {
    let edit = request(ToolKind::Edit);
    let deny_all = [rule(RuleDecision::Deny)];
    let ask_all = [rule(RuleDecision::Ask)];
    let allow_edits = [Rule {
        kind: Some(KindMatch::Kind(ToolKind::Edit)),
        ..rule(RuleDecision::Allow)
    }];
    let grant = [ChatGrant::for_request(&edit)];
    let cases: Vec<(&str, Decision, &str)> = vec![
        (
            "deny beats bypass",
            run(&edit, Mode::Default, true, &deny_all, &[]),
            "deny/rule/reject",
        ),
        (
            "deny beats auto",
            run(&edit, Mode::Auto, false, &deny_all, &[]),
            "deny/rule/reject",
        ),
        (
            "deny beats reads",
            run(
                &request(ToolKind::Read),
                Mode::Default,
                false,
                &deny_all,
                &[],
            ),
            "deny/rule/reject",
        ),
        (
            "ask beats auto",
            run(&edit, Mode::Auto, false, &ask_all, &[]),
            "ask",
        ),
        (
            "ask beats bypass",
            run(&edit, Mode::Default, true, &ask_all, &[]),
            "ask",
        ),
        (
            "ask beats an allow rule",
            run(
                &edit,
                Mode::Default,
                false,
                &[allow_edits[0].clone(), ask_all[0].clone()],
                &[],
            ),
            "ask",
        ),
        (
            "deny beats ask",
            run(
                &edit,
                Mode::Default,
                false,
                &[ask_all[0].clone(), deny_all[0].clone()],
                &[],
            ),
            "deny/rule/reject",
        ),
        (
            "allow rule in default",
            run(&edit, Mode::Default, false, &allow_edits, &[]),
            "allow/rule/once",
        ),
        (
            "allow rule of another kind",
            run(
                &request(ToolKind::Delete),
                Mode::Default,
                false,
                &allow_edits,
                &[],
            ),
            "ask",
        ),
        (
            "grant, same kind and tool",
            run(&edit, Mode::Default, false, &[], &grant),
            "allow/chat grant/once",
        ),
        (
            "plan beats allow rule",
            run(&edit, Mode::Plan, false, &allow_edits, &[]),
            "deny/plan/reject",
        ),
        (
            "plan beats bypass",
            run(&edit, Mode::Plan, true, &[], &[]),
            "deny/plan/reject",
        ),
        (
            "plan beats grant",
            run(&edit, Mode::Plan, false, &[], &grant),
            "deny/plan/reject",
        ),
        (
            "bypass in default",
            run(&edit, Mode::Default, true, &[], &[]),
            "allow/bypass/once",
        ),
        (
            "bypass in plan reads",
            run(&request(ToolKind::Read), Mode::Plan, true, &[], &[]),
            "allow/bypass/once",
        ),
        (
            "bypass before auto",
            run(&edit, Mode::Auto, true, &[], &[]),
            "allow/bypass/once",
        ),
        (
            "switch_mode asks despite everything",
            run(
                &request(ToolKind::SwitchMode),
                Mode::Auto,
                true,
                &[rule(RuleDecision::Allow)],
                &[ChatGrant {
                    kind: ToolKind::SwitchMode,
                    tool: "Tool".into(),
                    commands: None,
                    host: None,
                }],
            ),
            "ask",
        ),
    ];
    for (name, got, want) in cases {
        assert_eq!(short(&got), want, "{name}");
    }
}

#[test]
fn rule_fields_narrow_it() {
    let edit = at(ToolKind::Edit, "/home/u/proj/src/a.rs");
    let for_agent = |agent: &str| Rule {
        agent: Some(agent.into()),
        ..rule(RuleDecision::Allow)
    };
    assert_eq!(
        short(&default_with(&edit, &[for_agent("claude")])),
        "allow/rule/once"
    );
    assert_eq!(short(&default_with(&edit, &[for_agent("codex")])), "ask");
    let by_tool = |tool: &str| Rule {
        tool: Some(tool.into()),
        ..rule(RuleDecision::Allow)
    };
    assert_eq!(
        short(&default_with(&edit, &[by_tool("To*")])),
        "allow/rule/once"
    );
    assert_eq!(short(&default_with(&edit, &[by_tool("Bash")])), "ask");
    let category = Rule {
        kind: Some(KindMatch::Category(Category::Write)),
        ..rule(RuleDecision::Allow)
    };
    assert_eq!(
        short(&default_with(
            &request(ToolKind::Move),
            std::slice::from_ref(&category)
        )),
        "allow/rule/once"
    );
    assert_eq!(
        short(&default_with(&request(ToolKind::Fetch), &[category])),
        "ask"
    );
}

#[test]
fn allow_rules_without_kind_or_command_never_cover_commands() {
    let mut command = shell("rm -rf /");
    command.raw_input = Some(json!({"command": "rm -rf /", "path": "/home/u/proj/a"}));
    let by_path = path_rule(RuleDecision::Allow, "~/proj/**");
    assert_eq!(
        short(&default_with(&command, std::slice::from_ref(&by_path))),
        "ask"
    );
    assert_eq!(
        short(&default_with(
            &at(ToolKind::Edit, "/home/u/proj/a"),
            &[by_path]
        )),
        "allow/rule/once"
    );
    let everything = rule(RuleDecision::Allow);
    assert_eq!(short(&default_with(&command, &[everything])), "ask");
    let executes = Rule {
        kind: Some(KindMatch::Category(Category::Execute)),
        ..rule(RuleDecision::Allow)
    };
    assert_eq!(
        short(&default_with(&command, &[executes])),
        "allow/rule/once"
    );
    let other_kind = RequestView {
        kind: ToolKind::Other,
        ..shell("cargo test")
    };
    assert_eq!(
        short(&default_with(
            &other_kind,
            &[command_rule(RuleDecision::Allow, "cargo test *")]
        )),
        "allow/rule/once"
    );
    let edit_with_command = RequestView {
        kind: ToolKind::Edit,
        ..shell("cargo test")
    };
    assert_eq!(
        short(&default_with(
            &edit_with_command,
            &[command_rule(RuleDecision::Allow, "cargo test *")]
        )),
        "ask",
        "a command allow rule covers only execute-category requests"
    );
    assert_eq!(
        short(&default_with(
            &edit_with_command,
            &[command_rule(RuleDecision::Deny, "cargo *")]
        )),
        "deny/rule/reject",
        "a command deny rule applies to any request with that command"
    );
}

#[test]
fn chat_grant_covers_the_command_prefix_or_kind_and_tool() {
    let bash = shell("cargo test --lib");
    let grant = ChatGrant::for_request(&bash);
    assert_eq!(
        grant,
        ChatGrant {
            kind: ToolKind::Execute,
            tool: "Bash".into(),
            commands: Some(GrantCommands::Matching(vec![GrantCommand {
                text: "cargo test".into(),
                prefix: true,
            }])),
            host: None,
        }
    );
    assert_eq!(
        grant.describe(),
        "`cargo test …` commands via `Bash` in this chat"
    );
    let grants = [grant.clone()];
    assert_eq!(
        run(&shell("cargo test"), Mode::Default, false, &[], &grants),
        Decision::Allow {
            option_id: "once".into(),
            source: Source::ChatGrant,
            reason: "allowed for `cargo test …` commands via `Bash` in this chat".into(),
        }
    );
    assert_eq!(
        short(&run(
            &shell("rm -rf /tmp/x"),
            Mode::Default,
            false,
            &[],
            &grants
        )),
        "ask"
    );
    let other_tool = RequestView {
        tool_name: Some("Terminal".into()),
        ..shell("cargo test")
    };
    assert!(!grant.covers(&other_tool));
    let other_kind = RequestView {
        kind: ToolKind::Other,
        ..shell("cargo test")
    };
    assert_eq!(
        short(&run(&other_kind, Mode::Default, false, &[], &grants)),
        "ask"
    );
    let wrapped = ChatGrant::for_request(&shell("sudo make install"));
    assert_eq!(
        wrapped.describe(),
        "exactly `sudo make install` commands via `Bash` in this chat"
    );
    assert!(wrapped.covers(&shell("sudo make install")));
    assert!(!wrapped.covers(&shell("sudo make install && sudo rm -rf /")));
    let fetch = ChatGrant {
        kind: ToolKind::Fetch,
        tool: "WebFetch".into(),
        commands: None,
        host: None,
    };
    assert_eq!(
        fetch.describe(),
        "fetch calls of the tool `WebFetch` in this chat"
    );
    let ask = [command_rule(RuleDecision::Ask, "cargo *")];
    assert_eq!(
        short(&run(
            &shell("cargo test"),
            Mode::Default,
            false,
            &ask,
            &grants
        )),
        "ask",
        "ask rules beat grants"
    );
}

#[test]
fn option_choice() {
    let with = |kinds: &[OptionKind]| RequestView {
        options: kinds.iter().map(|k| opt(k.as_str(), *k)).collect(),
        ..request(ToolKind::Edit)
    };
    use OptionKind::*;
    let cases: Vec<(&str, &[OptionKind], Mode, &str)> = vec![
        (
            "once before always",
            &[AllowAlways, AllowOnce, RejectOnce],
            Mode::Auto,
            "allow/auto/allow_once",
        ),
        (
            "only allow_always: never sent automatically",
            &[AllowAlways, RejectOnce],
            Mode::Auto,
            "ask",
        ),
        (
            "reject_once before always",
            &[RejectAlways, RejectOnce],
            Mode::Plan,
            "deny/plan/reject_once",
        ),
        (
            "only reject_always",
            &[AllowOnce, RejectAlways],
            Mode::Plan,
            "deny/plan/reject_always",
        ),
        (
            "no reject option",
            &[AllowOnce, AllowAlways],
            Mode::Plan,
            "deny/plan/cancelled",
        ),
        (
            "no options at all, plan",
            &[],
            Mode::Plan,
            "deny/plan/cancelled",
        ),
        (
            "no allow option, auto",
            &[RejectOnce, RejectAlways],
            Mode::Auto,
            "ask",
        ),
    ];
    for (name, kinds, mode, want) in cases {
        assert_eq!(
            short(&run(&with(kinds), mode, false, &[], &[])),
            want,
            "{name}"
        );
    }
    assert_eq!(
        run(&with(&[RejectOnce]), Mode::Auto, false, &[], &[]),
        Decision::Ask {
            reason: "auto mode, but the agent offered no allow option".into()
        }
    );
    let read = RequestView {
        options: vec![],
        ..request(ToolKind::Read)
    };
    assert_eq!(
        run(&read, Mode::Default, false, &[], &[]).reason(),
        "reads are allowed, but the agent offered no allow option"
    );
    assert_eq!(
        allow_option(&all_options()).map(|o| o.id.as_str()),
        Some("once")
    );
    assert_eq!(
        reject_option(&all_options()).map(|o| o.id.as_str()),
        Some("reject")
    );
    assert_eq!(reject_option(&[]), None);
}

#[test]
fn modes_and_names() {
    assert_eq!(
        Mode::ALL.map(Mode::next),
        [Mode::Default, Mode::Auto, Mode::Plan]
    );
    for mode in Mode::ALL {
        assert_eq!(mode.as_str().parse::<Mode>(), Ok(mode));
        assert_eq!(serde_json::to_value(mode).ok(), Some(json!(mode.as_str())));
    }
    assert_eq!("Auto".parse::<Mode>(), Err(ParseError::Mode("Auto".into())));
    assert_eq!(Mode::default(), Mode::Default);
    let sources = [
        Source::Plan,
        Source::Rule,
        Source::Bypass,
        Source::Auto,
        Source::ChatGrant,
        Source::Read,
        Source::User,
    ];
    assert_eq!(
        sources.map(Source::as_str),
        [
            "plan",
            "rule",
            "bypass",
            "auto",
            "chat grant",
            "read",
            "user"
        ]
    );
    for source in sources {
        assert_eq!(
            serde_json::to_value(source).ok(),
            Some(json!(source.as_str()))
        );
    }
    assert_eq!(
        ToolKind::ALL.map(|k| category(k).as_str()),
        [
            "read",
            "write",
            "write",
            "write",
            "read",
            "execute",
            "read",
            "external",
            "switch_mode",
            "execute"
        ]
    );
    assert_eq!(
        serde_json::to_value(RuleDecision::Deny).ok(),
        Some(json!("deny"))
    );
}

#[test]
fn elicitations_sent_as_permission_requests_always_ask() {
    use crate::model::{PermissionRequest, ToolCallFields};
    let ask_request = |id: &str, raw: serde_json::Value, kind: ToolKind| {
        let req = PermissionRequest {
            session_id: "s".into(),
            tool_call_id: id.into(),
            fields: ToolCallFields {
                kind: Some(kind),
                title: Some("Sign in".into()),
                raw_input: Some(raw),
                ..ToolCallFields::default()
            },
            options: all_options(),
            client: false,
        };
        RequestView::from_request(&req, None)
    };
    let allow_all = [rule(RuleDecision::Allow)];
    let cases = [
        ask_request(
            "elicitation-url-1",
            json!({"url": "https://x"}),
            ToolKind::Fetch,
        ),
        ask_request("  Elicitation-form-2", json!({}), ToolKind::Execute),
        ask_request(
            "call-3",
            json!({"mode": "url", "message": "m", "url": "https://x"}),
            ToolKind::Fetch,
        ),
        ask_request("call-4", json!({"elicitationId": "e"}), ToolKind::Other),
        ask_request(
            "call-5",
            json!({"requestedSchema": {"type": "object"}}),
            ToolKind::Read,
        ),
    ];
    for req in &cases {
        assert_eq!(req.card, crate::gate::CardKind::Elicitation, "{req:?}");
        for mode in [Mode::Default, Mode::Auto] {
            for bypass in [false, true] {
                let got = run(req, mode, bypass, &allow_all, &[]);
                assert_eq!(short(&got), "ask", "{req:?} in {mode} bypass {bypass}");
            }
        }
    }
    let fetch = ask_request("call-6", json!({"url": "https://x"}), ToolKind::Fetch);
    assert_ne!(fetch.card, crate::gate::CardKind::Elicitation);
    assert_eq!(
        short(&run(&fetch, Mode::Auto, false, &[], &[])),
        "allow/auto/once"
    );
}

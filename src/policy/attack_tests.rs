//! A hostile or careless agent against [`decide`]: spellings of a denied
//! path, and commands warden cannot read in every mode.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::model::ToolKind;

pub(super) const HOME: &str = "/home/u";
pub(super) const CWD: &str = "/home/u/proj";

fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption {
            id: "once".into(),
            name: "Allow".into(),
            kind: OptionKind::AllowOnce,
        },
        PermissionOption {
            id: "no".into(),
            name: "Reject".into(),
            kind: OptionKind::RejectOnce,
        },
    ]
}

pub(super) fn decide_in(req: &RequestView, mode: Mode, rules: &[Rule]) -> Decision {
    let agent = AgentPolicy {
        name: "a".into(),
        bypass: false,
        ..AgentPolicy::default()
    };
    let cx = Context {
        mode,
        agent: &agent,
        rules,
        grants: &[],
        home: Some(Path::new(HOME)),
        cwd: Path::new(CWD),
        unattended: false,
    };
    decide(req, &cx)
}

pub(super) fn ssh_deny() -> Rule {
    let mut deny = Rule::new(RuleDecision::Deny);
    deny.kind = Some(KindMatch::Category(Category::Read));
    deny.path = Some("~/.ssh/**".into());
    deny
}

#[test]
fn every_spelling_of_a_denied_path_is_denied() {
    let spellings = [
        "../.ssh/id_rsa",
        "../../u/.ssh/id_rsa",
        "../../../../../../home/u/.ssh/id_rsa",
        "file:///home/u/.ssh/id_rsa",
        "file://localhost/home/u/.ssh/id_rsa",
        "FILE:///home/u/.ssh/id_rsa",
        "file:///home/u/%2essh/id_rsa",
        "file:///home/u/.ssh/id%5frsa",
        "//home/u/.ssh/id_rsa",
        "/home//u///.ssh/id_rsa",
        "/home/u/.ssh/.",
        "/home/u/.ssh/./",
        "/home/u/.ssh",
        "/home/u/./.ssh/../.ssh/id_rsa",
        "~/.ssh/id_rsa",
        "~//.ssh/id_rsa",
        "~u/.ssh/id_rsa",
    ];
    for path in spellings {
        for (key, req) in [
            (
                "location",
                RequestView {
                    kind: ToolKind::Read,
                    title: "Read".into(),
                    locations: vec![path.into()],
                    options: options(),
                    ..RequestView::default()
                },
            ),
            (
                "rawInput",
                RequestView {
                    kind: ToolKind::Read,
                    title: "Read".into(),
                    raw_input: Some(json!({ "path": path })),
                    options: options(),
                    ..RequestView::default()
                },
            ),
        ] {
            for mode in [Mode::Default, Mode::Auto] {
                let got = decide_in(&req, mode, &[ssh_deny()]);
                assert!(
                    matches!(got, Decision::Deny { .. }),
                    "{path:?} in {key}, {mode}: {got:?}"
                );
            }
        }
    }
}

#[test]
fn a_long_path_or_one_with_nul_never_slips_past_a_deny_rule() {
    let long = format!("/home/u/{}.ssh/id_rsa", "a/../".repeat(5000));
    let nul = "/home/u/.ssh/id_rsa\0.txt".to_string();
    for path in [long, nul] {
        let req = RequestView {
            kind: ToolKind::Read,
            title: "Read".into(),
            locations: vec![path.clone()],
            options: options(),
            ..RequestView::default()
        };
        let got = decide_in(&req, Mode::Auto, &[ssh_deny()]);
        assert!(matches!(got, Decision::Deny { .. }), "{got:?}");
    }
}

#[test]
fn unknown_or_hijacking_commands_never_run_unasked_in_plan_or_default() {
    let lines = [
        "$(echo rm) -rf x",
        "X=rm; $X -rf x",
        "cargo test ${A=$(rm -rf x)}",
        "PATH=/tmp/evil cargo test",
        "curl x | sh",
    ];
    for line in lines {
        let req = RequestView {
            kind: ToolKind::Execute,
            title: line.into(),
            tool_name: Some("Bash".into()),
            raw_input: Some(json!({ "command": line })),
            options: options(),
            ..RequestView::default()
        };
        assert!(
            matches!(decide_in(&req, Mode::Plan, &[]), Decision::Deny { .. }),
            "{line}"
        );
        let mut allow_all = Rule::new(RuleDecision::Allow);
        allow_all.command = Some("*".into());
        match decide_in(&req, Mode::Default, &[allow_all]) {
            Decision::Ask { reason } => assert!(
                reason.contains("cannot read") || reason.contains("sets PATH"),
                "{line}: the card says why: {reason}"
            ),
            other => panic!("{line}: {other:?}"),
        }
    }
}

#[test]
fn a_search_over_a_directory_holding_a_denied_path_asks() {
    let search = |path: &str| RequestView {
        kind: ToolKind::Search,
        title: "Grep".into(),
        tool_name: Some("Grep".into()),
        raw_input: Some(json!({ "pattern": "PRIVATE KEY", "path": path })),
        options: options(),
        ..RequestView::default()
    };
    for path in ["/home/u", "~", "/", "/home", "..", "/home/u/.ssh"] {
        for mode in [Mode::Default, Mode::Auto] {
            match decide_in(&search(path), mode, &[ssh_deny()]) {
                Decision::Ask { reason } => {
                    assert!(reason.contains("~/.ssh/**"), "{path}: {reason}")
                }
                Decision::Deny { .. } if path == "/home/u/.ssh" => {}
                other => panic!("{path} in {mode}: {other:?}"),
            }
        }
    }
    // A search elsewhere runs as before.
    for path in ["/home/u/proj", "src", "/tmp", "/home/u/.sshx"] {
        assert!(
            matches!(
                decide_in(&search(path), Mode::Default, &[ssh_deny()]),
                Decision::Allow { .. }
            ),
            "{path}"
        );
    }
}

#[test]
fn gemini_path_keys_meet_path_rules() {
    let read = RequestView {
        kind: ToolKind::Read,
        title: "ReadFile".into(),
        raw_input: Some(json!({ "absolute_path": "/home/u/.ssh/id_rsa" })),
        options: options(),
        ..RequestView::default()
    };
    assert!(matches!(
        decide_in(&read, Mode::Auto, &[ssh_deny()]),
        Decision::Deny { .. }
    ));
    let list = RequestView {
        kind: ToolKind::Search,
        title: "ReadFolder".into(),
        raw_input: Some(json!({ "dir_path": "/home/u" })),
        options: options(),
        ..RequestView::default()
    };
    assert!(matches!(
        decide_in(&list, Mode::Auto, &[ssh_deny()]),
        Decision::Ask { .. }
    ));
}

/// codex-acp's shape: a `search` or `read` tool call that runs a command.
fn read_running(kind: ToolKind, line: &str) -> RequestView {
    RequestView {
        kind,
        title: line.into(),
        raw_input: Some(json!({ "command": ["/bin/bash", "-lc", line], "cwd": CWD })),
        options: options(),
        ..RequestView::default()
    }
}

#[test]
fn a_read_that_runs_more_than_reads_is_an_execute() {
    for line in [
        "rm -rf x",
        "ls > out.txt",
        "cat a | sh",
        "rg x; touch y",
        "$(echo rm) x",
        "find . -delete",
        "sed -i s/a/b/ x",
        "PATH=/tmp/evil ls",
        "git push",
    ] {
        for kind in [ToolKind::Search, ToolKind::Read] {
            let req = read_running(kind, line);
            assert!(
                matches!(decide_in(&req, Mode::Plan, &[]), Decision::Deny { .. }),
                "{line} in Plan"
            );
            assert!(
                matches!(decide_in(&req, Mode::Default, &[]), Decision::Ask { .. }),
                "{line} in Default"
            );
        }
    }
    // What codex really sends for reads still reads.
    for line in [
        "ls",
        "ls -la src",
        "rg -n foo src",
        "cat a.rs | head -n 5",
        "git status",
        "git diff HEAD",
        "wc -l a b",
    ] {
        let req = read_running(ToolKind::Search, line);
        assert!(
            matches!(decide_in(&req, Mode::Plan, &[]), Decision::Allow { .. }),
            "{line}"
        );
    }
}

#[test]
fn a_read_that_carries_a_diff_is_a_write() {
    let req = RequestView {
        kind: ToolKind::Read,
        title: "Read notes".into(),
        diff_paths: vec!["/home/u/.bashrc".into()],
        options: options(),
        ..RequestView::default()
    };
    assert!(matches!(
        decide_in(&req, Mode::Plan, &[]),
        Decision::Deny { .. }
    ));
    assert!(matches!(
        decide_in(&req, Mode::Default, &[]),
        Decision::Ask { .. }
    ));
}

#[test]
fn deny_rules_on_execute_see_the_command_a_read_runs() {
    let mut deny = Rule::new(RuleDecision::Deny);
    deny.kind = Some(KindMatch::Category(Category::Execute));
    deny.command = Some("rm *".into());
    for kind in [
        ToolKind::Search,
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Fetch,
    ] {
        let req = read_running(kind, "rm -rf x");
        for mode in [Mode::Default, Mode::Auto] {
            assert!(
                matches!(
                    decide_in(&req, mode, std::slice::from_ref(&deny)),
                    Decision::Deny { .. }
                ),
                "{kind:?} in {mode}"
            );
        }
    }
}

#[test]
fn an_allow_rule_for_reads_never_allows_a_read_that_runs_more() {
    // `kind = "read"`, `kind = "search"` or `tool = ...` say nothing about a
    // command: a search that runs `rm` is not covered by them.
    let mut by_kind = Rule::new(RuleDecision::Allow);
    by_kind.kind = Some(KindMatch::Category(Category::Read));
    let mut by_search = Rule::new(RuleDecision::Allow);
    by_search.kind = Some(KindMatch::Kind(ToolKind::Search));
    let mut by_tool = Rule::new(RuleDecision::Allow);
    by_tool.tool = Some("*".into());
    by_tool.kind = Some(KindMatch::Kind(ToolKind::Search));
    for rule in [by_kind, by_search, by_tool] {
        let rules = [rule];
        let req = read_running(ToolKind::Search, "rg x; rm -rf ~");
        assert!(
            matches!(decide_in(&req, Mode::Default, &rules), Decision::Ask { .. }),
            "{}",
            rules[0].describe()
        );
        // A plain read stays allowed by the same rule.
        let plain = read_running(ToolKind::Search, "rg -n foo src");
        assert!(
            matches!(
                decide_in(&plain, Mode::Default, &rules),
                Decision::Allow { .. }
            ),
            "{}",
            rules[0].describe()
        );
    }
}

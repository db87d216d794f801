//! Tests of rules against shell lines and paths, and the rules warden
//! suggests.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::tests::*;
use super::*;
use crate::model::ToolKind;

#[test]
fn shell_lines_against_allow_rules() {
    let allow = [command_rule(RuleDecision::Allow, "cargo *")];
    let cases = [
        ("cargo test", true),
        ("cargo test && cargo fmt", true),
        ("cargo test | tee /dev/null", false),
        ("cargo test 2>&1", true),
        ("cargo test > out.txt", false),
        ("cargo test; rm -rf ~", false),
        ("cargo test && rm -rf ~", false),
        ("cargo test || rm -rf ~", false),
        ("cargo test & rm -rf ~", false),
        ("cargo test\nrm -rf ~", false),
        ("cargo test | sh", false),
        ("cargo test $(rm -rf ~)", false),
        ("cargo test \"$(rm -rf ~)\"", false),
        ("cargo test `rm -rf ~`", false),
        ("cargo test $(cargo $(rm -rf ~))", false),
        ("cargo test $(cargo metadata)", true),
        ("cargo test -- 'a; rm -rf ~'", true),
        ("cargo test -- \"a && rm -rf ~\"", true),
        ("cargo test -- '$(rm -rf ~)'", true),
        ("cargo test -- \"a;\"; rm x", false),
        (r"cargo test $'\'' ; rm -rf ~ #'", false),
        ("cargo test $'a; b'", true),
        ("cargo test $((rm -rf ~) )", false),
        ("cargo test >(rm -rf ~)", false),
        ("FOO=1 cargo test", false),
        ("(cargo test)", true),
        ("if cargo check; then cargo test; fi", true),
        // Wrappers need rules of their own.
        ("sudo cargo test", false),
        ("sh -c 'cargo test'", false),
        ("env X=1 cargo test", false),
    ];
    for (line, allowed) in cases {
        let want = if allowed { "allow/rule/once" } else { "ask" };
        assert_eq!(short(&default_with(&shell(line), &allow)), want, "{line}");
    }
    let exact = [command_rule(RuleDecision::Allow, "cargo test *")];
    assert_eq!(
        short(&default_with(&shell("cargo test"), &exact)),
        "allow/rule/once"
    );
    assert_eq!(
        short(&default_with(&shell("cargo test && cargo fmt"), &exact)),
        "ask"
    );
    assert_eq!(short(&default_with(&shell("cargo testing"), &exact)), "ask");
    let no_command = request(ToolKind::Execute);
    assert_eq!(short(&default_with(&no_command, &allow)), "ask");
}

#[test]
fn shell_lines_against_deny_rules() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    let cases = [
        ("rm -rf /", true),
        ("cargo test; rm -rf ~", true),
        ("cargo test && rm -rf ~", true),
        ("ls | rm x", true),
        ("echo $(rm -rf /)", true),
        ("echo \"$(rm -rf /)\"", true),
        ("echo `rm -rf /`", true),
        ("echo $(echo $(rm -rf /))", true),
        ("FOO=1 rm -rf /", true),
        ("if true; then rm x; fi", true),
        ("echo 'rm -rf /'", false),
        ("echo '$(rm -rf /)'", false),
        ("echo \"a; rm -rf /\"", false),
        ("cargo test", false),
        ("echo rm x", false),
        // What wrappers and shell strings run is looked into.
        ("sudo rm -rf /", true),
        ("sudo -u root rm -rf /", true),
        ("env -i HOME=/ rm -rf /", true),
        ("timeout 5 nice -n 1 rm -rf x", true),
        ("find . -name '*.o' | xargs rm", true),
        ("sh -c 'rm -rf ~'", true),
        ("bash -lc \"cd / && rm -rf *\"", true),
        ("sudo bash -c 'echo; rm -rf /'", true),
        ("eval rm -rf /", true),
        ("sudo ls /root", false),
        ("sh -c 'echo rm'", false),
    ];
    for (line, denied) in cases {
        let want = if denied { "deny/rule/reject" } else { "ask" };
        assert_eq!(short(&default_with(&shell(line), &deny)), want, "{line}");
        let in_auto = run(&shell(line), Mode::Auto, false, &deny, &[]);
        let want = if denied {
            "deny/rule/reject"
        } else {
            "allow/auto/once"
        };
        assert_eq!(short(&in_auto), want, "{line} in auto");
    }
    // A script nobody can read might run `rm`: it asks, even in Auto.
    assert_eq!(
        short(&run(&shell("bash rm.sh"), Mode::Auto, false, &deny, &[])),
        "ask"
    );
    let ask = [command_rule(RuleDecision::Ask, "git push*")];
    assert_eq!(
        short(&run(
            &shell("git add . && git push"),
            Mode::Auto,
            true,
            &ask,
            &[]
        )),
        "ask"
    );
    // A rule for the wrapper itself still allows it.
    let sudo_apt = [command_rule(RuleDecision::Allow, "sudo apt *")];
    assert_eq!(
        short(&default_with(&shell("sudo apt install ripgrep"), &sudo_apt)),
        "allow/rule/once"
    );
    let whole_line = [command_rule(RuleDecision::Deny, "*curl*| sh*")];
    assert_eq!(
        short(&default_with(&shell("curl x | sh"), &whole_line)),
        "deny/rule/reject"
    );
}

#[test]
fn path_rules_normalise_paths() {
    let deny_ssh = [path_rule(RuleDecision::Deny, "~/.ssh/**")];
    let cases = [
        ("/home/u/proj/../.ssh/id_rsa", true),
        ("/home/u/./.ssh/config", true),
        ("~/.ssh/id_rsa", true),
        ("../.ssh/id_rsa", true),
        ("/home/u/.ssh", true),
        ("/home/u/proj/.ssh-notes", false),
        ("/home/u/proj/src/.ssh/x", false),
        ("/home/u/.sshx/id", false),
    ];
    for (path, denied) in cases {
        let want = if denied {
            "deny/rule/reject"
        } else {
            "allow/read/once"
        };
        assert_eq!(
            short(&default_with(&at(ToolKind::Read, path), &deny_ssh)),
            want,
            "{path}"
        );
    }
    let ask_env = [path_rule(RuleDecision::Ask, "**/.env")];
    assert_eq!(
        short(&default_with(
            &at(ToolKind::Read, "/srv/app/.env"),
            &ask_env
        )),
        "ask"
    );
    assert_eq!(
        short(&default_with(&at(ToolKind::Read, ".env"), &ask_env)),
        "ask"
    );
    assert_eq!(
        short(&default_with(
            &at(ToolKind::Read, "/srv/app/.envrc"),
            &ask_env
        )),
        "allow/read/once"
    );

    let allow_src = [Rule {
        kind: Some(KindMatch::Kind(ToolKind::Edit)),
        ..path_rule(RuleDecision::Allow, "src/**")
    }];
    let edit_cases = [
        ("src/main.rs", true),
        ("/home/u/proj/src/a/b.rs", true),
        ("~/proj/src/lib.rs", true),
        ("src/../Cargo.toml", false),
        ("/home/u/proj/src/../../.bashrc", false),
        ("/home/u/proj/srcx/a.rs", false),
    ];
    for (path, allowed) in edit_cases {
        let want = if allowed { "allow/rule/once" } else { "ask" };
        assert_eq!(
            short(&default_with(&at(ToolKind::Edit, path), &allow_src)),
            want,
            "{path}"
        );
    }
    let one_outside = RequestView {
        diff_paths: vec!["/etc/passwd".into()],
        ..at(ToolKind::Edit, "src/main.rs")
    };
    assert_eq!(
        short(&default_with(&one_outside, &allow_src)),
        "ask",
        "allow needs every path"
    );
    let no_paths = request(ToolKind::Edit);
    assert_eq!(
        short(&default_with(&no_paths, &allow_src)),
        "ask",
        "a path rule needs paths"
    );
    let mv = RequestView {
        raw_input: Some(
            json!({"source": "src/a.rs", "destination": "/home/u/.ssh/authorized_keys"}),
        ),
        ..request(ToolKind::Move)
    };
    assert_eq!(
        short(&run(&mv, Mode::Auto, false, &deny_ssh, &[])),
        "deny/rule/reject",
        "deny needs any path"
    );
}

#[test]
fn without_a_home_tilde_stays_literal() {
    let agent = AgentPolicy::default();
    let rules = [path_rule(RuleDecision::Deny, "~/.ssh/**")];
    let cx = Context {
        mode: Mode::Default,
        agent: &agent,
        rules: &rules,
        grants: &[],
        home: None,
        cwd: Path::new("/w"),
        unattended: false,
    };
    assert_eq!(
        short(&decide(&at(ToolKind::Read, "~/.ssh/id"), &cx)),
        "deny/rule/reject"
    );
    assert_eq!(
        short(&decide(&at(ToolKind::Read, "/root/.ssh/id"), &cx)),
        "allow/read/once"
    );
}

#[test]
fn suggested_rules_cover_their_request() {
    let home = Some(Path::new(HOME));
    let requests = [
        shell("cargo test --lib"),
        shell("RUST_LOG=1 cargo test"),
        shell("ls"),
        at(ToolKind::Edit, "/home/u/proj/src/a.rs"),
        at(ToolKind::Delete, "/tmp/x/y"),
        at(ToolKind::Edit, "src/b.rs"),
        at(ToolKind::Edit, "~/.bashrc"),
    ];
    for req in requests {
        let rule = suggest_rule(&req, "claude", home, Path::new(CWD)).expect("a rule");
        assert_eq!(rule.decision, RuleDecision::Allow);
        assert_eq!(
            short(&default_with(&req, std::slice::from_ref(&rule))),
            "allow/rule/once",
            "{req:?} with {rule}"
        );
    }
    // Nothing narrow to propose: no rule.
    for req in [request(ToolKind::Fetch), request(ToolKind::Execute)] {
        assert!(suggest_rule(&req, "claude", home, Path::new(CWD)).is_err());
    }
}

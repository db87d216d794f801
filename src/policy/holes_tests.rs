//! The policy holes of issue 22 (items 3, 6, 7 and 10) and their siblings:
//! what a deny rule sees of a command warden can only partly read, what a
//! path rule sees of a command's arguments, what a headless run does where
//! warden cannot tell, and what "keep as rule" proposes.

use std::path::Path;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

use super::tests::{CWD, HOME, all_options, at, command_rule, request, shell, short};
use super::*;
use crate::model::ToolKind;

fn decide_with(req: &RequestView, mode: Mode, rules: &[Rule], unattended: bool) -> Decision {
    let agent = AgentPolicy {
        name: "a".into(),
        bypass: false,
        ..AgentPolicy::default()
    };
    decide(
        req,
        &Context {
            mode,
            agent: &agent,
            rules,
            grants: &[],
            home: Some(Path::new(HOME)),
            cwd: Path::new(CWD),
            unattended,
        },
    )
}

fn deny(command: &str) -> Rule {
    command_rule(RuleDecision::Deny, command)
}

fn allow(command: &str) -> Rule {
    command_rule(RuleDecision::Allow, command)
}

fn ssh_deny() -> Rule {
    Rule {
        kind: Some(KindMatch::Category(Category::Read)),
        path: Some("~/.ssh/**".into()),
        ..Rule::new(RuleDecision::Deny)
    }
}

fn with_input(kind: ToolKind, input: serde_json::Value) -> RequestView {
    RequestView {
        kind,
        title: "Tool".into(),
        tool_name: Some("Tool".into()),
        raw_input: Some(input),
        options: all_options(),
        ..RequestView::default()
    }
}

fn title_only(title: &str) -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: title.into(),
        tool_name: None,
        options: all_options(),
        ..RequestView::default()
    }
}

// Item 7.

#[test]
fn a_deny_rule_matching_a_title_only_command_denies() {
    let req = title_only("touch created-by-agent.txt");
    for mode in [Mode::Default, Mode::Auto] {
        assert_eq!(
            short(&decide_with(&req, mode, &[deny("touch *")], false)),
            "deny/rule/reject",
            "{mode}"
        );
    }
    // One it does not match still asks, even in Auto: the title may lie.
    assert_eq!(
        short(&decide_with(&req, Mode::Auto, &[deny("rm *")], false)),
        "ask"
    );
}

#[test]
fn where_warden_cannot_tell_the_tui_asks_naming_the_rule_and_headless_denies() {
    let cases = [
        shell("$(echo rm) -rf x"),
        shell("`echo rm` -rf x"),
        shell("$X -rf x"),
        title_only("make things"),
        shell("sh x.sh"),
    ];
    for req in &cases {
        let asked = decide_with(req, Mode::Auto, &[deny("rm *")], false);
        assert!(
            matches!(&asked, Decision::Ask { reason } if reason.contains("deny rule command=\"rm *\"")),
            "{req:?}: {asked:?}"
        );
        let headless = decide_with(req, Mode::Auto, &[deny("rm *")], true);
        assert!(
            matches!(&headless, Decision::Deny { source: Source::Rule, reason, .. } if reason.contains("rm *")),
            "{req:?}: {headless:?}"
        );
    }
    // An ask rule warden cannot rule out stays an ask: --on-ask answers it.
    let req = shell("$(echo rm) -rf x");
    let ask = command_rule(RuleDecision::Ask, "rm *");
    assert_eq!(short(&decide_with(&req, Mode::Auto, &[ask], true)), "ask");
}

#[test]
fn a_shell_fed_its_commands_on_standard_input_is_looked_into() {
    let lines = [
        "sh <<EOF\nrm -rf x\nEOF",
        "bash <<'X'\nrm -rf x\nX",
        "sh -s <<EOF\nrm -rf x\nEOF",
        "sh -s -- a b <<EOF\nrm -rf x\nEOF",
        "sudo sh <<-EOF\n\trm -rf x\n\tEOF",
        "sh <<< 'rm -rf x'",
        "bash <<<\"rm -rf x\"",
        "echo 'rm -rf x' | sh",
        "echo rm -rf x | bash -s",
        "printf 'rm -rf x' | sh",
        "cat <<EOF | sh\nrm -rf x\nEOF",
    ];
    for line in lines {
        assert_eq!(
            short(&decide_with(
                &shell(line),
                Mode::Auto,
                &[deny("rm *")],
                false
            )),
            "deny/rule/reject",
            "{line:?}"
        );
    }
    // A body that runs nothing denied is not refused; it is still a line
    // an allow rule for `sh` alone never covers.
    let harmless = shell("sh <<EOF\nls\nEOF");
    assert_eq!(
        short(&decide_with(&harmless, Mode::Auto, &[deny("rm *")], false)),
        "allow/auto/once"
    );
    // A script file wins over standard input: unknown, as before.
    let file = shell("sh x.sh <<EOF\nls\nEOF");
    assert_eq!(
        short(&decide_with(&file, Mode::Auto, &[deny("rm *")], false)),
        "ask"
    );
}

#[test]
fn every_reading_of_a_command_meets_the_deny_rules() {
    // `command` and `cmd` disagree: the most dangerous reading is judged.
    let req = with_input(
        ToolKind::Execute,
        json!({ "command": "ls", "cmd": "rm -rf x" }),
    );
    assert_eq!(
        short(&decide_with(&req, Mode::Auto, &[deny("rm *")], false)),
        "deny/rule/reject"
    );
    assert_eq!(
        short(&decide_with(&req, Mode::Default, &[allow("ls *")], false)),
        "ask",
        "no allow rule covers readings that disagree"
    );
    // The title says `rm`: denied, whatever rawInput says.
    let mut titled = shell("ls");
    titled.title = "rm -rf x".into();
    assert_eq!(
        short(&decide_with(&titled, Mode::Auto, &[deny("rm *")], false)),
        "deny/rule/reject"
    );
}

#[test]
fn wrappers_and_spellings_meet_the_deny_rules() {
    let lines = [
        "/usr/bin/rm -rf x",
        "busybox rm -rf x",
        "command rm -rf x",
        "exec rm -rf x",
        "nice -n 5 rm -rf x",
        "timeout 5 rm -rf x",
        "nohup rm -rf x",
        "xargs rm < list",
        "find . -name x -exec rm -rf {} +",
        "git -c core.pager='rm -rf x' log",
        "git -c alias.x='!rm -rf x' x",
    ];
    for line in lines {
        let decision = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], true);
        assert!(
            matches!(decision, Decision::Deny { .. }),
            "{line:?}: {decision:?}"
        );
    }
    // `find -delete` deletes: a deny rule on `rm` does not name it, but no
    // read allows it and an allow rule for `find` does not cover it.
    let find = RequestView {
        kind: ToolKind::Search,
        ..shell("find . -name '*.o' -delete")
    };
    assert_eq!(
        short(&decide_with(&find, Mode::Plan, &[], false)),
        "deny/plan/reject"
    );
    let grant = ChatGrant::for_request(&shell("npm exec prettier x"));
    assert!(!grant.covers(&shell("npm exec rm x")));
    let grant = ChatGrant::for_request(&shell("npm test"));
    assert!(grant.covers(&shell("npm test -- --watch")));
    let grant = ChatGrant::for_request(&shell("find . -name x"));
    assert!(!grant.covers(&shell("find . -name x -delete")));
}

// Item 3's siblings: what changes what runs.

#[test]
fn an_environment_that_changes_what_runs_asks_and_headless_denies() {
    for var in [
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "PS4",
        "IFS",
        "GIT_EXEC_PATH",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
    ] {
        let req = with_input(
            ToolKind::Execute,
            json!({ "command": "ls -la", "env": { var: "x" } }),
        );
        let asked = decide_with(&req, Mode::Default, &[allow("ls *")], false);
        assert!(
            matches!(&asked, Decision::Ask { reason } if reason.contains(var)),
            "{var}: {asked:?}"
        );
        let headless = decide_with(&req, Mode::Default, &[allow("ls *")], true);
        assert!(
            matches!(&headless, Decision::Deny { reason, .. } if reason.contains(var)),
            "{var}: {headless:?}"
        );
        let grant = ChatGrant::for_request(&with_input(
            ToolKind::Execute,
            json!({ "command": "ls -la" }),
        ));
        assert!(!grant.covers(&req), "{var}");
    }
}

// Item 6.

#[test]
fn a_deny_path_rule_sees_the_paths_of_a_commands_arguments() {
    let read = |command: &str| with_input(ToolKind::Read, json!({ "command": command }));
    let denied = [
        "cat ~/.ssh/id_rsa",
        "cat /home/u/.ssh/id_rsa",
        "cat ../.ssh/id_rsa",
        "head -n 5 ~/.ssh/config",
        "cat < ~/.ssh/id_rsa",
        "grep -r x ~/.ssh/id_rsa ~/proj",
        "bash -lc 'cat ~/.ssh/id_rsa'",
        "cat --file=~/.ssh/id_rsa",
        // The directory itself is what the glob names.
        "rg -uu . ~/.ssh",
        "ls ~/.ssh",
    ];
    for command in denied {
        for mode in Mode::ALL {
            let decision = decide_with(&read(command), mode, &[ssh_deny()], false);
            // (Plan refuses a read that runs more than reads first.)
            let source = if mode == Mode::Plan && command.starts_with("bash") {
                "plan"
            } else {
                "rule"
            };
            assert_eq!(
                short(&decision),
                format!("deny/{source}/reject"),
                "{command} in {mode}"
            );
        }
        // An execute that reads it is denied by the read rule too.
        let exec = decide_with(&shell(command), Mode::Auto, &[ssh_deny()], false);
        assert_eq!(short(&exec), "deny/rule/reject", "{command} as execute");
    }
    // A directory that holds the keys, or a path warden cannot read: asks
    // naming the rule; headless, denied by it.
    let unclear = [
        "grep -r PRIVATE ~",
        "grep -r x ..",
        "ls ~",
        "cat $HOME/.ssh/id_rsa",
        "cat $(cat list)",
        "cat ~/.ss*/id_rsa",
    ];
    for command in unclear {
        let asked = decide_with(&read(command), Mode::Plan, &[ssh_deny()], false);
        assert!(
            matches!(&asked, Decision::Ask { reason } if reason.contains("~/.ssh/**")),
            "{command}: {asked:?}"
        );
        let headless = decide_with(&read(command), Mode::Plan, &[ssh_deny()], true);
        assert_eq!(short(&headless), "deny/rule/reject", "{command}");
    }
    // Paths elsewhere are untouched.
    for command in ["cat src/main.rs", "rg x .", "grep -r x /etc/hosts"] {
        assert_eq!(
            short(&decide_with(
                &read(command),
                Mode::Plan,
                &[ssh_deny()],
                false
            )),
            "allow/read/once",
            "{command}"
        );
    }
    // Relative paths are taken from the request's own cwd.
    let from_home = with_input(
        ToolKind::Read,
        json!({ "command": "cat .ssh/id_rsa", "cwd": HOME }),
    );
    assert_eq!(
        short(&decide_with(&from_home, Mode::Plan, &[ssh_deny()], false)),
        "deny/rule/reject"
    );
    let relative = with_input(
        ToolKind::Read,
        json!({ "command": "cat .ssh/id_rsa", "cwd": ".." }),
    );
    assert_eq!(
        short(&decide_with(&relative, Mode::Plan, &[ssh_deny()], false)),
        "deny/rule/reject"
    );
}

// Item 10.

#[test]
fn keep_as_rule_proposes_nothing_broader_than_the_request() {
    let home = Some(Path::new(HOME));
    let cwd = Path::new(CWD);
    // A relative path is resolved against the cwd.
    let edit = at(ToolKind::Edit, "src/a.rs");
    let rule = suggest_rule(&edit, "a", home, cwd).expect("a rule");
    assert_eq!(rule.path.as_deref(), Some("~/proj/src/a.rs"));
    assert_eq!(rule.tool, None);
    let sibling = at(ToolKind::Edit, "src/b.rs");
    let facts = rule::Facts::new(&sibling, home, cwd);
    assert!(!rule.matches(&facts, "a"), "one file, not its directory");
    let bashrc = at(ToolKind::Edit, "~/.bashrc");
    let facts = rule::Facts::new(&bashrc, home, cwd);
    assert!(!rule.matches(&facts, "a"));
    // A file right in the home directory or `/`: that file only.
    let rule = suggest_rule(&bashrc, "a", home, cwd).expect("a rule");
    assert_eq!(rule.path.as_deref(), Some("~/.bashrc"));
    // No path and no command: nothing to propose.
    for req in [
        request(ToolKind::Edit),
        request(ToolKind::Fetch),
        request(ToolKind::Execute),
    ] {
        assert!(suggest_rule(&req, "a", home, cwd).is_err(), "{req:?}");
    }
    // A command the agent runs itself and says only in its title (gemini)
    // is read like a command line, as its rawInput would be (issue 33 item 3).
    let rule = suggest_rule(&title_only("touch x"), "a", home, cwd).expect("a rule");
    let from_input = suggest_rule(&shell("touch x"), "a", home, cwd).expect("a rule");
    assert_eq!(rule.command, from_input.command);
    // The description says what it covers.
    let rule = suggest_rule(&shell("cargo test --lib"), "a", home, cwd).expect("a rule");
    assert_eq!(
        rule.describe(),
        "allow rule agent=\"a\" kind=execute command=\"cargo test *\""
    );
}

fn path_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("src/a.rs".to_string()),
        Just("./x".to_string()),
        Just("../up/b".to_string()),
        Just("~/.bashrc".to_string()),
        Just("~/proj/src/deep/c.rs".to_string()),
        Just("/etc/hosts".to_string()),
        Just("/x".to_string()),
        Just("/home/u/proj/d".to_string()),
        Just("file:///home/u/.ssh/id_rsa".to_string()),
        "[a-z]{1,3}(/[a-z]{1,3}){0,2}",
    ]
}

fn command_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("cargo test --lib".to_string()),
        Just("ls -la".to_string()),
        Just("rm -rf x".to_string()),
        Just("sudo rm x".to_string()),
        Just("bash -c 'cargo test'".to_string()),
        Just("git push".to_string()),
        Just("$(echo rm) x".to_string()),
        Just("cargo test; rm -rf ~".to_string()),
        Just("python3 x.py".to_string()),
        "[a-z]{1,4}( [a-z-]{1,4}){0,2}",
    ]
}

fn request_strategy() -> impl Strategy<Value = RequestView> {
    let kind = prop_oneof![
        Just(ToolKind::Edit),
        Just(ToolKind::Read),
        Just(ToolKind::Delete),
        Just(ToolKind::Execute),
        Just(ToolKind::Fetch),
    ];
    (
        kind,
        proptest::collection::vec(path_strategy(), 0..3),
        proptest::option::of(command_strategy()),
    )
        .prop_map(|(kind, paths, command)| RequestView {
            kind,
            title: "T".into(),
            tool_name: Some("Edit".into()),
            raw_input: command.map(|c| json!({ "command": c })),
            locations: paths,
            options: all_options(),
            ..RequestView::default()
        })
}

proptest! {
    /// A suggested rule covers another request only within what it says:
    /// its kind, under its path's directory, or a command starting with its
    /// prefix; never a request without a path or command of its own.
    #[test]
    fn a_suggested_rule_never_covers_more_than_it_describes(
        kept in request_strategy(),
        other in request_strategy(),
    ) {
        let home = Some(Path::new(HOME));
        let cwd = Path::new(CWD);
        let Ok(rule) = suggest_rule(&kept, "a", home, cwd) else {
            return Ok(());
        };
        prop_assert!(rule.path.is_some() || rule.command.is_some(), "{rule:?}");
        let facts = rule::Facts::new(&other, home, cwd);
        if !rule.matches(&facts, "a") {
            return Ok(());
        }
        prop_assert!(rule.kind.is_some_and(|k| k.matches(other.kind)), "{rule:?} {other:?}");
        if let Some(pattern) = &rule.path {
            let full = glob::normalize_pattern(pattern, home, cwd);
            let dir = full.strip_suffix("/**").unwrap_or(&full);
            let paths = other.paths();
            prop_assert!(!paths.is_empty());
            for p in paths {
                let p = normalize_path(&p, home, cwd);
                prop_assert!(p == dir || p.starts_with(&format!("{dir}/")), "{rule:?} {p}");
            }
        }
        if let Some(pattern) = &rule.command {
            let prefix = pattern.strip_suffix(" *").unwrap_or(pattern);
            let command = other.command().unwrap_or_default();
            let line = shell::parse(&command);
            prop_assert!(!line.commands.is_empty());
            for c in line.commands.iter().filter(|c| !c.derived) {
                prop_assert!(c.text.starts_with(prefix.replace('\\', "").as_str()), "{rule:?} {command}");
            }
        }
    }
}

// The attacker pass: more ways to run a denied command or read a denied
// path past a rule.

#[test]
fn commands_run_by_options_meet_the_deny_rules() {
    for line in [
        "rg --pre rm x",
        "rg --pre=rm x",
        "git -c core.sshCommand='rm -rf x' fetch",
        "tar -xf a.tar --to-command='rm -rf x'",
        "tar --use-compress-program='rm -rf x' -xf a.tar",
    ] {
        let decision = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], false);
        assert!(
            matches!(decision, Decision::Deny { .. }),
            "{line:?}: {decision:?}"
        );
    }
}

#[test]
fn inline_code_warden_cannot_read_might_run_a_denied_command() {
    for line in [
        "python3 -c 'import os; os.system(\"rm -rf x\")'",
        "node -e 'require(\"child_process\").execSync(\"rm -rf x\")'",
        "perl -e 'system(\"rm -rf x\")'",
        "ruby -e 'system(\"rm -rf x\")'",
        "awk 'BEGIN { system(\"rm -rf x\") }'",
        "awk -F : 'BEGIN { system(\"rm -rf x\") }'",
        "deno eval 'Deno.removeSync(\"x\")'",
        "python3 <<EOF\nimport os\nEOF",
        "echo 'import os' | python3",
    ] {
        let asked = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], false);
        assert!(
            matches!(&asked, Decision::Ask { reason } if reason.contains("rm *")),
            "{line:?}: {asked:?}"
        );
        let headless = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], true);
        assert!(matches!(headless, Decision::Deny { .. }), "{line:?}");
    }
    // A script file or an awk program that runs nothing: as before.
    for line in [
        "python3 x.py",
        "python3 -m pytest -c setup.cfg",
        "awk '{ print $1 }' f",
        "awk -F : '{ print $1 }' f",
    ] {
        assert_eq!(
            short(&decide_with(
                &shell(line),
                Mode::Auto,
                &[deny("rm *")],
                false
            )),
            "allow/auto/once",
            "{line:?}"
        );
    }
}

#[test]
fn a_cd_in_the_line_moves_where_relative_paths_lead() {
    for command in [
        "cd sub && cat ../../.ssh/id_rsa",
        "cd /tmp && cat ../home/u/.ssh/id_rsa",
        "pushd sub; cat ../../.ssh/id_rsa",
    ] {
        assert_eq!(
            short(&decide_with(
                &shell(command),
                Mode::Auto,
                &[ssh_deny()],
                false
            )),
            "deny/rule/reject",
            "{command}"
        );
    }
    // A cd warden cannot read: any relative path may lead anywhere.
    let unclear = shell("cd \"$D\" && cat id_rsa");
    assert!(matches!(
        decide_with(&unclear, Mode::Auto, &[ssh_deny()], false),
        Decision::Ask { .. }
    ));
}

#[test]
fn more_ways_to_run_a_denied_command_meet_the_deny_rules() {
    // Each runs `rm` through something warden reads: denied, or (where
    // the code itself cannot be read) asked naming the rule.
    for line in [
        "sh -c -- 'rm x'",
        "bash -o pipefail -c 'rm x'",
        "bash -O extglob -c 'rm x'",
        "GIT_SSH_COMMAND='rm x' git fetch",
        "export GIT_EDITOR='rm x'; git commit",
        "env PAGER='rm x' git log",
        "man -P 'rm x' ls",
        "zip -T -TT 'rm x' a.zip f",
        "ssh -o ProxyCommand='rm x' h",
        "ssh -oProxyCommand='rm x' h",
        "npx -c 'rm x'",
        "npm exec -c 'rm x'",
        "npx rm x",
    ] {
        let decision = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], false);
        assert!(
            matches!(decision, Decision::Deny { .. }),
            "{line:?}: {decision:?}"
        );
    }
    for line in [
        "make -f - <<EOF\nall:\n\trm x\nEOF",
        "vim -c '!rm x' f",
        "sed -n '1e rm x' f",
        "sed 's/x/rm y/e' f",
        "alias ls=rm; ls x",
    ] {
        let decision = decide_with(&shell(line), Mode::Auto, &[deny("rm *")], false);
        assert!(
            matches!(&decision, Decision::Ask { reason } if reason.contains("rm *")),
            "{line:?}: {decision:?}"
        );
    }
    // A terminal's environment that holds a command: read like a line.
    let req = with_input(
        ToolKind::Execute,
        json!({ "command": "git fetch", "env": { "GIT_SSH_COMMAND": "rm -rf x" } }),
    );
    assert_eq!(
        short(&decide_with(&req, Mode::Auto, &[deny("rm *")], false)),
        "deny/rule/reject"
    );
    // Everyday sed and make stay as they were.
    for line in ["sed -n 's/a/b/p' f", "sed -e 's/x/e/' f", "make -j4 test"] {
        assert_eq!(
            short(&decide_with(
                &shell(line),
                Mode::Auto,
                &[deny("rm *")],
                false
            )),
            "allow/auto/once",
            "{line:?}"
        );
    }
}

#[test]
fn proc_links_in_a_commands_arguments_meet_the_path_rules() {
    let read = |command: &str| with_input(ToolKind::Read, json!({ "command": command }));
    for command in [
        "cat /proc/self/root/home/u/.ssh/id_rsa",
        "cat /proc/1/root/home/u/.ssh/id_rsa",
        "cat /proc/self/cwd/../.ssh/id_rsa",
        "cat /proc/thread-self/root/home/u/.ssh/id_rsa",
    ] {
        assert_eq!(
            short(&decide_with(
                &read(command),
                Mode::Plan,
                &[ssh_deny()],
                false
            )),
            "deny/rule/reject",
            "{command}"
        );
    }
    let fd = decide_with(
        &read("cat /proc/self/fd/3"),
        Mode::Plan,
        &[ssh_deny()],
        false,
    );
    assert!(matches!(fd, Decision::Ask { .. }), "{fd:?}");
}

#[test]
fn a_grant_or_rule_on_ls_never_covers_the_shell_a_terminal_really_runs() {
    // What `terminal/create` of `ls /../../bin/sh -c ..` is judged as once
    // the runtime resolved its program (app/calls.rs: terminal_run).
    let resolved = with_input(
        ToolKind::Execute,
        json!({ "command": "/usr/bin/dash -c 'rm -rf x'", "cwd": CWD }),
    );
    let grant = ChatGrant::for_request(&shell("ls -la"));
    assert!(!grant.covers(&resolved));
    assert_eq!(
        short(&decide_with(
            &resolved,
            Mode::Default,
            &[allow("ls *")],
            false
        )),
        "ask"
    );
    assert_eq!(
        short(&decide_with(&resolved, Mode::Auto, &[deny("rm *")], false)),
        "deny/rule/reject"
    );
    // As it was judged before: a program word with a space read as `ls`.
    let unresolved = with_input(
        ToolKind::Execute,
        json!({ "command": "'ls /../../bin/sh' -c 'rm -rf x'" }),
    );
    assert!(!grant.covers(&unresolved));
}

#[test]
fn many_here_strings_or_cds_fail_closed_instead_of_taking_long() {
    let strings = "sh <<< 'ls'; ".repeat(200);
    let line = shell::parse(&strings);
    assert!(line.opaque);
    let cds = "cd a; ".repeat(100) + "cat id_rsa";
    let decision = decide_with(&shell(&cds), Mode::Auto, &[ssh_deny()], false);
    assert!(matches!(decision, Decision::Ask { .. }), "{decision:?}");
}

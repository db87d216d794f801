//! The scanner against lines built to fool it, and decisions on whole
//! shell requests; the property tests from a grammar of shell constructs
//! are in `shell_grammar_tests.rs`.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::model::{OptionKind, PermissionOption, ToolKind};
use crate::policy::{
    AgentPolicy, Context, Decision, Mode, RequestView, Rule, RuleDecision, decide,
};

#[path = "shell_grammar_tests.rs"]
mod grammar;

fn texts(line: &str) -> Vec<String> {
    parse(line).commands.into_iter().map(|c| c.text).collect()
}

fn plains(line: &str) -> Vec<String> {
    parse(line)
        .commands
        .into_iter()
        .filter_map(|c| c.plain)
        .collect()
}

#[test]
fn comments_end_at_the_newline_and_hide_their_quotes() {
    let line = "cargo test #'\nrm -rf x #'";
    assert_eq!(texts(line), ["cargo test", "rm -rf x"]);
    assert!(!parse(line).opaque);
    assert_eq!(texts("ls # rm -rf x"), ["ls"]);
    assert_eq!(texts("echo a#b; rm x"), ["echo a#b", "rm x"]);
    assert_eq!(texts("echo $# ; rm x"), ["echo $#", "rm x"]);
    // An escaped blank does not start a word: no comment here.
    assert_eq!(texts("echo x\\ #y; rm z"), ["echo x\\ #y", "rm z"]);
    assert_eq!(texts("echo '#'; rm z"), ["echo '#'", "rm z"]);
    // A no-break space is no blank to the shell: no comment either.
    assert_eq!(texts("echo x\u{a0}#y; rm z"), ["echo x\u{a0}#y", "rm z"]);
    assert_eq!(
        texts("echo $(ls #)\n); rm z"),
        ["echo $(ls #)\n)", "rm z", "ls"]
    );
}

#[test]
fn parameter_expansions_and_arithmetic() {
    let subscript = r#"cargo test ${A="b[\$(rm -rf x)]"}${x[A]}"#;
    assert!(parse(subscript).opaque);
    assert!(!parse("echo ${HOME} $HOME ${1} ${#} ${?}").opaque);
    for line in [
        "echo ${x:-y}",
        "echo ${x[0]}",
        "echo ${#x}",
        "echo ${x:1:2}",
        "echo $((A + 1))",
        "((A++))",
        "echo $[A]",
        "let A=1",
        "[[ $x -eq 1 ]]",
        "[[ -v x ]]",
        "declare -i n; n=A",
        "read 'x[A]'",
        "printf -v 'x[A]' 1",
        "case $x in a) ls;; esac",
        "function f { ls; }",
        "echo ${x",
        "echo 'unterminated",
        "echo $(ls",
        "echo `ls",
    ] {
        assert!(parse(line).opaque, "{line}");
    }
    assert!(!parse("echo $((1 + 2 * (3 - 1)))").opaque);
    assert_eq!(texts("echo $((1 + 2))"), ["echo $((1 + 2))"]);
    // What runs inside an expansion is still seen.
    assert!(texts("echo ${x:-$(rm -rf y)}").contains(&"rm -rf y".to_string()));
    assert!(texts("echo \"${x:-`rm -rf y`}\"").contains(&"rm -rf y".to_string()));
    assert!(!parse("[[ -f x && $y == z ]]").opaque);
    assert!(!parse("export RUST_LOG=debug && cargo test").opaque);
}

#[test]
fn here_documents() {
    let quoted = "cat <<'EOF' > /dev/null\n$(rm -rf x)\nEOF\nls";
    assert_eq!(texts(quoted), ["cat <<'EOF' > /dev/null", "ls"]);
    assert!(!parse(quoted).opaque);
    let unquoted = "cat <<-EOF\n\t$(rm -rf x) `ls`\n\tEOF\necho done";
    assert_eq!(
        texts(unquoted),
        ["cat <<-EOF", "echo done", "rm -rf x", "ls"]
    );
    assert!(!parse(unquoted).opaque);
    assert!(parse("cat <<EOF\nno end").opaque);
    assert!(parse("cat <<EOF").opaque);
    assert_eq!(
        texts("cat <<< 'rm -rf x'; ls"),
        ["cat <<< 'rm -rf x'", "ls"]
    );
}

#[test]
fn plain_forms_resolve_spellings() {
    for spelling in [
        "rm -rf x",
        "\\rm -rf x",
        "/bin/rm -rf x",
        "/usr/bin/rm -rf x",
        "r''m -rf x",
        "\"rm\" -rf x",
        "$'rm' -rf x",
        "r\\m -rf x",
        "rm${IFS}-rf${IFS}x",
        "rm$IFS-rf x",
        "FOO=1 rm -rf 'x'",
        "r\\\nm -rf x",
    ] {
        assert_eq!(plains(spelling), ["rm -rf x"], "{spelling}");
    }
}

#[test]
fn run_time_program_names_are_unknown() {
    for line in [
        "$(echo rm) x",
        "$X -rf",
        "${X}",
        "`echo rm` x",
        "\"$X\" x",
        "* x",
        "/bin/r? x",
        "$'\\x72m' x",
        "{rm,-rf,x}",
        "x[A]=1",
    ] {
        let parsed = parse(line);
        assert!(parsed.commands[0].unknown, "{line}");
        assert!(parsed.unknown(), "{line}");
    }
    for line in ["rm x", "ls $X", "echo *", "FOO=$X ls", "\\ls"] {
        assert!(!parse(line).unknown(), "{line}");
    }
    assert!(parse("cat x | sh").unknown());
    assert!(parse("source ./env.sh").unknown());
    assert!(parse("ls | xargs -I{} {}").unknown());
    assert!(parse("sudo $CMD").unknown());
}

fn derived_plains(line: &str) -> Vec<String> {
    parse(line)
        .commands
        .into_iter()
        .filter(|c| c.derived)
        .filter_map(|c| c.plain)
        .collect()
}

#[test]
fn more_wrappers_are_looked_into() {
    let cases = [
        ("env -S 'rm -rf x'", "rm -rf x"),
        ("env --split-string='rm -rf x'", "rm -rf x"),
        ("env -i -S'rm -rf x'", "rm -rf x"),
        ("find . -name y -exec rm -rf {} \\;", "rm -rf {}"),
        ("find . -execdir rm {} +", "rm {}"),
        ("find . -ok rm {} ';'", "rm {}"),
        ("flock /tmp/l rm -rf x", "rm -rf x"),
        ("flock -w 5 /tmp/l -c 'rm -rf x'", "rm -rf x"),
        ("unshare -r rm -rf x", "rm -rf x"),
        ("strace -f -o log rm -rf x", "rm -rf x"),
        ("ltrace -o log rm -rf x", "rm -rf x"),
        ("nice -n 5 rm -rf x", "rm -rf x"),
        ("timeout -s KILL 5 rm -rf x", "rm -rf x"),
        ("nohup rm -rf x", "rm -rf x"),
        ("chroot / rm -rf x", "rm -rf x"),
        ("xargs -0 rm -rf", "rm -rf"),
        ("busybox rm -rf x", "rm -rf x"),
        ("chrt -f 10 rm -rf x", "rm -rf x"),
        ("taskset -c 0 rm -rf x", "rm -rf x"),
        ("runuser -u me -- rm -rf x", "rm -rf x"),
        ("runuser -c 'rm -rf x' me", "rm -rf x"),
        ("su -c 'rm -rf x' me", "rm -rf x"),
        ("script -qc 'rm -rf x' /dev/null", "rm -rf x"),
        ("script -c 'rm -rf x' /dev/null", "rm -rf x"),
        ("sg wheel -c 'rm -rf x'", "rm -rf x"),
        ("parallel -j 2 rm ::: a b", "rm ::: a b"),
        ("systemd-run --user -p X=1 rm -rf x", "rm -rf x"),
        ("dbus-launch rm -rf x", "rm -rf x"),
        ("watch -n 1 'rm -rf x'", "rm -rf x"),
        ("trap 'rm -rf x' EXIT", "rm -rf x"),
        ("uv run rm -rf x", "rm -rf x"),
        ("\\sudo /bin/rm -rf x", "rm -rf x"),
        ("sudo -u root \"rm\" -rf x", "rm -rf x"),
        ("command rm -rf x", "rm -rf x"),
        ("exec rm -rf x", "rm -rf x"),
        ("ionice -c 3 rm -rf x", "rm -rf x"),
        ("stdbuf -o0 rm -rf x", "rm -rf x"),
        ("setsid rm -rf x", "rm -rf x"),
        ("doas rm -rf x", "rm -rf x"),
        ("coproc rm -rf x", "rm -rf x"),
        ("ssh -p 22 host rm -rf x", "rm -rf x"),
    ];
    for (line, want) in cases {
        let got = derived_plains(line);
        assert!(got.iter().any(|g| g == want), "{line}: {got:?}");
    }
    // `script` and `su` without `-c` run no command of the line.
    assert_eq!(derived_plains("su me"), Vec::<String>::new());
    assert!(parse("find . -exec {} \\;").unknown());
}

#[test]
fn assignments_that_change_what_runs() {
    for line in [
        "PATH=/tmp/evil:$PATH cargo test",
        "LD_PRELOAD=x.so cargo test",
        "export PATH=/tmp; cargo test",
        "env BASH_ENV=x cargo test",
        "RUSTC_WRAPPER=./w cargo test",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./r cargo test",
        "sh -c 'GIT_SSH_COMMAND=x git fetch'",
        "make CC=./evil",
    ] {
        assert!(parse(line).hijacking_assignment().is_some(), "{line}");
    }
    for line in [
        "RUST_LOG=debug cargo test",
        "cargo test -- --x=1",
        "FOO=1 ls",
    ] {
        assert_eq!(parse(line).hijacking_assignment(), None, "{line}");
    }
}

// --- Decisions on whole requests ---------------------------------------

fn options() -> Vec<PermissionOption> {
    [
        ("once", OptionKind::AllowOnce),
        ("reject", OptionKind::RejectOnce),
    ]
    .into_iter()
    .map(|(id, kind)| PermissionOption {
        id: id.into(),
        name: id.into(),
        kind,
    })
    .collect()
}

fn shell_request(line: &str) -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: line.into(),
        raw_input: Some(json!({ "command": line })),
        options: options(),
        ..RequestView::default()
    }
}

use crate::test_support::command_rule;

fn decide_in(req: &RequestView, mode: Mode, bypass: bool, rules: &[Rule]) -> Decision {
    let agent = AgentPolicy {
        name: "agent".into(),
        bypass,
        ..AgentPolicy::default()
    };
    let cx = Context {
        mode,
        agent: &agent,
        rules,
        grants: &[],
        home: Some(Path::new("/home/u")),
        cwd: Path::new("/home/u/p"),
        unattended: false,
    };
    decide(req, &cx)
}

fn short(d: &Decision) -> &'static str {
    match d {
        Decision::Allow { .. } => "allow",
        Decision::Deny { .. } => "deny",
        Decision::Ask { .. } => "ask",
    }
}

#[test]
fn the_reported_lines_are_not_allowed_and_rm_is_denied() {
    let allow = [command_rule(RuleDecision::Allow, "cargo test *")];
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    let comment = "cargo test #'\nrm -rf x #'";
    assert_eq!(
        short(&decide_in(
            &shell_request(comment),
            Mode::Default,
            false,
            &allow
        )),
        "ask"
    );
    assert_eq!(
        short(&decide_in(
            &shell_request(comment),
            Mode::Auto,
            false,
            &deny
        )),
        "deny"
    );
    let subscript = r#"cargo test ${A="b[\$(rm -rf x)]"}${x[A]}"#;
    assert_eq!(
        short(&decide_in(
            &shell_request(subscript),
            Mode::Default,
            false,
            &allow
        )),
        "ask"
    );
    // Nobody can tell whether it runs `rm`: it asks, even in Auto and bypassed.
    let d = decide_in(&shell_request(subscript), Mode::Auto, true, &deny);
    assert_eq!(short(&d), "ask");
    assert_eq!(
        d.reason(),
        "command cannot be read; deny rule command=\"rm *\" might match"
    );
    assert_eq!(
        short(&decide_in(
            &shell_request("cargo test --lib"),
            Mode::Default,
            false,
            &allow
        )),
        "allow"
    );
}

#[test]
fn spellings_of_rm_are_denied_and_run_time_names_ask() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    for line in [
        "\\rm -rf x",
        "/bin/rm -rf x",
        "/usr/bin/rm -rf x",
        "r''m -rf x",
        "\"rm\" -rf x",
        "$'rm' -rf x",
        "r\\m -rf x",
        "rm${IFS}-rf x",
        "env -S 'rm -rf x'",
        "find . -exec rm {} \\;",
        "flock /tmp/l rm x",
        "unshare rm x",
        "strace rm x",
        "nice rm x",
        "timeout 5 rm x",
        "nohup rm x",
        "chroot / rm x",
        "ls | xargs rm",
        "busybox rm x",
        "su -c 'rm x'",
        "ls #'\nrm x",
    ] {
        let d = decide_in(&shell_request(line), Mode::Auto, true, &deny);
        assert_eq!(short(&d), "deny", "{line}");
    }
    for line in [
        "$(echo rm) x",
        "$X -rf",
        "${X}",
        "`echo rm`",
        "\"$X\"",
        "* x",
        "$'\\x72m' x",
        "echo $X | sh",
    ] {
        let d = decide_in(&shell_request(line), Mode::Auto, true, &deny);
        assert_eq!(short(&d), "ask", "{line}");
        let ask = [command_rule(RuleDecision::Ask, "git push *")];
        let d = decide_in(&shell_request(line), Mode::Auto, false, &ask);
        assert_eq!(short(&d), "ask", "{line} with an ask rule");
        let everything = [command_rule(RuleDecision::Allow, "*")];
        let d = decide_in(&shell_request(line), Mode::Default, false, &everything);
        assert_eq!(short(&d), "ask", "{line} with allow *");
    }
    // Without deny or ask rules, Auto still runs what it cannot read.
    let d = decide_in(&shell_request("$X"), Mode::Auto, false, &[]);
    assert_eq!(short(&d), "allow");
}

#[test]
fn hijacking_variables_are_never_allowed() {
    let allow = [command_rule(RuleDecision::Allow, "*")];
    for line in [
        "PATH=./evil:$PATH cargo test",
        "LD_PRELOAD=./x.so cargo test",
        "env PATH=./evil cargo test",
    ] {
        let d = decide_in(&shell_request(line), Mode::Default, false, &allow);
        assert_eq!(short(&d), "ask", "{line}");
    }
    let mut terminal = shell_request("cargo test");
    terminal.raw_input = Some(json!({
        "command": "cargo test",
        "env": { "PATH": "/p/evilbin:/usr/bin" }
    }));
    let exact = [command_rule(RuleDecision::Allow, "cargo test *")];
    let d = decide_in(&terminal, Mode::Default, false, &exact);
    assert_eq!(
        d.reason(),
        "execute calls ask in default mode; it sets PATH, which no allow rule covers"
    );
    terminal.raw_input = Some(json!({
        "command": "cargo test",
        "env": [{ "name": "RUST_LOG", "value": "debug" }]
    }));
    assert_eq!(
        short(&decide_in(&terminal, Mode::Default, false, &exact)),
        "allow"
    );
    terminal.raw_input = Some(json!({
        "command": "cargo test",
        "env": [{ "name": "ld_preload", "value": "x" }]
    }));
    assert_eq!(
        short(&decide_in(&terminal, Mode::Default, false, &exact)),
        "ask"
    );
}

// --- Requests whose command is not in rawInput ----------------------------

fn gemini_request() -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: "touch created-by-agent.txt".into(),
        options: options(),
        ..RequestView::default()
    }
}

fn kimi_request() -> RequestView {
    let req = crate::model::PermissionRequest {
        session_id: "s".into(),
        tool_call_id: "call_1".into(),
        fields: crate::model::ToolCallFields {
            title: Some("Shell: touch created-by-agent.txt".into()),
            ..crate::model::ToolCallFields::default()
        },
        options: options(),
        client: false,
    };
    RequestView::from_request(&req, None)
}

#[test]
fn title_commands_are_denied_by_a_deny_rule_they_match_and_allow_rules_cover_only_a_known_kind() {
    let deny = [command_rule(RuleDecision::Deny, "touch *")];
    let allow = [command_rule(RuleDecision::Allow, "touch *")];
    let other_deny = [command_rule(RuleDecision::Deny, "rm *")];
    // gemini-cli runs the command itself and says it only in the title: read
    // like a command line, allow rules cover it (issue 33 item 3).
    assert!(gemini_request().command_exact());
    assert_eq!(
        short(&decide_in(&gemini_request(), Mode::Default, false, &allow)),
        "allow"
    );
    for req in [gemini_request(), kimi_request()] {
        assert_eq!(req.command().as_deref(), Some("touch created-by-agent.txt"));
        assert!(!req.command_from_input());
        // What the agent says it runs is enough for a deny rule.
        let d = decide_in(&req, Mode::Auto, true, &deny);
        assert_eq!(short(&d), "deny", "{req:?}");
        assert_eq!(d.reason(), "deny rule command=\"touch *\"");
        // Any deny command rule might be the one: the title could lie.
        assert_eq!(
            short(&decide_in(&req, Mode::Auto, false, &other_deny)),
            "ask"
        );
        // Without command rules, the mode decides as before.
        assert_eq!(short(&decide_in(&req, Mode::Auto, false, &[])), "allow");
    }
    // kimi-cli's kind had to be guessed: no allow rule covers it, and no
    // rule is proposed.
    assert!(!kimi_request().command_exact());
    assert_eq!(
        short(&decide_in(&kimi_request(), Mode::Default, false, &allow)),
        "ask"
    );
    assert_eq!(kimi_request().kind, ToolKind::Other);
    assert_eq!(kimi_request().inferred_kind, Some(ToolKind::Execute));
    // No command at all: the same.
    let blank = RequestView {
        title: String::new(),
        ..gemini_request()
    };
    assert_eq!(blank.command(), None);
    assert_eq!(short(&decide_in(&blank, Mode::Auto, false, &deny)), "ask");
}

#[test]
fn a_guessed_kind_gets_deny_rules_of_that_kind_and_no_allow_rule() {
    let kimi = kimi_request();
    let kind_rule = |decision, kind: &str| Rule {
        kind: kind.parse().ok(),
        ..Rule::new(decision)
    };
    assert_eq!(
        short(&decide_in(
            &kimi,
            Mode::Auto,
            false,
            &[kind_rule(RuleDecision::Deny, "execute")]
        )),
        "deny"
    );
    assert_eq!(
        short(&decide_in(
            &kimi,
            Mode::Default,
            false,
            &[kind_rule(RuleDecision::Allow, "execute")]
        )),
        "ask"
    );
    // A diff without a kind is an edit for deny rules.
    let req = crate::model::PermissionRequest {
        session_id: "s".into(),
        tool_call_id: "call_2".into(),
        fields: crate::model::ToolCallFields {
            title: Some("Write x".into()),
            content: Some(vec![crate::model::ToolContent::Diff {
                path: "/home/u/p/x".into(),
                old: None,
                new: "y".into(),
            }]),
            ..crate::model::ToolCallFields::default()
        },
        options: options(),
        client: false,
    };
    let edit = RequestView::from_request(&req, None);
    assert_eq!(edit.inferred_kind, Some(ToolKind::Edit));
    assert_eq!(
        short(&decide_in(
            &edit,
            Mode::Auto,
            false,
            &[kind_rule(RuleDecision::Deny, "edit")]
        )),
        "deny"
    );
    assert_eq!(
        short(&decide_in(
            &edit,
            Mode::Default,
            false,
            &[kind_rule(RuleDecision::Allow, "edit")]
        )),
        "ask"
    );
}

#[test]
fn commands_from_every_raw_input_shape() {
    let view = |raw: serde_json::Value| RequestView {
        kind: ToolKind::Execute,
        title: "ignored".into(),
        raw_input: Some(raw),
        ..RequestView::default()
    };
    let cases = [
        (json!({"command": "ls -la"}), "ls -la"),
        (json!({"cmd": ["ls", "a b"]}), "ls 'a b'"),
        (
            json!({"command": ["/bin/bash", "-lc", "touch x"]}),
            "touch x",
        ),
        (
            json!({"command": "ls", "args": ["-la", "a b"]}),
            "ls -la 'a b'",
        ),
        (json!({"argv": ["rm", "-rf", "x"]}), "rm -rf x"),
    ];
    for (raw, want) in cases {
        let v = view(raw);
        assert_eq!(v.command().as_deref(), Some(want));
        assert!(v.command_exact());
    }
    let titled = |title: &str| RequestView {
        kind: ToolKind::Execute,
        title: title.into(),
        ..RequestView::default()
    };
    for (title, want) in [
        ("Shell: touch x", "touch x"),
        ("Bash: `ls -la`", "ls -la"),
        ("Run `cargo test`", "cargo test"),
        (
            "touch x (Create an empty file)",
            "touch x (Create an empty file)",
        ),
    ] {
        assert_eq!(titled(title).command().as_deref(), Some(want), "{title}");
    }
    let edit = RequestView {
        kind: ToolKind::Edit,
        title: "Shell: rm x".into(),
        ..RequestView::default()
    };
    assert_eq!(edit.command(), None);
}

#[test]
fn everyday_lines_stay_readable() {
    for line in [
        "cd /tmp && ls -la",
        "cargo build 2>&1 | tail -20",
        "git status && git diff --stat",
        "grep -rn \"foo\" src/ | head -20",
        "find . -name \"*.rs\" -type f | wc -l",
        "echo \"done: $(date)\"",
        "for f in src/*.rs; do wc -l \"$f\"; done",
        "cat > notes.md <<'EOF'\n# x $(not run)\nEOF",
        "ls ${HOME} $PWD",
        "[ -f Cargo.toml ] && cargo check",
        "[[ -n \"$x\" ]] && echo set",
        "test -d target || mkdir target",
        "export RUST_BACKTRACE=1; cargo test -- --nocapture",
        "if [ -d x ]; then echo y; fi",
        "while read l; do echo \"$l\"; done < f",
        "echo $((2 * 3)) # six",
        "python3 -c 'print(1)'",
        "awk '{ print $1 }' f",
        "sudo apt-get install -y ripgrep",
        "bash -lc 'cargo test && cargo fmt'",
    ] {
        let parsed = parse(line);
        assert!(!parsed.unknown(), "{line}: {parsed:#?}");
        assert_eq!(parsed.hijacking_assignment(), None, "{line}");
    }
}

//! The second attacker pass over [`decide`]: commands that run other
//! programs, and spellings of a denied path through the shell's own state
//! (`cd` chains, `CDPATH`, `HOME`).

use serde_json::json;

use super::*;
use crate::model::ToolKind;
use crate::test_support::command_rule;

use super::attack_tests::{decide_in, ssh_deny};

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

fn shell(line: &str) -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: "Bash".into(),
        tool_name: Some("Bash".into()),
        raw_input: Some(json!({ "command": line })),
        options: options(),
        ..RequestView::default()
    }
}

fn never_allowed(lines: &[&str], rules: &[Rule]) {
    let mut holes = Vec::new();
    for line in lines {
        let got = decide_in(&shell(line), Mode::Auto, rules);
        if matches!(got, Decision::Allow { .. }) {
            holes.push(*line);
        }
    }
    assert!(holes.is_empty(), "allowed in Auto: {holes:#?}");
}

#[test]
fn programs_that_run_other_programs_meet_deny_rules() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    // Nested shells (the quoting grows fourfold a level) and wrappers.
    let nested = (0..8).fold("rm -rf x".to_string(), |line, _| {
        format!("sh -c {}", request::shell_quote(&line))
    });
    let wrapped = format!("{}rm -rf x", "sudo nice ".repeat(200));
    never_allowed(
        &[
            "env -i rm -rf x",
            "env - rm -rf x",
            "env -i PATH=/bin rm -rf x",
            "busybox sh -c 'rm -rf x'",
            "stdbuf -oL rm -rf x",
            "setsid -f rm -rf x",
            "unshare -r rm -rf x",
            "flock /tmp/l -c 'rm -rf x'",
            "watch -n 1 'rm -rf x'",
            "f(){ rm -rf x; }; f",
            "function f { rm -rf x; }; f",
            "{rm,-rf,x}",
            "$'\\x72m' -rf x",
            "r\\\nm -rf x",
            "sudo -u root -- rm -rf x",
            "xargs -0 -I % rm % < list",
            "zsh -c 'rm -rf x'",
            "fish -c 'rm -rf x'",
            "bash -O extglob -ec 'rm -rf x'",
            "nice -n 5 ionice -c3 timeout -k 1 5 rm -rf x",
            &nested,
            &wrapped,
        ],
        &deny,
    );
}

#[test]
fn interpreters_given_bundled_inline_code_meet_deny_rules() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    never_allowed(
        &[
            "perl -pe 'system(\"rm -rf x\")' f",
            "perl -lne 'system q(rm -rf x)' f",
            "perl -i -pe 'system q(rm -rf x)' f",
            "python3 -Ic 'import os; os.system(\"rm -rf x\")'",
            "python3 -Sc 'import os; os.system(\"rm -rf x\")'",
            "ruby -ne 'system(\"rm -rf x\")' f",
            "node -pe 'require(\"child_process\").execSync(\"rm -rf x\")'",
        ],
        &deny,
    );
}

#[test]
fn commands_saved_for_later_meet_deny_rules() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    never_allowed(
        &[
            "shopt -s expand_aliases\nalias ll='rm -rf x'\nll",
            "git config alias.x '!rm -rf x' && git x",
            "git config --local core.pager 'rm -rf x'; git log",
            "sed -f x.sed f",
            "sed --file=x.sed f",
            "make --eval='x:;rm -rf x' x",
        ],
        &deny,
    );
}

#[test]
fn spellings_of_a_denied_path_through_the_shell_state() {
    never_allowed(
        &[
            "cat ~/.ssh/../.ssh/id_rsa",
            "cat ~//.ssh/id_rsa",
            "cat \"$HOME\"/.ssh/id_rsa",
            "cat ${HOME}/.ssh/id_rsa",
            "cat < ~/.ssh/id_rsa",
            "cat ~/.ssh/id_rs?",
            "tar -C ~ -cf - .ssh",
            "cat /proc/self/cwd/../.ssh/id_rsa",
            "cat /proc/self/root/home/u/.ssh/id_rsa",
            "cat ~u/.ssh/id_rsa",
            "cd ~/.ss*; cat id_rsa",
            "cd a; cd b; cd ../../../.ssh; cat id_rsa",
            "cd a && cd b && cd ../../../.ssh && cat id_rsa",
            "pushd a; pushd b; cd ../../../.ssh; cat id_rsa",
            "CDPATH=.. cd .ssh && cat id_rsa",
            "export CDPATH=..; cd .ssh; cat id_rsa",
            "HOME=/home/u/.ssh; cat ~/id_rsa",
            "export HOME=/home/u/.ssh; cd; cat id_rsa",
            "for HOME in /home/u/.ssh; do cat ~/id_rsa; done",
        ],
        &[ssh_deny()],
    );
}

#[test]
fn a_request_whose_cwd_names_the_denied_directory() {
    for cwd in ["/home/u/.ssh", "~/.ssh", "..//.ssh", "../.ssh/."] {
        let read = RequestView {
            kind: ToolKind::Read,
            title: "Read".into(),
            locations: vec!["id_rsa".into()],
            raw_input: Some(json!({ "path": "id_rsa", "cwd": cwd })),
            options: options(),
            ..RequestView::default()
        };
        let got = decide_in(&read, Mode::Auto, &[ssh_deny()]);
        assert!(matches!(got, Decision::Deny { .. }), "{cwd}: {got:?}");
        let mut run = shell("cat id_rsa");
        run.raw_input = Some(json!({ "command": "cat id_rsa", "cwd": cwd }));
        let got = decide_in(&run, Mode::Auto, &[ssh_deny()]);
        assert!(matches!(got, Decision::Deny { .. }), "{cwd}: {got:?}");
    }
}

#[test]
fn many_cds_are_bounded_and_then_unreadable() {
    // Each `cd` is taken from every directory before it: without a bound
    // 40 of them would make 2^40 directories.
    let cds: String = (0..40).map(|i| format!("cd d{i}; ")).collect();
    let line = format!("{cds}cat id_rsa");
    let got = decide_in(&shell(&line), Mode::Auto, &[ssh_deny()]);
    assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
    // A line that only mentions a word holding HOME still runs.
    let got = decide_in(
        &shell("cat HOMEWORK.md MY_HOME_DIR"),
        Mode::Auto,
        &[ssh_deny()],
    );
    assert!(matches!(got, Decision::Allow { .. }), "{got:?}");
}

#[test]
fn options_that_cannot_be_answered_safely_make_a_card() {
    let opt = |id: &str, name: &str, kind| PermissionOption {
        id: id.into(),
        name: name.into(),
        kind,
    };
    let shapes = [
        Vec::new(),
        vec![opt("a", "Allow", OptionKind::AllowAlways)],
        vec![
            opt("x", "Allow", OptionKind::AllowOnce),
            opt("x", "Reject", OptionKind::RejectOnce),
        ],
        vec![opt("once", "Allow for this session", OptionKind::AllowOnce)],
    ];
    for options in shapes {
        let mut req = shell("cargo test");
        req.options = options.clone();
        let got = decide_in(&req, Mode::Auto, &[]);
        assert!(matches!(got, Decision::Ask { .. }), "{options:?}: {got:?}");
        // A refusal never sends an id another option shares.
        let deny = [command_rule(RuleDecision::Deny, "cargo *")];
        if let Decision::Deny { option_id, .. } = decide_in(&req, Mode::Auto, &deny) {
            assert!(
                option_id.is_none_or(|id| options.iter().filter(|o| o.id == id).count() == 1),
                "{options:?}"
            );
        }
    }
}

#[test]
fn more_programs_that_run_commands_meet_deny_rules() {
    let deny = [command_rule(RuleDecision::Deny, "rm *")];
    never_allowed(
        &[
            "git rebase -x 'rm -rf x' HEAD~1",
            "git rebase --exec='rm -rf x' HEAD~1",
            "git submodule foreach 'rm -rf x'",
            "git bisect run rm -rf x",
            "echo 'rm -rf x' | at now",
            "at now <<< 'rm -rf x'",
            "echo '* * * * * rm -rf x' | crontab -",
            "tmux new-session -d 'rm -rf x'",
            "tmux new -d rm -rf x",
            "screen -dmS s rm -rf x",
            "ls | entr rm -rf x",
            "docker run --rm -v \"$PWD\":/w alpine rm -rf /w",
            "docker exec c rm -rf /w",
            "podman run alpine rm -rf /w",
            "kubectl exec pod -- rm -rf /w",
            "eatmydata rm -rf x",
            "chronic rm -rf x",
            "cross-env A=1 rm -rf x",
            "nodemon --exec 'rm -rf x'",
            "watchexec -- rm -rf x",
            "dotenv -- rm -rf x",
        ],
        &deny,
    );
}

#[test]
fn very_long_lines_are_decided() {
    // No timing is asserted; a line that made the scanner quadratic or worse
    // would hang this test (`sudo ` 20000 times took 50 s before lines past
    // 32 KiB were left unread and a wrapper's words were read once).
    let lines = [
        "a; ".repeat(20_000),
        "$(".repeat(5_000),
        "cd a; ".repeat(5_000) + "cat id_rsa",
        "sudo ".repeat(20_000) + "rm -rf x",
        "sh -c ".repeat(5_000) + "'rm -rf x'",
        format!("cat {}", "x/../".repeat(20_000)),
        "\"$(\"".repeat(5_000),
    ];
    let deny = [command_rule(RuleDecision::Deny, "rm *"), ssh_deny()];
    for line in &lines {
        let got = decide_in(&shell(line), Mode::Auto, &deny);
        assert!(
            !matches!(got, Decision::Allow { .. }) || !line.contains("rm"),
            "{got:?}"
        );
    }
}

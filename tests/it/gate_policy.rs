//! End to end: the policy holes of issue 22 (items 3, 6, 7 and 10), played
//! by a hostile demo agent (`hostile-policy-holes.toml`) over real pipes,
//! under `warden exec` and in the TUI's state.

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use warden::state::Code;

use crate::common::*;
use warden::app::ChatOptions;
use warden::policy::{Category, KindMatch, Mode, Rule, RuleDecision};
use warden::state::{Action, Modal};

const SCENARIO: &str = "hostile-policy-holes.toml";

/// A settings file holding `rules` (TOML `[[rules]]` tables, as written).
fn settings(dir: &Path, rules: &str) -> PathBuf {
    let path = dir.join("warden.toml");
    std::fs::write(&path, rules).expect("settings written");
    path
}

fn command_rule(decision: &str, command: &str) -> String {
    format!("[[rules]]\ndecision = \"{decision}\"\ncommand = {command:?}\n\n")
}

const SSH_RULE: &str = "[[rules]]\ndecision = \"deny\"\nkind = \"read\"\npath = \"~/.ssh/**\"\nnote = \"keys stay private\"\n\n";

/// `warden exec` in `dir` (its HOME) playing the scenario's turn `prompt`.
fn play(dir: &Path, config: &Path, mode: &str, on_ask: &str, prompt: &str) -> ExecRun {
    let scenario = scenario(SCENARIO);
    exec_in(
        dir,
        config,
        &[
            "--mode",
            mode,
            "--on-ask",
            on_ask,
            "-p",
            prompt,
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &scenario,
        ],
    )
}

fn victim(dir: &Path) -> PathBuf {
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep me").expect("victim written");
    victim
}

#[test]
fn a_program_path_through_a_directory_named_ls_is_judged_as_the_shell_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ls ")).expect("the agent's directory `ls `");
    let victim = victim(dir.path());

    // `deny rm *` sees the `rm` that sh runs, whatever `allow ls *` says.
    let config = settings(
        dir.path(),
        &(command_rule("allow", "ls *") + &command_rule("deny", "rm *")),
    );
    let (code, out, err, log) = play(dir.path(), &config, "default", "allow", "dotdot");
    assert_eq!(code, Some(0), "{err}");
    assert!(victim.exists(), "sh ran rm: {out} {err}");
    assert!(out.contains("terminal/create failed"), "{out}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "rule"),
        "{log:?}"
    );
    assert!(log[0].reason.contains("rm *"), "{log:?}");

    // `allow ls *` alone does not cover /bin/sh: it asks, and exec's
    // default answer refuses.
    let config = settings(dir.path(), &command_rule("allow", "ls *"));
    let (_, out, err, log) = play(dir.path(), &config, "default", "deny", "dotdot");
    assert!(victim.exists(), "{out} {err}");
    assert_eq!(log.last().expect("logged").source, "on-ask", "{log:?}");
}

#[test]
fn a_symlink_named_ls_is_judged_as_the_shell_it_leads_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/bin/sh", dir.path().join("ls")).expect("symlink ./ls");
    let victim = victim(dir.path());
    let config = settings(
        dir.path(),
        &(command_rule("allow", "ls *") + &command_rule("deny", "rm *")),
    );
    let (_, out, err, log) = play(dir.path(), &config, "auto", "allow", "link");
    assert!(victim.exists(), "sh ran rm: {out} {err}");
    assert_eq!(log[0].decision, "denied", "{log:?}");
    assert!(log[0].reason.contains("rm *"), "{log:?}");
}

#[test]
fn an_environment_that_changes_what_runs_is_refused_headless_even_with_on_ask_allow() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), &command_rule("allow", "ls *"));
    let (code, out, err, log) = play(dir.path(), &config, "default", "allow", "preload");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("terminal/create failed"), "{out}");
    assert_eq!(log[0].decision, "denied", "{log:?}");
    assert!(log[0].reason.contains("LD_PRELOAD"), "{log:?}");
}

#[test]
fn a_title_only_command_matching_a_deny_rule_is_denied_by_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), &command_rule("deny", "touch *"));
    let gemini = scenario("gemini-execute-without-raw-input.toml");
    let (code, out, err, log) = exec_in(
        dir.path(),
        &config,
        &[
            "--mode",
            "auto",
            "--on-ask",
            "allow",
            "-p",
            "touch",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &gemini,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("permission outcome: selected cancel"), "{out}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "rule"),
        "{log:?}"
    );
}

#[test]
fn commands_warden_cannot_read_are_denied_headless_by_the_rule_they_might_match() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), &command_rule("deny", "rm *"));
    for turn in ["subst", "disagree", "inline", "gitpager"] {
        let (code, out, err, log) = play(dir.path(), &config, "auto", "allow", turn);
        assert_eq!(code, Some(0), "{turn}: {err}");
        assert!(out.contains("selected reject-once"), "{turn}: {out}");
        assert_eq!(
            (log[0].decision.as_str(), log[0].source.as_str()),
            ("denied", "rule"),
            "{turn}: {log:?}"
        );
        assert!(log[0].reason.contains("rm *"), "{turn}: {log:?}");
    }
}

#[test]
fn a_shell_fed_on_standard_input_is_looked_into_by_deny_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), &command_rule("deny", "rm *"));
    for turn in ["heredoc", "herestring", "pipe"] {
        // --on-ask fail: an ask would fail the run; the rule denies instead.
        let (code, out, err, log) = play(dir.path(), &config, "auto", "fail", turn);
        assert_eq!(code, Some(0), "{turn}: {out} {err}");
        assert!(out.contains("selected reject-once"), "{turn}: {out}");
        assert_eq!(
            (log[0].decision.as_str(), log[0].source.as_str()),
            ("denied", "rule"),
            "{turn}: {log:?}"
        );
    }
}

#[test]
fn a_deny_path_rule_sees_the_paths_in_a_reads_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), SSH_RULE);
    // Even in Plan, where reads run: the key's path denies; a directory
    // holding it and a path warden cannot read are refused headless.
    for turn in ["catkey", "rgdir", "grephome", "varkey"] {
        let (code, out, err, log) = play(dir.path(), &config, "plan", "allow", turn);
        assert_eq!(code, Some(0), "{turn}: {err}");
        assert!(out.contains("selected reject-once"), "{turn}: {out}");
        assert_eq!(
            (log[0].decision.as_str(), log[0].source.as_str()),
            ("denied", "rule"),
            "{turn}: {log:?}"
        );
        assert!(log[0].reason.contains("~/.ssh/**"), "{turn}: {log:?}");
    }
}

#[test]
fn a_terminal_reading_the_key_through_a_symlink_meets_the_path_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ssh = dir.path().join(".ssh");
    std::fs::create_dir(&ssh).expect(".ssh");
    std::fs::write(ssh.join("id_rsa"), "PRIVATE KEY").expect("key");
    std::os::unix::fs::symlink(&ssh, dir.path().join("keys")).expect("keys -> ~/.ssh");
    let config = settings(dir.path(), SSH_RULE);
    let (code, out, err, log) = play(dir.path(), &config, "auto", "allow", "keylink");
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("PRIVATE KEY"), "the key was read: {out}");
    assert!(!log.is_empty(), "{out} {err}");
    assert!(out.contains("terminal/create failed"), "{out} {err}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "rule"),
        "{log:?}"
    );
}

fn ssh_rule() -> Rule {
    Rule {
        kind: Some(KindMatch::Category(Category::Read)),
        path: Some("~/.ssh/**".into()),
        ..Rule::new(RuleDecision::Deny)
    }
}

#[tokio::test]
async fn in_the_tui_a_deny_rule_warden_cannot_rule_out_asks_and_names_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        mode: Mode::Auto,
        rules: vec![
            Rule {
                command: Some("rm *".into()),
                ..Rule::new(RuleDecision::Deny)
            },
            ssh_rule(),
        ],
        ..ChatOptions::default()
    };
    let mut app = started_scenario(dir.path(), SCENARIO, options).await;
    // A here-document's body is read: denied outright, no card.
    send(&mut app, "heredoc");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("selected reject-once"),
        "{}",
        agent_text(app.state())
    );
    // `$(echo rm)` cannot be read: a card that names the rule.
    send(&mut app, "subst");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let reason = app.state().gate.approvals[0].reason.clone();
    assert!(reason.contains("deny rule command=\"rm *\""), "{reason}");
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // A grep of the directory holding the keys' directory: a card naming
    // the path rule.
    send(&mut app, "grephome");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let reason = app.state().gate.approvals[0].reason.clone();
    assert!(reason.contains("path=\"~/.ssh/**\""), "{reason}");
    app.shutdown().await;
}

#[tokio::test]
async fn keep_as_rule_on_a_relative_edit_never_covers_an_edit_of_bashrc() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        mode: Mode::Default,
        ..ChatOptions::default()
    };
    let mut app = started_scenario(dir.path(), SCENARIO, options).await;
    send(&mut app, "edit-relative");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('p'));
    let Some(Modal::KeepRule(field)) = &app.state().view.focus.modal else {
        panic!("keep-as-rule field: {:?}", app.state().view.focus)
    };
    // The rule names the edited file, resolved against the cwd; its
    // directory is a Tab away.
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let text = field.text().to_string();
    assert!(
        text == format!("{}/src/a.rs", cwd.display())
            || text.ends_with("/src/a.rs") && !text.starts_with("src"),
        "{text}"
    );
    key(&mut app, Action::key(Code::Tab));
    let Some(Modal::KeepRule(field)) = &app.state().view.focus.modal else {
        panic!("keep-as-rule field: {:?}", app.state().view.focus)
    };
    let text = field.text().to_string();
    assert!(
        text.ends_with("/src/**") && !text.starts_with("src"),
        "{text}"
    );
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let kept = app.state().gate.rules.last().cloned().expect("a rule kept");
    assert!(kept.path.is_some(), "{kept:?}");

    send(&mut app, "edit-bashrc");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    assert_eq!(app.state().gate.approvals.len(), 1);
    app.shutdown().await;
}

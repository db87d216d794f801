//! End to end: commands warden cannot read, or that are built to fool its
//! scanner, never get past the gate (issues 10 and 11). The demo agent plays
//! each agent's quirk from a scenario file, over real pipes, in the TUI's
//! state and in `warden exec`.

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::common::*;
use warden::app::{App, ChatOptions};
use warden::policy::{Mode, Rule, RuleDecision};

/// A settings file with these rules (`decision`, `command`).
fn settings_with(dir: &Path, rules: &[(&str, &str)]) -> PathBuf {
    let mut text = String::new();
    for (decision, command) in rules {
        text.push_str(&format!(
            "[[rules]]\ndecision = \"{decision}\"\ncommand = {command:?}\n\n"
        ));
    }
    let path = dir.join("warden.toml");
    std::fs::write(&path, text).expect("settings written");
    path
}

/// `warden exec` with the demo agent playing `scenario`, given `prompt`.
fn exec_scenario(
    dir: &Path,
    config: &Path,
    mode: &str,
    scenario_file: &str,
    prompt: &str,
) -> ExecRun {
    let scenario = scenario(scenario_file);
    exec_in(
        dir,
        config,
        &[
            "--mode",
            mode,
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

fn command_rule(decision: RuleDecision, command: &str) -> Rule {
    Rule {
        command: Some(command.into()),
        ..Rule::new(decision)
    }
}

#[tokio::test]
async fn gemini_execute_without_raw_input_is_denied_in_auto_by_a_deny_rule_it_matches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        mode: Mode::Auto,
        rules: vec![command_rule(RuleDecision::Deny, "touch *")],
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(
        demo_command(
            dir.path(),
            &[
                "--scenario",
                &scenario("gemini-execute-without-raw-input.toml"),
            ],
        ),
        options,
    ))
    .await;
    send(&mut app, "touch");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // What the title says it runs is enough for a deny rule: no card.
    assert!(app.state().gate.approvals.is_empty());
    assert!(
        agent_text(app.state()).contains("permission outcome: selected cancel"),
        "{}",
        agent_text(app.state())
    );
    app.shutdown().await;
}

#[test]
fn gemini_execute_without_raw_input_is_refused_by_exec_in_auto() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings_with(dir.path(), &[("deny", "touch *")]);
    let (code, out, err, log) = exec_scenario(
        dir.path(),
        &config,
        "auto",
        "gemini-execute-without-raw-input.toml",
        "touch",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("permission outcome: selected cancel"), "{out}");
    assert!(
        err.contains("blocked: deny rule command=\"touch *\""),
        "{err}"
    );
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "rule")
    );
}

#[test]
fn kimi_shell_without_kind_never_reaches_its_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let created = dir.path().join("created-by-agent.txt");

    // A deny rule sees the command in the title and denies it.
    let config = settings_with(dir.path(), &[("deny", "touch *")]);
    let (code, out, err, _) = exec_scenario(
        dir.path(),
        &config,
        "auto",
        "kimi-shell-without-kind.toml",
        "touch",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("permission outcome: selected reject"), "{out}");
    assert!(
        err.contains("blocked: deny rule command=\"touch *\""),
        "{err}"
    );
    assert!(!created.exists());

    // An allow rule never matches a command read from a title.
    let config = settings_with(dir.path(), &[("allow", "touch *")]);
    let (code, out, err, _) = exec_scenario(
        dir.path(),
        &config,
        "default",
        "kimi-shell-without-kind.toml",
        "touch",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("permission outcome: selected reject"), "{out}");
    assert!(!created.exists());
}

#[test]
fn a_quote_in_a_comment_does_not_smuggle_a_command_into_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").expect("victim written");

    // `echo *` does not cover the `rm` on the second line: it asks, and
    // exec's default answer refuses.
    let config = settings_with(dir.path(), &[("allow", "echo *")]);
    let (code, out, err, _) = exec_scenario(
        dir.path(),
        &config,
        "default",
        "hostile-terminal-tricks.toml",
        "comment",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("terminal/create failed"), "{out}");
    assert!(victim.exists(), "the allow rule let rm run: {err}");

    // A deny rule sees the `rm`, even in Auto.
    let config = settings_with(dir.path(), &[("deny", "rm *")]);
    let (_, out, err, _) = exec_scenario(
        dir.path(),
        &config,
        "auto",
        "hostile-terminal-tricks.toml",
        "comment",
    );
    assert!(out.contains("terminal/create failed"), "{out}");
    assert!(err.contains("deny rule command=\"rm *\""), "{err}");
    assert!(victim.exists());
}

#[test]
fn a_terminal_that_sets_path_is_not_covered_by_an_allow_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("evilbin");
    std::fs::create_dir(&bin).expect("evilbin");
    let fake = bin.join("cargo");
    std::fs::write(&fake, "#!/bin/sh\ntouch pwned\n").expect("fake cargo");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let pwned = dir.path().join("pwned");

    let config = settings_with(dir.path(), &[("allow", "cargo test *")]);
    // The fake cargo touches a file directly in the cwd, which is HOME here.
    let mut text = std::fs::read_to_string(&config).expect("settings");
    text.push_str(SANDBOX_OFF);
    std::fs::write(&config, text).expect("settings");
    let (code, out, err, log) = exec_scenario(
        dir.path(),
        &config,
        "default",
        "hostile-terminal-tricks.toml",
        "path",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("terminal/create failed"), "{out}");
    assert!(!pwned.exists(), "the fake cargo ran: {err}");
    assert_eq!(log[0].source, "user");

    // In Auto it runs, and the fake cargo is what runs: the scenario is real.
    let (_, out, err, _) = exec_scenario(
        dir.path(),
        &config,
        "auto",
        "hostile-terminal-tricks.toml",
        "path",
    );
    assert!(out.contains("terminal exited"), "{out} {err}");
    assert!(pwned.exists(), "{out} {err}");
}

#[test]
fn a_terminal_whose_program_is_nowhere_is_refused_by_the_gate_and_logged() {
    // Auto would allow it: the runtime finds nothing to run, and the gate
    // still decides (refuses) and logs it, like every request.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = sandbox_off(dir.path());
    let (code, out, err, log) = exec_scenario(
        dir.path(),
        &config,
        "auto",
        "hostile-terminal-tricks.toml",
        "missing",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("terminal/create failed"), "{out}");
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].reason.contains("nothing to run") && log[0].reason.contains("no-such-program-here"),
        "{:?}",
        log[0]
    );
    let decision = format!("{:?}", log[0].decision).to_lowercase();
    assert!(!decision.contains("allow"), "{:?}", log[0]);
}

/// gemini-cli says its command only in the title (no rawInput): its own
/// "Allow for this session" now covers the same command for the chat, so
/// the identical `touch` does not ask again, and another command still asks
/// (issue 33 item 3).
#[tokio::test]
async fn geminis_allow_for_this_session_covers_the_same_title_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "gemini-execute-without-raw-input.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "touch");
    pump_until(&mut app, "the touch card", |s| !s.gate.approvals.is_empty()).await;
    // `1`: the agent's first option, "Allow for this session".
    key(&mut app, warden::state::Action::ch('1'));
    pump_until(&mut app, "the first turn", |s| !s.is_busy()).await;
    assert_eq!(app.state().gate.grants.len(), 1, "a grant for the chat");
    send(&mut app, "touch");
    pump_until(&mut app, "the second turn", |s| !s.is_busy()).await;
    assert!(app.state().gate.approvals.is_empty(), "no second card");
    let text = agent_text(app.state());
    assert_eq!(
        text.matches("ran touch created-by-agent.txt").count(),
        2,
        "{text}"
    );
    let lines = decisions(app.state());
    assert!(
        lines
            .last()
            .is_some_and(|(allowed, l)| *allowed && l.contains("chat")),
        "{lines:?}"
    );
    app.shutdown().await;
}

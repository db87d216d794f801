//! End to end over real pipes: signing in as real agents ask for it
//! (issue 13). codex-acp's env_var method takes its variable from the agent
//! block; kimi-cli's terminal login runs with `warden login` in the user's
//! terminal, as the agent's own program with the method's args.

use std::path::{Path, PathBuf};
use warden::state::Code;

use crate::common::*;

/// Settings with a block `name` playing scenario `file`, with `extra` lines.
fn settings(dir: &Path, name: &str, file: &str, extra: &str) -> PathBuf {
    let exe = env!("CARGO_BIN_EXE_warden");
    let path = scenario(file);
    let text = format!(
        "[agents.{name}]\ncommand = \"{exe}\"\nargs = [\"demo-agent\", \"--scenario\", \"{path}\"]\n{extra}"
    );
    let config = dir.join("warden.toml");
    std::fs::write(&config, text).expect("settings");
    config
}

/// codex-acp needs a sign-in; its env_var method `codex-api-key` has its
/// variable in the block's `env`: warden signs in with it unasked.
#[test]
fn an_env_var_method_is_used_when_the_block_sets_its_variable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(
        dir.path(),
        "codex",
        "codex-auth-required.toml",
        "env = { CODEX_API_KEY = \"sk-test\" }\n",
    );
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "codex", "-p", "hello"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Signed in and working."), "{out}\n{err}");
}

/// Named in `auth_method` without its variable: the message says which
/// variable is missing and where it goes; nothing is sent that would fail.
#[test]
fn an_env_var_method_without_its_variable_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(
        dir.path(),
        "codex",
        "codex-auth-required.toml",
        "auth_method = \"codex-api-key\"\n",
    );
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "codex", "-p", "hello"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("auth_method = \"codex-api-key\" needs CODEX_API_KEY set")
            && err.contains("[agents.codex]"),
        "{err}"
    );
}

/// kimi-cli's only sign-in is a terminal login: a session says to run
/// `warden login --agent kimi`, which runs the configured program with the
/// method's args (not the command kimi names) in this terminal.
#[test]
fn a_terminal_login_is_named_and_run_by_warden_login() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), "kimi", "kimi-terminal-login.toml", "");
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "kimi", "-p", "hello"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("`login` (Login with Kimi account, a login in a terminal: type /login, or run `warden login --agent kimi`)"),
        "{err}"
    );

    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .arg("--config")
            .arg(&config)
            .arg("login")
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("warden login runs")
    };
    let out = run(&["--agent", "kimi"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("terminal login done"), "{stdout}\n{stderr}");
    assert!(stderr.contains("demo-agent --login"), "{stderr}");

    let out = run(&["--agent", "kimi", "--method", "nope"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "`nope` is not one of the agent's terminal logins (`login` (Login with Kimi account))"
        ),
        "{stderr}"
    );
}

/// In the TUI, `/login` runs the same terminal login (the screen
/// suspended meanwhile), then restarts the agent, whose sessions open anew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_login_runs_the_terminal_login_and_restarts_the_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), "kimi", "kimi-terminal-login.toml", "");
    let mut start = warden::launch::resolve(&warden::launch::Want {
        config: Some(&config),
        agent: Some("kimi"),
        command: &[],
        cwd: Some(dir.path()),
        mode: None,
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .expect("resolves");
    start.command.env.push(demo_state(dir.path()));
    start.options.notify = warden::app::Notify::default();
    let mut app = start.into_app();
    app.start_agent().expect("starts");
    pump_until(&mut app, "the sign-in error", |s| {
        errors(s).iter().any(|(e, _)| e.contains("type /login"))
    })
    .await;
    let failed_before = errors(app.state()).len();

    for c in "/login".chars() {
        app.handle(warden::state::Msg::Action(warden::state::Action::ch(c)));
    }
    app.handle(warden::state::Msg::Action(warden::state::Action::key(
        Code::Enter,
    )));
    let (id, command, method) = app.take_login().expect("/login asks for the login");
    assert_eq!(method, None);
    assert_eq!(command.name, "kimi");
    let code = warden::acp::login(&command, None, None)
        .await
        .expect("the login runs");
    assert_eq!(code, 0);
    app.login_done(id, Ok(code));
    assert!(
        infos(app.state())
            .iter()
            .any(|i| i.contains("the login finished: restarting the agent")),
        "{:?}",
        infos(app.state())
    );
    // The agent started again and asked again (the demo agent keeps no
    // sign-in between processes): a second error line.
    pump_until(&mut app, "the restarted agent's answer", |s| {
        errors(s).len() > failed_before
    })
    .await;
}

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

    let out = login_run(dir.path(), &config, &["--agent", "kimi", "--yes"], "", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("terminal login done"), "{stdout}\n{stderr}");
    assert!(stderr.contains("demo-agent --login"), "{stderr}");

    let out = login_run(
        dir.path(),
        &config,
        &["--agent", "kimi", "--method", "nope"],
        "",
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "`nope` is not one of the agent's terminal logins (`login` (Login with Kimi account))"
        ),
        "{stderr}"
    );
}

/// `warden login ARGS` in `dir` with `stdin` typed and `env` added.
fn login_run(
    dir: &Path,
    config: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("--config")
        .arg(config)
        .arg("login")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("warden login runs");
    let mut input = child.stdin.take().expect("stdin");
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().expect("warden login ends")
}

/// The sign-in's command line comes from the agent: `warden login` shows
/// it whole and runs it only when the user says yes (issue 32).
#[test]
fn warden_login_shows_the_command_line_and_asks_before_running_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), "kimi", "kimi-terminal-login.toml", "");
    let exe = env!("CARGO_BIN_EXE_warden");
    for (answer, runs) in [("n\n", false), ("", false), ("y\n", true)] {
        let out = login_run(dir.path(), &config, &["--agent", "kimi"], answer, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("\n  {exe} demo-agent --login\n")),
            "the whole command line: {stderr}"
        );
        assert!(stderr.contains("Run it? [y/N]"), "{stderr}");
        assert_eq!(out.status.success(), runs, "{answer:?}: {stderr}");
        assert_eq!(
            stdout.contains("terminal login done"),
            runs,
            "{answer:?}: {stdout}"
        );
        if !runs {
            assert!(stderr.contains("not run"), "{stderr}");
        }
    }
}

/// The login's program runs under the agent's sandbox: it saves its
/// sign-in in the agent's state but writes nothing else (here: the home
/// directory, which is the workspace too), and gets no loader variables
/// (issue 32).
#[test]
fn warden_login_runs_confined_without_loader_variables() {
    if !crate::sandbox::landlock() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = settings(dir.path(), "kimi", "kimi-terminal-login.toml", "");
    let out = login_run(
        dir.path(),
        &config,
        &["--agent", "kimi", "--yes"],
        "",
        &[
            ("LD_LIBRARY_PATH", "/nonexistent/lib"),
            ("GCONV_PATH", "/nonexistent/gconv"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("under the sandbox"), "{stderr}");
    assert!(stdout.contains("saved the sign-in in"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "could not write {}",
            dir.path().join(".demo-login-probe").display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("loader variables: none"), "{stdout}");
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
    let (id, command, sandbox, method) = app.take_login().expect("/login asks for the login");
    assert_eq!(method, None);
    assert_eq!(command.name, "kimi");
    assert!(sandbox.is_some(), "the login runs under the chat's sandbox");
    let code = warden::acp::login(
        &command,
        None,
        sandbox.as_ref(),
        warden::acp::Consent::Given,
    )
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

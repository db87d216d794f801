//! The kernel holds the line: the demo agent does its own IO (no ACP call
//! warden could gate) and the sandbox stops it; the same turn with the
//! sandbox off succeeds, which shows each test can fail.

use std::path::{Path, PathBuf};

use warden::acp::AgentCommand;
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::sandbox::{Profile, ProfileInput, SandboxMode, Support, WhenUnavailable};

use crate::common::*;

/// A fake home with a `.bashrc` and a key, a workspace, and a demo agent
/// whose state lives outside both.
pub(crate) struct Rig {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) work: PathBuf,
    pub(crate) state: PathBuf,
}

pub(crate) fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    let state = root.join("demo-state");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(home.join(".bashrc"), "# the user's\n").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
    Rig {
        _dir: dir,
        root,
        home,
        work,
        state,
    }
}

/// A scenario at `path` whose one turn runs a terminal appending to `outside`.
fn terminal_scenario(path: &Path, outside: &Path) -> PathBuf {
    std::fs::write(
        path,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = \"echo terminal was here >> {}\" }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n",
            outside.display()
        ),
    )
    .unwrap();
    path.to_path_buf()
}

/// A ready chat in Auto on the demo agent playing `scenario`, under `mode`.
async fn auto_with_scenario(rig: &Rig, scenario: &Path, mode: SandboxMode) -> App {
    let mut command = command(rig);
    command
        .args
        .extend(["--scenario".into(), scenario.display().to_string()]);
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(rig, mode)),
        ..ChatOptions::default()
    };
    ready(App::with_options(command, options)).await
}

/// Whether this kernel can confine; if not, say why the test is skipped.
pub(crate) fn landlock() -> bool {
    match warden::sandbox::kernel_support() {
        Support::Landlock(_) => true,
        Support::Missing(why) => {
            println!("skipped: the sandbox needs Landlock: {why}");
            false
        }
    }
}

pub(crate) fn profile(rig: &Rig, mode: SandboxMode) -> Profile {
    Profile::new(&ProfileInput {
        agent: "demo",
        command_line: vec!["warden", "demo-agent"],
        mode,
        when_unavailable: WhenUnavailable::Refuse,
        workspace: vec![rig.work.clone()],
        writable: vec![rig.state.display().to_string()],
        hidden: Vec::new(),
        warden_files: Vec::new(),
        home: Some(rig.home.clone()),
        env: Vec::new(),
    })
}

fn command(rig: &Rig) -> AgentCommand {
    AgentCommand {
        name: "demo".into(),
        program: env!("CARGO_BIN_EXE_warden").into(),
        args: vec!["demo-agent".into()],
        env: vec![
            ("HOME".into(), rig.home.display().to_string()),
            ("WARDEN_DEMO_STATE".into(), rig.state.display().to_string()),
        ],
        cwd: rig.work.clone(),
    }
}

/// One turn of `prompt` under `sandbox`; the agent's answer.
pub(crate) async fn turn(rig: &Rig, sandbox: Profile, mode: Mode, prompt: &str) -> String {
    let options = ChatOptions {
        mode,
        sandbox: Some(sandbox),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command(rig), options)).await;
    send(&mut app, prompt);
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() && agent_text(s).contains(prompt.split(' ').next().unwrap_or(prompt))
    })
    .await;
    let text = agent_text(app.state());
    app.shutdown().await;
    text
}

pub(crate) async fn both_ways(rig: &Rig, mode: Mode, prompt: &str, check: impl Fn(&Rig) -> bool) {
    let name = prompt.split(' ').next().unwrap();
    let confined = turn(rig, profile(rig, SandboxMode::WorkspaceWrite), mode, prompt).await;
    assert!(
        confined.contains(&format!("{name}: failed")),
        "confined: {confined}"
    );
    assert!(!check(rig), "nothing changed under the sandbox");
    let off = turn(rig, profile(rig, SandboxMode::Off), mode, prompt).await;
    assert!(off.contains(&format!("{name}: ok")), "sandbox off: {off}");
    assert!(
        check(rig),
        "with the sandbox off the same turn gets through"
    );
}

pub(crate) fn contains(path: &Path, what: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.contains(what))
}

#[tokio::test]
async fn an_agent_cannot_append_to_bashrc_itself() {
    if !landlock() {
        return;
    }
    let rig = rig();
    both_ways(&rig, Mode::Auto, "own-bashrc", |rig| {
        contains(&rig.home.join(".bashrc"), "demo-agent was here")
    })
    .await;
}

#[tokio::test]
async fn an_agent_cannot_read_the_ssh_key() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let confined = turn(
        &rig,
        profile(&rig, SandboxMode::WorkspaceWrite),
        Mode::Auto,
        "own-ssh",
    )
    .await;
    assert!(confined.contains("own-ssh: failed"), "{confined}");
    assert!(!confined.contains("bytes of the key"), "{confined}");
    let off = turn(&rig, profile(&rig, SandboxMode::Off), Mode::Auto, "own-ssh").await;
    assert!(off.contains("own-ssh: ok: read 12 bytes"), "{off}");
}

#[tokio::test]
async fn a_child_of_the_agent_cannot_write_outside_the_workspace() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let outside = rig.root.join("outside.txt");
    let prompt = format!("own-child {}", outside.display());
    both_ways(&rig, Mode::Auto, &prompt, |rig| {
        contains(&rig.root.join("outside.txt"), "child was here")
    })
    .await;
}

#[tokio::test]
async fn the_workspace_is_writable_but_read_only_in_plan() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let written = |rig: &Rig| contains(&rig.work.join("own.txt"), "written by the demo agent");
    let open = turn(
        &rig,
        profile(&rig, SandboxMode::WorkspaceWrite),
        Mode::Auto,
        "own-write",
    )
    .await;
    assert!(open.contains("own-write: ok"), "{open}");
    assert!(written(&rig));
    std::fs::remove_file(rig.work.join("own.txt")).unwrap();
    let plan = profile(&rig, SandboxMode::WorkspaceWrite).read_only();
    let confined = turn(&rig, plan, Mode::Plan, "own-write").await;
    assert!(confined.contains("own-write: failed"), "{confined}");
    assert!(!written(&rig));
}

#[tokio::test]
async fn wardens_own_terminals_run_under_the_chats_sandbox() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let outside = rig.root.join("outside.txt");
    let scenario = terminal_scenario(&rig.state.join("terminal.toml"), &outside);
    for (mode, code, written) in [
        (
            SandboxMode::WorkspaceWrite,
            "terminal exited: code 2",
            false,
        ),
        (SandboxMode::Off, "terminal exited: code 0", true),
    ] {
        let mut app = auto_with_scenario(&rig, &scenario, mode).await;
        send(&mut app, "go");
        pump_until(&mut app, "end of turn", |s| {
            !s.is_busy() && agent_text(s).contains("terminal exited")
        })
        .await;
        let text = agent_text(app.state());
        assert!(text.contains(code), "{mode:?}: {text}");
        assert_eq!(contains(&outside, "terminal was here"), written, "{mode:?}");
        // Blocked, and told: which path, and the setting that allows it.
        let told = infos(app.state())
            .into_iter()
            .find(|line| line.contains("the sandbox may have blocked"));
        if written {
            assert_eq!(told, None);
        } else {
            let told = told.expect("a line about the sandbox");
            assert!(
                told.contains(&outside.display().to_string()) && told.contains("sandbox.writable"),
                "{told}"
            );
        }
        app.shutdown().await;
    }
}

/// Wait for the chat to be ready on a process with `badge`.
async fn on_process(app: &mut App, badge: warden::sandbox::Badge) {
    pump_until(app, "the chat on its new process", |s| {
        s.session.sandbox.map(warden::sandbox::Badge::plain) == Some(badge)
            && matches!(
                s.session.connection,
                warden::state::Connection::Ready { .. }
            )
            && !s.is_busy()
    })
    .await;
}

/// One turn of `prompt` in a running chat: its answer's lines naming `name`.
async fn say(app: &mut App, prompt: &str, name: &str) -> Vec<String> {
    let before = agent_text(app.state()).matches(name).count();
    send(app, prompt);
    pump_until(app, "end of turn", |s| {
        !s.is_busy() && agent_text(s).matches(name).count() > before
    })
    .await;
    agent_text(app.state())
        .lines()
        .filter(|l| l.contains(name))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn entering_plan_moves_the_chat_to_a_read_only_process_and_leaving_moves_it_back() {
    use warden::sandbox::Badge;
    use warden::state::Action;
    if !landlock() {
        return;
    }
    let rig = rig();
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(&rig, SandboxMode::WorkspaceWrite)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command(&rig), options)).await;
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write a.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    let session = app.state().session.connection.clone();

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    assert_eq!(app.state().gate.mode, Mode::Plan);
    on_process(&mut app, Badge::ReadOnly).await;
    assert_eq!(
        app.state().session.connection,
        session,
        "the same session, on another process"
    );
    let lines = say(&mut app, "own-write b.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: failed"),
        "{lines:?}"
    );
    assert!(!rig.work.join("b.txt").exists());

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(2));
    assert_eq!(app.state().gate.mode, Mode::Auto);
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write c.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    assert!(rig.work.join("c.txt").exists());
    app.shutdown().await;
}

#[test]
fn the_profile_and_its_rules_come_from_the_settings_block() {
    use warden::sandbox::{Access, RealFs, grants};
    let rig = rig();
    let config = rig.root.join("warden.toml");
    std::fs::create_dir_all(rig.root.join("extra")).unwrap();
    std::fs::write(
        &config,
        format!(
            "roots = [{root:?}]\n\n[sandbox]\nhidden = [\"{work}/secret\"]\n\n\
             [agents.codex]\ncommand = \"codex-acp\"\nsandbox.writable = [{extra:?}]\n\n\
             [agents.other]\ncommand = \"other\"\nsandbox.mode = \"off\"\n",
            root = rig.state.display().to_string(),
            work = rig.work.display(),
            extra = rig.root.join("extra").display().to_string(),
        ),
    )
    .unwrap();
    let resolve = |agent: &str| {
        warden::launch::resolve(&warden::launch::Want {
            config: Some(&config),
            agent: Some(agent),
            command: &[],
            cwd: Some(&rig.work),
            mode: None,
            own_exe: env!("CARGO_BIN_EXE_warden"),
        })
        .unwrap()
        .options
        .sandbox
        .expect("the command line always sets a sandbox")
    };
    let codex = resolve("codex");
    assert_eq!(codex.mode, SandboxMode::WorkspaceWrite, "on by default");
    assert_eq!(codex.workspace, [rig.work.clone(), rig.state.clone()]);
    assert!(codex.writable.contains(&rig.root.join("extra")));
    assert!(codex.hidden.contains(&rig.work.join("secret")));
    assert!(codex.hidden.contains(&config), "the settings file in use");
    let rules = grants(&warden::sandbox::canonical(&codex), None, &RealFs);
    let has =
        |path: &Path, access: Access| rules.iter().any(|g| g.path == path && g.access == access);
    // The workspace holds a hidden path: listable, descended into.
    assert!(has(&rig.work, Access::List) && !has(&rig.work, Access::Write));
    assert!(has(&rig.state, Access::Write));
    assert!(has(&rig.root.join("extra"), Access::Write));
    assert!(
        !rules
            .iter()
            .any(|g| g.path.starts_with(rig.work.join("secret")))
    );
    assert!(!rules.iter().any(|g| g.path == config));
    assert_eq!(resolve("other").mode, SandboxMode::Off);
}

#[test]
fn warden_sandbox_prints_the_rules_and_its_self_test_holds() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["--config", "/nonexistent/warden.toml", "sandbox", "--cwd"])
            .arg(&rig.work)
            .args(extra)
            .env("HOME", &rig.home)
            .env("XDG_DATA_HOME", rig.root.join("data"))
            .env("XDG_CONFIG_HOME", rig.root.join("config"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run(&["--rules"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("mode: workspace-write"), "{out}");
    assert!(
        out.contains(&format!("{}/.ssh", rig.home.display())),
        "{out}"
    );
    assert!(
        out.contains("self-test: ok: a confined child could not write"),
        "{out}"
    );
    assert!(
        out.contains("self-test: ok: a confined child could not read"),
        "{out}"
    );
    assert!(out.contains("self-test: the sandbox holds"), "{out}");
    assert!(out.contains("rule: Write /dev/null"), "{out}");
    let (code, out) = run(&["--plan"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("mode: read-only"), "{out}");
}

#[test]
fn exec_says_on_stderr_when_the_sandbox_blocked_a_terminal() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let outside = rig.root.join("outside.txt");
    let scenario = terminal_scenario(&rig.work.join(".terminal.toml"), &outside);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([
            "--config",
            "/nonexistent/warden.toml",
            "exec",
            "--mode",
            "auto",
        ])
        .arg("--cwd")
        .arg(&rig.work)
        .args([
            "-p",
            "go",
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
        ])
        .arg(&scenario)
        .current_dir(&rig.work)
        .env("HOME", &rig.home)
        .env("XDG_DATA_HOME", rig.home.join("data"))
        .env("XDG_CONFIG_HOME", rig.home.join("config"))
        .env("XDG_STATE_HOME", rig.home.join("state"))
        .env("WARDEN_DEMO_STATE", &rig.state)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden exec runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!contains(&outside, "terminal was here"), "{stderr}");
    assert!(
        stderr.contains("note: the sandbox may have blocked")
            && stderr.contains(&outside.display().to_string()),
        "{stderr}"
    );
}

/// Whether the chat waits on the question of a move it cannot make with
/// its session.
fn asked(state: &warden::state::ChatState) -> bool {
    state.view.stuck_move.is_some()
}

#[tokio::test]
async fn an_agent_that_can_neither_load_nor_resume_asks_fresh_session_or_stay() {
    use warden::sandbox::Badge;
    use warden::state::Action;
    if !landlock() {
        return;
    }
    let rig = rig();
    let scenario = rig.state.join("no-sessions.toml");
    std::fs::write(&scenario, "load_session = false\nresume_session = false\n").unwrap();
    let mut app = auto_with_scenario(&rig, &scenario, SandboxMode::WorkspaceWrite).await;
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-write a.txt", "own-write").await;
    assert!(lines.last().unwrap().contains("own-write: ok"), "{lines:?}");
    let first = app.state().session.connection.clone();

    // Entering Plan: the chat cannot take its session along, so it asks.
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    pump_until(&mut app, "the question", asked).await;
    let popup = app.state().composer_popup().expect("the question is drawn");
    assert!(
        popup.title.contains("f fresh session · s stay"),
        "{popup:?}"
    );
    // Typing goes nowhere until it is answered; staying keeps the process.
    key(&mut app, Action::ch('x'));
    assert!(asked(app.state()));
    key(&mut app, Action::ch('s'));
    assert!(!asked(app.state()));
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.contains("stays on its agent process")),
        "{:?}",
        infos(app.state())
    );
    let lines = say(&mut app, "own-write b.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: ok"),
        "staying put, the kernel still lets it write: {lines:?}"
    );
    assert_eq!(
        app.state().session.sandbox.map(Badge::plain),
        Some(Badge::Confined)
    );
    assert_eq!(app.state().session.connection, first, "the same session");

    // Leaving Plan and entering it again asks again; a fresh session moves.
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(1));
    assert_eq!(app.state().gate.mode, Mode::Default);
    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    pump_until(&mut app, "the question again", asked).await;
    key(&mut app, Action::ch('f'));
    on_process(&mut app, Badge::ReadOnly).await;
    assert_ne!(
        app.state().session.connection,
        first,
        "a fresh session on the read-only process"
    );
    assert!(
        agent_text(app.state()).contains("own-write: ok"),
        "the transcript stays on screen"
    );
    assert!(
        infos(app.state())
            .iter()
            .any(|l| l.contains("does not remember")),
        "{:?}",
        infos(app.state())
    );
    let lines = say(&mut app, "own-write c.txt", "own-write").await;
    assert!(
        lines.last().unwrap().contains("own-write: failed"),
        "{lines:?}"
    );
    assert!(!rig.work.join("c.txt").exists());
    app.shutdown().await;
}

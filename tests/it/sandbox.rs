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
pub(crate) fn terminal_scenario(path: &Path, outside: &Path) -> PathBuf {
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
pub(crate) async fn auto_with_scenario(rig: &Rig, scenario: &Path, mode: SandboxMode) -> App {
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
        env_pass: Vec::new(),
        cache: Some(rig.root.join("agent-cache")),
    })
}

pub(crate) fn command(rig: &Rig) -> AgentCommand {
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

/// `warden exec --mode auto` (and `args`) of the demo agent playing
/// `scenario` in the rig's workspace, with no settings file and the rig's
/// HOME and data folders.
pub(crate) fn exec_scenario(rig: &Rig, scenario: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args([
            "--config",
            "/nonexistent/warden.toml",
            "exec",
            "--mode",
            "auto",
        ])
        .args(args)
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
        .arg(scenario)
        .current_dir(&rig.work)
        .env("HOME", &rig.home)
        .env("XDG_DATA_HOME", rig.home.join("data"))
        .env("XDG_CONFIG_HOME", rig.home.join("config"))
        .env("XDG_STATE_HOME", rig.home.join("state"))
        .env("WARDEN_DEMO_STATE", &rig.state)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden exec runs")
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

/// Issue 33 item 8: a write of the demo agent that the sandbox blocks is
/// told, as for real agents (the demo reports its own IO in a tool call);
/// the line says what the sandbox does with the path and offers no setting,
/// as the report is the agent's word.
#[tokio::test]
async fn a_blocked_write_of_the_demo_agent_is_told_without_a_setting() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let told_after = |sandbox: Profile, prompt: &'static str| {
        let rig = &rig;
        async move {
            let options = ChatOptions {
                mode: Mode::Auto,
                sandbox: Some(sandbox),
                ..ChatOptions::default()
            };
            let mut app = ready(App::with_options(command(rig), options)).await;
            send(&mut app, prompt);
            pump_until(&mut app, "end of turn", |s| {
                !s.is_busy() && agent_text(s).contains(prompt)
            })
            .await;
            let told: Vec<String> = infos(app.state())
                .into_iter()
                .filter(|line| warden::sandbox::is_told(line))
                .collect();
            app.shutdown().await;
            told
        }
    };
    let told = told_after(profile(&rig, SandboxMode::WorkspaceWrite), "own-bashrc").await;
    assert_eq!(
        told,
        vec![format!(
            "the agent reports a denial of {}: warden's sandbox keeps it read-only for the \
             agent: it is outside the workspace",
            rig.home.join(".bashrc").display()
        )]
    );
    let plan = profile(&rig, SandboxMode::WorkspaceWrite).read_only();
    let told = told_after(plan, "own-write").await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].starts_with(&format!(
            "the agent reports a denial of {}",
            rig.work.join("own.txt").display()
        )) && told[0].contains("keeps the workspace read-only"),
        "{told:?}"
    );
    // What the sandbox lets through is not told.
    let open = told_after(profile(&rig, SandboxMode::WorkspaceWrite), "own-write").await;
    assert_eq!(open, Vec::<String>::new());
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
pub(crate) async fn on_process(app: &mut App, badge: warden::sandbox::Badge) {
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
pub(crate) async fn say(app: &mut App, prompt: &str, name: &str) -> Vec<String> {
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
            .env("GITHUB_TOKEN", "ghp_not_for_agents")
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
    // What passes of warden's environment, and what it keeps back.
    let line = |start: &str| {
        out.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_default()
            .to_string()
    };
    let passed = line("environment passed");
    assert!(passed.contains("PATH, HOME"), "{out}");
    assert!(!passed.contains("GITHUB"), "{out}");
    assert!(
        line("environment withheld").contains("GITHUB_TOKEN"),
        "{out}"
    );
    assert!(
        line("own cache: XDG_CACHE_HOME=").contains("agents"),
        "{out}"
    );
    assert!(
        line("hidden").contains(&format!("{}/.npmrc", rig.home.display())),
        "{out}"
    );
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
    let out = exec_scenario(&rig, &scenario, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!contains(&outside, "terminal was here"), "{stderr}");
    assert!(
        stderr.contains("note: the sandbox may have blocked")
            && stderr.contains(&outside.display().to_string()),
        "{stderr}"
    );
}

/// `warden exec` of the demo agent in `rig` with warden's environment
/// holding a token and a multiplexer's socket: its stdout and stderr.
fn exec_with_secrets(rig: &Rig, args: &[&std::ffi::OsStr]) -> (String, String) {
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
        .args(args)
        .current_dir(&rig.work)
        .env("HOME", &rig.home)
        .env("XDG_DATA_HOME", rig.home.join("data"))
        .env("XDG_CONFIG_HOME", rig.home.join("config"))
        .env("XDG_STATE_HOME", rig.root.join("state"))
        .env("WARDEN_DEMO_STATE", &rig.state)
        .env("GITHUB_TOKEN", "ghp_not_for_agents")
        .env("TMUX", "/tmp/tmux-0/default,1,0")
        .env("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1")
        .env("LD_PRELOAD", "")
        .env("LANG", "C.UTF-8")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden exec runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_confined_agent_cannot_write_shared_caches_read_npmrc_or_see_wardens_secrets() {
    use std::ffi::OsStr;
    if !landlock() {
        return;
    }
    let rig = rig();
    std::fs::create_dir_all(rig.home.join(".cache")).unwrap();
    std::fs::create_dir_all(rig.home.join(".npm")).unwrap();
    std::fs::write(rig.home.join(".npmrc"), "//registry/:_authToken=npm_x\n").unwrap();
    let demo = |prompt: &str| {
        exec_with_secrets(
            &rig,
            &[
                OsStr::new("-p"),
                OsStr::new(prompt),
                OsStr::new("--"),
                OsStr::new(env!("CARGO_BIN_EXE_warden")),
                OsStr::new("demo-agent"),
            ],
        )
        .0
    };
    let env = demo("own-env");
    assert!(env.contains("own-env: ok: env: ["), "{env}");
    for withheld in ["GITHUB_TOKEN", "TMUX", "SSH_AUTH_SOCK", "LD_PRELOAD"] {
        assert!(!env.contains(withheld), "{withheld}: {env}");
    }
    for passed in [
        "PATH",
        "HOME",
        "LANG",
        "WARDEN_DEMO_STATE",
        "XDG_CACHE_HOME",
    ] {
        assert!(env.contains(passed), "{passed}: {env}");
    }
    for shared in [".cache/x", ".npm/_npx"] {
        let path = rig.home.join(shared);
        let said = demo(&format!("own-child {}", path.display()));
        assert!(said.contains("own-child: failed"), "{shared}: {said}");
        assert!(!path.exists(), "{shared}");
    }
    let said = demo(&format!("own-read {}", rig.home.join(".npmrc").display()));
    assert!(said.contains("own-read: failed"), "{said}");
    // Its own cache, under warden's state directory, is writable.
    let own: Vec<PathBuf> = std::fs::read_dir(rig.root.join("state/warden/agents"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(own.len(), 1, "{own:?}");
    let said = demo(&format!("own-child {}/cache/x", own[0].display()));
    assert!(said.contains("own-child: ok"), "{said}");

    // warden's own terminals for the agent get the agent's environment.
    let listed = rig.work.join("term-env.txt");
    let scenario = rig.work.join(".env.toml");
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = \"env > {}\" }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n",
            listed.display()
        ),
    )
    .unwrap();
    exec_with_secrets(
        &rig,
        &[
            OsStr::new("-p"),
            OsStr::new("go"),
            OsStr::new("--"),
            OsStr::new(env!("CARGO_BIN_EXE_warden")),
            OsStr::new("demo-agent"),
            OsStr::new("--scenario"),
            scenario.as_os_str(),
        ],
    );
    let seen = std::fs::read_to_string(&listed).expect("the terminal ran");
    assert!(seen.contains("PATH="), "{seen}");
    for withheld in ["GITHUB_TOKEN", "TMUX=", "SSH_AUTH_SOCK"] {
        assert!(!seen.contains(withheld), "{withheld}: {seen}");
    }
}

#[tokio::test]
async fn the_agents_config_that_runs_programs_is_put_back_when_it_exits() {
    if !landlock() {
        return;
    }
    let rig = rig();
    // Its config sits in its own (writable) state, as ~/.codex/config.toml does.
    let config = rig.state.join("config.toml");
    std::fs::write(&config, "model = \"m\"\n").unwrap();
    let mut profile = profile(&rig, SandboxMode::WorkspaceWrite);
    profile.guarded = vec![config.clone()];
    let said = turn(
        &rig,
        profile,
        Mode::Auto,
        &format!("own-child {}", config.display()),
    )
    .await;
    assert!(
        said.contains("own-child: ok"),
        "the agent could write it: {said}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read_to_string(&config).unwrap() != "model = \"m\"\n" {
        assert!(
            std::time::Instant::now() < deadline,
            "not put back: {}",
            std::fs::read_to_string(&config).unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let kept: Vec<String> = std::fs::read_dir(&rig.state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("config.toml.warden-rejected-"))
        .collect();
    assert_eq!(kept.len(), 1, "the agent's version is kept: {kept:?}");
}

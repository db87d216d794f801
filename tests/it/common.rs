//! Helpers shared by the end-to-end tests: the demo agent as a subprocess,
//! pumping agent events into the app, reading the transcript, `warden exec`.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;
use warden::state::Code;

use warden::acp::AgentCommand;
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Action, ChatState, Connection, EntryKind, Msg};

/// Generous guard so a bug cannot hang CI; never a speed assertion.
pub const GUARD: Duration = Duration::from_secs(30);

pub fn demo_state(dir: &Path) -> (String, String) {
    (
        "WARDEN_DEMO_STATE".into(),
        dir.join(".demo-state").display().to_string(),
    )
}

pub fn demo_command(cwd: &Path, extra: &[&str]) -> AgentCommand {
    let mut args = vec!["demo-agent".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    AgentCommand {
        name: "demo".into(),
        program: env!("CARGO_BIN_EXE_warden").into(),
        args,
        // The demo agent records its sessions: keep them out of the real data dir.
        env: vec![demo_state(cwd)],
        cwd: cwd.to_path_buf(),
    }
}

/// Feed agent events to the app until `done` holds; panics after [`GUARD`].
pub async fn pump_until(app: &mut App, what: &str, done: impl Fn(&ChatState) -> bool) {
    let result = tokio::time::timeout(GUARD, async {
        while !done(app.state()) {
            match app.next_agent_event().await {
                Some(event) => app.on_agent_event(event),
                None => panic!("agent event channel closed while waiting for {what}"),
            }
        }
    })
    .await;
    if result.is_err() {
        panic!(
            "timed out waiting for {what}; transcript: {:#?}",
            app.state().session.transcript.entries()
        );
    }
}

/// Feed agent events until `done` holds for the whole workspace; panics
/// after [`GUARD`].
pub async fn pump_ws(app: &mut App, what: &str, done: impl Fn(&warden::state::Workspace) -> bool) {
    let result = tokio::time::timeout(GUARD, async {
        while !done(&app.ws) {
            match app.next_agent_event().await {
                Some(event) => app.on_agent_event(event),
                None => panic!("agent event channel closed while waiting for {what}"),
            }
        }
    })
    .await;
    assert!(result.is_ok(), "timed out waiting for {what}");
}

/// The state of chat `n` (1-based) of the workspace.
pub fn chat(app: &App, n: usize) -> &ChatState {
    &app.ws.chats[n - 1].state
}

/// Start the app's agent and wait for its session.
pub async fn ready(mut app: App) -> App {
    app.start_agent().expect("the agent spawns");
    pump_until(&mut app, "session", |s| {
        matches!(s.session.connection, Connection::Ready { .. })
    })
    .await;
    app
}

pub async fn started(cwd: &Path, extra: &[&str]) -> App {
    ready(App::new(demo_command(cwd, extra))).await
}

pub fn send(app: &mut App, text: &str) {
    app.handle(Msg::Action(Action::Paste(text.into())));
    app.handle(Msg::Action(Action::key(Code::Enter)));
}

pub fn agent_text(state: &ChatState) -> String {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Agent(text) => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn infos(state: &ChatState) -> Vec<String> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Info(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

pub fn errors(state: &ChatState) -> Vec<(String, Vec<String>)> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Error { message, detail } => Some((message.clone(), detail.clone())),
            _ => None,
        })
        .collect()
}

pub async fn started_with(cwd: &Path, options: ChatOptions) -> App {
    ready(App::with_options(demo_command(cwd, &[]), options)).await
}

pub fn logged_options(dir: &Path, mode: Mode) -> ChatOptions {
    ChatOptions {
        mode,
        decision_log: Some(dir.join("decisions.jsonl")),
        ..ChatOptions::default()
    }
}

pub fn decisions(state: &ChatState) -> Vec<(bool, String)> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Decision { allowed, text } => Some((*allowed, text.clone())),
            _ => None,
        })
        .collect()
}

pub fn key(app: &mut App, action: Action) {
    app.handle(Msg::Action(action));
}

/// What `warden exec` did: exit code, stdout, stderr, the decision log.
pub type ExecRun = (
    Option<i32>,
    String,
    String,
    Vec<warden::decision_log::DecisionRecord>,
);

/// `warden exec` with a throwaway data dir and no settings file.
pub fn exec(args: &[&str]) -> ExecRun {
    let dir = tempfile::tempdir().expect("tempdir");
    exec_in(dir.path(), Path::new("/nonexistent/warden.toml"), args)
}

/// A settings file with the sandbox off, for a run whose cwd is also its
/// HOME: with the sandbox on, nothing new could be made directly in a
/// workspace that holds hidden paths (`~/.ssh`, warden's own data).
pub fn sandbox_off(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("sandbox-off.toml");
    std::fs::write(&path, SANDBOX_OFF).expect("settings");
    path
}

/// The `[sandbox]` table that turns it off.
pub const SANDBOX_OFF: &str = "\n[sandbox]\nmode = \"off\"\n";

/// `warden exec` run in `dir` (also its HOME, data under `dir/data`) with
/// the settings file `config`.
pub fn exec_in(dir: &Path, config: &Path, args: &[&str]) -> ExecRun {
    exec_in_env(dir, config, args, &[])
}

/// [`exec_in`] with `env` added to warden's environment (and none of the
/// runner's own proxy variables, which warden would go out through).
pub fn exec_in_env(dir: &Path, config: &Path, args: &[&str], env: &[(&str, &str)]) -> ExecRun {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    for var in ["http_proxy", "https_proxy", "all_proxy", "no_proxy"] {
        command.env_remove(var).env_remove(var.to_uppercase());
    }
    let out = command
        .envs(env.iter().copied())
        .arg("--config")
        .arg(config)
        .arg("exec")
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden exec runs");
    let log_path = dir.join("data/warden/decisions.jsonl");
    let log = if log_path.exists() {
        warden::decision_log::read(&log_path).expect("log")
    } else {
        Vec::new()
    };
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        log,
    )
}

/// The path of a scenario file in `assets/scenarios`.
pub fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
        .display()
        .to_string()
}

/// A chat on the demo agent playing the scenario file `name`, session open.
pub async fn started_scenario(dir: &Path, name: &str, options: ChatOptions) -> App {
    let scenario = scenario(name);
    ready(App::with_options(
        demo_command(dir, &["--scenario", &scenario]),
        options,
    ))
    .await
}

/// The whole screen as text, one line per row (trailing blanks trimmed).
pub fn screen(state: &warden::state::ChatState, width: u16, height: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("terminal");
    let mut view = warden::ui::View::default();
    terminal
        .draw(|frame| warden::ui::draw(frame, state, &mut view))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            let row: String = (0..area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

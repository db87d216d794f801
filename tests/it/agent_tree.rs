//! Every process an agent started goes with it (issue 32): a daemon that
//! left the agent's session (`setsid`, its parent gone) and keeps writing
//! the workspace is ended when the chat moves to a read-only process in
//! Plan, and when warden quits. Before, it went on writing.

use std::path::Path;
use std::time::Duration;

use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::sandbox::{Badge, SandboxMode};
use warden::state::Action;

use crate::common::*;
use crate::sandbox::{command, landlock, on_process, profile, rig, say};

/// The daemon's pid, once it wrote it.
async fn daemon_pid(log: &Path) -> i32 {
    let pid_file = format!("{}.pid", log.display());
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the daemon did not start");
}

/// How long `log` is, after a pause longer than the daemon's period.
async fn settled_len(log: &Path) -> u64 {
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
}

/// Start a chat in Auto whose agent starts a daemon writing `daemon.log`.
async fn chat_with_daemon(rig: &crate::sandbox::Rig) -> (App, i32) {
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(rig, SandboxMode::WorkspaceWrite)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command(rig), options)).await;
    on_process(&mut app, Badge::Confined).await;
    let lines = say(&mut app, "own-daemon", "own-daemon").await;
    assert!(
        lines.last().unwrap().contains("own-daemon: ok"),
        "{lines:?}"
    );
    let pid = daemon_pid(&rig.work.join("daemon.log")).await;
    assert!(alive(pid), "the daemon runs");
    (app, pid)
}

#[tokio::test]
async fn a_daemon_the_agent_left_running_ends_when_the_chat_moves_to_plan() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let log = rig.work.join("daemon.log");
    let (mut app, pid) = chat_with_daemon(&rig).await;
    let before = settled_len(&log).await;
    assert!(settled_len(&log).await > before, "the daemon writes");

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    assert_eq!(app.state().gate.mode, Mode::Plan);
    on_process(&mut app, Badge::ReadOnly).await;
    // The old process ends in the background: give it its grace.
    let mut gone = false;
    for _ in 0..300 {
        if !alive(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let at_move = settled_len(&log).await;
    assert!(gone, "the daemon {pid} still runs after the move to Plan");
    assert_eq!(
        settled_len(&log).await,
        at_move,
        "nothing writes the workspace in Plan"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_daemon_the_agent_left_running_ends_when_warden_quits() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let log = rig.work.join("daemon.log");
    let (mut app, pid) = chat_with_daemon(&rig).await;
    app.shutdown().await;
    assert!(!alive(pid), "the daemon {pid} outlived warden's shutdown");
    let after = settled_len(&log).await;
    assert_eq!(settled_len(&log).await, after, "nothing writes any more");
}

/// The same through a terminal warden ran for the agent: its command's
/// daemon is ended with the terminal, when the chat moves to Plan.
#[tokio::test]
async fn a_daemon_started_in_an_agents_terminal_ends_when_the_chat_moves_to_plan() {
    if !landlock() {
        return;
    }
    let rig = rig();
    let log = rig.work.join("term.log");
    let daemon = format!(
        "setsid sh -c 'echo $$ > {log}.pid; while :; do echo t >> {log}; sleep 0.05; done' </dev/null >/dev/null 2>&1 &",
        log = log.display()
    );
    let scenario = rig.state.join("daemon.toml");
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {daemon:?}, release = false }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n"
        ),
    )
    .unwrap();
    let mut command = command(&rig);
    command
        .args
        .extend(["--scenario".into(), scenario.display().to_string()]);
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(&rig, SandboxMode::WorkspaceWrite)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command, options)).await;
    send(&mut app, "go");
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() && agent_text(s).contains("terminal exited")
    })
    .await;
    let pid = daemon_pid(&log).await;
    assert!(alive(pid), "the daemon runs");

    key(&mut app, Action::OpenModeMenu);
    key(&mut app, Action::PickModeItem(0));
    on_process(&mut app, Badge::ReadOnly).await;
    let mut gone = false;
    for _ in 0..300 {
        if !alive(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        gone,
        "the terminal's daemon {pid} still runs after the move to Plan"
    );
    app.shutdown().await;
}

/// No loader variable reaches an agent process, from its block's `env` or
/// from warden's own environment (issue 32).
#[tokio::test]
async fn an_agent_gets_no_loader_variables() {
    let rig = rig();
    let mut command = command(&rig);
    command
        .env
        .push(("LD_LIBRARY_PATH".into(), "/nonexistent/lib".into()));
    command
        .env
        .push(("GCONV_PATH".into(), "/nonexistent/gconv".into()));
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(&rig, SandboxMode::Off)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command, options)).await;
    let lines = say(&mut app, "own-loader", "own-loader").await;
    assert!(
        lines
            .last()
            .unwrap()
            .contains("own-loader: ok: loader variables: []"),
        "{lines:?}"
    );
    app.shutdown().await;
}

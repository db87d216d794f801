//! Faults: an agent that writes garbage, closes its output, never answers a
//! cancelled prompt or never starts; a command that leaves its process
//! group; warden stopped by a signal. Nothing is lost, nothing hangs, no
//! process warden started outlives it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use warden::state::Code;

use crate::common::*;
use warden::state::{Action, Connection};

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scenarios/faults.toml");

fn error_lines(app: &warden::app::App) -> String {
    errors(app.state())
        .into_iter()
        .map(|(message, _)| message)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn lines_that_are_not_json_rpc_are_skipped_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &["--scenario", SCENARIO]).await;
    send(&mut app, "garble");
    pump_until(&mut app, "the turn to end", |s| {
        s.session.turn.is_none() && s.session.last_stop.is_some()
    })
    .await;
    let text = agent_text(app.state());
    assert!(text.contains("before the garbage."), "{text}");
    assert!(text.contains("after the garbage."), "{text}");
    let errors = error_lines(&app);
    assert!(errors.contains("not valid UTF-8"), "{errors}");
    assert!(errors.contains("not JSON-RPC"), "{errors}");
    assert!(matches!(
        app.state().session.connection,
        Connection::Ready { .. }
    ));
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_closes_its_output_is_ended_and_r_restarts_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &["--scenario", SCENARIO]).await;
    let pid = app.agent_pid().expect("a pid");
    send(&mut app, "close");
    pump_until(&mut app, "the agent to be down", |s| {
        s.session.connection == Connection::Down
    })
    .await;
    assert!(
        error_lines(&app).contains("closed its output"),
        "{}",
        error_lines(&app)
    );
    assert!(!group_alive(pid), "the agent's group was ended");
    key(&mut app, Action::ch('r'));
    pump_until(&mut app, "a new session", |s| {
        matches!(s.session.connection, Connection::Ready { .. })
    })
    .await;
    send(&mut app, "hello");
    pump_until(&mut app, "the answer", |s| {
        s.session.turn.is_none() && agent_text(s).contains("hello")
    })
    .await;
    app.shutdown().await;
}

#[tokio::test]
async fn esc_on_a_prompt_never_answered_ends_the_turn_after_a_grace_and_ctrl_r_restarts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &["--scenario", SCENARIO]).await;
    let pid = app.agent_pid().expect("a pid");
    send(&mut app, "hang");
    pump_until(&mut app, "the agent to start working", |s| {
        agent_text(s).contains("working forever")
    })
    .await;
    key(&mut app, Action::key(Code::Esc));
    assert!(
        app.state().session.turn.is_some(),
        "still waiting for the agent"
    );
    pump_until(&mut app, "warden to end the turn", |s| {
        s.session.turn.is_none()
    })
    .await;
    let errors = error_lines(&app);
    assert!(
        errors.contains("did not end the cancelled turn"),
        "{errors}"
    );
    // The agent still runs; Ctrl+R replaces it.
    key(&mut app, Action::Restart);
    pump_until(&mut app, "a new session", |s| {
        matches!(s.session.connection, Connection::Ready { .. })
    })
    .await;
    assert_ne!(app.agent_pid(), Some(pid), "a new agent process");
    let deadline = Instant::now() + GUARD;
    while group_alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!group_alive(pid), "the stuck agent was ended");
    send(&mut app, "hello again");
    pump_until(&mut app, "the answer", |s| {
        s.session.turn.is_none() && agent_text(s).contains("hello again")
    })
    .await;
    app.shutdown().await;
}

/// A process group with a live (not zombie) member.
fn group_alive(pgid: u32) -> bool {
    let out = Command::new("ps")
        .args(["-e", "-o", "pgid=,stat="])
        .output()
        .expect("ps runs");
    String::from_utf8_lossy(&out.stdout).lines().any(|line| {
        let mut cols = line.split_whitespace();
        cols.next() == Some(pgid.to_string().as_str())
            && !cols.next().unwrap_or("Z").starts_with('Z')
    })
}

fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + GUARD;
    while i32::try_from(pid).is_ok_and(alive) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn demo(extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--".to_string(),
        env!("CARGO_BIN_EXE_warden").to_string(),
        "demo-agent".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn exec_times_out_on_an_agent_that_never_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _out, err, _log) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &["--start-timeout", "1", "-p", "hi", "--", "sleep", "600"],
    );
    assert_eq!(code, Some(124), "{err}");
    assert!(err.contains("did not start a session within 1 s"), "{err}");
}

#[test]
fn exec_times_out_on_a_turn_that_does_not_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err, _log) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &["--timeout", "1", "-p", "slow"],
    );
    assert_eq!(code, Some(124), "{err}");
    assert!(err.contains("did not end within 1 s"), "{err}");
    assert!(!out.is_empty(), "what streamed before is kept");
}

#[test]
fn a_command_that_leaves_its_process_group_does_not_outlive_warden() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["--mode", "auto", "-p", "escape"];
    let agent = demo(&["--scenario", SCENARIO]);
    args.extend(agent.iter().map(String::as_str));
    // The escapee writes its pid directly in the cwd, which is HOME here.
    let settings = sandbox_off(dir.path());
    let (code, out, err, _log) = exec_in(dir.path(), &settings, &args);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("left a process behind"), "{out}");
    let pid: u32 = std::fs::read_to_string(dir.path().join("escaped.pid"))
        .expect("the escaped process wrote its pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(wait_gone(pid), "the setsid child {pid} outlived warden");
}

/// Every process below `root`, from `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(parent) {
                all.push(pid);
                frontier.push(pid);
            }
        }
    }
    all
}

#[test]
fn sigterm_stops_exec_and_ends_every_process_it_started() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["--config", "/nonexistent/warden.toml", "exec", "-p", "slow"])
            .current_dir(dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("warden exec runs");
        // Wait for the turn to stream.
        let mut stdout = child.stdout.take().expect("stdout");
        let mut first = [0u8; 1];
        std::io::Read::read_exact(&mut stdout, &mut first).expect("some output");
        let below = descendants(child.id());
        assert!(!below.is_empty(), "the agent runs below warden");
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(child.id() as libc::pid_t, signal);
        }
        let status = child.wait().expect("warden exits");
        assert_eq!(status.code(), Some(130), "signal {signal}: {status:?}");
        for pid in below {
            assert!(
                wait_gone(pid),
                "signal {signal}: process {pid} outlived warden"
            );
        }
    }
}

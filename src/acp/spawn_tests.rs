//! `spawn` hands its handle back at once and starts the agent off the loop:
//! a start that fails is an event, a start given up never leaves a process.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use crate::test_support::mkfifo;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt as _;
use tokio::sync::mpsc;

use super::process::{Ender, Launch};
use super::*;

/// Generous guard so a bug cannot hang the tests; never a speed assertion.
const GUARD: Duration = Duration::from_secs(30);

fn command(cwd: &Path, program: &str, args: &[&str]) -> AgentCommand {
    AgentCommand {
        name: "agent".into(),
        program: program.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Vec::new(),
        cwd: cwd.to_path_buf(),
    }
}

/// A sandbox that holds the preparation on `fifo` (`Profile::hold`): it
/// waits until someone opens the FIFO to write, as a slow disk would.
fn blocking_profile(workspace: &Path, fifo: &Path) -> crate::sandbox::Profile {
    crate::sandbox::Profile {
        agent: "agent".into(),
        mode: crate::sandbox::SandboxMode::WorkspaceWrite,
        when_unavailable: crate::sandbox::WhenUnavailable::RunUnconfined,
        workspace: vec![workspace.to_path_buf()],
        hold: Some(fifo.to_path_buf()),
        network: crate::net::NetworkMode::Open,
        ..crate::sandbox::Profile::default()
    }
}

/// Opens `fifo` to write (and closes it) as soon as a reader waits on it,
/// until `stop`: what unblocks the preparation.
fn release(fifo: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            let writer = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo);
            if writer.is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    })
}

fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test]
async fn a_command_that_does_not_exist_comes_back_as_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let (events, mut incoming) = mpsc::unbounded_channel();
    let (asks, _asked) = mpsc::unbounded_channel();
    let handle = spawn(
        &command(dir.path(), "/definitely/not/an/agent", &[]),
        ClientCaps::default(),
        None,
        events.into(),
        asks,
    );
    // Asked before the start is over: queued, then dropped with the connection.
    handle.open_session(1, SessionOpen::default());
    let event = tokio::time::timeout(GUARD, incoming.recv())
        .await
        .expect("an event")
        .expect("the sender lives");
    match event {
        AgentEvent::ConnectFailed(message) => assert!(
            message.contains("agent command not found: `/definitely/not/an/agent`"),
            "{message}"
        ),
        other => panic!("expected ConnectFailed, got {other:?}"),
    }
    assert_eq!(handle.pid(), None);
    tokio::time::timeout(GUARD, handle.shutdown(Duration::ZERO))
        .await
        .expect("a failed start is over: shutdown does not wait");
}

#[tokio::test]
async fn the_handle_comes_back_while_the_agent_is_prepared_and_the_pid_once_it_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("guarded");
    mkfifo(&fifo);
    let (events, _incoming) = mpsc::unbounded_channel();
    let (asks, _asked) = mpsc::unbounded_channel();
    let profile = blocking_profile(dir.path(), &fifo);
    // Returns although preparing it blocks on the FIFO, nobody writing.
    let handle = spawn(
        &command(dir.path(), "sh", &["-c", "exec sleep 300"]),
        ClientCaps::default(),
        Some(&profile),
        events.into(),
        asks,
    );
    assert_eq!(handle.pid(), None, "not up while it is prepared");
    let stop = Arc::new(AtomicBool::new(false));
    let released = release(fifo.clone(), stop.clone());
    let pid = tokio::time::timeout(GUARD, async {
        loop {
            if let Some(pid) = handle.pid() {
                break pid;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("up once the FIFO is written");
    assert!(released.join().unwrap(), "the preparation read the FIFO");
    let pid = libc::pid_t::try_from(pid).unwrap();
    assert!(alive(pid));
    tokio::time::timeout(GUARD, handle.shutdown(Duration::ZERO))
        .await
        .expect("shut down");
    assert!(!alive(pid), "ended with its handle");
}

#[tokio::test]
async fn a_start_given_up_while_it_is_prepared_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("guarded");
    mkfifo(&fifo);
    let started = dir.path().join("started");
    let (events, _incoming) = mpsc::unbounded_channel();
    let (asks, _asked) = mpsc::unbounded_channel();
    let profile = blocking_profile(dir.path(), &fifo);
    let script = format!("echo $$ > {}; exec sleep 300", started.display());
    let handle = spawn(
        &command(dir.path(), "sh", &["-c", &script]),
        ClientCaps::default(),
        Some(&profile),
        events.into(),
        asks,
    );
    // Quitting begins while it is prepared: the first poll gives it up.
    let mut shutdown = Box::pin(handle.shutdown(Duration::ZERO));
    assert!(
        (&mut shutdown).now_or_never().is_none(),
        "waits for the start"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let released = release(fifo, stop.clone());
    tokio::time::timeout(GUARD, shutdown)
        .await
        .expect("over once the preparation is");
    stop.store(true, Ordering::SeqCst);
    let _ = released.join();
    assert!(!started.exists(), "the agent was never forked");
}

/// A start given up after the last look before the fork: `up` says so, and
/// the caller (`AgentProcess::spawn`) kills the group then.
#[tokio::test]
async fn a_start_given_up_as_it_forks_is_told_to_end() {
    let launch = Launch::new();
    let mut settle = Box::pin({
        let launch = launch.clone();
        async move { launch.settle().await.is_some() }
    });
    assert!((&mut settle).now_or_never().is_none(), "given up, waiting");
    let (_exited_tx, exited) = tokio::sync::watch::channel(false);
    assert!(!launch.up(Ender::new(Some(1), exited)), "no longer wanted");
    assert_eq!(launch.pid(), Some(1), "known, so that shutdown ends it");
    assert!(settle.await, "shutdown gets its ender");

    // One up before anyone gave it up is wanted.
    let launch = Launch::new();
    let (_exited_tx, exited) = tokio::sync::watch::channel(false);
    assert!(launch.up(Ender::new(Some(2), exited)));
}

/// A start that ended without coming up (a failure, a panic, the task
/// dropped) never keeps `settle` waiting.
#[tokio::test]
async fn a_start_over_without_a_process_settles() {
    let launch = Launch::new();
    drop(launch.over_on_drop());
    assert!(launch.settle().await.is_none());
    assert_eq!(launch.pid(), None);
}

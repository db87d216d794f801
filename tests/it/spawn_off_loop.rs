//! Agents are started off the loop (issue 34): an agent whose preparation
//! blocks (held on a FIFO nobody writes yet: `Profile::hold`, as a slow
//! disk would hold it) holds up neither the keys nor the other chats; an agent that
//! cannot start is an error line in its chat; quitting meanwhile leaves no
//! process of it.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt as _;
use warden::acp::AgentCommand;
use warden::app::{AgentChoice, App, ChatOptions};
use warden::sandbox::{SandboxMode, WhenUnavailable};
use warden::state::{Action, Code, Connection};

use crate::common::*;
use crate::sandbox::{Rig, command, profile, rig};

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// Opens `fifo` to write (and closes it) as soon as a reader waits on it,
/// until `stop`: what lets the preparation go on. True once it did.
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

/// Releases `fifo` after [`GUARD`] unless the test did by then, so that a
/// loop that waits on the preparation fails the test instead of hanging it;
/// says whether it had to.
fn failsafe(fifo: PathBuf) -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let (done, fired) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (stop, said) = (done.clone(), fired.clone());
    std::thread::spawn(move || {
        let until = std::time::Instant::now() + GUARD;
        while std::time::Instant::now() < until {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        said.store(true, Ordering::SeqCst);
        let _ = release(fifo, stop).join();
    });
    (done, fired)
}

/// A second agent, `other`, run as `agent` under a sandbox whose
/// preparation is held on `fifo`.
fn blocked_choice(rig: &Rig, agent: AgentCommand, fifo: &Path) -> AgentChoice {
    let mut sandbox = profile(rig, SandboxMode::WorkspaceWrite);
    sandbox.when_unavailable = WhenUnavailable::RunUnconfined;
    sandbox.hold = Some(fifo.to_path_buf());
    AgentChoice {
        command: AgentCommand {
            name: "other".into(),
            ..agent
        },
        options: ChatOptions {
            sandbox: Some(sandbox),
            ..ChatOptions::default()
        },
    }
}

/// Ctrl-N, the second agent, Enter: its chat opens on screen.
fn open_other(app: &mut App) {
    key(app, Action::NewChat);
    key(app, Action::key(Code::Down));
    key(app, Action::key(Code::Enter));
    assert_eq!(app.ws.chats.len(), 2);
    assert_eq!(app.ws.active, 1);
}

#[tokio::test]
async fn an_agent_whose_preparation_blocks_holds_up_neither_keys_nor_other_chats() {
    let rig = rig();
    let fifo = rig.root.join("guarded-fifo");
    mkfifo(&fifo);
    let (done, fired) = failsafe(fifo.clone());
    let mut app = started(&rig.root, &[]).await;
    let first = app.agent_pid().expect("the first agent runs");
    app.set_choices(vec![blocked_choice(&rig, command(&rig), &fifo)]);
    // Its preparation now waits on the FIFO, off the loop.
    open_other(&mut app);
    assert_eq!(app.agent_count(), 2);
    assert_eq!(app.agent_pid(), None, "not up while it is prepared");
    // Meanwhile a key is handled, and the first chat's agent answers.
    key(&mut app, Action::GoToChat(1));
    assert_eq!(app.ws.active, 0);
    send(&mut app, "hello");
    pump_until(&mut app, "the first agent's answer", |s| {
        s.session.turn.is_none() && agent_text(s).contains("hello")
    })
    .await;
    assert!(
        !fired.load(Ordering::SeqCst),
        "the loop went on while the second agent was prepared"
    );
    assert!(!matches!(
        chat(&app, 2).session.connection,
        Connection::Ready { .. }
    ));
    // Written: it starts, and the session asked for meanwhile opens.
    let stop = Arc::new(AtomicBool::new(false));
    let released = release(fifo, stop.clone());
    pump_ws(&mut app, "the second agent's session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    done.store(true, Ordering::SeqCst);
    assert!(released.join().unwrap(), "its preparation read the FIFO");
    key(&mut app, Action::GoToChat(2));
    let second = app.agent_pid().expect("up now");
    assert_ne!(second, first);
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_cannot_start_is_an_error_line_in_its_chat() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = started(dir.path(), &[]).await;
    let missing = AgentCommand {
        name: "other".into(),
        program: "/definitely/not/an/agent".into(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: dir.path().to_path_buf(),
    };
    app.set_choices(vec![AgentChoice {
        command: missing,
        options: ChatOptions::default(),
    }]);
    open_other(&mut app);
    pump_ws(&mut app, "the error line", |ws| {
        !errors(&ws.chats[1].state).is_empty()
    })
    .await;
    let said = errors(chat(&app, 2));
    assert!(
        said[0]
            .0
            .contains("agent command not found: `/definitely/not/an/agent`"),
        "{said:?}"
    );
    assert_eq!(chat(&app, 2).session.connection, Connection::Down);
    assert_eq!(app.agent_count(), 1, "no process slot is left for it");
    // The other chat goes on.
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "hello");
    pump_until(&mut app, "the answer", |s| {
        s.session.turn.is_none() && agent_text(s).contains("hello")
    })
    .await;
    app.shutdown().await;
}

#[tokio::test]
async fn quitting_while_an_agent_is_prepared_leaves_no_process_of_it() {
    let rig = rig();
    let fifo = rig.root.join("guarded-fifo");
    mkfifo(&fifo);
    let pid_file = rig.work.join("started.pid");
    let (done, _) = failsafe(fifo.clone());
    let mut app = started(&rig.root, &[]).await;
    let agent = AgentCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            format!("echo $$ > {}; exec sleep 300", pid_file.display()),
        ],
        ..command(&rig)
    };
    app.set_choices(vec![blocked_choice(&rig, agent, &fifo)]);
    open_other(&mut app);
    // Quitting begins; the preparation is let go on meanwhile.
    let mut shutdown = Box::pin(app.shutdown());
    let _ = (&mut shutdown).now_or_never();
    let stop = Arc::new(AtomicBool::new(false));
    let released = release(fifo, stop.clone());
    tokio::time::timeout(GUARD, shutdown)
        .await
        .expect("shutdown is over once the start is");
    stop.store(true, Ordering::SeqCst);
    done.store(true, Ordering::SeqCst);
    let _ = released.join();
    // Never forked, or killed as it came up: either way it is gone.
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let pid: libc::pid_t = pid.trim().parse().unwrap();
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "the agent started after quitting began was ended");
    }
}

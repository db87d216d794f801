//! The disk writer: the loop only queues (a blocked file does not block the
//! pump), order holds, failures come back as error lines.

use crate::state::Code;
use std::path::{Path, PathBuf};

use super::super::{App, ChatOptions};
use crate::acp::AgentCommand;
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, SessionInfo, SessionOrigin, ToolCallFields,
    ToolKind,
};
use crate::policy::Mode;
use crate::state::{Action, EntryKind, Msg};
use crate::test_support::mkfifo;

fn command(cwd: &Path) -> AgentCommand {
    AgentCommand {
        name: "demo".into(),
        program: "/nonexistent/agent".into(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: cwd.to_path_buf(),
    }
}

fn session() -> SessionInfo {
    SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: SessionOrigin::New,
    }
}

/// An app whose chat has a session (no agent process).
fn app(cwd: &Path, options: ChatOptions) -> App {
    let mut app = App::with_options(command(cwd), options);
    let id = app.ws.active_id().expect("a chat");
    let len = app.state().session.transcript.len();
    if let Some(chat) = app.chats.get_mut(&id) {
        let lines = chat.on_session_record(len, &session());
        assert!(lines.is_empty(), "{lines:?}");
    }
    app.handle(Msg::SessionStarted(session()));
    app
}

/// The agent asks to edit; in Auto the answer (and its decision) is at once.
fn ask(app: &mut App, n: u32) {
    app.handle(Msg::PermissionRequested {
        id: u64::from(n),
        request: Box::new(PermissionRequest {
            session_id: "s".into(),
            tool_call_id: format!("edit-{n}"),
            fields: ToolCallFields {
                title: Some(format!("Edit file-{n}.rs")),
                kind: Some(ToolKind::Edit),
                ..ToolCallFields::default()
            },
            options: vec![PermissionOption {
                id: "allow-once".into(),
                name: "Allow".into(),
                kind: OptionKind::AllowOnce,
            }],
            client: false,
        }),
    });
}

fn decided(app: &App) -> usize {
    app.state()
        .session
        .transcript
        .entries()
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Decision { .. }))
        .count()
}

fn errors(app: &App) -> Vec<String> {
    app.state()
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// Read `want` whole lines from a FIFO, each append opening, writing and
/// closing it. The reader holds the FIFO open for writing too: closed between
/// two appends, the kernel would drop a line written in that gap, and the
/// test would wait for it forever.
struct FifoReader(std::sync::mpsc::Receiver<Vec<String>>);

fn read_fifo(path: PathBuf, want: usize) -> FifoReader {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the fifo");
        let mut lines = Vec::new();
        for line in std::io::BufReader::new(fifo).lines().take(want) {
            lines.push(line.expect("read the fifo"));
        }
        let _ = tx.send(lines);
    });
    FifoReader(rx)
}

/// Awaits a write that waits on the FIFO's reader: a failure, not a hang,
/// when the reader never takes it (a limit on a hang, not a measure of speed).
async fn unhung<T>(write: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(60), write)
        .await
        .expect("the writes reached the fifo's reader")
}

impl FifoReader {
    /// The lines, or a failure (not a hang) when they never all come.
    fn join(self) -> Vec<String> {
        self.0
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("every line reached the fifo")
    }
}

#[tokio::test]
async fn the_pump_only_queues_while_the_decision_log_blocks() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Opening a FIFO for writing blocks until a reader comes: a disk that
    // hangs. No reader yet.
    let log = dir.path().join("decisions.fifo");
    mkfifo(&log);
    let mut app = app(
        dir.path(),
        ChatOptions {
            mode: Mode::Auto,
            decision_log: Some(log.clone()),
            ..ChatOptions::default()
        },
    );
    for n in 1..=3 {
        ask(&mut app, n);
    }
    // Each pump returned with the decision applied though none is written.
    assert_eq!(decided(&app), 3);
    app.handle(Msg::Action(Action::Paste("still typing".into())));
    assert_eq!(app.state().view.composer.text(), "still typing");

    // A reader comes: every record lands, in order.
    let reader = read_fifo(log, 3);
    unhung(app.settle_disk()).await;
    let lines = reader.join();
    let calls: Vec<String> = lines
        .iter()
        .map(|l| {
            let record: crate::decision_log::DecisionRecord =
                serde_json::from_str(l).expect("a record");
            record.tool_call_id
        })
        .collect();
    assert_eq!(calls, ["edit-1", "edit-2", "edit-3"]);
    assert_eq!(errors(&app), Vec::<String>::new());
}

#[tokio::test]
async fn a_decision_log_that_cannot_be_written_is_an_error_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A regular file where the log's directory should be (a read-only data
    // dir for root too).
    let blocker = dir.path().join("data");
    std::fs::write(&blocker, "").expect("write");
    let mut app = app(
        dir.path(),
        ChatOptions {
            mode: Mode::Auto,
            decision_log: Some(blocker.join("decisions.jsonl")),
            ..ChatOptions::default()
        },
    );
    ask(&mut app, 1);
    app.settle_disk().await;
    let errors = errors(&app);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("could not append to the decision log"),
        "{errors:?}"
    );
    // The chat goes on: the next decision is made (and fails the same way).
    ask(&mut app, 2);
    app.settle_disk().await;
    assert_eq!((decided(&app), self::errors(&app).len()), (2, 2));
}

/// An app whose chats dir lies under a plain file (so no record can be
/// created; root ignores read-only directories), after one prompt.
fn prompted_without_a_chats_dir(dir: &Path) -> App {
    let blocker = dir.join("data");
    std::fs::write(&blocker, "").expect("write");
    let mut app = app(
        dir,
        ChatOptions {
            chats_dir: Some(blocker.join("chats")),
            ..ChatOptions::default()
        },
    );
    app.handle(Msg::Action(Action::Paste("hello".into())));
    app.handle(Msg::Action(Action::key(Code::Enter)));
    app
}

#[tokio::test]
async fn a_record_that_cannot_be_created_is_one_error_line_and_no_resume_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = prompted_without_a_chats_dir(dir.path());
    // Queued, so a hint is due until the writer says otherwise.
    assert_eq!(app.resume_hints().len(), 1);
    app.settle_disk().await;
    let errors = errors(&app);
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("the chat cannot be recorded")),
        "{errors:?}"
    );
    assert_eq!(
        errors.iter().filter(|e| e.contains("record")).count(),
        1,
        "{errors:?}"
    );
    assert_eq!(app.resume_hints(), Vec::<String>::new());
    // More entries write nothing and say nothing more.
    app.handle(Msg::Note("later".into()));
    app.settle_disk().await;
    assert_eq!(self::errors(&app).len(), errors.len());
}

#[tokio::test]
async fn record_lines_land_in_the_order_they_were_made() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chats = dir.path().join("chats");
    let mut app = app(
        dir.path(),
        ChatOptions {
            chats_dir: Some(chats.clone()),
            ..ChatOptions::default()
        },
    );
    app.handle(Msg::Action(Action::Paste("first".into())));
    app.handle(Msg::Action(Action::key(Code::Enter)));
    for n in 0..300 {
        app.handle(Msg::Note(format!("note {n}")));
    }
    app.shutdown().await;
    let store = crate::chats::ChatStore::new(chats);
    let listed = store.list();
    assert_eq!(listed.len(), 1);
    let loaded = store.load(&listed[0].chat_id).expect("loads");
    let on_disk: Vec<EntryKind> = loaded.entries.iter().map(|e| e.to_kind()).collect();
    let shown: Vec<EntryKind> = app
        .state()
        .session
        .transcript
        .entries()
        .iter()
        .skip(app.state().session.transcript.len() - on_disk.len())
        .map(|e| e.kind.clone())
        .collect();
    assert_eq!(on_disk, shown);
    let notes: Vec<&EntryKind> = on_disk
        .iter()
        .filter(|k| matches!(k, EntryKind::Info(t) if t.starts_with("note ")))
        .collect();
    assert_eq!(notes.len(), 300);
}

#[tokio::test]
async fn quitting_waits_for_the_queued_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("decisions.fifo");
    mkfifo(&log);
    let mut app = app(
        dir.path(),
        ChatOptions {
            mode: Mode::Auto,
            decision_log: Some(log.clone()),
            ..ChatOptions::default()
        },
    );
    ask(&mut app, 1);
    ask(&mut app, 2);
    let mut shutdown = Box::pin(app.shutdown());
    // The log cannot be written before a reader comes: quitting waits,
    // however often it is polled.
    for _ in 0..10 {
        assert!(futures::poll!(shutdown.as_mut()).is_pending());
    }
    let reader = read_fifo(log, 2);
    unhung(shutdown).await;
    assert_eq!(reader.join().len(), 2);
}

#[tokio::test]
async fn quitting_at_once_names_no_record_that_could_not_be_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = prompted_without_a_chats_dir(dir.path());
    // No pump between: the writer's answer is only read on quit.
    app.shutdown().await;
    assert_eq!(app.resume_hints(), Vec::<String>::new());
}

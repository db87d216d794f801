//! End to end: a chat's record keeps each tool call's last status, so a
//! reopened chat does not show finished calls as pending or running
//! (issue 25).

use std::path::Path;

use warden::app::{App, ChatOptions, ResumeChat};
use warden::policy::Mode;
use warden::state::{Action, EntryKind, ToolState};

use crate::common::*;

fn recorded_options(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, Mode::Default)
    }
}

fn tool_states(entries: &[EntryKind]) -> Vec<ToolState> {
    entries
        .iter()
        .filter_map(|e| match e {
            EntryKind::Tool(t) => Some(t.state),
            _ => None,
        })
        .collect()
}

/// The `execute` turn writes the decision line and more text after the
/// call while the call still waits or runs: the record must still get the
/// call as it ended ("done"), and so must the chat reopened from it.
#[tokio::test]
async fn a_record_keeps_each_calls_last_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    send(&mut app, "execute");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(
        tool_states(
            &app.state()
                .session
                .transcript
                .entries()
                .iter()
                .map(|e| e.kind.clone())
                .collect::<Vec<_>>()
        ),
        [ToolState::Completed]
    );
    app.shutdown().await;

    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(chats.len(), 1);
    let chat = store.load(&chats[0].chat_id).expect("loads");
    let recorded: Vec<EntryKind> = chat.entries.iter().map(|e| e.to_kind()).collect();
    assert_eq!(
        tool_states(&recorded),
        [ToolState::Completed],
        "{recorded:#?}"
    );
    let reopened = ResumeChat::from_loaded(&chat);
    assert_eq!(tool_states(&reopened.entries), [ToolState::Completed]);
}

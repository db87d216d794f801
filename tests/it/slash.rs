//! End to end: the slash commands people reach for (issue 25): `/clear`
//! opens a new session in the same chat (the last one stays in the
//! records), `/login` only for an agent that lists ways to sign in.

use std::path::Path;

use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Connection, EntryKind};

use crate::common::*;

fn recorded_options(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, Mode::Default)
    }
}

#[tokio::test]
async fn clear_opens_a_new_session_and_the_last_one_stays_in_the_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    let first = app.state().session_id().expect("open").to_string();
    send(&mut app, "before the clear");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    send(&mut app, "/clear");
    pump_until(&mut app, "a new session", |s| {
        matches!(&s.session.connection, Connection::Ready { session_id } if *session_id != first)
    })
    .await;
    assert!(
        !app.state()
            .session
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::User(_) | EntryKind::Agent(_))),
        "{:#?}",
        app.state().session.transcript.entries()
    );
    send(&mut app, "after the clear");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("after the clear"));
    assert!(!agent_text(app.state()).contains("before the clear"));
    app.shutdown().await;

    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let mut said: Vec<Vec<String>> = store
        .list()
        .iter()
        .map(|c| {
            let chat = store.load(&c.chat_id).expect("loads");
            chat.entries
                .iter()
                .filter_map(|e| match e.to_kind() {
                    EntryKind::User(t) => Some(t),
                    _ => None,
                })
                .collect()
        })
        .collect();
    said.sort();
    assert_eq!(
        said,
        [
            vec!["after the clear".to_string()],
            vec!["before the clear".to_string()]
        ],
        "two records, one per session"
    );
}

#[tokio::test]
async fn login_is_refused_for_an_agent_that_lists_no_sign_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "/login");
    assert!(app.take_login().is_none());
    assert!(
        app.state()
            .view
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("no way to sign in")),
        "{:?}",
        app.state().view.notice
    );
    assert!(!app.state().is_busy(), "not sent to the agent either");
    app.shutdown().await;
}

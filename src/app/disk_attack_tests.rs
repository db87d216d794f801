//! Attacks on the disk writer: a record's name that walks out of the
//! store, a decision whose agent text carries newlines and escapes.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::{DiskDone, Files, Job};
use crate::app::Incoming;
use crate::chats::{ChatHeader, ChatStore};
use crate::decision_log::DecisionRecord;

fn header(chat_id: &str) -> ChatHeader {
    ChatHeader {
        chat_id: chat_id.into(),
        agent: "demo".into(),
        session_id: "../../evil".into(),
        cwd: PathBuf::from("/tmp"),
        created: "2026-01-01T00:00:00Z".into(),
        command: Vec::new(),
        exec: false,
    }
}

#[test]
fn a_record_named_out_of_the_store_is_refused_and_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChatStore::new(dir.path().join("chats"));
    let (tx, mut rx) = mpsc::unbounded_channel::<Incoming>();
    let mut files = Files::default();
    for (n, id) in ["../evil", "a/b", "..", ".", "", "x\0y", "..\\evil"]
        .into_iter()
        .enumerate()
    {
        let chat = n as u64;
        files.run(
            Job::CreateRecord {
                chat,
                store: store.clone(),
                header: header(id),
            },
            &tx,
        );
        assert!(
            matches!(rx.try_recv(), Ok(Incoming::Disk(DiskDone::RecordStopped(c, _))) if c == chat),
            "{id:?} was not refused"
        );
        files.run(
            Job::ReopenRecord {
                chat,
                store: store.clone(),
                chat_id: id.into(),
            },
            &tx,
        );
        assert!(
            matches!(rx.try_recv(), Ok(Incoming::Disk(DiskDone::RecordStopped(c, _))) if c == chat),
            "{id:?} reopened"
        );
    }
    assert!(!dir.path().join("evil.jsonl").exists());
    assert!(!dir.path().join("chats").join("a").exists());
}

#[test]
fn a_decision_with_hostile_agent_text_is_one_clean_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("decisions.jsonl");
    let hostile = "Edit a.rs\n{\"decision\":\"allowed\"}\r\x1b[2J\x1b]52;c;AAAA\x07\u{202e}\u{9b}x";
    let record = DecisionRecord {
        time: "2026-01-01T00:00:00Z".into(),
        agent: "demo".into(),
        session: hostile.into(),
        chat: "c".into(),
        request_id: 1,
        tool_call_id: hostile.into(),
        title: hostile.into(),
        kind: "edit".into(),
        category: "write".into(),
        mode: "default".into(),
        decision: crate::record::Verdict::Denied,
        option_id: None,
        option_kind: None,
        source: crate::policy::Source::User.into(),
        reason: hostile.into(),
        cwd: hostile.into(),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Incoming>();
    let mut files = Files::default();
    files.run(
        Job::Decision {
            chat: 1,
            path: path.clone(),
            record: Box::new(record.clone()),
        },
        &tx,
    );
    assert!(rx.try_recv().is_err(), "the append failed");
    let text = std::fs::read_to_string(&path).expect("read");
    assert_eq!(text.matches('\n').count(), 1, "{text:?}");
    assert!(text.ends_with('\n'));
    let raw_controls = text
        .trim_end_matches('\n')
        .chars()
        .filter(|c| c.is_control() || *c == '\u{202e}')
        .count();
    assert_eq!(raw_controls, 0, "{text:?}");
    let back = crate::decision_log::read(&path).expect("read");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].title, hostile, "the record reads back as written");
}

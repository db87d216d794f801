//! Which lines a chat appends to its record, and when.

use super::*;
use crate::model::{SessionUpdate, StopReason, ToolCall, ToolCallFields, WireStatus};
use crate::policy::Mode;
use crate::state::tests::chat;
use crate::state::{Msg, ToolState};
use pretty_assertions::assert_eq;

fn update(s: &mut ChatState, update: SessionUpdate) {
    s.update(Msg::Update(update));
}

fn tool_call(id: &str) -> SessionUpdate {
    SessionUpdate::ToolCall(Box::new(ToolCall {
        title: format!("Run {id}"),
        ..ToolCall::placeholder(id)
    }))
}

fn tool_done(id: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate {
        id: id.into(),
        fields: Box::new(ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        }),
    }
}

/// The entry lines among `lines`, as their transcript entries.
fn entries(lines: &[Line]) -> Vec<EntryKind> {
    lines
        .iter()
        .filter_map(|line| match line {
            Line::Entry { entry } => Some(entry.to_kind()),
            _ => None,
        })
        .collect()
}

/// The title and mode lines among `lines`.
fn others(lines: &[Line]) -> Vec<Line> {
    lines
        .iter()
        .filter(|line| !matches!(line, Line::Entry { .. }))
        .cloned()
        .collect()
}

fn agent(text: &str) -> EntryKind {
    EntryKind::Agent(text.into())
}

fn user(text: &str) -> EntryKind {
    EntryKind::User(text.into())
}

#[test]
fn an_open_tool_call_holds_back_what_came_after_it_until_it_finishes() {
    let mut s = chat(Mode::Default);
    let mut cursor = RecordCursor::default();
    update(&mut s, SessionUpdate::AgentChunk("looking".into()));
    update(&mut s, tool_call("t1"));
    update(&mut s, SessionUpdate::AgentChunk("meanwhile".into()));
    update(&mut s, tool_call("t2"));
    update(&mut s, tool_done("t2"));
    update(&mut s, SessionUpdate::AgentChunk("more".into()));
    // t1 is still open: what came after it (a finished call too) waits.
    let lines = s.record_lines(&mut cursor, None, false);
    assert_eq!(entries(&lines), [user("go"), agent("looking")]);
    assert_eq!(cursor.written, 2);
    assert!(s.record_lines(&mut cursor, None, false).is_empty());

    // t1 finishes: it goes, with what followed, but for the last entry,
    // which may still be streaming.
    update(&mut s, tool_done("t1"));
    let lines = s.record_lines(&mut cursor, None, false);
    let kinds = entries(&lines);
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert!(
        matches!(&kinds[0], EntryKind::Tool(t) if t.call.id == "t1" && t.state == ToolState::Completed)
    );
    assert_eq!(kinds[1], agent("meanwhile"));
    assert!(matches!(&kinds[2], EntryKind::Tool(t) if t.call.id == "t2"));

    // The turn ends: the last entry has settled.
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    let lines = s.record_lines(&mut cursor, None, false);
    assert_eq!(entries(&lines), [agent("more")]);
    assert_eq!(cursor.written, s.session.transcript.len());
}

#[test]
fn the_last_entry_waits_while_it_may_still_stream() {
    let mut s = chat(Mode::Default);
    let mut cursor = RecordCursor::default();
    update(&mut s, SessionUpdate::AgentChunk("hal".into()));
    assert_eq!(
        entries(&s.record_lines(&mut cursor, None, false)),
        [user("go")]
    );
    update(&mut s, SessionUpdate::AgentChunk("f".into()));
    assert_eq!(entries(&s.record_lines(&mut cursor, None, false)), []);
}

#[test]
fn last_writes_everything_an_open_call_and_what_streams_included() {
    let mut s = chat(Mode::Default);
    let mut cursor = RecordCursor::default();
    update(&mut s, tool_call("t1"));
    update(&mut s, SessionUpdate::AgentChunk("half".into()));
    assert!(s.is_busy());
    let lines = s.record_lines(&mut cursor, None, true);
    let kinds = entries(&lines);
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(kinds[0], user("go"));
    assert!(matches!(&kinds[1], EntryKind::Tool(t) if t.call.id == "t1" && !t.state.is_finished()));
    assert_eq!(kinds[2], agent("half"));
    assert_eq!(cursor.written, 3);
}

#[test]
fn a_rename_and_a_title_each_write_one_line_once() {
    let mut s = chat(Mode::Default);
    let mut cursor = RecordCursor::default();
    s.record_lines(&mut cursor, None, false);
    assert!(s.record_lines(&mut cursor, None, false).is_empty());

    let renamed = Line::Title {
        title: "mine".into(),
        renamed: true,
    };
    assert_eq!(
        others(&s.record_lines(&mut cursor, Some("mine"), false)),
        [renamed]
    );
    assert!(s.record_lines(&mut cursor, Some("mine"), false).is_empty());
    assert_eq!(cursor.name.as_deref(), Some("mine"));

    update(
        &mut s,
        SessionUpdate::SessionInfo {
            title: Some("Fix the build".into()),
        },
    );
    let titled = Line::Title {
        title: "Fix the build".into(),
        renamed: false,
    };
    assert_eq!(
        others(&s.record_lines(&mut cursor, Some("mine"), false)),
        [titled]
    );
    assert!(s.record_lines(&mut cursor, Some("mine"), false).is_empty());

    // A name taken back writes nothing: readers keep the last name.
    assert!(s.record_lines(&mut cursor, None, false).is_empty());
}

#[test]
fn a_mode_change_writes_one_mode_line() {
    let mut s = chat(Mode::Default);
    let mut cursor = RecordCursor::default();
    let first = s.record_lines(&mut cursor, None, false);
    assert_eq!(
        others(&first),
        [Line::Mode {
            mode: Mode::Default.as_str().into()
        }]
    );
    s.gate.mode = Mode::Plan;
    assert_eq!(
        s.record_lines(&mut cursor, None, false),
        [Line::Mode {
            mode: Mode::Plan.as_str().into()
        }]
    );
    assert!(s.record_lines(&mut cursor, None, false).is_empty());
}

#[test]
fn a_reopened_cursor_writes_only_what_came_after_it() {
    let mut s = chat(Mode::Default);
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    let mut cursor = RecordCursor {
        written: 1,
        title: None,
        name: Some("kept".into()),
        mode: Some(Mode::Default.as_str().into()),
    };
    update(&mut s, SessionUpdate::AgentChunk("late".into()));
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    let lines = s.record_lines(&mut cursor, Some("kept"), false);
    assert_eq!(lines, [Line::entry(&agent("late"))]);
}

#[test]
fn the_record_starts_once_the_user_spoke() {
    let mut s = ChatState::new("demo", "/w");
    assert!(!s.user_spoke());
    s.info("started");
    assert!(!s.user_spoke());
    assert!(chat(Mode::Default).user_spoke());
}

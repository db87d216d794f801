//! End to end: chat records and reopening a past chat, several chats on one
//! or more agents.

use std::path::Path;
use std::time::Duration;
use warden::state::{Code, Key};

use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Action, Connection, EntryKind};

use crate::common::*;
use crate::e2e::group_alive;

fn recorded_options(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, Mode::Default)
    }
}

#[tokio::test]
async fn a_recorded_chat_reopens_with_its_transcript_and_continues_the_same_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    let session = first.state().session_id().expect("open").to_string();
    send(&mut first, "hello from the first run");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;

    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].title.as_deref(), Some("hello from the first run"));
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(chat.entries.iter().any(
        |e| matches!(e.to_kind(), EntryKind::Agent(t) if t.contains("hello from the first run"))
    ));

    let mut options = recorded_options(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&chat));
    let mut again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_eq!(
        again.state().session_id(),
        Some(session.as_str()),
        "the same session"
    );
    let users: Vec<String> = again
        .state()
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::User(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        ["hello from the first run"],
        "replayed by session/load"
    );
    assert!(
        infos(again.state())
            .iter()
            .any(|l| l.starts_with("reopened"))
    );
    send(&mut again, "and the second");
    pump_until(&mut again, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(again.state()).contains("and the second"));
    again.shutdown().await;
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(
        chat.entries
            .iter()
            .any(|e| e.to_kind() == EntryKind::User("and the second".into())),
        "the record goes on"
    );
    assert_eq!(store.list().len(), 1, "still one chat");
}

#[tokio::test]
async fn a_chat_the_agent_cannot_continue_shows_the_saved_transcript_and_a_new_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    send(&mut first, "remember me");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;
    // The agent has lost its own record of the session.
    std::fs::remove_dir_all(dir.path().join(".demo-state")).expect("forget");
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chat = store.load(&store.list()[0].chat_id).expect("loads");
    let mut options = recorded_options(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&chat));
    let mut again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_ne!(
        again.state().session_id(),
        Some(chat.session_id.as_str()),
        "a new session"
    );
    assert!(
        again
            .state()
            .session
            .transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("remember me".into())),
        "saved transcript shown"
    );
    assert!(
        infos(again.state())
            .iter()
            .any(|l| l.contains("could not continue this chat"))
    );
    again.shutdown().await;
}

#[tokio::test]
async fn two_chats_on_one_agent_process_plan_blocks_and_auto_allows_the_same_edit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Plan)).await;
    let pid = app.agent_pid().expect("agent runs");
    // Ctrl-N: a second chat of the same agent, on screen, starting at Default.
    key(&mut app, Action::NewChat);
    assert_eq!(app.ws.chats.len(), 2);
    assert_eq!(app.ws.active, 1);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    assert_eq!(app.agent_count(), 1, "one agent process serves both chats");
    assert_eq!(app.agent_pid(), Some(pid));
    let first = chat(&app, 1).session_id().map(str::to_string);
    let second = chat(&app, 2).session_id().map(str::to_string);
    assert!(
        first.is_some() && second.is_some() && first != second,
        "two sessions"
    );
    assert_eq!(chat(&app, 2).gate.mode, Mode::Default);
    // Shift+Tab on chat 2: Default -> Auto; chat 1 stays in Plan.
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(chat(&app, 2).gate.mode, Mode::Auto);
    assert_eq!(chat(&app, 1).gate.mode, Mode::Plan);

    // The same edit in both: chat 2 (on screen) first, then chat 1.
    send(&mut app, "edit");
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "edit");
    pump_ws(&mut app, "both turns", |ws| {
        ws.chats.iter().all(|c| !c.state.is_busy())
    })
    .await;
    assert!(
        app.ws
            .chats
            .iter()
            .all(|c| c.state.gate.approvals.is_empty()),
        "no card in either"
    );
    let plan = agent_text(chat(&app, 1));
    let auto = agent_text(chat(&app, 2));
    assert!(
        plan.contains("permission outcome: selected reject-once"),
        "{plan}"
    );
    assert!(
        auto.contains("permission outcome: selected allow-once"),
        "{auto}"
    );
    assert!(!plan.contains("allow-once") && !auto.contains("reject-once"));
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    let mut by_session: Vec<(String, String, String)> = log
        .iter()
        .map(|r| (r.session.clone(), r.mode.clone(), r.decision.to_string()))
        .collect();
    by_session.sort();
    let mut want = vec![
        (
            first.clone().unwrap_or_default(),
            "plan".to_string(),
            "denied".to_string(),
        ),
        (
            second.clone().unwrap_or_default(),
            "auto".to_string(),
            "allowed".to_string(),
        ),
    ];
    want.sort();
    assert_eq!(by_session, want);
    app.shutdown().await;
    assert!(!group_alive(pid as i32), "the shared agent is gone");
}

#[tokio::test]
async fn a_card_in_a_chat_off_screen_waits_there_and_closing_it_cancels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    // Chat 1 asks while chat 2 is on screen.
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "two");
    key(&mut app, Action::GoToChat(2));
    pump_ws(&mut app, "two cards in chat 1", |ws| {
        ws.chats[0].state.gate.approvals.len() == 2
    })
    .await;
    assert!(
        chat(&app, 2).gate.approvals.is_empty(),
        "nothing on chat 2's card"
    );
    assert_eq!(app.ws.waiting_elsewhere(), [(1, 2)]);
    // Close chat 1 from chat 2's list: it asks, then answers both cancelled.
    key(&mut app, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut app, Action::key(Code::Up));
    key(&mut app, Action::ch('x'));
    assert!(matches!(
        app.ws.focus,
        warden::state::ChatFocus::ConfirmClose { .. }
    ));
    key(&mut app, Action::ch('y'));
    assert_eq!(app.ws.chats.len(), 1);
    assert!(app.ws.waiting_elsewhere().is_empty());
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|r| r.decision == "cancelled"), "{log:?}");
    // Chat 2 goes on working on the same agent process.
    send(&mut app, "hello again");
    pump_until(&mut app, "chat 2's turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("hello again"));
    app.shutdown().await;
}

#[tokio::test]
async fn the_picker_in_the_tui_lists_the_agents_own_sessions_and_reopens_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A chat warden did not record: only the agent knows its session.
    let mut first = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    let session = first.state().session_id().expect("open").to_string();
    send(&mut first, "only the agent remembers this");
    pump_until(&mut first, "end of turn", |s| !s.is_busy()).await;
    first.shutdown().await;

    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    // Alt-O: no records yet; the agent's session/list answer fills the picker.
    key(&mut app, Action::PastChats);
    assert!(app.ws.picker().is_some(), "the picker is open");
    pump_ws(&mut app, "the agent's sessions", |ws| {
        ws.picker()
            .is_some_and(|p| p.items().iter().any(|c| c.session_id == session))
    })
    .await;
    let picker = app.ws.picker().expect("open");
    let listed = picker
        .items()
        .iter()
        .find(|c| c.session_id == session)
        .expect("listed");
    assert!(listed.is_agent_listed());
    assert_eq!(
        listed.title.as_deref(),
        Some("only the agent remembers this")
    );
    // Filter down to it and open it: session/load replays it in a new chat,
    // which takes the place of the untouched one.
    key(&mut app, Action::Paste("remembers".into()));
    key(&mut app, Action::key(Code::Enter));
    assert_eq!(app.ws.chats.len(), 1, "the untouched chat gave way");
    pump_until(&mut app, "the reopened session", |s| {
        s.session_id() == Some(session.as_str())
    })
    .await;
    assert!(
        app.state()
            .session
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::User(t) if t == "only the agent remembers this")),
        "replayed"
    );
    send(&mut app, "and now it is recorded");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0].session_id, session);
}

#[tokio::test]
async fn chats_of_different_agents_run_side_by_side_and_an_unused_agent_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    let first_pid = app.agent_pid().expect("runs");
    // A second agent (the demo under another name) whose chats start in Auto.
    let mut other = demo_command(dir.path(), &[]);
    other.name = "other".into();
    app.set_choices(vec![warden::app::AgentChoice {
        command: other,
        options: ChatOptions {
            mode: Mode::Auto,
            ..ChatOptions::default()
        },
    }]);
    assert_eq!(app.ws.agents, ["demo", "other"]);
    // Ctrl-N asks which agent; the chat on screen's agent is highlighted.
    key(&mut app, Action::NewChat);
    assert_eq!(
        app.ws.focus,
        warden::state::ChatFocus::NewChat { selected: 0 }
    );
    key(&mut app, Action::key(Code::Down));
    key(&mut app, Action::key(Code::Enter));
    pump_ws(&mut app, "the other agent's session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    assert_eq!(app.agent_count(), 2, "one process per agent");
    let other_pid = app.agent_pid().expect("runs");
    assert_ne!(other_pid, first_pid);
    assert_eq!(chat(&app, 2).session.agent_name, "other");
    assert_eq!(chat(&app, 2).gate.mode, Mode::Auto, "its default mode");
    assert_eq!(chat(&app, 1).gate.mode, Mode::Default);
    send(&mut app, "execute");
    pump_until(&mut app, "the Auto turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("permission outcome: selected allow-once"));
    // Closing the only chat of `other` ends its process; demo runs on.
    key(&mut app, Action::CloseChat);
    assert_eq!(app.ws.chats.len(), 1);
    assert_eq!(app.agent_count(), 1);
    let gone = tokio::time::timeout(GUARD, async {
        while group_alive(other_pid as i32) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the unused agent's process group ended");
    assert!(group_alive(first_pid as i32));
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_crash_takes_down_all_its_chats_and_r_reconnects_each() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    // Chat 1 waits on a card while chat 2 crashes the shared process.
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "edit");
    pump_ws(&mut app, "a card in chat 1", |ws| {
        !ws.chats[0].state.gate.approvals.is_empty()
    })
    .await;
    key(&mut app, Action::GoToChat(2));
    send(&mut app, "crash");
    pump_ws(&mut app, "both chats down", |ws| {
        ws.chats
            .iter()
            .all(|c| c.state.session.connection == Connection::Down)
    })
    .await;
    assert_eq!(app.agent_count(), 0);
    assert!(
        chat(&app, 1).gate.approvals.is_empty(),
        "its card was cancelled"
    );
    assert!(!errors(chat(&app, 1)).is_empty() && !errors(chat(&app, 2)).is_empty());
    // r in chat 2 starts a new process, and chat 1 comes back on it too
    // (every chat of the crashed process restarts together).
    key(&mut app, Action::ch('r'));
    pump_ws(&mut app, "both chats back", |ws| {
        ws.chats
            .iter()
            .all(|c| matches!(c.state.session.connection, Connection::Ready { .. }))
    })
    .await;
    let pid = app.agent_pid();
    key(&mut app, Action::GoToChat(1));
    assert_eq!(app.agent_count(), 1);
    assert_eq!(app.agent_pid(), pid, "the same new process");
    send(&mut app, "still here");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("still here"));
    app.shutdown().await;
}

#[tokio::test]
async fn closing_a_chat_mid_turn_keeps_what_streamed_in_its_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "slow");
    pump_until(&mut app, "some output", |s| {
        agent_text(s).contains("Still working")
    })
    .await;
    // Alt-W asks (a turn runs); y closes it.
    key(&mut app, Action::CloseChat);
    key(&mut app, Action::ch('y'));
    assert_eq!(app.ws.chats.len(), 1);
    assert!(
        app.ws
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("closed chat 1"))
    );
    app.shutdown().await;
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let chats = store.list();
    assert_eq!(
        chats.len(),
        1,
        "the untouched chat left no record: {chats:?}"
    );
    let chat = store.load(&chats[0].chat_id).expect("loads");
    assert!(
        chat.entries
            .iter()
            .any(|e| matches!(e.to_kind(), EntryKind::Agent(t) if t.contains("Still working"))),
        "the streamed part is kept: {:?}",
        chat.entries
    );
}

#[tokio::test]
async fn a_renamed_chat_is_listed_under_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded_options(dir.path()),
    ))
    .await;
    send(&mut app, "first words");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // Ctrl-L, r, a new name, Enter.
    key(&mut app, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut app, Action::ch('r'));
    key(&mut app, Action::KillLineStart);
    key(&mut app, Action::Paste("parser work".into()));
    key(&mut app, Action::key(Code::Enter));
    key(&mut app, Action::key(Code::Esc));
    assert_eq!(app.ws.chats[0].label(), "parser work");
    app.shutdown().await;
    let chats = warden::chats::ChatStore::new(dir.path().join("chats")).list();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].title.as_deref(), Some("parser work"));
}

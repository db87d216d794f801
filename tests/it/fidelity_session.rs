//! End to end over real pipes with the demo agent playing recorded agent
//! behaviour (issue 13): new files from every agent shape, restarting a
//! crashed agent into the same session, renamed chats, the agent's own plan
//! mode, and the session calls (`additionalDirectories`, `session/close`,
//! `session/list` pages).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use warden::state::{Code, Key};

use crate::common::*;
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Action, ChatState, Connection, EntryKind, Workspace};

/// Prompt `create`, allow whatever card comes, and wait for the turn's end.
async fn create_new_file(dir: &Path, name: &str) -> App {
    let mut app = started_scenario(dir, name, logged_options(dir, Mode::Default)).await;
    send(&mut app, "create");
    while app.state().is_busy() {
        pump_until(&mut app, "a card or the end of the turn", |s| {
            !s.gate.approvals.is_empty() || !s.is_busy()
        })
        .await;
        if !app.state().gate.approvals.is_empty() {
            key(&mut app, Action::ch('y'));
        }
    }
    app
}

// Item 3: a read of a missing file is answered as Zed answers it (empty
// content), so every agent shape can create a new file.

#[tokio::test]
async fn gemini_reads_a_missing_file_before_writing_it_and_creates_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "gemini-reads-before-writing-new-file.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("read ok: 0 lines"), "{text}");
    assert!(text.contains("write ok"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("brand-new.txt")).expect("created"),
        "hello from the fake model\n"
    );
}

#[tokio::test]
async fn kimi_and_opencode_ask_then_write_a_new_file_in_a_new_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "kimi-asks-then-writes-new-file.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/dir/brand-new.txt")).expect("created"),
        "hello from the fake model\n"
    );
}

#[tokio::test]
async fn qwen_writes_a_new_file_unasked_through_the_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "qwen-writes-new-file-unasked.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    assert!(
        decisions(app.state()).iter().any(|(allowed, _)| *allowed),
        "the gate decided the write: {:?}",
        decisions(app.state())
    );
    assert!(dir.path().join("brand-new.txt").exists());
}

#[tokio::test]
async fn a_missing_file_outside_the_roots_is_still_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    // The built-in `fs-escape` reads `<cwd>/../outside.txt`, which does not exist.
    send(&mut app, "fs-escape");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("read failed"), "{text}");
}

// Item 1: a restart continues the same session, for every chat of the
// crashed process at once.

fn recorded(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("chats")),
        ..logged_options(dir, Mode::Default)
    }
}

fn users(state: &ChatState) -> Vec<String> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::User(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn ready_all(ws: &Workspace) -> bool {
    ws.chats
        .iter()
        .all(|c| matches!(c.state.session.connection, Connection::Ready { .. }))
}

/// Two chats on one agent, a turn in each, then chat 2 crashes the process
/// and one `r` there restarts both. Returns the app and both session ids.
async fn crash_and_restart(dir: &Path, scenario_file: Option<&str>) -> (App, String, String) {
    let extra: Vec<String> = scenario_file
        .map(|f| vec!["--scenario".to_string(), scenario(f)])
        .unwrap_or_default();
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut app = ready(App::with_options(demo_command(dir, &extra), recorded(dir))).await;
    send(&mut app, "hello one");
    pump_until(&mut app, "turn 1", |s| !s.is_busy()).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "chat 2", |ws| {
        ws.chats.len() == 2 && ready_all(ws)
    })
    .await;
    send(&mut app, "hello two");
    pump_until(&mut app, "turn 2", |s| !s.is_busy()).await;
    let one = chat(&app, 1).session_id().expect("open").to_string();
    let two = chat(&app, 2).session_id().expect("open").to_string();
    send(&mut app, "crash");
    pump_ws(&mut app, "both chats down", |ws| {
        ws.chats
            .iter()
            .all(|c| c.state.session.connection == Connection::Down)
    })
    .await;
    key(&mut app, Action::ch('r'));
    pump_ws(&mut app, "both chats back", ready_all).await;
    assert_eq!(app.agent_count(), 1, "one new process for both chats");
    (app, one, two)
}

#[tokio::test]
async fn restart_after_a_crash_resumes_the_same_sessions_of_every_chat() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, one, two) = crash_and_restart(dir.path(), None).await;
    assert_eq!(chat(&app, 1).session_id(), Some(one.as_str()));
    assert_eq!(chat(&app, 2).session_id(), Some(two.as_str()));
    for n in [1, 2] {
        assert!(
            infos(chat(&app, n))
                .iter()
                .any(|l| l.contains("continues the same session")),
            "chat {n}: {:?}",
            infos(chat(&app, n))
        );
    }
    assert_eq!(users(chat(&app, 1)), ["hello one"], "nothing shown twice");
    key(&mut app, Action::GoToChat(1));
    send(&mut app, "after the restart");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("after the restart"));
    app.shutdown().await;
    // The record names one session, and reopening it later has every turn.
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let record = store
        .list()
        .into_iter()
        .find(|c| c.title.as_deref() == Some("hello one"))
        .expect("chat 1 recorded");
    let loaded = store.load(&record.chat_id).expect("loads");
    assert_eq!(loaded.session_id, one, "no new session in the record");
    let mut options = recorded(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&loaded));
    let again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_eq!(users(again.state()), ["hello one", "after the restart"]);
}

#[tokio::test]
async fn restart_of_an_agent_that_only_loads_does_not_show_the_replay_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (app, one, two) =
        crash_and_restart(dir.path(), Some("gemini-loads-without-resume.toml")).await;
    assert_eq!(chat(&app, 1).session_id(), Some(one.as_str()));
    assert_eq!(chat(&app, 2).session_id(), Some(two.as_str()));
    assert_eq!(users(chat(&app, 1)), ["hello one"]);
    assert_eq!(users(chat(&app, 2)), ["hello two", "crash"]);
    let agent_lines = |state: &ChatState| {
        agent_text(state)
            .lines()
            .filter(|l| l.contains("hello one"))
            .count()
    };
    let before = agent_lines(chat(&app, 1));
    assert!(before > 0);
    assert!(
        infos(chat(&app, 1))
            .iter()
            .any(|l| l.contains("reloaded the same session")),
        "{:?}",
        infos(chat(&app, 1))
    );
}

#[tokio::test]
async fn restart_of_an_agent_that_cannot_continue_says_it_is_a_new_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (app, one, _) =
        crash_and_restart(dir.path(), Some("agent-cannot-continue-sessions.toml")).await;
    let now = chat(&app, 1).session_id().expect("open");
    assert_ne!(now, one, "a new session");
    assert!(
        infos(chat(&app, 1))
            .iter()
            .any(|l| l.contains("could not continue the session")),
        "{:?}",
        infos(chat(&app, 1))
    );
    // The turns before stay on screen.
    assert_eq!(users(chat(&app, 1)), ["hello one"]);
}

// Item 2: a renamed chat keeps its name when reopened.

#[tokio::test]
async fn a_renamed_chat_keeps_its_name_when_reopened_and_prompted_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded(dir.path()),
    ))
    .await;
    send(&mut app, "the first prompt");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    // Ctrl-L, r: rename the chat.
    key(&mut app, Action::Key(Key::ctrl(Code::Char('l'))));
    key(&mut app, Action::ch('r'));
    key(&mut app, Action::KillLineStart);
    key(&mut app, Action::Paste("My own name".into()));
    key(&mut app, Action::key(Code::Enter));
    assert_eq!(app.ws.chats[0].name.as_deref(), Some("My own name"));
    app.shutdown().await;

    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let listed = store.list();
    assert_eq!(listed[0].title.as_deref(), Some("My own name"));
    let loaded = store.load(&listed[0].chat_id).expect("loads");
    let mut options = recorded(dir.path());
    options.resume = Some(warden::app::ResumeChat::from_loaded(&loaded));
    let mut again = ready(App::with_options(demo_command(dir.path(), &[]), options)).await;
    assert_eq!(again.ws.chats[0].name.as_deref(), Some("My own name"));
    assert_eq!(again.ws.chats[0].label(), "My own name");
    send(&mut again, "a second prompt");
    pump_until(&mut again, "a turn", |s| !s.is_busy()).await;
    again.shutdown().await;
    let loaded = store.load(&listed[0].chat_id).expect("loads");
    assert_eq!(loaded.name.as_deref(), Some("My own name"));
    assert_eq!(loaded.display_title().as_deref(), Some("My own name"));
    assert_eq!(store.list()[0].title.as_deref(), Some("My own name"));
}

// Item 4 (issue 22 item 1): warden's Plan never relies on the agent's own
// plan mode; using it is an explicit opt-in (`agent_plan_mode`).

fn agent_mode_now(app: &App) -> String {
    app.state()
        .session
        .agent_modes
        .as_ref()
        .map(|m| m.current.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn in_plan_claude_stays_in_its_asking_mode_and_its_touch_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "claude-plan-mode-exit-plan.toml",
        logged_options(dir.path(), Mode::Plan),
    )
    .await;
    assert_eq!(agent_mode_now(&app), "default", "kept in its asking mode");
    assert!(!app.state().agent_enforces_plan());
    // In its own plan mode Claude ran this unasked; in `default` it asks,
    // and Plan refuses it.
    send(&mut app, "touch");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(!text.contains("ran unasked"), "{text}");
    assert!(
        text.contains("permission outcome: selected reject"),
        "{text}"
    );
    assert!(!dir.path().join("created-in-plan.txt").exists());
    // ExitPlanMode fails outside the agent's plan mode, as with the real agent.
    send(&mut app, "plan the work");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("not in plan mode"));
    // Shift+Tab round to Plan again: the agent is never moved.
    for _ in 0..3 {
        key(&mut app, Action::key(Code::BackTab));
    }
    assert_eq!(app.state().gate.mode, Mode::Plan);
    send(&mut app, "touch");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(agent_mode_now(&app), "default");
    assert!(!dir.path().join("created-in-plan.txt").exists());
}

#[tokio::test]
async fn claude_moving_itself_into_its_plan_mode_in_plan_is_moved_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "claude-plan-mode-exit-plan.toml",
        logged_options(dir.path(), Mode::Plan),
    )
    .await;
    send(&mut app, "sneak");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    pump_until(&mut app, "the agent back in default", |s| {
        s.session
            .agent_modes
            .as_ref()
            .is_some_and(|m| m.current == "default")
    })
    .await;
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("moved itself into its mode `Plan Mode`")),
        "{:?}",
        errors(app.state())
    );
    send(&mut app, "touch");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(!dir.path().join("created-in-plan.txt").exists());
}

#[tokio::test]
async fn claude_exit_plan_mode_works_when_agent_plan_mode_is_opted_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        agent_plan_mode: Some("plan".into()),
        ..logged_options(dir.path(), Mode::Plan)
    };
    let mut app = started_scenario(dir.path(), "claude-plan-mode-exit-plan.toml", options).await;
    assert_eq!(
        agent_mode_now(&app),
        "plan",
        "moved into its plan mode at start"
    );
    assert!(app.state().agent_enforces_plan(), "the footer says so");
    send(&mut app, "plan the work");
    pump_until(&mut app, "the ExitPlanMode card or the end", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    let text = agent_text(app.state());
    assert!(!text.contains("not in plan mode"), "{text}");
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "ExitPlanMode asks the user"
    );
    // Reject: keep planning.
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    // Leaving Plan moves the agent back to the mode that asks.
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Default);
    assert!(!app.state().agent_enforces_plan());
    pump_until(&mut app, "the agent back in default", |s| {
        s.session
            .agent_modes
            .as_ref()
            .is_some_and(|m| m.current == "default")
    })
    .await;
    // Shift+Tab on to Auto and round to Plan: the agent is never moved into
    // a mode that does not ask, except the plan mode the user opted into.
    key(&mut app, Action::key(Code::BackTab));
    key(&mut app, Action::key(Code::BackTab));
    assert_eq!(app.state().gate.mode, Mode::Plan);
    pump_until(&mut app, "the agent in plan again", |s| {
        s.session
            .agent_modes
            .as_ref()
            .is_some_and(|m| m.current == "plan")
    })
    .await;
}

#[tokio::test]
async fn outside_plan_claude_stays_in_its_asking_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "claude-plan-mode-exit-plan.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    let modes = app.state().session.agent_modes.clone().expect("modes");
    assert_eq!(modes.current, "default");
    send(&mut app, "plan the work");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("not in plan mode"));
}

// Item 5: additionalDirectories, session/close, session/list pages.

fn demo_record(dir: &Path, session: &str) -> serde_json::Value {
    let path = dir.join(".demo-state").join(format!("{session}.json"));
    let text = std::fs::read_to_string(&path).expect("the demo agent's record");
    serde_json::from_str(&text).expect("json")
}

#[tokio::test]
async fn roots_go_to_the_agent_as_additional_directories_when_it_takes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let other = tempfile::tempdir().expect("other root");
    let options = ChatOptions {
        extra_roots: vec![other.path().to_path_buf()],
        ..logged_options(dir.path(), Mode::Default)
    };
    let app = started_scenario(
        dir.path(),
        "agent-takes-additional-directories.toml",
        options.clone(),
    )
    .await;
    let session = app.state().session_id().expect("open").to_string();
    let record = demo_record(dir.path(), &session);
    let expected: PathBuf = other.path().canonicalize().expect("canonical");
    assert_eq!(
        record["additionalDirectories"],
        serde_json::json!([expected.display().to_string()])
    );
    // An agent that does not advertise them gets none.
    let plain = started_with(dir.path(), options).await;
    let session = plain.state().session_id().expect("open").to_string();
    assert!(
        demo_record(dir.path(), &session)
            .get("additionalDirectories")
            .is_none()
    );
}

#[tokio::test]
async fn closing_a_chat_sends_session_close_when_the_agent_supports_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "codex-closes-sessions.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "chat 2", |ws| {
        ws.chats.len() == 2 && ready_all(ws)
    })
    .await;
    let closed = chat(&app, 2).session_id().expect("open").to_string();
    let kept = chat(&app, 1).session_id().expect("open").to_string();
    key(&mut app, Action::CloseChat);
    assert_eq!(app.ws.chats.len(), 1);
    let waited = tokio::time::timeout(GUARD, async {
        while demo_record(dir.path(), &closed).get("closedAt").is_none() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "session/close reached the agent");
    assert!(demo_record(dir.path(), &kept).get("closedAt").is_none());
    // The other chat goes on.
    send(&mut app, "still here");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("still here"));
}

#[tokio::test]
async fn session_list_follows_next_cursor_through_every_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = "agent-lists-sessions-in-pages.toml";
    let mut first =
        started_scenario(dir.path(), file, logged_options(dir.path(), Mode::Default)).await;
    let mut sessions = Vec::new();
    for n in 0..3 {
        if n > 0 {
            key(&mut first, Action::NewChat);
            pump_ws(&mut first, "a new chat", ready_all).await;
        }
        send(&mut first, &format!("listed session {n}"));
        pump_until(&mut first, "a turn", |s| !s.is_busy()).await;
        sessions.push(first.state().session_id().expect("open").to_string());
    }
    first.shutdown().await;

    let mut app =
        started_scenario(dir.path(), file, logged_options(dir.path(), Mode::Default)).await;
    key(&mut app, Action::PastChats);
    pump_ws(&mut app, "every page", |ws| {
        ws.picker().is_some_and(|p| {
            sessions
                .iter()
                .all(|s| p.items().iter().any(|c| &c.session_id == s))
        })
    })
    .await;
}

#[tokio::test]
async fn a_replay_that_ends_after_the_load_answer_is_not_shown_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, one, _) =
        crash_and_restart(dir.path(), Some("gemini-replays-after-its-answer.toml")).await;
    assert_eq!(chat(&app, 1).session_id(), Some(one.as_str()));
    key(&mut app, Action::GoToChat(1));
    // The title comes after the replay's late end: it has been handled.
    pump_until(&mut app, "the replay's end", |s| {
        s.session.title.as_deref() == Some("replayed")
    })
    .await;
    assert_eq!(users(app.state()), ["hello one"], "nothing shown twice");
    assert_eq!(
        agent_text(app.state()).matches("hello one").count(),
        1,
        "{}",
        agent_text(app.state())
    );
    // A turn after it is shown as usual.
    send(&mut app, "after the restart");
    pump_until(&mut app, "a turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("after the restart"));
    app.shutdown().await;
}

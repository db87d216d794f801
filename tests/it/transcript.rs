//! The transcript as a daily driver, end to end with the demo agent: search
//! in it, the line left on quit and `--resume ID`, the turn-end alert.

use std::path::Path;
use std::time::Duration;
use warden::state::Code;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use warden::app::{App, ChatOptions, Extras, Notify};
use warden::policy::Mode;
use warden::state::{Action, ChatState, EntryKind, Msg};

use crate::common::*;

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

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, Action::ch(c));
    }
}

#[tokio::test]
async fn search_finds_and_highlights_the_agents_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "please echo zanzibar");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(agent_text(app.state()).contains("zanzibar"));
    key(&mut app, Action::Search);
    typed(&mut app, "ZANZIBAR");
    key(&mut app, Action::key(Code::Enter));
    let state = app.state();
    let search = state.view.search.clone().expect("open");
    let current = search.current.expect("a match");
    assert!(search.count >= 2, "the prompt and the answer: {search:?}");
    assert!(
        matches!(
            state.session.transcript.entries()[current.entry].kind,
            EntryKind::Agent(_)
        ),
        "the newest match is the answer's"
    );
    assert!(
        state.view.composer.is_empty(),
        "the query is not in the composer"
    );
    // On screen: the matches are marked.
    let mut views = warden::ui::Views::new();
    let mut term = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
    let buf = term
        .draw(|f| warden::ui::draw_workspace(f, &app.ws, &mut views))
        .expect("draw")
        .buffer
        .clone();
    let marked: String = buf
        .content()
        .iter()
        .filter(|c| c.modifier.contains(Modifier::REVERSED))
        .map(|c| c.symbol())
        .collect();
    assert!(marked.contains("zanzibar"), "{marked:?}");
    key(&mut app, Action::key(Code::Esc));
    assert_eq!(app.state().view.search, None);
    app.shutdown().await;
}

#[tokio::test]
async fn quit_names_the_chat_and_resume_with_that_id_reopens_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded(dir.path()),
    ))
    .await;
    assert!(app.resume_hints().is_empty(), "no record before a word");
    send(&mut app, "remember the lighthouse");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let hints = app.resume_hints();
    let [hint] = hints.as_slice() else {
        panic!("{hints:?}");
    };
    let id = hint
        .strip_prefix("To reopen this chat: warden --resume ")
        .expect("the line names the command")
        .to_string();
    assert!(!id.is_empty() && !id.contains(' '), "{hint}");
    app.shutdown().await;

    // `warden --resume ID`: the picker, the id typed, the chat reopens; a
    // unique prefix of the id does too (issue 33 item 8).
    let mut again = ready(App::with_options(
        demo_command(dir.path(), &[]),
        recorded(dir.path()),
    ))
    .await;
    let prefix = &id[..id.len().min(6)];
    assert!(prefix.len() < id.len(), "{id}");
    key(&mut again, Action::PastChats);
    again.handle(Msg::Action(Action::Paste(prefix.to_string())));
    again.settle_disk().await;
    again.reopen_exact(prefix);
    let reopened = tokio::time::timeout(GUARD, async {
        while again.resume_hints().is_empty() {
            match again.next_agent_event().await {
                Some(event) => again.on_agent_event(event),
                None => panic!("agent event channel closed"),
            }
        }
    })
    .await;
    assert!(reopened.is_ok(), "timed out reopening");
    assert_eq!(users(again.state()), ["remember the lighthouse"]);
    assert_eq!(again.resume_hints().len(), 1, "the untouched chat gave way");
    assert!(again.resume_hints()[0].ends_with(&id), "the same record");
    again.shutdown().await;
}

#[tokio::test]
async fn a_turn_ending_while_the_terminal_is_unfocused_alerts_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        // Every turn is "long"; neither bell nor OSC 9 is written here.
        notify: Notify {
            bell: false,
            desktop: false,
            turn_end_after: Some(Duration::ZERO),
        },
        ..logged_options(dir.path(), Mode::Default)
    };
    let mut app = started_with(dir.path(), options).await;
    let mut extras = Extras::default();

    // Focused: no alert.
    send(&mut app, "hello one");
    assert!(extras.after_events(&app).is_empty());
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(extras.after_events(&app).is_empty(), "focused");

    // Away: one alert when the turn ends.
    extras.on_focus(false);
    send(&mut app, "hello two");
    assert!(extras.after_events(&app).is_empty(), "still working");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let fired = extras.after_events(&app);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(fired[0].contains("finished a turn"), "{fired:?}");
    assert!(extras.after_events(&app).is_empty(), "once");
    app.shutdown().await;
}

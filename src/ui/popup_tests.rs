//! Snapshots of what the composer shows above itself.

use crate::state::Code;
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::super::tests::buffer_text;
use super::super::theme::Theme;
use super::super::{View, draw};
use crate::model::{SessionInfo, SessionUpdate, SlashCommand};
use crate::state::{Action, ChatState, DraftsMsg, Msg};

fn ready() -> ChatState {
    let mut s = ChatState::new("demo", "~/src/warden");
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    s
}

fn screen(state: &ChatState, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut view = View::with_theme(Theme::with_color(true));
    let done = term.draw(|f| draw(f, state, &mut view)).unwrap();
    buffer_text(done.buffer)
}

fn keys(s: &mut ChatState, text: &str) {
    for c in text.chars() {
        s.update(Msg::Action(Action::ch(c)));
    }
}

#[test]
fn slash_commands_list_80x24() {
    let mut s = ready();
    s.update(Msg::Update(SessionUpdate::AvailableCommands(vec![
        SlashCommand {
            name: "review".into(),
            description: "Review the working tree's changes".into(),
            hint: Some("<focus>".into()),
        },
        SlashCommand {
            name: "evil\u{1b}[2J".into(),
            description: "an escape \u{1b}]52;c;x\u{7} in it".into(),
            hint: None,
        },
    ])));
    keys(&mut s, "/");
    assert_snapshot!(screen(&s, 80, 24));
    keys(&mut s, "e");
    // Past warden's /export and /exit, to the agent's.
    s.update(Msg::Action(Action::key(Code::Down)));
    s.update(Msg::Action(Action::key(Code::Down)));
    assert_snapshot!("slash_commands_filtered_80x24", screen(&s, 80, 24));
}

#[test]
fn a_command_shows_its_input_hint_60x8() {
    let mut s = ready();
    s.update(Msg::Update(SessionUpdate::AvailableCommands(vec![
        SlashCommand {
            name: "review".into(),
            description: "Review".into(),
            hint: Some("<focus>".into()),
        },
    ])));
    keys(&mut s, "/review ");
    assert_snapshot!(screen(&s, 60, 8));
}

#[test]
fn queued_messages_above_the_composer_80x12() {
    let mut s = ready();
    keys(&mut s, "first");
    s.update(Msg::Action(Action::key(Code::Enter)));
    keys(&mut s, "then run the tests");
    s.update(Msg::Action(Action::key(Code::Enter)));
    s.update(Msg::Action(Action::Paste(
        "and a second\nmessage of two lines".into(),
    )));
    s.update(Msg::Action(Action::key(Code::Enter)));
    keys(&mut s, "typing");
    assert_snapshot!(screen(&s, 80, 12));
}

#[test]
fn history_search_80x16() {
    let mut s = ready();
    s.update(Msg::Drafts(DraftsMsg::HistoryLoaded(vec![
        "cargo test --lib".into(),
        "explain the parser".into(),
        "cargo clippy\nand fix it".into(),
    ])));
    s.update(Msg::Action(Action::Restart));
    keys(&mut s, "cargo");
    assert_snapshot!(screen(&s, 80, 16));
}

#[test]
fn file_finder_80x14() {
    let mut s = ready();
    keys(&mut s, "explain @");
    s.update(Msg::Drafts(DraftsMsg::Files(vec![
        "README.md".into(),
        "src/state/composer.rs".into(),
        "src/ui/composer.rs".into(),
        "tests/it/composer.rs".into(),
    ])));
    keys(&mut s, "compo");
    s.update(Msg::Action(Action::key(Code::Down)));
    assert_snapshot!(screen(&s, 80, 14));
}

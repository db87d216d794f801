//! The composer's memory: history, queue, cleared text, slash commands.

use crate::state::Code;
use pretty_assertions::assert_eq;

use super::*;
use crate::model::{SessionInfo, SessionUpdate, SlashCommand, StopReason};
use crate::state::infos;
use crate::state::{EntryKind, Msg};

fn ready() -> ChatState {
    let mut s = ChatState::new("demo", "/w");
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    s
}

fn key(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

fn typed(s: &mut ChatState, text: &str) {
    key(s, Action::Paste(text.into()));
}

fn send(s: &mut ChatState, text: &str) -> Vec<Effect> {
    typed(s, text);
    key(s, Action::key(Code::Enter))
}

/// End the turn; its end checkpoint (the first effect of every turn end)
/// left out.
fn end_turn(s: &mut ChatState, reason: StopReason) -> Vec<Effect> {
    let mut effects = s.update(Msg::TurnEnded(reason));
    if effects.first()
        == Some(&Effect::Checkpoint(
            crate::state::checkpoints::CheckpointEffect::TurnEnded,
        ))
    {
        effects.remove(0);
    }
    effects
}

#[test]
fn up_and_down_walk_earlier_prompts_and_give_the_draft_back() {
    let mut s = ready();
    s.update(Msg::Drafts(DraftsMsg::HistoryLoaded(vec![
        "from an earlier run".into(),
    ])));
    send(&mut s, "first");
    end_turn(&mut s, StopReason::EndTurn);
    send(&mut s, "second\nline two");
    end_turn(&mut s, StopReason::EndTurn);
    assert_eq!(
        s.view.drafts.remembered, 2,
        "only this run's prompts are new"
    );
    typed(&mut s, "draft");
    key(&mut s, Action::key(Code::Up));
    assert_eq!(s.view.composer.text(), "second\nline two");
    // On the entry's last line, Up moves inside it first.
    key(&mut s, Action::key(Code::Up));
    assert_eq!(s.view.composer.text(), "second\nline two");
    key(&mut s, Action::key(Code::Up));
    assert_eq!(s.view.composer.text(), "first");
    key(&mut s, Action::key(Code::Up));
    assert_eq!(s.view.composer.text(), "from an earlier run");
    key(&mut s, Action::key(Code::Up));
    assert_eq!(
        s.view.composer.text(),
        "from an earlier run",
        "the oldest stays"
    );
    key(&mut s, Action::key(Code::Down));
    assert_eq!(s.view.composer.text(), "first");
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::key(Code::Down));
    assert_eq!(
        s.view.composer.text(),
        "draft",
        "past the newest: the draft again"
    );
    // Not browsing: Down in a one-line message does nothing to it.
    key(&mut s, Action::key(Code::Down));
    assert_eq!(s.view.composer.text(), "draft");
}

#[test]
fn ctrl_r_searches_the_history_and_restarts_only_a_dead_agent() {
    let mut s = ready();
    for text in ["cargo test", "git status", "cargo build"] {
        send(&mut s, text);
        end_turn(&mut s, StopReason::EndTurn);
    }
    assert!(key(&mut s, Action::Restart).is_empty(), "no restart");
    for c in "cargo".chars() {
        key(&mut s, Action::ch(c));
    }
    let popup = s.composer_popup().unwrap();
    let labels: Vec<_> = popup.items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels, ["cargo build", "cargo test"]);
    key(&mut s, Action::Restart);
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(s.view.composer.text(), "cargo test");
    assert!(s.composer_popup().is_none());
    assert!(s.view.drafts.search.is_none());
    // Esc closes the search and leaves the message alone.
    key(&mut s, Action::Restart);
    key(&mut s, Action::ch('x'));
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.composer.text(), "cargo test");
    // Once the agent is down, Ctrl-R restarts it.
    s.update(Msg::AgentExited {
        status: "exit 1".into(),
        stderr_tail: Vec::new(),
    });
    assert_eq!(key(&mut s, Action::Restart), vec![Effect::RestartAgent]);
}

#[test]
fn a_cleared_message_comes_back_with_ctrl_y() {
    let mut s = ready();
    typed(&mut s, "a long message");
    key(&mut s, Action::Interrupt(std::time::Instant::now()));
    assert!(s.view.composer.is_empty());
    assert!(!s.view.quitting, "the first Ctrl-C only clears");
    key(&mut s, Action::Restore);
    assert_eq!(s.view.composer.text(), "a long message");
    key(&mut s, Action::WordLeft);
    key(&mut s, Action::KillLineStart);
    assert_eq!(s.view.composer.text(), "message");
    key(&mut s, Action::Restore);
    assert_eq!(s.view.composer.text(), "a long message");
}

#[test]
fn enter_during_a_turn_queues_and_the_end_of_the_turn_sends() {
    let mut s = ready();
    send(&mut s, "first");
    assert!(s.is_busy());
    assert!(send(&mut s, "second").is_empty());
    assert!(send(&mut s, "third").is_empty());
    assert_eq!(s.view.drafts.queue, ["second", "third"]);
    assert!(s.view.composer.is_empty());
    // Alt-Up takes the newest back to edit; Enter queues it again.
    key(&mut s, Action::EditQueued);
    assert_eq!(s.view.composer.text(), "third");
    key(&mut s, Action::key(Code::Backspace));
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(s.view.drafts.queue, ["second", "thir"]);
    let effects = end_turn(&mut s, StopReason::EndTurn);
    assert_eq!(effects, vec![Effect::SendPrompt("second".into())]);
    let effects = end_turn(&mut s, StopReason::EndTurn);
    assert_eq!(effects, vec![Effect::SendPrompt("thir".into())]);
    assert!(end_turn(&mut s, StopReason::EndTurn).is_empty());
    let users: Vec<_> = s
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::User(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["first", "second", "thir"]);
}

#[test]
fn a_queue_waits_after_esc_and_ctrl_s_sends_it_now() {
    let mut s = ready();
    send(&mut s, "first");
    send(&mut s, "queued");
    key(&mut s, Action::key(Code::Esc));
    assert!(end_turn(&mut s, StopReason::Cancelled).is_empty());
    assert_eq!(s.view.drafts.queue, ["queued"]);
    assert!(s.view.notice.as_deref().unwrap().contains("Ctrl+S"));
    assert_eq!(
        key(&mut s, Action::SendNow),
        vec![Effect::SendPrompt("queued".into())]
    );
    // During a turn, Ctrl-S queues what is typed and cancels the turn...
    typed(&mut s, "now");
    assert_eq!(key(&mut s, Action::SendNow), vec![Effect::CancelTurn]);
    // ... whose end sends it.
    assert_eq!(
        end_turn(&mut s, StopReason::Cancelled),
        vec![Effect::SendPrompt("now".into())]
    );
}

/// A message pulled back with Alt-Up and sent again goes back to its
/// place: not ahead of the one queued before it, even when the queue
/// waits after Esc (Enter then sends the queue from its start).
#[test]
fn a_message_pulled_back_and_sent_again_keeps_its_place() {
    let mut s = ready();
    send(&mut s, "first");
    send(&mut s, "second");
    send(&mut s, "third");
    key(&mut s, Action::key(Code::Esc));
    assert!(end_turn(&mut s, StopReason::Cancelled).is_empty());
    assert_eq!(s.view.drafts.queue, ["second", "third"]);
    key(&mut s, Action::EditQueued);
    assert_eq!(s.view.composer.text(), "third");
    typed(&mut s, "!");
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(effects, vec![Effect::SendPrompt("second".into())]);
    assert_eq!(s.view.drafts.queue, ["third!"]);
    assert_eq!(
        end_turn(&mut s, StopReason::EndTurn),
        vec![Effect::SendPrompt("third!".into())]
    );
    // During a turn it goes back to its place as well.
    send(&mut s, "fourth");
    send(&mut s, "fifth");
    key(&mut s, Action::EditQueued);
    send(&mut s, "!");
    assert_eq!(s.view.drafts.queue, ["fourth", "fifth!"]);
}

fn commands() -> Vec<SlashCommand> {
    vec![
        SlashCommand {
            name: "review".into(),
            description: "Review my changes".into(),
            hint: Some("<focus>".into()),
        },
        SlashCommand {
            name: "init".into(),
            description: "Write an AGENTS.md".into(),
            hint: None,
        },
        SlashCommand {
            name: "model".into(),
            description: "the agent's own".into(),
            hint: None,
        },
    ]
}

#[test]
fn an_agent_command_named_like_wardens_is_not_offered_and_says_whose_it_is() {
    let mut s = ready();
    let mut spoofs = commands();
    spoofs.push(SlashCommand {
        name: "\u{0435}xport".into(),
        description: format!("write this chat as Markdown (warden){}", " ".repeat(200)),
        hint: None,
    });
    s.update(Msg::Update(SessionUpdate::AvailableCommands(spoofs)));
    key(&mut s, Action::ch('/'));
    let popup = s.composer_popup().unwrap();
    assert!(
        !popup.items.iter().any(|i| i.label.contains('\u{0435}')),
        "{popup:?}"
    );
    let review = popup.items.iter().find(|i| i.label == "/review").unwrap();
    assert_eq!(review.detail, "agent: Review my changes");
    let export = popup.items.iter().find(|i| i.label == "/export").unwrap();
    assert!(export.detail.starts_with("warden: "), "{export:?}");
}

#[test]
fn slash_lists_commands_filters_completes_and_shows_the_hint() {
    let mut s = ready();
    s.update(Msg::Update(SessionUpdate::AvailableCommands(commands())));
    key(&mut s, Action::ch('/'));
    let popup = s.composer_popup().unwrap();
    let labels: Vec<_> = popup.items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "/mode",
            "/model",
            "/new",
            "/resume",
            "/export",
            "/undo",
            "/redo",
            "/changes",
            "/checkpoints",
            "/help",
            "/remote",
            "/clear",
            "/usage",
            "/permissions",
            "/exit",
            "/review",
            "/init"
        ],
        "warden's first; the agent's /model is shadowed"
    );
    key(&mut s, Action::ch('r'));
    let labels: Vec<_> = s
        .composer_popup()
        .unwrap()
        .items
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(
        labels,
        [
            "/resume",
            "/redo",
            "/remote",
            "/review",
            "/export",
            "/clear",
            "/permissions"
        ],
        "starts with, then contains"
    );
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(s.view.composer.text(), "/review ");
    assert_eq!(s.composer_hint().as_deref(), Some("<focus>"));
    assert!(s.composer_popup().is_none(), "a space closes the list");
    typed(&mut s, "the parser");
    assert_eq!(s.composer_hint(), None);
    // An agent's command goes as the prompt text.
    assert_eq!(
        key(&mut s, Action::key(Code::Enter)),
        vec![Effect::SendPrompt("/review the parser".into())]
    );
}

#[test]
fn enter_on_an_agent_command_with_input_completes_it_first() {
    let mut s = ready();
    s.update(Msg::Update(SessionUpdate::AvailableCommands(commands())));
    typed(&mut s, "/rev");
    assert!(key(&mut s, Action::key(Code::Enter)).is_empty());
    assert_eq!(s.view.composer.text(), "/review ");
    key(&mut s, Action::Interrupt(std::time::Instant::now()));
    typed(&mut s, "/in");
    assert_eq!(
        key(&mut s, Action::key(Code::Enter)),
        vec![Effect::SendPrompt("/init".into())]
    );
    // Esc closes the list without cancelling anything.
    typed(&mut s, "/");
    key(&mut s, Action::key(Code::Esc));
    assert!(s.composer_popup().is_none());
    assert_eq!(s.view.composer.text(), "/");
}

#[test]
fn wardens_own_commands_run_here() {
    let mut s = ready();
    send(&mut s, "/mode plan");
    assert_eq!(s.gate.mode, crate::policy::Mode::Plan);
    assert!(!s.is_busy(), "nothing was sent");
    assert_eq!(
        send(&mut s, "/export notes.md"),
        vec![Effect::Drafts(DraftsEffect::Export(Some(
            "notes.md".into()
        )))]
    );
    assert_eq!(
        send(&mut s, "/new"),
        vec![Effect::Drafts(DraftsEffect::Workspace(Action::NewChat))]
    );
    send(&mut s, "/model");
    assert!(matches!(s.view.focus.modal, Some(Modal::ModeMenu(_))));
    key(&mut s, Action::key(Code::Esc));
    send(&mut s, "/help");
    let last = s.session.transcript.entries().last().unwrap();
    assert!(
        matches!(&last.kind, EntryKind::Info(t) if t.contains("/export") && t.contains("Ctrl+S"))
    );
    assert_eq!(
        key(&mut s, Action::Editor),
        vec![Effect::Drafts(DraftsEffect::OpenEditor(String::new()))]
    );
    s.update(Msg::Drafts(DraftsMsg::Edited(Ok(
        "from the editor\n".into()
    ))));
    assert_eq!(s.view.composer.text(), "from the editor");
}

#[test]
fn the_composers_keys() {
    use crate::tui::keymap::{Input, map_key};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let ctrl = KeyModifiers::CONTROL;
    for (code, modifiers, want) in [
        (KeyCode::Char('s'), ctrl, Action::SendNow),
        (KeyCode::Char('y'), ctrl, Action::Restore),
        (KeyCode::Char('x'), ctrl, Action::Editor),
        (KeyCode::Up, KeyModifiers::ALT, Action::EditQueued),
        (KeyCode::Char('r'), ctrl, Action::Restart),
        (KeyCode::Up, KeyModifiers::NONE, Action::Up),
    ] {
        // The key reaches the state as pressed; the composer reads it so.
        let meaning = match map_key(&KeyEvent::new(code, modifiers), true) {
            Some(Input::Action(input)) => Some(Input::Action(crate::keys::split(input).0)),
            other => other,
        };
        assert_eq!(meaning, Some(Input::Action(want)), "{code:?}");
    }
}

#[test]
fn at_opens_a_fuzzy_file_finder_and_inserts_the_path() {
    let mut s = ready();
    typed(&mut s, "look at");
    key(&mut s, Action::ch(' '));
    let effects = key(&mut s, Action::ch('@'));
    assert_eq!(effects, vec![Effect::Drafts(DraftsEffect::ListFiles)]);
    s.update(Msg::Drafts(DraftsMsg::Files(vec![
        "README.md".into(),
        "src/state/composer.rs".into(),
        "src/ui/composer.rs".into(),
        "docs/my notes.md".into(),
    ])));
    for c in "stcomp".chars() {
        key(&mut s, Action::ch(c));
    }
    let labels: Vec<_> = s
        .composer_popup()
        .unwrap()
        .items
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(labels, ["src/state/composer.rs"]);
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(s.view.composer.text(), "look at @src/state/composer.rs ");
    assert!(s.composer_popup().is_none());
    // A path with a space is quoted; Esc closes the finder, keeping the text.
    typed(&mut s, "and ");
    key(&mut s, Action::ch('@'));
    for c in "notes".chars() {
        key(&mut s, Action::ch(c));
    }
    key(&mut s, Action::key(Code::Enter));
    assert!(
        s.view
            .composer
            .text()
            .ends_with("and @\"docs/my notes.md\" ")
    );
    // An @ inside a word is typed.
    typed(&mut s, "me");
    assert!(key(&mut s, Action::ch('@')).is_empty());
    assert!(s.view.drafts.mention.is_none());
    key(&mut s, Action::ch(' '));
    key(&mut s, Action::ch('@'));
    key(&mut s, Action::ch('x'));
    key(&mut s, Action::key(Code::Esc));
    assert!(s.view.drafts.mention.is_none());
    assert!(s.view.composer.text().ends_with("@x"));
}

#[test]
fn a_pasted_image_path_becomes_a_mention() {
    use super::pasted_image;
    assert_eq!(
        pasted_image("/tmp/shot.png").as_deref(),
        Some("/tmp/shot.png")
    );
    assert_eq!(
        pasted_image("'/tmp/my shot.PNG'\n").as_deref(),
        Some("/tmp/my shot.PNG")
    );
    assert_eq!(
        pasted_image("/tmp/my\\ shot.jpg").as_deref(),
        Some("/tmp/my shot.jpg")
    );
    assert_eq!(
        pasted_image("file:///tmp/a%20b.webp").as_deref(),
        Some("/tmp/a b.webp")
    );
    for not in [
        "shot.png",
        "/tmp/a.txt",
        "see /tmp/a.png",
        "/tmp/a.png\n/tmp/b.png",
    ] {
        assert_eq!(pasted_image(not), None, "{not}");
    }
    let mut s = ready();
    key(&mut s, Action::Paste("'/tmp/my shot.png'".into()));
    assert_eq!(s.view.composer.text(), "@\"/tmp/my shot.png\" ");
    key(&mut s, Action::Paste("just text".into()));
    assert_eq!(s.view.composer.text(), "@\"/tmp/my shot.png\" just text");
}

fn offered(s: &mut ChatState, typed_text: &str) -> Vec<String> {
    s.view.composer.set(typed_text);
    s.composer_popup()
        .map(|p| p.items.iter().map(|i| i.label.clone()).collect())
        .unwrap_or_default()
}

/// `/login` only when the agent lists ways to sign in: not offered, and
/// refused with a word, otherwise.
#[test]
fn login_is_offered_only_when_the_agent_lists_sign_in_methods() {
    let mut s = ready();
    assert!(!offered(&mut s, "/lo").contains(&"/login".to_string()));
    s.view.composer.take();
    assert!(send(&mut s, "/login").is_empty());
    assert!(
        s.view
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("no way to sign in")),
        "{:?}",
        s.view.notice
    );
    s.update(Msg::Drafts(DraftsMsg::SignIn(true)));
    assert!(offered(&mut s, "/lo").contains(&"/login".to_string()));
    s.view.composer.take();
    assert_eq!(
        send(&mut s, "/login"),
        vec![Effect::Drafts(DraftsEffect::Login(None))]
    );
}

#[test]
fn exit_permissions_and_usage_commands() {
    let mut s = ready();
    for name in ["/clear", "/usage", "/permissions", "/exit"] {
        assert!(offered(&mut s, name).contains(&name.to_string()), "{name}");
        s.view.composer.take();
    }
    send(&mut s, "/permissions");
    assert!(matches!(s.view.focus.modal, Some(Modal::Rules { .. })));
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus.modal, None);

    send(&mut s, "/usage");
    assert!(
        infos(&s).last().is_some_and(|l| l.contains("has not said")),
        "{:?}",
        infos(&s)
    );
    s.update(Msg::Update(SessionUpdate::Usage(crate::model::Usage {
        used: Some(50_000),
        size: Some(200_000),
        cost: Some((0.5, "USD".into())),
        turn_tokens: None,
    })));
    s.update(Msg::Update(SessionUpdate::Usage(crate::model::Usage {
        turn_tokens: Some(1_200),
        ..Default::default()
    })));
    send(&mut s, "/cost");
    assert_eq!(
        infos(&s).last().map(String::as_str),
        Some(
            "usage: context: 50k of 200k tokens (25%) · last turn: 1.2k tokens · \
             turns so far: 1.2k tokens · cost so far: $0.50"
        )
    );

    assert!(send(&mut s, "/exit").contains(&Effect::Quit));
}

/// `/clear`: a new session in this chat; refused while a turn runs.
#[test]
fn clear_starts_a_new_session_with_an_empty_transcript() {
    let mut s = ready();
    send(&mut s, "first");
    assert!(send(&mut s, "/clear").is_empty(), "refused during a turn");
    assert!(s.view.notice.as_deref().is_some_and(|n| n.contains("Esc")));
    end_turn(&mut s, StopReason::EndTurn);
    let effects = send(&mut s, "/clear");
    assert_eq!(effects, vec![Effect::NewSession]);
    assert_eq!(s.session.connection, Connection::Starting);
    let kinds: Vec<_> = s
        .session
        .transcript
        .entries()
        .iter()
        .map(|e| e.kind.clone())
        .collect();
    assert!(
        matches!(kinds.as_slice(), [EntryKind::Info(t)] if t.starts_with("cleared")),
        "{kinds:?}"
    );
}

/// A paste of more than 20 lines is one marked line in the composer and the
/// transcript, and goes to the agent whole, even from the queue; the
/// history keeps it whole and brings it back folded (issue 33 item 8).
#[test]
fn a_long_paste_is_one_marked_line_and_is_sent_whole() {
    let mut s = ready();
    let big: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    key(&mut s, Action::Paste("explain ".into()));
    key(&mut s, Action::Paste(big.clone()));
    assert_eq!(s.view.composer.text(), "explain [pasted 5,000 lines]");
    let effects = key(&mut s, Action::key(Code::Enter));
    let sent: Vec<&String> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendPrompt(text) => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(sent, [&format!("explain {big}")]);
    assert!(
        s.session
            .transcript
            .entries()
            .iter()
            .any(|e| e.kind == EntryKind::User("explain [pasted 5,000 lines]".into()))
    );
    assert_eq!(
        s.view.drafts.history.last(),
        Some(&format!("explain {big}"))
    );
    // Queued during the turn: sent whole when it ends.
    key(&mut s, Action::Paste(big.clone()));
    key(&mut s, Action::key(Code::Enter));
    assert_eq!(s.view.drafts.queue, ["[pasted 5,000 lines #2]"]);
    let effects = end_turn(&mut s, StopReason::EndTurn);
    assert!(
        effects.contains(&Effect::SendPrompt(big.clone())),
        "{:?}",
        effects
            .iter()
            .map(|e| format!("{e:?}").chars().take(80).collect::<String>())
            .collect::<Vec<_>>()
    );
    // Up brings the remembered paste back folded.
    end_turn(&mut s, StopReason::EndTurn);
    key(&mut s, Action::Up);
    assert!(
        s.view.composer.text().starts_with("[pasted 5,000 lines"),
        "{}",
        s.view.composer.text().chars().take(40).collect::<String>()
    );
    // 20 lines are typed out as they are.
    s.view.composer.take();
    let short: String = (1..=20).map(|i| format!("l{i}\n")).collect();
    key(&mut s, Action::Paste(short.clone()));
    assert_eq!(s.view.composer.text(), short);
}

//! End to end: warden shows what real agents send as they meant it (issue
//! 13, "What shows wrong"). The demo agent plays each agent's recorded
//! behaviour from `assets/scenarios/`; the screen is drawn on a test backend
//! and read back as text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use warden::state::Code;

use warden::app::App;
use warden::model::StopReason;
use warden::state::{Action, ChatState, Connection, EntryKind, Msg, ToolState};

use crate::common::*;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
}

async fn playing(dir: &Path, name: &str) -> App {
    let file = scenario(name).display().to_string();
    started(dir, &["--scenario", &file]).await
}

/// Send `prompt` and wait for its turn to end.
async fn turn(app: &mut App, prompt: &str) {
    send(app, prompt);
    pump_until(app, "the turn to end", |s| !s.is_busy()).await;
}

/// The tool call entries of the transcript, in order: (id, state).
fn tools(state: &ChatState) -> Vec<(String, ToolState)> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Tool(tool) => Some((tool.call.id.clone(), tool.state)),
            _ => None,
        })
        .collect()
}

fn agent_blocks(state: &ChatState) -> Vec<String> {
    state
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Agent(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Item 1: codex-acp's own terminals stream in `_meta`; their output shows
/// in the tool call through the terminal emulator, escapes interpreted.
#[tokio::test]
async fn codex_meta_terminal_output_shows_in_its_tool_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "codex-meta-terminal.toml").await;
    turn(&mut app, "list the files").await;

    let text = screen(app.state(), 80, 40);
    assert!(text.contains("seed.txt"), "{text}");
    assert!(text.contains("notes.txt"), "{text}");
    assert!(text.contains("exited: exit status 0"), "{text}");
    assert!(!text.contains("no output yet"), "{text}");
    assert!(!text.contains("pwned"), "an OSC title is not text: {text}");
    assert!(
        !text.contains("[32m"),
        "colour codes are interpreted: {text}"
    );
    assert!(
        !text.contains("formatted_output"),
        "a call with content does not dump its rawOutput: {text}"
    );
}

/// Item 1: without content, a tool call shows its `rawOutput` (codex-acp
/// when the client does not take `_meta` terminals).
#[tokio::test]
async fn codex_raw_output_shows_when_a_call_has_no_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "codex-meta-terminal.toml").await;
    turn(&mut app, "raw").await;

    let text = screen(app.state(), 80, 30);
    let tool_row = text
        .lines()
        .position(|l| l.contains("List /work/cwd"))
        .expect("the tool call is shown");
    let below: Vec<&str> = text.lines().skip(tool_row + 1).take(3).collect();
    assert!(
        below.iter().any(|l| l.trim() == "seed.txt"),
        "the output under the call: {below:?}\n{text}"
    );
}

/// Item 5: an argv command is shown as the policy reads it: the script of
/// a shell given `-lc`, as a shell would need it typed.
#[tokio::test]
async fn argv_commands_are_shown_shell_quoted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "codex-meta-terminal.toml").await;
    turn(&mut app, "touch").await;

    let text = screen(app.state(), 100, 40);
    assert!(
        text.contains(r#"$ touch 'my file.txt' && echo "done""#),
        "{text}"
    );
}

/// Item 2: Claude's tool output is markdown: its "```console" fence is a
/// code block, not literal backticks (also on a refusal).
#[tokio::test]
async fn claude_fenced_tool_output_renders_as_markdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "claude-markdown-tool-output.toml").await;
    turn(&mut app, "run it").await;

    let text = screen(app.state(), 80, 30);
    assert!(text.contains("hello-from-mock-claude"), "{text}");
    assert!(
        text.contains("The user doesn't want to proceed with this tool use."),
        "{text}"
    );
    assert!(!text.contains("```"), "no raw fences: {text}");
    assert!(
        !text.contains("console"),
        "the fence's language is no text: {text}"
    );
}

/// Item 3: the TS SDK example agent reuses `call_1` / `call_2` every turn.
/// Turn 1's rejected edit stays rejected, and turn 2's calls are its own.
#[tokio::test]
async fn reused_tool_call_ids_stay_in_their_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "ts-sdk-reused-call-ids.toml").await;

    send(&mut app, "go");
    pump_until(&mut app, "the first card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "turn 1 to end", |s| !s.is_busy()).await;

    send(&mut app, "go again");
    pump_until(&mut app, "the second card", |s| {
        !s.gate.approvals.is_empty()
    })
    .await;
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "turn 2 to end", |s| !s.is_busy()).await;

    assert_eq!(
        tools(app.state()),
        vec![
            ("call_1".to_string(), ToolState::Completed),
            ("call_2".to_string(), ToolState::Rejected),
            ("call_1".to_string(), ToolState::Completed),
            ("call_2".to_string(), ToolState::Completed),
        ]
    );
    // Each turn's call_2 sits after that turn's prompt.
    let entries = app.state().session.transcript.entries();
    let second_prompt = entries
        .iter()
        .position(|e| matches!(&e.kind, EntryKind::User(t) if t == "go again"))
        .expect("the second prompt");
    let rejected = entries
        .iter()
        .position(|e| matches!(&e.kind, EntryKind::Tool(t) if t.state == ToolState::Rejected))
        .expect("the rejected edit");
    assert!(rejected < second_prompt);
}

/// Item 4: chunks of another `messageId` start a new block, and so does
/// text after a tool call (even one announced before).
#[tokio::test]
async fn separate_messages_are_separate_blocks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "opencode-message-ids.toml").await;
    turn(&mut app, "plan").await;

    assert_eq!(
        agent_blocks(app.state()),
        vec![
            "I will read notes.txt".to_string(),
            "Here is my plan".to_string(),
            "Reading now.".to_string(),
            "Done reading.".to_string(),
        ]
    );
    let text = screen(app.state(), 80, 30);
    assert!(!text.contains("notes.txtHere"), "{text}");
}

/// Issue 33 item 8: codex's two answers of a turn, with nothing between
/// them but the `usage_update` codex sends after each, are two blocks.
#[tokio::test]
async fn codex_answers_without_a_tool_call_between_are_separate_blocks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = playing(dir.path(), "codex-two-answers-without-a-tool-call.toml").await;
    turn(&mut app, "list the files").await;
    let blocks = agent_blocks(app.state());
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert_eq!(blocks[0], "I will run a command.");
    assert!(
        blocks[1].starts_with("Final answer from fake model."),
        "{blocks:?}"
    );
    let text = screen(app.state(), 80, 30);
    assert!(!text.contains("command.Final"), "{text}");
}

/// Item 6: a message sent while the agent is still starting is queued,
/// said so, and sent once the agent is ready; the notice goes then.
#[tokio::test]
async fn a_message_sent_while_the_agent_starts_goes_once_it_is_ready() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(demo_command(dir.path(), &[]));
    app.start_agent().expect("the agent spawns");
    send(&mut app, "hello");
    let notice = app.state().view.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("queued: sent when the agent is ready (1 waiting)"),
        "{notice}"
    );
    assert!(app.state().view.composer.is_empty());
    pump_until(&mut app, "the queued message's turn", |s| {
        s.session
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::User(t) if t == "hello"))
    })
    .await;
    assert!(app.state().view.drafts.queue.is_empty());
    assert_eq!(app.state().view.notice, None);
}

/// Item 7: a stop reason this ACP version does not name is shown as itself.
#[test]
fn unknown_stop_reason_is_shown_as_itself() {
    let mut state = ChatState::new("demo", "/w");
    state.session.connection = Connection::Ready {
        session_id: "s".into(),
    };
    state.update(Msg::Action(Action::Paste("hi".into())));
    state.update(Msg::Action(Action::key(Code::Enter)));
    assert!(state.is_busy());
    state.update(Msg::TurnEnded(StopReason::Other("error".into())));
    assert!(
        infos(&state).contains(&"turn ended: error".to_string()),
        "{:?}",
        infos(&state)
    );
    assert_eq!(
        state.session.last_stop,
        Some(StopReason::Other("error".into()))
    );
}

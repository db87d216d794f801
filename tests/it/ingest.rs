//! The fast path for text chunks (`acp/fast.rs`): the same transcript as the
//! SDK's path, in the same order around what the SDK still handles.

use std::path::Path;

use warden::acp::AgentEvent;
use warden::app::{App, ChatOptions, Incoming};
use warden::state::{EntryKind, OnAsk};

use crate::common::*;

/// A `session/update` line for the demo's `session-1`. `jsonrpc` is the
/// member's JSON: `"2.0"` takes the fast path for a text chunk;
/// `"2\u002e0"` (the same string to the SDK) never does.
fn note(jsonrpc: &str, update: &str) -> String {
    format!(
        r#"{{"jsonrpc":{jsonrpc},"method":"session/update","params":{{"sessionId":"session-1","update":{update}}}}}"#
    )
}

fn chunk(kind: &str, text: &str) -> String {
    format!(r#"{{"sessionUpdate":"{kind}","content":{{"type":"text","text":"{text}"}}}}"#)
}

/// Every update kind warden shows, text chunks of each shape, and lines
/// that are not updates at all.
fn mixed_updates() -> Vec<String> {
    vec![
        chunk("agent_message_chunk", "Hello "),
        chunk(
            "agent_message_chunk",
            r#"\u001b[31mred\u001b[0m, \"quoted\", caf\u00e9 \u202e and a tab\t\n"#,
        ),
        chunk("agent_thought_chunk", "thinking it over"),
        r#"{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"first message"}}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"second message"}}"#.into(),
        r#"{"sessionUpdate":"agent_thought_chunk","messageId":"m3","content":{"type":"text","text":"a named thought"}}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"annotated","annotations":{"priority":"not a number"},"_meta":{"x":1}},"_meta":7}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":" null id"}}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":" numeric id"}}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}"#.into(),
        r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.rs","kind":"read","status":"pending","rawInput":{"path":"a.rs"}}"#.into(),
        chunk("agent_message_chunk", "after the tool call"),
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"file body"}}]}"#.into(),
        chunk("agent_message_chunk", "and after its update"),
        r#"{"sessionUpdate":"plan","entries":[{"content":"step one","priority":"high","status":"in_progress"}]}"#.into(),
        chunk("agent_message_chunk", "after the plan"),
        r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"d"}]}"#.into(),
        r#"{"sessionUpdate":"session_info_update","title":"A title"}"#.into(),
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"dup","text":"licate"}}"#.into(),
        r#"{"sessionUpdate":"mystery_update","content":{"type":"text","text":"never shown"}}"#.into(),
        chunk("user_message_chunk", "the user said"),
        chunk("agent_message_chunk", "the end"),
    ]
}

/// A scenario file in `dir` whose one turn writes `lines` as they are, in
/// one write (so that warden reads them at once, as from a fast agent).
fn raw_scenario(dir: &Path, name: &str, lines: &[String]) -> String {
    let mut toml = String::from("sequential_session_ids = true\nbuiltin = false\n\n[[turns]]\n");
    toml.push_str("[[turns.steps]]\ntype = \"raw\"\ntext = '''\n");
    toml.push_str(&lines.join("\n"));
    toml.push_str("'''\n");
    let path = dir.join(name);
    std::fs::write(&path, toml).expect("scenario written");
    path.display().to_string()
}

async fn play(dir: &Path, scenario: &str, options: ChatOptions) -> App {
    let mut app = ready(App::with_options(
        demo_command(dir, &["--scenario", scenario]),
        options,
    ))
    .await;
    send(&mut app, "go");
    pump_until(&mut app, "the turn's end", |s| !s.is_busy()).await;
    app
}

/// The transcript without the notices about skipped lines (told as the
/// line is read, so on the SDK's path ahead of what it still holds).
fn shown(app: &App) -> Vec<EntryKind> {
    app.state()
        .session
        .transcript
        .entries()
        .iter()
        .map(|e| e.kind.clone())
        .filter(|kind| !matches!(kind, EntryKind::Info(_) | EntryKind::Error { .. }))
        .collect()
}

#[tokio::test]
async fn fast_and_sdk_paths_show_the_same_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = |jsonrpc: &str| {
        let mut lines = vec![
            "not json: debug output".to_string(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":"#.to_string(),
        ];
        lines.extend(mixed_updates().iter().map(|u| note(jsonrpc, u)));
        lines
    };
    let fast = raw_scenario(dir.path(), "fast.toml", &lines(r#""2.0""#));
    let sdk = raw_scenario(dir.path(), "sdk.toml", &lines(r#""2\u002e0""#));
    let fast = play(dir.path(), &fast, ChatOptions::default()).await;
    let sdk = play(dir.path(), &sdk, ChatOptions::default()).await;

    pretty_assertions::assert_eq!(shown(&fast), shown(&sdk));
    let text = agent_text(fast.state());
    for part in [
        "Hello",
        "first message",
        "second message",
        "annotated",
        "[image]",
        "the end",
    ] {
        assert!(text.contains(part), "{part:?} missing from {text:?}");
    }
    // Escapes stay in the text (the views show them inert), as before.
    assert!(text.contains("\u{1b}[31mred"), "{text:?}");
    // A duplicated member: the SDK's reading (the last one wins) for both.
    assert!(text.contains("licate") && !text.contains("dup"), "{text:?}");
    assert!(!text.contains("never shown"), "{text:?}");
    let tool = shown(&fast)
        .iter()
        .position(|k| matches!(k, EntryKind::Tool(_)))
        .expect("the tool call is shown");
    let after = shown(&fast)
        .iter()
        .position(|k| matches!(k, EntryKind::Agent(t) if t.contains("after the tool call")))
        .expect("the chunk after it is shown");
    assert!(
        tool < after,
        "a chunk never overtakes the tool call before it"
    );
    assert!(
        errors(fast.state())
            .iter()
            .any(|(e, _)| e.contains("not JSON-RPC")),
        "the debug line is still reported: {:?}",
        errors(fast.state())
    );
}

/// What reached the runtime, in order: `chunk:TEXT`, `permission`, `done`;
/// then the events still on their way (a permission request's facts,
/// gathered off the loop, which the agent's later events wait for) until
/// the chat's turn has ended.
async fn events_until_done(app: &mut App) -> Vec<String> {
    let mut seen = Vec::new();
    let result = tokio::time::timeout(GUARD, async {
        loop {
            let event = app.next_agent_event().await.expect("agent events");
            let label = match &event {
                Incoming::Agent(
                    _,
                    AgentEvent::Update {
                        update: warden::model::SessionUpdate::AgentChunk(text),
                        ..
                    },
                ) => Some(format!("chunk:{text}")),
                Incoming::Agent(_, AgentEvent::Permission { .. }) => Some("permission".to_string()),
                Incoming::Agent(_, AgentEvent::PromptDone { .. }) => Some("done".to_string()),
                _ => None,
            };
            app.on_agent_event(event);
            if let Some(label) = label {
                let done = label == "done";
                seen.push(label);
                if done {
                    break;
                }
            }
        }
        while app.state().is_busy() {
            let event = app.next_agent_event().await.expect("agent events");
            app.on_agent_event(event);
        }
    })
    .await;
    assert!(result.is_ok(), "timed out; seen so far: {seen:?}");
    seen
}

#[tokio::test]
async fn chunks_never_overtake_a_permission_request_or_trail_the_turns_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ask = r#"{"jsonrpc":"2.0","id":"ask-1","method":"session/request_permission","params":{"sessionId":"session-1","toolCall":{"toolCallId":"p1","title":"Run ls","kind":"execute","rawInput":{"command":"ls"}},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"},{"optionId":"r","name":"Reject","kind":"reject_once"}]}}"#;
    let mut lines: Vec<String> = (0..50)
        .map(|i| {
            note(
                r#""2.0""#,
                &chunk("agent_message_chunk", &format!("before {i}.")),
            )
        })
        .collect();
    lines.push(ask.to_string());
    lines.extend((0..200).map(|i| {
        note(
            r#""2.0""#,
            &chunk("agent_message_chunk", &format!("after {i}.")),
        )
    }));
    let scenario = raw_scenario(dir.path(), "ask.toml", &lines);
    let options = ChatOptions {
        headless: Some(OnAsk::Deny),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &["--scenario", &scenario]),
        options,
    ))
    .await;
    send(&mut app, "go");
    let seen = events_until_done(&mut app).await;

    let mut expected: Vec<String> = (0..50).map(|i| format!("chunk:before {i}.")).collect();
    expected.push("permission".into());
    expected.extend((0..200).map(|i| format!("chunk:after {i}.")));
    expected.push("done".into());
    pretty_assertions::assert_eq!(seen, expected);
    assert!(
        agent_text(app.state()).ends_with("after 199."),
        "the last chunk is shown before the turn ends: {:?}",
        agent_text(app.state())
    );
}

#[tokio::test]
async fn the_last_chunks_of_a_turn_arrive_before_its_answer() {
    // The demo agent's own SDK sends the chunks and then the prompt's
    // answer; warden takes the chunks on the fast path, the answer through
    // the SDK.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started(dir.path(), &[]).await;
    send(&mut app, "flood 3000");
    let seen = events_until_done(&mut app).await;
    assert_eq!(seen.len(), 3001, "every chunk, then the answer");
    assert_eq!(seen.last().map(String::as_str), Some("done"));
    assert!(
        seen[2999].starts_with("chunk:flood    2999/3000"),
        "the last chunk comes right before the answer: {:?}",
        &seen[2995..]
    );
}

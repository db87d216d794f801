use super::*;
use crate::acp::convert;
use agent_client_protocol::v1::schema as acp;

fn update_of(line: &str) -> Option<(String, SessionUpdate)> {
    match text_chunk(line)? {
        AgentEvent::Update { session_id, update } => Some((session_id, update)),
        other => panic!("not an update: {other:?}"),
    }
}

fn note(update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
    )
}

/// What the SDK's path makes of the same line: the schema's typed parse
/// and `convert::session_update`.
fn sdk_update(line: &str) -> SessionUpdate {
    let value: Value = serde_json::from_str(line).expect("json");
    let params = value.get("params").cloned().expect("params");
    let note: acp::SessionNotification = serde_json::from_value(params).expect("typed");
    convert::session_update(&note.update, crate::agents::quirks::MetaReading::ALL)
}

#[test]
fn text_chunks_read_as_the_sdk_reads_them() {
    for update in [
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \"there\"\n\u001b[2J"}}"#,
        r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}"#,
        r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"me"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"a"}}"#,
        r#"{"sessionUpdate":"agent_thought_chunk","messageId":"m1","content":{"type":"text","text":"b"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"c"}}"#,
        r#"{"content":{"annotations":7,"_meta":[],"text":"d","type":"text"},"_meta":"x","sessionUpdate":"agent_message_chunk","extra":{}}"#,
    ] {
        let line = note(update);
        let (session, got) = update_of(&line).unwrap_or_else(|| panic!("not fast: {line}"));
        assert_eq!(session, "s");
        assert_eq!(got, sdk_update(&line), "{line}");
    }
}

#[test]
fn anything_else_is_left_to_the_sdk() {
    let chunk = r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}"#;
    let params = format!(r#"{{"sessionId":"s","update":{chunk}}}"#);
    for line in [
        // Not a notification: a request, answers, another method.
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/update","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":null,"method":"session/update","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{params},"result":{{}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{params},"error":null}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":"session/other","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"1.0","method":"session/update","params":{params}}}"#),
        format!(r#"{{"method":"session/update","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"2\u002e0","method":"session/update","params":{params}}}"#),
        r#"{"jsonrpc":"2.0","method":"session/update"}"#.to_string(),
        // Other updates and content blocks.
        note(r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}"#),
        note(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"","mimeType":"image/png"}}"#,
        ),
        note(r#"{"sessionUpdate":"mystery_chunk","content":{"type":"text","text":"x"}}"#),
        note(
            r#"{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"x"}}"#,
        ),
        // What the SDK reads its own way: duplicates, broken JSON, batches.
        note(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","text":"y"}}"#,
        ),
        format!(
            r#"{{"jsonrpc":"2.0","jsonrpc":"2.0","method":"session/update","params":{params}}}"#
        ),
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{params}"#),
        format!(r#"[{{"jsonrpc":"2.0","method":"session/update","params":{params}}}]"#),
        format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{params}}} trailing"#),
    ] {
        assert!(text_chunk(&line).is_none(), "took the fast path: {line}");
    }
}

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;

fn fast() -> (FastPath, tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) {
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    (FastPath::new(events.into()), received)
}

fn chunk_line(text: &str) -> String {
    note(&format!(
        r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}"#
    ))
}

#[test]
fn nothing_is_fast_before_initialize_is_answered() {
    let (fast, mut received) = fast();
    let mut incoming = fast.incoming();
    assert_eq!(incoming.route(&chunk_line("early")), Route::Sdk);
    fast.outgoing(INIT);
    assert_eq!(incoming.route(&chunk_line("early")), Route::Sdk);
    // An error answer, or an answer to another id, does not count.
    assert_eq!(
        incoming.route(r#"{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"no"}}"#),
        Route::Sdk
    );
    assert_eq!(
        incoming.route(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
        Route::Sdk
    );
    assert_eq!(incoming.route(&chunk_line("early")), Route::Sdk);
    assert!(received.try_recv().is_err());
    assert_eq!(incoming.route(INIT_ANSWER), Route::Sdk);
    // The answer is the SDK's to handle first: the next chunk waits behind a fence.
    assert!(matches!(
        incoming.route(&chunk_line("one")),
        Route::Fence(_)
    ));
}

#[tokio::test]
async fn a_chunk_after_an_sdk_line_waits_for_its_fence() {
    let (fast, mut received) = fast();
    let mut incoming = fast.incoming();
    fast.outgoing(INIT);
    assert_eq!(incoming.route(INIT_ANSWER), Route::Sdk);
    let Route::Fence(fence) = incoming.route(&chunk_line("held")) else {
        panic!("no fence");
    };
    assert!(received.try_recv().is_err(), "held until the fence passes");
    let fence: Value = serde_json::from_str(&fence).expect("fence json");
    assert_eq!(fence["method"], FENCE_METHOD);
    assert!(
        fence.get("id").is_none(),
        "a notification: nothing is answered"
    );

    // An agent's imitation with another token lets nothing go.
    fast.pass(&serde_json::json!({"token": "guess", "seq": 99}));
    fast.pass(&serde_json::json!({"seq": 99}));
    assert_eq!(*fast.0.passed.borrow(), 0);
    fast.pass(&fence["params"]);
    assert_eq!(*fast.0.passed.borrow(), 1);
    incoming.release().await;
    let Ok(AgentEvent::Update { update, .. }) = received.try_recv() else {
        panic!("the held chunk was not sent");
    };
    assert_eq!(update, SessionUpdate::AgentChunk("held".into()));

    // Chunks in a row go straight on; an SDK line in between fences again.
    assert_eq!(incoming.route(&chunk_line("next")), Route::Sent);
    assert!(received.try_recv().is_ok());
    assert_eq!(
        incoming.route(&note_with_tool()),
        Route::Sdk,
        "a tool call is the SDK's"
    );
    assert!(matches!(
        incoming.route(&chunk_line("after")),
        Route::Fence(_)
    ));
}

fn note_with_tool() -> String {
    note(r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}"#)
}

#[test]
fn escapes_read_as_the_sdk_reads_them() {
    for text in [
        r#"tab\tquote\"slash\\solidus\/"#,
        r#"\u00e9\u65e5\u0000\u007f\u009b"#,
        // A surrogate pair: one emoji.
        r#"\ud83d\ude42 and raw 🙂 日本"#,
        r#"bidi \u202e and zero width \u200b"#,
        "",
    ] {
        let line = chunk_line(text);
        let (_, got) = update_of(&line).unwrap_or_else(|| panic!("not fast: {line}"));
        assert_eq!(got, sdk_update(&line), "{line}");
    }
    let (_, got) = update_of(&chunk_line(r#"\ud83d\ude42\u0041"#)).expect("fast");
    assert_eq!(got, SessionUpdate::AgentChunk("🙂A".into()));
}

#[test]
fn message_ids_read_as_the_sdk_reads_them() {
    for update in [
        r#"{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"me"}}"#,
        r#"{"sessionUpdate":"agent_message_chunk","messageId":"m\u00e9\"","content":{"type":"text","text":"a"}}"#,
        r#"{"sessionUpdate":"agent_thought_chunk","messageId":"","content":{"type":"text","text":"b"}}"#,
    ] {
        let line = note(update);
        let (_, got) = update_of(&line).unwrap_or_else(|| panic!("not fast: {line}"));
        assert_eq!(got, sdk_update(&line), "{line}");
    }
}

#[test]
fn wrong_types_and_bad_text_go_to_the_sdk() {
    let text = r#"{"type":"text","text":"x"}"#;
    for line in [
        // A lone surrogate is not text.
        chunk_line(r#"\ud83d alone"#),
        chunk_line(r#"\ude42"#),
        // Wrong types where strings belong.
        note(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}"#),
        note(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":null}}"#),
        note(r#"{"sessionUpdate":"agent_message_chunk","content":"x"}"#),
        note(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}"#),
        note(r#"{"sessionUpdate":7,"content":{"type":"text","text":"x"}}"#),
        note(&format!(
            r#"{{"sessionUpdate":"agent_message_chunk","messageId":{{}},"content":{text}}}"#
        )),
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":5,"update":{{"sessionUpdate":"agent_message_chunk","content":{text}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":2,"method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{text}}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","method":"session/update","params":[]}"#.to_string(),
        // A key that only escapes make `text` is still a second `text`.
        note(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","te\u0078t":"y"}}"#,
        ),
    ] {
        assert!(text_chunk(&line).is_none(), "took the fast path: {line}");
    }
}

#[test]
fn arrays_in_place_of_objects_are_fast_only_when_the_sdk_agrees() {
    let text = r#"{"type":"text","text":"x"}"#;
    for line in [
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":["s",{{"sessionUpdate":"agent_message_chunk","content":{text}}}]}}"#
        ),
        note(r#"{"sessionUpdate":"agent_message_chunk","content":["text","x"]}"#),
    ] {
        if let Some((_, got)) = update_of(&line) {
            let value: Value = serde_json::from_str(&line).expect("json");
            let params = value.get("params").cloned().expect("params");
            let sdk = serde_json::from_value::<acp::SessionNotification>(params).map(|note| {
                convert::session_update(&note.update, crate::agents::quirks::MetaReading::ALL)
            });
            assert_eq!(sdk.ok(), Some(got), "{line}");
        }
    }
}

//! The demo agent end to end: session records, `session/load` from another
//! process, \`session/list\`.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::demo_agent::*;

/// The text of a text chunk update.
fn chunk_text(update: &Value) -> &str {
    update["content"]["text"].as_str().unwrap_or_default()
}

/// The record file of `session` in `state`, parsed.
fn record(state: &Path, session: &str) -> Value {
    let text = std::fs::read_to_string(state.join(format!("{session}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Process A in `state`: a session in `cwd` with the prompts `hello` and
/// `edit` (allowed), in mode plan; the session id and the edit's tool call id.
fn recorded_session(state: &Path, cwd: &Path) -> (String, String) {
    let mut a = Agent::spawn_with_state(None, state);
    a.initialize();
    let (session, _) = a.new_session_in(cwd);
    let turn = a.prompt(&session, "hello", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    let turn = a.prompt(&session, "edit", |_| select("allow-once"));
    assert_eq!(turn.stop_reason, "end_turn");
    let tool_call_id = turn.permission_requests[0]["toolCall"]["toolCallId"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = a.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    assert_eq!(a.response(id).0["result"], json!({}));
    drop(a);
    (session, tool_call_id)
}

#[test]
fn another_process_loads_a_session_replaying_it_before_the_answer() {
    let state = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let (session, tool_call_id) = recorded_session(state.path(), cwd.path());

    let written = record(state.path(), &session);
    assert_eq!(written["sessionId"], session.as_str());
    assert_eq!(written["cwd"], json!(cwd.path()));
    assert_eq!(written["mode"], "plan");
    assert_eq!(written["title"], "hello");
    assert!(written["updatedAt"].as_str().unwrap().ends_with('Z'));
    let recorded = written["updates"].as_array().unwrap().len();

    let mut b = Agent::spawn_with_state(None, state.path());
    let init = b.initialize();
    let capabilities = &init["result"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true, "{init}");
    assert!(
        capabilities["sessionCapabilities"]["list"].is_object(),
        "{init}"
    );
    let id = b.request(
        "session/load",
        json!({"sessionId": session, "cwd": cwd.path(), "mcpServers": []}),
    );
    let (response, before) = b.response(id);
    assert_eq!(response["result"]["modes"]["currentModeId"], "plan");
    let updates: Vec<&Value> = before
        .iter()
        .map(|message| {
            assert_eq!(message["method"], "session/update", "{message}");
            assert_eq!(message["params"]["sessionId"], session.as_str());
            &message["params"]["update"]
        })
        .collect();
    assert_eq!(updates.len(), recorded);
    let position = |found: &dyn Fn(&Value) -> bool| {
        updates
            .iter()
            .position(|update| found(update))
            .unwrap_or_else(|| panic!("not replayed: {updates:?}"))
    };
    let user = |text: &'static str| {
        move |update: &Value| {
            update["sessionUpdate"] == "user_message_chunk" && chunk_text(update) == text
        }
    };
    let hello = position(&user("hello"));
    let echo = position(&|update: &Value| {
        update["sessionUpdate"] == "agent_message_chunk" && chunk_text(update).contains("> hello")
    });
    let edit = position(&user("edit"));
    let tool_call = position(&|update: &Value| {
        update["sessionUpdate"] == "tool_call" && update["toolCallId"] == tool_call_id.as_str()
    });
    assert_eq!(hello, 0);
    assert!(
        hello < echo && echo < edit && edit < tool_call,
        "{updates:?}"
    );
    assert_eq!(updates[tool_call]["kind"], "edit");
    assert!(
        updates.iter().any(|update| {
            update["sessionUpdate"] == "agent_message_chunk"
                && chunk_text(update).contains("permission outcome: selected allow-once")
        }),
        "{updates:?}"
    );

    // The session is live in B: a prompt continues it and the record grows.
    let turn = b.prompt(&session, "think", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    let grown = record(state.path(), &session);
    let updates = grown["updates"].as_array().unwrap();
    assert!(updates.len() > recorded, "{grown}");
    assert!(
        updates[recorded..]
            .iter()
            .any(|update| update["sessionUpdate"] == "user_message_chunk"
                && chunk_text(update) == "think"),
        "{grown}"
    );
    assert_eq!(grown["title"], "hello");
    assert!(grown["updatedAt"].as_str() >= written["updatedAt"].as_str());
}

#[test]
fn loading_an_unknown_session_is_an_error_naming_it() {
    let mut agent = Agent::spawn(None);
    agent.initialize();
    for unknown in ["no-such-session", "../escape"] {
        let id = agent.request(
            "session/load",
            json!({"sessionId": unknown, "cwd": "/tmp", "mcpServers": []}),
        );
        let (response, before) = agent.response(id);
        assert!(before.is_empty(), "{before:?}");
        let error = &response["error"];
        assert_eq!(error["code"], -32002, "{response}");
        assert!(
            error["message"].as_str().unwrap().contains(unknown),
            "{response}"
        );
        assert_eq!(error["data"]["sessionId"], unknown);
    }
    let turn = agent.request(
        "session/prompt",
        json!({"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert!(agent.response(turn).0.get("error").is_some());
}

#[test]
fn session_list_lists_the_sessions_of_a_cwd_newest_first() {
    let state = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let (first, _) = recorded_session(state.path(), cwd.path());
    let mut a = Agent::spawn_with_state(None, state.path());
    a.initialize();
    let (elsewhere, _) = a.new_session_in(other.path());
    let turn = a.prompt(&elsewhere, "hello there", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    // A session never prompted is not listed.
    let (_untouched, _) = a.new_session_in(cwd.path());
    std::thread::sleep(Duration::from_millis(5));
    let (second, _) = a.new_session_in(cwd.path());
    let turn = a.prompt(&second, "think\nmore lines", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    drop(a);

    let mut b = Agent::spawn_with_state(None, state.path());
    b.initialize();
    let id = b.request("session/list", json!({"cwd": cwd.path()}));
    let (response, _) = b.response(id);
    let sessions = response["result"]["sessions"].as_array().unwrap();
    let listed: Vec<(&str, &str)> = sessions
        .iter()
        .map(|info| {
            assert_eq!(info["cwd"], json!(cwd.path()), "{info}");
            assert!(info["updatedAt"].is_string(), "{info}");
            (
                info["sessionId"].as_str().unwrap(),
                info["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(second.as_str(), "think"), (first.as_str(), "hello")]
    );

    let id = b.request("session/list", json!({}));
    let (response, _) = b.response(id);
    let all = response["result"]["sessions"].as_array().unwrap();
    assert_eq!(all.len(), 3, "{response}");
    assert!(
        all.iter()
            .any(|info| info["sessionId"] == elsewhere.as_str())
    );
}

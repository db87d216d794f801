//! The built-in demo agent, end to end over real pipes: the test plays the
//! client, writing newline-delimited JSON-RPC and answering the agent's
//! permission, `fs/*` and `terminal/*` requests itself.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A guard against hangs, not a speed requirement.
pub(crate) const GUARD: Duration = Duration::from_secs(20);

/// A running `warden demo-agent` and the client side of its pipes.
pub(crate) struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// The session records' directory when the agent has its own.
    _state: Option<tempfile::TempDir>,
}

/// What one prompt turn produced.
pub(crate) struct TurnResult {
    pub(crate) updates: Vec<Value>,
    pub(crate) permission_requests: Vec<Value>,
    /// Every request the agent sent the client: method and params, in order.
    pub(crate) requests: Vec<(String, Value)>,
    /// Every message of the turn from the agent, in order.
    pub(crate) messages: Vec<Value>,
    pub(crate) stop_reason: String,
}

impl TurnResult {
    /// The `session/update` payloads of one kind.
    pub(crate) fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .filter(|update| update["sessionUpdate"] == kind)
            .collect()
    }

    /// All agent message text, joined.
    pub(crate) fn message_text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .map(|update| update["content"]["text"].as_str().unwrap_or_default())
            .collect()
    }

    /// Whether the message text has exactly this line.
    pub(crate) fn has_line(&self, line: &str) -> bool {
        self.message_text().lines().any(|l| l == line)
    }

    /// The methods of the requests the agent sent, in order.
    pub(crate) fn methods(&self) -> Vec<&str> {
        self.requests
            .iter()
            .map(|(method, _)| method.as_str())
            .collect()
    }

    /// The params of the only request of `method`.
    pub(crate) fn only(&self, method: &str) -> &Value {
        let found: Vec<&Value> = self
            .requests
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, params)| params)
            .collect();
        let [params] = found[..] else {
            panic!("one {method} expected: {:?}", self.requests);
        };
        params
    }
}

pub(crate) fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
}

impl Agent {
    /// An agent that keeps its session records in a directory of its own.
    pub(crate) fn spawn(scenario: Option<&Path>) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut agent = Self::spawn_with_state(scenario, state.path());
        agent._state = Some(state);
        agent
    }

    /// An agent that keeps its session records in `state`.
    pub(crate) fn spawn_with_state(scenario: Option<&Path>, state: &Path) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command.arg("demo-agent").env("WARDEN_DEMO_STATE", state);
        if let Some(path) = scenario {
            command.arg("--scenario").arg(path);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn warden demo-agent");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            next_id: 0,
            _state: None,
        }
    }

    pub(crate) fn write(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the agent");
        stdin.flush().expect("flush");
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub(crate) fn respond(&mut self, id: &Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// The next message from the agent; panics when none comes in time.
    pub(crate) fn next(&mut self) -> Value {
        match self.lines.recv_timeout(GUARD) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|err| panic!("agent wrote a non-JSON line {line:?}: {err}")),
            Err(RecvTimeoutError::Timeout) => panic!("no message from the agent in {GUARD:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent closed stdout"),
        }
    }

    /// Read until the response to `id`; returns it and the messages before it.
    pub(crate) fn response(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.next();
            if message.get("method").is_none() && message["id"] == id {
                return (message, before);
            }
            before.push(message);
        }
    }

    pub(crate) fn initialize(&mut self) -> Value {
        self.initialize_with(&json!({}))
    }

    pub(crate) fn initialize_with(&mut self, capabilities: &Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        );
        self.response(id).0
    }

    pub(crate) fn new_session(&mut self) -> (String, Value) {
        self.new_session_in(Path::new("/tmp"))
    }

    pub(crate) fn new_session_in(&mut self, cwd: &Path) -> (String, Value) {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let (response, _) = self.response(id);
        let result = response["result"].clone();
        let session = result["sessionId"].as_str().expect("session id").to_owned();
        (session, result)
    }

    pub(crate) fn start(scenario: Option<&Path>) -> (Self, String) {
        let mut agent = Self::spawn(scenario);
        let init = agent.initialize();
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        let (session, _) = agent.new_session();
        (agent, session)
    }

    /// Send a prompt and play the client until the turn ends; `answer` picks
    /// the result for each permission request.
    pub(crate) fn prompt(
        &mut self,
        session: &str,
        text: &str,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> TurnResult {
        self.play(session, text, |method, id, params| match method {
            "session/request_permission" => vec![response(id, answer(params))],
            other => panic!("unexpected method {other}: {params}"),
        })
    }

    /// Send a prompt and play the client until the turn ends: `client` gets
    /// each request the agent sends (method, id, params) and returns the
    /// messages to write back (answers, now or later, and notifications).
    pub(crate) fn play(
        &mut self,
        session: &str,
        text: &str,
        mut client: impl FnMut(&str, &Value, &Value) -> Vec<Value>,
    ) -> TurnResult {
        let id = self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        let mut turn = TurnResult {
            updates: Vec::new(),
            permission_requests: Vec::new(),
            requests: Vec::new(),
            messages: Vec::new(),
            stop_reason: String::new(),
        };
        loop {
            let message = self.next();
            turn.messages.push(message.clone());
            match message["method"].as_str() {
                Some("session/update") => {
                    assert_eq!(message["params"]["sessionId"], session);
                    turn.updates.push(message["params"]["update"].clone());
                }
                // The SDK cancels a request the agent stopped waiting for.
                Some("$/cancel_request") => {}
                Some(method) if message.get("id").is_some() => {
                    let params = message["params"].clone();
                    if method == "session/request_permission" {
                        turn.permission_requests.push(params.clone());
                    } else {
                        assert_eq!(params["sessionId"], session, "{message}");
                    }
                    turn.requests.push((method.to_owned(), params.clone()));
                    for reply in client(method, &message["id"], &params) {
                        self.write(&reply);
                    }
                }
                Some(other) => panic!("unexpected notification {other}: {message}"),
                None if message["id"] == id => {
                    turn.stop_reason = message["result"]["stopReason"]
                        .as_str()
                        .unwrap_or_else(|| panic!("no stop reason: {message}"))
                        .to_owned();
                    return turn;
                }
                None => panic!("unexpected response {message}"),
            }
        }
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                start.elapsed() < GUARD,
                "the agent did not exit in {GUARD:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer to request `id`.
pub(crate) fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC error answer to request `id`.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(crate) fn select(option_id: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option_id}})
}

pub(crate) fn no_permission(request: &Value) -> Value {
    panic!("no permission request expected, got {request}")
}

#[test]
fn initialize_and_new_session_advertise_modes() {
    let mut agent = Agent::spawn(None);
    let init = agent.initialize();
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentInfo"]["name"], "warden-demo");
    assert_eq!(init["result"]["authMethods"], json!([]));

    let (first, result) = agent.new_session();
    let modes = &result["modes"];
    assert_eq!(modes["currentModeId"], "default");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mode| mode["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["plan", "default", "auto"]);
    let (second, _) = agent.new_session();
    assert_ne!(first, second);
}

#[test]
fn set_mode_answers_and_sends_current_mode_update() {
    let (mut agent, session) = Agent::start(None);
    let id = agent.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    let (response, _) = agent.response(id);
    assert_eq!(response["result"], json!({}));
    let update = agent.next();
    assert_eq!(
        update["params"]["update"],
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    );
    let id = agent.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "nonsense"}),
    );
    assert!(agent.response(id).0.get("error").is_some());
}

#[test]
fn default_prompt_streams_markdown_chunks_and_ends_turn() {
    let (mut agent, session) = Agent::start(None);
    let turn = agent.prompt(&session, "Explain the borrow checker", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    assert!(turn.of_kind("agent_message_chunk").len() > 3);
    let text = turn.message_text();
    assert_eq!(text.matches("Explain the borrow checker").count(), 1);
    for needle in ["## ", "**", "```rust\n", "- ", "](https://example.com)"] {
        assert!(text.contains(needle), "{needle:?} missing from {text}");
    }
}

/// Allowed, the demo's edit says it only asked: it claims no change it did
/// not make (it writes nothing; `fs-write` does, through the client).
#[test]
fn edit_allowed_says_the_demo_only_asked() {
    let (mut agent, session) = Agent::start(None);
    let turn = agent.prompt(&session, "edit", |_| select("allow-once"));
    assert_eq!(turn.stop_reason, "end_turn");
    let text = turn.message_text();
    assert!(
        text.contains("The demo agent only asks: `src/main.rs` was not changed"),
        "{text}"
    );
    assert!(!text.contains("I edited"), "{text}");
}

#[test]
fn edit_rejected_reports_the_outcome_and_fails_the_tool_call() {
    let (mut agent, session) = Agent::start(None);
    let turn = agent.prompt(&session, "edit", |_| select("reject-once"));
    assert_eq!(turn.stop_reason, "end_turn");

    let [request] = turn.permission_requests.as_slice() else {
        panic!(
            "one permission request expected: {:?}",
            turn.permission_requests
        );
    };
    let tool_call_id = request["toolCall"]["toolCallId"].as_str().unwrap();
    assert_eq!(request["toolCall"]["kind"], "edit");
    assert_eq!(request["toolCall"]["title"], "Edit src/main.rs");
    assert_eq!(request["toolCall"]["content"][0]["type"], "diff");
    let options: Vec<(&str, &str)> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow-once", "allow_once"),
            ("allow-always", "allow_always"),
            ("reject-once", "reject_once"),
            ("reject-always", "reject_always"),
        ]
    );

    let announced = turn.of_kind("tool_call");
    assert_eq!(announced[0]["toolCallId"], tool_call_id);
    assert_eq!(announced[0]["kind"], "edit");
    let text = turn.message_text();
    assert!(
        text.lines()
            .any(|line| line == "permission outcome: selected reject-once"),
        "{text}"
    );
    assert!(text.contains("was not changed"), "{text}");
    let statuses: Vec<&Value> = turn
        .of_kind("tool_call_update")
        .iter()
        .filter(|update| update["toolCallId"] == tool_call_id)
        .map(|update| &update["status"])
        .collect();
    assert_eq!(statuses, [&json!("failed")]);
}

#[test]
fn execute_allowed_runs_to_completed() {
    let (mut agent, session) = Agent::start(None);
    let turn = agent.prompt(&session, "execute", |_| select("allow-once"));
    assert_eq!(turn.stop_reason, "end_turn");
    let request = &turn.permission_requests[0];
    assert_eq!(
        request["toolCall"]["rawInput"]["command"],
        json!("cargo test")
    );
    let text = turn.message_text();
    assert!(
        text.lines()
            .any(|line| line == "permission outcome: selected allow-once")
    );
    let statuses: Vec<&Value> = turn
        .of_kind("tool_call_update")
        .iter()
        .map(|update| &update["status"])
        .collect();
    assert_eq!(statuses, [&json!("in_progress"), &json!("completed")]);
}

#[test]
fn two_permission_requests_arrive_before_either_is_answered() {
    let (mut agent, session) = Agent::start(None);
    let prompt = agent.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "two"}]}),
    );
    let mut requests = Vec::new();
    while requests.len() < 2 {
        let message = agent.next();
        assert_ne!(message["id"], prompt, "turn ended early: {message}");
        if message["method"] == "session/request_permission" {
            requests.push(message);
        }
    }
    let first_tool = &requests[0]["params"]["toolCall"]["toolCallId"];
    assert_ne!(first_tool, &requests[1]["params"]["toolCall"]["toolCallId"]);
    agent.respond(&requests[1]["id"], select("reject-once"));
    agent.respond(&requests[0]["id"], select("allow-once"));
    let (response, before) = agent.response(prompt);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let text: String = before
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|m| m["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    let outcomes: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("permission outcome:"))
        .collect();
    assert_eq!(
        outcomes,
        [
            "permission outcome: selected allow-once",
            "permission outcome: selected reject-once",
        ]
    );
}

#[test]
fn cancel_stops_a_slow_turn_with_cancelled() {
    let (mut agent, session) = Agent::start(None);
    let prompt = agent.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "slow"}]}),
    );
    let first = agent.next();
    assert_eq!(first["method"], "session/update", "{first}");
    agent.notify("session/cancel", json!({"sessionId": session}));
    let (response, _) = agent.response(prompt);
    assert_eq!(response["result"]["stopReason"], "cancelled");
}

#[test]
fn cancel_while_waiting_for_permission_ends_cancelled() {
    let (mut agent, session) = Agent::start(None);
    let prompt = agent.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "tools"}]}),
    );
    let request = loop {
        let message = agent.next();
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    agent.notify("session/cancel", json!({"sessionId": session}));
    agent.respond(&request["id"], json!({"outcome": {"outcome": "cancelled"}}));
    let (response, before) = agent.response(prompt);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    let permission_requests = before
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .count();
    assert_eq!(permission_requests, 0, "no request after the cancel");
    assert!(
        before
            .iter()
            .any(|m| m["params"]["update"]["content"]["text"] == "permission outcome: cancelled\n")
    );
}

#[test]
fn crash_exits_with_code_3() {
    let (mut agent, session) = Agent::start(None);
    agent.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "crash"}]}),
    );
    let status = agent.wait_exit();
    assert_eq!(status.code(), Some(3));
    let mut stderr = String::new();
    std::io::Read::read_to_string(agent.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("demo-agent: simulated crash"), "{stderr}");
}

#[test]
fn stdin_eof_exits_0() {
    let (mut agent, _session) = Agent::start(None);
    agent.close_stdin();
    assert_eq!(agent.wait_exit().code(), Some(0));
}

#[test]
fn scenario_file_scripts_the_turn() {
    let (mut agent, session) = Agent::start(Some(&scenario("basic.toml")));
    assert_eq!(session, "session-1");
    let turn = agent.prompt(&session, "Fix the bug", |request| {
        assert_eq!(request["toolCall"]["toolCallId"], "fix-1");
        select("allow-once")
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert!(
        turn.message_text()
            .starts_with("permission outcome: selected allow-once\n")
    );
    assert_eq!(turn.of_kind("plan").len(), 2);
    assert_eq!(turn.of_kind("tool_call_update")[0]["status"], "completed");

    let refused = agent.prompt(&session, "refuse", no_permission);
    assert_eq!(refused.stop_reason, "refusal");

    // Prompts no scripted turn matches play the built-in scenarios.
    let help = agent.prompt(&session, "help", no_permission);
    assert!(help.message_text().contains("| `flood [N]` |"));
}

#[test]
fn json_scenario_with_on_reject_stop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(
        &path,
        json!({
            "builtin": false,
            "turns": [{ "steps": [
                { "type": "permission", "tool_call_id": "p", "on_reject": "stop" },
                { "type": "text", "text": "not reached" }
            ]}]
        })
        .to_string(),
    )
    .unwrap();
    let (mut agent, session) = Agent::start(Some(&path));
    let turn = agent.prompt(&session, "anything", |_| select("reject-always"));
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(
        turn.message_text(),
        "permission outcome: selected reject-always\n"
    );
}

#[test]
fn protocol_v0_scenario_answers_version_0() {
    let mut agent = Agent::spawn(Some(&scenario("protocol-v0.toml")));
    let init = agent.initialize();
    assert_eq!(init["result"]["protocolVersion"], 0, "{init}");
}

#[test]
fn flood_sends_chunks_of_64_bytes() {
    let (mut agent, session) = Agent::start(None);
    let turn = agent.prompt(&session, "flood 50", no_permission);
    assert_eq!(turn.stop_reason, "end_turn");
    let chunks = turn.of_kind("agent_message_chunk");
    assert_eq!(chunks.len(), 50);
    assert!(
        chunks
            .iter()
            .all(|chunk| chunk["content"]["text"].as_str().unwrap().len() == 64)
    );
}

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
const GUARD: Duration = Duration::from_secs(20);

/// A running `warden demo-agent` and the client side of its pipes.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// The session records' directory when the agent has its own.
    _state: Option<tempfile::TempDir>,
}

/// What one prompt turn produced.
struct TurnResult {
    updates: Vec<Value>,
    permission_requests: Vec<Value>,
    /// Every request the agent sent the client: method and params, in order.
    requests: Vec<(String, Value)>,
    /// Every message of the turn from the agent, in order.
    messages: Vec<Value>,
    stop_reason: String,
}

impl TurnResult {
    /// The `session/update` payloads of one kind.
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .filter(|update| update["sessionUpdate"] == kind)
            .collect()
    }

    /// All agent message text, joined.
    fn message_text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .map(|update| update["content"]["text"].as_str().unwrap_or_default())
            .collect()
    }

    /// Whether the message text has exactly this line.
    fn has_line(&self, line: &str) -> bool {
        self.message_text().lines().any(|l| l == line)
    }

    /// The methods of the requests the agent sent, in order.
    fn methods(&self) -> Vec<&str> {
        self.requests
            .iter()
            .map(|(method, _)| method.as_str())
            .collect()
    }

    /// The params of the only request of `method`.
    fn only(&self, method: &str) -> &Value {
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

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
}

impl Agent {
    /// An agent that keeps its session records in a directory of its own.
    fn spawn(scenario: Option<&Path>) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut agent = Self::spawn_with_state(scenario, state.path());
        agent._state = Some(state);
        agent
    }

    /// An agent that keeps its session records in `state`.
    fn spawn_with_state(scenario: Option<&Path>, state: &Path) -> Self {
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

    fn write(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the agent");
        stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn respond(&mut self, id: &Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// The next message from the agent; panics when none comes in time.
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(GUARD) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|err| panic!("agent wrote a non-JSON line {line:?}: {err}")),
            Err(RecvTimeoutError::Timeout) => panic!("no message from the agent in {GUARD:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent closed stdout"),
        }
    }

    /// Read until the response to `id`; returns it and the messages before it.
    fn response(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.next();
            if message.get("method").is_none() && message["id"] == id {
                return (message, before);
            }
            before.push(message);
        }
    }

    fn initialize(&mut self) -> Value {
        self.initialize_with(&json!({}))
    }

    fn initialize_with(&mut self, capabilities: &Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        );
        self.response(id).0
    }

    fn new_session(&mut self) -> (String, Value) {
        self.new_session_in(Path::new("/tmp"))
    }

    fn new_session_in(&mut self, cwd: &Path) -> (String, Value) {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let (response, _) = self.response(id);
        let result = response["result"].clone();
        let session = result["sessionId"].as_str().expect("session id").to_owned();
        (session, result)
    }

    fn start(scenario: Option<&Path>) -> (Self, String) {
        let mut agent = Self::spawn(scenario);
        let init = agent.initialize();
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        let (session, _) = agent.new_session();
        (agent, session)
    }

    /// Send a prompt and play the client until the turn ends; `answer` picks
    /// the result for each permission request.
    fn prompt(
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
    fn play(
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

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait_exit(&mut self) -> ExitStatus {
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
fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC error answer to request `id`.
fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn select(option_id: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option_id}})
}

fn no_permission(request: &Value) -> Value {
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

/// What a client that offers files and terminals advertises.
fn all_capabilities() -> Value {
    json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true})
}

/// An agent initialized with `capabilities` and a session in a fresh
/// directory (the session's cwd).
fn start_in_dir(capabilities: &Value) -> (Agent, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(None);
    let init = agent.initialize_with(capabilities);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let (session, _) = agent.new_session_in(dir.path());
    (agent, session, dir)
}

/// A client that does what a real one would with `fs/*` and `terminal/*`:
/// it reads and writes real files and runs the commands (to the end, at
/// `terminal/create`), keeping the newest `outputByteLimit` bytes.
#[derive(Default)]
struct FakeClient {
    /// Per terminal id: exit code and output, truncated.
    terminals: Vec<(i32, String, bool)>,
}

impl FakeClient {
    fn answer(&mut self, method: &str, id: &Value, params: &Value) -> Vec<Value> {
        let result = match method {
            "session/request_permission" => select("allow-once"),
            "fs/read_text_file" => {
                let path = params["path"].as_str().unwrap();
                let Ok(text) = std::fs::read_to_string(path) else {
                    return vec![error(id, -32002, "Resource not found")];
                };
                let skip = params["line"].as_u64().map_or(0, |line| line - 1);
                let take = params["limit"].as_u64().unwrap_or(u64::MAX);
                let content: String = text
                    .split_inclusive('\n')
                    .skip(usize::try_from(skip).unwrap())
                    .take(usize::try_from(take).unwrap_or(usize::MAX))
                    .collect();
                json!({"content": content})
            }
            "fs/write_text_file" => {
                let path = params["path"].as_str().unwrap();
                std::fs::write(path, params["content"].as_str().unwrap()).unwrap();
                json!(null)
            }
            "terminal/create" => {
                let command = params["command"].as_str().unwrap();
                let args: Vec<&str> = params["args"]
                    .as_array()
                    .map(|args| args.iter().map(|a| a.as_str().unwrap()).collect())
                    .unwrap_or_default();
                let output = if args.is_empty() {
                    Command::new("sh").arg("-c").arg(command).output()
                } else {
                    Command::new(command).args(&args).output()
                }
                .unwrap();
                let mut text = String::from_utf8(output.stdout).unwrap();
                let mut truncated = false;
                if let Some(limit) = params["outputByteLimit"].as_u64() {
                    let limit = usize::try_from(limit).unwrap();
                    if text.len() > limit {
                        let mut start = text.len() - limit;
                        while !text.is_char_boundary(start) {
                            start += 1;
                        }
                        text = text.split_off(start);
                        truncated = true;
                    }
                }
                self.terminals
                    .push((output.status.code().unwrap(), text, truncated));
                json!({"terminalId": format!("term-{}", self.terminals.len())})
            }
            "terminal/wait_for_exit" => json!({"exitCode": self.terminal(params).0}),
            "terminal/output" => {
                let (code, output, truncated) = self.terminal(params);
                json!({"output": output, "truncated": truncated, "exitStatus": {"exitCode": code}})
            }
            "terminal/release" | "terminal/kill" => {
                self.terminal(params);
                json!(null)
            }
            other => panic!("unexpected method {other}: {params}"),
        };
        vec![response(id, result)]
    }

    fn terminal(&self, params: &Value) -> (i32, String, bool) {
        let id = params["terminalId"].as_str().unwrap();
        let index: usize = id.strip_prefix("term-").unwrap().parse().unwrap();
        self.terminals[index - 1].clone()
    }
}

#[test]
fn fs_read_asks_the_client_for_two_lines_from_line_2() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let mut client = FakeClient::default();
    let turn = agent.play(&session, "fs-read", |m, id, p| client.answer(m, id, p));
    assert_eq!(turn.stop_reason, "end_turn");
    let read = turn.only("fs/read_text_file");
    assert_eq!(read["path"], json!(dir.path().join("notes.txt")));
    assert_eq!((&read["line"], &read["limit"]), (&json!(2), &json!(2)));
    assert_eq!(turn.methods(), ["fs/read_text_file"]);
    let text = turn.message_text();
    assert!(turn.has_line("read ok: 2 lines"), "{text}");
    assert!(text.contains("```\ntwo\nthree\n```\n"), "{text}");
}

#[test]
fn fs_read_error_answer_is_reported_and_ends_the_turn() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    let turn = agent.play(&session, "fs-read missing.txt", |method, id, params| {
        assert_eq!(method, "fs/read_text_file");
        assert_eq!(params["path"], json!(dir.path().join("missing.txt")));
        vec![error(id, -32002, "Resource not found")]
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert!(
        turn.has_line("read failed: Resource not found"),
        "{}",
        turn.message_text()
    );
}

#[test]
fn fs_escape_asks_for_a_path_outside_the_cwd() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    let turn = agent.play(&session, "fs-escape", |_, id, _| {
        vec![error(id, -32602, "path outside the allowed roots")]
    });
    assert_eq!(turn.stop_reason, "end_turn");
    let read = turn.only("fs/read_text_file");
    assert_eq!(
        read["path"],
        json!(format!("{}/../outside.txt", dir.path().display()))
    );
    assert!(
        turn.has_line("read failed: path outside the allowed roots"),
        "{}",
        turn.message_text()
    );
}

#[test]
fn fs_write_asks_permission_for_the_edit_then_writes() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    let path = dir.path().join("hello.txt");
    let mut client = FakeClient::default();
    let turn = agent.play(&session, "fs-write", |m, id, p| client.answer(m, id, p));
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(
        turn.methods(),
        ["session/request_permission", "fs/write_text_file"]
    );
    let tool_call = &turn.permission_requests[0]["toolCall"];
    let tool_call_id = tool_call["toolCallId"].as_str().unwrap();
    assert!(tool_call_id.ends_with("-fs-write"), "{tool_call}");
    assert_eq!(tool_call["kind"], "edit");
    assert_eq!(tool_call["locations"], json!([{"path": path}]));
    assert_eq!(tool_call["content"][0]["type"], "diff");
    assert_eq!(tool_call["content"][0]["path"], json!(path));
    assert_eq!(
        tool_call["content"][0]["newText"],
        "hello from warden-demo\n"
    );
    assert_eq!(
        turn.permission_requests[0]["options"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let write = turn.only("fs/write_text_file");
    assert_eq!(write["path"], json!(path));
    assert_eq!(write["content"], "hello from warden-demo\n");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "hello from warden-demo\n"
    );
    assert!(turn.has_line("permission outcome: selected allow-once"));
    assert!(turn.has_line("write ok"), "{}", turn.message_text());
    let statuses: Vec<&Value> = turn
        .of_kind("tool_call_update")
        .iter()
        .filter(|update| update["toolCallId"] == tool_call_id)
        .map(|update| &update["status"])
        .collect();
    assert_eq!(statuses, [&json!("in_progress"), &json!("completed")]);
}

#[test]
fn fs_write_rejected_does_not_write() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    let turn = agent.prompt(&session, "fs-write other.txt", |request| {
        assert_eq!(
            request["toolCall"]["locations"][0]["path"],
            json!(dir.path().join("other.txt"))
        );
        select("reject-once")
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(turn.methods(), ["session/request_permission"]);
    assert!(turn.message_text().contains("did not write"));
    assert!(!dir.path().join("other.txt").exists());
}

#[test]
fn fs_write_direct_writes_without_asking_and_reports_a_refusal() {
    let (mut agent, session, dir) = start_in_dir(&all_capabilities());
    let turn = agent.play(&session, "fs-write-direct", |method, id, params| {
        assert_eq!(method, "fs/write_text_file");
        assert_eq!(params["path"], json!(dir.path().join("direct.txt")));
        assert_eq!(params["content"], "hello from warden-demo\n");
        vec![error(id, -32603, "plan mode refuses writes")]
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(turn.methods(), ["fs/write_text_file"]);
    assert!(
        turn.has_line("write failed: plan mode refuses writes"),
        "{}",
        turn.message_text()
    );
}

#[test]
fn term_asks_then_runs_the_shell_line_in_an_embedded_terminal() {
    let (mut agent, session, _dir) = start_in_dir(&all_capabilities());
    let mut client = FakeClient::default();
    let turn = agent.play(&session, "term", |m, id, p| client.answer(m, id, p));
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(
        turn.methods(),
        [
            "session/request_permission",
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release",
        ]
    );
    let tool_call = &turn.permission_requests[0]["toolCall"];
    assert_eq!(tool_call["kind"], "execute");
    assert!(
        tool_call["rawInput"]["command"]
            .as_str()
            .unwrap()
            .starts_with("printf "),
        "{tool_call}"
    );
    let create = turn.only("terminal/create");
    assert_eq!(
        create["command"],
        r"printf '\033[32mgreen\033[0m and plain\n'; echo done"
    );
    assert!(
        create.get("args").is_none_or(|args| args == &json!([])),
        "{create}"
    );
    assert!(
        create.get("outputByteLimit").is_none_or(Value::is_null),
        "{create}"
    );
    for method in [
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ] {
        assert_eq!(turn.only(method)["terminalId"], "term-1", "{method}");
    }

    // The terminal is embedded in the tool call before the wait.
    let tool_call_id = &tool_call["toolCallId"];
    let embed = turn
        .messages
        .iter()
        .position(|m| {
            let update = &m["params"]["update"];
            update["sessionUpdate"] == "tool_call_update"
                && update["toolCallId"] == *tool_call_id
                && update["content"] == json!([{"type": "terminal", "terminalId": "term-1"}])
        })
        .expect("a tool_call_update embedding the terminal");
    let wait = turn
        .messages
        .iter()
        .position(|m| m["method"] == "terminal/wait_for_exit")
        .unwrap();
    assert!(embed < wait);

    let text = turn.message_text();
    for line in [
        "terminal exited: code 0",
        r#"output: "\u{1b}[32mgreen\u{1b}[0m and plain\ndone\n""#,
        "released",
    ] {
        assert!(turn.has_line(line), "{line:?} missing from {text}");
    }
}

#[test]
fn term_args_sends_the_program_and_its_arguments() {
    let (mut agent, session, _dir) = start_in_dir(&all_capabilities());
    let mut client = FakeClient::default();
    let turn = agent.play(&session, "term-args", |m, id, p| client.answer(m, id, p));
    assert_eq!(turn.stop_reason, "end_turn");
    assert!(turn.permission_requests.is_empty());
    let create = turn.only("terminal/create");
    assert_eq!(create["command"], "printf");
    assert_eq!(create["args"], json!(["%s-%s\n", "a b", "c"]));
    assert!(
        turn.has_line(r#"output: "a b-c\n""#),
        "{}",
        turn.message_text()
    );
}

#[test]
fn term_limit_asks_for_an_output_byte_limit() {
    let (mut agent, session, _dir) = start_in_dir(&all_capabilities());
    let mut client = FakeClient::default();
    let turn = agent.play(&session, "term-limit", |m, id, p| client.answer(m, id, p));
    assert_eq!(turn.stop_reason, "end_turn");
    let create = turn.only("terminal/create");
    assert_eq!(create["command"], "yes 0123456789 | head -c 5000");
    assert_eq!(create["outputByteLimit"], 100);
    assert!(
        turn.has_line("truncated: true, bytes: 100"),
        "{}",
        turn.message_text()
    );
}

#[test]
fn term_forever_is_killed_when_the_turn_is_cancelled() {
    let (mut agent, session, _dir) = start_in_dir(&all_capabilities());
    let mut wait_id = Value::Null;
    let cancel =
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
    let turn = agent.play(
        &session,
        "term-forever",
        |method, id, params| match method {
            "terminal/create" => {
                assert_eq!(params["command"], "sleep 1000");
                vec![response(id, json!({"terminalId": "t-9"}))]
            }
            // The command runs on: cancel the turn instead of answering.
            "terminal/wait_for_exit" => {
                wait_id = id.clone();
                vec![cancel.clone()]
            }
            "terminal/kill" => {
                assert_eq!(params["terminalId"], "t-9");
                vec![
                    response(id, json!(null)),
                    response(&wait_id, json!({"exitCode": null, "signal": "SIGKILL"})),
                ]
            }
            "terminal/output" => vec![response(
                id,
                json!({"output": "", "truncated": false, "exitStatus": {"signal": "SIGKILL"}}),
            )],
            "terminal/release" => vec![response(id, json!(null))],
            other => panic!("unexpected method {other}: {params}"),
        },
    );
    assert_eq!(turn.stop_reason, "cancelled");
    assert_eq!(
        turn.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release",
        ]
    );
    assert!(
        turn.has_line("killed: signal SIGKILL"),
        "{}",
        turn.message_text()
    );
    let embedded = turn
        .of_kind("tool_call_update")
        .iter()
        .any(|update| update["content"] == json!([{"type": "terminal", "terminalId": "t-9"}]));
    assert!(embedded);
}

#[test]
fn terminal_error_answers_are_reported_and_end_the_turn() {
    let (mut agent, session, _dir) = start_in_dir(&all_capabilities());
    let turn = agent.play(&session, "term-args", |method, id, _| {
        assert_eq!(method, "terminal/create");
        vec![error(id, -32603, "cannot spawn printf")]
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert!(
        turn.has_line("terminal/create failed: cannot spawn printf"),
        "{}",
        turn.message_text()
    );
}

#[test]
fn scenarios_say_which_capability_the_client_lacks() {
    let (mut agent, session, _dir) =
        start_in_dir(&json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let turn = agent.play(&session, "term", |method, _, params| {
        panic!("no request expected: {method} {params}")
    });
    assert_eq!(turn.stop_reason, "end_turn");
    assert_eq!(turn.message_text(), "the client does not offer terminals\n");

    let (mut agent, session, _dir) = start_in_dir(&json!({}));
    for (prompt, line) in [
        (
            "fs-read",
            "the client does not offer reading files (fs.readTextFile)",
        ),
        (
            "fs-write",
            "the client does not offer writing files (fs.writeTextFile)",
        ),
        ("term-limit", "the client does not offer terminals"),
    ] {
        let turn = agent.play(&session, prompt, |method, _, params| {
            panic!("no request expected: {method} {params}")
        });
        assert_eq!(turn.stop_reason, "end_turn");
        assert!(turn.has_line(line), "{prompt}: {}", turn.message_text());
    }
}

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

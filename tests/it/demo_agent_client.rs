//! The demo agent end to end: its calls to the client's files and terminals.

use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::demo_agent::*;

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

//! The scenarios that call the client: its file system (`fs/*`) and its
//! terminals (`terminal/*`), asking permission first where a real agent would.

use super::*;

/// `FILE` (the prompt's second word, else `default`) from the session's cwd.
pub(super) fn client_file(cwd: &Path, word: Option<&str>, default: &str) -> PathBuf {
    cwd.join(word.unwrap_or(default))
}

pub(super) fn fs_read(path: &Path) -> Vec<Step> {
    vec![
        text(&format!(
            "Reading lines 2-3 of `{}` through the client.\n",
            path.display()
        )),
        Step::ReadFile(ReadFileStep {
            session_id: None,
            path: path.to_owned(),
            line: Some(2),
            limit: Some(2),
            tool_call_id: None,
        }),
    ]
}

pub(super) fn fs_escape(cwd: &Path) -> Vec<Step> {
    let path = cwd.join("../outside.txt");
    vec![
        text(&format!(
            "Trying to read `{}`, outside the working directory, through the client.\n",
            path.display()
        )),
        Step::ReadFile(ReadFileStep {
            session_id: None,
            path,
            line: None,
            limit: None,
            tool_call_id: None,
        }),
    ]
}

fn write_step(path: &Path, tool_call_id: Option<String>) -> Step {
    Step::WriteFile(WriteFileStep {
        session_id: None,
        path: path.to_owned(),
        content: WRITE_CONTENT.to_owned(),
        tool_call_id,
    })
}

/// Ask permission for an edit of `path`, then write it through the client.
pub(super) fn fs_write(turn: u64, path: &Path) -> Vec<Step> {
    let id = format!("call-{turn}-fs-write");
    let title = format!("Write {}", path.display());
    let raw_input = json!({"path": path, "content": WRITE_CONTENT});
    let content = vec![ContentItem::Diff {
        path: path.to_owned(),
        old_text: None,
        new_text: WRITE_CONTENT.to_owned(),
    }];
    let locations = vec![Location {
        path: path.to_owned(),
        line: None,
    }];
    vec![
        text(&format!(
            "I want to write `{}` through the client.\n",
            path.display()
        )),
        Step::ToolCall(ToolCallStep {
            id: id.clone(),
            title: title.clone(),
            kind: Some(ToolKind::Edit),
            status: Some(ToolCallStatus::Pending),
            raw_input: Some(raw_input.clone()),
            raw_output: None,
            content: content.clone(),
            locations: locations.clone(),
        }),
        Step::Permission(PermissionStep {
            session_id: None,
            tool_call_id: id.clone(),
            title: Some(title),
            kind: Some(ToolKind::Edit),
            raw_input: Some(raw_input),
            content: Some(content),
            locations: Some(locations),
            options: None,
            on_reject: OnReject::Continue,
            unasked_in_modes: Vec::new(),
            meanwhile: Vec::new(),
            withdraw_after_ms: None,
            allowed: vec![
                update(&id, ToolCallStatus::InProgress),
                write_step(path, Some(id.clone())),
                text(&format!("\nI wrote `{}`.\n", path.display())),
            ],
            rejected: vec![
                update(&id, ToolCallStatus::Failed),
                text(&format!(
                    "\nThe write was rejected, so I did not write `{}`.\n",
                    path.display()
                )),
            ],
            cancelled: vec![
                update(&id, ToolCallStatus::Failed),
                Step::Stop {
                    reason: StopReason::Cancelled,
                },
            ],
        }),
    ]
}

pub(super) fn fs_write_direct(path: &Path) -> Vec<Step> {
    vec![
        text(&format!(
            "Writing `{}` through the client without asking first.\n",
            path.display()
        )),
        write_step(path, None),
    ]
}

/// A pending execute tool call that a terminal step will embed.
fn execute_call(id: &str, title: &str, raw_input: &Value) -> Step {
    Step::ToolCall(ToolCallStep {
        id: id.to_owned(),
        title: title.to_owned(),
        kind: Some(ToolKind::Execute),
        status: Some(ToolCallStatus::Pending),
        raw_input: Some(raw_input.clone()),
        raw_output: None,
        content: Vec::new(),
        locations: Vec::new(),
    })
}

fn terminal_step(id: &str, command: &str) -> TerminalStep {
    TerminalStep {
        session_id: None,
        command: command.to_owned(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
        output_byte_limit: None,
        tool_call_id: Some(id.to_owned()),
        release: true,
        report_output: true,
    }
}

/// Ask to run a coloured `printf`, then run it as a whole shell line.
pub(super) fn term(turn: u64) -> Vec<Step> {
    let id = format!("call-{turn}-term");
    let title = "Run printf with colours, then echo done";
    let raw_input = json!({
        "command": TERM_COMMAND,
        "description": "Print a coloured line and a plain one in a client terminal",
    });
    vec![
        text("I need to run a command in a terminal of the client.\n"),
        execute_call(&id, title, &raw_input),
        Step::Permission(PermissionStep {
            session_id: None,
            tool_call_id: id.clone(),
            title: Some(title.to_owned()),
            kind: Some(ToolKind::Execute),
            raw_input: Some(raw_input),
            content: None,
            locations: None,
            options: None,
            on_reject: OnReject::Continue,
            unasked_in_modes: Vec::new(),
            meanwhile: Vec::new(),
            withdraw_after_ms: None,
            allowed: vec![
                Step::Terminal(terminal_step(&id, TERM_COMMAND)),
                text("\nThe command ran in a terminal of the client.\n"),
            ],
            rejected: vec![
                update(&id, ToolCallStatus::Failed),
                text("\nThe command was rejected, so I did not run it.\n"),
            ],
            cancelled: vec![
                update(&id, ToolCallStatus::Failed),
                Step::Stop {
                    reason: StopReason::Cancelled,
                },
            ],
        }),
    ]
}

pub(super) fn term_args(turn: u64) -> Vec<Step> {
    let id = format!("call-{turn}-term-args");
    let args: Vec<String> = TERM_ARGS.iter().map(|arg| (*arg).to_owned()).collect();
    vec![
        text("Running `printf` with three arguments in a terminal of the client.\n"),
        execute_call(
            &id,
            "Run printf with arguments",
            &json!({"command": "printf", "args": args}),
        ),
        Step::Terminal(TerminalStep {
            args,
            ..terminal_step(&id, "printf")
        }),
    ]
}

pub(super) fn term_forever(turn: u64) -> Vec<Step> {
    let id = format!("call-{turn}-term-forever");
    vec![
        text("Running `sleep 1000` in a terminal of the client; cancel the turn to kill it.\n"),
        execute_call(&id, "Run sleep 1000", &json!({"command": TERM_FOREVER})),
        Step::Terminal(terminal_step(&id, TERM_FOREVER)),
    ]
}

pub(super) fn term_limit(turn: u64) -> Vec<Step> {
    let id = format!("call-{turn}-term-limit");
    vec![
        text("Running a command with 5000 bytes of output; the terminal keeps 100.\n"),
        execute_call(
            &id,
            "Run yes 0123456789 | head -c 5000",
            &json!({"command": TERM_LIMIT}),
        ),
        Step::Terminal(TerminalStep {
            output_byte_limit: Some(TERM_LIMIT_BYTES),
            ..terminal_step(&id, TERM_LIMIT)
        }),
    ]
}

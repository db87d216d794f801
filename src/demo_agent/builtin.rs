//! The built-in scenarios, picked by the first word of the prompt and
//! written as [`Step`] lists (see `help`).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, PlanEntryPriority, PlanEntryStatus, StopReason, ToolCallStatus, ToolKind,
};
use serde_json::{Value, json};

use super::scenario::{
    ContentItem, Location, OnReject, OptionSpec, PermissionStep, PlanEntryStep, ReadFileStep, Step,
    TerminalStep, ToolCallStep, ToolUpdateStep, WriteFileStep,
};

mod client_calls;
mod tool_demos;

use client_calls::{
    client_file, fs_escape, fs_read, fs_write, fs_write_direct, term, term_args, term_forever,
    term_limit,
};
use tool_demos::{tool_demo, tools, two};

/// Chunks the `flood` scenario sends when the prompt names no count.
const DEFAULT_FLOOD: u64 = 1000;
/// The most chunks `flood N` sends, so that a typo cannot exhaust memory.
const MAX_FLOOD: u64 = 1_000_000;
/// Chunks the `slow` scenario streams (one every [`SLOW_TICK_MS`]: 60 s).
const SLOW_CHUNKS: u32 = 300;
const SLOW_TICK_MS: u64 = 200;
/// Pause between plan updates in the `plan` scenario.
const PLAN_TICK_MS: u64 = 150;
/// What `fs-write` and `fs-write-direct` write.
pub(crate) const WRITE_CONTENT: &str = "hello from warden-demo\n";
/// The shell line of the `term` scenario: coloured output, then a plain line.
pub(crate) const TERM_COMMAND: &str = r"printf '\033[32mgreen\033[0m and plain\n'; echo done";
/// The program and arguments of `term-args` (no shell: `a b` stays one argument).
const TERM_ARGS: [&str; 3] = ["%s-%s\n", "a b", "c"];
/// The shell line of `term-forever`.
const TERM_FOREVER: &str = "sleep 1000";
/// The shell line of `term-limit` and its output byte limit.
const TERM_LIMIT: &str = "yes 0123456789 | head -c 5000";
const TERM_LIMIT_BYTES: u64 = 100;

/// The prompt words of the tool scenarios, in the order `tools` plays them.
const TOOL_SCENARIOS: [&str; 10] = [
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "fetch",
    "think-tool",
    "switch",
    "other",
];

/// Every built-in scenario: prompt, what it does. Rendered by `help`.
const SCENARIOS: &[(&str, &str)] = &[
    ("help", "this table"),
    (
        "*anything else*",
        "a streamed markdown answer that echoes the prompt",
    ),
    ("think", "a few thought chunks, then a short answer"),
    (
        "plan",
        "a plan of 3 entries that goes pending -> in progress -> completed",
    ),
    (
        "read",
        "one `read` tool call (asks permission; like every tool call here, it only asks: no file is read, written, run or fetched)",
    ),
    ("edit", "one `edit` tool call with a diff (asks permission)"),
    ("delete", "one `delete` tool call (asks permission)"),
    ("move", "one `move` tool call (asks permission)"),
    ("search", "one `search` tool call (asks permission)"),
    (
        "execute",
        "one `execute` tool call: `cargo test` (asks permission)",
    ),
    ("fetch", "one `fetch` tool call (asks permission)"),
    ("think-tool", "one `think` tool call (asks permission)"),
    (
        "switch",
        "a `switch_mode` request to leave plan mode (asks permission)",
    ),
    ("other", "one tool call of kind `other` (asks permission)"),
    (
        "tools",
        "all the tool calls above in a row; stops at the first cancel",
    ),
    ("two", "two edit permission requests sent at once"),
    ("slow", "a chunk every 200 ms for 60 s; try cancelling it"),
    (
        "usage",
        "reports its context use three times over a second (`usage_update`: 3.2k tokens more each turn, and a cost)",
    ),
    (
        "flood [N]",
        "N message chunks of exactly 64 bytes as fast as possible (default 1000)",
    ),
    (
        "escape",
        "control characters and escape sequences in a message, a thought and a tool title",
    ),
    ("crash", "writes to stderr and exits with code 3 mid-turn"),
    (
        "fs-read [FILE]",
        "reads lines 2-3 of `<cwd>/FILE` (default `notes.txt`) through the client (`fs/read_text_file`)",
    ),
    (
        "fs-write [FILE]",
        "asks permission for an edit of `<cwd>/FILE` (default `hello.txt`), then writes it through the client (`fs/write_text_file`)",
    ),
    (
        "fs-write-direct [FILE]",
        "writes `<cwd>/FILE` (default `direct.txt`) through the client without asking first",
    ),
    (
        "fs-escape",
        "tries to read `<cwd>/../outside.txt` through the client",
    ),
    (
        "term",
        "asks to run a coloured `printf`, then runs it in a client terminal shown in the tool call, and releases it",
    ),
    (
        "term-args",
        "runs `printf` with the arguments `%s-%s\\n`, `a b` and `c` in a client terminal (no permission asked)",
    ),
    (
        "term-forever",
        "runs `sleep 1000` in a client terminal; cancelling the turn kills it",
    ),
    (
        "term-limit",
        "runs `yes 0123456789` cut by `head -c 5000` in a client terminal that keeps 100 bytes of output",
    ),
    (
        "own-bashrc",
        "appends a line to `~/.bashrc` itself (no ACP call): what an agent that never asks can do",
    ),
    ("own-ssh", "reads `~/.ssh/id_rsa` itself"),
    (
        "own-child PATH",
        "starts `sh` that appends to PATH (absolute, default `<cwd>/../outside.txt`)",
    ),
    (
        "own-loader",
        "lists the loader variables (`LD_PRELOAD`, ...) in its own environment",
    ),
    (
        "own-daemon [FILE]",
        "starts a daemon that leaves its session (`setsid`, its parent gone) and appends to `<cwd>/FILE` (default `daemon.log`) every 50 ms; its pid in `FILE.pid`",
    ),
    (
        "own-write [FILE]",
        "writes `<cwd>/FILE` (default `own.txt`) itself",
    ),
    (
        "own-link",
        "links `<cwd>/rc` to `~/.bashrc` and appends through the link itself",
    ),
    (
        "own-fds",
        "lists its own open descriptors past 2 that it could write to, with their targets",
    ),
    (
        "own-env",
        "lists the names of its own environment variables",
    ),
    ("own-read PATH", "reads PATH (absolute) itself"),
];

/// An `own-*` scenario's report, as a real agent reports its own tools:
/// a tool call whose output is `line` (failed when the IO failed), then
/// the line as text.
fn own_steps(turn: u64, name: &str, line: &str) -> Vec<Step> {
    let id = format!("call-{turn}-{name}");
    let failed = line.starts_with(&format!("{name}: failed"));
    vec![
        Step::ToolCall(ToolCallStep {
            id: id.clone(),
            title: name.to_owned(),
            kind: Some(ToolKind::Other),
            status: Some(ToolCallStatus::InProgress),
            raw_input: None,
            raw_output: None,
            content: Vec::new(),
            locations: Vec::new(),
        }),
        Step::ToolUpdate(ToolUpdateStep {
            id,
            status: Some(if failed {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            }),
            content: Some(vec![ContentItem::Text {
                text: line.to_owned(),
            }]),
            ..ToolUpdateStep::default()
        }),
        text(line),
    ]
}

/// `err` with the path it is about (std's errors do not name it).
fn at(path: &Path) -> impl Fn(std::io::Error) -> std::io::Error + '_ {
    move |err| std::io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// What an `own-*` scenario did with its own IO, outside ACP: `NAME: ok`
/// or `NAME: failed: PATH: ERROR` (a sandbox makes them fail).
fn own_io(name: &str, word: Option<&str>, cwd: &Path) -> String {
    use std::io::Write as _;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let result: std::io::Result<String> = match name {
        "own-bashrc" => std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(home.join(".bashrc"))
            .and_then(|mut f| f.write_all(b"echo demo-agent was here\n"))
            .map(|()| format!("appended to {}", home.join(".bashrc").display()))
            .map_err(at(&home.join(".bashrc"))),
        "own-ssh" => std::fs::read_to_string(home.join(".ssh/id_rsa"))
            .map(|key| format!("read {} bytes of the key", key.len()))
            .map_err(at(&home.join(".ssh/id_rsa"))),
        "own-child" => {
            let path = word
                .map(PathBuf::from)
                .unwrap_or_else(|| cwd.join("../outside.txt"));
            std::process::Command::new("sh")
                .arg("-c")
                .arg("echo child was here >> \"$1\"")
                .arg("sh")
                .arg(&path)
                .stderr(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stdin(std::process::Stdio::null())
                .output()
                .and_then(|out| {
                    if out.status.success() {
                        Ok(format!("the child wrote {}", path.display()))
                    } else {
                        Err(std::io::Error::other(format!(
                            "the child failed: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        )))
                    }
                })
        }
        "own-link" => {
            let link = cwd.join("rc");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(home.join(".bashrc"), &link)
                .and_then(|()| std::fs::OpenOptions::new().append(true).open(&link))
                .and_then(|mut f| f.write_all(b"echo demo-agent was here\n"))
                .map(|()| format!("appended through {}", link.display()))
                .map_err(at(&home.join(".bashrc")))
        }
        "own-fds" => writable_fds().map(|fds| format!("writable: [{}]", fds.join(", "))),
        "own-loader" => {
            use std::os::unix::ffi::OsStrExt as _;
            let names: Vec<String> = std::env::vars_os()
                .filter(|(name, _)| crate::sandbox::is_loader_var(name.as_bytes()))
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect();
            Ok(format!("loader variables: [{}]", names.join(", ")))
        }
        "own-daemon" => {
            let path = cwd.join(word.unwrap_or("daemon.log"));
            let daemon =
                "echo $$ > \"$1.pid\"; while :; do echo daemon >> \"$1\"; sleep 0.05; done";
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "setsid sh -c '{daemon}' sh \"$1\" </dev/null >/dev/null 2>&1 &"
                ))
                .arg("sh")
                .arg(&path)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map(|_| format!("a daemon appends to {}", path.display()))
        }
        "own-env" => {
            let mut names: Vec<String> = std::env::vars_os()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect();
            names.sort();
            Ok(format!("env: [{}]", names.join(", ")))
        }
        "own-read" => std::fs::read(word.map(PathBuf::from).unwrap_or_default())
            .map(|bytes| format!("read {} bytes", bytes.len())),
        _ => {
            let path = cwd.join(word.unwrap_or("own.txt"));
            std::fs::write(&path, "written by the demo agent itself\n")
                .map(|()| format!("wrote {}", path.display()))
                .map_err(at(&path))
        }
    };
    match result {
        Ok(what) => format!("{name}: ok: {what}\n"),
        Err(err) => format!("{name}: failed: {err}\n"),
    }
}

/// The process's open descriptors past 2 opened for writing (`N -> target`),
/// from `/proc/self/fd` and `/proc/self/fdinfo`: what a parent leaked.
fn writable_fds() -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_ok_and(|n| n <= 2) {
            continue;
        }
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{name}")).unwrap_or_default();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .unwrap_or(0);
        // O_WRONLY or O_RDWR.
        if flags & 0o3 != 0 {
            out.push(format!("{name} -> {}", target.display()));
        }
    }
    Ok(out)
}

/// The steps of the built-in scenario for `prompt`. `turn` numbers the turn
/// so that tool call ids stay unique within the agent process; `cwd` is the
/// session's working directory (client file paths are built from it).
pub(crate) fn steps_for(prompt: &str, turn: u64, cwd: &Path) -> Vec<Step> {
    let mut words = prompt.split_whitespace();
    let first = words.next().unwrap_or_default().to_lowercase();
    match first.as_str() {
        "help" => vec![text(&help_text())],
        "think" => think(),
        "plan" => plan(),
        "tools" => tools(turn),
        "two" => two(turn),
        "slow" => slow(),
        "usage" => usage(turn),
        "flood" => flood(words.next()),
        "escape" => escape(turn),
        "crash" => crash(),
        "fs-read" => fs_read(&client_file(cwd, words.next(), "notes.txt")),
        "fs-write" => fs_write(turn, &client_file(cwd, words.next(), "hello.txt")),
        "fs-write-direct" => fs_write_direct(&client_file(cwd, words.next(), "direct.txt")),
        "fs-escape" => fs_escape(cwd),
        "term" => term(turn),
        "term-args" => term_args(turn),
        "term-forever" => term_forever(turn),
        "term-limit" => term_limit(turn),
        "own-bashrc" | "own-ssh" | "own-child" | "own-write" | "own-link" | "own-fds" => {
            own_steps(turn, &first, &own_io(&first, words.next(), cwd))
        }
        "own-daemon" | "own-loader" | "own-env" | "own-read" => {
            vec![text(&own_io(&first, words.next(), cwd))]
        }
        name => match tool_demo(name) {
            Some(demo) => demo.steps(turn),
            None => markdown_answer(prompt),
        },
    }
}

/// The `help` answer: a markdown table of the scenarios.
pub(crate) fn help_text() -> String {
    let mut out = String::from(
        "## warden-demo scenarios\n\nThe first word of the prompt picks one (case does not matter).\n\n| prompt | what the agent does |\n| --- | --- |\n",
    );
    for (name, what) in SCENARIOS {
        let name = if name.starts_with('*') {
            (*name).to_owned()
        } else {
            format!("`{name}`")
        };
        out.push_str("| ");
        out.push_str(&name);
        out.push_str(" | ");
        out.push_str(what);
        out.push_str(" |\n");
    }
    out.push_str(
        "\nEvery permission request offers `allow-once`, `allow-always`, `reject-once` and `reject-always`; the agent reports the answer as `permission outcome: ...`.\n",
    );
    out.push_str(
        "\nEvery session is recorded on disk (in `$WARDEN_DEMO_STATE`, default `<data dir>/warden/demo-sessions/`) after each turn: another demo agent can `session/load` it (the transcript is replayed, then the session goes on), `session/resume` it, and `session/list` lists the sessions of a cwd.\n",
    );
    out.push_str(
        "\nThe `fs-*` and `term*` scenarios use the client's files and terminals (when it offers them at `initialize`) and report each answer as a line: `read ok: N lines` or `read failed: ...`, `write ok` or `write failed: ...`, `terminal exited: code N`, `output: \"...\"`, `truncated: BOOL, bytes: N`, `killed: ...`, `released`.\n",
    );
    out
}

fn text(text: &str) -> Step {
    Step::Text {
        text: text.to_owned(),
    }
}

fn thought(text: &str) -> Step {
    Step::Thought {
        text: text.to_owned(),
    }
}

fn sleep(ms: u64) -> Step {
    Step::Sleep { ms }
}

fn update(id: &str, status: ToolCallStatus) -> Step {
    Step::ToolUpdate(ToolUpdateStep {
        id: id.to_owned(),
        status: Some(status),
        ..ToolUpdateStep::default()
    })
}

fn markdown_answer(prompt: &str) -> Vec<Step> {
    let quoted: String = prompt
        .trim()
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    let quoted = if quoted.is_empty() {
        "> *(an empty prompt)*\n".to_owned()
    } else {
        quoted
    };
    vec![
        text("## Demo answer\n\n"),
        text("This is **warden"),
        text("-demo**, an offline agent that plays *scripted* scenarios. "),
        text("Nothing here comes from a model.\n\nYou wrote:\n\n"),
        text(&quoted),
        text("\nWhat it can show:\n\n"),
        text("- streamed **markdown** in chunks\n- tool calls that ask for "),
        text("permission\n- plans, thoughts and *cancellation*\n\n"),
        text("```rust\nfn main() {\n    let greeting = \"hello from warden-demo\";\n"),
        text("    println!(\"{greeting}\");\n}\n```\n\n"),
        text("Type `help` for the list of scenarios, or read about the protocol "),
        text("[here](https://example.com).\n"),
    ]
}

fn think() -> Vec<Step> {
    vec![
        thought("The user wants to see me think. "),
        thought("Options: answer at once, make a plan, or call a tool.\n"),
        thought("A plain answer is enough here; "),
        thought("no tool is needed."),
        text("I thought it over: the answer is **42**.\n"),
    ]
}

fn plan_step(statuses: [PlanEntryStatus; 3]) -> Step {
    let contents = [
        (
            "Read the failing test in `tests/parse.rs`",
            PlanEntryPriority::High,
        ),
        (
            "Fix the off-by-one in `parse_range`",
            PlanEntryPriority::High,
        ),
        ("Run `cargo test`", PlanEntryPriority::Medium),
    ];
    Step::Plan {
        entries: contents
            .into_iter()
            .zip(statuses)
            .map(|((content, priority), status)| PlanEntryStep {
                content: content.to_owned(),
                status,
                priority,
            })
            .collect(),
    }
}

fn plan() -> Vec<Step> {
    use PlanEntryStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    vec![
        text("Here is my plan.\n"),
        plan_step([Todo, Todo, Todo]),
        sleep(PLAN_TICK_MS),
        plan_step([Doing, Todo, Todo]),
        sleep(PLAN_TICK_MS),
        plan_step([Done, Doing, Todo]),
        sleep(PLAN_TICK_MS),
        plan_step([Done, Done, Doing]),
        sleep(PLAN_TICK_MS),
        plan_step([Done, Done, Done]),
        text("\nDone: all three steps of the plan are completed.\n"),
    ]
}

/// Tokens the `usage` scenario adds to the context each turn.
pub(crate) const USAGE_STEP: u64 = 3_200;
/// The context window the `usage` scenario reports.
const USAGE_SIZE: u64 = 200_000;
/// The context's tokens before the first turn (the system prompt's).
const USAGE_BASE: u64 = 8_000;
/// Pause between the `usage` scenario's reports.
const USAGE_TICK_MS: u64 = 500;

/// The context grows by [`USAGE_STEP`] over the turn, told in three
/// `usage_update`s with the cost so far; `turn` numbers the session's turns
/// from 1.
fn usage(turn: u64) -> Vec<Step> {
    let start = USAGE_BASE + USAGE_STEP * turn.saturating_sub(1);
    let report = |used: u64| Step::Usage {
        used: Some(used),
        size: USAGE_SIZE,
        cost: Some(used as f64 * 0.000_003),
        currency: None,
    };
    vec![
        report(start),
        text("Counting tokens"),
        sleep(USAGE_TICK_MS),
        report(start + USAGE_STEP / 2),
        text("…"),
        sleep(USAGE_TICK_MS),
        report(start + USAGE_STEP),
        text(" done: this turn added 3.2k tokens to the context.\n"),
    ]
}

fn slow() -> Vec<Step> {
    let mut steps = vec![text(
        "Starting a slow job (60 s). Cancel it whenever you like.\n",
    )];
    for tick in 1..=SLOW_CHUNKS {
        steps.push(sleep(SLOW_TICK_MS));
        steps.push(text(&format!("Still working... {tick}/{SLOW_CHUNKS}\n")));
    }
    steps.push(text("The slow job is finished.\n"));
    steps
}

fn flood(count: Option<&str>) -> Vec<Step> {
    let count = count
        .and_then(|word| word.parse::<u64>().ok())
        .unwrap_or(DEFAULT_FLOOD)
        .min(MAX_FLOOD);
    vec![Step::Flood {
        count,
        per_second: None,
        text: None,
    }]
}

/// Chunk `index` (from 0) of a flood of `count`: exactly 64 bytes of ASCII
/// ending in a newline.
pub fn flood_chunk(index: u64, count: u64) -> String {
    const FILL: &str = "the quick brown fox jumps over the lazy dog ";
    let mut chunk = format!("flood {index:>7}/{count:<7} ");
    let mut fill = FILL.chars().cycle();
    while chunk.len() < 63 {
        chunk.push(fill.next().unwrap_or('.'));
    }
    chunk.truncate(63);
    chunk.push('\n');
    chunk
}

fn escape(turn: u64) -> Vec<Step> {
    let id = format!("call-{turn}-escape");
    vec![
        thought(
            "Thinking with a bell \u{7}, a screen clear \u{1b}[2J and a bidi override \u{202e}here.",
        ),
        text("Escape test. Colour: \u{1b}[31mred\u{1b}[0m. Title: \u{1b}]0;pwned\u{7}. "),
        text(
            "Carriage return:\rX. Backspace:\u{8}. C1 CSI: \u{9b}31m. NUL: \u{0}. DEL: \u{7f}. Tab:\tend.\n",
        ),
        Step::ToolCall(ToolCallStep {
            id: id.clone(),
            title: "Run \u{1b}[31mrm -rf /\u{1b}[0m\r\u{8}harmless".to_owned(),
            kind: Some(ToolKind::Other),
            status: Some(ToolCallStatus::Completed),
            raw_input: Some(json!({"command": "echo \u{1b}[2J\u{1b}]0;title\u{7}"})),
            raw_output: None,
            content: vec![ContentItem::Text {
                text: "output with \u{1b}[1mbold\u{1b}[0m and \u{9b}2J".to_owned(),
            }],
            locations: Vec::new(),
        }),
        text("Nothing above should have changed your terminal.\n"),
    ]
}

fn crash() -> Vec<Step> {
    vec![
        text("Starting the risky part...\n"),
        Step::Stderr {
            text: "demo-agent: simulated crash".to_owned(),
            repeat: None,
        },
        Step::Stderr {
            text: "demo-agent: exiting with code 3".to_owned(),
            repeat: None,
        },
        Step::Exit { code: 3 },
    ]
}

#[cfg(test)]
#[path = "builtin_tests.rs"]
mod tests;

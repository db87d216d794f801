//! The tool call demos: one permission request each (`edit`, `exec`, ...),
//! what it shows, what it asks, and what each answer leads to; `tools` and
//! `two` play several.

use super::*;

/// One demo tool call: what it shows, what it asks, what each answer leads to.
pub(super) struct ToolDemo {
    /// The prompt word, also part of the tool call id.
    name: &'static str,
    kind: ToolKind,
    title: &'static str,
    raw_input: Value,
    content: Vec<ContentItem>,
    locations: Vec<Location>,
    /// The options offered (the default four when `None`).
    options: Option<Vec<OptionSpec>>,
    /// The tool's output once it ran.
    output: &'static str,
    /// The answer after the tool ran.
    done: &'static str,
    /// The answer after a reject: says plainly that nothing happened.
    rejected: &'static str,
    /// Extra steps after the tool ran (the mode change of `switch`).
    after: Vec<Step>,
}

fn location(path: &str, line: Option<u32>) -> Location {
    Location {
        path: path.into(),
        line,
    }
}

const EDIT_OLD: &str = "fn main() {\n    let args = std::env::args().collect::<Vec<_>>();\n    let name = &args[1];\n    println!(\"Hello, {name}!\");\n}\n";
const EDIT_NEW: &str = "fn main() {\n    let args = std::env::args().collect::<Vec<_>>();\n    let Some(name) = args.get(1) else {\n        eprintln!(\"usage: hello NAME\");\n        std::process::exit(2);\n    };\n    println!(\"Hello, {name}!\");\n}\n";
const PLAN_TEXT: &str = "## Plan\n\n1. Read the failing test in `tests/parse.rs`\n2. Fix the off-by-one in `parse_range`\n3. Run `cargo test`\n";

pub(super) fn tool_demo(name: &str) -> Option<ToolDemo> {
    let demo = match name {
        "read" => ToolDemo {
            name: "read",
            kind: ToolKind::Read,
            title: "Read src/main.rs",
            raw_input: json!({"path": "src/main.rs"}),
            content: Vec::new(),
            locations: vec![location("src/main.rs", Some(1))],
            options: None,
            output: EDIT_OLD,
            done: "The demo agent only asks: it read no file, and the `src/main.rs` shown is made up (`fs-read` reads a real one through warden).\n",
            rejected: "The read was rejected, so I did not look at src/main.rs.\n",
            after: Vec::new(),
        },
        "edit" => ToolDemo {
            name: "edit",
            kind: ToolKind::Edit,
            title: "Edit src/main.rs",
            raw_input: json!({
                "path": "src/main.rs",
                "old_string": "    let name = &args[1];\n",
                "new_string": "    let Some(name) = args.get(1) else {\n        eprintln!(\"usage: hello NAME\");\n        std::process::exit(2);\n    };\n",
            }),
            content: vec![ContentItem::Diff {
                path: "src/main.rs".into(),
                old_text: Some(EDIT_OLD.to_owned()),
                new_text: EDIT_NEW.to_owned(),
            }],
            locations: vec![location("src/main.rs", Some(3))],
            options: None,
            output: "demo: nothing written (an agent would have edited src/main.rs, +4 -1)",
            done: "The demo agent only asks: `src/main.rs` was not changed, no file was (`fs-write` writes a real one, `hello.txt`, through warden).\n",
            rejected: "The edit was rejected, so src/main.rs was not changed.\n",
            after: Vec::new(),
        },
        "delete" => ToolDemo {
            name: "delete",
            kind: ToolKind::Delete,
            title: "Delete src/legacy.rs",
            raw_input: json!({"path": "src/legacy.rs"}),
            content: vec![ContentItem::Diff {
                path: "src/legacy.rs".into(),
                old_text: Some("// Old parser, replaced by parse.rs.\npub fn parse_old(input: &str) -> usize {\n    input.len()\n}\n".to_owned()),
                new_text: String::new(),
            }],
            locations: vec![location("src/legacy.rs", None)],
            options: None,
            output: "demo: nothing deleted (an agent would have deleted src/legacy.rs)",
            done: "The demo agent only asks: `src/legacy.rs` was not deleted.\n",
            rejected: "The delete was rejected, so src/legacy.rs still exists.\n",
            after: Vec::new(),
        },
        "move" => ToolDemo {
            name: "move",
            kind: ToolKind::Move,
            title: "Move src/utils.rs to src/util/mod.rs",
            raw_input: json!({"source": "src/utils.rs", "destination": "src/util/mod.rs"}),
            content: Vec::new(),
            locations: vec![
                location("src/utils.rs", None),
                location("src/util/mod.rs", None),
            ],
            options: None,
            output: "demo: nothing moved (an agent would have moved src/utils.rs -> src/util/mod.rs)",
            done: "The demo agent only asks: `src/utils.rs` was not moved.\n",
            rejected: "The move was rejected, so src/utils.rs was not moved.\n",
            after: Vec::new(),
        },
        "search" => ToolDemo {
            name: "search",
            kind: ToolKind::Search,
            title: "Search for \"TODO\" in src",
            raw_input: json!({"pattern": "TODO", "path": "src", "glob": "*.rs"}),
            content: Vec::new(),
            locations: vec![location("src", None)],
            options: None,
            output: "demo, made up:\nsrc/main.rs:12: // TODO: handle --help\nsrc/parse.rs:40: // TODO: ranges with a step\n",
            done: "The demo agent only asks: nothing was searched, and the 2 TODOs shown are made up.\n",
            rejected: "The search was rejected, so I did not search src.\n",
            after: Vec::new(),
        },
        "execute" => ToolDemo {
            name: "execute",
            kind: ToolKind::Execute,
            title: "Run cargo test",
            raw_input: json!({"command": "cargo test", "description": "Run the test suite"}),
            content: Vec::new(),
            locations: Vec::new(),
            options: None,
            output: "demo: not run (an agent would show the output of cargo test here)",
            done: "The demo agent only asks: `cargo test` did not run (`term` runs a real command in a warden terminal).\n",
            rejected: "The command was rejected, so `cargo test` was not run.\n",
            after: Vec::new(),
        },
        "fetch" => ToolDemo {
            name: "fetch",
            kind: ToolKind::Fetch,
            title: "Fetch https://example.com/docs/api.md",
            raw_input: json!({"url": "https://example.com/docs/api.md", "prompt": "Summarise the API"}),
            content: Vec::new(),
            locations: Vec::new(),
            options: None,
            output: "demo: nothing fetched (an agent would show the page here)",
            done: "The demo agent only asks: nothing was downloaded.\n",
            rejected: "The fetch was rejected, so nothing was downloaded from example.com.\n",
            after: Vec::new(),
        },
        "think-tool" => ToolDemo {
            name: "think-tool",
            kind: ToolKind::Think,
            title: "Think about error handling",
            raw_input: json!({"thought": "Should parse errors abort, or be collected and reported at the end?"}),
            content: vec![ContentItem::Text {
                text: "Collect the errors and report them all at the end.".to_owned(),
            }],
            locations: Vec::new(),
            options: None,
            output: "Decision: collect errors, report at the end.",
            done: "I decided to collect parse errors and report them all at the end.\n",
            rejected: "The think step was rejected, so I did not reason about it further.\n",
            after: Vec::new(),
        },
        "switch" => ToolDemo {
            name: "switch",
            kind: ToolKind::SwitchMode,
            title: "Ready to code?",
            raw_input: json!({"plan": PLAN_TEXT}),
            content: vec![ContentItem::Text {
                text: PLAN_TEXT.to_owned(),
            }],
            locations: Vec::new(),
            options: Some(vec![
                OptionSpec::new(
                    "allow-always",
                    "Yes, and auto-accept edits",
                    PermissionOptionKind::AllowAlways,
                ),
                OptionSpec::new(
                    "allow-once",
                    "Yes, and manually approve edits",
                    PermissionOptionKind::AllowOnce,
                ),
                OptionSpec::new(
                    "reject-once",
                    "No, keep planning",
                    PermissionOptionKind::RejectOnce,
                ),
                OptionSpec::new(
                    "reject-always",
                    "No, and stop asking",
                    PermissionOptionKind::RejectAlways,
                ),
            ]),
            output: "Leaving plan mode",
            done: "Leaving plan mode: I will start with the failing test.\n",
            rejected: "Staying in plan mode, so nothing was changed.\n",
            after: vec![Step::Mode {
                mode: "default".to_owned(),
            }],
        },
        "other" => ToolDemo {
            name: "other",
            kind: ToolKind::Other,
            title: "mcp__github__create_issue",
            raw_input: json!({"repo": "example/hello", "title": "Crash without arguments", "labels": ["bug"]}),
            content: Vec::new(),
            locations: Vec::new(),
            options: None,
            output: "demo: no issue created (an agent would have created #42)",
            done: "The demo agent only asks: no issue was created, and #42 is made up.\n",
            rejected: "The tool call was rejected, so no issue was created.\n",
            after: Vec::new(),
        },
        _ => return None,
    };
    Some(demo)
}

impl ToolDemo {
    fn id(&self, turn: u64) -> String {
        format!("call-{turn}-{}", self.name)
    }

    /// The tool call announcement, permission request and the branches.
    pub(super) fn steps(self, turn: u64) -> Vec<Step> {
        let id = self.id(turn);
        let mut steps = vec![
            text(&format!("I need to use a tool: {}.\n", self.title)),
            self.announce(&id),
        ];
        steps.push(Step::Permission(self.permission(id)));
        steps
    }

    fn announce(&self, id: &str) -> Step {
        Step::ToolCall(ToolCallStep {
            id: id.to_owned(),
            title: self.title.to_owned(),
            kind: Some(self.kind),
            status: Some(ToolCallStatus::Pending),
            raw_input: Some(self.raw_input.clone()),
            raw_output: None,
            content: self.content.clone(),
            locations: self.locations.clone(),
        })
    }

    fn permission(self, id: String) -> PermissionStep {
        let mut allowed = vec![
            update(&id, ToolCallStatus::InProgress),
            Step::ToolUpdate(ToolUpdateStep {
                id: id.clone(),
                status: Some(ToolCallStatus::Completed),
                content: Some(completed_content(&self.content, self.output)),
                raw_output: Some(json!({"output": self.output})),
                ..ToolUpdateStep::default()
            }),
        ];
        allowed.extend(self.after);
        allowed.push(text(&format!("\n{}", self.done)));
        PermissionStep {
            session_id: None,
            tool_call_id: id.clone(),
            title: Some(self.title.to_owned()),
            kind: Some(self.kind),
            raw_input: Some(self.raw_input),
            content: (!self.content.is_empty()).then_some(self.content),
            locations: (!self.locations.is_empty()).then_some(self.locations),
            options: self.options,
            on_reject: OnReject::Continue,
            unasked_in_modes: Vec::new(),
            meanwhile: Vec::new(),
            withdraw_after_ms: None,
            allowed,
            rejected: vec![
                update(&id, ToolCallStatus::Failed),
                text(&format!("\n{}", self.rejected)),
            ],
            cancelled: vec![
                update(&id, ToolCallStatus::Failed),
                Step::Stop {
                    reason: StopReason::Cancelled,
                },
            ],
        }
    }
}

/// The content of a finished tool call: what it showed, then its output
/// (diffs stay visible after the edit is done).
fn completed_content(shown: &[ContentItem], output: &str) -> Vec<ContentItem> {
    let mut content: Vec<ContentItem> = shown
        .iter()
        .filter(|item| matches!(item, ContentItem::Diff { .. }))
        .cloned()
        .collect();
    content.push(ContentItem::Text {
        text: output.to_owned(),
    });
    content
}

pub(super) fn tools(turn: u64) -> Vec<Step> {
    let mut steps = vec![text(
        "Trying every kind of tool call, one after another.\n\n",
    )];
    for demo in TOOL_SCENARIOS.iter().filter_map(|name| tool_demo(name)) {
        steps.extend(demo.steps(turn));
        steps.push(text("\n"));
    }
    steps.push(text("That was every tool kind.\n"));
    steps
}

pub(super) fn two(turn: u64) -> Vec<Step> {
    let first = ToolDemo {
        name: "edit-a",
        title: "Edit src/lib.rs",
        raw_input: json!({"path": "src/lib.rs"}),
        content: vec![ContentItem::Diff {
            path: "src/lib.rs".into(),
            old_text: Some("pub mod parse;\n".to_owned()),
            new_text: "pub mod parse;\npub mod util;\n".to_owned(),
        }],
        locations: vec![location("src/lib.rs", Some(1))],
        done: "The demo agent only asks: src/lib.rs was not changed.\n",
        rejected: "The edit of src/lib.rs was rejected, so src/lib.rs was not changed.\n",
        output: "demo: nothing written (an agent would have edited src/lib.rs, +1)",
        ..tool_demo_edit()
    };
    let second = ToolDemo {
        name: "edit-b",
        title: "Edit README.md",
        raw_input: json!({"path": "README.md"}),
        content: vec![ContentItem::Diff {
            path: "README.md".into(),
            old_text: Some("# hello\n".to_owned()),
            new_text: "# hello\n\nUsage: `hello NAME`\n".to_owned(),
        }],
        locations: vec![location("README.md", Some(1))],
        done: "The demo agent only asks: README.md was not changed.\n",
        rejected: "The edit of README.md was rejected, so README.md was not changed.\n",
        output: "demo: nothing written (an agent would have edited README.md, +2)",
        ..tool_demo_edit()
    };
    let (first_id, second_id) = (first.id(turn), second.id(turn));
    let mut steps = vec![
        text("I need two edits; asking for both at once.\n"),
        first.announce(&first_id),
        second.announce(&second_id),
    ];
    steps.push(Step::Permissions {
        requests: vec![first.permission(first_id), second.permission(second_id)],
    });
    steps.push(text("\nBoth requests are answered.\n"));
    steps
}

/// The `edit` demo, as a base for variations.
fn tool_demo_edit() -> ToolDemo {
    ToolDemo {
        name: "edit",
        kind: ToolKind::Edit,
        title: "Edit src/main.rs",
        raw_input: json!({"path": "src/main.rs"}),
        content: Vec::new(),
        locations: Vec::new(),
        options: None,
        output: "",
        done: "",
        rejected: "",
        after: Vec::new(),
    }
}

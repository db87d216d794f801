#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn empty_toml_is_the_default_scenario() {
    assert_eq!(Scenario::from_toml("").unwrap(), Scenario::default());
}

#[test]
fn toml_turn_with_every_step_type_parses() {
    let text = r#"
        protocol_version = 0
        agent_name = "scripted"
        builtin = false

        [[turns]]
        match = "Fix"
        once = true

        [[turns.steps]]
        type = "text"
        text = "On it.\n"

        [[turns.steps]]
        type = "thought"
        text = "hmm"

        [[turns.steps]]
        type = "user"
        text = "fix it"

        [[turns.steps]]
        type = "tool_call"
        id = "c1"
        title = "Edit src/lib.rs"
        kind = "edit"
        raw_input = { path = "src/lib.rs" }
        content = [
          { type = "diff", path = "src/lib.rs", old_text = "a\n", new_text = "b\n" },
          { type = "text", text = "one change" },
          { type = "terminal", terminal_id = "term-1" },
        ]
        locations = [{ path = "src/lib.rs", line = 3 }]

        [[turns.steps]]
        type = "permission"
        tool_call_id = "c1"
        on_reject = "stop"
        allowed = [{ type = "tool_update", id = "c1", status = "completed" }]
        rejected = [{ type = "tool_update", id = "c1", status = "failed" }]

        [[turns.steps]]
        type = "plan"
        entries = [{ content = "one" }, { content = "two", status = "in_progress", priority = "high" }]

        [[turns.steps]]
        type = "sleep"
        ms = 10

        [[turns.steps]]
        type = "mode"
        mode = "auto"

        [[turns.steps]]
        type = "flood"
        count = 3

        [[turns.steps]]
        type = "stderr"
        text = "log line"

        [[turns.steps]]
        type = "exit"
        code = 3

        [[turns.steps]]
        type = "stop"
        reason = "max_tokens"
    "#;
    let scenario = Scenario::from_toml(text).unwrap();
    assert_eq!(scenario.protocol_version, 0);
    assert_eq!(scenario.agent_name.as_deref(), Some("scripted"));
    assert!(!scenario.builtin);
    let turn = &scenario.turns[0];
    assert_eq!(turn.prefix.as_deref(), Some("Fix"));
    assert!(turn.once);
    assert_eq!(turn.steps.len(), 12);
    assert_eq!(
        turn.steps[3],
        Step::ToolCall(ToolCallStep {
            id: "c1".into(),
            title: "Edit src/lib.rs".into(),
            kind: Some(ToolKind::Edit),
            status: None,
            raw_input: Some(json!({"path": "src/lib.rs"})),
            raw_output: None,
            content: vec![
                ContentItem::Diff {
                    path: "src/lib.rs".into(),
                    old_text: Some("a\n".into()),
                    new_text: "b\n".into(),
                },
                ContentItem::Text {
                    text: "one change".into()
                },
                ContentItem::Terminal {
                    terminal_id: "term-1".into()
                },
            ],
            locations: vec![Location {
                path: "src/lib.rs".into(),
                line: Some(3)
            }],
        })
    );
    let Step::Permission(permission) = &turn.steps[4] else {
        panic!("not a permission step: {:?}", turn.steps[4]);
    };
    assert_eq!(permission.on_reject, OnReject::Stop);
    assert_eq!(permission.options, None);
    assert_eq!(permission.allowed.len(), 1);
    assert_eq!(
        turn.steps[5],
        Step::Plan {
            entries: vec![
                PlanEntryStep {
                    content: "one".into(),
                    status: PlanEntryStatus::Pending,
                    priority: PlanEntryPriority::Medium,
                },
                PlanEntryStep {
                    content: "two".into(),
                    status: PlanEntryStatus::InProgress,
                    priority: PlanEntryPriority::High,
                },
            ]
        }
    );
    assert_eq!(
        turn.steps[11],
        Step::Stop {
            reason: StopReason::MaxTokens
        }
    );
}

#[test]
fn json_accepts_camel_case_field_names() {
    let text = r#"{
        "protocolVersion": 2,
        "turns": [{ "steps": [
            { "type": "tool_call", "id": "x", "title": "Run ls", "kind": "execute",
              "rawInput": { "command": "ls" },
              "content": [{ "type": "diff", "path": "a", "oldText": null, "newText": "b" }] },
            { "type": "permission", "toolCallId": "x",
              "options": [{ "id": "ok", "name": "OK", "kind": "allow_once" }] }
        ]}]
    }"#;
    let scenario = Scenario::from_json(text).unwrap();
    assert_eq!(scenario.protocol_version, 2);
    let Step::Permission(permission) = &scenario.turns[0].steps[1] else {
        panic!("not a permission step");
    };
    assert_eq!(
        permission.options,
        Some(vec![OptionSpec::new(
            "ok",
            "OK",
            PermissionOptionKind::AllowOnce
        )])
    );
}

#[test]
fn unknown_fields_and_step_types_are_errors() {
    assert!(Scenario::from_toml("protocol = 1").is_err());
    assert!(Scenario::from_toml("[[turns]]\nsteps = [{ type = \"dance\" }]").is_err());
    assert!(
        Scenario::from_toml(
            "[[turns]]\nsteps = [{ type = \"tool_call\", id = \"a\", title = \"t\", colour = 1 }]"
        )
        .is_err()
    );
    assert!(
        Scenario::from_toml("[[turns]]\nsteps = [{ type = \"stop\", reason = \"tired\" }]")
            .is_err()
    );
}

#[test]
fn select_prefers_matching_turns_then_the_fallback() {
    let scenario = Scenario::from_toml(
        r#"
        [[turns]]
        steps = []
        [[turns]]
        match = "edit"
        steps = []
        "#,
    )
    .unwrap();
    let mut used = HashSet::new();
    assert_eq!(scenario.select("  EDIT the file", &mut used), Some(1));
    assert_eq!(scenario.select("something else", &mut used), Some(0));
}

#[test]
fn once_turns_play_in_order() {
    let scenario = Scenario::from_toml(
        r#"
        [[turns]]
        once = true
        [[turns]]
        once = true
        "#,
    )
    .unwrap();
    let mut used = HashSet::new();
    assert_eq!(scenario.select("a", &mut used), Some(0));
    assert_eq!(scenario.select("b", &mut used), Some(1));
    assert_eq!(scenario.select("c", &mut used), None);
}

#[test]
fn load_picks_the_format_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let toml_path = dir.path().join("s.TOML");
    std::fs::write(&toml_path, "protocol_version = 0").unwrap();
    assert_eq!(Scenario::load(&toml_path).unwrap().protocol_version, 0);
    let json_path = dir.path().join("s.json");
    std::fs::write(&json_path, r#"{"protocol_version": 3}"#).unwrap();
    assert_eq!(Scenario::load(&json_path).unwrap().protocol_version, 3);
    let other = dir.path().join("s.yaml");
    std::fs::write(&other, "").unwrap();
    assert!(matches!(
        Scenario::load(&other),
        Err(ScenarioError::Extension { .. })
    ));
    assert!(matches!(
        Scenario::load(&dir.path().join("missing.toml")),
        Err(ScenarioError::Read { .. })
    ));
}

#[test]
fn client_steps_parse_and_say_what_they_need() {
    let scenario = Scenario::from_toml(
        r#"
        [[turns]]
        steps = [
          { type = "read_file", path = "notes.txt", line = 2, limit = 2 },
          { type = "permission", tool_call_id = "w", allowed = [
            { type = "write_file", path = "/abs/out.txt", content = "x\n", tool_call_id = "w" },
          ] },
        ]
        [[turns]]
        match = "term"
        steps = [
          { type = "terminal", command = "printf", args = ["%s", "a b"], output_byte_limit = 10,
            env = [{ name = "A", value = "1" }], cwd = "sub", release = false },
        ]
        "#,
    )
    .unwrap();
    let first = &scenario.turns[0].steps;
    assert_eq!(
        first[0],
        Step::ReadFile(ReadFileStep {
            session_id: None,
            path: "notes.txt".into(),
            line: Some(2),
            limit: Some(2),
            tool_call_id: None,
        })
    );
    assert_eq!(
        ClientFeatures::needed_by(first),
        ClientFeatures {
            read_text_file: true,
            write_text_file: true,
            terminal: false,
        }
    );
    let Step::Terminal(terminal) = &scenario.turns[1].steps[0] else {
        panic!("not a terminal step");
    };
    assert_eq!(terminal.args, ["%s", "a b"]);
    assert_eq!(terminal.output_byte_limit, Some(10));
    assert_eq!(terminal.cwd.as_deref(), Some(Path::new("sub")));
    assert!(!terminal.release);
    let needed = ClientFeatures::needed_by(&scenario.turns[1].steps);
    assert_eq!(
        needed.missing_from(ClientFeatures::default()),
        ["the client does not offer terminals"]
    );
    assert!(
        needed
            .missing_from(ClientFeatures {
                terminal: true,
                ..ClientFeatures::default()
            })
            .is_empty()
    );
    assert!(
        Scenario::from_toml("[[turns]]\nsteps = [{ type = \"terminal\" }]").is_err(),
        "a terminal needs a command"
    );
}

#[test]
fn shipped_example_scenarios_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios");
    let basic = Scenario::load(&dir.join("basic.toml")).unwrap();
    assert!(!basic.turns.is_empty());
    let v0 = Scenario::load(&dir.join("protocol-v0.toml")).unwrap();
    assert_eq!(v0.protocol_version, 0);
    let client = Scenario::load(&dir.join("client-tools.toml")).unwrap();
    let needed = client
        .turns
        .iter()
        .fold(ClientFeatures::default(), |all, turn| {
            let one = ClientFeatures::needed_by(&turn.steps);
            ClientFeatures {
                read_text_file: all.read_text_file || one.read_text_file,
                write_text_file: all.write_text_file || one.write_text_file,
                terminal: all.terminal || one.terminal,
            }
        });
    assert_eq!(
        needed,
        ClientFeatures {
            read_text_file: true,
            write_text_file: true,
            terminal: true,
        }
    );
}

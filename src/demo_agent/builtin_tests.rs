#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn cwd() -> &'static Path {
    Path::new("/work/project")
}

#[test]
fn flood_chunks_are_64_bytes_ending_in_a_newline() {
    for (index, count) in [(0, 1), (999, 1000), (999_999, 1_000_000)] {
        let chunk = flood_chunk(index, count);
        assert_eq!(chunk.len(), 64, "{chunk:?}");
        assert!(chunk.is_ascii());
        assert!(chunk.ends_with('\n'));
        assert_eq!(chunk.matches('\n').count(), 1);
    }
}

#[test]
fn flood_count_comes_from_the_second_word() {
    assert_eq!(
        steps_for("flood", 1, cwd()),
        vec![Step::Flood {
            count: 1000,
            per_second: None,
            text: None
        }]
    );
    assert_eq!(
        steps_for("FLOOD 25", 1, cwd()),
        vec![Step::Flood {
            count: 25,
            per_second: None,
            text: None
        }]
    );
    assert_eq!(
        steps_for("flood 99999999999", 1, cwd()),
        vec![Step::Flood {
            count: MAX_FLOOD,
            per_second: None,
            text: None
        }]
    );
}

#[test]
fn help_lists_every_scenario() {
    let help = help_text();
    for name in TOOL_SCENARIOS.iter().chain(&[
        "help",
        "think",
        "plan",
        "tools",
        "two",
        "slow",
        "flood",
        "escape",
        "crash",
        "fs-read",
        "fs-write",
        "fs-write-direct",
        "fs-escape",
        "term",
        "term-args",
        "term-forever",
        "term-limit",
    ]) {
        assert!(
            help.contains(&format!("`{name}")),
            "{name} missing from help"
        );
    }
}

#[test]
fn every_tool_scenario_asks_permission_with_four_options_of_distinct_kinds() {
    for name in TOOL_SCENARIOS {
        let steps = steps_for(name, 7, cwd());
        let Some(Step::Permission(request)) = steps.last() else {
            panic!("{name}: last step is not a permission request");
        };
        let options = request
            .options
            .clone()
            .unwrap_or_else(OptionSpec::default_four);
        let mut kinds: Vec<String> = options.iter().map(|o| format!("{:?}", o.kind)).collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), 4, "{name}");
        let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
        for id in ["allow-once", "allow-always", "reject-once", "reject-always"] {
            assert!(ids.contains(&id), "{name}: {id}");
        }
        assert_eq!(request.tool_call_id, format!("call-7-{name}"));
    }
}

#[test]
fn tools_plays_every_tool_kind() {
    let permissions = steps_for("tools", 1, cwd())
        .into_iter()
        .filter(|step| matches!(step, Step::Permission(_)))
        .count();
    assert_eq!(permissions, TOOL_SCENARIOS.len());
}

#[test]
fn any_other_prompt_is_echoed_once() {
    let steps = steps_for("Explain lifetimes", 1, cwd());
    let all: String = steps
        .iter()
        .filter_map(|step| match step {
            Step::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(all.matches("Explain lifetimes").count(), 1);
    assert!(all.contains("```rust\n"));
    assert!(all.contains("[here](https://example.com)"));
}

fn client_steps(steps: &[Step]) -> Vec<&Step> {
    steps
        .iter()
        .filter(|step| {
            matches!(
                step,
                Step::ReadFile(_) | Step::WriteFile(_) | Step::Terminal(_)
            )
        })
        .collect()
}

#[test]
fn fs_scenarios_use_absolute_paths_from_the_cwd() {
    let steps = steps_for("fs-read", 1, cwd());
    let [Step::ReadFile(read)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!(read.path, Path::new("/work/project/notes.txt"));
    assert_eq!((read.line, read.limit), (Some(2), Some(2)));

    let steps = steps_for("fs-read src/lib.rs", 1, cwd());
    let [Step::ReadFile(read)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!(read.path, Path::new("/work/project/src/lib.rs"));

    let steps = steps_for("fs-escape", 1, cwd());
    let [Step::ReadFile(read)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!(read.path, Path::new("/work/project/../outside.txt"));

    let steps = steps_for("fs-write-direct", 1, cwd());
    let [Step::WriteFile(write)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!(write.path, Path::new("/work/project/direct.txt"));
    assert_eq!(write.content, WRITE_CONTENT);
}

#[test]
fn fs_write_writes_only_in_the_allowed_branch() {
    let steps = steps_for("fs-write", 4, cwd());
    assert!(client_steps(&steps).is_empty());
    let Some(Step::Permission(request)) = steps.last() else {
        panic!("{steps:?}");
    };
    assert_eq!(request.tool_call_id, "call-4-fs-write");
    assert_eq!(request.kind, Some(ToolKind::Edit));
    let path = Path::new("/work/project/hello.txt");
    assert_eq!(request.locations.as_ref().unwrap()[0].path, path);
    let [Step::WriteFile(write)] = client_steps(&request.allowed)[..] else {
        panic!("{:?}", request.allowed);
    };
    assert_eq!(write.path, path);
    assert!(client_steps(&request.rejected).is_empty());
}

#[test]
fn term_scenarios_shape_their_commands() {
    let steps = steps_for("term", 2, cwd());
    let Some(Step::Permission(request)) = steps.last() else {
        panic!("{steps:?}");
    };
    assert_eq!(request.kind, Some(ToolKind::Execute));
    let [Step::Terminal(term)] = client_steps(&request.allowed)[..] else {
        panic!("{:?}", request.allowed);
    };
    assert_eq!(term.command, TERM_COMMAND);
    assert!(term.args.is_empty());
    assert_eq!(term.tool_call_id.as_deref(), Some("call-2-term"));

    let steps = steps_for("term-args", 2, cwd());
    let [Step::Terminal(term)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!((term.command.as_str(), term.args.len()), ("printf", 3));

    let steps = steps_for("term-limit", 2, cwd());
    let [Step::Terminal(term)] = client_steps(&steps)[..] else {
        panic!("{steps:?}");
    };
    assert_eq!(term.output_byte_limit, Some(100));
    for name in ["term-args", "term-forever", "term-limit"] {
        let steps = steps_for(name, 2, cwd());
        assert!(
            !steps.iter().any(|step| matches!(step, Step::Permission(_))),
            "{name} asks no permission"
        );
    }
}

/// The tool scenarios only ask: allowed, none touches a file, runs a
/// command or reaches the network through the client, and each says so
/// instead of claiming it did (issue 33: "I edited src/main.rs" while no
/// file changed).
#[test]
fn allowed_tool_scenarios_say_they_only_asked() {
    for name in TOOL_SCENARIOS {
        let steps = steps_for(name, 1, cwd());
        let Some(Step::Permission(request)) = steps.last() else {
            panic!("{name}: no permission request");
        };
        assert!(client_steps(&request.allowed).is_empty(), "{name}");
        if matches!(name, "think-tool" | "switch") {
            // Thinking and leaving plan mode are all they claim.
            continue;
        }
        let said: String = request
            .allowed
            .iter()
            .filter_map(|step| match step {
                Step::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(said.contains("The demo agent only asks"), "{name}: {said}");
        for claim in [
            "I edited",
            "I deleted",
            "I moved",
            "I read",
            "I found",
            "I opened",
            "passed:",
        ] {
            assert!(!said.contains(claim), "{name} claims {claim:?}: {said}");
        }
    }
    // `two` asks for two edits at once: neither claims a change.
    let steps = steps_for("two", 1, cwd());
    let Some(Step::Permissions { requests }) =
        steps.iter().find(|s| matches!(s, Step::Permissions { .. }))
    else {
        panic!("two: no permission requests");
    };
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert!(client_steps(&request.allowed).is_empty());
        let said = format!("{:?}", request.allowed);
        assert!(said.contains("The demo agent only asks"), "{said}");
        assert!(!said.contains("now d"), "{said}");
    }
}

use super::*;
use crate::model::{Location, PlanStatus, ToolCall, ToolKind, WireStatus};
use crate::state::ToolState;

fn ctx(width: usize) -> Ctx {
    Ctx {
        width,
        expanded: false,
        theme: Theme::with_color(true),
    }
}

fn rows(kind: EntryKind, ctx: Ctx) -> Vec<String> {
    let entry = Entry {
        id: 0,
        rev: 0,
        kind,
    };
    let laid = layout(&entry, ctx, Terminals::NONE);
    assert_eq!(measure(&entry, ctx, Terminals::NONE), laid.len());
    (0..laid.len())
        .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
        .collect()
}

fn tool(kind: ToolKind, state: ToolState) -> ToolEntry {
    let mut call = ToolCall::placeholder("t1");
    call.kind = kind;
    call.status = WireStatus::InProgress;
    ToolEntry::new(call, state)
}

#[test]
fn user_text_has_a_marker_and_hanging_indent() {
    let got = rows(EntryKind::User("hello there world\nsecond".into()), ctx(12));
    assert_eq!(got, ["› hello", "  there", "  world", "  second"]);
}

#[test]
fn crlf_line_endings_are_newlines() {
    let mut t = tool(ToolKind::Execute, ToolState::Completed);
    t.call.content = vec![ToolContent::Text {
        text: "one\r\ntwo\rthree".into(),
    }];
    let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
    assert_eq!(&got[1..], ["  one", "  two␍three"]);
    let open = Ctx {
        expanded: true,
        ..ctx(40)
    };
    let entry = Entry {
        id: 0,
        rev: 0,
        kind: EntryKind::Thought("a\r".into()),
    };
    let mut laid = layout(&entry, open, Terminals::NONE);
    let entry = Entry {
        id: 0,
        rev: 1,
        kind: EntryKind::Thought("a\r\nb".into()),
    };
    relayout(&mut laid, &entry, open, Terminals::NONE);
    let got: Vec<String> = (0..laid.len())
        .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(got, ["▾ thinking", "  a", "  b"]);
}

#[test]
fn thoughts_fold_to_one_line_or_unfold() {
    let text = "\nfirst idea is long\nsecond";
    assert_eq!(
        rows(EntryKind::Thought(text.into()), ctx(20)),
        ["▸ thinking: first i…"]
    );
    let open = Ctx {
        expanded: true,
        ..ctx(20)
    };
    assert_eq!(
        rows(EntryKind::Thought(text.into()), open),
        ["▾ thinking", "  ", "  first idea is long", "  second"]
    );
}

#[test]
fn unfolded_thoughts_stream_like_whole_ones() {
    let open = Ctx {
        expanded: true,
        ..ctx(12)
    };
    let text = "one two three\nfour\n\nfive six seven eight";
    let mut plain = PlainStream::thought(open);
    for end in 1..=text.len() {
        plain.update(&text[..end]);
        let mut whole = PlainStream::thought(open);
        whole.update(&text[..end]);
        let got: Vec<_> = (0..plain.len()).map(|i| plain.line(i).cloned()).collect();
        let want: Vec<_> = (0..whole.len()).map(|i| whole.line(i).cloned()).collect();
        assert_eq!(got, want, "at {end}");
    }
}

#[test]
fn execute_tool_shows_command_locations_and_capped_output() {
    let mut t = tool(ToolKind::Execute, ToolState::Completed);
    t.call.title = "Run tests".into();
    t.call.raw_input = Some(serde_json::json!({"command": "cargo test", "description": "x"}));
    t.reread_command();
    t.call.locations = vec![Location {
        path: "src/lib.rs".into(),
        line: Some(3),
    }];
    let output: Vec<String> = (1..=15).map(|i| format!("line {i}")).collect();
    t.call.content = vec![ToolContent::Text {
        text: output.join("\n"),
    }];
    let got = rows(EntryKind::Tool(Box::new(t.clone())), ctx(40));
    assert_eq!(got[0], "✓ [execute] Run tests — done");
    assert_eq!(got[1], "  $ cargo test");
    assert_eq!(got[2], "  src/lib.rs:3");
    assert_eq!(got[3], "  line 1");
    assert_eq!(got[14], "  line 12");
    assert_eq!(got[15], "  … 3 more lines · Ctrl-O expand");
    assert_eq!(got.len(), 16);
    // Ctrl-O: the whole output.
    let views = std::collections::BTreeMap::new();
    let open = Terminals {
        views: &views,
        expanded: true,
    };
    let entry = Entry {
        id: 0,
        rev: 0,
        kind: EntryKind::Tool(Box::new(t)),
    };
    let laid = layout(&entry, ctx(40), open);
    let all: Vec<String> = (0..laid.len())
        .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(all.len(), 18);
    assert_eq!(all[17], "  line 15");
}

#[test]
fn tool_states_have_symbols_and_colours() {
    use ratatui::style::Color;
    let cases = [
        (ToolState::Pending, "○", Some(Color::DarkGray)),
        (ToolState::AwaitingApproval, "?", Some(Color::Yellow)),
        (ToolState::InProgress, "◐", Some(Color::Blue)),
        (ToolState::Completed, "✓", Some(Color::Green)),
        (ToolState::Failed, "✗", Some(Color::Red)),
        (ToolState::Rejected, "⊘", Some(Color::Red)),
        (ToolState::Cancelled, "⊘", None),
    ];
    for (state, symbol, color) in cases {
        let entry = Entry {
            id: 0,
            rev: 0,
            kind: EntryKind::Tool(Box::new(tool(ToolKind::Read, state))),
        };
        let laid = layout(&entry, ctx(60), Terminals::NONE);
        let header = laid.line(0).cloned().unwrap_or_default();
        assert_eq!(header.spans[0].content, symbol);
        assert_eq!(header.spans[0].style.fg, color, "{state:?}");
        assert!(
            header
                .to_string()
                .ends_with(&format!("— {}", state.label()))
        );
    }
}

#[test]
fn diffs_are_unified_with_context() {
    let old: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    let new = old.replace("l5\n", "five\n");
    let mut t = tool(ToolKind::Edit, ToolState::AwaitingApproval);
    t.call.title = "Edit a.rs".into();
    t.call.content = vec![ToolContent::Diff {
        path: "src/a.rs".into(),
        old: Some(old),
        new,
    }];
    // While the card shows it, the transcript only points there.
    let waiting = rows(EntryKind::Tool(Box::new(t.clone())), ctx(60));
    assert_eq!(
        waiting,
        [
            "? [edit] Edit a.rs — awaiting approval",
            "  diff of src/a.rs: in the permission card"
        ]
    );
    t.state = ToolState::InProgress;
    let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
    assert_eq!(
        got,
        [
            "◐ [edit] Edit a.rs — running",
            "  --- a/src/a.rs",
            "  +++ b/src/a.rs",
            "  @@ -2,7 +2,7 @@",
            "   l2",
            "   l3",
            "   l4",
            "  -l5",
            "  +five",
            "   l6",
            "   l7",
            "   l8",
        ]
    );
}

#[test]
fn new_file_diff_is_all_additions() {
    let mut t = tool(ToolKind::Edit, ToolState::Pending);
    t.call.content = vec![ToolContent::Diff {
        path: "new.txt".into(),
        old: None,
        new: "a\nb\n".into(),
    }];
    let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
    assert_eq!(
        &got[1..],
        [
            "  --- /dev/null",
            "  +++ b/new.txt",
            "  @@ -0,0 +1,2 @@",
            "  +a",
            "  +b"
        ]
    );
}

#[test]
fn terminal_content_and_title_fallback() {
    let mut t = tool(ToolKind::Other, ToolState::InProgress);
    t.call.content = vec![ToolContent::Terminal {
        id: "term-1".into(),
    }];
    let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
    assert_eq!(
        got,
        [
            "◐ [other] t1 — running",
            "  terminal term-1 (no output yet)"
        ]
    );
}

#[test]
fn plan_entries_have_checkboxes() {
    let plan = vec![
        PlanEntry {
            content: "read".into(),
            status: PlanStatus::Completed,
        },
        PlanEntry {
            content: "write".into(),
            status: PlanStatus::InProgress,
        },
        PlanEntry {
            content: "test".into(),
            status: PlanStatus::Pending,
        },
    ];
    assert_eq!(
        rows(EntryKind::Plan(plan), ctx(40)),
        ["Plan", "  ☑ read", "  ◐ write", "  ☐ test"]
    );
}

#[test]
fn info_and_error_lines() {
    assert_eq!(
        rows(EntryKind::Info("turn cancelled".into()), ctx(40)),
        ["turn cancelled"]
    );
    let error = EntryKind::Error {
        message: "the agent exited (1)".into(),
        detail: vec!["panic: boom".into(), "at main.rs".into()],
    };
    assert_eq!(
        rows(error, ctx(40)),
        ["✗ the agent exited (1)", "  panic: boom", "  at main.rs"]
    );
}

#[test]
fn agent_strings_are_sanitized_everywhere() {
    let evil = "\u{1b}[31mred\u{1b}]0;title\u{7}";
    let mut t = tool(ToolKind::Execute, ToolState::Failed);
    t.call.title = evil.into();
    t.call.raw_input = Some(serde_json::json!({ "command": evil }));
    t.reread_command();
    t.call.locations = vec![Location {
        path: evil.into(),
        line: None,
    }];
    t.call.content = vec![
        ToolContent::Text { text: evil.into() },
        ToolContent::Diff {
            path: evil.into(),
            old: Some(evil.into()),
            new: format!("{evil}\n{evil}"),
        },
        ToolContent::Terminal { id: evil.into() },
    ];
    let kinds = [
        EntryKind::User(evil.into()),
        EntryKind::Agent(format!(
            "# {evil}\n\n- {evil}\n\n```\n{evil}\n```\n\n[{evil}]({evil}) `{evil}`"
        )),
        EntryKind::Thought(evil.into()),
        EntryKind::Tool(Box::new(t)),
        EntryKind::Plan(vec![PlanEntry {
            content: evil.into(),
            status: PlanStatus::Pending,
        }]),
        EntryKind::Info(evil.into()),
        EntryKind::Error {
            message: evil.into(),
            detail: vec![evil.into()],
        },
    ];
    for expanded in [false, true] {
        for kind in kinds.clone() {
            let got = rows(
                kind.clone(),
                Ctx {
                    expanded,
                    ..ctx(30)
                },
            )
            .join("\n");
            assert!(got.contains('␛'), "{kind:?}: {got}");
            assert!(
                !got.chars().any(|c| c.is_control() && c != '\n'),
                "{kind:?}: {got:?}"
            );
        }
    }
}

fn shown(t: ToolEntry, width: usize, terminals: Terminals<'_>) -> String {
    let entry = Entry {
        id: 0,
        rev: 0,
        kind: EntryKind::Tool(Box::new(t)),
    };
    let laid = layout(&entry, ctx(width), terminals);
    (0..laid.len())
        .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// codex-acp's own terminal, as its `_meta` streamed it.
fn codex_call() -> ToolEntry {
    use crate::model::TerminalMeta;
    let mut t = tool(ToolKind::Search, ToolState::Completed);
    t.call.title = "List /work/cwd".into();
    t.call.content = vec![ToolContent::Terminal { id: "c1".into() }];
    t.call.raw_output = Some(serde_json::json!({"formatted_output": "seed.txt\n"}));
    t.call.apply_terminal_meta(&[
        TerminalMeta::Started { id: "c1".into() },
        TerminalMeta::Output {
            id: "c1".into(),
            data: "seed.txt\n".into(),
        },
        TerminalMeta::Output {
            id: "c1".into(),
            data: "\u{1b}[32mnotes.txt\u{1b}[0m\n\u{1b}]0;pwned\u{7}".into(),
        },
        TerminalMeta::Exited {
            id: "c1".into(),
            exit: "exit status 0".into(),
        },
    ]);
    t
}

#[test]
fn agent_run_terminal_output_shows_through_the_emulator() {
    insta::assert_snapshot!(shown(codex_call(), 40, Terminals::NONE), @r"
    ✓ [search] List /work/cwd — done
      seed.txt
      notes.txt
      exited: exit status 0
    ");
}

#[test]
fn wardens_own_terminal_wins_over_the_agents_word_for_it() {
    let mut views = BTreeMap::new();
    views.insert(
        "c1".to_string(),
        TerminalView {
            dropped: 0,
            output: "real output\n".into(),
            truncated: false,
            exit: None,
        },
    );
    let terminals = Terminals {
        views: &views,
        expanded: false,
    };
    let got = shown(codex_call(), 40, terminals);
    assert!(got.contains("real output"), "{got}");
    assert!(!got.contains("notes.txt"), "{got}");
}

#[test]
fn agent_run_terminal_announced_without_output_is_running() {
    use crate::model::TerminalMeta;
    let mut t = tool(ToolKind::Execute, ToolState::InProgress);
    t.call.title = "ls".into();
    t.call.content = vec![ToolContent::Terminal { id: "c1".into() }];
    t.call
        .apply_terminal_meta(&[TerminalMeta::Started { id: "c1".into() }]);
    insta::assert_snapshot!(shown(t, 40, Terminals::NONE), @r"
    ◐ [execute] ls — running
      running…
    ");
}

#[test]
fn fenced_tool_text_renders_as_markdown() {
    let mut t = tool(ToolKind::Execute, ToolState::Completed);
    t.call.title = "echo hello-from-mock-claude".into();
    t.call.raw_input = Some(serde_json::json!({"command": "echo hello-from-mock-claude"}));
    t.reread_command();
    t.call.content = vec![ToolContent::Text {
        text: "```console\nhello-from-mock-claude\n```".into(),
    }];
    insta::assert_snapshot!(shown(t, 50, Terminals::NONE), @r"
    ✓ [execute] echo hello-from-mock-claude — done
      $ echo hello-from-mock-claude
        hello-from-mock-claude
    ");
}

#[test]
fn raw_output_shows_only_when_there_is_no_content() {
    let mut t = tool(ToolKind::Search, ToolState::Completed);
    t.call.title = "List /work/cwd".into();
    t.call.raw_output = Some(serde_json::json!({
        "stdout": "seed.txt\n", "aggregated_output": "seed.txt\n",
        "formatted_output": "seed.txt\n", "exit_code": 0
    }));
    insta::assert_snapshot!(shown(t.clone(), 40, Terminals::NONE), @r"
    ✓ [search] List /work/cwd — done
      seed.txt
    ");
    t.call.raw_output = Some(serde_json::json!("File created successfully at: /w/a.txt"));
    insta::assert_snapshot!(shown(t.clone(), 60, Terminals::NONE), @r"
    ✓ [search] List /work/cwd — done
      File created successfully at: /w/a.txt
    ");
    t.call.raw_output = Some(serde_json::json!({"success": true}));
    insta::assert_snapshot!(shown(t.clone(), 40, Terminals::NONE), @r#"
    ✓ [search] List /work/cwd — done
      {
        "success": true
      }
    "#);
    t.call.content = vec![ToolContent::Text {
        text: "Listed.".into(),
    }];
    assert!(!shown(t, 40, Terminals::NONE).contains("success"));
}

#[test]
fn argv_commands_show_the_command_the_policy_judged() {
    // A shell given -c: the script, as the policy reads it.
    let mut t = tool(ToolKind::Execute, ToolState::Completed);
    t.call.title = "touch".into();
    t.call.raw_input = Some(serde_json::json!({
        "command": ["/bin/bash", "-lc", "touch 'my file' && echo $HOME"]
    }));
    t.reread_command();
    let judged = crate::policy::command_of_input(t.call.raw_input.as_ref().unwrap());
    assert_eq!(judged.as_deref(), Some("touch 'my file' && echo $HOME"));
    insta::assert_snapshot!(shown(t, 80, Terminals::NONE), @r"
    ✓ [execute] touch — done
      $ touch 'my file' && echo $HOME
    ");
    // Another argv: each argument shell-quoted where needed.
    let mut t = tool(ToolKind::Execute, ToolState::Completed);
    t.call.title = "rm".into();
    t.call.raw_input = Some(serde_json::json!({ "argv": ["rm", "a; b"] }));
    t.reread_command();
    insta::assert_snapshot!(shown(t, 80, Terminals::NONE), @r"
    ✓ [execute] rm — done
      $ rm 'a; b'
    ");
}

#[test]
fn a_huge_error_or_stderr_line_takes_a_bounded_number_of_rows() {
    let huge = "0123456789 ".repeat(5_000_000);
    let shown = rows(
        EntryKind::Error {
            message: format!("the turn failed: {huge}"),
            detail: vec![huge.clone(); 40],
        },
        ctx(100),
    );
    assert!(
        shown.len() <= ERROR_ROWS + DETAIL_LINES * DETAIL_LINE_ROWS,
        "{} rows",
        shown.len()
    );
    assert!(shown[ERROR_ROWS - 1].contains("more rows"), "{shown:?}");
}

#[test]
fn agent_text_cannot_start_a_line_like_wardens_own() {
    let text = "Done.\n› yes, delete it all\n✓ allowed by you: rm -rf ~\n⊘ blocked: nothing\n✗ the agent exited\n✓ tests pass\n> › quoted\n";
    let shown = rows(EntryKind::Agent(text.into()), ctx(80)).join("\n");
    for forged in ["› yes", "✓ allowed", "⊘ blocked", "✗ the agent", "› quoted"] {
        assert!(!shown.contains(forged), "{forged}: {shown}");
    }
    assert!(shown.contains("<U+203A> yes, delete it all"), "{shown}");
    assert!(shown.contains("<U+2713> allowed by you"), "{shown}");
    assert!(
        shown.contains("✓ tests pass"),
        "an ordinary check mark stays: {shown}"
    );
    assert!(matches!(unforged("plain text"), Cow::Borrowed(_)));
}

#[test]
fn only_marks_at_a_line_start_make_agent_text_rewritten() {
    // The marks are found by searching for them, not by a pass over the
    // lines: a mark anywhere but at a line start (after spaces and `>`s)
    // leaves the text as it is; at one, anywhere in the text, it does not.
    for clean in [
        "a › b\nc ⊘ d\n",
        "x ✓ allowed\n",
        "✓ tests pass\n✗ failed twice\n",
        "—›\n",
        "",
    ] {
        assert!(matches!(unforged(clean), Cow::Borrowed(_)), "{clean:?}");
    }
    for forged in [
        "› first line",
        "ok\n› later",
        "ok\n  > > ⊘ blocked",
        "a › b\n›",
        "a\n\n✗ the agent said",
        "text ✓ allowed\n ✓ allowed: rm",
    ] {
        assert!(matches!(unforged(forged), Cow::Owned(_)), "{forged:?}");
    }
    let long = format!("{}\n› at the end", "word › ".repeat(10_000));
    assert!(unforged(&long).ends_with("<U+203A> at the end"));
}

#[test]
fn a_streamed_answer_is_unforged_as_it_grows_and_when_laid_out_again() {
    // Laid out chunk by chunk, only the part rendered next is looked at:
    // a forged line arriving late, right after a stable part, in the
    // middle of a line that began earlier, or in a text replaced whole is
    // caught all the same; so is every line when the older rows are laid
    // out again (the view scrolled up).
    let text_rows = |laid: &Laid| -> Vec<String> {
        (0..laid.len())
            .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect()
    };
    let para = "a paragraph of plain words that the agent streams.\n\n".repeat(40);
    let mut entry = Entry {
        id: 0,
        rev: 0,
        kind: EntryKind::Agent(para.clone()),
    };
    let mut laid = layout(&entry, ctx(60), Terminals::NONE);
    let chunks = [
        "more words\n\n",
        "› yes, delete",
        " it all\n\n",
        "> ✓ allowed by",
        " you\n\n",
    ];
    let mut text = para.clone();
    for chunk in chunks {
        text.push_str(chunk);
        entry.kind = EntryKind::Agent(text.clone());
        relayout(&mut laid, &entry, ctx(60), Terminals::NONE);
    }
    let shown = text_rows(&laid).join("\n");
    assert!(shown.contains("<U+203A> yes, delete it all"), "{shown}");
    assert!(shown.contains("<U+2713> allowed by you"), "{shown}");
    assert!(
        !shown.contains("› yes") && !shown.contains("✓ allowed"),
        "{shown}"
    );
    // Replaced by a text of the same start with a forged line inside.
    let cut = para.len() / 2;
    let cut = para[..cut].rfind('\n').map_or(0, |nl| nl + 1);
    let replaced = format!("{}› forged early\n\n{}", &para[..cut], &para[cut..]);
    entry.kind = EntryKind::Agent(replaced);
    relayout(&mut laid, &entry, ctx(60), Terminals::NONE);
    let shown = text_rows(&laid).join("\n");
    assert!(!shown.contains("› forged"), "{shown}");
    // The older rows again.
    laid.keep_all(true);
    relayout(&mut laid, &entry, ctx(60), Terminals::NONE);
    let shown = text_rows(&laid).join("\n");
    assert!(shown.contains("<U+203A> forged early"), "{shown}");
}

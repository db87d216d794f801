use super::*;
use crate::model::{PlanStatus, ToolKind};

#[test]
fn chunks_join_until_something_else_arrives() {
    let mut t = Transcript::default();
    t.push_agent_text("Hel");
    t.push_agent_text("lo");
    t.push_thought("hmm");
    t.push_thought(" ok");
    t.push_agent_text("more");
    let kinds: Vec<_> = t.entries().iter().map(|e| e.kind.clone()).collect();
    assert_eq!(
        kinds,
        vec![
            EntryKind::Agent("Hello".into()),
            EntryKind::Thought("hmm ok".into()),
            EntryKind::Agent("more".into()),
        ]
    );
    assert_eq!(t.entries()[0].rev, 2, "changed once after creation");
    assert_eq!(t.generation(), 5);
}

#[test]
fn changes_are_reported_incrementally_until_forgotten() {
    let mut t = Transcript::default();
    t.push(EntryKind::Info("a".into()));
    let seen = t.generation();
    t.push_agent_text("x");
    t.push_agent_text("y");
    assert_eq!(t.changed_since(seen), Some(vec![1]), "one entry, once");
    assert_eq!(t.changed_since(t.generation()), Some(vec![]));
    // A flood of chunks into one entry is still one change.
    for _ in 0..(CHANGE_LOG * 10) {
        t.push_agent_text("z");
    }
    assert_eq!(t.changed_since(seen), Some(vec![1]));
    let before_info = t.generation();
    t.push(EntryKind::Info("b".into()));
    t.push_agent_text("w");
    assert_eq!(t.changed_since(before_info), Some(vec![2, 3]));
    for i in 0..(CHANGE_LOG + 5) {
        t.push(EntryKind::Info(format!("{i}")));
    }
    assert_eq!(t.changed_since(seen), None, "too old: full relayout");
}

#[test]
fn end_turn_starts_a_new_text_entry() {
    let mut t = Transcript::default();
    t.push_agent_text("a");
    t.end_turn();
    t.push_agent_text("b");
    assert_eq!(t.len(), 2);
}

#[test]
fn tool_update_before_tool_call_creates_it_and_merges_later() {
    let mut t = Transcript::default();
    let fields = ToolCallFields {
        title: Some("Run ls".into()),
        kind: Some(ToolKind::Execute),
        ..Default::default()
    };
    t.update_tool("pending", &fields);
    assert_eq!(
        t.tool("pending").map(|e| e.call.title.as_str()),
        Some("Run ls")
    );
    let mut call = ToolCall::placeholder("pending");
    call.title = "Run ls -la".into();
    call.kind = ToolKind::Execute;
    t.upsert_tool(call);
    assert_eq!(t.len(), 1);
    assert_eq!(t.entries()[0].rev, 3);
    t.update_tool(
        "pending",
        &ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        },
    );
    assert_eq!(
        t.tool("pending").map(|e| e.state),
        Some(ToolState::Completed)
    );
}

#[test]
fn cancel_flips_only_unfinished_calls() {
    let mut t = Transcript::default();
    let mut done = ToolCall::placeholder("a");
    done.status = WireStatus::Completed;
    t.upsert_tool(done);
    t.upsert_tool(ToolCall::placeholder("b"));
    t.set_tool_state("b", ToolState::AwaitingApproval);
    t.cancel_unfinished_tools();
    assert_eq!(t.tool("a").map(|e| e.state), Some(ToolState::Completed));
    assert_eq!(t.tool("b").map(|e| e.state), Some(ToolState::Cancelled));
}

#[test]
fn a_terminal_shows_once_in_the_agents_tool_call() {
    use crate::model::ToolContent;
    let mut t = Transcript::default();
    let mut mine = ToolCall::placeholder("warden-1");
    mine.content = vec![ToolContent::Terminal {
        id: "term-1".into(),
    }];
    t.upsert_tool(mine);
    let mut theirs = ToolCall::placeholder("call-1");
    theirs.content = vec![ToolContent::Terminal {
        id: "term-1".into(),
    }];
    t.upsert_tool(theirs);
    t.hand_over_terminal("term-1", "call-1");
    assert!(matches!(
        t.tool("warden-1").map(|e| e.call.content[0].clone()),
        Some(ToolContent::Text { .. })
    ));
    assert!(matches!(
        t.tool("call-1").map(|e| e.call.content[0].clone()),
        Some(ToolContent::Terminal { .. })
    ));
}

#[test]
fn plan_updates_replace_the_turns_plan() {
    let mut t = Transcript::default();
    let entry = |status| PlanEntry {
        content: "step".into(),
        status,
    };
    t.set_plan(vec![entry(PlanStatus::Pending)]);
    t.set_plan(vec![entry(PlanStatus::Completed)]);
    assert_eq!(t.len(), 1);
    assert_eq!(
        t.entries()[0].kind,
        EntryKind::Plan(vec![entry(PlanStatus::Completed)])
    );
    t.end_turn();
    t.set_plan(vec![entry(PlanStatus::Pending)]);
    assert_eq!(t.len(), 2);
}

#[test]
fn an_id_reused_in_a_later_turn_is_a_new_entry() {
    let mut t = Transcript::default();
    t.push(EntryKind::User("one".into()));
    t.upsert_tool(ToolCall::placeholder("call_2"));
    t.set_tool_state("call_2", ToolState::Rejected);
    t.end_turn();
    t.push(EntryKind::User("two".into()));
    let done = ToolCallFields {
        status: Some(WireStatus::Completed),
        ..Default::default()
    };
    // An update before any tool_call of this turn: a new entry too.
    t.update_tool("call_2", &done);
    t.set_tool_state("call_2", ToolState::Completed);
    let states: Vec<ToolState> = t
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Tool(tool) => Some(tool.state),
            _ => None,
        })
        .collect();
    assert_eq!(states, vec![ToolState::Rejected, ToolState::Completed]);
    assert_eq!(
        t.tool("call_2").map(|e| e.state),
        Some(ToolState::Completed)
    );
}

#[test]
fn terminals_of_earlier_turns_are_still_redrawn() {
    use crate::model::ToolContent;
    let mut t = Transcript::default();
    t.push(EntryKind::User("one".into()));
    let mut call = ToolCall::placeholder("call_1");
    call.content = vec![ToolContent::Terminal {
        id: "term-1".into(),
    }];
    t.upsert_tool(call);
    t.push(EntryKind::User("two".into()));
    let before = t.entries()[1].rev;
    t.touch_terminal("term-1");
    assert!(t.entries()[1].rev > before);
}

#[test]
fn a_new_message_id_starts_a_new_block() {
    let mut t = Transcript::default();
    t.push_message_chunk("m1", "I will read ", false);
    t.push_message_chunk("m1", "notes.txt", false);
    t.push_message_chunk("m2", "Here is my plan", false);
    t.push_agent_text(" (no id: joins)");
    t.push_message_chunk("m3", "thinking", true);
    let kinds: Vec<_> = t.entries().iter().map(|e| e.kind.clone()).collect();
    assert_eq!(
        kinds,
        vec![
            EntryKind::Agent("I will read notes.txt".into()),
            EntryKind::Agent("Here is my plan (no id: joins)".into()),
            EntryKind::Thought("thinking".into()),
        ]
    );
}

#[test]
fn the_agents_own_terminals_stay_within_the_total() {
    use crate::model::TerminalMeta;
    let mut t = Transcript::default();
    let chunk = "y".repeat(100 * 1024);
    // 200 calls, each reporting 16 terminals of 500 KiB: 1.6 GB unbounded.
    for call in 0..200 {
        let id = format!("call-{call}");
        t.upsert_tool(ToolCall::placeholder(&id));
        for _ in 0..5 {
            let news = (0..16)
                .map(|n| TerminalMeta::Output {
                    id: format!("t{n}"),
                    data: chunk.clone(),
                })
                .collect();
            t.update_tool(
                &id,
                &ToolCallFields {
                    terminal_meta: news,
                    ..Default::default()
                },
            );
        }
        if call % 2 == 0 {
            t.set_tool_state(&id, ToolState::Completed);
        }
    }
    let held: usize = t
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Tool(tool) => Some(
                tool.call
                    .agent_terminals
                    .iter()
                    .map(AgentTerminal::held)
                    .sum::<usize>(),
            ),
            _ => None,
        })
        .sum();
    assert_eq!(held, t.agent_terminal_bytes, "the accounting matches");
    assert!(held <= AGENT_TERMINALS_TOTAL, "{held}");
    // The newest call keeps its output whole; an old one says what it lost.
    let newest = t.tool("call-199").expect("newest");
    assert!(newest.call.agent_terminals[0].output().len() >= 256 * 1024);
    let oldest = t.tool("call-0").expect("oldest");
    assert!(oldest.call.agent_terminals[0].dropped() > 0);
    assert!(oldest.call.agent_terminals[0].output().ends_with('y'));
}

#[test]
fn wardens_own_entries_are_marked_and_the_agents_look_alikes_flagged() {
    let mut t = Transcript::default();
    t.update_own_tool(
        "warden-1",
        &ToolCallFields {
            title: Some("Write /w/a".into()),
            tool_name: Some("fs/write_text_file".into()),
            ..Default::default()
        },
    );
    let own = t.own_tool("warden-1").expect("own");
    assert!(own.own);
    assert_eq!(own.lookalike, None);
    t.upsert_tool(ToolCall::placeholder("warden-1"));
    let agents = t.tool("warden-1").expect("the agent's");
    assert!(
        !agents.own,
        "an agent's call under warden's id is the agent's"
    );
    assert_eq!(agents.lookalike, None);
    t.update_tool(
        "warden-1",
        &ToolCallFields {
            tool_name: Some("fs/write_text_f\u{0456}le".into()),
            ..Default::default()
        },
    );
    assert!(
        t.tool("warden-1")
            .and_then(|e| e.lookalike.as_deref())
            .is_some_and(|w| w.contains("looks like warden's own")),
    );
    assert_eq!(
        t.own_tool("warden-1").and_then(|e| e.lookalike.clone()),
        None
    );
}

#[test]
fn text_after_a_tool_call_update_is_a_new_block() {
    let mut t = Transcript::default();
    t.upsert_tool(ToolCall::placeholder("a"));
    t.push_agent_text("Reading now.");
    t.update_tool(
        "a",
        &ToolCallFields {
            status: Some(WireStatus::Completed),
            ..Default::default()
        },
    );
    t.push_agent_text("Done.");
    assert_eq!(t.len(), 3);
    assert_eq!(t.entries()[2].kind, EntryKind::Agent("Done.".into()));
}

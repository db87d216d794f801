use super::*;
use crate::model::{Location, PlanEntry, PlanStatus, ToolCall, ToolContent, ToolKind, WireStatus};
use crate::record::parse_tool_state;
use crate::state::{EntryKind, ToolEntry, ToolState};
use pretty_assertions::assert_eq;
use std::time::Duration;

fn store() -> (tempfile::TempDir, ChatStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChatStore::new(dir.path().join("chats"));
    (dir, store)
}

fn edit_call() -> ToolCall {
    ToolCall {
        id: "call-1".into(),
        title: "Edit src/a.rs".into(),
        kind: ToolKind::Edit,
        status: WireStatus::Completed,
        content: vec![
            ToolContent::Diff {
                path: "src/a.rs".into(),
                old: Some("fn a() {}\n".into()),
                new: "fn a() -> u8 { 1 }\n".into(),
            },
            ToolContent::Diff {
                path: "src/new.rs".into(),
                old: None,
                new: "// new\n".into(),
            },
            ToolContent::Text {
                text: "edited".into(),
            },
        ],
        locations: vec![Location {
            path: "src/a.rs".into(),
            line: Some(1),
        }],
        raw_input: Some(serde_json::json!({"path": "src/a.rs", "n": [1, 2]})),
        raw_output: None,
        tool_name: Some("Edit".into()),
        agent_terminals: Vec::new(),
    }
}

fn every_kind() -> Vec<EntryKind> {
    let mut kinds = vec![
        EntryKind::User("fix the bug\nin a.rs \"quoted\"".into()),
        EntryKind::Thought("let me look".into()),
        EntryKind::Agent("Done: **fixed**.\n\n```rust\nfn a() {}\n```".into()),
        EntryKind::Plan(vec![
            PlanEntry {
                content: "read".into(),
                status: PlanStatus::Completed,
            },
            PlanEntry {
                content: "edit".into(),
                status: PlanStatus::InProgress,
            },
        ]),
        EntryKind::Info("turn ended".into()),
        EntryKind::Decision {
            allowed: true,
            text: "Edit src/a.rs: allowed by you".into(),
        },
        EntryKind::Decision {
            allowed: false,
            text: "rm -rf: refused in Plan".into(),
        },
        EntryKind::Error {
            message: "agent exited".into(),
            detail: vec!["stderr: boom".into(), "ünïcödé ✓".into()],
        },
    ];
    for state in ToolState::ALL {
        kinds.push(EntryKind::Tool(Box::new(ToolEntry::new(
            edit_call(),
            state,
        ))));
    }
    kinds
}

#[test]
fn a_rename_outlives_later_agent_titles_and_old_title_lines_still_read() {
    let (_dir, store) = store();
    let mut writer = store
        .create("demo", "s1", Path::new("/tmp/project"))
        .expect("create");
    writer
        .append_entry(&EntryKind::User("the first prompt".into()))
        .expect("entry");
    writer.set_title("agent title").expect("title");
    writer.set_name("my name").expect("name");
    writer.set_title("a later agent title").expect("title");
    let chat = store.load(writer.chat_id()).expect("load");
    assert_eq!(chat.name.as_deref(), Some("my name"));
    assert_eq!(chat.title.as_deref(), Some("a later agent title"));
    assert_eq!(chat.display_title().as_deref(), Some("my name"));
    assert_eq!(store.list()[0].title.as_deref(), Some("my name"));
    // A record of an older warden: a plain title line, no `renamed`.
    let text = std::fs::read_to_string(writer.path()).expect("read");
    assert!(text.contains(r#""renamed":true"#), "{text}");
    assert_eq!(text.matches("renamed").count(), 1, "{text}");
}

#[test]
fn every_entry_kind_round_trips() {
    let (_dir, store) = store();
    let mut writer = store
        .create("demo", "s1", Path::new("/tmp/project"))
        .expect("create");
    writer.set_mode("plan").expect("mode");
    for kind in every_kind() {
        writer.append_entry(&kind).expect("append");
    }
    writer.set_title("Fix the bug").expect("title");
    writer.set_session("s2").expect("session");
    writer.set_mode("auto").expect("mode");

    let chat = store.load(writer.chat_id()).expect("load");
    assert_eq!(chat.header.chat_id, writer.chat_id());
    assert_eq!(chat.header.agent, "demo");
    assert_eq!(chat.header.session_id, "s1");
    assert_eq!(chat.header.cwd, PathBuf::from("/tmp/project"));
    assert_eq!(chat.session_id, "s2");
    assert_eq!(chat.mode.as_deref(), Some("auto"));
    assert_eq!(chat.title.as_deref(), Some("Fix the bug"));
    assert_eq!(chat.skipped, 0);
    let kinds: Vec<EntryKind> = chat.entries.iter().map(RecordedEntry::to_kind).collect();
    assert_eq!(kinds, every_kind());
}

#[test]
fn the_record_reads_as_documented() {
    let (_dir, store) = store();
    let mut writer = store.create("demo", "s1", Path::new("/p")).expect("create");
    writer
        .append_entry(&EntryKind::Tool(Box::new(ToolEntry::new(
            edit_call(),
            ToolState::Completed,
        ))))
        .expect("append");
    writer.set_mode("default").expect("mode");
    let text = std::fs::read_to_string(writer.path()).expect("read");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["type"], "chat");
    assert_eq!(lines[0]["agent"], "demo");
    assert!(
        lines[0]["created"]
            .as_str()
            .is_some_and(|c| c.ends_with('Z'))
    );
    assert_eq!(lines[1]["type"], "entry");
    assert_eq!(lines[1]["entry"]["kind"], "tool");
    assert_eq!(lines[1]["entry"]["state"], "done");
    assert_eq!(lines[1]["entry"]["call"]["content"][0]["type"], "diff");
    assert_eq!(
        lines[2],
        serde_json::json!({"type": "mode", "mode": "default"})
    );
}

#[test]
fn unknown_tool_state_reads_as_cancelled() {
    let entry = RecordedEntry::Tool {
        call: Box::new(edit_call()),
        state: "exploded".into(),
    };
    let EntryKind::Tool(tool) = entry.to_kind() else {
        panic!("a tool entry");
    };
    assert_eq!(tool.state, ToolState::Cancelled);
    assert_eq!(parse_tool_state("completed"), Some(ToolState::Completed));
}

#[test]
fn a_torn_last_line_loses_only_that_line() {
    let (_dir, store) = store();
    let mut writer = store.create("demo", "s1", Path::new("/p")).expect("create");
    writer
        .append_entry(&EntryKind::User("hello".into()))
        .expect("append");
    writer
        .append_entry(&EntryKind::Agent("héllo wörld".into()))
        .expect("append");
    let id = writer.chat_id().to_string();
    let path = writer.path().to_path_buf();
    drop(writer);

    // A crash in the middle of a write: half of the next line, cut
    // inside a multi-byte character.
    let line = encode(&Line::Entry {
        entry: RecordedEntry::Agent {
            text: "ééééééé".into(),
        },
    })
    .expect("encode");
    let cut = line.find('é').expect("an é") + 3;
    let half = &line.as_bytes()[..cut];
    assert!(std::str::from_utf8(half).is_err(), "cut inside a character");
    let mut file = OpenOptions::new().append(true).open(&path).expect("open");
    file.write_all(half).expect("write");
    drop(file);

    let chat = store.load(&id).expect("load");
    assert_eq!(
        chat.entries,
        vec![
            RecordedEntry::User {
                text: "hello".into()
            },
            RecordedEntry::Agent {
                text: "héllo wörld".into()
            },
        ]
    );
    assert_eq!(chat.skipped, 1);
    let listed = store.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].entries, 2);
    assert_eq!(listed[0].title.as_deref(), Some("hello"));

    // Resuming closes the torn line: the next entry lands whole.
    let mut writer = store.reopen(&id).expect("reopen");
    writer
        .append_entry(&EntryKind::Info("resumed".into()))
        .expect("append");
    let chat = store.load(&id).expect("load");
    assert_eq!(chat.entries.len(), 3);
    assert_eq!(
        chat.entries[2],
        RecordedEntry::Info {
            text: "resumed".into()
        }
    );
    assert_eq!(chat.skipped, 1);
}

fn set_updated(path: &Path, secs_after_epoch: u64) {
    let file = OpenOptions::new().write(true).open(path).expect("open");
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs_after_epoch))
        .expect("set mtime");
}

#[test]
fn list_is_newest_first_and_filters() {
    let (_dir, store) = store();
    assert_eq!(store.list(), Vec::new(), "no dir yet: no chats");

    let mut old = store
        .create("claude", "s-old", Path::new("/home/me/Website"))
        .expect("create");
    old.append_entry(&EntryKind::User("\n  Refactor the parser  \nplease".into()))
        .expect("append");
    old.append_entry(&EntryKind::Agent("ok".into()))
        .expect("append");
    let mut mid = store
        .create("codex", "s-mid", Path::new("/srv/api"))
        .expect("create");
    mid.set_title("Plan the migration").expect("title");
    mid.set_mode("plan").expect("mode");
    let new = store
        .create("gemini", "s-new", Path::new("/home/me/notes"))
        .expect("create");
    set_updated(old.path(), 1_000);
    set_updated(new.path(), 3_000);
    set_updated(mid.path(), 2_000);

    let listed = store.list();
    let order: Vec<&str> = listed.iter().map(|c| c.chat_id.as_str()).collect();
    assert_eq!(order, vec![new.chat_id(), mid.chat_id(), old.chat_id()]);
    assert_eq!(
        listed[2],
        ChatSummary {
            chat_id: old.chat_id().to_string(),
            agent: "claude".into(),
            session_id: "s-old".into(),
            cwd: PathBuf::from("/home/me/Website"),
            title: Some("Refactor the parser".into()),
            mode: None,
            updated: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
            entries: 2,
            exec: false,
        }
    );
    assert_eq!(listed[1].title.as_deref(), Some("Plan the migration"));
    assert_eq!(listed[1].mode.as_deref(), Some("plan"));
    assert_eq!(listed[0].title, None);

    let ids = |query: &str| -> Vec<String> {
        filter(&listed, query)
            .into_iter()
            .map(|c| c.agent.clone())
            .collect()
    };
    assert_eq!(ids(""), vec!["gemini", "codex", "claude"]);
    assert_eq!(ids("  PARSER "), vec!["claude"]);
    assert_eq!(ids("Codex"), vec!["codex"]);
    assert_eq!(ids("/home/me"), vec!["gemini", "claude"]);
    assert_eq!(ids("website"), vec!["claude"]);
    assert_eq!(ids("nothing like it"), Vec::<String>::new());
}

#[test]
fn two_writers_on_two_chats_at_once() {
    let (_dir, store) = store();
    let writers: Vec<ChatWriter> = ["a", "b"]
        .iter()
        .map(|agent| store.create(agent, "s", Path::new("/p")).expect("create"))
        .collect();
    let ids: Vec<String> = writers.iter().map(|w| w.chat_id().to_string()).collect();
    let threads: Vec<_> = writers
        .into_iter()
        .map(|mut writer| {
            std::thread::spawn(move || {
                for i in 0..300 {
                    writer
                        .append_entry(&EntryKind::Agent(format!("{i} {}", "x".repeat(3000))))
                        .expect("append");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("thread");
    }
    for (id, agent) in ids.iter().zip(["a", "b"]) {
        let chat = store.load(id).expect("load");
        assert_eq!(chat.header.agent, agent);
        assert_eq!(chat.skipped, 0);
        let numbers: Vec<usize> = chat
            .entries
            .iter()
            .map(|e| match e {
                RecordedEntry::Agent { text } => text
                    .split(' ')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("number"),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(numbers, (0..300).collect::<Vec<_>>());
    }
}

#[test]
fn two_writers_on_one_chat_keep_whole_lines() {
    let (_dir, store) = store();
    let id = store
        .create("a", "s", Path::new("/p"))
        .expect("create")
        .chat_id()
        .to_string();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let mut writer = store.reopen(&id).expect("reopen");
            std::thread::spawn(move || {
                for _ in 0..200 {
                    writer
                        .append_entry(&EntryKind::Info("y".repeat(5000)))
                        .expect("append");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("thread");
    }
    let chat = store.load(&id).expect("load");
    assert_eq!((chat.entries.len(), chat.skipped), (800, 0));
}

#[test]
fn garbage_is_skipped_by_list_and_an_error_from_load() {
    let (_dir, store) = store();
    let good = store.create("demo", "s", Path::new("/p")).expect("create");
    let dir = store.dir();
    std::fs::write(dir.join("garbage.jsonl"), "not json at all\n{}\n").expect("write");
    std::fs::write(dir.join("empty.jsonl"), "").expect("write");
    std::fs::write(
        dir.join("headless.jsonl"),
        "{\"type\":\"mode\",\"mode\":\"auto\"}\n",
    )
    .expect("write");
    std::fs::write(dir.join("binary.jsonl"), [0xff, 0xfe, 0x00, b'\n']).expect("write");
    std::fs::write(dir.join("notes.txt"), "ignored").expect("write");
    std::fs::create_dir(dir.join("sub.jsonl")).expect("mkdir");

    let listed = store.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].chat_id, good.chat_id());

    for id in ["garbage", "empty", "headless", "binary"] {
        assert!(
            matches!(store.load(id), Err(ChatError::NotAChat { .. })),
            "{id}"
        );
    }
    assert!(matches!(
        store.load("missing"),
        Err(ChatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound
    ));
    for id in ["", "..", "../x", "a/b"] {
        assert!(
            matches!(store.load(id), Err(ChatError::InvalidId(_))),
            "{id:?}"
        );
    }
}

#[test]
fn a_chat_id_is_never_reused() {
    let (_dir, store) = store();
    let first = store.create("demo", "s", Path::new("/p")).expect("create");
    let header = store.load(first.chat_id()).expect("load").header;
    assert!(matches!(
        store.create_with(header),
        Err(ChatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists
    ));
}

#[test]
fn write_errors_are_returned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").expect("write");
    let store = ChatStore::new(blocker.join("chats"));
    assert!(matches!(
        store.create("demo", "s", Path::new("/p")),
        Err(ChatError::Io { .. })
    ));
}

//! Disk writes off the event loop (the chats' records, the decision log):
//! nothing queued is lost when warden quits right after, by any path.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use warden::state::Code;

use warden::app::ChatOptions;
use warden::policy::Mode;
use warden::state::EntryKind;

use crate::common::*;

/// How many permission requests the agent sends at once.
const ASKS: usize = 150;

/// A scenario whose `many` turn asks [`ASKS`] edits at once, then says so
/// and, with `hang`, sleeps (so that only a signal ends the run).
fn many_asks(dir: &Path, hang: bool) -> PathBuf {
    let requests: Vec<String> = (0..ASKS)
        .map(|n| {
            format!(
                "{{ tool_call_id = \"ask-{n}\", title = \"Edit src/f{n}.rs\", kind = \"edit\", \
                 locations = [{{ path = \"src/f{n}.rs\" }}] }}"
            )
        })
        .collect();
    let tail = if hang {
        ",\n  { type = \"sleep\", ms = 600000 }"
    } else {
        ""
    };
    let text = format!(
        "[[turns]]\nmatch = \"many\"\nsteps = [\n  {{ type = \"permissions\", requests = [\n    {}\n  ] }},\n  \
         {{ type = \"text\", text = \"asked them all\\n\" }}{tail}\n]\n",
        requests.join(",\n    ")
    );
    let path = dir.join("many-asks.toml");
    std::fs::write(&path, text).expect("write the scenario");
    path
}

fn exec_args(scenario: &Path) -> Vec<String> {
    [
        "--mode",
        "auto",
        "-p",
        "many",
        "--",
        env!("CARGO_BIN_EXE_warden"),
        "demo-agent",
        "--scenario",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([scenario.display().to_string()])
    .collect()
}

fn logged_calls(log: &[warden::decision_log::DecisionRecord]) -> Vec<String> {
    log.iter().map(|r| r.tool_call_id.clone()).collect()
}

fn asked() -> Vec<String> {
    (0..ASKS).map(|n| format!("ask-{n}")).collect()
}

#[test]
fn exec_ending_right_after_many_decisions_logs_every_one_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = many_asks(dir.path(), false);
    let args = exec_args(&scenario);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err, log) = exec_in(dir.path(), Path::new("/nonexistent/warden.toml"), &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("asked them all"), "{out}");
    assert_eq!(logged_calls(&log), asked(), "{err}");
}

#[test]
fn exec_stopped_by_sigterm_still_logs_every_decision_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = many_asks(dir.path(), true);
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("--config")
        .arg("/nonexistent/warden.toml")
        .arg("exec")
        .args(exec_args(&scenario))
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("warden exec runs");
    // Once the agent says it asked them all, every decision was made.
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let line = lines.next().expect("the agent's answer").unwrap();
        if line.contains("asked them all") {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let log = warden::decision_log::read(&dir.path().join("data/warden/decisions.jsonl")).unwrap();
    assert_eq!(logged_calls(&log), asked());
}

#[tokio::test]
async fn quitting_right_after_a_burst_keeps_the_record_and_the_log_whole() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = many_asks(dir.path(), false);
    let options = ChatOptions {
        mode: Mode::Auto,
        decision_log: Some(dir.path().join("decisions.jsonl")),
        chats_dir: Some(dir.path().join("chats")),
        ..ChatOptions::default()
    };
    let file = scenario.display().to_string();
    let mut app = ready(warden::app::App::with_options(
        demo_command(dir.path(), &["--scenario", &file]),
        options,
    ))
    .await;
    send(&mut app, "many");
    pump_until(&mut app, "the turn", |s| !s.is_busy()).await;
    assert_eq!(decisions(app.state()).len(), ASKS);
    // Quit at once, as Ctrl-D, a signal or an agent exit in the TUI do.
    app.shutdown().await;

    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).unwrap();
    assert_eq!(logged_calls(&log), asked());
    let store = warden::chats::ChatStore::new(dir.path().join("chats"));
    let listed = store.list();
    assert_eq!(listed.len(), 1);
    let chat = store.load(&listed[0].chat_id).unwrap();
    let recorded: Vec<EntryKind> = chat.entries.iter().map(|e| e.to_kind()).collect();
    let shown: Vec<EntryKind> = app
        .state()
        .session
        .transcript
        .entries()
        .iter()
        .map(|e| e.kind.clone())
        .filter(|k| !matches!(k, EntryKind::Info(_)) || recorded.contains(k))
        .collect();
    let decided = |kinds: &[EntryKind]| {
        kinds
            .iter()
            .filter(|k| matches!(k, EntryKind::Decision { .. }))
            .count()
    };
    assert_eq!(decided(&recorded), ASKS);
    assert_eq!(
        recorded.last(),
        shown.last(),
        "the last entry is in the record"
    );
    assert!(
        recorded
            .iter()
            .any(|k| matches!(k, EntryKind::User(t) if t == "many")),
        "{recorded:?}"
    );
}

#[tokio::test]
async fn a_chats_dir_that_cannot_be_written_says_so_and_the_chat_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the data dir should be: every write under it fails
    // (also for root, whom a read-only directory does not stop).
    let blocker = dir.path().join("data");
    std::fs::write(&blocker, "").unwrap();
    let options = ChatOptions {
        mode: Mode::Auto,
        decision_log: Some(blocker.join("decisions.jsonl")),
        chats_dir: Some(blocker.join("chats")),
        ..ChatOptions::default()
    };
    let mut app = started_with(dir.path(), options).await;
    send(&mut app, "edit");
    pump_until(&mut app, "the failures", |s| {
        let errors = errors(s);
        errors
            .iter()
            .any(|(m, _)| m.starts_with("the chat cannot be recorded"))
            && errors
                .iter()
                .any(|(m, _)| m.starts_with("could not append to the decision log"))
            && !s.is_busy()
    })
    .await;
    // The chat goes on.
    send(&mut app, "hello again");
    pump_until(&mut app, "the next turn", |s| {
        agent_text(s).contains("hello again") && !s.is_busy()
    })
    .await;
    app.shutdown().await;
    assert!(app.resume_hints().is_empty(), "no record, no resume hint");
}

/// A chat on the demo agent in `dir`, recorded when `record`: its session.
async fn one_turn(dir: &Path, record: bool, text: &str) -> String {
    let options = ChatOptions {
        chats_dir: record.then(|| dir.join("chats")),
        ..ChatOptions::default()
    };
    let mut app = started_with(dir, options).await;
    let session = app.state().session_id().expect("open").to_string();
    send(&mut app, text);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    session
}

#[tokio::test]
async fn the_picker_reads_the_records_off_the_loop_before_asking_the_agents() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = one_turn(dir.path(), true, "a recorded chat").await;
    let unrecorded = one_turn(dir.path(), false, "only the agent knows").await;

    let mut app = started_with(
        dir.path(),
        ChatOptions {
            chats_dir: Some(dir.path().join("chats")),
            ..ChatOptions::default()
        },
    )
    .await;
    key(&mut app, warden::state::Action::PastChats);
    assert!(
        app.ws.picker().is_some(),
        "open at once, filled as reads come"
    );
    // The agent's list comes after the records, so once the session only
    // the agent knows is in, so is the record.
    let result = tokio::time::timeout(GUARD, async {
        while !app
            .ws
            .picker()
            .is_some_and(|p| p.items().iter().any(|c| c.session_id == unrecorded))
        {
            let event = app.next_agent_event().await.expect("events");
            app.on_agent_event(event);
        }
    })
    .await;
    assert!(result.is_ok(), "timed out waiting for the agent's sessions");
    let picker = app.ws.picker().expect("open");
    let of_recorded: Vec<bool> = picker
        .items()
        .iter()
        .filter(|c| c.session_id == recorded)
        .map(|c| c.is_agent_listed())
        .collect();
    assert_eq!(of_recorded, [false], "shown once, as its record");
    app.shutdown().await;
}

#[tokio::test]
async fn a_record_gone_before_it_is_reopened_is_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = one_turn(dir.path(), true, "a recorded chat").await;
    let mut app = started_with(
        dir.path(),
        ChatOptions {
            chats_dir: Some(dir.path().join("chats")),
            ..ChatOptions::default()
        },
    )
    .await;
    key(&mut app, warden::state::Action::PastChats);
    app.settle_disk().await;
    let picker = app.ws.picker().expect("open");
    let chat_id = picker
        .items()
        .iter()
        .find(|c| c.session_id == recorded)
        .expect("the record is listed")
        .chat_id
        .clone();
    std::fs::remove_file(dir.path().join("chats").join(format!("{chat_id}.jsonl"))).unwrap();
    key(&mut app, warden::state::Action::key(Code::Enter));
    // Read off the loop: the answer comes back as an event.
    app.settle_disk().await;
    let notice = app.ws.notice.clone().unwrap_or_default();
    assert!(notice.starts_with("cannot reopen the chat"), "{notice:?}");
    assert_eq!(app.ws.chats.len(), 1, "nothing opened");
    app.shutdown().await;
}

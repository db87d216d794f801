//! The composer as a daily driver, end to end: history across runs, the
//! queue while the agent works, the agent's slash commands, `/export` and
//! `warden export`, the external editor.

use std::path::Path;
use warden::state::Code;

use warden::app::{App, ChatOptions};
use warden::state::{Action, ChatState, Msg};

use crate::common::*;

const SCENARIO: &str = "claude-slash-commands.toml";

/// Chats recorded (and history kept) under `dir/data/warden`, as
/// `XDG_DATA_HOME=dir/data` gives the real binary.
fn recorded(dir: &Path) -> ChatOptions {
    ChatOptions {
        chats_dir: Some(dir.join("data/warden/chats")),
        ..ChatOptions::default()
    }
}

fn idle(s: &ChatState) -> bool {
    !s.is_busy()
}

fn users(s: &ChatState) -> Vec<String> {
    s.session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            warden::state::EntryKind::User(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn history_is_kept_per_directory_across_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, recorded(tmp.path())).await;
    send(&mut app, "first question");
    pump_until(&mut app, "first turn", idle).await;
    send(&mut app, "second question");
    pump_until(&mut app, "second turn", idle).await;
    app.shutdown().await;

    // A new warden in the same directory walks them with Up (once the
    // history, read off the loop, is in).
    let mut app = started_scenario(tmp.path(), SCENARIO, recorded(tmp.path())).await;
    app.settle_disk().await;
    key(&mut app, Action::key(Code::Up));
    assert_eq!(app.state().view.composer.text(), "second question");
    key(&mut app, Action::key(Code::Up));
    assert_eq!(app.state().view.composer.text(), "first question");
    key(&mut app, Action::key(Code::Down));
    key(&mut app, Action::key(Code::Down));
    assert_eq!(app.state().view.composer.text(), "");
    app.shutdown().await;

    // Another directory has its own.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let mut options = recorded(tmp.path());
    options.chats_dir = Some(tmp.path().join("data/warden/chats"));
    let scenario = scenario(SCENARIO);
    let mut app = ready(App::with_options(
        demo_command(&other, &["--scenario", &scenario]),
        options,
    ))
    .await;
    app.settle_disk().await;
    key(&mut app, Action::key(Code::Up));
    assert_eq!(app.state().view.composer.text(), "");
}

#[tokio::test]
async fn enter_during_a_turn_queues_and_sends_when_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    send(&mut app, "slow one");
    send(&mut app, "after the slow one");
    assert_eq!(app.state().view.drafts.queue, ["after the slow one"]);
    pump_until(&mut app, "the queued message sent and answered", |s| {
        s.view.drafts.queue.is_empty() && idle(s) && agent_text(s).contains("ok")
    })
    .await;
    assert_eq!(users(app.state()), ["slow one", "after the slow one"]);
    assert!(agent_text(app.state()).contains("slow done"));
}

#[tokio::test]
async fn ctrl_s_cancels_the_turn_and_sends_the_message_now() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    send(&mut app, "very slow one");
    pump_until(&mut app, "the turn runs", |s| {
        agent_text(s).contains("started")
    })
    .await;
    app.handle(warden::state::Msg::Action(Action::Paste(
        "right now".into(),
    )));
    key(&mut app, Action::SendNow);
    pump_until(&mut app, "the message sent after the cancel", |s| {
        idle(s) && users(s).len() == 2
    })
    .await;
    assert_eq!(users(app.state()), ["very slow one", "right now"]);
    assert!(!agent_text(app.state()).contains("very slow done"));
    assert!(
        infos(app.state()).iter().any(|i| i == "turn cancelled"),
        "{:#?}",
        app.state().session.transcript.entries()
    );
}

#[tokio::test]
async fn the_agents_commands_are_listed_and_sent_as_the_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    // The scenario's commands come right after session/new.
    pump_until(&mut app, "the first commands", |s| {
        s.view.drafts.commands.iter().any(|c| c.name == "compact")
    })
    .await;
    assert_eq!(
        app.state().view.drafts.commands[0].hint.as_deref(),
        Some("<optional custom summarization instructions>")
    );
    send(&mut app, "list commands");
    pump_until(&mut app, "commands", |s| {
        !s.view.drafts.commands.is_empty() && idle(s)
    })
    .await;
    key(&mut app, Action::ch('/'));
    key(&mut app, Action::ch('r'));
    key(&mut app, Action::ch('e'));
    key(&mut app, Action::ch('v'));
    let popup = app.state().composer_popup().expect("the command list");
    assert_eq!(popup.items[0].label, "/review");
    assert_eq!(
        popup.items[0].detail,
        "agent: Review the working tree's changes"
    );
    // Enter on a command that takes input completes it and shows its hint.
    key(&mut app, Action::key(Code::Enter));
    assert_eq!(app.state().view.composer.text(), "/review ");
    assert_eq!(app.state().composer_hint().as_deref(), Some("<focus>"));
    send(&mut app, "the parser");
    pump_until(&mut app, "the command's answer", |s| {
        agent_text(s).contains("reviewing as asked")
    })
    .await;
    assert_eq!(users(app.state())[1], "/review the parser");
}

#[tokio::test]
async fn slash_export_writes_sanitized_markdown_in_the_working_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, recorded(tmp.path())).await;
    send(&mut app, "escapes please");
    pump_until(&mut app, "the answer", |s| {
        idle(s) && agent_text(s).contains("end")
    })
    .await;
    send(&mut app, "/export chat.md");
    // Written off the loop: the chat says when.
    pump_until(&mut app, "the export", |s| {
        infos(s).iter().any(|i| i.contains("exported the chat to"))
    })
    .await;
    let path = tmp.path().join("chat.md");
    let text = std::fs::read_to_string(&path).expect("the export");
    assert!(text.contains("## You\n\nescapes please"), "{text}");
    assert!(text.contains("bad ␛]52;c;aGk=␇ and ␛[2J end"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'));
    assert!(
        infos(app.state())
            .iter()
            .any(|i| i.contains("exported the chat to") && i.contains("chat.md")),
        "the chat says where"
    );
    // No way out of the working directory.
    send(&mut app, "/export ../outside.md");
    assert!(!tmp.path().parent().unwrap().join("outside.md").exists());
    assert!(
        errors(app.state())
            .iter()
            .any(|(m, _)| m.contains("not a plain file name"))
    );
    app.shutdown().await;

    // `warden export` reads the recorded chat: to stdout, and with -o.
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .arg("export")
            .args(args)
            .env("XDG_DATA_HOME", tmp.path().join("data"))
            .env("HOME", tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("bad ␛]52;c;aGk=␇ and ␛[2J end"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'));
    let file = tmp.path().join("out.md");
    let out = run(&["escapes", "-o", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout);
    let out = run(&["no such chat anywhere"]);
    assert!(!out.status.success());
}

#[tokio::test]
async fn the_external_editor_edits_the_message() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf 'edited: ' > \"$1.tmp\"\ncat \"$1\" >> \"$1.tmp\"\nmv \"$1.tmp\" \"$1\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    app.handle(warden::state::Msg::Action(Action::Paste("a draft".into())));
    key(&mut app, Action::Editor);
    let (id, text) = app.take_editor().expect("the editor is asked for");
    assert_eq!(text, "a draft");
    let result = warden::editor::edit_with(&script.display().to_string(), &text).await;
    app.editor_done(id, result);
    assert_eq!(app.state().view.composer.text(), "edited: a draft");
    // An editor that fails leaves the message as it was.
    key(&mut app, Action::Editor);
    let (id, text) = app.take_editor().unwrap();
    app.editor_done(id, warden::editor::edit_with("false", &text).await);
    assert_eq!(app.state().view.composer.text(), "edited: a draft");
    assert!(
        app.state()
            .view
            .notice
            .as_deref()
            .unwrap()
            .contains("editor failed")
    );
}

fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("target")).unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").unwrap();
    std::fs::write(dir.join("target/lib.rs.o"), "junk").unwrap();
}

#[tokio::test]
async fn at_finds_a_file_and_it_goes_as_a_resource_link() {
    let tmp = tempfile::tempdir().unwrap();
    project(tmp.path());
    let mut app = started(tmp.path(), &[]).await;
    app.handle(warden::state::Msg::Action(Action::Paste("explain ".into())));
    key(&mut app, Action::ch('@'));
    pump_until(&mut app, "the file list", |s| s.view.drafts.files.is_some()).await;
    let files = app.state().view.drafts.files.clone().unwrap();
    assert!(files.contains(&"src/lib.rs".to_string()), "{files:?}");
    assert!(!files.iter().any(|f| f.starts_with("target")), "{files:?}");
    for c in "lib".chars() {
        key(&mut app, Action::ch(c));
    }
    key(&mut app, Action::key(Code::Tab));
    assert_eq!(app.state().view.composer.text(), "explain @src/lib.rs ");
    key(&mut app, Action::key(Code::Enter));
    let real = std::fs::canonicalize(tmp.path().join("src/lib.rs")).unwrap();
    let line = format!(
        "received resource_link src/lib.rs {}",
        warden::mention::file_uri(&real)
    );
    pump_until(&mut app, "the agent's receipt", |s| {
        agent_text(s).contains(&line)
    })
    .await;
}

#[tokio::test]
async fn a_mention_is_embedded_when_the_agent_takes_embedded_context() {
    let tmp = tempfile::tempdir().unwrap();
    project(tmp.path());
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    send(&mut app, "look at @src/lib.rs and @../elsewhere.rs");
    let real = std::fs::canonicalize(tmp.path().join("src/lib.rs")).unwrap();
    let line = format!(
        "received resource {}: 30 bytes",
        warden::mention::file_uri(&real)
    );
    pump_until(&mut app, "the agent's receipt", |s| {
        idle(s) && agent_text(s).contains("ok")
    })
    .await;
    let text = agent_text(app.state());
    assert!(text.contains(&line), "{text}");
    assert_eq!(text.matches("received").count(), 1, "{text}");
}

/// A pasted image file (a dropped screenshot's path) goes to an agent that
/// takes images (Claude's `promptCapabilities.image`) as an `image` block.
#[tokio::test]
async fn a_pasted_image_goes_as_an_image_block() {
    let tmp = tempfile::tempdir().unwrap();
    project(tmp.path());
    let png = tmp.path().join("shot one.png");
    std::fs::write(&png, [0x89, b'P', b'N', b'G', 0, 1, 2]).unwrap();
    let mut app = started_scenario(tmp.path(), SCENARIO, ChatOptions::default()).await;
    app.handle(Msg::Action(Action::Paste(format!("'{}'", png.display()))));
    app.handle(Msg::Action(Action::ch('?')));
    app.handle(Msg::Action(Action::key(Code::Enter)));
    pump_until(&mut app, "the agent's receipt", |s| {
        idle(s) && agent_text(s).contains("received image")
    })
    .await;
    let text = agent_text(app.state());
    // 7 bytes are 12 characters of base64.
    assert!(
        text.contains("received image image/png: 12 base64 bytes"),
        "{text}"
    );
}

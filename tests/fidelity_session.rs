//! End to end over real pipes with the demo agent playing recorded agent
//! behaviour (issue 13): new files from every agent shape, restarting a
//! crashed agent into the same session, renamed chats, the agent's own plan
//! mode, and the session calls (`additionalDirectories`, `session/close`,
//! `session/list` pages).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::state::{Action, Connection};

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name)
        .display()
        .to_string()
}

async fn started_scenario(dir: &Path, name: &str, options: ChatOptions) -> App {
    let scenario = scenario(name);
    ready(App::with_options(
        demo_command(dir, &["--scenario", &scenario]),
        options,
    ))
    .await
}

/// Prompt `create`, allow whatever card comes, and wait for the turn's end.
async fn create_new_file(dir: &Path, name: &str) -> App {
    let mut app = started_scenario(dir, name, logged_options(dir, Mode::Default)).await;
    send(&mut app, "create");
    while app.state().is_busy() {
        pump_until(&mut app, "a card or the end of the turn", |s| {
            !s.approvals.is_empty() || !s.is_busy()
        })
        .await;
        if !app.state().approvals.is_empty() {
            key(&mut app, Action::Char('y'));
        }
    }
    app
}

// Item 3: a read of a missing file is answered as Zed answers it (empty
// content), so every agent shape can create a new file.

#[tokio::test]
async fn gemini_reads_a_missing_file_before_writing_it_and_creates_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "gemini-reads-before-writing-new-file.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("read ok: 0 lines"), "{text}");
    assert!(text.contains("write ok"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("brand-new.txt")).expect("created"),
        "hello from the fake model\n"
    );
}

#[tokio::test]
async fn kimi_and_opencode_ask_then_write_a_new_file_in_a_new_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "kimi-asks-then-writes-new-file.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/dir/brand-new.txt")).expect("created"),
        "hello from the fake model\n"
    );
}

#[tokio::test]
async fn qwen_writes_a_new_file_unasked_through_the_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = create_new_file(dir.path(), "qwen-writes-new-file-unasked.toml").await;
    let text = agent_text(app.state());
    assert!(text.contains("write ok"), "{text}");
    assert!(
        decisions(app.state()).iter().any(|(allowed, _)| *allowed),
        "the gate decided the write: {:?}",
        decisions(app.state())
    );
    assert!(dir.path().join("brand-new.txt").exists());
}

#[tokio::test]
async fn a_missing_file_outside_the_roots_is_still_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    // The built-in `fs-escape` reads `<cwd>/../outside.txt`, which does not exist.
    send(&mut app, "fs-escape");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(text.contains("read failed"), "{text}");
}

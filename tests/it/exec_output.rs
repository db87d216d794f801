//! `warden exec`'s output and what it logs: the output ends its line
//! (Claude's last chunk has no newline), `--on-ask` answers are logged as
//! `on-ask` (not `user`), and `warden log` shows agent names whole.

use std::path::Path;

use crate::common::*;

#[test]
fn exec_output_always_ends_with_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    let warden = env!("CARGO_BIN_EXE_warden");
    let scenario = scenario("claude-last-chunk-without-newline.toml");
    let (code, out, err, _) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &[
            "-p",
            "answer",
            "--",
            warden,
            "demo-agent",
            "--scenario",
            &scenario,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "The tests pass.\n\nNothing else to do.\n");
}

#[test]
fn on_ask_answers_are_logged_as_on_ask_and_warden_log_shows_whole_names() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err, log) = exec_in(
        dir.path(),
        Path::new("/nonexistent/warden.toml"),
        &["--on-ask", "allow", "-p", "edit"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected allow-once"),
        "{out}"
    );
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].source, "on-ask");

    // The same answer by an agent with a long name, as `warden log` shows it.
    let mut claude = log[0].clone();
    claude.agent = "claude-agent-acp".into();
    let path = dir.path().join("data/warden/decisions.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&serde_json::to_string(&claude).unwrap());
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("log")
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(lines[2].contains(" claude-agent-acp "), "{shown}");
    assert!(!shown.contains('…'), "nothing cut: {shown}");
    assert!(lines[1].contains(" on-ask "), "{shown}");
    // The columns line up: every row's decision starts where the header's does.
    let at = lines[0].find("decision").unwrap();
    assert_eq!(&lines[2][at..at + 7], "allowed", "{shown}");
}

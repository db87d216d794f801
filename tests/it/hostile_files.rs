//! A hostile agent's file calls: paths through symlinks and `/proc` magic
//! links meet the rules on their resolved paths, and warden's own files
//! (settings, lock, decision log, chat records, log) stay out of reach
//! whatever the mode and the roots say. Each case is a scenario file in
//! assets/scenarios/hostile-*.toml played by the demo agent under
//! `warden exec`, with the home directory (and cwd) in a tempdir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use crate::common::*;

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- hostile-test\n";
const SETTINGS: &str = "# marker: the user's own settings\n\
[[rules]]\ndecision = \"ask\"\nkind = \"read\"\npath = \"~/.ssh/**\"\n\n\
[[rules]]\ndecision = \"deny\"\nkind = \"write\"\npath = \"**/.env\"\n";

/// A home directory (also the cwd) with `~/.ssh/id_rsa`, `~/keys` linking to
/// `~/.ssh`, a `.env`, and the settings file at `~/config/warden/config.toml`.
struct Home {
    _dir: tempfile::TempDir,
    path: PathBuf,
    config: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    fs::create_dir_all(path.join(".ssh")).unwrap();
    fs::write(path.join(".ssh/id_rsa"), KEY).unwrap();
    symlink(path.join(".ssh"), path.join("keys")).unwrap();
    fs::write(path.join(".env"), "API_KEY=mine\n").unwrap();
    symlink(path.join(".env"), path.join("config.env")).unwrap();
    let config = path.join("config/warden/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, SETTINGS).unwrap();
    Home {
        _dir: dir,
        path,
        config,
    }
}

/// `warden exec` of the demo agent playing `file`, prompted `prompt`.
fn run(home: &Home, file: &str, prompt: &str, flags: &[&str]) -> ExecRun {
    let scenario = scenario(file);
    let mut args: Vec<&str> = flags.to_vec();
    args.extend([
        "-p",
        prompt,
        "--",
        env!("CARGO_BIN_EXE_warden"),
        "demo-agent",
        "--scenario",
        &scenario,
    ]);
    exec_in(&home.path, &home.config, &args)
}

#[test]
fn a_read_through_a_symlink_meets_the_rule_on_the_resolved_path() {
    let home = home();
    let (_, out, err, log) = run(&home, "hostile-symlink-read.toml", "file", &[]);
    assert!(!out.contains("PRIVATE KEY"), "the key leaked: {out}");
    assert!(out.contains("read failed"), "{out}\n{err}");
    let record = log.last().expect("a decision is logged");
    assert_eq!(record.decision, "denied", "{record:?}");
    let resolved = home.path.join(".ssh/id_rsa").display().to_string();
    assert!(record.title.contains(&resolved), "{record:?}");
    assert!(record.title.contains("keys/id_rsa"), "{record:?}");
}

#[test]
fn the_agents_own_read_request_meets_the_rule_on_the_resolved_path() {
    let home = home();
    let (_, out, err, log) = run(&home, "hostile-symlink-read.toml", "request", &[]);
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}\n{err}"
    );
    let record = log.last().expect("a decision is logged");
    assert_eq!(record.decision, "denied", "{record:?}");
}

#[test]
fn reads_through_proc_magic_links_meet_the_rule() {
    let home = home();
    for prompt in ["root", "cwd"] {
        let (_, out, err, log) = run(&home, "hostile-proc-root-read.toml", prompt, &[]);
        assert!(
            !out.contains("PRIVATE KEY"),
            "{prompt}: the key leaked: {out}"
        );
        assert!(out.contains("read failed"), "{prompt}: {out}\n{err}");
        let record = log.last().expect("a decision is logged");
        assert_eq!(record.decision, "denied", "{prompt}: {record:?}");
    }
}

#[test]
fn a_write_through_a_symlink_meets_the_deny_rule_on_the_resolved_path() {
    let home = home();
    let (_, out, err, log) = run(
        &home,
        "hostile-write-env-symlink.toml",
        "go",
        &["--on-ask", "allow"],
    );
    assert_eq!(
        fs::read_to_string(home.path.join(".env")).unwrap(),
        "API_KEY=mine\n"
    );
    assert!(out.contains("write failed"), "{out}\n{err}");
    let record = log.last().expect("a decision is logged");
    assert_eq!(
        (record.decision.as_str(), record.source.as_str()),
        ("denied", "rule"),
        "{record:?}"
    );
}

#[test]
fn the_settings_file_is_never_written_or_read_whatever_the_mode() {
    let home = home();
    symlink(&home.config, home.path.join("settings-link")).unwrap();
    fs::hard_link(&home.config, home.path.join("settings-hardlink")).unwrap();
    for prompt in ["direct", "symlink", "hardlink", "lock", "read"] {
        let (_, out, err, log) = run(
            &home,
            "hostile-write-settings.toml",
            prompt,
            &["--mode", "auto"],
        );
        assert_eq!(
            fs::read_to_string(&home.config).unwrap(),
            SETTINGS,
            "{prompt}"
        );
        assert!(
            !out.contains("marker"),
            "{prompt}: the settings leaked: {out}"
        );
        assert!(
            out.contains("write failed") || out.contains("read failed"),
            "{prompt}: {out}\n{err}"
        );
        assert!(err.contains("warden's settings"), "{prompt}: {err}");
        // Every refusal reaches the decision log, also one the IO made
        // after the gate allowed the call (the hard link, by inode).
        let last = log.last().expect("logged");
        assert_eq!(
            (last.decision.as_str(), last.source.as_str()),
            ("denied", "protected"),
            "{prompt}: {log:?}"
        );
    }
    assert_eq!(
        fs::read_to_string(home.path.join("settings-hardlink")).unwrap(),
        SETTINGS
    );
    assert!(!home.path.join("config/warden/config.toml.lock").exists());
}

#[test]
fn the_agents_own_request_to_edit_the_settings_is_refused_whatever_the_mode() {
    let home = home();
    symlink(&home.config, home.path.join("settings-link")).unwrap();
    let (_, out, err, log) = run(
        &home,
        "hostile-write-settings.toml",
        "request",
        &["--mode", "auto"],
    );
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}\n{err}"
    );
    assert!(err.contains("warden's settings file"), "{err}");
    assert!(log.iter().all(|r| r.decision != "allowed"), "{log:?}");
    // Refused by the gate, whatever the mode, and logged as such (issue 22).
    let record = log.last().expect("the refusal is logged");
    assert_eq!(
        (record.decision.as_str(), record.source.as_str()),
        ("denied", "protected"),
        "{record:?}"
    );
    assert_eq!(record.tool_call_id, "edit-1");
}

#[test]
fn the_decision_log_chat_records_and_log_are_never_written() {
    let home = home();
    // A first run leaves a decision in the log.
    let (_, _, _, before) = run(
        &home,
        "hostile-write-env-symlink.toml",
        "go",
        &["--on-ask", "allow"],
    );
    assert_eq!(before.len(), 1);
    let log_path = home.path.join("data/warden/decisions.jsonl");
    let mut logged = fs::read_to_string(&log_path).unwrap();
    for prompt in ["log", "records", "warden-log"] {
        let (_, out, err, _) = run(
            &home,
            "hostile-write-decision-log.toml",
            prompt,
            &["--mode", "auto"],
        );
        assert!(out.contains("write failed"), "{prompt}: {out}\n{err}");
        assert!(err.contains("refused"), "{prompt}: {err}");
        // Nothing of the agent's reached the log: only warden's own record
        // of the refusal was appended (issue 22: every refusal is logged).
        let now = fs::read_to_string(&log_path).unwrap();
        assert!(now.starts_with(&logged), "{prompt}: {now}");
        let added: Vec<warden::decision_log::DecisionRecord> = now[logged.len()..]
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(added.len(), 1, "{prompt}: {added:?}");
        assert_eq!(
            (added[0].decision.as_str(), added[0].source.as_str()),
            ("denied", "protected"),
            "{prompt}: {added:?}"
        );
        logged = now;
    }
    assert!(!home.path.join("data/warden/chats/forged.json").exists());
}

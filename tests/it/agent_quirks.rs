//! The agents warden knows get what they need under its sandbox with
//! nothing set by hand (issue 32): `warden exec` starts a stand-in named as
//! the real agent (`claude-agent-acp`, `codex-acp`: a shell script that
//! records what it was started with and what it can write, then runs the
//! demo agent), confined as a user's agent would be.

use std::path::PathBuf;

use crate::sandbox::landlock;

/// A fake home, a workspace, and the stand-in `bin/NAME`.
struct Rig {
    _dir: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    agent: PathBuf,
}

/// The stand-in records, in `<workspace>/record.txt`: its arguments,
/// `CLAUDE_CODE_TMPDIR`, and whether it could write `~/.claude.json` and
/// make Claude Code's shell-state directory there.
const STAND_IN: &str = r#"#!/bin/sh
{
  echo "args: $*"
  echo "tmpdir: ${CLAUDE_CODE_TMPDIR:-unset}"
  if printf '{"numStartups":1}' > "$HOME/.claude.json"; then echo "claude.json: written"; fi
  if [ -n "$CLAUDE_CODE_TMPDIR" ] && mkdir -p "$CLAUDE_CODE_TMPDIR/claude-0/x"; then echo "claude tmp: made"; fi
  if mkdir -p "/tmp/claude-warden-test-$$/x" 2>/dev/null; then echo "shared tmp: made"; fi
} > "$PWD/record.txt" 2>&1
exec "@WARDEN@" demo-agent
"#;

fn rig(name: &str) -> Rig {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    let bin = root.join("bin");
    for d in [&home, &work, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    let agent = bin.join(name);
    // warden passes the agent only its allow-list of variables: the
    // binary is named in the script itself.
    let script = STAND_IN.replace("@WARDEN@", env!("CARGO_BIN_EXE_warden"));
    std::fs::write(&agent, script).unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    Rig {
        _dir: dir,
        home,
        work,
        agent,
    }
}

/// One `warden exec` turn of the stand-in with the default sandbox; its
/// stderr and what the stand-in recorded.
fn exec(rig: &Rig, extra: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["--config", "/nonexistent/warden.toml", "exec", "--cwd"])
        .arg(&rig.work)
        .args(["-p", "hello", "--"])
        .arg(&rig.agent)
        .args(extra)
        .current_dir(&rig.work)
        .env("HOME", &rig.home)
        .env("XDG_DATA_HOME", rig.home.join(".local/share"))
        .env("XDG_CONFIG_HOME", rig.home.join(".config"))
        .env("XDG_STATE_HOME", rig.home.join(".local/state"))
        .env("WARDEN_DEMO_STATE", rig.work.join(".demo-state"))
        .env_remove("CLAUDE_CODE_TMPDIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden exec runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let record = std::fs::read_to_string(rig.work.join("record.txt")).unwrap_or_default();
    (stderr, record)
}

fn lines(record: &str, start: &str) -> Vec<String> {
    record
        .lines()
        .filter(|l| l.starts_with(start))
        .map(str::to_string)
        .collect()
}

/// Claude Code on a first run: no `~/.claude.json` yet. warden creates it
/// before the start, so the confined agent can write it, and points its
/// temp dir into the private one, which it can write; `/tmp` itself stays
/// closed.
#[test]
fn claude_code_on_a_first_run_can_write_its_settings_and_its_temp_dir() {
    if !landlock() {
        return;
    }
    let rig = rig("claude-agent-acp");
    assert!(!rig.home.join(".claude.json").exists());
    let (stderr, record) = exec(&rig, &[]);
    assert_eq!(
        lines(&record, "claude.json"),
        ["claude.json: written"],
        "{record}\n{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.home.join(".claude.json")).unwrap(),
        "{\"numStartups\":1}"
    );
    let tmpdir = lines(&record, "tmpdir: ");
    assert!(
        tmpdir.len() == 1 && tmpdir[0].starts_with("tmpdir: /") && tmpdir[0].contains("warden-"),
        "{record}"
    );
    assert_eq!(
        lines(&record, "claude tmp"),
        ["claude tmp: made"],
        "{record}"
    );
    assert_eq!(
        lines(&record, "shared tmp"),
        Vec::<String>::new(),
        "{record}"
    );
    // Nothing else was made in the home directory for it.
    assert!(!rig.home.join(".claude.json.lock").exists());
}

/// Codex: its own sandbox's Landlock setting is passed and said on start,
/// unless its command line sets it.
#[test]
fn codex_is_started_with_its_landlock_sandbox_and_warden_says_so() {
    if !landlock() {
        return;
    }
    let rig = rig("codex-acp");
    let (stderr, record) = exec(&rig, &[]);
    assert_eq!(
        lines(&record, "args: "),
        ["args: -c features.use_legacy_landlock=true"],
        "{record}"
    );
    assert!(
        stderr.contains("warden: note: codex's own sandbox (bubblewrap)"),
        "{stderr}"
    );
    // Theirs stays, and nothing is said.
    let (stderr, record) = exec(&rig, &["-c", "features.use_legacy_landlock=false"]);
    assert_eq!(
        lines(&record, "args: "),
        ["args: -c features.use_legacy_landlock=false"],
        "{record}"
    );
    assert!(!stderr.contains("codex's own sandbox"), "{stderr}");
    // The stand-in got nothing of Claude Code's.
    assert_eq!(lines(&record, "tmpdir: "), ["tmpdir: unset"], "{record}");
    assert!(!rig.home.join(".claude.json").exists());
}

/// An agent warden does not know gets nothing.
#[test]
fn another_agent_gets_nothing() {
    if !landlock() {
        return;
    }
    let rig = rig("some-agent");
    let (stderr, record) = exec(&rig, &[]);
    assert_eq!(lines(&record, "args: "), ["args: "], "{record}");
    assert_eq!(lines(&record, "tmpdir: "), ["tmpdir: unset"], "{record}");
    assert!(!rig.home.join(".claude.json").exists(), "{stderr}");
}

/// The demo agent playing codex's `_meta` terminals
/// (`codex-meta-terminal.toml`), saying it is `name` at `initialize`: the
/// chat's agent and whether its terminal output is read.
async fn meta_terminal_as(name: Option<&str>) -> (Option<warden::agents::Agent>, bool) {
    use crate::common::{pump_until, send, started};
    let dir = tempfile::tempdir().unwrap();
    let asset = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios/codex-meta-terminal.toml");
    let mut text = std::fs::read_to_string(asset).unwrap();
    if let Some(name) = name {
        text = format!("agent_name = \"{name}\"\n{text}");
    }
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    let mut app = started(dir.path(), &["--scenario", &file.display().to_string()]).await;
    send(&mut app, "list the files");
    pump_until(&mut app, "the turn to end", |s| !s.is_busy()).await;
    let state = app.state();
    let read = state.session.transcript.entries().iter().any(|e| {
        matches!(&e.kind, warden::state::EntryKind::Tool(tool)
            if !tool.call.agent_terminals.is_empty())
    });
    let agent = state.session.agent;
    app.shutdown().await;
    (agent, read)
}

/// Issue 34: the agent is known at `initialize` from what it says it is,
/// kept on the chat, and picks how its `_meta` is read: codex's terminals
/// for codex (and the demo, which plays it), not for Claude Code.
#[tokio::test]
async fn the_agent_known_at_initialize_picks_how_its_meta_is_read() {
    use warden::agents::Agent;
    assert_eq!(meta_terminal_as(None).await, (Some(Agent::Demo), true));
    assert_eq!(
        meta_terminal_as(Some("codex-acp")).await,
        (Some(Agent::Codex), true)
    );
    assert_eq!(
        meta_terminal_as(Some("@zed-industries/claude-agent-acp")).await,
        (Some(Agent::Claude), false)
    );
}

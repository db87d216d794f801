//! The settings file when it does not load, is locked, read-only or left
//! half-written by another warden, and the names agents get from it.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use warden::state::{Code, Key};

use pretty_assertions::assert_eq;
use warden::settings::{self, Edit, WriteError, apply};

use super::settings::{COMMENTED, bypass, child, config_in, mode_of};

/// A settings file with a deny rule and a typo elsewhere (`bell = maybe`,
/// line 8, column 8): it does not load.
const TYPO: &str = "[agents.demo]\ncommand = \"warden\"\nargs = [\"demo-agent\"]\n\n\
[[rules]]\ndecision = \"deny\"\ncommand = \"cargo test*\"\n[notifications]\nbell = maybe\n";

#[test]
fn exec_on_settings_that_do_not_load_allows_nothing_automatically() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), TYPO);
    let (code, out, err, log) =
        crate::common::exec_in(dir.path(), &config, &["--mode", "auto", "-p", "execute"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("settings did not load: automatic allows are off until fixed"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{}:9:8:", config.display())),
        "the error has its line and column: {err}"
    );
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}"
    );
    assert!(!err.contains("allowed: auto mode"), "{err}");
    assert_eq!(
        log.iter().map(|r| r.decision.as_str()).collect::<Vec<_>>(),
        ["denied"]
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        TYPO,
        "never rewritten"
    );
}

#[tokio::test]
async fn a_chat_on_settings_that_do_not_load_asks_for_everything() {
    use warden::state::{Action, Msg};
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), TYPO);
    let mut start = warden::launch::resolve(&warden::launch::Want {
        config: Some(&config),
        agent: None,
        command: &[],
        cwd: Some(dir.path()),
        mode: Some(warden::policy::Mode::Auto),
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .unwrap();
    start
        .command
        .env
        .push(crate::common::demo_state(dir.path()));
    start.options.notify = warden::app::Notify::default();
    let mut app = crate::common::ready(start.into_app()).await;
    let shown = crate::common::errors(app.state());
    assert!(
        shown.iter().any(|(m, _)| m
            .starts_with("settings did not load: automatic allows are off until fixed")
            && m.contains(":9:8:")),
        "{shown:?}"
    );
    // In Auto, an execute and a read each still ask.
    for prompt in ["execute", "read"] {
        crate::common::send(&mut app, prompt);
        crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
        app.handle(Msg::Action(Action::ch('n')));
        crate::common::pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    }
    assert!(
        crate::common::decisions(app.state())
            .iter()
            .all(|(allowed, _)| !allowed),
        "{:?}",
        crate::common::decisions(app.state())
    );
    // The rule that stands for the file cannot be revoked from the review screen.
    let rules = app.state().gate.rules.clone();
    assert_eq!(rules, vec![settings::fail_closed_rule()]);
    for action in [
        Action::Key(Key::ctrl(Code::Char('g'))),
        Action::ch('d'),
        Action::ch('y'),
    ] {
        app.handle(Msg::Action(action));
    }
    assert_eq!(app.state().gate.rules, rules);
    app.shutdown().await;
    assert_eq!(fs::read_to_string(&config).unwrap(), TYPO);
}

#[test]
fn two_wardens_bypassing_at_once_both_land_in_blocks_of_their_own() {
    const PROCESSES: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    // Every warden wants the name `node` for a different script; one more
    // runs the same script as the first and must share its block.
    let scripts: Vec<String> = (0..PROCESSES)
        .map(|p| format!("agent{p}.js"))
        .chain(["agent0.js".to_string()])
        .collect();
    let children: Vec<_> = scripts
        .iter()
        .map(|script| {
            child(&format!(
                "bypass-command\t{}\tnode\t{script}",
                path.display()
            ))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut blocks = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let at = stdout.find("BLOCK ").unwrap() + "BLOCK ".len();
        blocks.push(stdout[at..].lines().next().unwrap().to_string());
    }
    let loaded = settings::load(&path).unwrap().unwrap();
    for (script, block) in scripts.iter().zip(&blocks) {
        let agent = &loaded.agents[block];
        assert_eq!(
            (agent.command.as_str(), &agent.args[..]),
            ("node", &[script.clone()][..])
        );
        assert!(agent.bypass_permissions, "{block}");
    }
    let distinct: BTreeSet<&String> = blocks.iter().collect();
    assert_eq!(distinct.len(), PROCESSES, "{blocks:?}");
    assert_eq!(
        blocks[0], blocks[PROCESSES],
        "the same command shares its block"
    );
    assert_eq!(loaded.agents.len(), 2 + PROCESSES);
}

#[test]
fn a_read_only_file_is_left_alone_with_a_reason() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let inode = fs::metadata(&path).unwrap().ino();
    let err = apply(&path, &bypass("claude")).unwrap_err();
    assert_eq!(err, WriteError::ReadOnly { path: path.clone() });
    assert!(
        err.to_string()
            .contains("is read-only, and warden respects that"),
        "{err}"
    );
    assert_eq!(fs::metadata(&path).unwrap().ino(), inode, "not replaced");
    assert_eq!(fs::read_to_string(&path).unwrap(), COMMENTED);
    assert_eq!(mode_of(&path), 0o444);
    // A change that changes nothing is no error.
    let mut off = bypass("claude");
    if let Edit::SetBypass { value, .. } = &mut off {
        *value = false;
    }
    assert!(apply(&path, &off).is_ok());
}

#[test]
fn stale_temporary_files_are_removed_and_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    // A pid that has ended: a child that has been waited for.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = dir.path().join(format!(".config.toml.{}.3.tmp", gone.id()));
    let live = dir
        .path()
        .join(format!(".config.toml.{}.9.tmp", std::process::id()));
    let other = dir.path().join(".config.toml.notes.tmp");
    for file in [&dead, &live, &other] {
        fs::write(file, "half a write").unwrap();
    }
    apply(&path, &bypass("claude")).unwrap();
    assert!(!dead.exists(), "a dead writer's temporary file is removed");
    assert!(
        live.exists(),
        "a running writer's fresh temporary file is kept"
    );
    assert!(
        other.exists(),
        "files not named like warden's temporaries are kept"
    );
}

/// An exclusive lock on the settings lock file, as another warden holds it
/// (released when dropped, with the file).
struct HeldLock {
    _file: fs::File,
}

impl HeldLock {
    fn take(config: &Path) -> HeldLock {
        use std::os::fd::AsRawFd;
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(config.with_file_name("config.toml.lock"))
            .unwrap();
        // SAFETY: flock on an open descriptor.
        assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
        HeldLock { _file: file }
    }
}

#[tokio::test]
async fn a_settings_write_waiting_for_the_lock_does_not_stop_the_chat() {
    use warden::state::{Action, Msg};
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "# mine\n");
    let mut start = warden::launch::resolve(&warden::launch::Want {
        config: Some(&config),
        agent: None,
        command: &[],
        cwd: Some(dir.path()),
        mode: None,
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .unwrap();
    start
        .command
        .env
        .push(crate::common::demo_state(dir.path()));
    start.options.notify = warden::app::Notify::default();
    let mut app = crate::common::ready(start.into_app()).await;
    let held = HeldLock::take(&config);
    crate::common::send(&mut app, "edit");
    crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.handle(Msg::Action(Action::ch('b')));
    app.handle(Msg::Action(Action::ch('y')));
    // The chat goes on (the card is answered, the turn ends) while another
    // holder keeps the lock.
    crate::common::pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(crate::common::agent_text(app.state()).contains("selected allow-once"));
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "# mine\n",
        "still waiting"
    );
    drop(held);
    crate::common::pump_until(&mut app, "the write", |s| {
        crate::common::infos(s)
            .iter()
            .any(|i| i.starts_with("bypass for `demo` saved"))
    })
    .await;
    app.shutdown().await;
    let loaded = settings::load(&config).unwrap().unwrap();
    assert!(loaded.agents["demo"].bypass_permissions);
}

#[test]
fn agents_started_by_an_interpreter_are_named_by_their_script_and_never_share_a_bypass() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(
        dir.path(),
        "[agents.tools]\ncommand = \"node\"\nargs = [\"tools/agent.js\"]\nbypass_permissions = true\n",
    );
    let resolve = |line: &[&str]| {
        let command: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        warden::launch::resolve(&warden::launch::Want {
            config: Some(&config),
            agent: None,
            command: &command,
            cwd: Some(dir.path()),
            mode: None,
            own_exe: "/bin/warden",
        })
        .unwrap()
    };
    let same = resolve(&["node", "tools/agent.js"]);
    assert_eq!(same.command.name, "tools");
    assert!(same.options.bypass, "the block of this very command");
    let other = resolve(&["node", "tools/agent.js", "--other"]);
    assert_eq!(
        other.command.name, "tools-2",
        "the name is taken by another command"
    );
    assert!(!other.options.bypass);
    // `b` would write it pinned: its script absolute.
    let script = dir.path().join("tools/agent.js").display().to_string();
    assert_eq!(
        other.options.settings.create_as,
        Some((
            "tools-2".to_string(),
            "node".to_string(),
            vec![script, "--other".to_string()]
        ))
    );
    let npx = resolve(&["npx", "-y", "@zed-industries/claude-agent-acp"]);
    assert_eq!(npx.command.name, "claude-agent-acp");
    let python = resolve(&["python3", "-m", "fast_agent"]);
    assert_eq!(python.command.name, "fast_agent");
}

#[test]
fn an_agent_without_a_block_does_not_inherit_a_bypass_by_name() {
    use warden::state::{ChatState, Msg};
    // `-- node b.js` under a name that another command's block has.
    let mut state = ChatState::new("node", "/tmp");
    state.gate.agent_policy.name = "node".into();
    state.update(Msg::SettingsChanged {
        rules: Vec::new(),
        bypassed: vec!["node".into()],
        agent_block: None,
        note: None,
    });
    assert!(!state.gate.agent_policy.bypass);
    // Its own block, once written, does count.
    state.update(Msg::SettingsChanged {
        rules: Vec::new(),
        bypassed: vec!["node-2".into()],
        agent_block: Some("node-2".into()),
        note: None,
    });
    assert!(state.gate.agent_policy.bypass);
}

//! The runtime as one message pump: new chats at the agent's default mode,
//! restarts that forget the old session, settings writes and file calls off
//! the loop (in order, and landing before warden quits).

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::common::*;
use warden::app::App;
use warden::launch::{self, Want};
use warden::policy::Mode;
use warden::state::{Action, Connection, Msg};

/// A settings file with one agent, the demo agent under the name `helper`,
/// starting in `default_mode`, with no bell.
fn helper_settings(dir: &Path, default_mode: &str) -> std::path::PathBuf {
    let (name, value) = demo_state(dir);
    let path = dir.join("config.toml");
    fs::write(
        &path,
        format!(
            "default_agent = \"helper\"\n\n[notifications]\nbell = false\ndesktop = false\n\n\
             [agents.helper]\ncommand = \"warden\"\nargs = [\"demo-agent\"]\n\
             default_mode = \"{default_mode}\"\nenv = {{ {name} = \"{value}\" }}\n"
        ),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn a_new_chat_of_the_first_chats_agent_starts_in_its_default_mode_not_in_the_mode_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = helper_settings(dir.path(), "auto");
    let chats = dir.path().join("chats");
    let want = Want {
        config: Some(&config),
        agent: None,
        command: &[],
        cwd: Some(dir.path()),
        mode: Some(Mode::Plan),
        own_exe: env!("CARGO_BIN_EXE_warden"),
    };
    let mut app = ready(launch::tui_app(&want, Some(&chats)).unwrap().0).await;
    assert_eq!(app.state().session.agent_name, "helper");
    assert_eq!(
        app.state().gate.mode,
        Mode::Plan,
        "--mode is the first chat's"
    );
    key(&mut app, Action::NewChat);
    assert_eq!(app.ws.chats.len(), 2, "one agent: no chooser");
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    assert_eq!(app.ws.chats[1].state.session.agent_name, "helper");
    assert_eq!(
        app.ws.chats[1].state.gate.mode,
        Mode::Auto,
        "the agent's default_mode"
    );
    assert_eq!(app.ws.chats[0].state.gate.mode, Mode::Plan);
    app.shutdown().await;
}

#[tokio::test]
async fn a_new_chat_of_an_agent_without_a_default_mode_starts_in_default() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Auto)).await;
    key(&mut app, Action::NewChat);
    pump_ws(&mut app, "the second session", |ws| {
        matches!(
            ws.chats[1].state.session.connection,
            Connection::Ready { .. }
        )
    })
    .await;
    assert_eq!(app.ws.chats[1].state.gate.mode, Mode::Default);
    assert_eq!(app.ws.chats[0].state.gate.mode, Mode::Auto);
    app.shutdown().await;
}

#[tokio::test]
async fn a_restart_forgets_the_old_sessions_options_usage_and_expected_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = started_scenario(
        dir.path(),
        "codex-model-and-effort-options.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "usage");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    pump_until(&mut app, "the usage and options", |s| {
        s.session.controls.usage.is_some() && s.session.controls.options.len() == 3
    })
    .await;
    app.state_mut().session.expected_agent_mode = Some("full-access".into());
    let pid = app.agent_pid().expect("the agent runs");
    // SAFETY: a signal to the demo agent this test started.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
    pump_until(&mut app, "the agent's exit", |s| {
        s.session.connection == Connection::Down
    })
    .await;
    key(&mut app, Action::Restart);
    let state = app.state();
    assert_eq!(
        state.session.controls,
        Default::default(),
        "nothing of the old session"
    );
    assert_eq!(state.session.expected_agent_mode, None);
    pump_until(&mut app, "the new session's options", |s| {
        matches!(s.session.connection, Connection::Ready { .. })
            && s.session.controls.options.len() == 3
    })
    .await;
    assert_eq!(
        app.state().session.controls.usage,
        None,
        "no usage reported yet"
    );
    app.shutdown().await;
}

/// An exclusive lock on the settings lock file, as another warden holds it.
fn hold_lock(config: &Path) -> fs::File {
    use std::os::fd::AsRawFd;
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(config.with_file_name("config.toml.lock"))
        .unwrap();
    // SAFETY: flock on an open descriptor.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
    file
}

#[tokio::test]
async fn a_settings_write_still_waiting_for_the_lock_lands_before_warden_quits() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    fs::write(&config, "# mine\n").unwrap();
    let mut start = launch::resolve(&Want {
        config: Some(&config),
        agent: None,
        command: &[],
        cwd: Some(dir.path()),
        mode: None,
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .unwrap();
    start.command.env.push(demo_state(dir.path()));
    start.options.notify = warden::app::Notify::default();
    let mut app = ready(start.into_app()).await;
    let held = hold_lock(&config);
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('b'));
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert_eq!(fs::read_to_string(&config).unwrap(), "# mine\n", "waiting");
    // The other holder lets go while warden is quitting.
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
    });
    app.shutdown().await;
    release.join().unwrap();
    let loaded = warden::settings::load(&config).unwrap().unwrap();
    assert!(loaded.agents["demo"].bypass_permissions, "the write landed");
}

#[tokio::test]
async fn an_allowed_write_then_read_of_the_same_file_sees_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let scenario_path = dir.path().join("write-then-read.toml");
    fs::write(
        &scenario_path,
        r#"
[[turns]]
match = "go"
steps = [
  { type = "write_file", path = "notes.txt", content = "first\nsecond\n" },
  { type = "read_file", path = "notes.txt" },
  { type = "read_file", path = "missing.txt" },
]
"#,
    )
    .unwrap();
    let scenario = scenario_path.display().to_string();
    let mut app = ready(App::with_options(
        demo_command(dir.path(), &["--scenario", &scenario]),
        logged_options(dir.path(), Mode::Auto),
    ))
    .await;
    send(&mut app, "go");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert_eq!(
        fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "first\nsecond\n"
    );
    assert!(text.contains("write ok"), "{text}");
    assert!(text.contains("read ok: 2 lines"), "{text}");
    assert!(text.contains("first"), "{text}");
    assert!(
        text.contains("read ok: 0 lines"),
        "a missing file reads empty: {text}"
    );
    assert!(errors(app.state()).is_empty(), "{:?}", errors(app.state()));
    app.shutdown().await;
}

#[tokio::test]
async fn runtime_lines_reach_the_chat_as_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(demo_command(dir.path(), &[]));
    app.handle(Msg::Note("a note".into()));
    app.handle(Msg::ErrorLine("an error".into()));
    assert_eq!(infos(app.state()), vec!["a note".to_string()]);
    assert_eq!(
        errors(app.state()),
        vec![("an error".to_string(), Vec::new())]
    );
}

#[tokio::test]
async fn the_screen_block_of_the_settings_reaches_the_terminal_setup() {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("chats");
    for (text, regions) in [("", true), ("[screen]\nscroll_regions = false\n", false)] {
        let config = dir.path().join("config.toml");
        fs::write(&config, text).unwrap();
        let want = Want {
            config: Some(&config),
            agent: None,
            command: &[],
            cwd: Some(dir.path()),
            mode: None,
            own_exe: env!("CARGO_BIN_EXE_warden"),
        };
        let (mut app, screen) = launch::tui_app(&want, Some(&chats)).unwrap();
        assert_eq!(screen.scroll_regions, regions, "{text:?}");
        app.shutdown().await;
    }
}

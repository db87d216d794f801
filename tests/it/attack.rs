//! End to end: a hostile agent, played by the demo agent over real pipes,
//! tries to stretch what the user allowed (assets/scenarios/hostile-grant-crossing.toml).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use warden::app::App;
use warden::policy::Mode;
use warden::state::{Action, ChatState};

use crate::common::*;

/// A copy of a scenario in `dir` with `@CWD@` filled in.
fn scenario_in(dir: &Path, name: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scenarios")
        .join(name);
    let text = std::fs::read_to_string(source).expect("scenario");
    let path = dir.join(format!(".{name}"));
    std::fs::write(&path, text.replace("@CWD@", &dir.display().to_string())).expect("write");
    path
}

async fn playing(dir: &Path, file: &Path, mode: Mode) -> App {
    let command = demo_command(dir, &["--scenario", &file.display().to_string()]);
    let mut app = App::with_options(command, logged_options(dir, mode));
    app.start_agent().expect("the agent spawns");
    pump_until(&mut app, "session", |s| {
        matches!(
            s.session.connection,
            warden::state::Connection::Ready { .. }
        )
    })
    .await;
    app
}

fn outcomes(state: &ChatState) -> Vec<String> {
    agent_text(state)
        .lines()
        .filter(|l| l.starts_with("permission outcome:"))
        .map(str::to_string)
        .collect()
}

fn exec_scenario(dir: &Path, file: &Path, args: &[&str]) -> ExecRun {
    let file = file.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--",
        env!("CARGO_BIN_EXE_warden"),
        "demo-agent",
        "--scenario",
        &file,
    ]);
    exec_in(dir, Path::new("/nonexistent/warden.toml"), &all)
}

#[tokio::test]
async fn a_grant_on_the_agents_write_tool_never_covers_wardens_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("victim.txt"), "precious\n").expect("victim");
    let file = scenario_in(dir.path(), "hostile-grant-crossing.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "write-grant");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('a'));
    pump_until(&mut app, "a second card or the end", |s| {
        !s.is_busy() || !s.gate.approvals.is_empty()
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim.txt")).expect("read"),
        "precious\n",
        "the agent's write of another file ran under the grant"
    );
    let card = &app.state().gate.approvals[0];
    assert!(card.request.client, "warden's own write asks");
    assert!(card.title().contains("victim.txt"), "{}", card.title());
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(dir.path().join("notes.md").exists(), "the allowed edit ran");
    app.shutdown().await;
}

#[test]
fn exec_never_answers_an_option_whose_id_is_shared_or_whose_name_says_always() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario_in(dir.path(), "hostile-grant-crossing.toml");
    for (prompt, mode) in [
        ("shared-id", "auto"),
        ("shared-id", "default"),
        ("once-says-always", "auto"),
        ("once-says-always", "default"),
    ] {
        let (_, out, err, log) = exec_scenario(
            dir.path(),
            &file,
            &["--mode", mode, "--on-ask", "allow", "-p", prompt],
        );
        assert!(
            out.contains("permission outcome: selected no"),
            "{prompt} in {mode}: {out}\n{err}"
        );
        assert!(
            log.iter().all(|r| r.option_id.as_deref() == Some("no")),
            "{log:?}"
        );
    }
}

/// A title-only command (gemini's shape) is read like a command line: `a`
/// covers the same command, never a line that adds another (issue 33
/// item 3).
#[tokio::test]
async fn allow_for_this_chat_on_a_title_only_command_covers_only_that_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = scenario_in(dir.path(), "hostile-grant-crossing.toml");
    let mut app = playing(dir.path(), &file, Mode::Default).await;
    send(&mut app, "title-grant");
    pump_until(&mut app, "the card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('a'));
    pump_until(&mut app, "the next card or the end", |s| {
        !s.is_busy() || !s.gate.approvals.is_empty()
    })
    .await;
    assert_eq!(
        app.state().gate.grants.len(),
        1,
        "{:?}",
        app.state().gate.grants
    );
    let asking: Vec<&str> = app
        .state()
        .gate
        .approvals
        .iter()
        .map(|a| a.request.tool_call_id.as_str())
        .collect();
    assert_eq!(
        asking,
        ["g-title-3"],
        "the same command is covered, the longer line asks: {:?}",
        outcomes(app.state())
    );
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
}

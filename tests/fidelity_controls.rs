//! End to end over real pipes: the controls agents offer that warden used
//! to hide (issue 13): elicitations, session options and models, usage,
//! MCP servers, authentication.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use warden::app::{App, ChatOptions};
use warden::model::ToolKind;
use warden::policy::{KindMatch, Mode, Rule, RuleDecision};
use warden::state::Action;

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

/// Every setting that would let a fetch run unasked at once: Auto, bypass,
/// and an allow rule for fetches.
fn permissive(dir: &Path) -> ChatOptions {
    let mut allow = Rule::new(RuleDecision::Allow);
    allow.kind = Some(KindMatch::Kind(ToolKind::Fetch));
    let mut allow_all = Rule::new(RuleDecision::Allow);
    allow_all.kind = None;
    ChatOptions {
        bypass: true,
        rules: vec![allow, allow_all],
        ..logged_options(dir, Mode::Auto)
    }
}

/// codex-acp turns a url elicitation into a `fetch` permission request
/// whose tool call id starts `elicitation-`: allowing it signs the user in
/// somewhere. It always asks, whatever the mode, bypass and rules say.
#[tokio::test]
async fn codex_url_elicitation_as_fetch_always_asks() {
    for prompt in ["sign in", "form"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut app = started_scenario(
            dir.path(),
            "codex-url-elicitation-as-fetch.toml",
            permissive(dir.path()),
        )
        .await;
        send(&mut app, prompt);
        pump_until(&mut app, "a card or the end of the turn", |s| {
            !s.approvals.is_empty() || !s.is_busy()
        })
        .await;
        assert_eq!(
            app.state().approvals.len(),
            1,
            "{prompt}: asked; decisions {:?}, text {}",
            decisions(app.state()),
            agent_text(app.state())
        );
        key(&mut app, Action::Char('n'));
        pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
        assert!(
            agent_text(app.state()).contains("selected reject-once"),
            "{}",
            agent_text(app.state())
        );
        app.shutdown().await;
    }
}

/// The same settings still let an ordinary fetch run: the test above is
/// about elicitations, not about fetches asking.
#[tokio::test]
async fn an_ordinary_fetch_still_runs_in_auto() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "codex-url-elicitation-as-fetch.toml",
        permissive(dir.path()),
    )
    .await;
    send(&mut app, "fetch");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(app.state().approvals.is_empty());
    assert!(
        agent_text(app.state()).contains("selected allow-once"),
        "{}",
        agent_text(app.state())
    );
    app.shutdown().await;
}

/// `warden exec --on-ask allow` has nobody to open a sign-in page or fill
/// a form: an elicitation is declined, never accepted for the user.
#[test]
fn headless_allow_never_accepts_an_elicitation() {
    let scenario = scenario("codex-url-elicitation-as-fetch.toml");
    for prompt in ["sign in", "form"] {
        let (code, out, err, log) = exec(&[
            "--mode",
            "auto",
            "--on-ask",
            "allow",
            "-p",
            prompt,
            "--",
            env!("CARGO_BIN_EXE_warden"),
            "demo-agent",
            "--scenario",
            &scenario,
        ]);
        assert_eq!(code, Some(0), "{err}");
        assert!(
            out.contains("selected reject-once"),
            "{prompt}: {out}\n{err}"
        );
        let record = log.last().expect("logged");
        assert_eq!(record.decision, "denied", "{record:?}");
    }
}

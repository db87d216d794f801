//! End to end over real pipes: the controls agents offer that warden used
//! to hide (issue 13): elicitations, session options and models, usage,
//! MCP servers, authentication.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use warden::state::Code;

use crate::common::*;
use warden::app::{App, ChatOptions};
use warden::model::ToolKind;
use warden::policy::{KindMatch, Mode, Rule, RuleDecision};
use warden::state::{Action, Focus, Modal};

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
            !s.gate.approvals.is_empty() || !s.is_busy()
        })
        .await;
        assert_eq!(
            app.state().gate.approvals.len(),
            1,
            "{prompt}: asked; decisions {:?}, text {}",
            decisions(app.state()),
            agent_text(app.state())
        );
        key(&mut app, Action::ch('n'));
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
    assert!(app.state().gate.approvals.is_empty());
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

async fn elicitation_card(prompt: &str, mode: Mode, bypass: bool) -> (App, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = ChatOptions {
        bypass,
        ..logged_options(dir.path(), mode)
    };
    let mut app = started_scenario(dir.path(), "elicitation-form-and-url.toml", options).await;
    send(&mut app, prompt);
    pump_until(&mut app, "a card or the end of the turn", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    (app, dir)
}

fn card_text(app: &App) -> String {
    format!("{:?}", app.state().gate.approvals)
}

fn logged(dir: &Path) -> Vec<warden::decision_log::DecisionRecord> {
    warden::decision_log::read(&dir.join("decisions.jsonl")).unwrap_or_default()
}

/// A form elicitation is a card with its fields; `y` opens the editor,
/// where each field is changed (a choice with ←/→, a flag with Space), and
/// Enter sends them; the answer is logged like a decision (without the
/// values). The chat grant and bypass keys do not answer a form.
#[tokio::test]
async fn a_form_elicitation_is_filled_in_on_its_card() {
    let (mut app, dir) = elicitation_card("form", Mode::Auto, true).await;
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "{}",
        agent_text(app.state())
    );
    let card = card_text(&app);
    assert!(card.contains("Pick a deployment target"), "{card}");
    assert!(card.contains("Region (string, required)"), "{card}");
    assert!(card.contains("Really deploy?"), "{card}");
    for bypass in ['a', 'b'] {
        key(&mut app, Action::ch(bypass));
        assert_eq!(
            app.state().gate.approvals.len(),
            1,
            "{bypass} does not answer"
        );
        assert!(
            app.state().gate.grants.is_empty(),
            "{bypass} grants nothing"
        );
    }
    key(&mut app, Action::ch('y'));
    assert!(
        matches!(app.state().view.focus.modal, Some(Modal::Form(_))),
        "{:?}",
        app.state().view.focus
    );
    // Fields in name order: confirm, region.
    key(&mut app, Action::ch(' '));
    key(&mut app, Action::key(Code::Down));
    key(&mut app, Action::key(Code::Right));
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains(
            r#"elicitation answer: {"action":"accept","content":{"confirm":true,"region":"us"}}"#
        ),
        "{text}"
    );
    app.settle_disk().await;
    let log = logged(dir.path());
    let record = log.last().expect("logged");
    assert_eq!(record.decision, "allowed", "{record:?}");
    assert!(
        record.tool_call_id.starts_with("elicitation-form-"),
        "{record:?}"
    );
    let raw = std::fs::read_to_string(dir.path().join("decisions.jsonl")).unwrap_or_default();
    assert!(!raw.contains("\"us\""), "the values are not logged: {raw}");
    app.shutdown().await;
}

/// A required field without a default: Enter says it is required and the
/// card stays; typed in, the form is accepted with it. Esc goes back to the
/// card, where `n` declines.
#[tokio::test]
async fn a_required_field_is_typed_in_before_the_form_is_sent() {
    let (mut app, _dir) = elicitation_card("token", Mode::Default, false).await;
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "{}",
        agent_text(app.state())
    );
    key(&mut app, Action::ch('y'));
    key(&mut app, Action::key(Code::Enter));
    match &app.state().view.focus.modal {
        Some(Modal::Form(form)) => assert_eq!(form.error.as_deref(), Some("token is required")),
        other => panic!("still editing: {other:?}"),
    }
    assert_eq!(app.state().gate.approvals.len(), 1);
    for c in "abc".chars() {
        key(&mut app, Action::ch(c));
    }
    key(&mut app, Action::key(Code::Enter));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains(r#"elicitation answer: {"action":"accept","content":{"token":"abc"}}"#),
        "{text}"
    );
    app.shutdown().await;

    let (mut app, dir) = elicitation_card("count", Mode::Default, false).await;
    key(&mut app, Action::ch('y'));
    key(&mut app, Action::ch('x'));
    key(&mut app, Action::key(Code::Enter));
    match &app.state().view.focus.modal {
        Some(Modal::Form(form)) => {
            assert_eq!(
                form.error.as_deref(),
                Some("Replicas must be a whole number")
            );
        }
        other => panic!("still editing: {other:?}"),
    }
    key(&mut app, Action::key(Code::Esc));
    assert_eq!(app.state().view.focus, Focus::CARDS);
    assert!(
        app.state().is_busy(),
        "Esc in the form does not cancel the turn"
    );
    key(&mut app, Action::ch('n'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains(r#"elicitation answer: {"action":"decline"}"#),
        "{text}"
    );
    app.settle_disk().await;
    assert_eq!(
        logged(dir.path()).last().map(|r| r.decision.as_str()),
        Some("denied")
    );
    app.shutdown().await;
}

/// A url elicitation is a card showing the address; even in Auto with
/// bypass nothing accepts it but the user, and cancelling the turn
/// answers `cancel`.
#[tokio::test]
async fn a_url_elicitation_waits_for_the_user_even_in_auto_with_bypass() {
    let (mut app, _dir) = elicitation_card("url", Mode::Auto, true).await;
    assert_eq!(
        app.state().gate.approvals.len(),
        1,
        "{}",
        agent_text(app.state())
    );
    let card = card_text(&app);
    assert!(
        card.contains("https://github.com/login/oauth/authorize?client_id=abc"),
        "{card}"
    );
    assert!(card.contains("warden does not open it"), "{card}");
    key(&mut app, Action::key(Code::Esc));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains(r#"elicitation answer: {"action":"cancel"}"#),
        "{text}"
    );
    app.shutdown().await;
}

fn option_label(app: &App, id: &str) -> Option<String> {
    app.state()
        .session
        .controls
        .options
        .iter()
        .find(|o| o.id == id)
        .map(|o| o.current_label())
}

fn menu_item(app: &App, option: &str, label: &str) -> usize {
    use warden::model::SessionOptionValue;
    use warden::state::ModeItem;
    let state = app.state();
    state
        .mode_menu_items()
        .iter()
        .position(|item| match item {
            ModeItem::Option { option: o, choice } => {
                let opt = &state.session.controls.options[*o];
                opt.id == option
                    && match &opt.value {
                        SessionOptionValue::Select { choices, .. } => {
                            choices[*choice].name == label
                        }
                        SessionOptionValue::Boolean(_) => true,
                    }
            }
            _ => false,
        })
        .expect("the option is in the menu")
}

/// codex's model and reasoning effort (and a boolean) are listed in the
/// Alt+M menu; picking one sends `session/set_config_option`, and the
/// agent's answer is what the chat then shows.
#[tokio::test]
async fn session_options_are_listed_and_changed_through_the_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "codex-model-and-effort-options.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    pump_until(&mut app, "the options", |s| {
        s.session.controls.options.len() == 3
    })
    .await;
    assert_eq!(
        option_label(&app, "model").as_deref(),
        Some("gpt-5.3-codex")
    );
    assert_eq!(
        app.state().session.controls.model_label().as_deref(),
        Some("gpt-5.3-codex")
    );
    assert_eq!(
        option_label(&app, "reasoning_effort").as_deref(),
        Some("Medium")
    );

    key(&mut app, Action::OpenModeMenu);
    let item = menu_item(&app, "model", "GPT-5.5");
    key(&mut app, Action::PickModeItem(item));
    // The agent's answer (which says what changed) may come after its
    // config_option_update: wait for both.
    pump_until(&mut app, "the model change", |s| {
        s.session.controls.model_label().as_deref() == Some("GPT-5.5")
            && infos(s).iter().any(|l| l == "Model: GPT-5.5")
    })
    .await;
    assert!(
        infos(app.state()).iter().any(|l| l == "Model: GPT-5.5"),
        "{:?}",
        infos(app.state())
    );

    key(&mut app, Action::OpenModeMenu);
    let item = menu_item(&app, "web_search", "");
    key(&mut app, Action::PickModeItem(item));
    pump_until(&mut app, "the toggle", |s| {
        s.session
            .controls
            .options
            .iter()
            .any(|o| o.id == "web_search" && o.current_label() == "on")
    })
    .await;
    // The effort was left alone.
    assert_eq!(
        option_label(&app, "reasoning_effort").as_deref(),
        Some("Medium")
    );
    app.shutdown().await;
}

/// A `usage_update` is kept for the footer's context meter and cost.
#[tokio::test]
async fn usage_updates_reach_the_footer_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "codex-model-and-effort-options.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    send(&mut app, "usage");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    pump_until(&mut app, "the usage", |s| {
        s.session.controls.usage.is_some()
    })
    .await;
    assert_eq!(
        app.state().session.controls.usage_label().as_deref(),
        Some("ctx 25% · $0.42")
    );
    app.shutdown().await;
}

/// Settings with MCP servers for every agent and for the `claude` and
/// `codex` blocks (both the demo agent playing those agents).
fn mcp_settings(dir: &Path) -> std::path::PathBuf {
    let exe = env!("CARGO_BIN_EXE_warden");
    let claude = scenario("claude-mcp-http-sse.toml");
    let codex = scenario("codex-mcp-http-no-sse.toml");
    let text = format!(
        r#"
[mcp_servers.files]
command = "mcp-files"
args = ["--root", "."]
env = {{ FILES_TOKEN = "t" }}

[mcp_servers.docs]
url = "https://mcp.example.com/docs"
headers = {{ Authorization = "Bearer x" }}

[agents.claude]
command = "{exe}"
args = ["demo-agent", "--scenario", "{claude}"]

[agents.claude.mcp_servers.events]
type = "sse"
url = "https://mcp.example.com/events"

[agents.codex]
command = "{exe}"
args = ["demo-agent", "--scenario", "{codex}"]

[agents.codex.mcp_servers.events]
type = "sse"
url = "https://mcp.example.com/events"

[agents.codex.mcp_servers.files]
command = "mcp-files-for-codex"
"#
    );
    let path = dir.join("warden.toml");
    std::fs::write(&path, text).expect("settings");
    path
}

/// `[mcp_servers.NAME]` go to every agent's `session/new`, an agent's own
/// block adds to them; http and sse servers only to an agent that offers
/// their transport.
#[test]
fn mcp_servers_from_the_settings_reach_the_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = mcp_settings(dir.path());
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "claude", "-p", "mcp"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("mcp server: files (stdio: mcp-files --root .; env FILES_TOKEN)"),
        "{out}"
    );
    assert!(
        out.contains(
            "mcp server: docs (http: https://mcp.example.com/docs; headers Authorization)"
        ),
        "{out}"
    );
    assert!(
        out.contains("mcp server: events (sse: https://mcp.example.com/events; headers )"),
        "{out}"
    );

    // codex takes no sse: `events` is left out and said so; its own `files`
    // replaces the shared one.
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "codex", "-p", "mcp"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("mcp server: files (stdio: mcp-files-for-codex ; env )"),
        "{out}"
    );
    assert!(out.contains("mcp server: docs (http:"), "{out}");
    assert!(!out.contains("events"), "{out}");
    assert!(err.contains("`events`"), "the skip is said: {err}");
}

/// Settings with the codex block playing `codex-auth-required.toml`, with
/// `auth_method` set to `method` (none: unset).
fn auth_settings(dir: &Path, method: Option<&str>) -> std::path::PathBuf {
    let exe = env!("CARGO_BIN_EXE_warden");
    let codex = scenario("codex-auth-required.toml");
    let method = method.map_or(String::new(), |m| format!("auth_method = \"{m}\"\n"));
    let text = format!(
        "[agents.codex]\ncommand = \"{exe}\"\nargs = [\"demo-agent\", \"--scenario\", \"{codex}\"]\n{method}"
    );
    let path = dir.join("warden.toml");
    std::fs::write(&path, text).expect("settings");
    path
}

/// An agent that needs a sign-in and no `auth_method`: the session does
/// not open, and the message lists the agent's methods and the setting.
#[test]
fn auth_required_without_a_method_says_which_to_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = auth_settings(dir.path(), None);
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "codex", "-p", "hello"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(!out.contains("Signed in"), "{out}");
    for needed in [
        "auth_method = \"ID\"",
        "`chatgpt` (Login with ChatGPT)",
        "`codex-api-key` (Use CODEX_API_KEY, needs CODEX_API_KEY in its env)",
        "`codex-login` (codex login, a login in a terminal",
    ] {
        assert!(err.contains(needed), "{needed}: {err}");
    }
}

/// With `auth_method` set, warden sends `authenticate` first and the
/// session opens.
#[test]
fn auth_method_from_the_settings_signs_in_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = auth_settings(dir.path(), Some("chatgpt"));
    let (code, out, err, _) = exec_in(dir.path(), &config, &["--agent", "codex", "-p", "hello"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Signed in and working."), "{out}\n{err}");
}

/// A method the agent does not list, or a terminal login warden cannot
/// run, is refused with a message that says so.
#[test]
fn an_unknown_or_terminal_auth_method_is_named_in_the_error() {
    for (method, expected) in [
        (
            "nope",
            "auth_method = \"nope\" is not one of the agent's methods",
        ),
        (
            "codex-login",
            "is a login in a terminal: type /login, or run `warden login --agent codex`",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = auth_settings(dir.path(), Some(method));
        let (code, out, err, _) =
            exec_in(dir.path(), &config, &["--agent", "codex", "-p", "hello"]);
        assert_ne!(code, Some(0), "{out}");
        assert!(err.contains(expected), "{method}: {err}");
    }
}

/// "Done" on a url card accepts it (without content); the answer is logged.
#[tokio::test]
async fn a_url_elicitation_is_accepted_only_by_the_user() {
    let (mut app, dir) = elicitation_card("url", Mode::Default, false).await;
    assert_eq!(app.state().gate.approvals.len(), 1);
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains(r#"elicitation answer: {"action":"accept"}"#),
        "{text}"
    );
    app.settle_disk().await;
    let log = logged(dir.path());
    let record = log.last().expect("logged");
    assert_eq!(record.tool_call_id, "elicitation-url-gh-1", "{record:?}");
    assert_eq!(record.decision, "allowed", "{record:?}");
    app.shutdown().await;
}

/// `warden exec --on-ask allow` declines a native elicitation too.
#[test]
fn headless_allow_declines_a_native_elicitation() {
    let scenario = scenario("elicitation-form-and-url.toml");
    for prompt in ["url", "form"] {
        let (code, out, err, _) = exec(&[
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
            out.contains(r#"elicitation answer: {"action":"decline"}"#),
            "{prompt}: {out}\n{err}"
        );
    }
}

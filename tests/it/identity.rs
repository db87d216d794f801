//! Agent identity over real pipes: an agent started with `-- CMD` and no
//! settings block of its own is shown by what it calls itself at
//! `initialize` (`agentInfo.name`, as a safe word), unless that name is an
//! interpreter's or another agent's. Display only: its identity (its block,
//! else the name its command gives) is what the decision log, allow rules,
//! bypasses and the block `b` writes use; deny and ask rules apply by every
//! name it has or had.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use warden::state::Code;

use warden::app::App;
use warden::launch::{Start, Want};
use warden::policy::Mode;
use warden::settings;
use warden::state::{Action, Msg};

fn scenario(name: &str) -> String {
    format!("{}/assets/scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `sh run-agent.sh`, a wrapper that runs the demo agent with `scenario`:
/// by its command the agent is `run-agent`.
fn wrapper(dir: &Path, scenario: &str) -> Vec<String> {
    fs::write(
        dir.join("run-agent.sh"),
        format!(
            "exec '{}' demo-agent --scenario '{scenario}'\n",
            env!("CARGO_BIN_EXE_warden")
        ),
    )
    .unwrap();
    vec!["sh".into(), "run-agent.sh".into()]
}

/// A scenario file of the built-in scenarios whose agent calls itself
/// `Node` (refused as an interpreter's name): it stays named by its command.
fn plain_scenario(dir: &Path) -> String {
    let path = dir.join("plain.toml");
    fs::write(&path, "agent_name = \"Node\"\n").unwrap();
    path.display().to_string()
}

fn config_in(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("warden.toml");
    fs::write(&path, text).unwrap();
    path
}

/// What `warden -- CMD` in `dir` would start, logging decisions in `dir`.
fn resolve(dir: &Path, config: &Path, command: &[String]) -> Start {
    let mut start = warden::launch::resolve(&Want {
        config: Some(config),
        agent: None,
        command,
        cwd: Some(dir),
        mode: None,
        own_exe: env!("CARGO_BIN_EXE_warden"),
    })
    .unwrap();
    start.command.env.push(crate::common::demo_state(dir));
    start.options.notify = warden::app::Notify::default();
    start.options.decision_log = Some(dir.join("decisions.jsonl"));
    start
}

async fn started(dir: &Path, config: &Path, command: &[String]) -> App {
    crate::common::ready(resolve(dir, config, command).into_app()).await
}

/// The screen as drawn (chat list and footer included), as text.
fn screen(app: &App) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 30)).unwrap();
    let mut views = warden::ui::Views::default();
    terminal
        .draw(|frame| warden::ui::draw_workspace(frame, &app.ws, &mut views))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_slug(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-' | '_' | '.'))
}

#[tokio::test]
async fn an_agent_without_a_block_is_shown_by_what_it_calls_itself_but_keeps_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "# mine\n");
    let command = wrapper(dir.path(), &scenario("agent-names-itself.toml"));
    let start = resolve(dir.path(), &config, &command);
    assert_eq!(start.command.name, "run-agent", "by its command");
    assert!(start.options.settings.named_by_command);

    let mut app = crate::common::ready(start.into_app()).await;
    let state = app.state();
    assert_eq!(state.session.agent_name, "claude-code", "shown");
    assert_eq!(
        state.gate.agent_policy.name, "run-agent",
        "rules and bypasses keep to its identity"
    );
    assert_eq!(
        state.gate.agent_policy.aliases,
        vec!["claude-code".to_string()]
    );
    assert_eq!(app.ws.agents, vec!["run-agent".to_string()]);
    assert!(
        crate::common::infos(state)
            .iter()
            .any(|i| i.contains("shown as `claude-code`") && i.contains("`run-agent`")),
        "{:?}",
        crate::common::infos(state)
    );
    let screen = screen(&app);
    let footer = screen.lines().last().unwrap();
    assert!(footer.contains("│ claude-code │"), "{screen}");
    assert_eq!(app.agent_count(), 1);
    assert!(app.agent_pid().is_some());

    // A card, bypassed with `b`: the log and the new block carry its identity.
    crate::common::send(&mut app, "edit");
    crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.handle(Msg::Action(Action::ch('b')));
    app.handle(Msg::Action(Action::ch('y')));
    crate::common::pump_until(&mut app, "the write", |s| {
        crate::common::infos(s)
            .iter()
            .any(|i| i.starts_with("bypass for `run-agent` saved"))
    })
    .await;
    crate::common::pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).unwrap();
    assert!(!log.is_empty());
    assert!(log.iter().all(|r| r.agent == "run-agent"), "{log:?}");
    let file = settings::load(&config).unwrap().unwrap();
    assert!(!file.agents.contains_key("claude-code"), "{file:?}");
    let block = &file.agents["run-agent"];
    assert!(block.bypass_permissions);
    assert_eq!(block.command, "sh");

    // The same command next time: the block names it.
    let again = resolve(dir.path(), &config, &command);
    assert_eq!(again.command.name, "run-agent");
    assert!(again.options.bypass);
    assert!(!again.options.settings.named_by_command);
}

/// Issue 22 item 5: a bypass saved (`b`) for `sh run-agent.sh` in one
/// repository never applies to another repository's `run-agent.sh`, though
/// the command lines read the same: an agent is its resolved program and
/// script.
#[tokio::test]
async fn a_bypass_saved_for_one_repositorys_script_never_covers_anothers() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let (a, b) = (root_path.join("a"), root_path.join("b"));
    for repo in [&a, &b] {
        fs::create_dir_all(repo).unwrap();
    }
    let config = config_in(&root_path, "# mine\n");
    let plain = plain_scenario(&root_path);
    let command = wrapper(&a, &plain);
    wrapper(&b, &plain);

    let mut app = crate::common::ready(resolve(&a, &config, &command).into_app()).await;
    crate::common::send(&mut app, "edit");
    crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.handle(Msg::Action(Action::ch('b')));
    app.handle(Msg::Action(Action::ch('y')));
    crate::common::pump_until(&mut app, "the write", |s| {
        crate::common::infos(s)
            .iter()
            .any(|i| i.starts_with("bypass for `run-agent` saved"))
    })
    .await;
    crate::common::pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;
    // Repository a: the same agent, bypassed.
    let again = resolve(&a, &config, &command);
    assert_eq!(again.command.name, "run-agent");
    assert!(again.options.bypass);
    // Repository b: the same words, another agent: no bypass, a name of its own.
    let other = resolve(&b, &config, &command);
    assert_ne!(other.command.name, "run-agent");
    assert!(!other.options.bypass, "b's script got a's bypass");
    assert!(other.options.settings.named_by_command);
    let mut args = vec!["--on-ask", "deny", "-p", "edit", "--"];
    args.extend(command.iter().map(String::as_str));
    let (code, _, err, log) = crate::common::exec_in(&b, &config, &args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "on-ask"),
        "{log:?}"
    );
    let file = settings::load(&config).unwrap().unwrap();
    let block = &file.agents["run-agent"];
    assert_eq!(
        block.args,
        vec![a.join("run-agent.sh").display().to_string()],
        "the block names its script absolutely"
    );
}

/// Issue 22 item 5: a rule kept (`p`) for `sh run-agent.sh` in one
/// repository never covers another repository's `run-agent.sh`, and a rule
/// naming an agent no block binds covers no agent at all.
#[tokio::test]
async fn a_rule_kept_for_one_repositorys_script_never_covers_anothers() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let (a, b) = (root_path.join("a"), root_path.join("b"));
    for repo in [&a, &b] {
        fs::create_dir_all(repo).unwrap();
    }
    let config = config_in(&root_path, "# mine\n");
    let plain = plain_scenario(&root_path);
    let command = wrapper(&a, &plain);
    wrapper(&b, &plain);

    let mut app = crate::common::ready(resolve(&a, &config, &command).into_app()).await;
    crate::common::send(&mut app, "edit");
    crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.handle(Msg::Action(Action::ch('p')));
    app.handle(Msg::Action(Action::key(Code::Enter)));
    // `p` and Enter keep the rule and allow the card in one step: no
    // question about the very card the rule came from (issue 33, item 4),
    // not even once the rule's block is written and binds the agent.
    assert!(app.state().gate.approvals.is_empty());
    crate::common::pump_until(&mut app, "end of turn", |s| {
        assert_eq!(s.view.focus.modal, None, "{:?}", s.view.notice);
        !s.is_busy()
    })
    .await;
    crate::common::pump_until(&mut app, "the rule's block", |s| {
        s.session.settings_agent.is_some()
    })
    .await;
    assert_eq!(app.state().view.focus.modal, None);
    app.shutdown().await;
    let log = warden::decision_log::read(&a.join("decisions.jsonl")).unwrap();
    assert!(
        log.iter()
            .any(|r| r.decision == "allowed" && r.source == "user"),
        "{log:?}"
    );
    // Repository b: the same words, another agent; the rule does not apply.
    let mut args = vec!["--on-ask", "deny", "-p", "edit", "--"];
    args.extend(command.iter().map(String::as_str));
    let (code, _, err, log) = crate::common::exec_in(&b, &config, &args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "on-ask"),
        "a's rule covered b's agent: {log:?}"
    );

    let file = settings::load(&config).unwrap().unwrap();
    let block = &file.agents["run-agent"];
    assert!(!block.bypass_permissions);
    assert_eq!(
        block.args,
        vec![a.join("run-agent.sh").display().to_string()]
    );
    assert_eq!(file.rules.len(), 1);
    assert_eq!(file.rules[0].agent.as_deref(), Some("run-agent"));

    // A rule naming `run-agent` with no block to bind it: no agent of that
    // name gets it (any `run-agent.sh` would be `run-agent`).
    let loose = tempfile::tempdir().unwrap();
    let config = config_in(
        loose.path(),
        "[[rules]]\ndecision = \"allow\"\nagent = \"run-agent\"\nkind = \"edit\"\n",
    );
    wrapper(loose.path(), &plain);
    let (code, _, err, log) = crate::common::exec_in(loose.path(), &config, &args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        (log[0].decision.as_str(), log[0].source.as_str()),
        ("denied", "on-ask"),
        "{log:?}"
    );
}

/// `run` by the agent that calls itself `Claude Code`, under `settings`
/// in `mode` (`block`: the settings give it the block `mine`): a card when
/// `answer` is `None`, else that option sent.
async fn renamed_agent_runs(settings_text: &str, mode: Mode, block: bool, answer: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), settings_text);
    let command = wrapper(dir.path(), &scenario("hostile-agent-renames.toml"));
    let mut start = resolve(dir.path(), &config, &command);
    start.options.mode = mode;
    let mut app = crate::common::ready(start.into_app()).await;
    crate::common::send(&mut app, "run");
    crate::common::pump_until(&mut app, "a card or the end", |s| {
        !s.gate.approvals.is_empty() || !s.is_busy()
    })
    .await;
    let text = crate::common::agent_text(app.state());
    match answer {
        None => assert!(
            !app.state().gate.approvals.is_empty(),
            "{settings_text}: it must ask: {text}"
        ),
        Some(option) => assert!(
            text.contains(&format!("permission outcome: selected {option}")),
            "{settings_text}: {text}"
        ),
    }
    let name = if block { "mine" } else { "run-agent" };
    assert_eq!(app.state().gate.agent_policy.name, name, "{settings_text}");
    app.shutdown().await;
}

/// Issue 22 item 5: an agent without a block that calls itself by the name
/// of an allow rule's agent (`claude-code`) never gets that rule.
#[tokio::test]
async fn what_an_agent_calls_itself_never_gets_it_an_allow_rule() {
    renamed_agent_runs(
        "[[rules]]\ndecision = \"allow\"\nagent = \"claude-code\"\ncommand = \"touch *\"\n",
        Mode::Default,
        false,
        None,
    )
    .await;
}

/// Issue 22 item 5: an agent that renamed itself never escapes a deny rule
/// naming it by its command's name, even in Auto.
#[tokio::test]
async fn renaming_itself_never_escapes_a_deny_rule_for_its_old_name() {
    renamed_agent_runs(
        "[[rules]]\ndecision = \"deny\"\nagent = \"run-agent\"\ncommand = \"touch *\"\n",
        Mode::Auto,
        false,
        Some("reject-once"),
    )
    .await;
}

/// A deny rule naming what an agent calls itself applies too, to an agent
/// without a block and to one with a block of its own.
#[tokio::test]
async fn a_deny_rule_for_what_an_agent_calls_itself_applies() {
    renamed_agent_runs(
        "[[rules]]\ndecision = \"deny\"\nagent = \"claude-code\"\ncommand = \"touch *\"\n",
        Mode::Auto,
        false,
        Some("reject-once"),
    )
    .await;
    renamed_agent_runs(
        "[agents.mine]\ncommand = \"sh\"\nargs = [\"run-agent.sh\"]\n\n\
         [[rules]]\ndecision = \"deny\"\nagent = \"claude-code\"\ncommand = \"touch *\"\n",
        Mode::Auto,
        true,
        Some("reject-once"),
    )
    .await;
}

#[test]
fn exec_logs_the_agents_identity_never_what_it_calls_itself() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "# mine\n");
    let command = wrapper(dir.path(), &scenario("agent-names-itself.toml"));
    let mut args = vec!["--on-ask", "deny", "-p", "edit", "--"];
    args.extend(command.iter().map(String::as_str));
    let (code, _, err, log) = crate::common::exec_in(dir.path(), &config, &args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].agent, "run-agent");
}

#[tokio::test]
async fn a_name_full_of_escapes_becomes_a_plain_word() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "# mine\n");
    let command = wrapper(dir.path(), &scenario("hostile-agent-name-escapes.toml"));
    let mut app = started(dir.path(), &config, &command).await;
    let name = app.state().session.agent_name.clone();
    assert!(is_slug(&name), "{name:?}");
    assert_eq!(name, "0-ownedclaude-code-2j");
    for line in crate::common::infos(app.state()) {
        assert!(
            !line.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{line:?}"
        );
    }
    crate::common::send(&mut app, "edit");
    crate::common::pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    app.handle(Msg::Action(Action::ch('b')));
    app.handle(Msg::Action(Action::ch('y')));
    crate::common::pump_until(&mut app, "the write", |s| {
        crate::common::infos(s)
            .iter()
            .any(|i| i.starts_with("bypass for") && i.contains("saved"))
    })
    .await;
    app.shutdown().await;
    let text = fs::read_to_string(&config).unwrap();
    assert!(text.contains("[agents.run-agent]"), "{text}");
    assert!(!text.contains("owned"), "{text}");
    assert!(!text.chars().any(|c| c == '\u{1b}' || c == '\u{202e}'));
    let log = fs::read_to_string(dir.path().join("decisions.jsonl")).unwrap();
    assert!(log.contains("\"agent\":\"run-agent\""), "{log}");
    assert!(!log.contains('\u{1b}'), "{log}");
}

#[tokio::test]
async fn interpreter_and_demo_names_are_refused() {
    for (claim, why) in [("Node", "interpreter or launcher"), ("demo", "demo agent")] {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), "# mine\n");
        let own = dir.path().join("claims.toml");
        fs::write(&own, format!("agent_name = \"{claim}\"\n")).unwrap();
        let command = wrapper(dir.path(), &own.display().to_string());
        let mut app = started(dir.path(), &config, &command).await;
        assert_eq!(app.state().session.agent_name, "run-agent", "{claim}");
        assert!(
            crate::common::infos(app.state())
                .iter()
                .any(|i| i.contains(why)),
            "{:?}",
            crate::common::infos(app.state())
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn an_agent_cannot_take_the_name_of_another_agent_of_this_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "# mine\n");
    let command = wrapper(dir.path(), &scenario("agent-names-itself.toml"));
    let start = resolve(dir.path(), &config, &command);
    // Another command this run can start (a chat reopened from its record).
    let mut other = start.command.clone();
    other.name = "claude-code".into();
    other.program = "claude-agent-acp".into();
    other.args = Vec::new();
    let choice = warden::app::AgentChoice {
        command: other,
        options: start.options.clone(),
    };
    let mut app = start.into_app();
    app.set_choices(vec![choice]);
    let mut app = crate::common::ready(app).await;
    assert_eq!(app.state().session.agent_name, "run-agent");
    assert_eq!(
        app.ws.agents,
        vec!["run-agent".to_string(), "claude-code".to_string()]
    );
    assert!(
        crate::common::infos(app.state())
            .iter()
            .any(|i| i.contains("another agent of this run")),
        "{:?}",
        crate::common::infos(app.state())
    );
    app.shutdown().await;
}

#[tokio::test]
async fn an_agent_with_a_block_keeps_the_blocks_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(
        dir.path(),
        "[agents.mine]\ncommand = \"sh\"\nargs = [\"run-agent.sh\"]\n",
    );
    let command = wrapper(dir.path(), &scenario("agent-names-itself.toml"));
    let mut app = started(dir.path(), &config, &command).await;
    assert_eq!(app.state().session.agent_name, "mine");
    assert_eq!(app.state().gate.agent_policy.name, "mine");
    assert!(
        !crate::common::infos(app.state())
            .iter()
            .any(|i| i.contains("claude-code")),
        "{:?}",
        crate::common::infos(app.state())
    );
    app.shutdown().await;
}

#[test]
fn the_state_shows_the_new_name_and_keeps_its_identity() {
    let mut state = warden::state::ChatState::new("run-agent", "/tmp");
    state.gate.agent_policy.name = "run-agent".into();
    let effects = state.update(Msg::AgentNamed("claude-code".into()));
    assert!(effects.is_empty());
    assert_eq!(state.session.agent_name, "claude-code");
    assert_eq!(state.gate.agent_policy.name, "run-agent");
    assert_eq!(
        state.gate.agent_policy.aliases,
        vec!["claude-code".to_string()]
    );
    assert_eq!(
        crate::common::infos(&state),
        vec![
            "shown as `claude-code`, what the agent calls itself (its command gave `run-agent`, which its rules and bypass keep to)"
        ]
    );
    // The same name again says nothing new.
    state.update(Msg::AgentNamed("claude-code".into()));
    assert_eq!(crate::common::infos(&state).len(), 1);
    assert_eq!(state.gate.agent_policy.aliases.len(), 1);
}

/// Issue 22 item 5, a sibling: reopening a past chat of `sh run-agent.sh`
/// recorded in repository b, from a run whose agent of the same name is
/// repository a's (bypassed), never gives b's chat a's process, name or
/// bypass.
#[tokio::test]
async fn a_reopened_chat_of_another_repositorys_script_gets_none_of_this_agents_bypass() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let (a, b) = (root_path.join("a"), root_path.join("b"));
    for repo in [&a, &b] {
        fs::create_dir_all(repo).unwrap();
    }
    let chats = root_path.join("chats");
    let plain = plain_scenario(&root_path);
    let command = wrapper(&a, &plain);
    wrapper(&b, &plain);
    // A chat in b, recorded under `run-agent`.
    let config = config_in(&root_path, "# mine\n");
    let mut start = resolve(&b, &config, &command);
    start.options.chats_dir = Some(chats.clone());
    let mut app = crate::common::ready(start.into_app()).await;
    assert_eq!(app.state().gate.agent_policy.name, "run-agent");
    crate::common::send(&mut app, "remember b");
    crate::common::pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    app.shutdown().await;

    // Now a's script has a block, bypassed.
    let config = config_in(
        &root_path,
        &format!(
            "[agents.run-agent]\ncommand = \"sh\"\nargs = [\"{}\"]\nbypass_permissions = true\n",
            a.join("run-agent.sh").display()
        ),
    );
    let mut start = resolve(&a, &config, &command);
    start.options.chats_dir = Some(chats.clone());
    assert!(start.options.bypass);
    let mut app = crate::common::ready(start.into_app()).await;
    assert_eq!(app.state().gate.agent_policy.name, "run-agent");
    app.handle(Msg::Action(Action::PastChats));
    let result = tokio::time::timeout(crate::common::GUARD, async {
        while !app.ws.picker().is_some_and(|p| {
            p.items()
                .iter()
                .any(|c| c.title.as_deref() == Some("remember b"))
        }) {
            let event = app.next_agent_event().await.expect("events");
            app.on_agent_event(event);
        }
    })
    .await;
    assert!(result.is_ok(), "b's record in the picker");
    app.handle(Msg::Action(Action::Paste("remember b".into())));
    app.handle(Msg::Action(Action::key(Code::Enter)));
    crate::common::pump_until(&mut app, "the reopened chat", |s| {
        s.session.cwd_path == b
            && matches!(
                s.session.connection,
                warden::state::Connection::Ready { .. }
            )
    })
    .await;
    let state = app.state();
    assert!(
        !state.gate.agent_policy.bypass,
        "b's chat got a's bypass ({})",
        state.gate.agent_policy.name
    );
    assert_ne!(state.gate.agent_policy.name, "run-agent");
    app.shutdown().await;
}

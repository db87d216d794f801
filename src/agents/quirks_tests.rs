//! Each agent's quirks on what it really sent (`fixtures/`, lines of
//! `../shared/agent-transcripts`).

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use super::*;
use crate::acp::convert;

/// The modes each agent offered at `session/new` (`session/new` answers:
/// `modes`, or opencode's `mode` config option).
const MODES: &str = include_str!("fixtures/modes.jsonl");
/// `initialize` answers.
const INITIALIZE: &str = include_str!("fixtures/initialize.jsonl");
/// A Bash call's `tool_call` of claude-agent-acp 0.23.1.
const CLAUDE_TOOL_CALL: &str = include_str!("fixtures/claude-tool-call.json");

/// codex-acp 0.16.0 running `touch` itself, recorded through warden on the
/// codex rig (warden offers `terminal_output` in `_meta`): the tool call
/// with `terminal_info`, its update with `terminal_exit` (the workspace
/// path replaced by `/home/u/proj`).
const CODEX_TERMINAL: &str = include_str!("fixtures/codex-terminal.jsonl");

fn agent_named(name: &str) -> Agent {
    match name {
        "claude" => Agent::Claude,
        "codex" => Agent::Codex,
        "gemini" => Agent::Gemini,
        "kimi" => Agent::Kimi,
        "opencode" => Agent::OpenCode,
        "qwen" => Agent::Qwen,
        "fast_agent" => Agent::FastAgent,
        other => panic!("no agent {other}"),
    }
}

/// Every agent's recorded modes, as warden converts them.
fn recorded_modes() -> Vec<(Agent, Vec<AgentMode>)> {
    MODES
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            let agent = agent_named(line["agent"].as_str().unwrap());
            let result = &line["result"];
            let modes = match result.get("modes") {
                Some(modes) => {
                    let modes: acp::SessionModeState =
                        serde_json::from_value(modes.clone()).unwrap();
                    convert::modes(&modes).available
                }
                None => {
                    let options: Vec<acp::SessionConfigOption> =
                        serde_json::from_value(result["configOptions"].clone()).unwrap();
                    convert::config_modes(&options).unwrap().available
                }
            };
            (agent, modes)
        })
        .collect()
}

/// Each agent's table holds exactly the modes it was recorded offering,
/// and says what the modes' own words say (so knowing the agent changes
/// nothing for them).
#[test]
fn each_agents_table_is_its_recorded_modes() {
    let recorded = recorded_modes();
    assert_eq!(recorded.len(), 7, "every agent but the demo");
    for (agent, modes) in recorded {
        let table = agent.modes();
        assert_eq!(table.len(), modes.len(), "{agent:?}: {modes:?}");
        for mode in &modes {
            let (_, asks) = table
                .iter()
                .find(|(id, _)| *id == mode.id)
                .unwrap_or_else(|| panic!("{agent:?} has no `{}` in its table", mode.id));
            assert_eq!(*asks, agent_mode::mode_asks(mode), "{agent:?} {}", mode.id);
            assert_eq!(mode_asks(Some(agent), mode), *asks);
        }
    }
}

/// The agent's table answers before the mode's words: Claude Code runs
/// commands without asking in its own `plan`, whatever it says of it.
#[test]
fn a_known_agents_table_answers_before_the_words() {
    let plan = AgentMode {
        id: "plan".into(),
        name: "Plan Mode".into(),
        description: Some("Asks before every edit".into()),
    };
    assert_eq!(agent_mode::mode_asks(&plan), ModeAsks::Asks);
    assert_eq!(mode_asks(None, &plan), ModeAsks::Asks);
    assert_eq!(mode_asks(Some(Agent::Claude), &plan), ModeAsks::Unknown);
    // A mode the table does not know is read by its words.
    let other = AgentMode {
        id: "yolo".into(),
        name: "YOLO".into(),
        description: None,
    };
    assert_eq!(mode_asks(Some(Agent::Claude), &other), ModeAsks::NeverAsks);
}

/// opencode's `build` asks only where opencode.json says: the warning says
/// what to set, for opencode and for an agent warden does not know that
/// offers such a mode; never for another known agent.
#[test]
fn opencodes_build_mode_says_what_to_set() {
    let recorded = recorded_modes();
    let (_, modes) = recorded
        .iter()
        .find(|(agent, _)| *agent == Agent::OpenCode)
        .unwrap();
    let build = modes.iter().find(|m| m.id == "build").unwrap();
    let hint = settings_hint(Some(Agent::OpenCode), build).unwrap();
    assert!(hint.contains("\"permission\": {\"edit\": \"ask\", \"bash\": \"ask\"}"));
    assert_eq!(settings_hint(None, build), Some(hint));
    assert_eq!(settings_hint(Some(Agent::Claude), build), None);
    let plan = modes.iter().find(|m| m.id == "plan").unwrap();
    assert_eq!(settings_hint(Some(Agent::OpenCode), plan), None);
    // No other recorded mode is one.
    for (agent, modes) in &recorded {
        for mode in modes {
            let want = *agent == Agent::OpenCode && mode.id == "build";
            assert_eq!(
                settings_hint(Some(*agent), mode).is_some(),
                want,
                "{agent:?}"
            );
        }
    }
}

/// Claude's tool name is read from its `_meta` when the agent is Claude
/// Code or one warden does not know; another agent's `_meta` is not read
/// as Claude's.
#[test]
fn claudes_meta_is_read_for_claude() {
    let update: acp::SessionUpdate = serde_json::from_str(CLAUDE_TOOL_CALL).unwrap();
    let name = |agent: Option<Agent>| match convert::session_update(&update, meta(agent)) {
        crate::model::SessionUpdate::ToolCall(call) => call.tool_name,
        other => panic!("{other:?}"),
    };
    assert_eq!(name(Some(Agent::Claude)), Some("Bash".to_string()));
    assert_eq!(name(None), Some("Bash".to_string()));
    assert_eq!(name(Some(Agent::Demo)), Some("Bash".to_string()));
    assert_eq!(name(Some(Agent::Gemini)), None);
    assert_eq!(name(Some(Agent::Codex)), None);
    assert!(meta(Some(Agent::Codex)).terminals);
    assert!(!meta(Some(Agent::Claude)).terminals);
    assert!(!meta(Some(Agent::Kimi)).terminals);
}

/// codex's terminals in `_meta`, as it really sent them, are read for
/// codex and for an agent warden does not know, into the tool call's
/// terminal (started, then its exit); another agent's `_meta` is not read
/// as codex's.
#[test]
fn codexs_terminal_meta_is_read_for_codex() {
    let updates: Vec<acp::SessionUpdate> = CODEX_TERMINAL
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            serde_json::from_value(line["params"]["update"].clone()).unwrap()
        })
        .collect();
    let id = "call_fake_3fee5efde6984315";
    let read = |agent: Option<Agent>| {
        let mut call = match convert::session_update(&updates[0], meta(agent)) {
            crate::model::SessionUpdate::ToolCall(call) => *call,
            other => panic!("{other:?}"),
        };
        let started = call.agent_terminals.clone();
        match convert::session_update(&updates[1], meta(agent)) {
            crate::model::SessionUpdate::ToolCallUpdate { fields, .. } => {
                call.apply_terminal_meta(&fields.terminal_meta);
            }
            other => panic!("{other:?}"),
        }
        (started, call.agent_terminals)
    };
    for agent in [Some(Agent::Codex), None] {
        let (started, ended) = read(agent);
        assert_eq!(started.len(), 1, "{agent:?}: {started:?}");
        assert_eq!(started[0].id, id);
        assert_eq!(started[0].exit, None);
        assert_eq!(ended.len(), 1, "{agent:?}: {ended:?}");
        assert_eq!(ended[0].exit.as_deref(), Some("exit status 0"));
    }
    for agent in [Agent::Claude, Agent::Gemini, Agent::Kimi] {
        let (started, ended) = read(Some(agent));
        assert!(started.is_empty() && ended.is_empty(), "{agent:?}");
    }
}

/// Who says what at `initialize` picks the quirks: gemini-cli's replay may
/// end after its answer to `session/load`; Claude Code's does not; an
/// agent warden does not know is treated like gemini.
#[test]
fn gemini_is_known_at_initialize_for_its_late_replay() {
    let names: Vec<(String, Option<Agent>)> = INITIALIZE
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            let name = line["result"]["agentInfo"]["name"].as_str().unwrap();
            (name.to_string(), from_info(name))
        })
        .collect();
    let late: Vec<&str> = names
        .iter()
        .filter(|(_, agent)| agent.is_some_and(Agent::replays_after_load))
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(late, ["gemini-cli"]);
    assert!(replays_after_load(None));
    assert!(replays_after_load(Some(Agent::Demo)));
    assert!(!replays_after_load(Some(Agent::Claude)));
}

/// The workspace files that make an agent run programs are every agent's,
/// the ones warden has always kept and said (before each agent's file
/// held its own).
#[test]
fn every_agents_workspace_config_is_kept() {
    let mut files: Vec<&str> = workspace_files().collect();
    files.sort_unstable();
    assert_eq!(
        files,
        [
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".codex/config.toml",
            ".gemini/settings.json",
            ".mcp.json",
            ".qwen/settings.json",
            "opencode.json",
            "opencode.jsonc",
        ]
    );
    let dirs: Vec<&str> = workspace_dirs().collect();
    assert_eq!(dirs, [".claude/hooks", ".claude/commands"]);
    assert_eq!(Agent::Kimi.workspace_config(), &WorkspaceConfig::NONE);
}

/// codex's bubblewrap failing inside warden's sandbox is said in codex's
/// words of it; other output is not taken for it.
#[test]
fn codexs_own_sandbox_failing_is_said() {
    let line = own_sandbox_failed("Output:\nbwrap: setting up uid map: Permission denied\n")
        .expect("told");
    assert!(line.contains("use_legacy_landlock"), "{line}");
    assert_eq!(own_sandbox_failed("ls: cannot open directory"), None);
}

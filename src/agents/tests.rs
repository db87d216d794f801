use std::path::{Path, PathBuf};

use super::*;

fn command(program: &str, args: &[&str]) -> AgentCommand {
    AgentCommand {
        name: "agent".into(),
        program: program.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Vec::new(),
        cwd: PathBuf::from("/work"),
    }
}

/// Confined, with a private temp dir.
fn confined() -> Confined<'static> {
    Confined {
        landlock: true,
        tmp: Some(Path::new("/tmp/warden-agent-1234")),
    }
}

#[test]
fn agents_are_known_by_the_name_their_command_gives_them() {
    let cases: &[(&str, &[&str], Option<Agent>)] = &[
        ("claude-agent-acp", &[], Some(Agent::Claude)),
        (
            "node",
            &[
                "/home/u/.cache/warden-rigs/claude/node_modules/@zed-industries/claude-agent-acp/dist/index.js",
            ],
            Some(Agent::Claude),
        ),
        (
            "npx",
            &["-y", "@zed-industries/claude-code-acp"],
            Some(Agent::Claude),
        ),
        ("codex-acp", &[], Some(Agent::Codex)),
        (
            "/root/.cache/warden-rigs/codex/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp",
            &[],
            Some(Agent::Codex),
        ),
        ("npx", &["@zed-industries/codex-acp"], Some(Agent::Codex)),
        // The program, not the folders that hold it.
        (
            "/home/codex/tools/claude-agent-acp",
            &[],
            Some(Agent::Claude),
        ),
        ("/home/claude/bin/opencode", &["acp"], Some(Agent::OpenCode)),
        ("gemini", &["--acp"], Some(Agent::Gemini)),
        ("warden", &["demo-agent"], Some(Agent::Demo)),
        (
            "npx",
            &["-y", "@zed-industries/claude-agent-acp@0.5.1"],
            Some(Agent::Claude),
        ),
        ("uvx", &["kimi-cli@1"], Some(Agent::Kimi)),
        ("python3", &["-m", "fast_agent"], Some(Agent::FastAgent)),
        // The rigs' command lines (`../shared/rigs/*/with-*.sh`).
        (
            "node",
            &[
                "/r/.cache/warden-rigs/qwen/node_modules/@qwen-code/qwen-code/cli-entry.js",
                "--acp",
            ],
            Some(Agent::Qwen),
        ),
        (
            "node",
            &[
                "/r/.cache/warden-rigs/gemini/node_modules/@google/gemini-cli/bundle/gemini.js",
                "--acp",
            ],
            Some(Agent::Gemini),
        ),
        (
            "/r/.cache/warden-rigs/opencode/node_modules/opencode-linux-x64/bin/opencode",
            &["acp"],
            Some(Agent::OpenCode),
        ),
        (
            "/r/.cache/warden-rigs/kimi/venv/bin/kimi",
            &["acp"],
            Some(Agent::Kimi),
        ),
        // A name that only holds an agent's is no agent (an attacker's
        // script named to get Claude's state), nor a folder above it.
        ("/x/foo-claude-bar", &[], None),
        ("node", &["/x/foo-claude-bar.js"], None),
        ("claude-evil", &[], None),
        ("node", &["/home/claude/evil/index.js"], None),
        ("bash", &["/x/codex-acp-wrapper.sh"], None),
        ("/x/geminis", &[], None),
        ("/x/my-gemini", &["--acp"], None),
        ("/x/warden", &["demo-agentx"], None),
        // An argument that is not the agent (a scenario file) never counts.
        (
            "/usr/bin/warden",
            &["demo-agent", "--scenario", "/x/codex-auth-required.toml"],
            Some(Agent::Demo),
        ),
        ("my-agent", &["--model", "claude-sonnet"], None),
    ];
    for (program, args, want) in cases {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        assert_eq!(
            known(program, &args, Path::new("/work")),
            *want,
            "{program} {args:?}"
        );
    }
}

#[test]
fn claude_code_gets_its_temp_dir_in_the_private_one() {
    let claude = command("claude-agent-acp", &[]);
    let launch = launch(&claude, confined());
    assert_eq!(
        launch,
        Launch {
            args: Vec::new(),
            env: vec![("CLAUDE_CODE_TMPDIR".into(), "/tmp/warden-agent-1234".into())],
        }
    );
    // Moved by the user: theirs stays (the sandbox makes it writable).
    let mut moved = command("claude-agent-acp", &[]);
    moved
        .env
        .push(("CLAUDE_CODE_TMPDIR".into(), "/var/tmp/c".into()));
    assert_eq!(super::launch(&moved, confined()), Launch::default());
    // Unconfined: nothing changes.
    let open = Confined {
        landlock: false,
        tmp: None,
    };
    assert_eq!(super::launch(&claude, open), Launch::default());
}

#[test]
fn codex_gets_its_landlock_sandbox_unless_its_command_line_decides() {
    let codex = command("codex-acp", &[]);
    let want = vec![
        "-c".to_string(),
        "features.use_legacy_landlock=true".to_string(),
    ];
    assert_eq!(launch(&codex, confined()).args, want);
    assert!(launch(&codex, confined()).env.is_empty());
    for theirs in [
        &["-c", "features.use_legacy_landlock=false"][..],
        &["--config=features.use_legacy_landlock=true"][..],
    ] {
        let decided = command("codex-acp", theirs);
        assert_eq!(
            launch(&decided, confined()),
            Launch::default(),
            "{theirs:?}"
        );
        assert_eq!(codex::start_note(&decided), None);
    }
    let open = Confined {
        landlock: false,
        tmp: None,
    };
    assert_eq!(launch(&codex, open), Launch::default());
    let note = codex::start_note(&codex).expect("said at start");
    assert!(note.contains("features.use_legacy_landlock=true"), "{note}");
    // Other agents get nothing.
    assert_eq!(
        launch(&command("gemini", &["--acp"]), confined()),
        Launch::default()
    );
}

#[test]
fn start_notes_need_a_sandbox_that_confines() {
    let codex = command("codex-acp", &[]);
    let off = Profile {
        mode: SandboxMode::Off,
        ..Profile::default()
    };
    assert!(start_notes(&codex, Some(&off)).is_empty());
    assert!(start_notes(&codex, None).is_empty());
    let on = Profile::default();
    let landlock = matches!(crate::sandbox::kernel_support(), Support::Landlock(_));
    assert_eq!(start_notes(&codex, Some(&on)).len(), usize::from(landlock));
    assert!(start_notes(&command("claude-agent-acp", &[]), Some(&on)).is_empty());
}

#[test]
fn claudes_settings_file_is_created_on_a_first_run_and_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let claude = command("claude-agent-acp", &[]);
    let files = state_files(&claude, home);
    assert_eq!(files, vec![home.join(".claude.json")]);
    assert!(state_files(&command("codex-acp", &[]), home).is_empty());
    let profile = Profile {
        writable: files.clone(),
        ..Profile::default()
    };
    // Off: warden leaves the home directory alone.
    prepare(
        &claude,
        &Profile {
            mode: SandboxMode::Off,
            ..profile.clone()
        },
    );
    assert!(!home.join(".claude.json").exists());
    // Another agent: nothing.
    prepare(&command("codex-acp", &[]), &profile);
    assert!(!home.join(".claude.json").exists());
    prepare(&claude, &profile);
    assert_eq!(
        std::fs::read_to_string(home.join(".claude.json")).unwrap(),
        "{}\n"
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(home.join(".claude.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // The user's own file is never replaced, nor a symlink followed.
    std::fs::write(home.join(".claude.json"), "{\"theirs\":1}").unwrap();
    prepare(&claude, &profile);
    assert_eq!(
        std::fs::read_to_string(home.join(".claude.json")).unwrap(),
        "{\"theirs\":1}"
    );
    std::fs::remove_file(home.join(".claude.json")).unwrap();
    std::os::unix::fs::symlink(home.join("elsewhere"), home.join(".claude.json")).unwrap();
    prepare(&claude, &profile);
    assert!(!home.join("elsewhere").exists());
}

#[test]
fn only_files_the_profile_lets_the_agent_write_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let claude = command("claude-agent-acp", &[]);
    prepare(&claude, &Profile::default());
    assert!(!dir.path().join(".claude.json").exists());
    // A writable path of another name is not a state file.
    let other = dir.path().join("notes.json");
    prepare(
        &claude,
        &Profile {
            writable: vec![other.clone()],
            ..Profile::default()
        },
    );
    assert!(!other.exists());
}

/// `initialize` answers of the real agents (`../shared/agent-transcripts`).
const INITIALIZE: &str = include_str!("fixtures/initialize.jsonl");

#[test]
fn agents_are_known_by_the_name_they_give_at_initialize() {
    let want = [
        Agent::Claude,
        Agent::Codex,
        Agent::FastAgent,
        Agent::Gemini,
        Agent::Kimi,
        Agent::OpenCode,
        Agent::Qwen,
    ];
    let lines: Vec<serde_json::Value> = INITIALIZE
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), want.len());
    for (line, want) in lines.iter().zip(want) {
        let name = line["result"]["agentInfo"]["name"].as_str().unwrap();
        assert_eq!(from_info(name), Some(want), "{name}");
        // What it says wins over the command line, which is all that is
        // known before.
        assert_eq!(identify(None, Some(name)), Some(want));
    }
    assert_eq!(from_info("my-claude-agent"), None);
    assert_eq!(
        identify(Some(Agent::Codex), Some("mine")),
        Some(Agent::Codex)
    );
    assert_eq!(identify(Some(Agent::Codex), None), Some(Agent::Codex));
}

#[test]
fn claudes_tool_name_is_read_from_its_meta() {
    // claude-agent-acp-0.23.1-mockllm-all.jsonl: a Bash call's `tool_call`.
    let update: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/claude-tool-call.json")).unwrap();
    let meta: agent_client_protocol::v1::schema::Meta =
        serde_json::from_value(update["_meta"].clone()).unwrap();
    assert_eq!(claude::tool_name(Some(&meta)), Some("Bash".to_string()));
    assert_eq!(claude::tool_name(None), None);
}

use super::*;

#[test]
fn reads_agents_and_default() {
    let text = r#"
default_agent = "claude"

[agents.claude]
command = "npx"
args = ["@zed-industries/claude-agent-acp"]
env = { ANTHROPIC_LOG = "debug" }
"#;
    let s = parse(text, Path::new("c.toml")).expect("valid");
    assert_eq!(s.default_agent.as_deref(), Some("claude"));
    let claude = &s.agents["claude"];
    assert_eq!(claude.command, "npx");
    assert_eq!(claude.args, vec!["@zed-industries/claude-agent-acp"]);
    assert_eq!(claude.env["ANTHROPIC_LOG"], "debug");
}

#[test]
fn malformed_file_reports_line_and_column() {
    let text = "default_agent = \"x\"\n[agents.a]\ncommand = 3\n";
    let err = parse(text, Path::new("c.toml")).expect_err("wrong type");
    let SettingsError::Parse { line, column, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*line, *column), (3, 11));
    assert!(err.to_string().starts_with("c.toml:3:11: "), "{err}");
}

#[test]
fn example_file_loads() {
    let text = include_str!("../../config.example.toml");
    let s = parse(text, Path::new("config.example.toml")).expect("example parses");
    assert_eq!(s.default_agent.as_deref(), Some(DEMO_AGENT));
    for name in [
        "demo",
        "claude-code",
        "codex",
        "gemini",
        "fast-agent",
        "qwen",
        "kimi",
        "opencode",
        "eliza",
    ] {
        assert!(s.agents.contains_key(name), "{name} is in the example");
    }
    assert_eq!(s.agents["gemini"].args, vec!["--acp"]);
    assert_eq!(s.agents["qwen"].asking_mode.as_deref(), Some("default"));
    assert_eq!(s.agents["kimi"].args, vec!["acp"]);
}

#[test]
fn reads_policy_settings() {
    let text = r#"
[agents.claude]
command = "npx"
bypass_permissions = true
default_mode = "auto"
agent_plan_mode = "plan"

[[rules]]
decision = "deny"
kind = "read"
path = "~/.ssh/**"

[notifications]
bell = false
"#;
    let s = parse(text, Path::new("c.toml")).expect("valid");
    let claude = &s.agents["claude"];
    assert!(claude.bypass_permissions);
    assert_eq!(claude.default_mode, Some(Mode::Auto));
    assert_eq!(claude.agent_plan_mode.as_deref(), Some("plan"));
    assert_eq!(s.rules.len(), 1);
    assert_eq!(s.rules[0].path.as_deref(), Some("~/.ssh/**"));
    assert!(!s.notifications.bell && s.notifications.desktop);
}

#[test]
fn scroll_regions_are_on_unless_the_screen_block_turns_them_off() {
    let default = parse("", Path::new("c.toml")).expect("valid");
    assert!(default.screen.scroll_regions);
    let off = parse("[screen]\nscroll_regions = false\n", Path::new("c.toml")).expect("valid");
    assert!(!off.screen.scroll_regions);
    assert_eq!(
        keys::unknown_keys("[screen]\nscroll_region = false\nscroll_regions = true\n"),
        vec![("screen.scroll_region".to_string(), 2)]
    );
    let err = parse("[screen]\nscroll_regions = \"no\"\n", Path::new("c.toml"))
        .expect_err("not a boolean");
    assert!(err.to_string().contains("2:"), "{err}");
}

#[test]
fn unknown_mode_is_an_error_with_position() {
    let text = "[agents.a]\ncommand = \"x\"\ndefault_mode = \"yolo\"\n";
    let err = parse(text, Path::new("c.toml")).expect_err("bad mode");
    let SettingsError::Parse { line, message, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, 3);
    assert!(message.contains("yolo"), "{message}");
}

#[test]
fn an_unknown_key_is_an_error_with_its_line_and_column() {
    let text = "defualt_agent = \"claude\"\n";
    let err = parse(text, Path::new("c.toml")).expect_err("a misspelt key");
    assert_eq!(
        err.to_string(),
        "c.toml:1:1: unknown key `defualt_agent` (did you mean `default_agent`?)"
    );
    let text = "[[rules]]\ndecision = \"deny\"\npath = \"~/.ssh/**\"\n  why = \"keys\"\n";
    let SettingsError::Parse {
        line,
        column,
        message,
        ..
    } = parse(text, Path::new("c.toml")).expect_err("a deny rule with an unknown key")
    else {
        panic!()
    };
    assert_eq!((line, column), (4, 3));
    assert!(
        message.starts_with("unknown key `rules.why` (expected one of decision"),
        "{message}"
    );
    assert_eq!(unknown_keys(text), vec![("rules.why".to_string(), 4)]);
    let text = "[agents.c]\ncomand = \"claude\"\n";
    let err = parse(text, Path::new("c.toml")).expect_err("a misspelt agent key");
    assert!(
        err.to_string()
            .contains("2:1: unknown key `agents.c.comand` (did you mean `command`?)"),
        "{err}"
    );

    let text =
        "[[rules]]\ndecision = \"deny\"\n\n[[rules]]\ndecision = \"allow\"\n  comand = \"ls *\"\n";
    let err = parse(text, Path::new("c.toml")).expect_err("an allow rule with a typo");
    let SettingsError::Parse {
        line,
        column,
        message,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*line, *column), (6, 3));
    assert!(
            message.starts_with("unknown key `comand` in an allow rule, expected one of decision, agent, kind, tool, command, path, host, note"),
            "{message}"
        );
}

#[test]
fn template_is_the_example_commented_out() {
    let template = template();
    assert_eq!(parse(template, Path::new("t")), Ok(Settings::default()));
    assert!(template.starts_with("# warden settings. warden wrote this file"));
    let example = include_str!("../../config.example.toml");
    for line in example.lines() {
        if !line.is_empty() && !line.starts_with('#') {
            assert!(template.contains(&format!("\n# {line}\n")), "{line}");
        }
    }
}

/// The commented `For example:` block that follows `marker`, uncommented.
fn example_block(example: &str, marker: &str) -> String {
    let start = example.find(marker).expect("marker");
    let block = &example[start..];
    let marker = "# For example:\n";
    let block = &block[block.find(marker).expect("example") + marker.len()..];
    block
        .lines()
        .take_while(|line| line.starts_with('#'))
        .map(|line| line.trim_start_matches('#').trim_start())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn example_documents_every_key_and_its_examples_load() {
    let example = include_str!("../../config.example.toml");
    // Every key the schema knows (the tables themselves aside).
    let keys = keys::RULE_KEYS
        .iter()
        .chain(&keys::AGENT_KEYS)
        .chain(&keys::NOTIFICATION_KEYS)
        .chain(&keys::SANDBOX_KEYS)
        .chain(&["default_agent", "roots"]);
    for key in keys {
        let documented = example.lines().any(|line| {
            let line = line.trim_start_matches('#').trim_start();
            line.starts_with(&format!("{key} ")) || line.starts_with(&format!("{key}\t"))
        });
        assert!(documented, "{key} is documented");
    }

    let agent =
        parse(&example_block(example, "[agents.NAME]"), Path::new("e")).expect("agent example");
    let claude = &agent.agents["my-claude"];
    assert_eq!(claude.env["ANTHROPIC_LOG"], "warn");
    assert_eq!(claude.auth_method.as_deref(), Some("claude-login"));
    assert_eq!(
        (claude.default_mode, claude.agent_plan_mode.as_deref()),
        (Some(Mode::Default), None),
        "the example never opts an agent into its own plan mode"
    );

    let mcp = parse(
        &example_block(example, "# MCP servers passed"),
        Path::new("e"),
    )
    .expect("mcp examples");
    let servers: Vec<String> = mcp
        .mcp_servers
        .iter()
        .chain(&agent.agents["my-claude"].mcp_servers)
        .map(|(name, s)| format!("{:?}", s.to_server(name).expect("valid server")))
        .collect();
    assert_eq!(servers.len(), 3);
    assert!(
        servers[0].contains("Http") && servers[0].contains("Bearer TOKEN"),
        "{servers:?}"
    );
    assert!(
        servers[1].contains("Stdio") && servers[1].contains("LOG_LEVEL"),
        "{servers:?}"
    );
    assert!(servers[2].contains("Sse"), "{servers:?}");

    let rules =
        parse(&example_block(example, "# Rules decide"), Path::new("e")).expect("rule examples");
    let described: Vec<String> = rules.rules.iter().map(Rule::describe).collect();
    assert_eq!(
        described,
        [
            "ask rule kind=read path=\"~/.ssh/**\": keys stay private",
            "ask rule path=\"**/.env\": secrets",
            "allow rule kind=execute command=\"cargo test *\"",
            "allow rule host=\"*.github.com\"",
        ]
    );
}

#[test]
fn an_mcp_server_needs_a_command_or_a_url_not_both() {
    let text = "[mcp_servers.both]\ncommand = \"x\"\nurl = \"https://x\"\n\
                    [mcp_servers.none]\nargs = [\"a\"]\n\
                    [mcp_servers.sse_cmd]\ntype = \"sse\"\ncommand = \"x\"\n";
    let s = parse(text, Path::new("c.toml")).expect("valid toml");
    for (name, server) in &s.mcp_servers {
        let err = server.to_server(name).expect_err("invalid");
        assert!(
            err.contains(name.as_str()) && err.contains("`command`"),
            "{err}"
        );
    }
    assert_eq!(s.mcp_servers.len(), 3);
}

#[test]
fn reads_the_sandbox_table_and_an_agents_sandbox_keys() {
    let text = r#"
[sandbox]
mode = "read-only"
when_unavailable = "run-unconfined"
writable = ["~/.gradle"]
hidden = ["~/.config/tokens"]

[agents.a]
command = "a"
sandbox.mode = "off"
sandbox.writable = ["~/.a"]

[agents.b]
command = "b"
"#;
    let s = parse(text, Path::new("c.toml")).expect("valid");
    assert_eq!(s.sandbox.mode, SandboxMode::ReadOnly);
    assert_eq!(s.sandbox.when_unavailable, WhenUnavailable::RunUnconfined);
    assert_eq!(s.sandbox.writable, ["~/.gradle"]);
    assert_eq!(s.sandbox.hidden, ["~/.config/tokens"]);
    assert_eq!(s.agents["a"].sandbox.mode, Some(SandboxMode::Off));
    assert_eq!(s.agents["a"].sandbox.writable, ["~/.a"]);
    assert_eq!(s.agents["b"].sandbox, AgentSandbox::default());
    assert_eq!(
        parse("", Path::new("c.toml")).expect("valid").sandbox.mode,
        SandboxMode::WorkspaceWrite,
        "on by default"
    );
    let err =
        parse("[sandbox]\nmode = \"none\"\n", Path::new("c.toml")).expect_err("an unknown mode");
    assert!(err.to_string().contains("2:"), "{err}");
    assert_eq!(
        keys::unknown_keys(
            "[sandbox]\nmodes = \"off\"\n[agents.a]\ncommand = \"a\"\nsandbox.writeable = []\n"
        ),
        vec![
            ("sandbox.modes".to_string(), 2),
            ("agents.a.sandbox.writeable".to_string(), 5)
        ]
    );
}

#[test]
fn env_pass_is_read_from_sandbox_and_agent_blocks_and_a_bad_pattern_is_refused() {
    let text = "[sandbox]\nenv_pass = [\"FOO\", \"BAR_*\"]\n\n[agents.a]\ncommand = \"a\"\nenv_pass = [\"AWS_PROFILE\"]\n";
    let s = parse(text, Path::new("c.toml")).expect("valid");
    assert_eq!(s.sandbox.env_pass, ["FOO", "BAR_*"]);
    assert_eq!(s.agents["a"].env_pass, ["AWS_PROFILE"]);
    assert_eq!(keys::unknown_keys(text), Vec::new());
    for bad in ["\"*\"", "\"A-B\"", "\"*_KEY\"", "\"\""] {
        let text = format!("[agents.a]\ncommand = \"a\"\nenv_pass = [\"OK\", {bad}]\n");
        let err = parse(&text, Path::new("c.toml")).expect_err(bad);
        assert!(
            err.to_string().contains("c.toml:3:") && err.to_string().contains("PREFIX_*"),
            "{err}"
        );
    }
    assert_eq!(
        keys::unknown_keys("[sandbox]\nenv_passs = []\n"),
        vec![("sandbox.env_passs".to_string(), 2)]
    );
}

#[test]
fn missing_file_is_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(load(&dir.path().join("none.toml")), Ok(None));
}

#[test]
fn a_host_rule_with_another_condition_is_refused_with_its_line() {
    let text = "[[rules]]\ndecision = \"deny\"\ncommand = \"rm *\"\n\n[[rules]]\ndecision = \"allow\"\nhost = \"*.github.com\"\ncommand = \"curl *\"\n";
    let err = parse(text, Path::new("c.toml")).expect_err("host and command in one rule");
    let SettingsError::Parse { line, message, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, 5);
    assert!(message.contains("decides connections only"), "{message}");
    let ok = parse(
        "[[rules]]\ndecision = \"allow\"\nagent = \"claude\"\nhost = \"*.github.com\"\n",
        Path::new("c.toml"),
    )
    .expect("a host rule");
    assert_eq!(ok.rules[0].host.as_deref(), Some("*.github.com"));
}

/// Issue 35: `network` and `allow_hosts` in `[sandbox]` and an agent's
/// block; a bad mode or host pattern is an error at its line.
#[test]
fn network_and_allow_hosts_are_read_from_sandbox_and_agent_blocks() {
    use crate::net::NetworkMode;
    let text = "[sandbox]\nnetwork = \"closed\"\nallow_hosts = [\"*.github.com\", \"a.test:8080\"]\n\n\
                [agents.a]\ncommand = \"a\"\nsandbox.network = \"open\"\nsandbox.allow_hosts = [\"b.test\"]\n";
    let s = parse(text, Path::new("c.toml")).expect("valid");
    assert_eq!(s.sandbox.network, NetworkMode::Closed);
    assert_eq!(s.sandbox.allow_hosts, ["*.github.com", "a.test:8080"]);
    assert_eq!(s.agents["a"].sandbox.network, Some(NetworkMode::Open));
    assert_eq!(s.agents["a"].sandbox.allow_hosts, ["b.test"]);
    assert_eq!(keys::unknown_keys(text), Vec::new());
    let s = parse("[sandbox]\n", Path::new("c.toml")).expect("valid");
    assert_eq!(s.sandbox.network, NetworkMode::Gated);
    assert!(s.sandbox.allow_hosts.is_empty());
    for bad in [
        "[sandbox]\nnetwork = \"half\"\n",
        "[sandbox]\nallow_hosts = [\"https://a.test\"]\n",
        "[sandbox]\nallow_hosts = [\"*\"]\n",
    ] {
        let err = parse(bad, Path::new("c.toml")).expect_err(bad);
        assert!(err.to_string().contains("c.toml:2:"), "{err}");
    }
}

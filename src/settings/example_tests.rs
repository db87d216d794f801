//! `config.example.toml` has a working block for every agent warden was
//! checked against (their recorded command lines in the agent transcripts).

use std::path::Path;

use super::parse;

#[test]
fn the_example_has_a_block_for_each_real_agent() {
    let text = include_str!("../../config.example.toml");
    let s = parse(text, Path::new("config.example.toml")).expect("example parses");
    for (name, command, args) in [
        (
            "claude-code",
            "npx",
            &["-y", "@zed-industries/claude-agent-acp"][..],
        ),
        // Its own sandbox's setting is warden's to add (`agents::codex`).
        ("codex", "codex-acp", &[][..]),
        ("gemini", "gemini", &["--acp"][..]),
        ("opencode", "opencode", &["acp"][..]),
        ("qwen", "qwen", &["--acp"][..]),
        ("kimi", "kimi", &["acp"][..]),
        ("fast-agent", "fast-agent", &["acp", "--model", "haiku"][..]),
    ] {
        let agent = s
            .agents
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(agent.command, command, "{name}");
        assert_eq!(agent.args, args, "{name}");
        assert!(agent.auth_method.is_none(), "{name}: sign-in is the user's");
    }
}

/// Claude Code's ACP adapter is `@zed-industries/claude-agent-acp`: the
/// README, the guide, the example and `--help` launch it by that name,
/// and none names the old package (`claude-code-acp`) as one to run.
#[test]
fn the_docs_launch_claude_code_through_claude_agent_acp() {
    let files = [
        ("README.md", include_str!("../../README.md")),
        ("docs/GUIDE.md", include_str!("../../docs/GUIDE.md")),
        (
            "config.example.toml",
            include_str!("../../config.example.toml"),
        ),
        ("src/main.rs (--help)", include_str!("../main.rs")),
    ];
    for (name, text) in files {
        assert!(
            !text.contains("@zed-industries/claude-code-acp"),
            "{name} names the old adapter"
        );
        assert!(
            text.contains("npx -y @zed-industries/claude-agent-acp")
                || text.contains(r#"args = ["-y", "@zed-industries/claude-agent-acp"]"#),
            "{name} does not say how to run claude-agent-acp"
        );
    }
    // How to install the other two, in a line each.
    for (name, text) in &files[..2] {
        for line in [
            "npm install -g @zed-industries/codex-acp   # gives codex-acp",
            "npm install -g @google/gemini-cli          # gives gemini, run as gemini --acp",
        ] {
            assert!(text.contains(line), "{name} lacks `{line}`");
        }
    }
}

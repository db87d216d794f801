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
            "claude-agent",
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

//! Making a profile: where an agent's files are.

use std::path::PathBuf;

use super::*;

/// A variable that moves an agent's files out of the home directory
/// (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`, `QWEN_HOME`, `GEMINI_CLI_HOME`,
/// `XDG_CONFIG_HOME`) moves what warden keeps of them along: the config
/// that runs programs is guarded or read-only where the agent reads it,
/// its state is writable there, and its sign-in is hidden there from
/// every other agent. The home's places stay kept too.
#[test]
fn a_variable_that_moves_an_agents_files_moves_their_guard() {
    let of = |command: &[&'static str], env: &[(&str, &str)]| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: command.to_vec(),
            home: Some(PathBuf::from("/h")),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..ProfileInput::default()
        })
    };
    let has = |paths: &[PathBuf], path: &str| paths.contains(&PathBuf::from(path));
    let codex = of(&["codex-acp"], &[("CODEX_HOME", "/x/codex")]);
    for path in [
        "/x/codex/config.toml",
        "/x/codex/hooks.json",
        "/x/codex/rules",
        "/x/codex/skills",
        "/h/.codex/config.toml",
    ] {
        assert!(has(&codex.guarded, path), "{path}: {:?}", codex.guarded);
    }
    assert!(has(&codex.writable, "/x/codex"), "{:?}", codex.writable);
    let claude = of(&["claude-agent-acp"], &[("CLAUDE_CONFIG_DIR", "/c")]);
    for path in [
        "/c/settings.json",
        "/c/hooks",
        "/c/skills",
        "/h/.claude/hooks",
    ] {
        assert!(
            has(&claude.read_only, path),
            "{path}: {:?}",
            claude.read_only
        );
    }
    assert!(
        has(&claude.guarded_keys, "/c/.claude.json"),
        "{:?}",
        claude.guarded_keys
    );
    assert!(has(&claude.writable, "/c"), "{:?}", claude.writable);
    let qwen = of(&["qwen", "--acp"], &[("QWEN_HOME", "/q")]);
    assert!(has(&qwen.guarded, "/q/settings.json"), "{:?}", qwen.guarded);
    assert!(has(&qwen.guarded, "/q/hooks"), "{:?}", qwen.guarded);
    assert!(has(&qwen.writable, "/q"), "{:?}", qwen.writable);
    let gemini = of(&["gemini", "--acp"], &[("GEMINI_CLI_HOME", "/g")]);
    assert!(
        has(&gemini.guarded, "/g/.gemini/settings.json"),
        "{:?}",
        gemini.guarded
    );
    let opencode = of(&["opencode", "acp"], &[("XDG_CONFIG_HOME", "/cfg")]);
    assert!(
        has(&opencode.guarded, "/cfg/opencode/plugin"),
        "{:?}",
        opencode.guarded
    );
    assert!(
        has(&opencode.writable, "/cfg/opencode"),
        "{:?}",
        opencode.writable
    );
    let kimi = of(&["kimi", "acp"], &[("KIMI_SHARE_DIR", "/k")]);
    assert!(has(&kimi.guarded, "/k/bin"), "{:?}", kimi.guarded);
    // Another agent's sign-in, moved, is hidden from this one.
    let other = of(&["claude-agent-acp"], &[("CODEX_HOME", "/x/codex")]);
    assert!(
        has(&other.hidden, "/x/codex/auth.json"),
        "{:?}",
        other.hidden
    );
    assert!(
        has(&other.hidden, "/h/.codex/auth.json"),
        "{:?}",
        other.hidden
    );
    // A relative value moves nothing (the agent's cwd is not warden's).
    let relative = of(&["codex-acp"], &[("CODEX_HOME", "codex")]);
    assert!(
        relative.guarded.iter().all(|p| p.starts_with("/h")),
        "{:?}",
        relative.guarded
    );
    // No path ends in `/` (a file must not look like a directory).
    for path in claude.guarded_keys.iter().chain(&codex.writable) {
        assert!(!path.to_string_lossy().ends_with('/'), "{path:?}");
    }
}

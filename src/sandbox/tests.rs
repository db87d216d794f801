//! The rules a settings block gives: a table of expected grants over a
//! fake file system.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::explain::reported_line;
use super::*;

/// A file system as a table: directory -> entries (a trailing `@` marks a symlink).
struct Table(BTreeMap<&'static str, Vec<&'static str>>);

impl Lister for Table {
    fn entries(&self, dir: &Path) -> Vec<Entry> {
        self.0
            .get(dir.to_str().unwrap_or_default())
            .map(|names| {
                names
                    .iter()
                    .map(|name| Entry {
                        path: dir.join(name.trim_end_matches('@')),
                        symlink: name.ends_with('@'),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn fs() -> Table {
    Table(BTreeMap::from([
        ("/", vec!["bin@", "dev", "etc", "home", "tmp", "usr"]),
        ("/home", vec!["u"]),
        (
            "/home/u",
            vec![
                ".bashrc",
                ".cache",
                ".config",
                ".docker",
                ".m2",
                ".npm",
                ".npmrc",
                ".ssh",
                ".claude",
                "link-to-root@",
                "src",
            ],
        ),
        ("/home/u/.claude", vec!["projects", "settings.json"]),
        ("/home/u/.config", vec!["gcloud", "git", "warden"]),
        ("/home/u/.docker", vec!["config.json", "contexts"]),
        ("/home/u/.m2", vec!["repository", "settings.xml"]),
    ]))
}

fn profile(mode: SandboxMode, writable: &[&str], hidden: &[&str]) -> Profile {
    Profile::new(&ProfileInput {
        agent: "claude",
        command_line: vec!["npx", "@zed-industries/claude-agent-acp"],
        mode,
        when_unavailable: WhenUnavailable::Refuse,
        workspace: vec![PathBuf::from("/home/u/src")],
        writable: writable.iter().map(ToString::to_string).collect(),
        hidden: hidden.iter().map(ToString::to_string).collect(),
        warden_files: vec![PathBuf::from("/home/u/.config/warden")],
        home: Some(PathBuf::from("/home/u")),
        env: Vec::new(),
        env_pass: Vec::new(),
        cache: Some(PathBuf::from("/home/u/.local/state/warden/agents/claude")),
    })
}

fn table(grants: &[Grant]) -> Vec<String> {
    grants
        .iter()
        .map(|g| format!("{:?} {}", g.access, g.path.display()))
        .collect()
}

#[test]
fn a_settings_block_gives_these_rules() {
    let profile = profile(
        SandboxMode::WorkspaceWrite,
        &["~/notes"],
        &["~/.config/git"],
    );
    let got = table(&grants(&profile, Some(Path::new("/tmp/warden-x")), &fs()));
    let want = [
        // Reads: every entry of `/` but `/dev`; the directories that hold a
        // hidden path only listable, descended into; no symlink rules.
        "List /",
        "Read /etc",
        "List /home",
        "List /home/u",
        "Read /home/u/.bashrc",
        "Read /home/u/.cache",
        "Read /home/u/.claude",
        "List /home/u/.config",
        "List /home/u/.m2",
        "Read /home/u/.m2/repository",
        "Read /home/u/.npm",
        "Read /home/u/src",
        "Read /tmp",
        "Read /usr",
        "Read /dev/random",
        "Read /dev/urandom",
        // Writes: /dev's few, the workspace, the agent's state, the
        // configured ones, the private temporary directory.
        "Write /dev/null",
        "Write /dev/zero",
        "Write /dev/full",
        "Write /dev/tty",
        "Write /dev/ptmx",
        "Write /dev/shm",
        "Write /home/u/src",
        // The agent's state, but its config that runs programs: the
        // directory listable, its other entries writable one by one.
        "List /home/u/.claude",
        "Write /home/u/.claude/projects",
        "Write /home/u/.config/claude",
        // Its own cache; `~/.cache` and `~/.npm` only readable (above).
        "Write /home/u/.local/state/warden/agents/claude",
        "Write /home/u/notes",
        "Write /tmp/warden-x",
    ];
    assert_eq!(got, want);
}

#[test]
fn shared_caches_and_credential_files_are_out_of_reach() {
    let profile = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    let got = grants(&profile, None, &fs());
    let under = |path: &str, access: Access| {
        got.iter()
            .any(|g| Path::new(path).starts_with(&g.path) && g.access >= access)
    };
    for shared in ["/home/u/.cache/x", "/home/u/.npm/_npx/x"] {
        assert!(under(shared, Access::Read), "{shared} readable");
        assert!(!under(shared, Access::Write), "{shared} not writable");
    }
    for secret in [
        "/home/u/.npmrc",
        "/home/u/.docker/contexts/x",
        "/home/u/.config/gcloud/x",
    ] {
        assert!(!under(secret, Access::Read), "{secret} hidden");
    }
    assert!(under("/home/u/.claude/settings.json", Access::Read));
    assert!(!under("/home/u/.claude/settings.json", Access::Write));
    assert!(under("/home/u/.claude/projects/x.jsonl", Access::Write));
    for rel in [
        ".npmrc",
        ".pypirc",
        ".config/git/credentials",
        ".pgpass",
        ".vault-token",
        ".terraform.d/credentials.tfrc.json",
        ".config/glab-cli",
        ".config/rclone",
        ".config/sops/age",
        ".bash_history",
        ".zsh_history",
        ".Xauthority",
        ".gem/credentials",
        ".m2/settings.xml",
        ".gradle/gradle.properties",
        "snap/firefox",
        ".var/app/org.mozilla.firefox",
        ".config/Slack",
        ".docker",
    ] {
        assert!(
            profile.hidden.contains(&Path::new("/home/u").join(rel)),
            "{rel} hidden"
        );
    }
}

#[test]
fn an_agent_sees_its_own_sign_in_and_no_other_agents() {
    let of = |command: &[&'static str]| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: command.to_vec(),
            home: Some(PathBuf::from("/h")),
            ..ProfileInput::default()
        })
    };
    let hidden = |p: &Profile, rel: &str| p.hidden.contains(&Path::new("/h").join(rel));
    let claude = of(&["node", "/x/claude-agent-acp/dist/index.js"]);
    assert!(!hidden(&claude, ".claude/.credentials.json"));
    assert!(!hidden(&claude, ".claude.json"));
    assert!(hidden(&claude, ".codex/auth.json"));
    assert!(hidden(&claude, ".gemini/oauth_creds.json"));
    assert!(hidden(&claude, ".qwen/oauth_creds.json"));
    assert!(hidden(&claude, ".local/share/opencode/auth.json"));
    assert!(hidden(&claude, ".kimi/credentials"));
    let codex = of(&["codex-acp"]);
    assert!(!hidden(&codex, ".codex/auth.json"));
    assert!(hidden(&codex, ".claude/.credentials.json"));
    assert!(hidden(&codex, ".claude.json"));
    let unknown = of(&["my-agent"]);
    for agent in crate::agents::Agent::ALL {
        for file in agent.sandbox().auth {
            assert!(hidden(&unknown, file), "{file}");
        }
    }
    // Each agent's config that runs programs is read-only to it (Claude:
    // the kernel), or put back when it exits (the others).
    assert!(
        codex
            .guarded
            .contains(&PathBuf::from("/h/.codex/config.toml"))
    );
    assert!(codex.read_only.is_empty());
    assert!(
        claude
            .read_only
            .contains(&PathBuf::from("/h/.claude/settings.json"))
    );
    let gemini = of(&["gemini", "--acp"]);
    assert!(
        gemini
            .guarded
            .contains(&PathBuf::from("/h/.gemini/settings.json"))
    );
    assert!(claude.guarded.is_empty());
}

fn vars(list: &[(&str, &str)]) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    list.iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

fn names(env: &[(std::ffi::OsString, std::ffi::OsString)]) -> Vec<String> {
    env.iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_environment_is_an_allow_list_per_agent() {
    let warden = vars(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/h"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("TERM", "xterm"),
        ("HTTPS_PROXY", "http://proxy:3128"),
        ("XDG_CONFIG_HOME", "/h/.config"),
        ("TMUX", "/tmp/tmux-0/default,1,0"),
        ("TMUX_PANE", "%1"),
        ("STY", "1.pts"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("GPG_AGENT_INFO", "/run/user/0/gnupg/S.gpg-agent"),
        ("DISPLAY", ":0"),
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_RUNTIME_DIR", "/run/user/0"),
        ("LD_PRELOAD", "/x.so"),
        ("LD_LIBRARY_PATH", "/x"),
        ("LD_AUDIT", "/x.so"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("GITHUB_TOKEN", "ghp"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("ANTHROPIC_BASE_URL", "http://model"),
        ("CLAUDE_CODE_USE_BEDROCK", "0"),
        ("OPENAI_API_KEY", "sk-openai"),
        ("GEMINI_API_KEY", "gem"),
        ("FOO", "1"),
        ("BAR_ONE", "1"),
    ]);
    let of = |command: &[&'static str], env_pass: &[&str]| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: command.to_vec(),
            home: Some(PathBuf::from("/h")),
            env_pass: env_pass.iter().map(ToString::to_string).collect(),
            cache: Some(PathBuf::from("/s/agents/x")),
            ..ProfileInput::default()
        })
    };
    let claude = names(&env::environment(
        &of(&["node", "claude-agent-acp"], &[]),
        warden.clone(),
    ));
    assert_eq!(
        claude,
        [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "TERM",
            "HTTPS_PROXY",
            "XDG_CONFIG_HOME",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_USE_BEDROCK",
            "XDG_CACHE_HOME",
            "npm_config_cache",
        ]
    );
    let codex = names(&env::environment(
        &of(&["codex-acp"], &["FOO", "BAR_*"]),
        warden.clone(),
    ));
    assert!(codex.contains(&"OPENAI_API_KEY".to_string()), "{codex:?}");
    assert!(codex.contains(&"FOO".to_string()) && codex.contains(&"BAR_ONE".to_string()));
    for never in [
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GITHUB_TOKEN",
        "TMUX",
    ] {
        assert!(!codex.contains(&never.to_string()), "{never}: {codex:?}");
    }
    // A pattern never lets the loader's or the session's sockets through;
    // an exact name does (the user asked for it by name).
    let wide = of(&["my-agent"], &["*", "SSH_AUTH_SOCK"]);
    let passed = names(&env::environment(&wide, warden.clone()));
    assert!(passed.contains(&"GITHUB_TOKEN".to_string()));
    assert!(passed.contains(&"SSH_AUTH_SOCK".to_string()));
    for never in [
        "LD_PRELOAD",
        "LD_AUDIT",
        "TMUX",
        "DISPLAY",
        "XDG_RUNTIME_DIR",
    ] {
        assert!(!passed.contains(&never.to_string()), "{never}");
    }
    // The caches are the agent's own, whatever warden's were.
    let cached = env::environment(
        &of(&["codex-acp"], &[]),
        vars(&[("XDG_CACHE_HOME", "/h/.cache")]),
    );
    assert_eq!(
        cached,
        vars(&[
            ("XDG_CACHE_HOME", "/s/agents/x/cache"),
            ("npm_config_cache", "/s/agents/x/npm")
        ])
    );
    // Unconfined, it keeps warden's: it may write them anyway.
    let off = Profile {
        mode: SandboxMode::Off,
        ..of(&["codex-acp"], &[])
    };
    assert_eq!(
        env::environment(&off, vars(&[("XDG_CACHE_HOME", "/h/.cache")])),
        vars(&[("XDG_CACHE_HOME", "/h/.cache")])
    );
    assert!(env::is_pattern("BAR_*") && env::is_pattern("FOO"));
    assert!(!env::is_pattern("BAR-X") && !env::is_pattern("*X") && !env::is_pattern(""));
}

#[test]
fn codex_gets_the_variable_its_config_names_for_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join(".codex")).expect("mkdir");
    std::fs::write(
        dir.path().join(".codex/config.toml"),
        "[model_providers.fake]\nenv_key = \"FAKE_OPENAI_API_KEY\"\n",
    )
    .expect("write");
    let of = |command: &'static str| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: vec![command],
            home: Some(dir.path().to_path_buf()),
            ..ProfileInput::default()
        })
    };
    assert!(
        of("codex-acp")
            .env_pass
            .contains(&"FAKE_OPENAI_API_KEY".to_string())
    );
    assert!(
        !of("gemini")
            .env_pass
            .contains(&"FAKE_OPENAI_API_KEY".to_string())
    );
}

#[test]
fn read_only_keeps_the_workspace_readable_only_and_hidden_wins_over_writable() {
    // `~/.ssh` configured writable stays hidden; `~/.m2` as a writable
    // path is descended into around its secret.
    let profile = profile(SandboxMode::ReadOnly, &["~/.ssh", "~/.m2"], &[]);
    let got = grants(&profile, None, &fs());
    let writes: Vec<String> = table(&got)
        .into_iter()
        .filter(|g| !g.starts_with("Read") && !g.contains("/dev/"))
        .collect();
    assert!(
        !writes.iter().any(|g| g.contains("/home/u/src")),
        "{writes:?}"
    );
    assert!(!writes.iter().any(|g| g.contains(".ssh")), "{writes:?}");
    assert!(
        writes.contains(&"List /home/u/.m2".to_string()),
        "{writes:?}"
    );
    assert!(
        writes.contains(&"Write /home/u/.m2/repository".to_string()),
        "{writes:?}"
    );
    assert!(
        !writes.iter().any(|g| g.contains("settings.xml")),
        "{writes:?}"
    );
    assert!(
        !got.iter()
            .any(|g| g.path.starts_with("/home/u/.ssh")
                || g.path.starts_with("/home/u/.config/gcloud")),
        "secrets never get a rule: {got:?}"
    );
}

#[test]
fn state_directories_follow_the_agent_named_in_the_command() {
    let codex = Profile::new(&ProfileInput {
        agent: "codex",
        command_line: vec!["codex-acp"],
        home: Some(PathBuf::from("/h")),
        ..ProfileInput::default()
    });
    assert_eq!(codex.writable, [PathBuf::from("/h/.codex")]);
    assert!(codex.hidden.contains(&PathBuf::from("/h/.ssh")));
    assert_eq!(codex.read_only().mode, SandboxMode::ReadOnly);
    let off = Profile {
        mode: SandboxMode::Off,
        ..codex.clone()
    };
    assert_eq!(off.read_only().mode, SandboxMode::Off);
}

#[test]
fn a_denial_in_tool_output_names_the_setting() {
    let profile = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    let (path, setting) = explain_denial(&profile, "bash: /home/u/.bashrc: Permission denied\n")
        .expect("a denial outside the workspace");
    assert_eq!(path, PathBuf::from("/home/u/.bashrc"));
    assert!(setting.contains("sandbox.writable"), "{setting}");
    let (_, setting) = explain_denial(&profile, "cat: /home/u/.ssh/id_rsa: Permission denied")
        .expect("a hidden file");
    assert!(setting.contains("hidden"), "{setting}");
    assert_eq!(
        explain_denial(&profile, "touch: /home/u/src/x: Permission denied"),
        None,
        "the workspace is writable: not the sandbox"
    );
    assert_eq!(explain_denial(&profile, "/home/u/.bashrc: fine"), None);
    // A shell names itself first; the path denied is the one nearest the denial.
    let (path, _) = explain_denial(
        &profile,
        "/bin/sh: 1: cannot create /home/u/out.txt: Permission denied",
    )
    .expect("a denial outside the workspace");
    assert_eq!(path, PathBuf::from("/home/u/out.txt"));
    let plan = profile.read_only();
    let (_, setting) = explain_denial(
        &plan,
        "touch: cannot touch '/home/u/src/x': Permission denied",
    )
    .expect("read-only workspace");
    assert!(setting.contains("Plan"), "{setting}");
}

#[test]
fn bubblewrap_failing_inside_the_sandbox_is_told_without_advice() {
    let profile = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    let line = reported_line(
        &profile,
        "Output:\nbwrap: setting up uid map: Permission denied\n",
    )
    .expect("told");
    assert!(
        line.starts_with("the agent's own sandbox (bubblewrap) failed"),
        "{line}"
    );
    assert!(is_told(&line));
    // Nothing that turns warden's sandbox off on the agent's word.
    assert!(!line.contains("mode = \"off\""), "{line}");
    let off = Profile {
        mode: SandboxMode::Off,
        ..profile
    };
    assert_eq!(reported_line(&off, "bwrap: setting up uid map"), None);
}

/// What the agent's own output says is its word: warden says what its
/// sandbox does with the path, and offers no setting to widen it; a
/// denial in warden's own terminal names the setting.
#[test]
fn a_denial_the_agent_reports_is_told_without_the_setting() {
    use crate::model::{SessionUpdate, ToolCallFields, ToolContent};
    let profile = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    let update = |text: &str| SessionUpdate::ToolCallUpdate {
        id: "call-1".into(),
        fields: Box::new(ToolCallFields {
            content: Some(vec![ToolContent::Text { text: text.into() }]),
            ..ToolCallFields::default()
        }),
    };
    let outside = "bash: /home/u/.bashrc: Permission denied\n";
    let line = told(&profile, &update(outside)).expect("told");
    assert_eq!(
        line,
        "the agent reports a denial of /home/u/.bashrc: warden's sandbox keeps it read-only \
         for the agent: it is outside the workspace"
    );
    assert!(is_told(&line));
    let hidden = told(
        &profile,
        &update("cat: /home/u/.ssh/id_rsa: Permission denied"),
    )
    .unwrap();
    assert!(hidden.contains("hides it from the agent"), "{hidden}");
    let plan = told(
        &profile.read_only(),
        &update("touch: cannot touch '/home/u/src/x': Permission denied"),
    )
    .unwrap();
    assert!(plan.contains("keeps the workspace read-only"), "{plan}");
    for line in [&line, &hidden, &plan] {
        assert!(
            !line.contains("sandbox.writable") && !line.contains("mode ="),
            "{line}"
        );
    }
    // A path the sandbox lets the agent write is not the sandbox's doing.
    assert_eq!(
        told(&profile, &update("touch: /home/u/src/x: Permission denied")),
        None
    );
    // warden's own terminal: a process warden ran under the sandbox.
    let seen = told_terminal(&profile, outside).expect("told");
    assert!(
        seen.starts_with("the sandbox may have blocked /home/u/.bashrc")
            && seen.contains("sandbox.writable"),
        "{seen}"
    );
}

#[test]
fn an_agent_gets_its_state_by_what_it_is_not_by_a_word_of_its_command_line() {
    let of = |command: &[&'static str]| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: command.to_vec(),
            home: Some(PathBuf::from("/h")),
            ..ProfileInput::default()
        })
    };
    let nothing = of(&["my-agent"]);
    for attacker in [
        &["/x/foo-claude-bar"][..],
        &["node", "/x/foo-claude-bar.js"],
        &[
            "/x/agent", "--model", "claude", "codex", "gemini", "qwen", "kimi", "opencode",
        ],
        &["python3", "/home/claude/x.py"],
    ] {
        let profile = of(attacker);
        assert_eq!(profile.writable, nothing.writable, "{attacker:?}");
        assert_eq!(profile.env_pass, nothing.env_pass, "{attacker:?}");
        assert_eq!(profile.hidden, nothing.hidden, "{attacker:?}");
        assert!(profile.read_only.is_empty() && profile.guarded.is_empty());
        assert!(profile.guarded_keys.is_empty(), "{attacker:?}");
    }
    // The rigs' command lines get their agent's state.
    let rigs: &[(&[&str], &str)] = &[
        (
            &[
                "node",
                "/r/node_modules/@zed-industries/claude-agent-acp/dist/index.js",
            ],
            ".claude",
        ),
        (
            &[
                "node",
                "/r/node_modules/@qwen-code/qwen-code/cli-entry.js",
                "--acp",
            ],
            ".qwen",
        ),
        (
            &[
                "node",
                "/r/node_modules/@google/gemini-cli/bundle/gemini.js",
                "--acp",
            ],
            ".gemini",
        ),
        (
            &["/r/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"],
            ".codex",
        ),
        (
            &["/r/node_modules/opencode-linux-x64/bin/opencode", "acp"],
            ".config/opencode",
        ),
        (&["/r/venv/bin/kimi", "acp"], ".kimi"),
    ];
    for (command, state) in rigs {
        let profile = of(command);
        assert!(
            profile.writable.contains(&Path::new("/h").join(state)),
            "{command:?}"
        );
    }
}

#[test]
fn the_config_that_runs_programs_is_read_only_or_put_back_for_each_agent() {
    let of = |command: &[&'static str]| {
        Profile::new(&ProfileInput {
            agent: "x",
            command_line: command.to_vec(),
            home: Some(PathBuf::from("/h")),
            ..ProfileInput::default()
        })
    };
    let claude = of(&["claude-agent-acp"]);
    for rel in [
        ".claude/settings.json",
        ".claude/hooks",
        ".claude/commands",
        ".claude/agents",
        ".claude/skills",
    ] {
        assert!(
            claude.read_only.contains(&Path::new("/h").join(rel)),
            "{rel}"
        );
    }
    assert_eq!(claude.guarded_keys, [PathBuf::from("/h/.claude.json")]);
    let guarded = |p: &Profile, rel: &str| p.guarded.contains(&Path::new("/h").join(rel));
    assert!(guarded(&of(&["gemini", "--acp"]), ".gemini/extensions"));
    assert!(guarded(&of(&["qwen", "--acp"]), ".qwen/extensions"));
    let opencode = of(&["opencode", "acp"]);
    assert!(guarded(&opencode, ".config/opencode/plugin"));
    assert!(guarded(&opencode, ".config/opencode/tool"));
    assert!(guarded(&of(&["gemini", "--acp"]), ".gemini/commands"));
    assert!(guarded(&of(&["qwen", "--acp"]), ".qwen/skills"));
    assert!(guarded(&of(&["qwen", "--acp"]), ".qwen/extension-store"));
    let codex = of(&["codex-acp"]);
    for rel in [".codex/hooks.json", ".codex/rules", ".codex/skills"] {
        assert!(guarded(&codex, rel), "{rel}");
    }
    let kimi = of(&["kimi", "acp"]);
    for rel in [".kimi/plugins", ".kimi/skills", ".kimi/bin"] {
        assert!(guarded(&kimi, rel), "{rel}");
    }
    // In the kernel: no write rule reaches Claude's commands.
    let fs = Table(BTreeMap::from([(
        "/h/.claude",
        vec!["commands", "projects", "skills", "settings.json"],
    )]));
    let claude = Profile {
        writable: vec![PathBuf::from("/h/.claude")],
        ..claude
    };
    let got = grants(&claude, None, &fs);
    let writes: Vec<&Grant> = got.iter().filter(|g| g.access == Access::Write).collect();
    assert!(
        writes
            .iter()
            .any(|g| g.path == Path::new("/h/.claude/projects")),
        "{writes:?}"
    );
    for rel in ["commands", "skills", "agents"] {
        let dir = Path::new("/h/.claude").join(rel);
        assert!(
            !writes
                .iter()
                .any(|g| g.path.starts_with(&dir) || dir.starts_with(&g.path)),
            "{rel}: {writes:?}"
        );
    }
}

/// Issue 35: an agent reaches its own model's hosts without asking: its
/// known API hosts and the host of each base-URL variable it is given;
/// `warden sandbox` lists them.
#[test]
fn an_agent_reaches_its_models_hosts_without_asking() {
    let claude = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    assert!(claude.allow_hosts.iter().any(|h| h == "api.anthropic.com"));
    assert!(!claude.allow_hosts.iter().any(|h| h == "api.openai.com"));
    let own = Profile::new(&ProfileInput {
        agent: "codex",
        command_line: vec!["codex-acp"],
        env: vec![
            (
                "OPENAI_BASE_URL".into(),
                "http://Model.Internal:9000/v1".into(),
            ),
            ("OTHER_URL".into(), "https://not-a-model.test/".into()),
        ],
        workspace: vec![PathBuf::from("/w")],
        ..ProfileInput::default()
    });
    assert!(own.allow_hosts.iter().any(|h| h == "api.openai.com"));
    assert!(own.allow_hosts.iter().any(|h| h == "model.internal:9000"));
    assert!(!own.allow_hosts.iter().any(|h| h.contains("not-a-model")));
    let gated = own.clone();
    let said = super::network_lines(&gated).join("\n");
    assert!(said.contains("network: gated"), "{said}");
    assert!(said.contains("model.internal:9000"), "{said}");
    assert!(said.contains("a card asks"), "{said}");
    let open = Profile {
        network: crate::net::NetworkMode::Open,
        ..own
    };
    assert!(
        super::network_lines(&open)
            .join("\n")
            .contains("network wall: none")
    );
}

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn kind_match_names() {
    let cases = [
        ("read", KindMatch::Category(Category::Read)),
        ("write", KindMatch::Category(Category::Write)),
        ("execute", KindMatch::Category(Category::Execute)),
        ("external", KindMatch::Category(Category::External)),
        ("edit", KindMatch::Kind(ToolKind::Edit)),
        ("search", KindMatch::Kind(ToolKind::Search)),
        ("switch_mode", KindMatch::Kind(ToolKind::SwitchMode)),
        ("other", KindMatch::Kind(ToolKind::Other)),
    ];
    for (name, want) in cases {
        assert_eq!(name.parse::<KindMatch>(), Ok(want), "{name}");
        assert_eq!(want.to_string(), name);
    }
    assert_eq!(
        "writes".parse::<KindMatch>(),
        Err(ParseError::Kind("writes".into()))
    );
    for kind in ToolKind::ALL {
        let named = KindMatch::named(kind);
        assert!(named.matches(kind));
        assert_eq!(named.as_str().parse::<KindMatch>(), Ok(named));
    }
    assert!(KindMatch::Category(Category::Read).matches(ToolKind::Think));
    assert!(KindMatch::Category(Category::Execute).matches(ToolKind::Other));
    assert!(!KindMatch::Kind(ToolKind::Edit).matches(ToolKind::Delete));
}

#[test]
fn rules_parse_from_toml_and_reject_typos() {
    #[derive(Deserialize)]
    struct File {
        rules: Vec<Rule>,
    }
    let text = r#"
[[rules]]
decision = "deny"
kind = "read"
path = "~/.ssh/**"
note = "keys stay private"

[[rules]]
decision = "allow"
agent = "claude"
command = "cargo test *"
"#;
    let file: File = toml::from_str(text).expect("parses");
    let mut deny = Rule::new(RuleDecision::Deny);
    deny.kind = Some(KindMatch::Category(Category::Read));
    deny.path = Some("~/.ssh/**".into());
    deny.note = Some("keys stay private".into());
    let mut allow = Rule::new(RuleDecision::Allow);
    allow.agent = Some("claude".into());
    allow.command = Some("cargo test *".into());
    assert_eq!(file.rules, vec![deny.clone(), allow.clone()]);
    assert_eq!(
        deny.describe(),
        "deny rule kind=read path=\"~/.ssh/**\": keys stay private"
    );
    assert_eq!(
        allow.describe(),
        "allow rule agent=\"claude\" command=\"cargo test *\""
    );
    assert_eq!(
        Rule::new(RuleDecision::Ask).describe(),
        "ask rule for everything"
    );

    let typo = "[[rules]]\ndecision = \"allow\"\ncomand = \"ls\"\n";
    assert!(toml::from_str::<File>(typo).is_err());
    let bad_kind = "[[rules]]\ndecision = \"allow\"\nkind = \"writes\"\n";
    assert!(toml::from_str::<File>(bad_kind).is_err());
}

fn execute(command: &str) -> RequestView {
    RequestView {
        kind: ToolKind::Execute,
        title: command.into(),
        tool_name: Some("Bash".into()),
        raw_input: Some(json!({ "command": command })),
        ..RequestView::default()
    }
}

fn touching(kind: ToolKind, paths: &[&str]) -> RequestView {
    RequestView {
        kind,
        title: "Edit".into(),
        locations: paths.iter().map(|p| p.to_string()).collect(),
        ..RequestView::default()
    }
}

#[test]
fn suggested_rules() {
    let home = Some(Path::new("/home/u"));
    let command_of = |c: &str| {
        suggest_rule(&execute(c), "claude", home, Path::new("/"))
            .expect("a rule")
            .command
    };
    assert_eq!(
        command_of("cargo test --lib").as_deref(),
        Some("cargo test *")
    );
    assert_eq!(command_of("git status").as_deref(), Some("git status *"));
    assert_eq!(
        command_of("npm run build:prod").as_deref(),
        Some("npm run *")
    );
    assert_eq!(command_of("ls -la /tmp").as_deref(), Some("ls *"));
    assert_eq!(command_of("./x.sh Arg").as_deref(), Some("./x.sh *"));
    assert_eq!(
        command_of("python3 /tmp/a.py").as_deref(),
        Some("python3 /tmp/a.py"),
        "an interpreter is a wrapper: the exact command"
    );
    assert_eq!(
        command_of("RUST_LOG=debug cargo test").as_deref(),
        Some("RUST_LOG=debug cargo test *")
    );
    assert_eq!(
        command_of("cargo test && cargo fmt").as_deref(),
        Some("cargo test *")
    );
    assert_eq!(
        command_of("./a*b.sh -v").as_deref(),
        Some("./a\\*b.sh -v"),
        "a program named by a glob is picked at run time: the exact command"
    );

    let full =
        suggest_rule(&execute("cargo test"), "claude", home, Path::new("/")).expect("a rule");
    assert_eq!(
        full,
        Rule {
            decision: RuleDecision::Allow,
            agent: Some("claude".into()),
            kind: Some(KindMatch::Category(Category::Execute)),
            tool: None,
            command: Some("cargo test *".into()),
            path: None,
            host: None,
            note: None,
        }
    );

    let cwd = Path::new("/home/u/p");
    let suggest = |req: &RequestView| suggest_rule(req, "a", home, cwd);
    // One file: that file; the directory's glob only as a second choice.
    let one = touching(ToolKind::Edit, &["/home/u/p/src/a.rs"]);
    let edit = suggest(&one).expect("a rule");
    assert_eq!(edit.kind, Some(KindMatch::Kind(ToolKind::Edit)));
    assert_eq!(edit.path.as_deref(), Some("~/p/src/a.rs"));
    assert_eq!(wider_path(&one, home, cwd).as_deref(), Some("~/p/src/**"));
    // A file at the project's root: that file, never the whole project
    // unless asked for.
    let root_file = touching(ToolKind::Edit, &["README.md"]);
    let at_root = suggest(&root_file).expect("a rule");
    assert_eq!(at_root.path.as_deref(), Some("~/p/README.md"));
    assert_eq!(wider_path(&root_file, home, cwd).as_deref(), Some("~/p/**"));
    let moved = suggest(&touching(
        ToolKind::Move,
        &["/home/u/p/src/a.rs", "/home/u/p/old/b.rs"],
    ))
    .expect("a rule");
    assert_eq!(moved.path.as_deref(), Some("~/p/**"));
    let outside = suggest(&touching(ToolKind::Read, &["/etc/hosts"])).expect("a rule");
    assert_eq!(outside.path.as_deref(), Some("/etc/hosts"));
    assert_eq!(outside.kind, Some(KindMatch::Category(Category::Read)));

    // A file right under `/` or the home directory: that file only.
    let top = touching(ToolKind::Delete, &["/x"]);
    let root = suggest(&top).expect("a rule");
    assert_eq!((root.path.as_deref(), root.tool), (Some("/x"), None));
    assert_eq!(wider_path(&top, home, cwd), None, "`/**` is never offered");
    let in_home = touching(ToolKind::Edit, &["/home/u/.bashrc"]);
    assert_eq!(wider_path(&in_home, home, cwd), None, "nor `~/**`");
    let spread = suggest(&touching(ToolKind::Delete, &["/x", "/home/u/y"]));
    assert!(spread.is_err(), "{spread:?}");
    // A relative path is taken from the cwd.
    let relative = suggest(&touching(ToolKind::Edit, &["src/a.rs"])).expect("a rule");
    assert_eq!(
        (relative.path.as_deref(), relative.tool),
        (Some("~/p/src/a.rs"), None)
    );

    let fetch = RequestView {
        kind: ToolKind::Fetch,
        tool_name: Some("WebFetch".into()),
        ..RequestView::default()
    };
    // No path and no command: no rule would be narrower than the tool.
    assert!(suggest(&fetch).is_err());
    let no_command = suggest(&RequestView {
        kind: ToolKind::Execute,
        ..RequestView::default()
    });
    assert!(no_command.is_err());
}

#[test]
fn suggested_rules_never_propose_a_wrapper() {
    // A look through the wrapper (`bash -c 'cargo test'` -> `cargo test *`)
    // would not cover the request itself, since allow rules match the
    // commands as written: each proposes its exact command instead.
    let command_of = |c: &str| {
        suggest_rule(&execute(c), "claude", None, Path::new("/"))
            .expect("a rule")
            .command
    };
    let cases = [
        "bash -c 'cargo test'",
        "/bin/sh -lc 'cargo test --lib && cargo fmt'",
        "sudo cargo test --lib",
        "env FOO=1 cargo test",
        "timeout 5 make -j4",
        "nohup nice -n 5 cargo build",
        "xargs -n1 rm",
        "zsh -c 'npm run build'",
        "python -m pytest",
        "node x.js",
        "npx prettier --write .",
        "uv run pytest",
        "bash script.sh",
        "sh -c \"$X\"",
        "sudo $(echo rm) x",
    ];
    for command in cases {
        assert_eq!(command_of(command).as_deref(), Some(command), "{command}");
    }
    // Wrappers the scanner knows are wrappers here too: `poetry run *`
    // or `ssh host *` would cover anything.
    for command in ["poetry run pytest", "ssh host ls", "systemd-run make"] {
        assert_eq!(command_of(command).as_deref(), Some(command), "{command}");
    }
    assert_eq!(
        command_of("python3 /tmp/a*.py").as_deref(),
        Some("python3 /tmp/a\\*.py")
    );
    // Each covers the request it was kept from (except a script or a
    // command only known at run time, which no allow rule covers).
    for command in &cases[..12] {
        let req = execute(command);
        let rule = suggest_rule(&req, "claude", None, Path::new("/")).expect("a rule");
        let facts = Facts::new(&req, None, Path::new("/"));
        assert!(rule.matches(&facts, "claude"), "{command}");
    }
}

use super::*;
use crate::model::ToolKind;
use crate::policy::{Category, KindMatch, RuleDecision};
use crate::settings::edit_place::section_part;
use pretty_assertions::assert_eq;

fn rule(decision: RuleDecision, command: &str) -> Rule {
    let mut rule = Rule::new(decision);
    rule.command = Some(command.into());
    rule
}

fn bypass(agent: &str, value: bool) -> Edit {
    Edit::SetBypass {
        agent: agent.into(),
        value,
        create: None,
    }
}

/// Apply an edit to a file holding `text`; the new text.
fn edited(text: &str, edit: &Edit) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).expect("write");
    apply(&path, edit).expect("applies");
    std::fs::read_to_string(&path).expect("read")
}

#[test]
fn bypass_is_set_in_place_or_after_the_blocks_last_key() {
    let text = "[agents.a] # mine\ncommand = \"x\"\n\n# b\n[agents.b]\ncommand = \"y\"\n";
    assert_eq!(
        edited(text, &bypass("a", true)),
        "[agents.a] # mine\ncommand = \"x\"\nbypass_permissions = true\n\n\
         # b\n[agents.b]\ncommand = \"y\"\n"
    );
    let set = "[agents.a]\nbypass_permissions = true   # since May\ncommand = \"x\"\n";
    assert_eq!(
        edited(set, &bypass("a", false)),
        "[agents.a]\nbypass_permissions = false   # since May\ncommand = \"x\"\n"
    );
    assert_eq!(
        edited("agents.a.command = \"x\"\n", &bypass("a", true)),
        "agents.a.command = \"x\"\nagents.a.bypass_permissions = true\n"
    );
    assert_eq!(
        edited("agents = { a = { command = \"x\" } }\n", &bypass("a", true)),
        "agents = { a = { command = \"x\", bypass_permissions = true } }\n"
    );
}

/// A rule kept for an agent with no block goes with a block of its own
/// (no bypass), the one that runs exactly its command line if any, else
/// a free name; the rule names that block.
#[test]
fn a_rule_for_an_agent_without_a_block_goes_with_its_block() {
    let mut rule = rule(RuleDecision::Allow, "npm test *");
    rule.agent = Some("run-agent".into());
    let edit = |args: &[&str]| Edit::AppendAgentRule {
        rule: rule.clone(),
        create: (
            "sh".into(),
            args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        ),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "# mine\n").expect("write");
    let applied = apply_edit(&path, &edit(&["/a/run-agent.sh"])).expect("applies");
    assert_eq!(applied.agent.as_deref(), Some("run-agent"));
    let block = &applied.settings.agents["run-agent"];
    assert!(!block.bypass_permissions);
    assert_eq!(block.args, ["/a/run-agent.sh"]);
    assert_eq!(
        applied.settings.rules[0].agent.as_deref(),
        Some("run-agent")
    );
    // The same command line again: the same block, a second rule.
    let again = apply_edit(&path, &edit(&["/a/run-agent.sh"])).expect("applies");
    assert_eq!(again.agent.as_deref(), Some("run-agent"));
    assert_eq!(again.settings.agents.len(), 1);
    // Another script under the same name: a block of its own.
    let other = apply_edit(&path, &edit(&["/b/run-agent.sh"])).expect("applies");
    assert_eq!(other.agent.as_deref(), Some("run-agent-2"));
    assert_eq!(
        other.settings.rules[2].agent.as_deref(),
        Some("run-agent-2")
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains("bypass_permissions"), "{text}");
}

#[test]
fn bypass_for_a_command_line_adds_a_block_after_the_last_agent() {
    let text = "[agents.a]\ncommand = \"x\"\n\n[agents.a.env]\nK = \"v\"\n\n# tail\n[notifications]\nbell = false\n";
    let edit = Edit::SetBypass {
        agent: "npx".into(),
        value: true,
        create: Some(("npx".into(), vec!["-y".into(), "pkg@1".into()])),
    };
    assert_eq!(
        edited(text, &edit),
        "[agents.a]\ncommand = \"x\"\n\n[agents.a.env]\nK = \"v\"\n\n\
         [agents.npx]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg@1\"]\nbypass_permissions = true\n\n\
         # tail\n[notifications]\nbell = false\n"
    );
    assert_eq!(
        edited("default_agent = \"a\"\n# end\n", &edit),
        "default_agent = \"a\"\n# end\n\n\
         [agents.npx]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg@1\"]\nbypass_permissions = true\n"
    );
    let dotted = edited(
        "agents.a.command = \"x\"\n\n[notifications]\nbell = true\n",
        &edit,
    );
    let settings = parse(&dotted, Path::new("c")).expect("reads back");
    assert!(settings.agents["npx"].bypass_permissions, "{dotted}");
    assert_eq!(settings.agents["a"].command, "x");
}

#[test]
fn bypass_without_a_block_or_a_change_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    assert_eq!(apply(&path, &bypass("a", false)), Ok(Settings::default()));
    assert!(!path.exists(), "no file for a change that changes nothing");
    assert_eq!(
        apply(&path, &bypass("a", true)),
        Err(WriteError::NoSuchAgent {
            path: path.clone(),
            agent: "a".into()
        })
    );
    assert!(!path.exists());
    let text = "[agents.a]\ncommand = \"x\"\nbypass_permissions  =  true\n";
    std::fs::write(&path, text).expect("write");
    let settings = apply(&path, &bypass("a", true)).expect("no-op");
    assert!(settings.agents["a"].bypass_permissions);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
}

#[test]
fn rules_append_after_the_last_rule() {
    let text = "[[rules]]\ndecision = \"deny\"\npath = \"~/.ssh/**\"\n\n# n\n[notifications]\nbell = true\n";
    let mut new = rule(RuleDecision::Allow, "cargo test *");
    new.agent = Some("claude".into());
    new.kind = Some(KindMatch::Category(Category::Execute));
    new.note = Some("tests are \"safe\"".into());
    assert_eq!(
        edited(text, &Edit::AppendRule(new)),
        "[[rules]]\ndecision = \"deny\"\npath = \"~/.ssh/**\"\n\n\
         [[rules]]\ndecision = \"allow\"\nagent = \"claude\"\nkind = \"execute\"\n\
         command = \"cargo test *\"\nnote = 'tests are \"safe\"'\n\n\
         # n\n[notifications]\nbell = true\n"
    );
    let inline = "rules = [\n  { decision = \"deny\", tool = \"Bash\" },\n]\n";
    let out = edited(inline, &Edit::AppendRule(rule(RuleDecision::Ask, "rm *")));
    assert_eq!(
        parse(&out, Path::new("c")).expect("reads back").rules.len(),
        2,
        "{out}"
    );
    assert!(
        out.starts_with("rules = [\n  { decision = \"deny\", tool = \"Bash\" },"),
        "{out}"
    );
}

#[test]
fn a_kind_is_written_and_compared_by_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let mut read = Rule::new(RuleDecision::Ask);
    read.kind = Some(KindMatch::Kind(ToolKind::Read));
    let settings = apply(&path, &Edit::AppendRule(read.clone())).expect("applies");
    assert_eq!(
        settings.rules[0].kind,
        Some(KindMatch::Category(Category::Read))
    );
    let remove = Edit::RemoveRule {
        index: 0,
        expected: read,
    };
    assert_eq!(apply(&path, &remove).map(|s| s.rules), Ok(Vec::new()));
}

#[test]
fn removing_a_rule_takes_its_own_comment_and_keeps_the_sections() {
    let text = "roots = []\n\n# Rules\n\n# why a\n[[rules]]\ndecision = \"deny\"\ncommand = \"a\"\n\n\
                [[rules]]\ndecision = \"deny\"\ncommand = \"b\"\n\n# n\n[notifications]\nbell = true\n";
    let first = Edit::RemoveRule {
        index: 0,
        expected: rule(RuleDecision::Deny, "a"),
    };
    assert_eq!(
        edited(text, &first),
        "roots = []\n\n# Rules\n\n[[rules]]\ndecision = \"deny\"\ncommand = \"b\"\n\n\
         # n\n[notifications]\nbell = true\n"
    );
    let last = Edit::RemoveRule {
        index: 1,
        expected: rule(RuleDecision::Deny, "b"),
    };
    assert_eq!(
        edited(text, &last),
        "roots = []\n\n# Rules\n\n# why a\n[[rules]]\ndecision = \"deny\"\ncommand = \"a\"\n\n\
         # n\n[notifications]\nbell = true\n"
    );
    let only = "# Rules\n\n# why\n[[rules]]\ndecision = \"ask\"\ncommand = \"c\"\n";
    let remove = Edit::RemoveRule {
        index: 0,
        expected: rule(RuleDecision::Ask, "c"),
    };
    assert_eq!(edited(only, &remove), "# Rules\n");
    let inline = "rules = [{ decision = \"ask\", command = \"c\" }]\nroots = []\n";
    assert_eq!(edited(inline, &remove), "rules = []\nroots = []\n");
}

#[test]
fn a_changed_rule_is_not_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let text = "[[rules]]\ndecision = \"deny\"\ncommand = \"b\"\n";
    std::fs::write(&path, text).expect("write");
    let stale = Edit::RemoveRule {
        index: 0,
        expected: rule(RuleDecision::Deny, "a"),
    };
    let err = apply(&path, &stale).expect_err("changed");
    assert_eq!(
        err,
        WriteError::RuleChanged {
            path: path.clone(),
            index: 0,
            expected: Box::new(rule(RuleDecision::Deny, "a")),
            found: Some(Box::new(rule(RuleDecision::Deny, "b"))),
        }
    );
    assert!(
        err.to_string()
            .starts_with("the rule changed on disk: rule 1 of "),
        "{err}"
    );
    let gone = Edit::RemoveRule {
        index: 3,
        expected: rule(RuleDecision::Deny, "b"),
    };
    assert!(matches!(
        apply(&path, &gone),
        Err(WriteError::RuleChanged { found: None, .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
}

#[test]
fn a_failure_before_the_rename_leaves_the_old_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let text = "# mine\n[agents.a]\ncommand = \"x\"\n";
    std::fs::write(&path, text).expect("write");
    file::FAIL_BEFORE_RENAME.with(|fail| fail.set(true));
    let result = apply(&path, &bypass("a", true));
    file::FAIL_BEFORE_RENAME.with(|fail| fail.set(false));
    let Err(WriteError::Io { message, .. }) = &result else {
        panic!("{result:?}")
    };
    assert!(message.contains("before the rename"), "{message}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["config.toml", "config.toml.lock"],
        "no temporary file left"
    );
    assert!(
        apply(&path, &bypass("a", true)).is_ok(),
        "writes once the failure is gone"
    );
}

#[test]
fn agent_names_for_command_lines() {
    let text =
        "[agents.npx]\ncommand = \"npx\"\nargs = [\"a\"]\n\n[agents.npx-2]\ncommand = \"npx\"\n";
    let settings = parse(text, Path::new("c")).expect("valid");
    assert_eq!(unique_agent_name(&settings, "npx"), "npx-3");
    assert_eq!(unique_agent_name(&settings, "gemini"), "gemini");
    assert_eq!(unique_agent_name(&settings, DEMO_AGENT), "demo-2");
    assert_eq!(unique_agent_name(&settings, "  "), "agent");
    assert_eq!(
        agent_for_command(&settings, "npx", &["a".into()]),
        Some("npx")
    );
    assert_eq!(agent_for_command(&settings, "npx", &[]), Some("npx-2"));
    assert_eq!(agent_for_command(&settings, "npx", &["b".into()]), None);
}

#[test]
fn section_part_of_a_decor() {
    assert_eq!(section_part("\n# own\n"), None);
    assert_eq!(section_part("\n# s\n\n# own\n"), Some("\n# s\n".into()));
    assert_eq!(section_part("\n# s\n\n  "), Some("\n# s\n".into()));
    assert_eq!(section_part("\n\n"), None);
}

/// A network card's "always allow this host for this agent": the host
/// joins the agent's `sandbox.allow_hosts` (made when missing, kept once),
/// and reads back as the agent's allowed hosts.
#[test]
fn always_allowing_a_host_adds_it_to_the_agents_allow_hosts_once() {
    let allow = |agent: &str, host: &str| Edit::AllowHost {
        agent: agent.into(),
        host: host.into(),
        create: None,
    };
    let text = "[agents.a] # mine\ncommand = \"x\"\n\n[agents.b]\ncommand = \"y\"\n";
    let once = edited(text, &allow("a", "api.github.com:443"));
    let settings = parse(&once, Path::new("c.toml")).expect("reads back");
    assert_eq!(
        settings.agents["a"].sandbox.allow_hosts,
        ["api.github.com:443"]
    );
    assert!(settings.agents["b"].sandbox.allow_hosts.is_empty());
    assert!(
        once.starts_with("[agents.a] # mine\ncommand = \"x\"\n"),
        "{once}"
    );
    let twice = edited(&once, &allow("a", "example.com:80"));
    let settings = parse(&twice, Path::new("c.toml")).expect("reads back");
    assert_eq!(
        settings.agents["a"].sandbox.allow_hosts,
        ["api.github.com:443", "example.com:80"]
    );
    assert_eq!(edited(&twice, &allow("a", "example.com:80")), twice);
    // A dotted sandbox key keeps its shape.
    let dotted = "[agents.a]\ncommand = \"x\"\nsandbox.allow_hosts = [\"b.test\"]\n";
    let got = parse(
        &edited(dotted, &allow("a", "c.test:443")),
        Path::new("c.toml"),
    )
    .expect("reads back");
    assert_eq!(
        got.agents["a"].sandbox.allow_hosts,
        ["b.test", "c.test:443"]
    );
    // No block and no command to make one: nothing is written.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).expect("write");
    assert!(matches!(
        apply(&path, &allow("zz", "a.test:1")),
        Err(WriteError::NoSuchAgent { .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
    // An agent started with `-- CMD` gets a block that runs it.
    let made = edited(
        text,
        &Edit::AllowHost {
            agent: "run".into(),
            host: "a.test:1".into(),
            create: Some(("run-agent".into(), vec!["--acp".into()])),
        },
    );
    let got = parse(&made, Path::new("c.toml")).expect("reads back");
    assert_eq!(got.agents["run"].command, "run-agent");
    assert_eq!(got.agents["run"].sandbox.allow_hosts, ["a.test:1"]);
}

//! Writing the settings file: what survives a write, concurrent writers,
//! failures that must lose nothing, and malformed files left alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use similar::{ChangeTag, TextDiff};
use warden::policy::{Category, KindMatch, Rule, RuleDecision};
use warden::settings::{
    self, Edit, Settings, SettingsError, WriteError, apply, template, unique_agent_name,
    unknown_keys,
};

/// A settings file as a person writes one: comments everywhere, a nested
/// env table. (An unknown key is an error: see
/// `a_misspelt_key_is_named_with_its_line`.)
pub(super) const COMMENTED: &str = r#"# my warden settings
default_agent = "claude"   # the usual
# theme = "dark"           # not a warden key (yet)

# Claude through npx
[agents.claude]
command = "npx"
args = ["-y", "@zed-industries/claude-agent-acp"]
# comand = "typo"

[agents.claude.env]
ANTHROPIC_LOG = "warn"

# Gemini
[agents.gemini]
command = "gemini"
args = ["--acp"]
default_mode = "plan"

# --- rules ---

# keys stay private
[[rules]]
decision = "deny"
kind = "read"
path = "~/.ssh/**"
note = "keys"

[[rules]]
decision = "ask"
path = "**/.env"
note = "secrets"   # why

# notifications: bell only
[notifications]
bell = true
desktop = false
# volume = 3
"#;

pub(super) fn rule(decision: RuleDecision, command: &str) -> Rule {
    let mut rule = Rule::new(decision);
    rule.command = Some(command.into());
    rule
}

fn deny_ssh() -> Rule {
    let mut rule = Rule::new(RuleDecision::Deny);
    rule.kind = Some(KindMatch::Category(Category::Read));
    rule.path = Some("~/.ssh/**".into());
    rule.note = Some("keys".into());
    rule
}

fn cargo_test() -> Rule {
    let mut rule = rule(RuleDecision::Allow, "cargo test *");
    rule.agent = Some("claude".into());
    rule.kind = Some(KindMatch::Category(Category::Execute));
    rule
}

pub(super) fn bypass(agent: &str) -> Edit {
    Edit::SetBypass {
        agent: agent.into(),
        value: true,
        create: None,
    }
}

/// The changed lines between two texts, in order, as `+line` / `-line`.
fn changed_lines(old: &str, new: &str) -> Vec<String> {
    TextDiff::from_lines(old, new)
        .iter_all_changes()
        .filter_map(|change| {
            let sign = match change.tag() {
                ChangeTag::Equal => return None,
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            Some(format!("{sign}{}", change.value().trim_end_matches('\n')))
        })
        .collect()
}

pub(super) fn config_in(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("config.toml");
    fs::write(&path, text).unwrap();
    path
}

pub(super) fn mode_of(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn round_trip_changes_exactly_the_edited_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    let before = settings::load(&path).unwrap().unwrap();
    assert_eq!(
        before.rules,
        vec![deny_ssh(), {
            let mut env = Rule::new(RuleDecision::Ask);
            env.path = Some("**/.env".into());
            env.note = Some("secrets".into());
            env
        }]
    );

    let after_bypass = apply(&path, &bypass("gemini")).unwrap();
    assert!(after_bypass.agents["gemini"].bypass_permissions);
    apply(&path, &Edit::AppendRule(cargo_test())).unwrap();
    let last = apply(
        &path,
        &Edit::RemoveRule {
            index: 0,
            expected: deny_ssh(),
        },
    )
    .unwrap();

    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        changed_lines(COMMENTED, &text),
        [
            "+bypass_permissions = true",
            "-",
            "-# keys stay private",
            "-[[rules]]",
            "-decision = \"deny\"",
            "-kind = \"read\"",
            "-path = \"~/.ssh/**\"",
            "-note = \"keys\"",
            "+[[rules]]",
            "+decision = \"allow\"",
            "+agent = \"claude\"",
            "+kind = \"execute\"",
            "+command = \"cargo test *\"",
            "+",
        ],
        "{text}"
    );
    assert_eq!(settings::parse(&text, &path), Ok(last.clone()));
    assert_eq!(last.rules[1], cargo_test());
    assert_eq!(unknown_keys(&text), []);
}

/// A misspelt key is named with its line and column, and the file is not
/// used (nor written) until it is fixed (issue 33 item 8).
#[test]
fn a_misspelt_key_is_named_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = COMMENTED.replace("default_agent = \"claude\"", "defualt_agent = \"claude\"");
    let path = config_in(dir.path(), &text);
    let err = settings::load(&path).expect_err("a misspelt key");
    assert!(
        err.to_string()
            .ends_with(":2:1: unknown key `defualt_agent` (did you mean `default_agent`?)"),
        "{err}"
    );
    assert!(apply(&path, &bypass("gemini")).is_err(), "never written");
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_new_agent_block_is_the_only_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    let name = unique_agent_name(&settings::load(&path).unwrap().unwrap(), "claude");
    assert_eq!(name, "claude-2");
    let edit = Edit::SetBypass {
        agent: name,
        value: true,
        create: Some(("npx".into(), vec!["-y".into(), "@acme/agent".into()])),
    };
    let settings = apply(&path, &edit).unwrap();
    assert_eq!(settings.agents["claude-2"].args, ["-y", "@acme/agent"]);
    assert_eq!(
        changed_lines(COMMENTED, &fs::read_to_string(&path).unwrap()),
        [
            "+[agents.claude-2]",
            "+command = \"npx\"",
            "+args = [\"-y\", \"@acme/agent\"]",
            "+bypass_permissions = true",
            "+",
        ]
    );
}

#[test]
fn first_write_creates_the_file_from_the_template() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("warden").join("config.toml");
    let settings = apply(&path, &Edit::AppendRule(cargo_test())).unwrap();
    assert_eq!(settings.rules, [cargo_test()]);
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        format!(
            "{}\n[[rules]]\ndecision = \"allow\"\nagent = \"claude\"\nkind = \"execute\"\n\
             command = \"cargo test *\"\n",
            template()
        )
    );
    assert_eq!(
        mode_of(&path),
        0o600,
        "a new settings file is the user's own"
    );

    let edit = Edit::SetBypass {
        agent: "npx".into(),
        value: true,
        create: Some(("npx".into(), Vec::new())),
    };
    apply(&path, &edit).unwrap();
    assert_eq!(
        changed_lines(&text, &fs::read_to_string(&path).unwrap()),
        [
            "+",
            "+[agents.npx]",
            "+command = \"npx\"",
            "+bypass_permissions = true"
        ]
    );
}

#[test]
fn permissions_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    apply(&path, &bypass("claude")).unwrap();
    assert_eq!(mode_of(&path), 0o640);
}

#[test]
fn a_symlinked_file_stays_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real = config_in(dir.path(), COMMENTED);
    let link = dir.path().join("link.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    apply(&link, &bypass("claude")).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        settings::load(&real).unwrap().unwrap().agents["claude"].bypass_permissions,
        "the target has the edit"
    );
}

#[test]
fn another_wardens_change_since_start_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    let seen_at_start = settings::load(&path).unwrap().unwrap();
    // Another warden appends a rule; then this one records a bypass.
    apply(
        &path,
        &Edit::AppendRule(rule(RuleDecision::Deny, "rm -rf *")),
    )
    .unwrap();
    let now = apply(&path, &bypass("claude")).unwrap();
    assert_eq!(now.rules.len(), seen_at_start.rules.len() + 1);
    assert!(now.agents["claude"].bypass_permissions);

    // This warden's review screen still shows rule 1 as `**/.env`; the
    // other one revoked rule 0 meanwhile, so index 1 is now another rule.
    apply(
        &path,
        &Edit::RemoveRule {
            index: 0,
            expected: deny_ssh(),
        },
    )
    .unwrap();
    let bytes = fs::read(&path).unwrap();
    let stale = Edit::RemoveRule {
        index: 1,
        expected: seen_at_start.rules[1].clone(),
    };
    let err = apply(&path, &stale).unwrap_err();
    assert!(
        matches!(err, WriteError::RuleChanged { index: 1, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("the rule changed on disk: rule 2 of "),
        "{err}"
    );
    assert_eq!(fs::read(&path).unwrap(), bytes, "nothing removed");
}

#[test]
fn concurrent_threads_all_land() {
    const THREADS: usize = 8;
    const EACH: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let path = &path;
            scope.spawn(move || {
                for n in 0..EACH {
                    let edit = Edit::AppendRule(rule(RuleDecision::Allow, &format!("t{t}-{n} *")));
                    apply(path, &edit).unwrap();
                }
            });
        }
    });
    let settings = settings::load(&path).unwrap().unwrap();
    let commands: BTreeSet<String> = settings
        .rules
        .iter()
        .filter_map(|r| r.command.clone())
        .collect();
    assert_eq!(commands.len(), THREADS * EACH);
    assert_eq!(settings.rules.len(), 2 + THREADS * EACH);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# my warden settings\n"),
        "comments survive"
    );
}

/// The environment variable that turns a run of this test binary into a
/// child writer (see [`child_writer`]).
const CHILD: &str = "WARDEN_SETTINGS_TEST_CHILD";

/// Run [`child_writer`] in a new process of this test binary.
pub(super) fn child(job: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "settings::child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, job);
    command
}

/// Not a test of its own: when started by [`child`], apply the edits the job
/// names and print each result.
#[test]
fn child_writer() {
    let Ok(job) = std::env::var(CHILD) else {
        return;
    };
    let parts: Vec<&str> = job.splitn(4, '\t').collect();
    match parts[..] {
        ["append", path, tag, count] => {
            for n in 0..count.parse::<usize>().unwrap() {
                let edit = Edit::AppendRule(rule(RuleDecision::Allow, &format!("{tag}-{n} *")));
                apply(Path::new(path), &edit).unwrap();
            }
        }
        ["bypass-command", path, name, script] => {
            let edit = Edit::SetBypass {
                agent: name.into(),
                value: true,
                create: Some(("node".into(), vec![script.into()])),
            };
            let applied = settings::apply_edit(Path::new(path), &edit).unwrap();
            println!("BLOCK {}", applied.agent.unwrap());
        }
        ["bypass", path, agent] => {
            let result = apply(Path::new(path), &bypass(agent));
            println!("RESULT {:?}", result.map(|_| ()).map_err(|e| e.to_string()));
        }
        _ => panic!("unknown job {job:?}"),
    }
}

#[test]
fn concurrent_processes_all_land() {
    const PROCESSES: usize = 3;
    const EACH: usize = 15;
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), COMMENTED);
    let children: Vec<_> = (0..PROCESSES)
        .map(|p| {
            child(&format!("append\t{}\tp{p}\t{EACH}", path.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let settings = settings::load(&path).unwrap().unwrap();
    let commands: BTreeSet<String> = settings
        .rules
        .iter()
        .filter_map(|r| r.command.clone())
        .collect();
    assert_eq!(commands.len(), PROCESSES * EACH);
}

#[test]
fn a_read_only_directory_is_a_clear_error_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let conf = dir.path().join("conf");
    fs::create_dir(&conf).unwrap();
    let path = config_in(&conf, COMMENTED);
    // The lock file exists from an earlier write; the directory is then made
    // read-only, so the temporary file is what cannot be created.
    apply(&path, &bypass("claude")).unwrap();
    let bytes = fs::read(&path).unwrap();
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o555)).unwrap();

    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let message = if root {
        // root writes anywhere: try as `nobody`, who owns the files but not
        // the directory.
        for file in [&path, &conf.join("config.toml.lock")] {
            std::os::unix::fs::chown(file, Some(65534), Some(65534)).unwrap();
        }
        let job = format!("bypass\t{}\tgemini", path.display());
        let output = {
            use std::os::unix::process::CommandExt;
            child(&job).uid(65534).gid(65534).output()
        };
        let Ok(output) = output else {
            eprintln!("skipped: cannot run a child as nobody");
            return;
        };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let Some(at) = stdout.find("RESULT ") else {
            panic!("{stdout}{}", String::from_utf8_lossy(&output.stderr))
        };
        stdout[at..].lines().next().unwrap_or_default().to_string()
    } else {
        let result = apply(&path, &bypass("gemini"));
        format!("RESULT {:?}", result.map(|_| ()).map_err(|e| e.to_string()))
    };
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o755)).unwrap();
    let want = format!(
        "RESULT Err(\"{}: cannot create a temporary file: Permission denied (os error 13) \
         (the settings file was not changed)\")",
        conf.display()
    );
    assert_eq!(message, want);
    assert_eq!(fs::read(&path).unwrap(), bytes);
    let left: Vec<_> = fs::read_dir(&conf)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
}

#[test]
fn malformed_files_are_reported_and_never_written() {
    let cases = [
        (
            "bad TOML",
            "[agents.a\ncommand = \"x\"\n",
            (1, 10),
            "unclosed table, expected `]`",
        ),
        (
            "wrong type",
            "[agents.a]\ncommand = 3\n",
            (2, 11),
            "invalid type: integer `3`, expected a string",
        ),
        (
            "missing command",
            "[agents.a]\nargs = []\n",
            (1, 1),
            "missing field `command`",
        ),
        (
            "unknown mode",
            "[agents.a]\ncommand = \"x\"\ndefault_mode = \"yolo\"\n",
            (3, 16),
            "unknown variant `yolo`, expected one of `plan`, `default`, `auto`",
        ),
        (
            "unknown decision",
            "# mine\n[[rules]]\ndecision = \"maybe\"\n",
            (3, 12),
            "unknown variant `maybe`, expected one of `allow`, `ask`, `deny`",
        ),
        (
            "unknown kind",
            "[[rules]]\ndecision = \"deny\"\nkind = \"writes\"\n",
            (3, 8),
            "unknown kind \"writes\"",
        ),
        (
            "typo in an allow rule",
            "[[rules]]\ndecision = \"allow\"\ncomand = \"ls *\"\n",
            (3, 1),
            "unknown key `comand` in an allow rule",
        ),
        (
            "duplicate key",
            "[notifications]\nbell = true\nbell = false\n",
            (3, 1),
            "duplicate key",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    for (name, text, (line, column), message) in cases {
        let err = settings::parse(text, &path).unwrap_err();
        let SettingsError::Parse {
            line: l,
            column: c,
            message: m,
            ..
        } = &err
        else {
            panic!("{name}: {err:?}")
        };
        assert_eq!((*l, *c), (line, column), "{name}: {m}");
        assert!(m.starts_with(message), "{name}: {m}");

        fs::write(&path, text).unwrap();
        let write = apply(&path, &Edit::AppendRule(cargo_test())).unwrap_err();
        assert_eq!(
            write,
            WriteError::Malformed {
                path: path.clone(),
                line,
                column,
                message: m.clone(),
            },
            "{name}"
        );
        assert!(
            write
                .to_string()
                .starts_with(&format!("{}:{line}:{column}: ", path.display())),
            "{write}"
        );
        assert!(
            write
                .to_string()
                .ends_with("(not changed: warden does not write to a file it cannot read)")
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            text,
            "{name}: bytes unchanged"
        );
    }
}

#[test]
fn agent_names_are_made_unique() {
    let settings = settings::parse(
        "[agents.npx]\ncommand = \"npx\"\n[agents.npx-2]\ncommand = \"npx\"\n",
        Path::new("c"),
    )
    .unwrap();
    assert_eq!(unique_agent_name(&settings, "npx"), "npx-3");
    assert_eq!(unique_agent_name(&settings, "codex-acp"), "codex-acp");
    assert_eq!(unique_agent_name(&Settings::default(), "npx"), "npx");
    assert_eq!(unique_agent_name(&Settings::default(), "demo"), "demo-2");
}

#[test]
fn new_chats_choose_among_the_configured_agents_at_their_default_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    fs::write(
        &config,
        r#"
[agents.claude]
command = "claude-agent-acp"
default_mode = "auto"

[agents.gemini]
command = "gemini"
args = ["--acp"]
bypass_permissions = true
"#,
    )
    .expect("write");
    let chats = dir.path().join("chats");
    let choices = warden::launch::choices(Some(&config), dir.path(), "/bin/warden", Some(&chats));
    let got: Vec<(&str, &str, warden::policy::Mode, bool)> = choices
        .iter()
        .map(|c| {
            (
                c.command.name.as_str(),
                c.command.program.as_str(),
                c.options.mode,
                c.options.bypass,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "claude",
                "claude-agent-acp",
                warden::policy::Mode::Auto,
                false
            ),
            ("gemini", "gemini", warden::policy::Mode::Default, true),
        ],
        "no demo agent offered beside configured ones"
    );
    assert!(choices.iter().all(|c| c.command.cwd == dir.path()));
    assert!(
        choices
            .iter()
            .all(|c| c.options.chats_dir.as_deref() == Some(chats.as_path()))
    );
    // A settings file that does not load offers nothing more.
    fs::write(&config, "[agents.claude\n").expect("write");
    assert!(warden::launch::choices(Some(&config), dir.path(), "/bin/warden", None).is_empty());
}

//! The rules a settings block gives: a table of expected grants over a
//! fake file system.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

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
                ".ssh",
                ".claude",
                "link-to-root@",
                "src",
            ],
        ),
        ("/home/u/.config", vec!["gcloud", "git", "warden"]),
        ("/home/u/.docker", vec!["config.json", "contexts"]),
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
        "List /home/u/.docker",
        "Read /home/u/.docker/contexts",
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
        "Write /home/u/.claude",
        "Write /home/u/.config/claude",
        "Write /home/u/.npm",
        "Write /home/u/.cache",
        "Write /home/u/notes",
        "Write /tmp/warden-x",
    ];
    assert_eq!(got, want);
}

#[test]
fn read_only_keeps_the_workspace_readable_only_and_hidden_wins_over_writable() {
    // `~/.ssh` configured writable stays hidden; `~/.docker` as a writable
    // path is descended into around its secret.
    let profile = profile(SandboxMode::ReadOnly, &["~/.ssh", "~/.docker"], &[]);
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
        writes.contains(&"List /home/u/.docker".to_string()),
        "{writes:?}"
    );
    assert!(
        writes.contains(&"Write /home/u/.docker/contexts".to_string()),
        "{writes:?}"
    );
    assert!(
        !writes.iter().any(|g| g.contains("config.json")),
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
    assert_eq!(
        codex.writable,
        [
            PathBuf::from("/h/.codex"),
            PathBuf::from("/h/.npm"),
            PathBuf::from("/h/.cache")
        ]
    );
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
fn bubblewrap_failing_inside_the_sandbox_names_the_setting() {
    let profile = profile(SandboxMode::WorkspaceWrite, &[], &[]);
    let line = denial_line(
        &profile,
        "Output:\nbwrap: setting up uid map: Permission denied\n",
    )
    .expect("told");
    assert!(
        line.contains("\"features.use_legacy_landlock=true\"")
            && line.contains("[agents.claude.sandbox] mode = \"off\""),
        "{line}"
    );
}

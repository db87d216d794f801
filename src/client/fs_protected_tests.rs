use std::os::unix::fs::symlink;

use pretty_assertions::assert_eq;

use super::*;
use std::fs;

/// A home that is the only root, holding warden's settings, its
/// decision log and chat records, and links to them.
fn home() -> (tempfile::TempDir, PathBuf, Roots) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().canonicalize().expect("canonical");
    fs::create_dir_all(home.join("cfg")).expect("mkdir");
    fs::create_dir_all(home.join("data/chats")).expect("mkdir");
    fs::write(home.join("cfg/config.toml"), "settings\n").expect("write");
    fs::write(home.join("data/decisions.jsonl"), "{}\n").expect("write");
    fs::hard_link(home.join("cfg/config.toml"), home.join("hard.toml")).expect("link");
    fs::hard_link(home.join("data/decisions.jsonl"), home.join("hard.jsonl")).expect("link");
    symlink(home.join("cfg/config.toml"), home.join("soft.toml")).expect("symlink");
    symlink(home.join("data/decisions.jsonl"), home.join("soft.jsonl")).expect("symlink");
    symlink(home.join("cfg"), home.join("cfg-link")).expect("symlink");
    let protected = Protected::new()
        .settings(&home.join("cfg-link/config.toml"))
        .file(&home.join("data/decisions.jsonl"), "warden's decision log")
        .tree(&home.join("data/chats"), "warden's chat records");
    let roots = Roots::new(&home, &[]).protecting(protected);
    (dir, home, roots)
}

fn refused(result: Result<impl std::fmt::Debug, FsError>) -> bool {
    matches!(result, Err(FsError::Protected { .. }))
}

/// Resolve, then do the IO, as the runtime does.
fn write(roots: &Roots, path: &Path) -> Result<(), FsError> {
    let real = resolve(roots, path, true)?;
    write_text(roots, &real, "x")
}

fn read(roots: &Roots, path: &Path) -> Result<String, FsError> {
    let real = resolve(roots, path, false)?;
    read_text(roots, &real, None, None)
}

#[test]
fn the_settings_and_their_lock_and_temp_files_are_neither_read_nor_written() {
    let (_dir, home, roots) = home();
    for name in [
        "cfg/config.toml",
        "cfg/config.toml.lock",
        "cfg/.config.toml.123.4.tmp",
        "cfg-link/config.toml",
        "soft.toml",
        "hard.toml",
    ] {
        assert!(refused(write(&roots, &home.join(name))), "write {name}");
    }
    for name in ["cfg/config.toml", "soft.toml", "hard.toml"] {
        assert!(refused(read(&roots, &home.join(name))), "read {name}");
    }
    assert_eq!(
        fs::read_to_string(home.join("cfg/config.toml")).expect("read"),
        "settings\n"
    );
    assert!(!home.join("cfg/config.toml.lock").exists());
    // Other files next to the settings are the user's.
    assert!(write(&roots, &home.join("cfg/notes.txt")).is_ok());
    assert!(write(&roots, &home.join("cfg/config.toml.bak")).is_ok());
}

#[test]
fn the_decision_log_and_chat_records_are_read_but_never_written() {
    let (_dir, home, roots) = home();
    for name in [
        "data/decisions.jsonl",
        "soft.jsonl",
        "hard.jsonl",
        "data/chats/new.json",
        "data/chats/deeper/new.json",
    ] {
        assert!(refused(write(&roots, &home.join(name))), "write {name}");
    }
    assert_eq!(
        read(&roots, &home.join("soft.jsonl")).expect("reads are fine"),
        "{}\n"
    );
    assert_eq!(
        fs::read_to_string(home.join("data/decisions.jsonl")).expect("read"),
        "{}\n"
    );
    assert!(!home.join("data/chats/new.json").exists());
    assert!(!home.join("data/chats/deeper").exists());
}

#[test]
fn the_message_says_what_the_file_is() {
    let (_dir, home, roots) = home();
    let err = write(&roots, &home.join("hard.toml")).expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a hard link to warden's settings file or its lock: \
             the agent's file calls may not write it",
            home.join("hard.toml").display()
        )
    );
}

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use super::Resolution;
use super::store::{Point, Side, Store, What};
use super::*;

fn point(step: u64, side: Side) -> Point {
    Point {
        chat: "c".into(),
        step,
        side,
        what: What::Turn { prompt: "p".into() },
        time: 0,
        commit: String::new(),
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let base = dir.path().join("cp");
    (dir, work, base)
}

#[test]
fn keep_reads_a_count_or_days() {
    assert_eq!(Keep::parse("50"), Some(Keep::Last(50)));
    assert_eq!(Keep::parse("7d"), Some(Keep::Days(7)));
    assert_eq!(Keep::parse("0"), None);
    assert_eq!(Keep::parse("soon"), None);
}

#[test]
fn files_over_the_size_limit_are_left_out_and_named() {
    let (_dir, work, base) = setup();
    std::fs::write(work.join("small.txt"), "x").unwrap();
    std::fs::write(work.join("big.bin"), vec![7u8; 2000]).unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let limits = Limits {
        max_file_size: 1000,
        ..Limits::default()
    };
    let snap = store.snapshot(&limits).unwrap();
    assert_eq!(snap.skipped, vec![("big.bin".to_string(), 2000)]);
    let a = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    // A file that grows past the limit leaves the next snapshot.
    std::fs::write(work.join("small.txt"), vec![1u8; 3000]).unwrap();
    let snap = store.snapshot(&limits).unwrap();
    let b = store.record(&snap.tree, point(1, Side::After)).unwrap();
    let diff = store.diff(&a.commit, &b.commit).unwrap();
    assert_eq!(diff.len(), 1);
    assert_eq!(diff[0].path, "small.txt");
    assert_eq!(diff[0].change, super::Change::Deleted);
}

#[test]
fn too_many_files_is_too_large() {
    let (_dir, work, base) = setup();
    for i in 0..5 {
        std::fs::write(work.join(format!("f{i}")), "x").unwrap();
    }
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let limits = Limits {
        max_files: 3,
        budget: Duration::from_secs(60),
        ..Limits::default()
    };
    assert!(matches!(
        store.snapshot(&limits),
        Err(CheckpointError::TooLarge(_))
    ));
}

#[test]
fn attributes_and_filters_of_the_workspace_change_no_byte() {
    let (_dir, work, base) = setup();
    std::fs::write(
        work.join(".gitattributes"),
        "* text=auto eol=crlf filter=evil\n",
    )
    .unwrap();
    std::fs::write(work.join("a.txt"), "one\r\ntwo\n").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let a = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    std::fs::write(work.join("a.txt"), "changed\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let b = store.record(&snap.tree, point(1, Side::After)).unwrap();
    store
        .restore(&b.commit, &a.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert_eq!(std::fs::read(work.join("a.txt")).unwrap(), b"one\r\ntwo\n");
}

#[test]
fn the_data_dir_inside_the_workspace_is_never_snapshotted() {
    let (_dir, work, _) = setup();
    let base = work.join(".local/warden/checkpoints");
    std::fs::write(work.join("a.txt"), "a").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let first = store.snapshot(&Limits::default()).unwrap();
    let a = store.record(&first.tree, point(1, Side::Before)).unwrap();
    let second = store.snapshot(&Limits::default()).unwrap();
    let b = store.record(&second.tree, point(1, Side::After)).unwrap();
    assert!(store.diff(&a.commit, &b.commit).unwrap().is_empty());
}

#[test]
fn max_files_is_a_setting() {
    let text = "[checkpoints]\nmax_files = 5\n";
    assert_eq!(crate::settings::unknown_keys(text), Vec::new());
    let settings = crate::settings::parse(text, std::path::Path::new("c.toml")).unwrap();
    let options = settings.checkpoints.options(PathBuf::from("/cp")).unwrap();
    assert_eq!(options.limits.max_files, 5);
}

/// Steps whose `before` says `what`, numbered from 1.
fn steps_of(whats: Vec<What>) -> Vec<store::Step> {
    whats
        .into_iter()
        .zip(1u64..)
        .map(|(what, step)| store::Step {
            before: Point {
                what,
                ..point(step, Side::Before)
            },
            after: point(step, Side::After),
        })
        .collect()
}

fn undo(step: u64) -> What {
    What::Restore {
        to: String::new(),
        by: Some(store::RestoreBy::Undo(step)),
    }
}

fn redo(step: u64) -> What {
    What::Restore {
        to: String::new(),
        by: Some(store::RestoreBy::Redo(step)),
    }
}

fn turn() -> What {
    What::Turn { prompt: "p".into() }
}

#[test]
fn undo_steps_back_through_the_turns_and_redo_reverses_the_undos_in_turn() {
    use worker::History;
    // Turns 1 and 2, undone one after the other.
    let steps = steps_of(vec![turn(), turn(), undo(2), undo(1)]);
    let history = History::of(&steps);
    assert_eq!(history.done, Vec::<usize>::new());
    let undos: Vec<usize> = history.undone.iter().map(|(i, _)| *i).collect();
    assert_eq!(undos, vec![2, 3]);
    // Redoing the second undo brings turn 1 back; the first is still to redo.
    let steps = steps_of(vec![turn(), turn(), undo(2), undo(1), redo(4)]);
    let history = History::of(&steps);
    assert_eq!(history.done, vec![0]);
    assert_eq!(history.undone.len(), 1);
    // A new turn forgets what was to redo.
    let steps = steps_of(vec![turn(), turn(), undo(2), turn()]);
    let history = History::of(&steps);
    assert_eq!(history.done, vec![0, 3]);
    assert!(history.undone.is_empty());
    // A restore picked in /checkpoints to before turn 1 undoes both turns.
    let steps = steps_of(vec![turn(), turn(), undo(1)]);
    assert_eq!(History::of(&steps).done, Vec::<usize>::new());
    // A restore picked to before an undo brings its turn back.
    let steps = steps_of(vec![turn(), turn(), undo(2), undo(3)]);
    assert_eq!(History::of(&steps).done, vec![0, 1]);
    // A restore of an older warden ends what can be stepped through.
    let old = What::Restore {
        to: String::new(),
        by: None,
    };
    let steps = steps_of(vec![turn(), old]);
    assert_eq!(History::of(&steps), History::default());
}

#[test]
fn a_restore_reads_without_its_reason_from_an_older_store() {
    let old: What = serde_json::from_str(r#"{"kind":"restore","to":"before turn 1"}"#).unwrap();
    assert_eq!(
        old,
        What::Restore {
            to: "before turn 1".into(),
            by: None
        }
    );
    let new = serde_json::to_string(&undo(3)).unwrap();
    assert_eq!(
        serde_json::from_str::<What>(&new).unwrap(),
        undo(3),
        "{new}"
    );
}

/// Longer than `CLOCK_LAG`: timestamps this far apart are in order.
const APART: Duration = Duration::from_millis(200);

#[test]
fn the_workspace_as_of_a_prompt_keeps_the_user_s_edits_and_leaves_the_turn_s_writes() {
    let (_dir, work, base) = setup();
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::create_dir_all(work.join("mine")).unwrap();
    for name in [
        "user.txt",
        "turn.txt",
        "mine/gone.txt",
        "mine/kept.txt",
        "sub/turn-gone.txt",
    ] {
        std::fs::write(work.join(name), "old\n").unwrap();
    }
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let limits = Limits::default();
    let before = store.snapshot(&limits).unwrap().tree;
    // Between the turns, the user edits one file, adds one, removes one.
    std::thread::sleep(APART);
    std::fs::write(work.join("user.txt"), "user\n").unwrap();
    std::fs::write(work.join("user-new.txt"), "user\n").unwrap();
    std::fs::remove_file(work.join("mine/gone.txt")).unwrap();
    std::thread::sleep(APART);
    let sent = std::time::SystemTime::now();
    // The turn writes, adds, and removes. (A file gone from a directory
    // the turn changed counts as the turn's: the user's removals are in
    // `mine/`, which the turn does not touch.)
    std::fs::write(work.join("turn.txt"), "turn\n").unwrap();
    std::fs::write(work.join("turn-new.txt"), "turn\n").unwrap();
    std::fs::remove_file(work.join("sub/turn-gone.txt")).unwrap();
    let now = store.snapshot(&limits).unwrap().tree;

    let as_of = store
        .as_of(&before, &now, store::AsOf::Sent(sent), &|_| None)
        .unwrap();
    let a = store.record(&before, point(1, Side::Before)).unwrap();
    let b = store.record(&as_of, point(1, Side::After)).unwrap();
    let mut seen: Vec<(String, super::Change)> = store
        .diff(&a.commit, &b.commit)
        .unwrap()
        .into_iter()
        .map(|f| (f.path, f.change))
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    use super::Change;
    assert_eq!(
        seen,
        vec![
            ("mine/gone.txt".to_string(), Change::Deleted),
            ("user-new.txt".to_string(), Change::Added),
            ("user.txt".to_string(), Change::Modified),
        ]
    );
    // Nothing changed after: the snapshot now is the workspace as of then.
    assert_eq!(
        store
            .as_of(&now, &now, store::AsOf::Sent(sent), &|_| None)
            .unwrap(),
        now
    );
}

#[test]
fn a_turn_s_end_holds_what_it_wrote_up_to_the_instant_it_ended() {
    use store::AsOf;
    let at = std::time::UNIX_EPOCH + Duration::new(1_000, 500);
    let just_before = at - Duration::from_nanos(1);
    // The end: a write at the instant is the turn's; one after is not.
    assert!(!AsOf::Ended(at).is_after(at));
    assert!(!AsOf::Ended(at).is_after(just_before));
    assert!(AsOf::Ended(at).is_after(at + Duration::from_nanos(1)));
    // The prompt: a timestamp within the clock's lag before it may be a
    // write after it (the kernel's clock runs a tick behind).
    assert!(AsOf::Sent(at).is_after(just_before));
    assert!(AsOf::Sent(at).is_after(at - Duration::from_millis(10)));
    assert!(!AsOf::Sent(at).is_after(at - Duration::from_secs(1)));
    // Whole seconds (a filesystem that keeps no more): up to 2 s later.
    let whole = std::time::UNIX_EPOCH + Duration::from_secs(999);
    assert!(AsOf::Sent(at).is_after(whole));
    assert!(!AsOf::Sent(at).is_after(whole - Duration::from_secs(3)));
}

/// A `git` the agent could plant: a script that leaves `marker` and fails.
fn plant_git(dir: &std::path::Path, marker: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).unwrap();
    let git = dir.join("git");
    std::fs::write(
        &git,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_git_planted_in_the_workspace_or_a_writable_dir_or_a_relative_path_never_runs() {
    // Outside the temporary directory, which is never trusted either.
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let dir = tempfile::tempdir_in(target).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let base = dir.path().join("cp");
    std::fs::write(work.join("a.txt"), "a").unwrap();
    let marker = dir.path().join("planted-git-ran");
    // An activated virtualenv in the workspace, the agent's state dir,
    // and a relative entry (which the cwd, the workspace, would resolve).
    plant_git(&work.join(".venv/bin"), &marker);
    let state = dir.path().join("agent-state/bin");
    plant_git(&state, &marker);
    plant_git(&work.join("rel"), &marker);
    let system = std::env::var_os("PATH").unwrap();
    let mut path = std::ffi::OsString::from(format!(
        "{}:{}:rel:",
        work.join(".venv/bin").display(),
        state.display()
    ));
    path.push(&system);
    let store = Store::open_on_path(
        &base,
        std::slice::from_ref(&work),
        &[],
        std::slice::from_ref(&dir.path().join("agent-state")),
        &path,
    )
    .unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    store.record(&snap.tree, point(1, Side::Before)).unwrap();
    assert!(!marker.exists(), "a planted git ran");
    // With no git outside them, checkpoints fail closed.
    let only = std::ffi::OsString::from(format!("{}:rel", work.join(".venv/bin").display()));
    let err = Store::open_on_path(&base, std::slice::from_ref(&work), &[], &[], &only)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no git program"), "{err}");
    assert!(!marker.exists(), "a planted git ran");
}

/// Issue 32, item 4: an ignored file with an executable bit, which a
/// tool may run, is in the turn's diff, marked as one (the red line), and
/// undone; an ignored plain file and an executable in an ignored
/// directory (a build's output) are not. Before, git's ignore rules hid it.
#[test]
fn an_ignored_executable_is_in_the_diff_as_a_tool_file_and_undone() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, work, base) = setup();
    let out = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(work.join(".gitignore"), "*.sh\n*.log\nbuild/\n").unwrap();
    std::fs::create_dir_all(work.join("build")).unwrap();
    // warden's own file, ignored and executable: never snapshotted.
    let own = work.join("own [1].sh");
    let store = Store::open(&base, std::slice::from_ref(&work), &[own]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    let exec = std::fs::Permissions::from_mode(0o755);
    for file in ["scripts/run.sh", "build/tool", "own [1].sh"] {
        std::fs::create_dir_all(work.join(file).parent().unwrap()).unwrap();
        std::fs::write(work.join(file), "#!/bin/sh\nevil\n").unwrap();
        std::fs::set_permissions(work.join(file), exec.clone()).unwrap();
    }
    std::fs::write(work.join("notes.log"), "x\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    let files: Vec<(String, bool)> = store
        .diff(&before.commit, &after.commit)
        .unwrap()
        .into_iter()
        .map(|f| (f.path, f.tool))
        .collect();
    assert_eq!(files, vec![("scripts/run.sh".to_string(), true)]);
    store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert!(!work.join("scripts/run.sh").exists());
    assert!(work.join("build/tool").exists(), "not warden's to undo");
}

/// Everything under `dir`, recursively (paths relative to it).
fn listing(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_directory_swapped_for_a_symlink_during_a_restore_lands_nothing_outside() {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    const FILES: usize = 300;
    let (dir, work, base) = setup();
    let outside = dir.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(work.join("d")).unwrap();
    let write_all = |text: &str| {
        for n in 0..FILES {
            std::fs::write(work.join(format!("d/f{n}")), text).unwrap();
        }
    };
    write_all("before\n");
    std::os::unix::fs::symlink(&outside, work.join("l")).unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    for round in 0..6 {
        write_all("after\n");
        let snap = store.snapshot(&Limits::default()).unwrap();
        let after = store
            .record(&snap.tree, point(2 + round, Side::After))
            .unwrap();
        // The agent's swap: `d` and a symlink to the home directory trade
        // places again and again (RENAME_EXCHANGE), as the restore runs.
        let stop = Arc::new(AtomicBool::new(false));
        // Odd rounds: again and again. Even rounds: once, the moment the
        // first file is back (the restore is under way, its checks done).
        let swapper = {
            let stop = Arc::clone(&stop);
            let (d, l) = (work.join("d"), work.join("l"));
            let first = work.join("d/f0");
            std::thread::spawn(move || {
                if round % 2 == 0 {
                    while !stop.load(Ordering::Relaxed) {
                        if std::fs::read(&first).is_ok_and(|b| b == b"before\n") {
                            let _ = renameat_with(CWD, &d, CWD, &l, RenameFlags::EXCHANGE);
                            return;
                        }
                    }
                    return;
                }
                while !stop.load(Ordering::Relaxed) {
                    let _ = renameat_with(CWD, &d, CWD, &l, RenameFlags::EXCHANGE);
                }
            })
        };
        let done = store.restore(&after.commit, &before.commit, &[], Resolution::Overwrite);
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(listing(&outside), Vec::<PathBuf>::new(), "round {round}");
        // Stopped by the swap, it says so.
        if let Err(err) = &done {
            let text = err.to_string();
            assert!(text.contains("symlink or not a directory"), "{text}");
            assert!(text.contains("nothing was written outside"), "{text}");
        }
        // Put the directory back in its place for the next round.
        if work.join("d").is_symlink() {
            renameat_with(
                CWD,
                work.join("d"),
                CWD,
                work.join("l"),
                RenameFlags::EXCHANGE,
            )
            .unwrap();
        }
        // Not stopped, every file is back.
        if done.is_ok() {
            assert_eq!(read(&work.join("d/f7")).as_deref(), Some("before\n"));
        }
    }
}

fn read(path: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn a_directory_already_a_symlink_stops_the_restore_before_any_write() {
    let (dir, work, base) = setup();
    let outside = dir.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(work.join("d")).unwrap();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    std::fs::write(work.join("d/f"), "before\n").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    std::fs::write(work.join("a.txt"), "b\n").unwrap();
    std::fs::write(work.join("d/f"), "after\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    std::fs::rename(work.join("d"), work.join("d.real")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("d")).unwrap();
    let err = store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap_err()
        .to_string();
    assert!(err.contains("d/f"), "{err}");
    assert!(err.contains("symlink"), "{err}");
    assert_eq!(listing(&outside), Vec::<PathBuf>::new());
    // Checked before anything was written: a.txt is untouched too.
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("b\n"));
}

#[test]
fn a_restore_puts_back_modes_and_symlinks_and_removes_emptied_directories() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, work, base) = setup();
    std::fs::write(work.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("run.sh", work.join("link")).unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    std::fs::remove_file(work.join("run.sh")).unwrap();
    std::fs::remove_file(work.join("link")).unwrap();
    std::fs::create_dir_all(work.join("new/deep")).unwrap();
    std::fs::write(work.join("new/deep/x"), "x").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap();
    let mode = std::fs::metadata(work.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o100, 0o100, "{mode:o}");
    assert_eq!(
        std::fs::read_link(work.join("link")).unwrap(),
        PathBuf::from("run.sh")
    );
    assert!(!work.join("new").exists());
}

#[test]
fn a_nested_repository_is_left_out_and_said_and_the_rest_is_still_undone() {
    let (_dir, work, base) = setup();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&work)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    // An empty one (`git init sub`), and one with a commit.
    git(&["init", "-q", "sub"]);
    std::fs::write(work.join("sub/s.txt"), "s\n").unwrap();
    git(&["init", "-q", "full"]);
    std::fs::write(work.join("full/f.txt"), "f\n").unwrap();
    git(&["-C", "full", "add", "f.txt"]);
    git(&[
        "-C",
        "full",
        "-c",
        "user.name=u",
        "-c",
        "user.email=u@x",
        "commit",
        "-q",
        "-m",
        "x",
    ]);
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    assert_eq!(snap.nested, vec!["full/".to_string(), "sub/".to_string()]);
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    std::fs::write(work.join("a.txt"), "changed\n").unwrap();
    std::fs::write(work.join("sub/s.txt"), "changed\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    let files: Vec<String> = store
        .diff(&before.commit, &after.commit)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(files, vec!["a.txt".to_string()]);
    store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("a\n"));
    assert_eq!(read(&work.join("sub/s.txt")).as_deref(), Some("changed\n"));
}

#[test]
fn a_file_seen_leaving_before_the_prompt_is_gone_from_its_before() {
    let (_dir, work, base) = setup();
    std::fs::write(work.join("hello.txt"), "hello\n").unwrap();
    std::fs::write(work.join("keep.txt"), "keep\n").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let base_tree = store.snapshot(&Limits::default()).unwrap().tree;
    let watcher = super::gone::Watcher::start().unwrap();
    watcher.watch(store.dirs_of(&base_tree).unwrap());
    // The user removes hello.txt; a moment later the prompt goes, and the
    // turn writes another file in the same directory.
    std::fs::remove_file(work.join("hello.txt")).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let sent = std::time::SystemTime::now();
    std::thread::sleep(Duration::from_millis(100));
    std::fs::write(work.join("direct.txt"), "turn\n").unwrap();
    std::fs::remove_file(work.join("keep.txt")).unwrap();
    let now = store.snapshot(&Limits::default()).unwrap().tree;
    let left = |p: &std::path::Path| watcher.left(p);
    let before = store
        .as_of(&base_tree, &now, store::AsOf::Sent(sent), &left)
        .unwrap();
    let files: Vec<(String, super::Change)> = store
        .diff(&base_tree, &before)
        .unwrap()
        .into_iter()
        .map(|f| (f.path, f.change))
        .collect();
    // hello.txt left before the prompt: the user's; keep.txt after: the
    // turn's, so the "before" still has it; direct.txt is the turn's.
    assert_eq!(
        files,
        vec![("hello.txt".to_string(), super::Change::Deleted)]
    );
}

#[test]
fn hooks_git_config_and_ignored_tool_files_are_in_the_diff_and_undone() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, work, base) = setup();
    let out = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(
        work.join(".gitignore"),
        ".envrc\n.vscode/\n.venv/\nnode_modules/\n.claude/settings.local.json\n",
    )
    .unwrap();
    std::fs::create_dir_all(work.join(".venv/bin")).unwrap();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    let config = std::fs::read(work.join(".git/config")).unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    // The turn plants a hook, points git at a program, and leaves
    // direnv and editor files that git ignores.
    std::fs::write(work.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    std::fs::set_permissions(
        work.join(".git/hooks/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let mut evil = config.clone();
    evil.extend_from_slice(b"[core]\n\tfsmonitor = ./evil\n");
    std::fs::write(work.join(".git/config"), &evil).unwrap();
    std::fs::write(work.join(".envrc"), "evil\n").unwrap();
    std::fs::create_dir_all(work.join(".vscode")).unwrap();
    std::fs::write(work.join(".vscode/tasks.json"), "{}\n").unwrap();
    std::fs::write(work.join(".venv/bin/git"), "#!/bin/sh\nevil\n").unwrap();
    // And what a later Claude Code or npm runs here, which git ignores.
    std::fs::create_dir_all(work.join(".claude")).unwrap();
    std::fs::write(work.join(".claude/settings.local.json"), "{\"hooks\":{}}\n").unwrap();
    std::fs::create_dir_all(work.join("node_modules/.bin")).unwrap();
    std::fs::write(work.join("node_modules/.bin/tsc"), "#!/bin/sh\nevil\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    let files: Vec<String> = store
        .diff(&before.commit, &after.commit)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(
        files,
        vec![
            ".claude/settings.local.json".to_string(),
            ".envrc".to_string(),
            ".venv/bin/git".to_string(),
            ".vscode/tasks.json".to_string(),
            ".git/config".to_string(),
            ".git/hooks/pre-commit".to_string(),
            "node_modules/.bin/tsc".to_string(),
        ]
    );
    assert!(
        files
            .iter()
            .all(|f| crate::state::checkpoints::runs_as_tool(f))
    );
    store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert!(!work.join(".git/hooks/pre-commit").exists());
    assert_eq!(std::fs::read(work.join(".git/config")).unwrap(), config);
    assert!(!work.join(".envrc").exists());
    assert!(!work.join(".vscode").exists());
    assert!(!work.join(".venv/bin/git").exists());
    assert!(!work.join(".claude/settings.local.json").exists());
    assert!(!work.join("node_modules/.bin/tsc").exists());
    assert_eq!(read(&work.join("a.txt")).as_deref(), Some("a\n"));
}

#[test]
fn a_hook_rewritten_at_once_with_the_same_size_is_seen() {
    let (_dir, work, base) = setup();
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::write(work.join(".git/hooks/pre-push"), "aaaa").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let first = store.snapshot(&Limits::default()).unwrap().tree;
    // In place: the same inode and size, perhaps the same clock tick.
    std::fs::write(work.join(".git/hooks/pre-push"), "bbbb").unwrap();
    let second = store.snapshot(&Limits::default()).unwrap().tree;
    let files: Vec<String> = store
        .diff(&first, &second)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(files, vec![".git/hooks/pre-push".to_string()]);
}

#[test]
fn a_restore_puts_a_directory_where_a_file_is_and_a_file_where_a_directory_is() {
    let (_dir, work, base) = setup();
    std::fs::create_dir_all(work.join("x")).unwrap();
    std::fs::write(work.join("x/y"), "y\n").unwrap();
    std::fs::write(work.join("d"), "file d\n").unwrap();
    let store = Store::open(&base, std::slice::from_ref(&work), &[]).unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let before = store.record(&snap.tree, point(1, Side::Before)).unwrap();
    std::fs::remove_dir_all(work.join("x")).unwrap();
    std::fs::write(work.join("x"), "file x\n").unwrap();
    std::fs::remove_file(work.join("d")).unwrap();
    std::fs::create_dir_all(work.join("d")).unwrap();
    std::fs::write(work.join("d/f"), "f\n").unwrap();
    let snap = store.snapshot(&Limits::default()).unwrap();
    let after = store.record(&snap.tree, point(1, Side::After)).unwrap();
    store
        .restore(&after.commit, &before.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert_eq!(read(&work.join("x/y")).as_deref(), Some("y\n"));
    assert_eq!(read(&work.join("d")).as_deref(), Some("file d\n"));
    // And forward again.
    store
        .restore(&before.commit, &after.commit, &[], Resolution::Overwrite)
        .unwrap();
    assert_eq!(read(&work.join("x")).as_deref(), Some("file x\n"));
    assert_eq!(read(&work.join("d/f")).as_deref(), Some("f\n"));
}

#[test]
fn a_removal_stamped_a_moment_after_the_turn_s_end_is_still_the_turn_s() {
    use store::AsOf;
    let end = std::time::SystemTime::now();
    // The watcher read it 100 ms late: the turn's.
    assert!(!AsOf::Ended(end).is_after_seen(end + Duration::from_millis(100)));
    // Seconds later: the user's.
    assert!(AsOf::Ended(end).is_after_seen(end + Duration::from_secs(2)));
    // Before a prompt, a late stamp is the turn's (doubt goes to it).
    assert!(AsOf::Sent(end).is_after_seen(end - Duration::from_millis(10)));
    assert!(!AsOf::Sent(end).is_after_seen(end - Duration::from_secs(1)));
}

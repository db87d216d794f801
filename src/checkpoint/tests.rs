#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use super::store::{Point, Side, Store, What};
use super::*;
use crate::state::checkpoints::Resolution;

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
    assert_eq!(diff[0].change, crate::state::checkpoints::Change::Deleted);
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

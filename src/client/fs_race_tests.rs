use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use std::fs;

/// Swaps `<root>/d` between a real directory and a symlink to
/// `outside`, each swap one atomic exchange, until `stop` is set.
fn swapper(root: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) {
    let link = root.join("d.link");
    symlink(&outside, &link).expect("symlink");
    let d = root.join("d");
    let mut swapped = false;
    while !stop.load(Ordering::Relaxed) {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &d,
            rustix::fs::CWD,
            &link,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .expect("exchange");
        swapped = !swapped;
    }
    if swapped {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &d,
            rustix::fs::CWD,
            &link,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .expect("exchange back");
    }
}

#[test]
fn swapping_a_directory_for_a_symlink_never_reaches_outside() {
    race(false);
}

#[test]
fn swapping_a_directory_for_a_symlink_never_reaches_outside_without_openat2() {
    race(true);
}

/// 1,000 writes and 10,000 reads of `<root>/d/f.txt` while `d` is
/// swapped for a symlink to a directory outside the root: nothing
/// outside is ever written or read.
fn race(walk: bool) {
    super::beneath::FORCE_WALK.with(|w| w.set(walk));
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("root");
    let outside = base.join("outside");
    fs::create_dir_all(root.join("d")).expect("mkdir d");
    fs::create_dir_all(&outside).expect("mkdir outside");
    fs::write(root.join("d/f.txt"), "inside\n").expect("write inside");
    fs::write(outside.join("f.txt"), "outside secret\n").expect("write outside");
    let roots = Roots::new(&root, &[]);

    let stop = Arc::new(AtomicBool::new(false));
    let swap = {
        let (root, outside, stop) = (root.clone(), outside.clone(), stop.clone());
        std::thread::spawn(move || swapper(root, outside, stop))
    };
    let target = root.join("d/f.txt");
    let mut leaked_reads = 0;
    for i in 0..1000 {
        if let Ok(real) = resolve(&roots, &target, true) {
            let _ = write_text(&roots, &real, &format!("inside {i}\n"));
        }
        for _ in 0..10 {
            if let Ok(real) = resolve(&roots, &target, false)
                && let Ok(text) = read_text(&roots, &real, None, None)
                && text.contains("outside")
            {
                leaked_reads += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swap.join().expect("swapper");

    let mut outside_names: Vec<_> = fs::read_dir(&outside)
        .expect("read outside")
        .map(|e| e.expect("entry").file_name())
        .collect();
    outside_names.sort();
    assert_eq!(
        (
            fs::read_to_string(outside.join("f.txt")).expect("outside file"),
            outside_names,
            leaked_reads
        ),
        (
            "outside secret\n".to_owned(),
            vec![std::ffi::OsString::from("f.txt")],
            0
        )
    );
}

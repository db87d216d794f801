//! Checkpoint figures: a 10,000-file, 200 MB workspace (random bytes, the
//! worst case for compression) snapshotted the first time and again after a
//! turn that changed 10 files (the goal: under 150 ms), a restore of those
//! 10 files, the disk a checkpoint adds, and the CPU the snapshots of one
//! turn take (git's, from `getrusage(RUSAGE_CHILDREN)`: on the worker
//! thread and git's processes, never on the loop; the prompt's "before"
//! runs as the turn begins), and the "before" of a prompt whose turn had
//! already changed 10 files when it ran (`Store::as_of`).
//! `WARDEN_BENCH_FILES` and `WARDEN_BENCH_MB` change the size. Run:
//! `cargo bench --bench checkpoints`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use warden::checkpoint::Bench;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// xorshift: the bench's random bytes.
fn fill(seed: &mut u64, out: &mut [u8]) {
    for chunk in out.chunks_mut(8) {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let bytes = seed.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

fn children_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let out = f();
    (out, started.elapsed())
}

fn change(work: &Path, round: usize, files: usize, seed: &mut u64) {
    for i in 0..10 {
        let n = (round * 997 + i * 101) % files;
        let path = work.join(format!("d{:02}/f{n:05}.txt", n % 100));
        let mut bytes = std::fs::read(&path).unwrap();
        let mut patch = [0u8; 64];
        fill(seed, &mut patch);
        bytes.extend_from_slice(&patch);
        std::fs::write(&path, bytes).unwrap();
    }
}

fn main() {
    let files = env("WARDEN_BENCH_FILES", 10_000);
    let mb = env("WARDEN_BENCH_MB", 200);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let base = dir.path().join("checkpoints");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let size = mb * 1024 * 1024 / files;
    let mut buf = vec![0u8; size];
    for n in 0..files {
        let sub = work.join(format!("d{:02}", n % 100));
        std::fs::create_dir_all(&sub).unwrap();
        fill(&mut seed, &mut buf);
        std::fs::write(sub.join(format!("f{n:05}.txt")), &buf).unwrap();
    }
    std::fs::write(work.join(".gitignore"), "target/\n").unwrap();
    println!("workspace: {files} files, {mb} MB");

    let mut bench = Bench::open(&base, &work).unwrap();
    let (first, took) = timed(|| bench.snapshot().unwrap());
    println!("first snapshot: {:.0} ms", took.as_secs_f64() * 1000.0);
    let disk_first = bench.disk_use(&base);
    println!("store after it: {:.1} MB", disk_first as f64 / 1_048_576.0);

    let (_, took) = timed(|| bench.snapshot().unwrap());
    println!(
        "snapshot, nothing changed: {:.0} ms",
        took.as_secs_f64() * 1000.0
    );

    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut disk = Vec::new();
    for round in 0..5 {
        change(&work, round, files, &mut seed);
        let before_disk = bench.disk_use(&base);
        let cpu_before = children_cpu();
        let (_, took) = timed(|| bench.snapshot().unwrap());
        cpu.push(children_cpu() - cpu_before);
        times.push(took);
        disk.push(bench.disk_use(&base) - before_disk);
    }
    times.sort();
    cpu.sort();
    disk.sort_unstable();
    println!(
        "snapshot after a turn that changed 10 files: median {:.0} ms (min {:.0}, max {:.0}; goal < 150)",
        times[2].as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
        times[4].as_secs_f64() * 1000.0
    );
    println!(
        "CPU of that snapshot (git processes): median {:.0} ms; a turn takes two",
        cpu[2].as_secs_f64() * 1000.0
    );
    println!(
        "disk per checkpoint after 10 changed files: median {:.0} KB",
        disk[2] as f64 / 1024.0
    );

    // A prompt whose turn wrote 10 files before its "before" snapshot ran:
    // the scan, then the 10 files taken back from the last snapshot.
    let last = bench.snapshot().unwrap();
    let mut as_of = Vec::new();
    for round in 5..10 {
        std::thread::sleep(Duration::from_millis(100));
        let sent = std::time::SystemTime::now();
        change(&work, round, files, &mut seed);
        let (tree, took) = timed(|| bench.as_of(&last, sent).unwrap());
        as_of.push(took);
        assert_ne!(tree, "", "a tree");
    }
    as_of.sort();
    println!(
        "\"before\" of a prompt whose turn already changed 10 files: median {:.0} ms (min {:.0}, max {:.0})",
        as_of[2].as_secs_f64() * 1000.0,
        as_of[0].as_secs_f64() * 1000.0,
        as_of[4].as_secs_f64() * 1000.0
    );

    let (changed, took) = timed(|| bench.restore(&first).unwrap());
    println!(
        "restore of {changed} files to the first checkpoint: {:.0} ms (with its own snapshot)",
        took.as_secs_f64() * 1000.0
    );
    println!(
        "store at the end: {:.1} MB",
        bench.disk_use(&base) as f64 / 1_048_576.0
    );
}

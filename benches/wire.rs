//! Bytes warden writes to the terminal while a paced answer streams:
//! `cargo bench --bench wire`.
//!
//! Runs the release `warden` in a pseudo-terminal of 120x40 with the demo
//! agent streaming `WARDEN_BENCH_DELTAS` (default 10,000) markdown chunks of
//! 64 bytes at `WARDEN_BENCH_RATE` (default 1,000) a second, counts every
//! byte read from the pty's master side from the prompt's Enter to the end
//! of the answer, and prints bytes per delta: once with the transcript
//! scrolled by the terminal (scroll regions), once with
//! `WARDEN_NO_SCROLL_REGION=1` (every moved row redrawn). The final screens
//! of both runs are compared. Figures, not assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/it/wire/pty.rs"]
mod pty;

use pty::{COLS, ROWS, Run, run};

/// Bytes of text in one delta (the demo agent's flood chunk).
const DELTA_BYTES: f64 = 64.0;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn report(label: &str, deltas: u64, run: &Run) {
    let per = run.bytes as f64 / deltas as f64;
    println!(
        "{label:<44} {per:>7.1} bytes/delta  ({:.2}x the text; {} bytes in {:.1} s)",
        per / DELTA_BYTES,
        run.bytes,
        run.elapsed.as_secs_f64()
    );
}

fn main() {
    if std::env::var_os("WARDEN_BENCH_LATENCY").is_some() {
        latency();
        return;
    }
    let deltas = env_or("WARDEN_BENCH_DELTAS", 10_000).max(1);
    let rate = env_or("WARDEN_BENCH_RATE", 1_000).max(1);
    println!("{deltas} deltas of 64 bytes at {rate}/s into a {COLS}x{ROWS} pty");
    let scrolled = run(deltas, rate, true);
    report("scroll regions (default)", deltas, &scrolled);
    let redrawn = run(deltas, rate, false);
    report("WARDEN_NO_SCROLL_REGION=1 (full redraw)", deltas, &redrawn);
    // The footer's clock may differ; the transcript rows must not.
    let rows = |s: &str| -> Vec<String> {
        s.lines()
            .take(usize::from(ROWS) - 4)
            .map(|row| row.trim_end().to_owned())
            .collect()
    };
    if std::env::var_os("WARDEN_BENCH_SHOW").is_some() {
        println!("{}", scrolled.screen);
    }
    println!(
        "final transcript rows equal: {}",
        rows(&scrolled.screen) == rows(&redrawn.screen)
    );
}

/// `WARDEN_BENCH_LATENCY=1 cargo bench --bench wire`: start-up (first
/// frame, open session, first prompt on screen; median of 5 runs) and
/// keystroke-to-screen while 1,000 deltas a second stream.
fn latency() {
    let mut runs: Vec<pty::Startup> = (0..5).map(|_| pty::startup()).collect();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    runs.sort_by_key(|r| r.ready);
    let mid = &runs[runs.len() / 2];
    println!(
        "start-up (median of {}): first frame {:.1} ms, session open {:.1} ms, first prompt shown {:.1} ms",
        runs.len(),
        ms(mid.first_frame),
        ms(mid.ready),
        ms(mid.prompt_shown)
    );
    let rate = env_or("WARDEN_BENCH_RATE", 1_000).max(1);
    let mut keys = pty::keystrokes("abcdefghijklmnopqrst", rate);
    keys.sort();
    println!(
        "keystroke to screen while {rate} deltas/s stream ({} keys): median {:.1} ms, max {:.1} ms (a frame is 16 ms)",
        keys.len(),
        ms(keys[keys.len() / 2]),
        ms(keys[keys.len() - 1])
    );
}

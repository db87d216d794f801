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
//! of both runs are compared. Next to the bytes, the CPU seconds warden
//! itself spent (user and system, from `/proc/<pid>/stat`). Then the same
//! stream at 80x24 and 200x60, and at 120x40 with the terminal unfocused.
//! `WARDEN_BENCH_REPEAT` (default 1) runs each case that many times;
//! `WARDEN_BENCH_EXE` runs another build of warden (an older commit's) in
//! the same harness.
//! Figures, not assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/it/wire/pty.rs"]
mod pty;

use pty::{COLS, ROWS, Run, Setup, run_with};

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
        "{label:<44} {:>5.2} CPU-s {per:>7.1} bytes/delta  ({:.2}x the text; {} bytes in {:.1} s)",
        run.cpu,
        per / DELTA_BYTES,
        run.bytes,
        run.elapsed.as_secs_f64()
    );
}

/// Run `setup` `repeat` times, report each, and keep the last.
fn case(label: &str, deltas: u64, rate: u64, repeat: u64, setup: Setup) -> Run {
    let mut last = None;
    for _ in 0..repeat {
        let run = run_with(deltas, rate, setup);
        report(label, deltas, &run);
        last = Some(run);
    }
    last.expect("at least one run")
}

fn main() {
    if std::env::var_os("WARDEN_BENCH_LATENCY").is_some() {
        latency();
        return;
    }
    let deltas = env_or("WARDEN_BENCH_DELTAS", 10_000).max(1);
    let rate = env_or("WARDEN_BENCH_RATE", 1_000).max(1);
    println!("{deltas} deltas of 64 bytes at {rate}/s into a {COLS}x{ROWS} pty");
    let repeat = env_or("WARDEN_BENCH_REPEAT", 1).max(1);
    let only = std::env::var("WARDEN_BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    let base = Setup::default();
    let scrolled = case("scroll regions (default)", deltas, rate, repeat, base);
    let redrawn = case(
        "WARDEN_NO_SCROLL_REGION=1 (full redraw)",
        deltas,
        rate,
        repeat,
        Setup {
            scroll_region: false,
            ..base
        },
    );
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
    if wanted("unfocused") {
        let label = format!("{COLS}x{ROWS}, terminal unfocused");
        let setup = Setup {
            unfocused: true,
            ..base
        };
        case(&label, deltas, rate, repeat, setup);
    }
    for (cols, rows) in [(80, 24), (200, 60)] {
        if !wanted("sizes") {
            break;
        }
        for scroll_region in [true, false] {
            let how = if scroll_region {
                "scroll regions"
            } else {
                "full redraw"
            };
            let label = format!("{cols}x{rows}, {how}");
            let setup = Setup {
                size: (cols, rows),
                scroll_region,
                ..base
            };
            case(&label, deltas, rate, repeat, setup);
        }
    }
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

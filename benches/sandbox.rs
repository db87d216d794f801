//! What the sandbox adds to starting a process: `cargo bench --bench sandbox`.
//!
//! An agent's spawn and a `terminal/create` each build a Landlock ruleset
//! in the parent (the walk of `/` and of the directories that hold a hidden
//! path, one open and one rule per entry), make a private temporary
//! directory, and call `restrict_self` in the child. Measured here: the
//! ruleset alone, and the spawn of `/bin/true` to its exit with and without
//! it, interleaved, medians of `WARDEN_BENCH_RUNS` (default 200) each.
//! Nothing is paid per call after the spawn. Figures, not assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use warden::sandbox::{Confinement, Profile, ProfileInput, SandboxMode, Support, kernel_support};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    if let Support::Missing(why) = kernel_support() {
        println!("skipped: no Landlock: {why}");
        return;
    }
    let runs: usize = std::env::var("WARDEN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let cwd = std::env::current_dir().unwrap();
    let profile = Profile::new(&ProfileInput {
        agent: "bench",
        command_line: vec!["npx", "@zed-industries/claude-agent-acp"],
        mode: SandboxMode::WorkspaceWrite,
        workspace: vec![cwd.clone()],
        home: std::env::var_os("HOME").map(Into::into),
        ..ProfileInput::default()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut prepare, mut plain, mut confined) = (Vec::new(), Vec::new(), Vec::new());
    let mut rules = 0;
    runtime.block_on(async {
        for _ in 0..runs {
            let start = Instant::now();
            let confinement = Confinement::prepare(&profile).unwrap();
            prepare.push(start.elapsed());
            rules = confinement.rules();
            drop(confinement);

            let start = Instant::now();
            let status = tokio::process::Command::new("/bin/true")
                .status()
                .await
                .unwrap();
            plain.push(start.elapsed());
            assert!(status.success());

            let start = Instant::now();
            let confinement = Confinement::prepare(&profile).unwrap();
            let mut command = tokio::process::Command::new("/bin/true");
            confinement.apply(&mut command);
            let status = command.status().await.unwrap();
            drop(confinement);
            confined.push(start.elapsed());
            assert!(status.success());
        }
    });
    let (prepare, plain, confined) = (median(prepare), median(plain), median(confined));
    println!("sandbox, {runs} runs each, medians ({rules} Landlock rules):");
    println!(
        "  ruleset and private TMPDIR (made and removed) {:>8.3} ms",
        ms(prepare)
    );
    println!(
        "  spawn /bin/true to exit, unconfined           {:>8.3} ms",
        ms(plain)
    );
    println!(
        "  spawn /bin/true to exit, confined             {:>8.3} ms",
        ms(confined)
    );
    println!(
        "  added to a spawn (agent or terminal/create)   {:>8.3} ms",
        ms(confined.saturating_sub(plain))
    );
}

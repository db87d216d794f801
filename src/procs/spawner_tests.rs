use std::time::Duration;

use super::*;

/// Whether `child` still runs `wait` after `pause` (bounded polling).
async fn still_runs_after(child: &mut tokio::process::Child, pause: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + pause;
    while tokio::time::Instant::now() < deadline {
        if child.try_wait().expect("try_wait").is_some() {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Whether `child` has exited within `limit`, and by which signal.
async fn killed_within(child: &mut tokio::process::Child, limit: Duration) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    let status = tokio::time::timeout(limit, child.wait()).await.ok()?;
    status.expect("wait").signal()
}

fn sleeper() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sleep");
    command.arg("30").kill_on_drop(true);
    command
}

#[test]
fn every_fork_happens_on_one_thread_that_is_not_the_callers() {
    let caller = std::thread::current().id();
    let first = on_spawner(|| std::thread::current().id()).expect("the spawner answers");
    let name = on_spawner(|| std::thread::current().name().map(str::to_owned)).expect("answers");
    let from_another = std::thread::spawn(|| on_spawner(|| std::thread::current().id()))
        .join()
        .expect("joined")
        .expect("answers");
    assert_ne!(first, caller);
    assert_eq!(first, from_another, "one spawner thread for every caller");
    assert_eq!(name.as_deref(), Some("warden-spawner"));
}

/// The agent is prepared on a blocking-pool thread, which exits once idle:
/// a process it asked for lives on, as the fork was the spawner's.
#[tokio::test]
async fn a_process_outlives_the_thread_that_asked_for_it() {
    let runtime = tokio::runtime::Handle::current();
    let mut child = std::thread::spawn(move || {
        let _runtime = runtime.enter();
        spawn(sleeper())
    })
    .join()
    .expect("joined")
    .expect("sleep starts");
    // The asking thread is gone; a fork made on it would have had SIGKILL.
    assert!(
        still_runs_after(&mut child, Duration::from_millis(500)).await,
        "the process died with the thread that asked for it"
    );
    child.start_kill().expect("kill");
    let _ = child.wait().await;
}

/// The hook really sets the death signal, and it survives `exec`: a fork
/// made in place on a thread that then exits is SIGKILLed with it (what
/// the spawner thread is there to avoid, and what ends every process it
/// forked when warden's process dies).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_hook_kills_the_process_when_its_forking_thread_exits() {
    let runtime = tokio::runtime::Handle::current();
    let mut child = std::thread::spawn(move || {
        let _runtime = runtime.enter();
        let mut command = sleeper();
        die_with_warden(&mut command);
        command.spawn()
    })
    .join()
    .expect("joined")
    .expect("sleep starts");
    assert_eq!(
        killed_within(&mut child, Duration::from_secs(10)).await,
        Some(libc::SIGKILL),
        "the process outlived the thread that forked it"
    );
}

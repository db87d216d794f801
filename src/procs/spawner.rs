//! No process warden forks for an agent outlives a warden that was killed
//! outright (`kill -9`, the OOM killer), which ends nothing itself.
//!
//! Each such process (an agent process, a terminal, a sign-in's program)
//! gets `PR_SET_PDEATHSIG(SIGKILL)` in the last of its `pre_exec` hooks,
//! after every hook that may change its credentials (the sandbox's user
//! namespace: the kernel clears the signal when credentials change), then
//! the race check: if its parent is already not warden, it exits at once.
//!
//! The kernel sends that signal when the *thread* that forked exits, not
//! the process. The agent processes are prepared on tokio's blocking pool,
//! whose threads exit after a while idle; so every such fork happens on
//! one thread of its own, started once, which lives as long as warden
//! (jobs come over a channel, each answered over one of its own). The
//! preparation (Landlock rules, the proxy's door) stays where it is; only
//! the `fork` moves.
//!
//! What this does not reach: the processes those start (an agent's shells
//! and MCP servers, a terminal's children), which warden did not fork and
//! which have no death signal (even one reparented to warden, its
//! subreaper). They are ended with their agent or terminal on every exit
//! warden makes (`procs::Tree`), but a SIGKILLed warden ends nothing: those
//! that do not end on their own stay, reparented, in their cgroup, until
//! the next warden's sweep ends them (`procs::sweep`; see
//! `docs/ARCHITECTURE.md`).

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

/// A fork to make on the spawner thread.
type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's inbox; `None` when it could not be started.
static JOBS: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();

/// The spawner thread's inbox, the thread started on first use.
fn jobs() -> io::Result<&'static mpsc::Sender<Job>> {
    JOBS.get_or_init(|| {
        let (sender, jobs) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("warden-spawner".into())
            .spawn(move || {
                for job in jobs {
                    // A panicking job must not end this thread: every
                    // process forked here would get its death signal.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            });
        match started {
            Ok(_) => Some(sender),
            Err(err) => {
                tracing::warn!("cannot start the spawner thread: {err}");
                None
            }
        }
    })
    .as_ref()
    .ok_or_else(|| io::Error::other("warden's spawner thread could not be started"))
}

/// Run `job` on the spawner thread and wait for its answer. Fails closed:
/// no thread, no fork. (Never call it from a job: it would wait for itself.)
pub fn on_spawner<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> io::Result<T> {
    let gone = || io::Error::other("warden's spawner thread is gone");
    let (answer, answered) = mpsc::sync_channel(1);
    jobs()?
        .send(Box::new(move || {
            let _ = answer.send(job());
        }))
        .map_err(|_| gone())?;
    answered.recv().map_err(|_| gone())
}

/// Start `command` on the spawner thread, registered with the current
/// tokio runtime, with the parent-death signal set in a hook after all of
/// its others. It blocks until the child is forked and has `exec`uted (or
/// failed to): call it where a blocking `spawn` could be called.
pub fn spawn(mut command: tokio::process::Command) -> io::Result<tokio::process::Child> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| io::Error::other("no async runtime to start the process on"))?;
    die_with_warden(&mut command);
    on_spawner(move || {
        // Its pipes and its exit are the runtime's to watch.
        let _runtime = runtime.enter();
        command.spawn()
    })?
}

/// The last `pre_exec` hook of `command`: SIGKILL when the thread that
/// forked it exits, and an exit at once if warden is gone already.
#[cfg(target_os = "linux")]
fn die_with_warden(command: &mut tokio::process::Command) {
    // The parent as the child will see it (`getppid`), taken before the fork.
    // SAFETY: a plain query.
    let warden = unsafe { libc::getpid() };
    // SAFETY: the hook runs in the child between fork and exec and only
    // makes system calls with integer arguments; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // warden died between the fork and the `prctl`: the signal
            // will never come.
            if libc::getppid() != warden {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Elsewhere there is no parent-death signal: the fork still happens on the
/// spawner thread.
#[cfg(not(target_os = "linux"))]
fn die_with_warden(_command: &mut tokio::process::Command) {}

#[cfg(test)]
#[path = "spawner_tests.rs"]
mod tests;

//! What every process warden starts for an agent gets, confined or not:
//! its own session, so it has no controlling terminal (no `/dev/tty`, no
//! way to push keys into warden's input, become the terminal's foreground
//! group or be reached by the terminal's signals), and no descriptor of
//! warden's but 0, 1 and 2.

use std::os::unix::process::CommandExt as _;

/// Start `command` in a session of its own (it is the leader of its
/// process group too, whose id is its pid), with every descriptor above 2
/// closed at `exec`. Call it before any other `pre_exec` hook.
pub fn own_session(command: &mut tokio::process::Command) {
    let last = last_fd();
    // SAFETY: the hook runs in the child between fork and exec and only
    // makes system calls; it allocates nothing.
    unsafe {
        command.pre_exec(move || detach(last));
    }
}

/// The same, for a `std` command.
pub fn own_session_std(command: &mut std::process::Command) {
    let last = last_fd();
    // SAFETY: as in `own_session`.
    unsafe {
        command.pre_exec(move || detach(last));
    }
}

/// The highest descriptor to mark where `close_range` is missing.
fn last_fd() -> libc::c_int {
    // SAFETY: a plain query.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    libc::c_int::try_from(max.clamp(256, 65_536)).unwrap_or(65_536)
}

/// In the child: a new session, and close-on-exec on every descriptor
/// above 2 (not closed now: std's pipe that reports a failed `exec` is
/// among them, and the sandbox's hooks after this one may still need
/// theirs, such as the Landlock ruleset).
fn detach(last: libc::c_int) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::setsid() < 0 {
            return Err(std::io::Error::last_os_error());
        }
        #[cfg(target_os = "linux")]
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return Ok(());
        }
        for fd in 3..=last {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}

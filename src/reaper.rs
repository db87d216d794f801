//! Process groups warden started (the agent, the agent's terminals), so that
//! a panic, which ends warden at once, does not leave them running; and the
//! processes that left those groups.
//!
//! A process group does not hold everything: a terminal's command can
//! `setsid` a child into a session of its own. On Linux warden is a child
//! subreaper ([`become_subreaper`]), so every orphaned descendant becomes
//! warden's own child instead of init's, and [`end_descendants`], on every
//! way out, ends whatever is still warden's child by then.

use std::sync::Mutex;

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Remember a process group to end if warden dies.
pub(crate) fn register(pgid: u32) {
    if let (Ok(pgid), Ok(mut groups)) = (i32::try_from(pgid), GROUPS.lock()) {
        groups.push(pgid);
    }
}

/// Forget a process group that ended normally.
pub(crate) fn unregister(pgid: u32) {
    if let (Ok(pgid), Ok(mut groups)) = (i32::try_from(pgid), GROUPS.lock()) {
        groups.retain(|g| *g != pgid);
    }
}

/// Send `signal` to the process group `pgid`. A group that is already gone
/// yields ESRCH, which is fine: the caller wanted it gone.
pub(crate) fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// SIGKILL every registered group, and every agent's cgroup (for the
/// panic path only).
pub(crate) fn kill_all() {
    kill_groups();
    crate::procs::kill_all();
}

/// SIGKILL every registered group.
fn kill_groups() {
    let groups = match GROUPS.lock() {
        Ok(groups) => groups.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for pgid in groups {
        signal_group(pgid, libc::SIGKILL);
    }
}

/// Make warden the parent of every orphaned process it started, however
/// deep (Linux `PR_SET_CHILD_SUBREAPER`; elsewhere nothing happens).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integers.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            tracing::warn!(
                "cannot become a child subreaper: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// SIGKILL every process that is still warden's child, with its process
/// group unless that is warden's own, and reap them; again for the ones
/// that reparent meanwhile, a bounded number of rounds. Call it once the
/// agents were given their chance to end.
pub fn end_descendants() {
    let me = std::process::id();
    // SAFETY: getpgrp has no preconditions.
    let own_group = unsafe { libc::getpgrp() };
    for _ in 0..20 {
        let children = children_of(me);
        if children.is_empty() {
            return;
        }
        for &(pid, pgid) in &children {
            if pgid > 1 && pgid != own_group {
                signal_group(pgid, libc::SIGKILL);
            }
            // SAFETY: kill has no memory-safety preconditions; a process
            // already gone yields ESRCH.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        for &(pid, _) in &children {
            reap(pid);
        }
    }
}

/// Wait (briefly) for a killed child and collect its status.
fn reap(pid: libc::pid_t) {
    for _ in 0..100 {
        let mut status = 0;
        // SAFETY: waitpid writes only into `status`.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc != 0 {
            return; // reaped, or not ours to wait for (ECHILD)
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `(pid, process group)` of each process whose parent is `parent`, from
/// `/proc` (empty where there is no `/proc`).
fn children_of(parent: u32) -> Vec<(libc::pid_t, libc::pid_t)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (ppid, pgid) = parse_stat(&stat)?;
            (ppid == parent).then_some((pid, pgid))
        })
        .collect()
}

/// The parent pid and process group of a `/proc/PID/stat` line: the
/// fields after the command name, which is in parentheses and may itself
/// hold spaces and parentheses.
fn parse_stat(stat: &str) -> Option<(u32, libc::pid_t)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((ppid, pgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names() {
        assert_eq!(
            parse_stat("42 (a) b (c)) S 7 9 9 0 -1"),
            Some((7, 9)),
            "the last parenthesis ends the name"
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn registered_groups_are_killed() {
        let mut child = std::process::Command::new("sleep");
        std::os::unix::process::CommandExt::process_group(&mut child, 0);
        let mut child = child.arg("30").spawn().expect("sleep runs");
        register(child.id());
        // The groups only: every cgroup of this process's trees too would
        // end what other tests run meanwhile.
        kill_groups();
        let status = child.wait().expect("reaped");
        assert!(!status.success(), "killed: {status:?}");
        unregister(child.id());
        assert!(
            GROUPS
                .lock()
                .map(|g| !g.contains(&(child.id() as i32)))
                .unwrap_or(false)
        );
    }
}

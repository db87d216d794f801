//! Process groups warden started (the agent, the agent's terminals), so that
//! a panic, which ends warden at once, does not leave them running.

use std::sync::Mutex;

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Remember a process group to end if warden dies.
pub fn register(pgid: u32) {
    if let (Ok(pgid), Ok(mut groups)) = (i32::try_from(pgid), GROUPS.lock()) {
        groups.push(pgid);
    }
}

/// Forget a process group that ended normally.
pub fn unregister(pgid: u32) {
    if let (Ok(pgid), Ok(mut groups)) = (i32::try_from(pgid), GROUPS.lock()) {
        groups.retain(|g| *g != pgid);
    }
}

/// SIGKILL every registered group (for the panic path only).
pub fn kill_all() {
    let groups = match GROUPS.lock() {
        Ok(groups) => groups.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for pgid in groups {
        // SAFETY: killpg has no memory-safety preconditions; a group that is
        // already gone yields ESRCH, which is fine.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_groups_are_killed() {
        let mut child = std::process::Command::new("sleep");
        std::os::unix::process::CommandExt::process_group(&mut child, 0);
        let mut child = child.arg("30").spawn().expect("sleep runs");
        register(child.id());
        kill_all();
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

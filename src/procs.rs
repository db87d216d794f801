//! Every process an agent started, however it left: ended with the agent.
//!
//! A process group does not hold an agent's processes: a daemon that
//! double-forks and calls `setsid` (`setsid nohup CMD &`) leaves it, and
//! would keep writing the workspace after the chat moved to a read-only
//! process in Plan, or after warden quit. So each agent process gets a
//! [`Tree`]:
//!
//! - a cgroup (v2) of its own, made beneath warden's own cgroup where warden
//!   may write there (root; a user whose systemd slice is delegated), which
//!   the agent joins between `fork` and `exec` (one `write` of `0` to its
//!   `cgroup.procs`, opened beforehand). No process leaves a cgroup without
//!   write access to cgroup files, which the sandbox does not give.
//!   Ending it is `cgroup.kill` (Linux 5.14), else killing what
//!   `cgroup.procs` lists until it is empty;
//! - and always, as a fallback and in addition, a scan of `/proc`: the
//!   agent, its process group, every process that carries the tree's
//!   environment tag ([`TAG_VAR`], inherited by whatever the agent starts
//!   unless a process clears its environment), and every descendant of
//!   those, repeated until a scan finds none. warden is a child subreaper
//!   (`reaper::become_subreaper`), so orphans reparent to warden, which
//!   reaps the ones it killed.
//!
//! Without a cgroup, a process that both leaves the session and clears its
//! environment is not found here; it is still warden's child, and
//! `reaper::end_descendants` ends it when warden exits.

pub(crate) mod spawner;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable that marks an agent's processes.
pub(crate) const TAG_VAR: &str = "WARDEN_AGENT_TREE";

/// How many scans [`Tree::end`] makes at most.
const ROUNDS: usize = 50;

/// The cgroups of the trees alive, for the panic path.
static CGROUPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The processes of one agent process: its cgroup, where there is one, and
/// its environment tag.
#[derive(Debug)]
pub struct Tree {
    tag: String,
    cgroup: Option<Cgroup>,
}

#[derive(Debug)]
struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, open for writing: the child writes `0` to it.
    procs: std::fs::File,
}

impl Tree {
    /// A tree for an agent process about to start: a fresh tag, and a
    /// cgroup where warden can make one.
    pub fn prepare() -> Tree {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let cgroup = make_cgroup(&tag);
        if let Some(cgroup) = &cgroup
            && let Ok(mut all) = CGROUPS.lock()
        {
            all.push(cgroup.dir.clone());
        }
        tracing::info!(
            cgroup = ?cgroup.as_ref().map(|c| c.dir.display().to_string()),
            "agent process tree"
        );
        Tree { tag, cgroup }
    }

    /// Whether the processes are held by a cgroup (else only the scan finds them).
    #[cfg(test)]
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// The process `command` starts joins the tree: the tag in its
    /// environment, and (where there is a cgroup) a `pre_exec` hook that
    /// moves it into the cgroup: one `write`, nothing allocated.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        command.env(TAG_VAR, &self.tag);
        let Some(cgroup) = &self.cgroup else {
            return;
        };
        let fd = std::os::fd::AsRawFd::as_raw_fd(&cgroup.procs);
        // SAFETY: the hook runs in the child between fork and exec; it makes
        // one system call on a descriptor the parent keeps open (this
        // `Tree` outlives the spawn), allocating nothing. A failed move is
        // not fatal: the scan still finds the process.
        unsafe {
            command.pre_exec(move || {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                Ok(())
            });
        }
    }

    /// End every process of the tree: `leader` (the agent process, which
    /// may be gone), its group, the cgroup, and what the scan finds. Blocks
    /// (briefly: at most [`ROUNDS`] scans, 10 ms apart).
    pub fn end(&self, leader: Option<u32>) {
        let leader = leader.and_then(|p| libc::pid_t::try_from(p).ok());
        let mut killed: HashSet<libc::pid_t> = HashSet::new();
        if let Some(cgroup) = &self.cgroup {
            killed.extend(cgroup.kill());
        }
        for _ in 0..ROUNDS {
            let found = scan(&self.tag, leader);
            if found.is_empty() {
                break;
            }
            for &pid in &found {
                // SAFETY: kill has no memory-safety preconditions; a
                // process already gone yields ESRCH.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            killed.extend(found);
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup.wait_empty();
        }
        // The leader is tokio's to reap; the orphans that came to warden are ours.
        killed.retain(|pid| Some(*pid) != leader);
        reap_zombies(&killed);
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if let Some(cgroup) = &self.cgroup {
            if let Err(err) = std::fs::remove_dir(&cgroup.dir) {
                tracing::debug!(dir = %cgroup.dir.display(), "cgroup not removed: {err}");
            }
            if let Ok(mut all) = CGROUPS.lock() {
                all.retain(|dir| *dir != cgroup.dir);
            }
        }
    }
}

/// SIGKILL every process of every live tree's cgroup (the panic path).
pub fn kill_all() {
    let dirs = match CGROUPS.lock() {
        Ok(all) => all.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for dir in dirs {
        let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    }
}

impl Cgroup {
    /// One found on disk, not joined (its `cgroup.procs` open to read).
    fn found(dir: PathBuf) -> Option<Cgroup> {
        let procs = std::fs::File::open(dir.join("cgroup.procs")).ok()?;
        Some(Cgroup { dir, procs })
    }

    /// Kill every process in it: `cgroup.kill`, else each pid of
    /// `cgroup.procs` until it is empty. The pids seen.
    fn kill(&self) -> Vec<libc::pid_t> {
        let seen = self.pids();
        if std::fs::write(self.dir.join("cgroup.kill"), "1").is_ok() {
            return seen;
        }
        let mut all = seen;
        for _ in 0..ROUNDS {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            for &pid in &pids {
                // SAFETY: as in `Tree::end`.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            all.extend(pids);
            std::thread::sleep(Duration::from_millis(10));
        }
        all
    }

    fn pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Wait (up to a second) until no process is left in it.
    fn wait_empty(&self) {
        for _ in 0..100 {
            let events =
                std::fs::read_to_string(self.dir.join("cgroup.events")).unwrap_or_default();
            if events.lines().any(|l| l.trim() == "populated 0") || self.pids().is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A fresh cgroup beneath warden's own (cgroup v2), with its `cgroup.procs`
/// open; none where there is no cgroup v2 or warden may not write there.
fn make_cgroup(tag: &str) -> Option<Cgroup> {
    let mount = cgroup2_mount(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)?;
    let own = own_cgroup(&std::fs::read_to_string("/proc/self/cgroup").ok()?)?;
    let parent = mount.join(own.trim_start_matches('/'));
    sweep(&parent);
    let dir = parent.join(format!("warden-{}-{}", std::process::id(), &tag[..12]));
    if let Err(err) = std::fs::create_dir(&dir) {
        tracing::info!(parent = %parent.display(), "no cgroup for the agent ({err}): its processes are found by a scan");
        return None;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
    {
        Ok(procs) => Some(Cgroup { dir, procs }),
        Err(err) => {
            tracing::info!(dir = %dir.display(), "the agent's cgroup cannot be joined ({err})");
            let _ = std::fs::remove_dir(&dir);
            None
        }
    }
}

/// End what a warden that is gone left in `parent`, and remove its
/// cgroups. A warden killed outright (`kill -9`) ends nothing: what its
/// agents and terminals started themselves, and that did not end with
/// them, is still in their cgroups (`spawner` ends those it forked). Only
/// cgroups named for a warden whose pid runs no more are touched, each
/// ended whole (`cgroup.kill`) before it goes.
fn sweep(parent: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("warden-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            if let Some(left) = Cgroup::found(entry.path())
                && !left.pids().is_empty()
            {
                let ended = left.kill();
                tracing::info!(cgroup = %entry.path().display(), ?ended, "ended what a warden that is gone left running");
                left.wait_empty();
            }
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Where cgroup v2 is mounted, from `/proc/self/mountinfo`.
fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        left.split_whitespace().nth(4).map(PathBuf::from)
    })
}

/// warden's cgroup v2 path, from `/proc/self/cgroup` (`0::PATH`).
fn own_cgroup(cgroups: &str) -> Option<String> {
    cgroups
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|path| path.trim().to_string())
        // A path the kernel marks as outside this namespace's view is no use.
        .filter(|path| path.starts_with('/') && !path.contains(".."))
}

/// One process of `/proc`, as the scan needs it.
struct Proc {
    ppid: libc::pid_t,
    pgid: libc::pid_t,
    zombie: bool,
}

/// The live processes of the tree: the leader, its process group, those
/// whose environment carries `tag`, and every descendant of those; never
/// warden itself.
fn scan(tag: &str, leader: Option<libc::pid_t>) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let procs: HashMap<libc::pid_t, Proc> = dir
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parse_stat(&stat)?))
        })
        .collect();
    let marker = format!("{TAG_VAR}={tag}");
    let roots: HashSet<libc::pid_t> = procs
        .iter()
        .filter(|(pid, p)| {
            Some(**pid) == leader
                || leader.is_some_and(|l| l > 1 && p.pgid == l)
                || carries(**pid, &marker)
        })
        .map(|(pid, _)| *pid)
        .collect();
    let in_tree = |mut pid: libc::pid_t| {
        for _ in 0..procs.len() {
            if roots.contains(&pid) {
                return true;
            }
            match procs.get(&pid) {
                Some(p) if p.ppid > 1 && p.ppid != pid => pid = p.ppid,
                _ => return false,
            }
        }
        false
    };
    procs
        .iter()
        .filter(|(pid, p)| !p.zombie && **pid != me && in_tree(**pid))
        .map(|(pid, _)| *pid)
        .collect()
}

/// Whether process `pid`'s environment holds `marker` (`NAME=VALUE`).
fn carries(pid: libc::pid_t, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == marker.as_bytes()))
}

/// The parent, process group and whether it is a zombie, from a
/// `/proc/PID/stat` line (the command name is in parentheses and may
/// itself hold spaces and parentheses).
fn parse_stat(stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(Proc {
        ppid,
        pgid,
        zombie: state == "Z" || state == "X",
    })
}

/// Collect the exit of each of `pids` that became warden's own child (an
/// orphan warden adopted as subreaper), once it is gone.
fn reap_zombies(pids: &HashSet<libc::pid_t>) {
    let me = std::process::id();
    for &pid in pids {
        for _ in 0..20 {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                break;
            };
            let Some(proc) = parse_stat(&stat) else {
                break;
            };
            if u32::try_from(proc.ppid).ok() != Some(me) {
                break;
            }
            if proc.zombie {
                let mut status = 0;
                // SAFETY: waitpid writes only into `status`; the pid is a
                // child of warden that no one else waits for.
                unsafe {
                    libc::waitpid(pid, &mut status, libc::WNOHANG);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup2_mount_and_own_path_are_read() {
        let mountinfo = "25 30 0:22 / /sys/fs/cgroup rw shared:9 - tmpfs tmpfs rw\n\
                         35 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(mountinfo),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_mount("1 2 0:1 / / rw - ext4 /dev/x rw\n"), None);
        assert_eq!(
            own_cgroup("4:memory:/x\n0::/user.slice/app.scope\n"),
            Some("/user.slice/app.scope".to_string())
        );
        assert_eq!(own_cgroup("0::/../../x\n"), None);
        assert_eq!(own_cgroup("4:memory:/x\n"), None);
    }

    #[test]
    fn stat_lines_give_parent_group_and_zombies() {
        let p = parse_stat("42 (a) b (c)) Z 7 9 9 0 -1").expect("parses");
        assert_eq!((p.ppid, p.pgid, p.zombie), (7, 9, true));
        assert!(parse_stat("garbage").is_none());
    }

    /// A tagged process that left its group and session (`setsid`), with
    /// its parent gone, is found and ended, by the cgroup (where this test
    /// runs with the right to make one) and by the scan alone.
    #[tokio::test]
    async fn a_daemon_that_left_the_session_is_ended_with_its_tree() {
        let with_cgroup = Tree::prepare();
        if !with_cgroup.has_cgroup() {
            eprintln!("no cgroup here: only the scan is tested");
        }
        daemon_is_ended(with_cgroup).await;
        let tag = uuid::Uuid::new_v4().simple().to_string();
        daemon_is_ended(Tree { tag, cgroup: None }).await;
    }

    async fn daemon_is_ended(tree: Tree) {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("daemon.pid");
        let mut command = tokio::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg("setsid sh -c 'echo $$ > \"$1\"; while :; do sleep 0.05; done' sh \"$1\" </dev/null >/dev/null 2>&1 &")
            .arg("sh")
            .arg(&pid_file)
            .process_group(0);
        tree.apply(&mut command);
        let status = command.status().await.expect("sh runs");
        assert!(status.success());
        let mut daemon = None;
        for _ in 0..200 {
            // Whole lines only: a read between the file's creation and
            // the shell's write sees it empty or cut.
            daemon = std::fs::read_to_string(&pid_file)
                .ok()
                .filter(|t| t.ends_with('\n'))
                .and_then(|t| t.trim().parse::<libc::pid_t>().ok());
            if daemon.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let daemon = daemon.expect("the daemon started");
        let alive = |pid: libc::pid_t| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| parse_stat(&s))
                .is_some_and(|p| !p.zombie)
        };
        assert!(alive(daemon), "the daemon runs");
        tree.end(None);
        assert!(!alive(daemon), "the daemon is gone");
        let cgroup = tree.cgroup.as_ref().map(|c| c.dir.clone());
        drop(tree);
        if let Some(cgroup) = cgroup {
            assert!(!cgroup.exists(), "the cgroup is removed");
        }
    }
}

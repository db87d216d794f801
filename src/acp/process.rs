//! The agent's OS process: spawned in its own session (no terminal of
//! warden's) and its own process tree (`procs::Tree`), stderr kept, exit
//! reported, and ended as a group; once it is gone, every process it
//! started is ended too. It is prepared and forked off the UI loop; its
//! [`Launch`] says how far that got, and a start given up before it was up
//! never runs (or is killed the moment it is).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::BufReader;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::{AgentCommand, AgentEvent, Events, STDERR_TAIL};

/// The longest stderr line kept and logged; the rest of a longer one is dropped.
const STDERR_LINE: usize = 4096;

/// The longest stderr line shown in the exit notice: the rest is in the log.
pub(crate) const NOTICE_LINE: usize = 240;

/// A stderr line as the exit notice shows it: at most [`NOTICE_LINE`]
/// bytes (at a character boundary), then how much more the log has.
pub(crate) fn notice_line(line: &str) -> String {
    if line.len() <= NOTICE_LINE {
        return line.to_string();
    }
    let cut = crate::text::floor_char_boundary(line, NOTICE_LINE);
    format!(
        "{} … ({} more bytes in the log)",
        &line[..cut],
        line.len() - cut
    )
}

/// The agent could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The program is not on PATH (or the path does not exist).
    /// (`error` is said in the message and is no `source`, so that an
    /// error chain does not say it twice.)
    #[error(
        "agent command not found: `{program}` ({error}); check the command, or that it is installed and on PATH"
    )]
    NotFound {
        program: String,
        error: std::io::Error,
    },
    /// Any other spawn failure (permissions, bad cwd, ...).
    #[error("could not start the agent `{program}`: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// The child came without the pipes we asked for.
    #[error("the agent `{0}` started without stdio pipes")]
    NoPipes(String),
    /// Its sandbox could not be made (no Landlock and the setting refuses).
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// Its handle was shut down while it was being prepared: it was not
    /// started (or was killed as it came up). Nobody waits for it; nothing
    /// is said.
    #[error("the agent `{0}` was no longer wanted when it could start")]
    Abandoned(String),
}

/// How far the start of an agent process got, off the loop.
#[derive(Debug, Clone, Default)]
enum Stage {
    /// Being prepared (sandbox rules, the proxy's door, state files) or
    /// forked.
    #[default]
    Starting,
    /// Its handle was shut down before it was up: it is not forked, or
    /// ended as soon as it is.
    Abandoned,
    /// Forked: its process group can be ended.
    Up(Ender),
    /// It could not be started, or was given up before it was forked.
    Failed,
}

/// The start of an agent process, shared by its handle (which asks its pid
/// and ends it) and the blocking task that prepares and forks it.
#[derive(Debug, Clone)]
pub(crate) struct Launch(Arc<watch::Sender<Stage>>);

impl Launch {
    pub(super) fn new() -> Self {
        Launch(Arc::new(watch::Sender::new(Stage::Starting)))
    }

    /// The process id (also the process group id), once it is up.
    pub(super) fn pid(&self) -> Option<u32> {
        match &*self.0.borrow() {
            Stage::Up(ender) => ender.pid,
            _ => None,
        }
    }

    /// Whether its handle gave it up before it was up.
    fn abandoned(&self) -> bool {
        matches!(*self.0.borrow(), Stage::Abandoned)
    }

    /// It is up: false when it was given up meanwhile (the caller ends it).
    pub(super) fn up(&self, ender: Ender) -> bool {
        let mut wanted = true;
        self.0.send_modify(|stage| {
            wanted = !matches!(stage, Stage::Abandoned);
            *stage = Stage::Up(ender);
        });
        wanted
    }

    /// It will not come up (a failure, or the blocking task gone).
    pub(super) fn failed(&self) {
        self.0.send_if_modified(|stage| {
            let open = matches!(stage, Stage::Starting | Stage::Abandoned);
            if open {
                *stage = Stage::Failed;
            }
            open
        });
    }

    /// Give it up if it is not up yet, and wait until its start is over
    /// either way: what ends it if it came up.
    pub(super) async fn settle(&self) -> Option<Ender> {
        self.0.send_if_modified(|stage| {
            let starting = matches!(stage, Stage::Starting);
            if starting {
                *stage = Stage::Abandoned;
            }
            starting
        });
        let mut stages = self.0.subscribe();
        let settled = stages
            .wait_for(|stage| matches!(stage, Stage::Up(_) | Stage::Failed))
            .await
            .ok()?;
        match &*settled {
            Stage::Up(ender) => Some(ender.clone()),
            _ => None,
        }
    }

    /// Marks the start failed when dropped before it was up (an error, a
    /// panic, the blocking task dropped), so that [`Launch::settle`] never
    /// waits for a start that is over.
    pub(super) fn over_on_drop(&self) -> OverOnDrop {
        OverOnDrop(self.clone())
    }
}

/// See [`Launch::over_on_drop`].
pub(super) struct OverOnDrop(Launch);

impl Drop for OverOnDrop {
    fn drop(&mut self) {
        self.0.failed();
    }
}

/// A spawned agent process.
#[derive(Debug)]
pub struct AgentProcess {
    pid: Option<u32>,
    exited: watch::Receiver<bool>,
}

impl AgentProcess {
    /// Spawn `command` in a new process group with piped stdio. Stderr lines
    /// go to the log and into `tail`; the exit is reported on `events`.
    /// With `asks`, its network goes through a proxy of its own (issue 35)
    /// that asks there about each host the profile does not allow.
    ///
    /// It blocks (the sandbox's rules walk the filesystem, the agent's state
    /// files are made, the guarded config is read): the runtime calls it on
    /// the blocking pool. `launch` is told when it is up; a start given up
    /// meanwhile is not forked, or is killed at once.
    pub(super) fn spawn(
        command: &AgentCommand,
        sandbox: Option<&crate::sandbox::Profile>,
        tail: Arc<Mutex<VecDeque<String>>>,
        events: Events,
        asks: Option<tokio::sync::mpsc::UnboundedSender<crate::net::ConnectAsk>>,
        launch: &Launch,
    ) -> Result<(AgentProcess, ChildStdin, ChildStdout), LaunchError> {
        let abandoned = || LaunchError::Abandoned(command.program.clone());
        if launch.abandoned() {
            return Err(abandoned());
        }
        if let Some(profile) = sandbox {
            crate::agents::prepare(command, profile);
        }
        let spawn_error = |error| LaunchError::Spawn {
            program: command.program.clone(),
            error,
        };
        if let Some(hold) = sandbox.and_then(|p| p.hold.as_deref()) {
            let _ = std::fs::read(hold);
        }
        // The proxy's door: only where the sandbox confines and the
        // network is not left open.
        let gated = sandbox.filter(|p| {
            p.mode != crate::sandbox::SandboxMode::Off
                && p.network != crate::net::NetworkMode::Open
                && matches!(
                    crate::sandbox::kernel_support(),
                    crate::sandbox::Support::Landlock(_)
                )
        });
        let door = match (gated, &asks) {
            (Some(profile), Some(_)) => Some(net_door(profile).map_err(spawn_error)?),
            _ => None,
        };
        let confinement = sandbox
            .map(|p| {
                crate::sandbox::Confinement::prepare_net(p, door.as_ref().and_then(|d| d.wall()))
            })
            .transpose()?;
        // What a known agent needs under the sandbox (`agents/`).
        let quirks = crate::agents::launch(
            command,
            crate::agents::Confined {
                landlock: confinement
                    .as_ref()
                    .is_some_and(|c| !c.badge().is_unconfined()),
                tmp: confinement.as_ref().and_then(|c| c.tmp()),
            },
        );
        // Its config that runs programs, as it is now: put back at exit.
        let guard = sandbox
            .filter(|p| p.mode != crate::sandbox::SandboxMode::Off)
            .map(|p| {
                crate::sandbox::guard::Guard::of(p, crate::sandbox::guard::journals().as_deref())
            });
        let mut cmd = Command::new(&command.program);
        if let Some(profile) = sandbox {
            // Only what its allow-list passes of warden's environment.
            crate::sandbox::env::scrub(&mut cmd, profile);
        }
        cmd.args(&command.args)
            .args(&quirks.args)
            .envs(command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(quirks.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(&command.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own session (and process group): no terminal of warden's.
        crate::sandbox::own_session(&mut cmd);
        crate::sandbox::strip_loader_env(&mut cmd);
        // Everything it starts is ended with it, daemons too.
        let tree = crate::procs::Tree::prepare();
        tree.apply(&mut cmd);
        if let Some(door) = &door {
            cmd.envs(crate::net::proxy::proxy_env(
                door.port(),
                door.own_loopback(),
            ));
        }
        if let Some(confinement) = &confinement {
            confinement.apply(&mut cmd);
        }
        // Given up while it was prepared: not started at all.
        let never_ran = |guard: Option<crate::sandbox::guard::Guard>| {
            if let Some(guard) = guard {
                guard.discard();
            }
        };
        if launch.abandoned() {
            never_ran(guard);
            return Err(abandoned());
        }
        // Forked on warden's spawner thread, with the parent-death signal
        // set after the sandbox's hooks: a SIGKILLed warden takes it along.
        let mut child = match crate::procs::spawner::spawn(cmd) {
            Ok(child) => child,
            Err(error) => {
                never_ran(guard);
                let program = command.program.clone();
                return Err(if error.kind() == std::io::ErrorKind::NotFound {
                    LaunchError::NotFound { program, error }
                } else {
                    LaunchError::Spawn { program, error }
                });
            }
        };
        // Its proxy, serving on the door's socket (made in its namespace).
        let proxy = match (door, gated, asks) {
            (Some(door), Some(profile), Some(asks)) => {
                let gate = crate::net::proxy::Gate {
                    agent: profile.agent.clone(),
                    hosts: crate::net::Hosts::new(profile.network, profile.allow_hosts.clone()),
                    asks,
                };
                let served = door.listeners().and_then(|listeners| {
                    crate::net::proxy::Proxy::serve_all(
                        listeners,
                        gate,
                        crate::net::chain::Dialer::own(),
                    )
                });
                match served {
                    Ok(proxy) => Some(proxy),
                    Err(error) => {
                        // Fail closed: no agent without its proxy.
                        let _ = child.start_kill();
                        return Err(spawn_error(error));
                    }
                }
            }
            _ => None,
        };
        let pid = child.id();
        tracing::info!(program = %command.program, ?pid, "agent started");
        if let Some(pid) = pid {
            crate::reaper::register(pid);
        }
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LaunchError::NoPipes(command.program.clone()));
        };

        let stderr_tail = tail.clone();
        let stderr_task = tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut bytes = Vec::new();
            while let Ok(Some(cut)) =
                super::lines::read_line(&mut reader, &mut bytes, STDERR_LINE, true).await
            {
                let mut line = String::from_utf8_lossy(&bytes).into_owned();
                if cut {
                    line.push_str(" … (line cut)");
                }
                tracing::info!(target: "agent_stderr", "{line}");
                if let Ok(mut tail) = stderr_tail.lock() {
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }
        });

        let (exited_tx, exited) = watch::channel(false);
        tokio::spawn(async move {
            // Its private temporary directory goes when it does, and its proxy.
            let _confinement = confinement;
            let _proxy = proxy;
            let status = match child.wait().await {
                Ok(status) => describe(status),
                Err(err) => format!("could not be waited for: {err}"),
            };
            // Let the stderr reader drain what the agent wrote last.
            let _ = tokio::time::timeout(Duration::from_millis(500), stderr_task).await;
            // Putting back its config reads and writes files: off the loop.
            let put_back = match guard {
                Some(guard) => tokio::task::spawn_blocking(move || guard.restore())
                    .await
                    .unwrap_or_else(|err| vec![format!("its config was not put back: {err}")]),
                None => Vec::new(),
            };
            if let Ok(mut tail) = tail.lock() {
                tail.extend(put_back);
            }
            let stderr_tail = tail
                .lock()
                .map(|t| t.iter().map(|line| notice_line(line)).collect())
                .unwrap_or_default();
            tracing::info!(%status, "agent exited");
            // What it started goes with it (before anyone hears it is gone).
            let _ = tokio::task::spawn_blocking(move || tree.end(pid)).await;
            if let Some(pid) = pid {
                crate::reaper::unregister(pid);
            }
            let _ = exited_tx.send(true);
            let _ = events.send(AgentEvent::Exited {
                status,
                stderr_tail,
            });
        });
        let process = AgentProcess { pid, exited };
        if !launch.up(process.ender()) {
            // Given up while it was forked: it never serves anyone.
            tracing::info!(?pid, "agent no longer wanted as it started: killed");
            process.ender().signal_group(libc::SIGKILL);
            return Err(abandoned());
        }
        Ok((process, stdin, stdout))
    }

    /// A handle that can end the process group from another task.
    pub(super) fn ender(&self) -> Ender {
        Ender {
            pid: self.pid,
            exited: self.exited.clone(),
        }
    }

    /// Wait up to `grace` for the agent to exit by itself (its stdin is
    /// closed by now), then end its process group: TERM, and KILL if it
    /// is still there shortly after.
    pub(crate) async fn shutdown(self, grace: Duration) {
        self.ender().end(grace).await;
    }
}

/// Ends an agent's process group: from shutdown, or when its connection closed.
#[derive(Debug, Clone)]
pub(super) struct Ender {
    pid: Option<u32>,
    exited: watch::Receiver<bool>,
}

impl Ender {
    #[cfg(test)]
    pub(super) fn new(pid: Option<u32>, exited: watch::Receiver<bool>) -> Self {
        Ender { pid, exited }
    }

    /// Whether the agent's process exits within `limit`.
    pub(super) async fn exits_within(mut self, limit: Duration) -> bool {
        self.wait_exit(limit).await
    }

    /// Wait up to `grace` for the agent to exit by itself, then TERM its
    /// group, then KILL it if it is still there shortly after.
    pub(super) async fn end(mut self, grace: Duration) {
        if self.wait_exit(grace).await {
            // The leader is gone; take any stragglers in its group with it.
            self.signal_group(libc::SIGKILL);
            return;
        }
        tracing::info!("agent did not exit by itself; terminating its process group");
        self.signal_group(libc::SIGTERM);
        if !self.wait_exit(Duration::from_millis(500)).await {
            self.signal_group(libc::SIGKILL);
            self.wait_exit(Duration::from_millis(500)).await;
        }
        self.signal_group(libc::SIGKILL);
    }

    async fn wait_exit(&mut self, limit: Duration) -> bool {
        let wait = self.exited.wait_for(|exited| *exited);
        matches!(tokio::time::timeout(limit, wait).await, Ok(Ok(_)))
    }

    fn signal_group(&self, signal: libc::c_int) {
        let Some(pid) = self.pid.and_then(|p| libc::pid_t::try_from(p).ok()) else {
            return;
        };
        crate::reaper::signal_group(pid, signal);
    }
}

/// The door of the proxy of an agent process, as this kernel walls it.
#[cfg(target_os = "linux")]
fn net_door(profile: &crate::sandbox::Profile) -> std::io::Result<crate::net::door::Door> {
    crate::net::door::Door::for_profile(profile)
}

#[cfg(not(target_os = "linux"))]
fn net_door(_: &crate::sandbox::Profile) -> std::io::Result<std::convert::Infallible> {
    Err(std::io::Error::other("no network wall on this system"))
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_shows_a_bounded_line_and_says_the_rest_is_in_the_log() {
        assert_eq!(notice_line("short"), "short");
        let long = "é".repeat(25_000_000);
        let shown = notice_line(&long);
        assert!(shown.len() < NOTICE_LINE + 64, "{}", shown.len());
        assert!(shown.ends_with(&format!(
            " … ({} more bytes in the log)",
            50_000_000 - NOTICE_LINE
        )));
    }
}

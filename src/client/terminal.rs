//! Terminals on the agent's behalf: processes in their own process groups
//! whose interleaved stdout and stderr land in one bounded output buffer.
//!
//! [`Terminals`] is the manager the runtime owns. Each terminal has two
//! reader tasks (stdout, stderr) and a supervisor task that owns the child
//! and records its exit; they share the output and exit status with the
//! manager through an `Arc`, so [`Terminals::output`], [`Terminals::snapshot`]
//! and any number of [`Terminals::exit_waiter`] futures work at the same time
//! without borrowing the manager across an await.

use crate::text::ceil_char_boundary;
use std::future::Future;
use std::io;
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::pin::pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::AbortHandle;

mod net;
mod output;

use net::NetDoor;

pub(crate) use output::{KEPT_EACH, MAX_OUTPUT, SCREEN_OUTPUT, TOTAL_OUTPUT};
pub use output::{OutputBuffer, Utf8Decoder};

/// How long, after the command exits, its exit waits for the output pipes
/// to close. A background child that keeps them open does not hold the exit
/// back longer than this; its output still arrives afterwards.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// Read size of the output pumps.
const READ_CHUNK: usize = 8192;

/// What the agent asked to run (ACP `terminal/create`), already allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalSpec {
    /// A program, or a whole shell line when `args` is empty.
    pub command: String,
    /// Arguments: when present `command` is executed directly.
    pub args: Vec<String>,
    /// Variables added to (or overriding) warden's environment.
    pub env: Vec<(String, String)>,
    /// The working directory; the caller checks it is inside the roots.
    pub cwd: PathBuf,
    /// Keep at most this many bytes of the newest output.
    pub output_byte_limit: Option<usize>,
}

/// A command and its arguments as one shell line (arguments quoted where
/// the shell would read them otherwise): what the policy and the user see.
pub(crate) fn command_line(command: &str, args: &[String]) -> String {
    let mut line = command.to_string();
    for arg in args {
        line.push(' ');
        line.push_str(&crate::policy::shell_quote(arg));
    }
    line
}

impl TerminalSpec {
    /// The command as one line, for display.
    pub(crate) fn command_line(&self) -> String {
        command_line(&self.command, &self.args)
    }

    /// The command to spawn: `/bin/sh -c` for a shell line (never a `sh`
    /// looked up on a PATH the agent may have set), else direct.
    fn to_command(&self) -> Command {
        let mut command = if self.args.is_empty() && self.command.contains(needs_shell_char) {
            let mut sh = Command::new("/bin/sh");
            sh.arg("-c").arg(&self.command);
            sh
        } else {
            let mut direct = Command::new(&self.command);
            direct.args(&self.args);
            direct
        };
        command
            .current_dir(&self.cwd)
            .env("PWD", &self.cwd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own session (and process group): no terminal of warden's.
        crate::sandbox::own_session(&mut command);
        command
    }
}

/// Whether a character means `command` is a shell line rather than a
/// program name.
pub(crate) fn needs_shell_char(c: char) -> bool {
    c.is_whitespace() || "|&;<>()$`\\\"'*?[]#~=%{}!".contains(c)
}

/// How a terminal's command ended (ACP `TerminalExitStatus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    /// The exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// The signal's name (`"SIGKILL"`), when a signal ended it.
    pub signal: Option<String>,
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        Self {
            exit_code: status.code(),
            signal: status.signal().map(signal_name),
        }
    }
}

/// The conventional name of a signal number, `SIG<n>` for unusual ones.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        other => return format!("SIG{other}"),
    };
    name.to_owned()
}

/// A terminal's output so far (ACP `terminal/output`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalOutput {
    /// The kept output, stdout and stderr interleaved as they arrived.
    pub output: String,
    /// Older output was dropped to stay within the byte limit.
    pub truncated: bool,
    /// How the command ended, once it has.
    pub exit: Option<ExitStatus>,
}

/// A terminal's output for the screen ([`Terminals::snapshot`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The newest output, at most [`SCREEN_OUTPUT`] bytes.
    pub output: String,
    /// Older output is not in it.
    pub truncated: bool,
    /// Bytes of older output not in it (dropped, or not handed to the screen).
    pub dropped: u64,
    /// How the command ended, once it has.
    pub exit: Option<ExitStatus>,
}

/// What the runtime hears from its terminals, to know when to redraw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// New output arrived. At most one is pending per terminal: the next is
    /// sent only after [`Terminals::snapshot`] read the output.
    Output {
        /// The terminal.
        id: String,
    },
    /// The command ended (its output pipes are drained, or the grace period
    /// for a background child holding them passed).
    Exited {
        /// The terminal.
        id: String,
        /// How it ended.
        status: ExitStatus,
    },
}

/// Why a terminal request failed. The message is shown to the agent (as the
/// JSON-RPC error) and to the user.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// The id was never created, or was released.
    #[error("unknown terminal {id:?} (never created, or already released)")]
    UnknownTerminal {
        /// The id the agent sent.
        id: String,
    },
    /// `command` was empty or only whitespace.
    #[error("the command is empty")]
    EmptyCommand,
    /// The working directory does not exist or is not a directory; spawning
    /// would fail with a confusing "no such file" about the command.
    #[error("working directory {} is not a directory", .cwd.display())]
    BadCwd {
        /// The requested working directory.
        cwd: PathBuf,
    },
    /// The process could not be started (no such program, no permission).
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A terminal was created outside a tokio runtime: its output could not
    /// be read. A programming error, reported instead of a panic.
    #[error("terminals need a running tokio runtime")]
    NoRuntime,
    /// The terminal was released (its tasks stopped) before its exit was
    /// seen by this waiter.
    #[error("terminal {id:?} was released before its command exited")]
    Released {
        /// The terminal.
        id: String,
    },
}

/// The total output kept by a set of terminals (every terminal of the
/// process shares [`Budget::global`]; tests make their own). Past `limit`
/// it drops older output down to three quarters of it: finished terminals
/// first, oldest first, then the running ones, largest first, none below
/// [`KEPT_EACH`] of its newest output (with very many terminals, less).
#[derive(Debug)]
pub(crate) struct Budget {
    limit: usize,
    held: AtomicUsize,
    members: Mutex<Vec<Weak<Shared>>>,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            held: AtomicUsize::new(0),
            members: Mutex::new(Vec::new()),
        })
    }

    /// The budget every terminal of this process shares.
    pub(crate) fn global() -> Arc<Budget> {
        static GLOBAL: std::sync::LazyLock<Arc<Budget>> =
            std::sync::LazyLock::new(|| Budget::new(TOTAL_OUTPUT));
        Arc::clone(&GLOBAL)
    }

    /// Bytes the terminals hold now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    fn members(&self) -> MutexGuard<'_, Vec<Weak<Shared>>> {
        self.members
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn join(&self, shared: &Arc<Shared>) {
        self.members().push(Arc::downgrade(shared));
    }

    fn charge(&self, before: usize, after: usize) {
        if after > before {
            self.held.fetch_add(after - before, Ordering::AcqRel);
        } else {
            self.held.fetch_sub(before - after, Ordering::AcqRel);
        }
    }

    /// Drop older output until the total is back under three quarters of
    /// the limit. Never called with a buffer locked: it locks each in turn.
    fn trim(&self) {
        let mut members = self.members();
        members.retain(|m| m.strong_count() > 0);
        let live: Vec<Arc<Shared>> = members.iter().filter_map(Weak::upgrade).collect();
        drop(members);
        let target = self.limit / 4 * 3;
        let (finished, mut running): (Vec<_>, Vec<_>) =
            live.into_iter().partition(|m| m.exit_status().is_some());
        running.sort_by_key(|m| std::cmp::Reverse(m.buffer().held()));
        let share = (target / running.len().max(1)).max(KEPT_EACH);
        // With very many terminals even their newest output is too much:
        // less of each, and nothing of the oldest finished ones.
        let small = KEPT_EACH / 16;
        let plan = finished
            .iter()
            .map(|m| (m, KEPT_EACH))
            .chain(running.iter().map(|m| (m, share)))
            .chain(running.iter().map(|m| (m, KEPT_EACH)))
            .chain(finished.iter().map(|m| (m, small)))
            .chain(running.iter().map(|m| (m, small)))
            .chain(finished.iter().map(|m| (m, 0)));
        for (member, keep) in plan {
            if self.held() <= target {
                break;
            }
            let freed = member.buffer().shrink_to(keep);
            if freed > 0 {
                self.held.fetch_sub(freed, Ordering::AcqRel);
                tracing::debug!(id = %member.id, freed, "terminal output dropped for the total");
            }
        }
    }
}

/// What the manager and a terminal's tasks share.
#[derive(Debug)]
struct Shared {
    id: String,
    buffer: Mutex<OutputBuffer>,
    /// The total this terminal's output counts in.
    budget: Arc<Budget>,
    /// An [`TerminalEvent::Output`] was sent and not yet read by `snapshot`.
    notified: AtomicBool,
    exit: watch::Sender<Option<ExitStatus>>,
    /// Asks the supervisor to kill the group leader (by its `Child`).
    kill: Notify,
    /// The command exited and its output pipes closed: the process group is
    /// presumed empty and is no longer signalled (its id could be reused).
    group_done: AtomicBool,
    pgid: libc::pid_t,
    /// Every process the command started, ended with it (daemons too).
    tree: Arc<crate::procs::Tree>,
    events: mpsc::UnboundedSender<TerminalEvent>,
}

impl Shared {
    fn buffer(&self) -> MutexGuard<'_, OutputBuffer> {
        self.buffer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn append(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let (before, after) = {
            let mut buffer = self.buffer();
            let before = buffer.held();
            buffer.push_str(text);
            (before, buffer.held())
        };
        self.budget.charge(before, after);
        if self.budget.held() > self.budget.limit {
            self.budget.trim();
        }
        if !self.notified.swap(true, Ordering::AcqRel) {
            let _ = self.events.send(TerminalEvent::Output {
                id: self.id.clone(),
            });
        }
    }

    fn exit_status(&self) -> Option<ExitStatus> {
        self.exit.borrow().clone()
    }

    /// SIGKILL the whole group, and have the supervisor kill the leader.
    fn kill(&self) {
        if !self.group_done.load(Ordering::Acquire) {
            // The group id is the leader's pid, held while the leader is
            // unreaped or any member is alive (`group_done` is still false).
            crate::reaper::signal_group(self.pgid, libc::SIGKILL);
        }
        self.kill.notify_one();
        // What left the group goes too (a scan of /proc: off the loop).
        // The leader is named so that the scan leaves its exit to the
        // supervisor's wait (reaping it here would steal its status).
        let tree = Arc::clone(&self.tree);
        let leader = u32::try_from(self.pgid).ok();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || tree.end(leader));
            }
            Err(_) => tree.end(leader),
        }
    }
}

impl Drop for Shared {
    /// A terminal forgotten (released, and its tasks ended) holds nothing.
    fn drop(&mut self) {
        let held = self
            .buffer
            .get_mut()
            .map_or_else(|poisoned| poisoned.into_inner().held(), |b| b.held());
        self.budget.charge(held, 0);
    }
}

/// One terminal in the manager.
#[derive(Debug)]
struct Terminal {
    id: String,
    shared: Arc<Shared>,
    readers: Vec<AbortHandle>,
}

/// The agent's terminals, owned by the runtime.
#[derive(Debug)]
pub struct Terminals {
    next: u64,
    terminals: Vec<Terminal>,
    events: mpsc::UnboundedSender<TerminalEvent>,
    budget: Arc<Budget>,
    /// The chat's agent's sandbox: every terminal runs under it.
    sandbox: Option<crate::sandbox::Profile>,
    /// Where each terminal's proxy asks about a host not allowed without
    /// asking (the chat's gate); with none, such a host is refused.
    asks: Option<mpsc::UnboundedSender<crate::net::ConnectAsk>>,
}

impl Terminals {
    /// An empty manager that reports output and exits on `events`, its
    /// output counted in the process's total ([`Budget::global`]).
    pub(crate) fn new(events: mpsc::UnboundedSender<TerminalEvent>) -> Self {
        Self::with_budget(events, Budget::global())
    }

    /// An empty manager whose output counts in `budget`.
    pub(crate) fn with_budget(
        events: mpsc::UnboundedSender<TerminalEvent>,
        budget: Arc<Budget>,
    ) -> Self {
        Self {
            next: 1,
            terminals: Vec::new(),
            events,
            budget,
            sandbox: None,
            asks: None,
        }
    }

    /// Run every terminal from now on under `sandbox` (the chat agent's).
    pub(crate) fn confine(&mut self, sandbox: Option<crate::sandbox::Profile>) {
        self.sandbox = sandbox;
    }

    /// Ask about each connection a terminal's proxy does not allow without
    /// asking on `asks` (the chat's gate), from now on.
    pub(crate) fn ask_through(&mut self, asks: mpsc::UnboundedSender<crate::net::ConnectAsk>) {
        self.asks = Some(asks);
    }

    /// Start `spec` and return its id (`term-1`, `term-2`...). Must run
    /// inside a tokio runtime; the output is read by spawned tasks.
    pub(crate) fn create(&mut self, spec: TerminalSpec) -> Result<String, TerminalError> {
        if spec.command.trim().is_empty() {
            return Err(TerminalError::EmptyCommand);
        }
        if !spec.cwd.is_dir() {
            return Err(TerminalError::BadCwd { cwd: spec.cwd });
        }
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| TerminalError::NoRuntime)?;
        let command_line = spec.command_line();
        let spawn_error = |source| TerminalError::Spawn {
            command: command_line.clone(),
            source,
        };
        // The network walled as the agent's is: only a proxy's door.
        let net =
            NetDoor::prepare(self.sandbox.as_ref(), self.asks.as_ref()).map_err(spawn_error)?;
        let confinement = self
            .sandbox
            .as_ref()
            .map(|p| {
                crate::sandbox::Confinement::prepare_net(p, net.as_ref().and_then(|n| n.wall()))
            })
            .transpose()
            .map_err(|err| spawn_error(io::Error::other(err.to_string())))?;
        let tree = Arc::new(crate::procs::Tree::prepare());
        let mut child = {
            // Spawning registers the child with the runtime's reactor.
            let _guard = runtime.enter();
            let mut command = spec.to_command();
            if let Some(profile) = &self.sandbox {
                // The agent's environment, not warden's; then the
                // terminal's own variables over it.
                crate::sandbox::env::scrub(&mut command, profile);
                command
                    .env("PWD", &spec.cwd)
                    .envs(spec.env.iter().map(|(k, v)| (k, v)));
            }
            tree.apply(&mut command);
            if let Some(net) = &net {
                command.envs(net.env());
            }
            if let Some(confinement) = &confinement {
                confinement.apply(&mut command);
            }
            // On warden's spawner thread, dying with warden.
            crate::procs::spawner::spawn(command).map_err(spawn_error)?
        };
        // Its proxy, which lives as long as the terminal.
        let proxy = match net {
            Some(net) => {
                let _guard = runtime.enter();
                match net.serve() {
                    Ok(proxy) => Some(proxy),
                    Err(error) => {
                        // Fail closed: no terminal without its proxy.
                        let _ = child.start_kill();
                        return Err(spawn_error(error));
                    }
                }
            }
            None => None,
        };
        let pgid = child
            .id()
            .and_then(|pid| libc::pid_t::try_from(pid).ok())
            .ok_or_else(|| spawn_error(io::Error::other("the process has no id")))?;
        if let Ok(group) = u32::try_from(pgid) {
            crate::reaper::register(group);
        }

        let id = format!("term-{}", self.next);
        self.next += 1;
        let (exit, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            id: id.clone(),
            buffer: Mutex::new(OutputBuffer::new(spec.output_byte_limit)),
            budget: Arc::clone(&self.budget),
            notified: AtomicBool::new(false),
            exit,
            kill: Notify::new(),
            group_done: AtomicBool::new(false),
            pgid,
            tree,
            events: self.events.clone(),
        });

        self.budget.join(&shared);
        let mut readers = Vec::with_capacity(2);
        if let Some(stdout) = child.stdout.take() {
            readers.push(runtime.spawn(pump(stdout, Arc::clone(&shared))));
        }
        if let Some(stderr) = child.stderr.take() {
            readers.push(runtime.spawn(pump(stderr, Arc::clone(&shared))));
        }
        let abort_handles = readers.iter().map(|r| r.abort_handle()).collect();
        let supervised = supervise(child, readers, Arc::clone(&shared));
        runtime.spawn(async move {
            // Its private temporary directory and its proxy go when it exits.
            let _confinement = confinement;
            let _proxy = proxy;
            supervised.await;
        });
        tracing::debug!(%id, command = %command_line, pgid, "terminal started");

        self.terminals.push(Terminal {
            id: id.clone(),
            shared,
            readers: abort_handles,
        });
        Ok(id)
    }

    fn get(&self, id: &str) -> Result<&Terminal, TerminalError> {
        self.terminals
            .iter()
            .find(|t| t.id == id)
            .ok_or_else(|| TerminalError::UnknownTerminal { id: id.to_owned() })
    }

    /// The output so far and the exit status if it ended (ACP
    /// `terminal/output`).
    pub(crate) fn output(&self, id: &str) -> Result<TerminalOutput, TerminalError> {
        let terminal = self.get(id)?;
        let buffer = terminal.shared.buffer();
        Ok(TerminalOutput {
            output: buffer.text().to_owned(),
            truncated: buffer.truncated(),
            exit: terminal.shared.exit_status(),
        })
    }

    /// For the UI: the newest output, whether older output was dropped,
    /// how many bytes of it, the exit. Reading re-arms the
    /// [`TerminalEvent::Output`] notification for this terminal.
    pub(crate) fn snapshot(&self, id: &str) -> Option<Snapshot> {
        let terminal = self.get(id).ok()?;
        terminal.shared.notified.store(false, Ordering::Release);
        let buffer = terminal.shared.buffer();
        let (tail, truncated) = buffer.tail(SCREEN_OUTPUT);
        Some(Snapshot {
            output: tail.to_owned(),
            truncated,
            dropped: buffer.dropped(tail.len()),
            exit: terminal.shared.exit_status(),
        })
    }

    /// A future resolving to the exit status, independent of `self`: the
    /// runtime can await it in a task while it keeps using the manager. It
    /// is [`TerminalError::Released`] if the terminal's tasks stop without
    /// an exit (they do not on `release`, which still records the kill).
    pub(crate) fn exit_waiter(
        &self,
        id: &str,
    ) -> Result<
        impl Future<Output = Result<ExitStatus, TerminalError>> + Send + 'static,
        TerminalError,
    > {
        let terminal = self.get(id)?;
        let mut exit = terminal.shared.exit.subscribe();
        let id = terminal.id.clone();
        Ok(async move {
            match exit.wait_for(Option::is_some).await {
                Ok(status) => status.clone().ok_or(TerminalError::Released { id }),
                Err(_) => Err(TerminalError::Released { id }),
            }
        })
    }

    #[cfg(test)]
    /// Wait for the command to exit (ACP `terminal/wait_for_exit`). Borrows
    /// the manager for the wait; the runtime wants [`Self::exit_waiter`].
    pub(crate) async fn wait_for_exit(&self, id: &str) -> Result<ExitStatus, TerminalError> {
        self.exit_waiter(id)?.await
    }

    /// SIGKILL the terminal's process group (ACP `terminal/kill`). The
    /// terminal stays: its output and exit status can still be read. The
    /// exit is recorded asynchronously; await [`Self::exit_waiter`].
    pub(crate) fn kill(&mut self, id: &str) -> Result<(), TerminalError> {
        self.get(id)?.shared.kill();
        Ok(())
    }

    /// Kill the terminal if it runs and forget it (ACP `terminal/release`):
    /// later calls with the id are [`TerminalError::UnknownTerminal`].
    /// Waiters already holding an [`Self::exit_waiter`] still get the exit.
    pub(crate) fn release(&mut self, id: &str) -> Result<(), TerminalError> {
        let index = self
            .terminals
            .iter()
            .position(|t| t.id == id)
            .ok_or_else(|| TerminalError::UnknownTerminal { id: id.to_owned() })?;
        let terminal = self.terminals.remove(index);
        terminal.shared.kill();
        // A process outside the group may still hold the pipes open; nobody
        // reads this output any more.
        for reader in &terminal.readers {
            reader.abort();
        }
        tracing::debug!(%id, "terminal released");
        Ok(())
    }

    /// Kill every terminal (quit, cancelling the turn, closing the chat).
    /// They stay queryable; release them to forget them.
    pub(crate) fn kill_all(&mut self) {
        for terminal in &self.terminals {
            terminal.shared.kill();
        }
    }

    #[cfg(test)]
    /// The ids of the live (not released) terminals, oldest first.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.terminals.iter().map(|t| t.id.clone()).collect()
    }
}

impl Drop for Terminals {
    /// The manager going away means nothing can reach its terminals: leave
    /// no process behind.
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Copy one output pipe into the buffer until it closes.
async fn pump(mut pipe: impl AsyncRead + Unpin, shared: Arc<Shared>) {
    let mut decoder = Utf8Decoder::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => shared.append(&decoder.decode(&chunk[..n])),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                tracing::debug!(id = %shared.id, %error, "terminal output read failed");
                break;
            }
        }
    }
    shared.append(&decoder.finish());
}

/// Own the child: kill its leader on request, record its exit once the
/// output is drained, then note when the group is done.
async fn supervise(
    mut child: Child,
    readers: Vec<tokio::task::JoinHandle<()>>,
    shared: Arc<Shared>,
) {
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            () = shared.kill.notified() => {
                if let Err(error) = child.start_kill() {
                    tracing::debug!(id = %shared.id, %error, "kill of the terminal's leader failed");
                }
            }
        }
    };
    let status = match status {
        Ok(status) => ExitStatus::from(status),
        Err(error) => {
            tracing::warn!(id = %shared.id, %error, "waiting for a terminal failed");
            ExitStatus {
                exit_code: None,
                signal: None,
            }
        }
    };

    let mut drained = pin!(async move {
        for reader in readers {
            let _ = reader.await;
        }
    });
    let drained_in_time = tokio::time::timeout(DRAIN_GRACE, &mut drained)
        .await
        .is_ok();

    shared.exit.send_replace(Some(status.clone()));
    tracing::debug!(id = %shared.id, ?status, "terminal exited");
    let _ = shared.events.send(TerminalEvent::Exited {
        id: shared.id.clone(),
        status,
    });

    // A finished future must not be polled again: await the rest only if
    // the grace period ran out first (a background child holds the pipes).
    if !drained_in_time {
        drained.await;
    }
    shared.group_done.store(true, Ordering::Release);
    if let Ok(group) = u32::try_from(shared.pgid) {
        crate::reaper::unregister(group);
    }
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;

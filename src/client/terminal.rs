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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::AbortHandle;

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
pub fn command_line(command: &str, args: &[String]) -> String {
    let mut line = command.to_string();
    for arg in args {
        line.push(' ');
        if arg.is_empty() || arg.contains(needs_shell_char) {
            line.push('\'');
            line.push_str(&arg.replace('\'', r"'\''"));
            line.push('\'');
        } else {
            line.push_str(arg);
        }
    }
    line
}

impl TerminalSpec {
    /// The command as one line, for display.
    pub fn command_line(&self) -> String {
        command_line(&self.command, &self.args)
    }

    /// The command to spawn: `sh -c` for a shell line, else direct.
    fn to_command(&self) -> Command {
        let mut command = if self.args.is_empty() && self.command.contains(needs_shell_char) {
            let mut sh = Command::new("sh");
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
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

/// Whether a character means `command` is a shell line rather than a
/// program name.
fn needs_shell_char(c: char) -> bool {
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

/// Turns a byte stream into text: invalid UTF-8 becomes U+FFFD, and a
/// character split across two reads is put back together rather than
/// turned into replacement characters.
#[derive(Debug, Default, Clone)]
pub struct Utf8Decoder {
    /// The start of a character whose remaining bytes have not come yet.
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text of `bytes`, after anything pending from the last call.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut buf = std::mem::take(&mut self.pending);
            buf.extend_from_slice(bytes);
            joined = buf;
            &joined
        };
        let mut out = String::with_capacity(rest.len());
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // Valid by construction: nothing is replaced here.
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len.min(after.len())..];
                        }
                        None => {
                            // An incomplete character at the end: wait for
                            // the rest of it.
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// The end of the stream: a character left incomplete becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            return String::new();
        }
        let pending = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&pending).into_owned()
    }
}

/// The most output kept of one terminal, whatever limit the agent asks for.
pub const MAX_OUTPUT: usize = 16 << 20;

/// The most of a terminal's (newest) output handed to the screen.
pub const SCREEN_OUTPUT: usize = 1 << 20;

/// A terminal's output, bounded: keeps the newest text within `limit`
/// bytes (at most [`MAX_OUTPUT`]), dropping from the front at a character
/// boundary. The front is dropped in bulk once the text is twice the limit,
/// so that keeping output costs O(bytes) however small each chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    /// The newest output: at most twice `limit` bytes; [`OutputBuffer::text`]
    /// is its last `limit` bytes.
    text: String,
    limit: usize,
    truncated: bool,
}

impl OutputBuffer {
    /// An empty buffer keeping at most `limit` bytes (`None`, or more than
    /// [`MAX_OUTPUT`]: [`MAX_OUTPUT`]).
    pub fn new(limit: Option<usize>) -> Self {
        Self {
            text: String::new(),
            limit: limit.unwrap_or(MAX_OUTPUT).min(MAX_OUTPUT),
            truncated: false,
        }
    }

    /// Append text; what falls out of the limit is dropped.
    pub fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
        if self.text.len() > self.limit {
            self.truncated = true;
        }
        if self.text.len() > 2 * self.limit.max(4096) {
            let cut = self.start();
            self.text.drain(..cut);
        }
    }

    /// Where the kept text starts in `self.text`.
    fn start(&self) -> usize {
        let len = self.text.len();
        if len > self.limit {
            ceil_char_boundary(&self.text, len - self.limit)
        } else {
            0
        }
    }

    /// Append bytes that are known to be whole characters or invalid:
    /// decoded lossily. Use a [`Utf8Decoder`] for a stream read in chunks.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        self.push_str(&String::from_utf8_lossy(bytes));
    }

    /// The kept text.
    pub fn text(&self) -> &str {
        &self.text[self.start()..]
    }

    /// The newest `max` bytes of the kept text (at a character boundary),
    /// and whether that is less than everything ever written.
    pub fn tail(&self, max: usize) -> (&str, bool) {
        let text = self.text();
        let cut = text.len().saturating_sub(max);
        let cut = ceil_char_boundary(text, cut);
        (&text[cut..], self.truncated || cut > 0)
    }

    /// Whether anything was dropped.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The byte limit.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// What the manager and a terminal's tasks share.
#[derive(Debug)]
struct Shared {
    id: String,
    buffer: Mutex<OutputBuffer>,
    /// An [`TerminalEvent::Output`] was sent and not yet read by `snapshot`.
    notified: AtomicBool,
    exit: watch::Sender<Option<ExitStatus>>,
    /// Asks the supervisor to kill the group leader (by its `Child`).
    kill: Notify,
    /// The command exited and its output pipes closed: the process group is
    /// presumed empty and is no longer signalled (its id could be reused).
    group_done: AtomicBool,
    pgid: libc::pid_t,
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
        self.buffer().push_str(text);
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
            // SAFETY: killpg has no memory-safety preconditions. The group
            // id is the leader's pid, held while the leader is unreaped or
            // any member is alive (`group_done` is still false).
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
        self.kill.notify_one();
    }
}

/// One terminal in the manager.
#[derive(Debug)]
struct Terminal {
    id: String,
    command_line: String,
    shared: Arc<Shared>,
    readers: Vec<AbortHandle>,
}

/// The agent's terminals, owned by the runtime.
#[derive(Debug)]
pub struct Terminals {
    next: u64,
    terminals: Vec<Terminal>,
    events: mpsc::UnboundedSender<TerminalEvent>,
}

impl Terminals {
    /// An empty manager that reports output and exits on `events`.
    pub fn new(events: mpsc::UnboundedSender<TerminalEvent>) -> Self {
        Self {
            next: 1,
            terminals: Vec::new(),
            events,
        }
    }

    /// Start `spec` and return its id (`term-1`, `term-2`...). Must run
    /// inside a tokio runtime; the output is read by spawned tasks.
    pub fn create(&mut self, spec: TerminalSpec) -> Result<String, TerminalError> {
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
        let mut child = {
            // Spawning registers the child with the runtime's reactor.
            let _guard = runtime.enter();
            spec.to_command().spawn().map_err(spawn_error)?
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
            notified: AtomicBool::new(false),
            exit,
            kill: Notify::new(),
            group_done: AtomicBool::new(false),
            pgid,
            events: self.events.clone(),
        });

        let mut readers = Vec::with_capacity(2);
        if let Some(stdout) = child.stdout.take() {
            readers.push(runtime.spawn(pump(stdout, Arc::clone(&shared))));
        }
        if let Some(stderr) = child.stderr.take() {
            readers.push(runtime.spawn(pump(stderr, Arc::clone(&shared))));
        }
        let abort_handles = readers.iter().map(|r| r.abort_handle()).collect();
        runtime.spawn(supervise(child, readers, Arc::clone(&shared)));
        tracing::debug!(%id, command = %command_line, pgid, "terminal started");

        self.terminals.push(Terminal {
            id: id.clone(),
            command_line,
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
    pub fn output(&self, id: &str) -> Result<TerminalOutput, TerminalError> {
        let terminal = self.get(id)?;
        let buffer = terminal.shared.buffer();
        Ok(TerminalOutput {
            output: buffer.text().to_owned(),
            truncated: buffer.truncated(),
            exit: terminal.shared.exit_status(),
        })
    }

    /// For the UI: output, truncated, exit. Reading re-arms the
    /// [`TerminalEvent::Output`] notification for this terminal.
    pub fn snapshot(&self, id: &str) -> Option<(String, bool, Option<ExitStatus>)> {
        let terminal = self.get(id).ok()?;
        terminal.shared.notified.store(false, Ordering::Release);
        let buffer = terminal.shared.buffer();
        let (tail, truncated) = buffer.tail(SCREEN_OUTPUT);
        Some((tail.to_owned(), truncated, terminal.shared.exit_status()))
    }

    /// The command line of a terminal, for display.
    pub fn command_line(&self, id: &str) -> Option<&str> {
        self.get(id).ok().map(|t| t.command_line.as_str())
    }

    /// A future resolving to the exit status, independent of `self`: the
    /// runtime can await it in a task while it keeps using the manager. It
    /// is [`TerminalError::Released`] if the terminal's tasks stop without
    /// an exit (they do not on `release`, which still records the kill).
    pub fn exit_waiter(
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

    /// Wait for the command to exit (ACP `terminal/wait_for_exit`). Borrows
    /// the manager for the wait; the runtime wants [`Self::exit_waiter`].
    pub async fn wait_for_exit(&self, id: &str) -> Result<ExitStatus, TerminalError> {
        self.exit_waiter(id)?.await
    }

    /// SIGKILL the terminal's process group (ACP `terminal/kill`). The
    /// terminal stays: its output and exit status can still be read. The
    /// exit is recorded asynchronously; await [`Self::exit_waiter`].
    pub fn kill(&mut self, id: &str) -> Result<(), TerminalError> {
        self.get(id)?.shared.kill();
        Ok(())
    }

    /// Kill the terminal if it runs and forget it (ACP `terminal/release`):
    /// later calls with the id are [`TerminalError::UnknownTerminal`].
    /// Waiters already holding an [`Self::exit_waiter`] still get the exit.
    pub fn release(&mut self, id: &str) -> Result<(), TerminalError> {
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
    pub fn kill_all(&mut self) {
        for terminal in &self.terminals {
            terminal.shared.kill();
        }
    }

    /// The ids of the live (not released) terminals, oldest first.
    pub fn ids(&self) -> Vec<String> {
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
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use tokio::time::timeout;

    use super::*;

    /// Generous: only a bug makes a test wait this long.
    const WAIT: Duration = Duration::from_secs(30);

    fn manager() -> (Terminals, mpsc::UnboundedReceiver<TerminalEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Terminals::new(tx), rx)
    }

    fn spec(command: &str, args: &[&str]) -> TerminalSpec {
        TerminalSpec {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: Vec::new(),
            cwd: std::env::current_dir().expect("cwd"),
            output_byte_limit: None,
        }
    }

    async fn exit_of(terminals: &Terminals, id: &str) -> ExitStatus {
        let waiter = terminals.exit_waiter(id).expect("known terminal");
        timeout(WAIT, waiter)
            .await
            .expect("the terminal did not exit in time")
            .expect("an exit status")
    }

    /// Poll until the output satisfies `done`.
    async fn output_until(terminals: &Terminals, id: &str, done: impl Fn(&str) -> bool) -> String {
        timeout(WAIT, async {
            loop {
                let output = terminals.output(id).expect("known terminal").output;
                if done(&output) {
                    return output;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the output did not arrive in time")
    }

    fn killed() -> ExitStatus {
        ExitStatus {
            exit_code: None,
            signal: Some("SIGKILL".to_owned()),
        }
    }

    fn exited(code: i32) -> ExitStatus {
        ExitStatus {
            exit_code: Some(code),
            signal: None,
        }
    }

    /// Whether `pid` is gone (or a zombie nobody reaped yet: it runs no
    /// more either way).
    fn process_gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        }
    }

    #[tokio::test]
    async fn shell_line_prints_and_exits_zero() {
        let (mut terminals, mut events) = manager();
        let id = terminals.create(spec("echo hi", &[])).expect("create");
        assert_eq!(id, "term-1");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        assert_eq!(
            terminals.output(&id).expect("output"),
            TerminalOutput {
                output: "hi\n".to_owned(),
                truncated: false,
                exit: Some(exited(0)),
            }
        );
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        assert_eq!(
            seen,
            vec![
                TerminalEvent::Output { id: id.clone() },
                TerminalEvent::Exited {
                    id: id.clone(),
                    status: exited(0)
                },
            ]
        );
        assert_eq!(terminals.command_line(&id), Some("echo hi"));
    }

    /// Regression: the supervisor once awaited its finished drain future a
    /// second time, panicking in its task on every exit (and never marking
    /// the group done).
    #[tokio::test]
    async fn the_supervisor_finishes_cleanly_after_an_exit() {
        let (mut terminals, _events) = manager();
        let id = terminals.create(spec("echo bye", &[])).expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        let shared = Arc::clone(&terminals.get(&id).expect("known").shared);
        let done = tokio::time::timeout(Duration::from_secs(10), async {
            while !shared.group_done.load(Ordering::Acquire) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(done.is_ok(), "the supervisor completed");
    }

    #[tokio::test]
    async fn output_events_are_coalesced_until_snapshot() {
        let (mut terminals, mut events) = manager();
        let id = terminals
            .create(spec("for i in 1 2 3; do echo $i; sleep 0.05; done", &[]))
            .expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        let outputs = std::iter::from_fn(|| events.try_recv().ok())
            .filter(|e| matches!(e, TerminalEvent::Output { .. }))
            .count();
        assert_eq!(outputs, 1, "one pending Output event until a snapshot");
        assert_eq!(
            terminals.snapshot(&id),
            Some(("1\n2\n3\n".to_owned(), false, Some(exited(0))))
        );
        assert_eq!(terminals.snapshot("term-9"), None);
    }

    #[tokio::test]
    async fn command_and_args_are_executed_directly() {
        let (mut terminals, _events) = manager();
        let id = terminals
            .create(spec("printf", &["%s-%s\\n", "a b", "$HOME"]))
            .expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        assert_eq!(terminals.output(&id).expect("output").output, "a b-$HOME\n");
        assert_eq!(
            terminals.command_line(&id),
            Some("printf '%s-%s\\n' 'a b' '$HOME'")
        );
    }

    #[tokio::test]
    async fn stdout_and_stderr_share_the_output_and_exit_codes_show() {
        let (mut terminals, _events) = manager();
        let id = terminals
            .create(spec("echo out; echo err >&2; exit 3", &[]))
            .expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(3));
        let output = terminals.output(&id).expect("output").output;
        assert!(
            output.contains("out\n") && output.contains("err\n"),
            "{output:?}"
        );
    }

    #[tokio::test]
    async fn env_and_cwd_are_honoured() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut terminals, _events) = manager();
        let mut spec = spec("printf '%s:' \"$FOO\"; pwd", &[]);
        spec.env = vec![("FOO".to_owned(), "bar baz".to_owned())];
        spec.cwd = dir.path().to_path_buf();
        let id = terminals.create(spec).expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        let output = terminals.output(&id).expect("output").output;
        let (foo, pwd) = output.split_once(':').expect("two parts");
        assert_eq!(foo, "bar baz");
        assert_eq!(
            Path::new(pwd.trim_end()).canonicalize().expect("pwd"),
            dir.path().canonicalize().expect("tempdir")
        );
    }

    #[tokio::test]
    async fn kill_ends_a_process_that_runs_forever() {
        let (mut terminals, _events) = manager();
        let id = terminals.create(spec("sleep 100", &[])).expect("create");
        assert_eq!(terminals.output(&id).expect("output").exit, None);
        terminals.kill(&id).expect("kill");
        assert_eq!(exit_of(&terminals, &id).await, killed());
        // Still queryable after the kill.
        assert_eq!(terminals.output(&id).expect("output").exit, Some(killed()));
        assert_eq!(terminals.ids(), vec![id.clone()]);
        // Killing again is harmless.
        terminals.kill(&id).expect("kill again");
    }

    #[tokio::test]
    async fn kill_takes_the_whole_process_group() {
        let (mut terminals, _events) = manager();
        let id = terminals
            .create(spec("sleep 100 & echo $!; wait", &[]))
            .expect("create");
        let output = output_until(&terminals, &id, |o| o.contains('\n')).await;
        let pid: i32 = output.trim().parse().expect("the background pid");
        assert!(!process_gone(pid), "the background sleep runs");
        terminals.kill(&id).expect("kill");
        assert_eq!(exit_of(&terminals, &id).await, killed());
        timeout(WAIT, async {
            while !process_gone(pid) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the background child was not killed");
    }

    #[tokio::test]
    async fn release_kills_and_forgets() {
        let (mut terminals, _events) = manager();
        let id = terminals.create(spec("sleep 100", &[])).expect("create");
        let waiter = terminals.exit_waiter(&id).expect("waiter");
        terminals.release(&id).expect("release");
        assert_eq!(
            timeout(WAIT, waiter).await.expect("in time").expect("exit"),
            killed()
        );
        assert!(terminals.ids().is_empty());
        for result in [
            terminals.output(&id).map(|_| ()),
            terminals.kill(&id),
            terminals.release(&id),
            terminals.exit_waiter(&id).map(|_| ()),
        ] {
            let err = result.expect_err("released");
            assert!(
                matches!(err, TerminalError::UnknownTerminal { .. }),
                "{err:?}"
            );
        }
        assert_eq!(terminals.snapshot(&id), None);
        // Ids are not reused.
        let next = terminals.create(spec("true", &[])).expect("create");
        assert_eq!(next, "term-2");
    }

    #[tokio::test]
    async fn output_past_the_limit_keeps_the_newest() {
        let (mut terminals, _events) = manager();
        let mut spec = spec("printf 'abcdefghij0123456789'", &[]);
        spec.output_byte_limit = Some(10);
        let id = terminals.create(spec).expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        assert_eq!(
            terminals.output(&id).expect("output"),
            TerminalOutput {
                output: "0123456789".to_owned(),
                truncated: true,
                exit: Some(exited(0)),
            }
        );
    }

    #[tokio::test]
    async fn kill_all_kills_every_terminal() {
        let (mut terminals, _events) = manager();
        let a = terminals.create(spec("sleep 100", &[])).expect("create");
        let b = terminals.create(spec("sleep", &["100"])).expect("create");
        assert_eq!(terminals.ids(), vec![a.clone(), b.clone()]);
        terminals.kill_all();
        assert_eq!(exit_of(&terminals, &a).await, killed());
        assert_eq!(exit_of(&terminals, &b).await, killed());
    }

    #[tokio::test]
    async fn two_waiters_both_see_the_exit() {
        let (mut terminals, _events) = manager();
        let id = terminals
            .create(spec("sleep 0.2; exit 7", &[]))
            .expect("create");
        let first = terminals.exit_waiter(&id).expect("waiter");
        let second = terminals.exit_waiter(&id).expect("waiter");
        let (first, second) = timeout(WAIT, async { tokio::join!(first, second) })
            .await
            .expect("in time");
        assert_eq!(first.expect("exit"), exited(7));
        assert_eq!(second.expect("exit"), exited(7));
        // A waiter made after the exit resolves at once.
        assert_eq!(
            timeout(WAIT, terminals.wait_for_exit(&id))
                .await
                .expect("in time")
                .expect("exit"),
            exited(7)
        );
    }

    #[tokio::test]
    async fn bad_requests_are_errors() {
        let (mut terminals, _events) = manager();
        let err = terminals.create(spec("  ", &[])).expect_err("empty");
        assert!(matches!(err, TerminalError::EmptyCommand), "{err:?}");

        let mut bad_cwd = spec("true", &[]);
        bad_cwd.cwd = PathBuf::from("/does/not/exist");
        let err = terminals.create(bad_cwd).expect_err("cwd");
        assert!(matches!(err, TerminalError::BadCwd { .. }), "{err:?}");

        let err = terminals
            .create(spec("warden-no-such-program", &["x"]))
            .expect_err("spawn");
        assert!(matches!(err, TerminalError::Spawn { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("could not start `warden-no-such-program x`")
        );
        assert!(terminals.ids().is_empty());

        // A missing program in a shell line is the shell's exit 127.
        let id = terminals
            .create(spec("warden-no-such-program --flag", &[]))
            .expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(127));
    }

    #[test]
    fn create_outside_a_runtime_is_an_error() {
        let (mut terminals, _events) = manager();
        let err = terminals.create(spec("true", &[])).expect_err("no runtime");
        assert!(matches!(err, TerminalError::NoRuntime), "{err:?}");
    }

    #[test]
    fn buffer_without_limit_keeps_up_to_the_maximum() {
        let mut buffer = OutputBuffer::new(None);
        buffer.push_str("hello ");
        buffer.push_str("world");
        assert_eq!(buffer.text(), "hello world");
        assert!(!buffer.truncated());
        assert_eq!(OutputBuffer::new(Some(1 << 30)).limit(), MAX_OUTPUT);
    }

    #[test]
    fn a_big_limit_costs_no_more_than_the_bytes() {
        // 64 MiB in 64-byte chunks under the agent's 1 GiB limit: the text
        // kept never passes twice the cap, so each byte is copied a bounded
        // number of times (quadratic before: every chunk moved the buffer).
        let mut buffer = OutputBuffer::new(Some(1 << 30));
        let chunk = "0123456789abcdef".repeat(4);
        let mut written = 0usize;
        while written < 64 << 20 {
            buffer.push_str(&chunk);
            written += chunk.len();
            assert!(buffer.text.len() <= 2 * MAX_OUTPUT + chunk.len());
        }
        assert_eq!(buffer.text().len(), MAX_OUTPUT);
        assert!(buffer.truncated());
        let (tail, cut) = buffer.tail(SCREEN_OUTPUT);
        assert_eq!((tail.len(), cut), (SCREEN_OUTPUT, true));
    }

    #[test]
    fn buffer_at_the_limit_is_not_truncated() {
        let mut buffer = OutputBuffer::new(Some(5));
        buffer.push_str("abc");
        buffer.push_str("de");
        assert_eq!((buffer.text(), buffer.truncated()), ("abcde", false));
        buffer.push_str("f");
        assert_eq!((buffer.text(), buffer.truncated()), ("bcdef", true));
    }

    #[test]
    fn buffer_cuts_at_a_char_boundary() {
        // "é" is 2 bytes: cutting 1 byte from "éab" would split it.
        let mut buffer = OutputBuffer::new(Some(3));
        buffer.push_str("é");
        buffer.push_str("ab");
        assert_eq!((buffer.text(), buffer.truncated()), ("ab", true));

        // "日本" is 3 + 3 bytes; a limit of 4 keeps only "本".
        let mut buffer = OutputBuffer::new(Some(4));
        buffer.push_str("a日本");
        assert_eq!((buffer.text(), buffer.truncated()), ("本", true));

        // Keeping 5 of "x日本é" (1 + 3 + 3 + 2) keeps "本é".
        let mut buffer = OutputBuffer::new(Some(5));
        buffer.push_str("x日");
        buffer.push_str("本é");
        assert_eq!((buffer.text(), buffer.truncated()), ("本é", true));

        let mut buffer = OutputBuffer::new(Some(0));
        buffer.push_str("日");
        assert_eq!((buffer.text(), buffer.truncated()), ("", true));
    }

    #[test]
    fn buffer_converts_invalid_utf8_lossily() {
        let mut buffer = OutputBuffer::new(Some(64));
        buffer.push_bytes(b"ok \xff\xfe done");
        assert_eq!(buffer.text(), "ok \u{FFFD}\u{FFFD} done");
    }

    #[test]
    fn decoder_joins_a_char_split_across_reads() {
        let mut decoder = Utf8Decoder::new();
        let bytes = "日".as_bytes();
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert_eq!(decoder.decode(&bytes[1..2]), "");
        assert_eq!(decoder.decode(&bytes[2..]), "日");
        assert_eq!(decoder.decode(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(decoder.decode(&bytes[..2]), "");
        assert_eq!(decoder.finish(), "\u{FFFD}");
        assert_eq!(decoder.finish(), "");
    }

    #[tokio::test]
    async fn invalid_utf8_from_a_process_is_replaced() {
        let (mut terminals, _events) = manager();
        let id = terminals
            .create(spec("printf", &["a\\377b\\346\\227\\245"]))
            .expect("create");
        assert_eq!(exit_of(&terminals, &id).await, exited(0));
        assert_eq!(
            terminals.output(&id).expect("output").output,
            "a\u{FFFD}b日"
        );
    }

    proptest! {
        #[test]
        fn decoder_matches_lossy_decoding_whatever_the_chunks(
            bytes in proptest::collection::vec(
                prop_oneof![any::<u8>(), Just(0xe6u8), Just(0x97u8), Just(0xc3u8)],
                0..64,
            ),
            cuts in proptest::collection::vec(0usize..64, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= bytes.len()).collect();
            cuts.sort_unstable();
            let mut decoder = Utf8Decoder::new();
            let mut out = String::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                out.push_str(&decoder.decode(&bytes[start..cut]));
                start = cut;
            }
            out.push_str(&decoder.finish());
            prop_assert_eq!(out, String::from_utf8_lossy(&bytes).into_owned());
        }

        #[test]
        fn buffer_keeps_the_newest_suffix(
            chunks in proptest::collection::vec("[a-zé日本🦀]{0,8}", 0..12),
            limit in 0usize..24,
        ) {
            let mut buffer = OutputBuffer::new(Some(limit));
            for chunk in &chunks {
                buffer.push_str(chunk);
            }
            let all: String = chunks.concat();
            prop_assert!(all.ends_with(buffer.text()));
            prop_assert!(buffer.text().len() <= limit);
            // At most one character's worth (< 4 bytes) is lost to the cut.
            prop_assert!(buffer.text().len() + 3 >= limit.min(all.len()));
            prop_assert_eq!(buffer.truncated(), all.len() > limit);
        }
    }
}

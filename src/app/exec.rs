//! `warden exec`: one turn without a terminal, the agent's text streamed to
//! stdout and one line per decision (and error) to stderr.

use std::time::Duration;

use tokio::time::Instant;

use super::tui_loop::sleep_until;
use super::{App, CANCEL_GRACE, Incoming, QuitSignals};
use crate::state::{Action, ChatState, Connection, Msg};

/// Why a headless run did not end with `end_turn`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExecError {
    /// The agent could not be reached, exited, or failed the prompt.
    #[error("{0}")]
    Agent(String),
    /// The turn ended for another reason than `end_turn`.
    #[error("the turn ended with {0}")]
    Stopped(String),
    /// The agent did not start, or the turn did not end, in time.
    #[error("{0}")]
    TimedOut(String),
    /// A signal (SIGTERM, SIGHUP, SIGINT) stopped the run.
    #[error("stopped by {0}")]
    Interrupted(&'static str),
}

impl ExecError {
    /// The exit status of `warden exec` for this failure: 124 for a time
    /// out (as `timeout(1)`), 130 for a signal, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ExecError::TimedOut(_) => 124,
            ExecError::Interrupted(_) => 130,
            ExecError::Agent(_) | ExecError::Stopped(_) => 1,
        }
    }
}

/// How long `warden exec` waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecLimits {
    /// For the agent to initialise and open its session.
    pub start: Duration,
    /// For the turn, from the prompt to the agent's answer (`None`: no limit).
    pub turn: Option<Duration>,
}

/// What woke a headless run.
enum Wake {
    Event(Option<Box<Incoming>>),
    Deadline,
    Signal(&'static str),
}

async fn wake(app: &mut App, deadline: Option<Instant>, signals: &mut Option<QuitSignals>) -> Wake {
    let signal = async {
        match signals.as_mut() {
            Some(signals) => signals.recv().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        event = app.next_agent_event() => Wake::Event(event.map(Box::new)),
        _ = sleep_until(deadline), if deadline.is_some() => Wake::Deadline,
        name = signal => Wake::Signal(name),
    }
}

/// Run one turn without a terminal (`warden exec`): the agent's text goes to
/// `out` as it streams, one line per decision (and error) to `err`. The
/// agent has `limits.start` to open its session and `limits.turn` for the
/// turn; a time out or a signal cancels the turn (pending requests are
/// answered) and ends the run with [`ExecError::TimedOut`] or
/// [`ExecError::Interrupted`].
pub async fn run_exec(
    app: &mut App,
    prompt: &str,
    limits: ExecLimits,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> Result<(), ExecError> {
    let mut printer = Printer::default();
    let mut signals = QuitSignals::new().ok();
    let start_by = Instant::now() + limits.start;
    while !matches!(app.state().session.connection, Connection::Ready { .. }) {
        if app.state().session.connection == Connection::Down {
            printer.flush(app.state(), out, err);
            return Err(ExecError::Agent(
                app.state()
                    .session
                    .failed
                    .clone()
                    .unwrap_or_else(|| "the agent is not running".into()),
            ));
        }
        match wake(app, Some(start_by), &mut signals).await {
            Wake::Event(Some(event)) => app.on_agent_event(*event),
            Wake::Event(None) => {
                return Err(ExecError::Agent("the agent connection closed".into()));
            }
            Wake::Deadline => {
                printer.flush(app.state(), out, err);
                return Err(ExecError::TimedOut(format!(
                    "the agent did not start a session within {} s (no answer to initialize or session/new)",
                    limits.start.as_secs()
                )));
            }
            Wake::Signal(name) => return Err(ExecError::Interrupted(name)),
        }
    }
    app.handle(Msg::Action(Action::Paste(prompt.to_string())));
    app.handle(Msg::Action(Action::Submit));
    let turn_by = limits.turn.map(|limit| Instant::now() + limit);
    let mut stopped: Option<ExecError> = None;
    let mut give_up: Option<Instant> = None;
    let mut asks = RemoteAsks::default();
    while app.state().is_busy() {
        asks.saw(app);
        let ask_by = asks.deadline().filter(|_| give_up.is_none());
        let deadline = match (give_up.or(turn_by), ask_by) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match wake(app, deadline, &mut signals).await {
            Wake::Event(Some(event)) => {
                app.on_agent_event(*event);
                // Take what else already arrived before printing, so a
                // stream is written in a few large writes, not one per chunk.
                for _ in 0..DRAIN {
                    match app.try_agent_event() {
                        Some(event) => app.on_agent_event(event),
                        None => break,
                    }
                }
            }
            Wake::Event(None) => break,
            // The agent did not end the cancelled turn either: stop waiting.
            Wake::Deadline if give_up.is_some() => break,
            // A card nobody answered on the remote page in time.
            Wake::Deadline if ask_by.is_some_and(|at| at <= Instant::now()) => {
                asks.deny_expired(app);
            }
            Wake::Deadline => {
                stopped = Some(ExecError::TimedOut(format!(
                    "the turn did not end within {} s; cancelled it",
                    limits.turn.map_or(0, |t| t.as_secs())
                )));
                app.handle(Msg::Action(Action::Cancel));
                give_up = Some(Instant::now() + CANCEL_GRACE);
            }
            Wake::Signal(name) => {
                stopped = Some(ExecError::Interrupted(name));
                app.handle(Msg::Action(Action::Cancel));
                give_up = Some(Instant::now() + CANCEL_GRACE);
            }
        }
        printer.flush(app.state(), out, err);
    }
    printer.flush(app.state(), out, err);
    printer.end_line(out);
    if let Some(stopped) = stopped {
        return Err(stopped);
    }
    if let Some(failed) = &app.state().session.failed {
        return Err(ExecError::Agent(failed.clone()));
    }
    match &app.state().session.last_stop {
        Some(crate::model::StopReason::EndTurn) => Ok(()),
        Some(other) => Err(ExecError::Stopped(crate::sanitize::one_line(
            other.as_str(),
        ))),
        None => Err(ExecError::Agent("the turn did not end".into())),
    }
}

/// The cards a headless run shows on the remote page (`--on-ask remote`),
/// with when each came: one not answered within the ask timeout is denied.
#[derive(Default)]
struct RemoteAsks {
    since: std::collections::HashMap<crate::state::RequestId, Instant>,
    timeout: Option<Duration>,
}

impl RemoteAsks {
    /// Note the cards that came, forget those answered.
    fn saw(&mut self, app: &App) {
        self.timeout = app.remote_ask_timeout();
        if self.timeout.is_none() {
            return;
        }
        let waiting: Vec<_> = app.state().gate.approvals.iter().map(|a| a.id).collect();
        self.since.retain(|id, _| waiting.contains(id));
        let now = Instant::now();
        for id in waiting {
            self.since.entry(id).or_insert(now);
        }
    }

    /// When the oldest card runs out of time.
    fn deadline(&self) -> Option<Instant> {
        let timeout = self.timeout?;
        self.since.values().min().map(|&since| since + timeout)
    }

    /// Deny every card whose time ran out, saying how long it waited.
    fn deny_expired(&mut self, app: &mut App) {
        let Some(timeout) = self.timeout else { return };
        let now = Instant::now();
        let expired: Vec<_> = self
            .since
            .iter()
            .filter(|(_, since)| **since + timeout <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            self.since.remove(&id);
            app.handle(Msg::RemoteAnswer {
                id,
                pick: crate::state::Answer::NoAnswer(timeout.as_secs()),
            });
        }
    }
}

/// At most this many events already waiting are applied before the
/// printer writes what they added.
const DRAIN: usize = 256;

/// Streams new transcript content of a headless run.
#[derive(Default)]
struct Printer {
    /// Entries before this index are fully printed.
    done: usize,
    /// Bytes of entry `done` already printed (agent text still streaming).
    partial: usize,
    /// The last agent text printed did not end its line.
    open_line: bool,
}

impl Printer {
    /// End the line the agent's text left open: the output always ends
    /// with a newline (Claude's last chunk has none).
    fn end_line(&mut self, out: &mut impl std::io::Write) {
        if std::mem::take(&mut self.open_line) {
            let _ = writeln!(out);
            let _ = out.flush();
        }
    }

    fn flush(
        &mut self,
        state: &ChatState,
        out: &mut impl std::io::Write,
        err: &mut impl std::io::Write,
    ) {
        use crate::sanitize::visible;
        use crate::state::EntryKind;
        let entries = state.session.transcript.entries();
        while self.done < entries.len() {
            let last = self.done + 1 == entries.len();
            match &entries[self.done].kind {
                EntryKind::Agent(text) => {
                    let fresh = &text[self.partial.min(text.len())..];
                    let _ = write!(out, "{}", visible(fresh));
                    let _ = out.flush();
                    if !fresh.is_empty() {
                        self.open_line = !text.ends_with('\n');
                    }
                    if last {
                        self.partial = text.len();
                        return;
                    }
                    self.end_line(out);
                }
                EntryKind::Decision { text, .. } => {
                    let _ = writeln!(err, "{}", visible(text));
                }
                EntryKind::Info(text) if crate::sandbox::is_told(text) => {
                    let _ = writeln!(err, "note: {}", visible(text));
                }
                // A warning carries its own prefix: "warning: …", not
                // "error: warning: …".
                EntryKind::Error { message, detail } if message.starts_with("warning: ") => {
                    let _ = writeln!(err, "{}", visible(message));
                    for line in detail {
                        let _ = writeln!(err, "  {}", visible(line));
                    }
                }
                EntryKind::Error { message, detail } => {
                    let _ = writeln!(err, "error: {}", visible(message));
                    for line in detail {
                        let _ = writeln!(err, "  {}", visible(line));
                    }
                }
                _ => {}
            }
            self.done += 1;
            self.partial = 0;
        }
    }
}

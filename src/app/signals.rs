//! The signals that end warden as Ctrl-D does: SIGTERM (`kill`), SIGHUP (the
//! terminal window closed) and SIGINT (`kill -INT`; in the TUI's raw mode
//! Ctrl-C is a key, not a signal). Whoever waits on [`QuitSignals::recv`]
//! then leaves through the normal path: pending requests answered, every
//! process group ended, the terminal restored.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// SIGTERM, SIGHUP and SIGINT, caught from creation on.
pub(crate) struct QuitSignals {
    term: Signal,
    hup: Signal,
    int: Signal,
}

impl QuitSignals {
    /// Catch the three signals (their default action, ending warden at
    /// once, no longer applies).
    pub(crate) fn new() -> std::io::Result<QuitSignals> {
        Ok(QuitSignals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// The name of the next of them to arrive.
    pub(crate) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
            _ = self.int.recv() => "SIGINT",
        }
    }
}

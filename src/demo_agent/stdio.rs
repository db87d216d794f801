//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, the
//! `initialize` handshake, and raw writes between protocol messages.

use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;

use super::lock;

/// How long the stdin reader holds the lines after `initialize` while the
/// answer is not out yet.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(5);

/// Held while a whole line goes to stdout, so that a scripted raw line
/// never lands inside a protocol message.
static STDOUT_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Protocol lines written to stdout so far; `None` until the stdio
/// transport runs (an in-process connection writes no lines).
static WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static WRITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How many protocol lines the stdio transport has written, when it runs.
pub(crate) fn lines_written() -> Option<u64> {
    use std::sync::atomic::Ordering;
    WRITING
        .load(Ordering::Relaxed)
        .then(|| WRITTEN.load(Ordering::Relaxed))
}

/// Write a raw line to stdout between protocol messages (the `raw` step).
pub(crate) async fn write_stdout(line: &[u8]) {
    let _whole_lines = STDOUT_LOCK.lock().await;
    let mut stdout = tokio::io::stdout();
    if stdout.write_all(line).await.is_err() || stdout.flush().await.is_err() {
        eprintln!("demo-agent: stdout is closed");
    }
}

/// Close the stdout pipe for good while the process keeps running (the
/// `close_stdout` step); later protocol writes go nowhere.
pub(crate) async fn close_stdout() {
    let _whole_lines = STDOUT_LOCK.lock().await;
    let _ = tokio::io::stdout().flush().await;
    // Put /dev/null in its place rather than closing it, so that a file
    // opened later can never become descriptor 1.
    match std::fs::OpenOptions::new().write(true).open("/dev/null") {
        Ok(null) => {
            use std::os::fd::AsRawFd;
            // SAFETY: dup2 on two open descriptors has no memory-safety
            // preconditions; `null` stays open for the call.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
            }
        }
        Err(error) => eprintln!("demo-agent: cannot open /dev/null: {error}"),
    }
    eprintln!("demo-agent: closed stdout");
}

/// Newline-delimited JSON-RPC on stdin/stdout.
///
/// Stdin is read by a plain thread (not tokio's blocking pool), so that an
/// agent that exits never waits for a read that cannot be cancelled; blank
/// lines are skipped. See [`Handshake`] for what happens around `initialize`.
pub(super) fn stdio_transport(
    protocol_version: u16,
    extras: super::extras::Extras,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let handshake = Arc::new(Handshake::new(protocol_version));
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(256);
    let reader_handshake = handshake.clone();
    let spawned = std::thread::Builder::new()
        .name("demo-agent-stdin".to_owned())
        .spawn(move || read_stdin(&tx, &reader_handshake));
    if let Err(error) = spawned {
        eprintln!("demo-agent: cannot start the stdin reader: {error}");
    }
    let incoming = StdinLines { rx };
    WRITING.store(true, std::sync::atomic::Ordering::Relaxed);
    let outgoing = futures::sink::unfold(
        (handshake, extras),
        async move |(handshake, extras), line: String| {
            let mut line = extras.outgoing(handshake.outgoing(line));
            line.push('\n');
            {
                let _whole_lines = STDOUT_LOCK.lock().await;
                // A plain write on this thread: tokio's stdout hands every
                // write to its blocking pool, two thread switches per message
                // (a flood of 100k chunks took 6 s of CPU that way, 0.5 s
                // this way). A full pipe blocks the agent until warden reads,
                // as it should.
                use std::io::Write;
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(line.as_bytes())?;
                stdout.flush()?;
            }
            WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            handshake.written();
            Ok::<_, std::io::Error>((handshake, extras))
        },
    );
    Lines::new(outgoing, incoming)
}

fn read_stdin(tx: &tokio::sync::mpsc::Sender<std::io::Result<String>>, handshake: &Handshake) {
    use std::io::BufRead;
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                let initialize = handshake.incoming(line);
                if tx.blocking_send(Ok(line.to_owned())).is_err() {
                    return;
                }
                if initialize {
                    handshake.wait_for_answer(HANDSHAKE_WAIT);
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => {
                let _ = tx.blocking_send(Err(error));
                return;
            }
        }
    }
}

/// The lines the stdin thread read, as a stream; it ends at EOF.
struct StdinLines {
    rx: tokio::sync::mpsc::Receiver<std::io::Result<String>>,
}

impl Stream for StdinLines {
    type Item = std::io::Result<String>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// The `initialize` exchange, seen from the transport.
///
/// - The SDK refuses other requests until its `initialize` answer is out, so
///   a client that writes everything at once (`printf ... | warden
///   demo-agent`) would race it: the reader holds the lines after
///   `initialize` until the answer is written.
/// - The SDK always answers the version it speaks (1); a scenario's other
///   `protocol_version` is written into the answer here.
struct Handshake {
    /// The version to put in the answer, when not 1.
    rewrite_to: Option<u16>,
    /// The id of the `initialize` request not answered yet.
    pending: Mutex<Option<serde_json::Value>>,
    /// Whether the answer to `pending` is written (the reader waits on it).
    answered: Mutex<bool>,
    wake: Condvar,
}

impl Handshake {
    fn new(protocol_version: u16) -> Self {
        Self {
            rewrite_to: (protocol_version != 1).then_some(protocol_version),
            pending: Mutex::new(None),
            answered: Mutex::new(true),
            wake: Condvar::new(),
        }
    }

    /// Note an incoming line; true when it is an `initialize` request.
    fn incoming(&self, line: &str) -> bool {
        if !line.contains("\"initialize\"") {
            return false;
        }
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return false;
        };
        let Some(id) = message
            .get("id")
            .filter(|_| message.get("method").and_then(|m| m.as_str()) == Some("initialize"))
        else {
            return false;
        };
        *lock(&self.pending) = Some(id.clone());
        *lock(&self.answered) = false;
        true
    }

    /// The outgoing line, with the scenario's version if it answers `initialize`.
    fn outgoing(&self, line: String) -> String {
        let mut pending = lock(&self.pending);
        let Some(id) = pending.as_ref() else {
            return line;
        };
        let Ok(mut message) = serde_json::from_str::<serde_json::Value>(&line) else {
            return line;
        };
        if message.get("id") != Some(id) || message.get("method").is_some() {
            return line;
        }
        *pending = None;
        let Some(version) = self.rewrite_to else {
            return line;
        };
        let Some(result) = message.get_mut("result").and_then(|r| r.as_object_mut()) else {
            return line;
        };
        result.insert("protocolVersion".to_owned(), version.into());
        serde_json::to_string(&message).unwrap_or(line)
    }

    /// A line is written: wake the reader if it was the answer.
    fn written(&self) {
        if lock(&self.pending).is_none() {
            let mut answered = lock(&self.answered);
            if !*answered {
                *answered = true;
                self.wake.notify_all();
            }
        }
    }

    fn wait_for_answer(&self, limit: Duration) {
        let answered = lock(&self.answered);
        let _ = self
            .wake
            .wait_timeout_while(answered, limit, |answered| !*answered);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn version_rewrite_changes_only_the_initialize_answer() {
        let rewrite = Handshake::new(0);
        let other = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        assert!(rewrite.incoming(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#));
        assert_eq!(rewrite.outgoing(other.to_owned()), other);
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#;
        let rewritten: serde_json::Value =
            serde_json::from_str(&rewrite.outgoing(answer.to_owned())).unwrap();
        assert_eq!(
            rewritten,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"protocolVersion": 0}})
        );
        assert_eq!(rewrite.outgoing(answer.to_owned()), answer);
        rewrite.written();
        rewrite.wait_for_answer(Duration::from_secs(5));
    }

    #[test]
    fn version_1_answers_are_left_alone() {
        let handshake = Handshake::new(1);
        assert!(!handshake.incoming(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#));
        assert!(handshake.incoming(r#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#));
        let answer = r#"{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":1}}"#;
        assert_eq!(handshake.outgoing(answer.to_owned()), answer);
        handshake.written();
        handshake.wait_for_answer(Duration::from_secs(5));
    }
}

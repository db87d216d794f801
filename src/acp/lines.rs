//! The agent's stdout as JSON-RPC lines, forgiving of what a misbehaving
//! agent writes there.
//!
//! The SDK's own byte transport ends the connection at the first line that
//! is not UTF-8. Here each line is judged on its own: a line that is not
//! UTF-8, does not look like a JSON-RPC message (an agent that prints debug
//! output to stdout), or is longer than [`MAX_LINE`] is skipped and
//! reported (the first of each kind to the user, all of them to the log);
//! the session goes on. A line is kept to at most [`MAX_LINE`] bytes while it
//! is read, so an endless line cannot grow warden without bound.

use std::io;

use futures::{Sink, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

use super::fast::{FastPath, Incoming, Route};
use super::pipe::Nudge;

/// The longest line kept (a file's text in `fs/write_text_file` arrives in one line).
pub(super) const MAX_LINE: usize = 64 << 20;

/// Why a line was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Skipped {
    /// Not valid UTF-8.
    NotUtf8,
    /// UTF-8, but not a JSON object or array.
    NotJson,
    /// Longer than [`MAX_LINE`].
    TooLong,
}

impl Skipped {
    /// What the user is told, once per kind and connection.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Skipped::NotUtf8 => {
                "the agent wrote a line that is not valid UTF-8 to its output; skipped it, the session goes on"
            }
            Skipped::NotJson => {
                "the agent wrote a line that is not JSON-RPC to its output (debug output?); skipped it, the session goes on"
            }
            Skipped::TooLong => {
                "the agent wrote a line over 64 MiB to its output; skipped it, the session goes on"
            }
        }
    }
}

/// Read one line into `line` (without its `\n`), keeping at most `max`
/// bytes. `Ok(None)` at the end of the stream; `Ok(Some(true))` when the
/// line was longer and dropped (all of it, or past `max` when `keep_head`).
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
    keep_head: bool,
) -> io::Result<Option<bool>> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(any.then_some(too_long));
        }
        any = true;
        let (chunk, found) = match newline(buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                if keep_head {
                    let room = max - line.len();
                    line.extend_from_slice(&chunk[..room]);
                } else {
                    line.clear();
                    line.shrink_to_fit();
                }
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = found.unwrap_or(buf.len());
        reader.consume(used);
        if found.is_some() {
            return Ok(Some(too_long));
        }
    }
}

/// Where the first `\n` of `buf` is (std's `skip_until` on a slice finds it
/// with `memchr`, many bytes at a time).
fn newline(buf: &[u8]) -> Option<usize> {
    let mut rest = buf;
    let through = std::io::BufRead::skip_until(&mut rest, b'\n').unwrap_or(0);
    (through > 0 && buf[through - 1] == b'\n').then(|| through - 1)
}

/// What became of one line.
enum Judged {
    /// For the SDK.
    Sdk(String),
    /// Sent on the fast path, blank, or skipped.
    Done,
}

/// Judge a whole line and route it.
fn route<F: FnMut(Skipped)>(
    bytes: &[u8],
    too_long: bool,
    fast: &mut Incoming,
    skipped: &mut F,
) -> Judged {
    match judge(bytes, too_long) {
        Ok(Some(text)) => match fast.route(text) {
            Route::Sdk => Judged::Sdk(text.to_string()),
            Route::Fence(fence) => Judged::Sdk(fence),
            Route::Sent => Judged::Done,
        },
        Ok(None) => Judged::Done,
        Err(why) => {
            skipped(why);
            Judged::Done
        }
    }
}

/// Judge one line: the text to hand on, `Ok(None)` for a blank line, or
/// why it is skipped.
fn judge(bytes: &[u8], too_long: bool) -> Result<Option<&str>, Skipped> {
    if too_long {
        return Err(Skipped::TooLong);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| Skipped::NotUtf8)?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    let start = text.trim_start();
    if start.is_empty() {
        return Ok(None);
    }
    if !(start.starts_with('{') || start.starts_with('[')) {
        return Err(Skipped::NotJson);
    }
    Ok(Some(text))
}

/// A line buffer grown past this is let go after its line, so that one
/// huge line does not keep its memory.
const KEEP_LINE: usize = 1 << 20;

/// The reader's state between lines.
struct Reader<R, F> {
    reader: R,
    line: Vec<u8>,
    skipped: F,
    closed: Option<tokio::sync::oneshot::Sender<()>>,
    fast: Incoming,
}

impl<R: AsyncBufRead + Unpin, F: FnMut(Skipped)> Reader<R, F> {
    /// The next line for the SDK; text chunks take the fast path meanwhile.
    async fn next(&mut self) -> Option<io::Result<String>> {
        loop {
            self.fast.release().await;
            if self.line.capacity() > KEEP_LINE {
                self.line = Vec::new();
            }
            // A whole line already in the buffer is judged where it lies.
            let whole = match self.reader.fill_buf().await {
                Ok(buf) => match newline(buf) {
                    Some(end) if end <= MAX_LINE => {
                        let judged = route(&buf[..end], false, &mut self.fast, &mut self.skipped);
                        Some((end + 1, judged))
                    }
                    _ => None,
                },
                Err(err) => {
                    self.close();
                    return Some(Err(err));
                }
            };
            if let Some((used, judged)) = whole {
                self.reader.consume(used);
                match judged {
                    Judged::Sdk(line) => return Some(Ok(line)),
                    Judged::Done => continue,
                }
            }
            match read_line(&mut self.reader, &mut self.line, MAX_LINE, false).await {
                Ok(None) => {
                    self.close();
                    return None;
                }
                Err(err) => {
                    self.close();
                    return Some(Err(err));
                }
                Ok(Some(too_long)) => {
                    match route(&self.line, too_long, &mut self.fast, &mut self.skipped) {
                        Judged::Sdk(line) => return Some(Ok(line)),
                        Judged::Done => {}
                    }
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(closed) = self.closed.take() {
            let _ = closed.send(());
        }
    }
}

/// The agent's output (buffered: [`super::pipe`] reads it in blocks) as a
/// stream of JSON-RPC lines for the SDK's `Lines` transport; text chunks of
/// `session/update` take the fast path ([`super::fast`]) instead. `skipped` hears of every line left out;
/// `closed` is sent when the output ends or fails (the SDK keeps the
/// connection open past that).
pub(super) fn incoming<R>(
    reader: R,
    skipped: impl FnMut(Skipped) + Send + 'static,
    closed: tokio::sync::oneshot::Sender<()>,
    fast: &FastPath,
) -> impl Stream<Item = io::Result<String>> + Send + 'static
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let state = Reader {
        reader,
        line: Vec::new(),
        skipped,
        closed: Some(closed),
        fast: fast.incoming(),
    };
    futures::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    })
}

/// Lines to the agent's stdin, each followed by `\n` and flushed. The fast
/// path sees each (it starts after the answer to `initialize`); each
/// `nudge`s the stdout reader, as the agent may answer at once.
pub(super) fn outgoing<W>(
    writer: W,
    fast: &FastPath,
    nudge: Nudge,
) -> impl Sink<String, Error = io::Error> + Send + 'static
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let fast = fast.clone();
    futures::sink::unfold(writer, move |mut writer, line: String| {
        fast.outgoing(&line);
        let nudge = nudge.clone();
        async move {
            writer.write_all(line.as_bytes()).await?;
            writer.write_all(b"\n").await?;
            writer.flush().await?;
            nudge.nudge();
            Ok::<_, io::Error>(writer)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use std::sync::{Arc, Mutex};

    async fn lines_of(input: &[u8]) -> (Vec<String>, Vec<Skipped>) {
        let skipped = Arc::new(Mutex::new(Vec::new()));
        let seen = skipped.clone();
        let (closed, was_closed) = tokio::sync::oneshot::channel();
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let stream = incoming(
            std::io::Cursor::new(input.to_vec()),
            move |why| seen.lock().expect("lock").push(why),
            closed,
            &FastPath::new(events.into()),
        );
        let lines: Vec<String> = stream
            .map(|l| l.expect("no io error"))
            .collect::<Vec<_>>()
            .await;
        let skipped = skipped.lock().expect("lock").clone();
        assert!(was_closed.await.is_ok(), "the end is told");
        (lines, skipped)
    }

    #[tokio::test]
    async fn bad_lines_are_skipped_and_the_rest_goes_on() {
        let input =
            b"{\"a\":1}\n\xff\xfe{\"bad\":1}\nnot json\n\n  \r\n{\"b\":2}\r\n[1]\n{\"c\":3}";
        let (lines, skipped) = lines_of(input).await;
        assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}", "[1]", "{\"c\":3}"]);
        assert_eq!(skipped, [Skipped::NotUtf8, Skipped::NotJson]);
    }

    #[tokio::test]
    async fn an_endless_line_is_dropped_without_keeping_it() {
        let mut input = vec![b'{'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"after\":true}\n");
        let (lines, skipped) = lines_of(&input).await;
        assert_eq!(lines, ["{\"after\":true}"]);
        assert_eq!(skipped, [Skipped::TooLong]);
    }

    #[tokio::test]
    async fn a_long_stderr_line_keeps_its_head_only() {
        let mut input = vec![b'x'; 100_000];
        input.extend_from_slice(b"\nnext\n");
        let mut reader = tokio::io::BufReader::with_capacity(1024, std::io::Cursor::new(input));
        let mut line = Vec::new();
        let cut = read_line(&mut reader, &mut line, 4096, true)
            .await
            .expect("read");
        assert_eq!((cut, line.len()), (Some(true), 4096));
        assert!(
            line.capacity() < 2 * 4096 + 1024,
            "never held the whole line"
        );
        let cut = read_line(&mut reader, &mut line, 4096, true)
            .await
            .expect("read");
        assert_eq!((cut, line.as_slice()), (Some(false), b"next".as_slice()));
        assert_eq!(
            read_line(&mut reader, &mut line, 4096, true)
                .await
                .expect("read"),
            None
        );
    }

    #[test]
    fn newline_finds_the_first_newline_only() {
        assert_eq!(newline(b""), None);
        assert_eq!(newline(b"no end"), None);
        assert_eq!(newline(b"\n"), Some(0));
        assert_eq!(newline(b"ab\ncd\n"), Some(2));
        let mut long = vec![b'x'; 100_000];
        long.push(b'\n');
        assert_eq!(newline(&long), Some(100_000));
    }

    #[tokio::test]
    async fn lines_written_in_small_pieces_arrive_whole_and_in_order() {
        use tokio::io::AsyncWriteExt;
        let (mut agent, output) = tokio::io::duplex(256);
        let (closed, _) = tokio::sync::oneshot::channel();
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let output = tokio::io::BufReader::new(output);
        let stream = incoming(output, |_| {}, closed, &FastPath::new(events.into()));
        let writer = tokio::spawn(async move {
            for i in 0..200 {
                let line = format!("{{\"n\":{i}}}\n");
                let (head, tail) = line.as_bytes().split_at(i % line.len());
                agent.write_all(head).await.expect("write");
                if i % 7 == 0 {
                    tokio::task::yield_now().await;
                }
                agent.write_all(tail).await.expect("write");
            }
        });
        let lines: Vec<String> = stream.map(|l| l.expect("no io error")).collect().await;
        writer.await.expect("writer");
        let want: Vec<String> = (0..200).map(|i| format!("{{\"n\":{i}}}")).collect();
        assert_eq!(lines, want);
    }

    #[tokio::test]
    async fn a_line_written_to_the_agent_nudges_the_reader() {
        use futures::SinkExt;
        let (client, _server) = tokio::io::duplex(1024);
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let nudge = Nudge::default();
        let mut sink = Box::pin(outgoing(
            client,
            &FastPath::new(events.into()),
            nudge.clone(),
        ));
        sink.send("{\"x\":1}".to_string()).await.expect("sent");
        // The nudge is waiting: a long linger ends at once (without it,
        // it would run its whole time).
        let long = std::time::Duration::from_secs(5);
        let at = std::time::Instant::now();
        tokio::task::spawn_blocking(move || nudge.linger(long, || false))
            .await
            .expect("linger");
        assert!(at.elapsed() < long);
    }

    #[tokio::test]
    async fn outgoing_lines_end_in_newlines() {
        use futures::SinkExt;
        let (client, mut server) = tokio::io::duplex(1024);
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let mut sink = Box::pin(outgoing(
            client,
            &FastPath::new(events.into()),
            Nudge::default(),
        ));
        sink.send("{\"x\":1}".to_string()).await.expect("sent");
        sink.send("{\"y\":2}".to_string()).await.expect("sent");
        drop(sink);
        let mut got = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut server, &mut got)
            .await
            .expect("read");
        assert_eq!(got, "{\"x\":1}\n{\"y\":2}\n");
    }
}

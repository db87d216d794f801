//! The agent's stdout, read on a thread of its own in large blocks.
//!
//! An agent writes one message per `write`. Read as it comes, each message
//! costs warden a wake of its loop, a `read` and an `epoll_wait` (about half
//! of warden's CPU in a flood of text chunks). Here a thread reads the pipe
//! with blocking reads; after a read that got little (warden keeps up with
//! the agent), it sleeps [`LINGER`] before the next, so that a stream of
//! small writes gathers in the pipe and is read at once. The first message
//! after a pause is read and handed on at once; only those that follow it
//! in a stream wait, at most [`LINGER`] (a frame is 16 ms). Sleeping on
//! this thread wakes nothing: an async timer would be woken by every write
//! the agent makes meanwhile.
//!
//! Blocks go to the connection through a bounded channel: when warden falls
//! behind, the thread waits, the pipe fills and the agent waits too.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// The most read at once (a pipe holds 64 KiB unless the agent grew it).
const BLOCK: usize = 64 << 10;

/// A read that got less than this means warden reads faster than the
/// agent writes: the next read waits [`LINGER`] first.
const TRICKLE: usize = 16 << 10;

/// How long a stream of small writes may gather in the pipe.
const LINGER: Duration = Duration::from_millis(1);

/// Blocks read but not yet taken (at most this many times [`BLOCK`]).
const QUEUED: usize = 8;

/// The reading end of the agent's stdout, fed by its reader thread.
pub(super) struct Threaded {
    blocks: mpsc::Receiver<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    taken: usize,
    ended: bool,
}

/// Read `stdout` on a new thread.
pub(super) fn threaded(stdout: tokio::process::ChildStdout) -> io::Result<Threaded> {
    let fd = stdout.into_owned_fd()?;
    blocking(&fd)?;
    let (tx, blocks) = mpsc::channel(QUEUED);
    std::thread::Builder::new()
        .name("agent-stdout".to_owned())
        .spawn(move || read_blocks(std::fs::File::from(fd), &tx))?;
    Ok(Threaded {
        blocks,
        block: Vec::new(),
        taken: 0,
        ended: false,
    })
}

/// Clear `O_NONBLOCK` (tokio set it for its reactor).
fn blocking(fd: &OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a file descriptor this process owns, with integer arguments.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn read_blocks(mut pipe: impl Read, tx: &mpsc::Sender<io::Result<Vec<u8>>>) {
    let mut buf = vec![0u8; BLOCK];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(got) => {
                if tx.blocking_send(Ok(buf[..got].to_vec())).is_err() {
                    return;
                }
                if got < TRICKLE {
                    std::thread::sleep(LINGER);
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => {
                let _ = tx.blocking_send(Err(err));
                return;
            }
        }
    }
}

impl AsyncBufRead for Threaded {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.taken == this.block.len() && !this.ended {
            match this.blocks.poll_recv(cx) {
                Poll::Ready(Some(Ok(block))) => {
                    this.block = block;
                    this.taken = 0;
                }
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Err(err)),
                Poll::Ready(None) => this.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(&this.block[this.taken..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        this.taken = (this.taken + amt).min(this.block.len());
    }
}

impl AsyncRead for Threaded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let got = match self.as_mut().poll_fill_buf(cx) {
            Poll::Ready(Ok(got)) => got,
            Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
            Poll::Pending => return Poll::Pending,
        };
        let n = got.len().min(buf.remaining());
        buf.put_slice(&got[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn reads_what_a_child_writes_in_small_pieces_then_the_end() {
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg("i=0; while [ $i -lt 300 ]; do printf 'line %d\\n' $i; i=$((i+1)); done")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = threaded(stdout).expect("threaded");
        let mut text = String::new();
        reader.read_to_string(&mut text).await.expect("read");
        let want: String = (0..300).map(|i| format!("line {i}\n")).collect();
        assert_eq!(text, want);
        let _ = child.wait().await;
    }

    #[test]
    fn a_read_error_is_passed_on_after_the_blocks_before_it() {
        struct Failing(u8);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0 += 1;
                match self.0 {
                    1 => {
                        buf[..3].copy_from_slice(b"ab\n");
                        Ok(3)
                    }
                    2 => Err(io::Error::from(io::ErrorKind::Interrupted)),
                    _ => Err(io::Error::other("broken")),
                }
            }
        }
        let (tx, mut rx) = mpsc::channel(QUEUED);
        read_blocks(Failing(0), &tx);
        drop(tx);
        assert_eq!(
            rx.try_recv().ok().map(|b| b.ok()),
            Some(Some(b"ab\n".to_vec()))
        );
        assert!(matches!(rx.try_recv(), Ok(Err(_))));
        assert!(rx.try_recv().is_err(), "nothing after the error");
    }
}

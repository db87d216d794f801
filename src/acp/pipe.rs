//! The agent's stdout, read on a thread of its own in large blocks.
//!
//! An agent writes one message per `write`. Read as it comes, each message
//! costs warden a wake of its loop, a `read` and an `epoll_wait`, and the
//! SDK's connection a poll (most of warden's CPU in a paced stream of text
//! chunks). Here a thread reads the pipe with blocking reads; after a read
//! that got little (warden keeps up with the agent), it waits [`LINGER`]
//! before the next, so that a stream of small writes gathers in the pipe
//! and is read at once. The first message after a pause is read and handed
//! on at once; only those that follow it in a stream wait, at most
//! [`LINGER`] (half a frame: what they change is drawn at the next frame
//! either way). Waiting on this thread wakes nothing: an async timer would
//! be woken by every write the agent makes meanwhile.
//!
//! An exchange is not a stream: when warden writes to the agent (an answer,
//! a request), the agent's reply must not wait out the linger. Each line
//! warden writes [`Nudge`]s the thread, which ends its wait and reads again
//! at once.
//!
//! Blocks go to the connection through a bounded channel: when warden falls
//! behind, the thread waits, the pipe fills and the agent waits too.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// The most read at once (a pipe holds 64 KiB unless the agent grew it).
const BLOCK: usize = 64 << 10;

/// A read that got less than this means warden reads faster than the
/// agent writes: the next read waits [`LINGER`] first.
const TRICKLE: usize = 16 << 10;

/// How long a stream of small writes may gather in the pipe.
const LINGER: Duration = Duration::from_millis(8);

/// When a linger first looks whether the pipe already holds [`TRICKLE`];
/// each look after waits twice as long as the one before (a flood of 40
/// MB/s gathers 20 KiB in the first, far from filling the pipe; a paced
/// stream costs the thread four looks per linger).
const FIRST_LOOK: Duration = Duration::from_micros(500);

/// Blocks read but not yet taken (at most this many times [`BLOCK`]).
const QUEUED: usize = 8;

/// The reading end of the agent's stdout, fed by its reader thread.
pub(super) struct Threaded {
    blocks: mpsc::Receiver<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    taken: usize,
    ended: bool,
    nudge: Nudge,
}

/// Ends the reader thread's linger: warden wrote to the agent, so an answer
/// may come that should not wait.
#[derive(Clone, Default)]
pub(super) struct Nudge(Arc<(Mutex<bool>, Condvar)>);

impl Nudge {
    /// Wake the thread if it lingers (and make its next linger short).
    pub(super) fn nudge(&self) {
        let (nudged, wake) = &*self.0;
        *nudged.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_one();
    }

    /// Wait `linger`, or until nudged (since the last wait), or until
    /// `enough` says that the wait has gathered enough (a flood must not
    /// fill the pipe and stall the agent): it is asked after
    /// [`FIRST_LOOK`], then after twice as long each time.
    pub(super) fn linger(&self, linger: Duration, enough: impl Fn() -> bool) {
        let (nudged, wake) = &*self.0;
        let end = Instant::now() + linger;
        let mut guard = nudged.lock().unwrap_or_else(PoisonError::into_inner);
        let mut step = FIRST_LOOK;
        while !*guard {
            let Some(left) = end
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
            else {
                break;
            };
            guard = wake
                .wait_timeout(guard, left.min(step))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            step *= 2;
            if !*guard && enough() {
                break;
            }
        }
        *guard = false;
    }
}

/// Bytes waiting in the pipe `fd` (`FIONREAD`); 0 when it cannot tell.
fn waiting(fd: std::os::fd::BorrowedFd<'_>) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which is valid.
    let ok = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) } == 0;
    if ok {
        usize::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

/// Read `stdout` on a new thread.
pub(super) fn threaded(stdout: tokio::process::ChildStdout) -> io::Result<Threaded> {
    let fd = stdout.into_owned_fd()?;
    blocking(&fd)?;
    let (tx, blocks) = mpsc::channel(QUEUED);
    let nudge = Nudge::default();
    let lingering = nudge.clone();
    std::thread::Builder::new()
        .name("agent-stdout".to_owned())
        .spawn(move || {
            let pipe = std::fs::File::from(fd);
            let enough = || {
                use std::os::fd::AsFd;
                waiting(pipe.as_fd()) >= TRICKLE
            };
            read_blocks(&pipe, &tx, &|| lingering.linger(LINGER, enough));
        })?;
    Ok(Threaded {
        blocks,
        block: Vec::new(),
        taken: 0,
        ended: false,
        nudge,
    })
}

impl Threaded {
    /// What ends the reader's linger (for the side that writes to the agent).
    pub(super) fn nudge(&self) -> Nudge {
        self.nudge.clone()
    }
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

/// Read `pipe` into blocks on `tx`; `linger` after a small read.
fn read_blocks(mut pipe: impl Read, tx: &mpsc::Sender<io::Result<Vec<u8>>>, linger: &dyn Fn()) {
    let mut buf = vec![0u8; BLOCK];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(got) => {
                if tx.blocking_send(Ok(buf[..got].to_vec())).is_err() {
                    return;
                }
                if got < TRICKLE {
                    linger();
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
    fn a_nudge_ends_the_linger_and_one_given_before_it_too() {
        let nudge = Nudge::default();
        let long = Duration::from_secs(600);
        // Given before: the next linger ends at once.
        nudge.nudge();
        let at = std::time::Instant::now();
        nudge.linger(long, || false);
        assert!(at.elapsed() < long, "a nudge waiting is taken");
        // Given during: the linger ends.
        let other = nudge.clone();
        let nudger = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            other.nudge();
        });
        let at = std::time::Instant::now();
        nudge.linger(long, || false);
        assert!(at.elapsed() < long, "woken by the nudge");
        nudger.join().expect("nudger");
        // Taken: the next linger waits its time.
        let at = std::time::Instant::now();
        nudge.linger(Duration::from_millis(30), || false);
        assert!(at.elapsed() >= Duration::from_millis(30), "no nudge left");
    }

    #[test]
    fn a_linger_ends_once_the_pipe_holds_enough() {
        let (reader, mut writer) = std::io::pipe().expect("pipe");
        use std::io::Write;
        use std::os::fd::AsFd;
        assert_eq!(waiting(reader.as_fd()), 0);
        writer.write_all(&[b'x'; TRICKLE]).expect("write");
        assert_eq!(waiting(reader.as_fd()), TRICKLE);
        let long = Duration::from_secs(5);
        let at = std::time::Instant::now();
        Nudge::default().linger(long, || waiting(reader.as_fd()) >= TRICKLE);
        assert!(at.elapsed() < long, "the full pipe ended the wait");
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
        read_blocks(Failing(0), &tx, &|| {});
        drop(tx);
        assert_eq!(
            rx.try_recv().ok().map(|b| b.ok()),
            Some(Some(b"ab\n".to_vec()))
        );
        assert!(matches!(rx.try_recv(), Ok(Err(_))));
        assert!(rx.try_recv().is_err(), "nothing after the error");
    }
}

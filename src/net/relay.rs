//! A connection the proxy let through, relayed both ways until both sides
//! are done: in the kernel (`splice` through a pipe) on Linux, else
//! through buffers.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// The buffer of each direction of a relayed connection.
const RELAY_BUFFER: usize = 256 * 1024;

/// Copy both ways until both sides are done: in the kernel (`splice`
/// through a pipe, no copy into warden) where it can, else through
/// buffers.
pub(super) async fn relay(a: TcpStream, b: TcpStream) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if let (Ok(one), Ok(other)) = (splice::Pipe::new(), splice::Pipe::new()) {
        let done = tokio::try_join!(splice::pump(&a, &b, &one), splice::pump(&b, &a, &other));
        return done.map(|_| ());
    }
    copy(a, b).await
}

/// [`relay`] through buffers.
#[cfg_attr(target_os = "linux", allow(dead_code))]
async fn copy<A, B>(mut a: A, mut b: B) -> std::io::Result<()>
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    tokio::io::copy_bidirectional_with_sizes(&mut a, &mut b, RELAY_BUFFER, RELAY_BUFFER)
        .await
        .map(|_| ())
}

/// One direction of a relayed connection moved in the kernel: socket to
/// pipe to socket.
#[cfg(target_os = "linux")]
mod splice {
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

    use tokio::io::Interest;
    use tokio::net::TcpStream;

    /// How much one `splice` moves at most (the pipe's size, asked for).
    const CHUNK: usize = 1 << 20;

    /// A non-blocking pipe.
    pub(super) struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
    }

    impl Pipe {
        pub(super) fn new() -> std::io::Result<Pipe> {
            let mut fds = [-1; 2];
            // SAFETY: `fds` has room for the two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: both were just made and are owned here.
            let pipe = unsafe {
                Pipe {
                    read: OwnedFd::from_raw_fd(fds[0]),
                    write: OwnedFd::from_raw_fd(fds[1]),
                }
            };
            // A bigger pipe moves more per call; the default is fine too.
            // SAFETY: a plain fcntl on a descriptor owned here.
            unsafe {
                libc::fcntl(
                    pipe.write.as_raw_fd(),
                    libc::F_SETPIPE_SZ,
                    CHUNK as libc::c_int,
                )
            };
            Ok(pipe)
        }
    }

    fn splice(from: RawFd, to: RawFd, len: usize) -> std::io::Result<usize> {
        // SAFETY: a system call on descriptors alive for the call.
        let moved = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
            )
        };
        usize::try_from(moved).map_err(|_| std::io::Error::last_os_error())
    }

    /// Move what `from` sends to `to` until `from` ends, then end `to`'s
    /// sending side.
    pub(super) async fn pump(from: &TcpStream, to: &TcpStream, pipe: &Pipe) -> std::io::Result<()> {
        let (from_fd, to_fd) = (from.as_raw_fd(), to.as_raw_fd());
        let (pipe_read, pipe_write) = (pipe.read.as_raw_fd(), pipe.write.as_raw_fd());
        loop {
            let got = loop {
                from.readable().await?;
                match from.try_io(Interest::READABLE, || splice(from_fd, pipe_write, CHUNK)) {
                    Ok(n) => break n,
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(err) => return Err(err),
                }
            };
            if got == 0 {
                // SAFETY: a plain system call on a live socket.
                unsafe { libc::shutdown(to_fd, libc::SHUT_WR) };
                return Ok(());
            }
            let mut left = got;
            while left > 0 {
                to.writable().await?;
                match to.try_io(Interest::WRITABLE, || splice(pipe_read, to_fd, left)) {
                    Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                    Ok(n) => left -= n,
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(err) => return Err(err),
                }
            }
        }
    }
}

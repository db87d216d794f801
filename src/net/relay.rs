//! A connection the proxy let through, relayed both ways until both sides
//! are done: each side's end of sending is passed on (a half-close), and
//! an error on either side ends both.
//!
//! Through a buffer in warden for each direction, not `splice`: on
//! loopback (Linux 6.18, `benches/net.rs`) `splice` saved the proxy its
//! two copies but the agent paid more to read what it sent (the pipe's
//! pages arrive in 4 KiB pieces), so the whole cost more CPU and the
//! download ran slower. A buffer begins at 64 KiB and grows to 1 MiB only
//! for a bulk transfer.
//!
//! A forwarded plain-HTTP request is relayed once ([`forward_once`]): its
//! body, then only the answer.

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Each direction's buffer to begin with: enough for a request or an
/// interactive exchange.
const FIRST_BUFFER: usize = 64 * 1024;

/// What a direction's buffer grows to once a read fills it (a bulk
/// transfer): one read and one write then move up to 1 MiB (64 KiB ran
/// at half the throughput). Grown, never zeroed: a 1 MiB buffer zeroed
/// for each connection cost 1.3 ms per connection.
const BULK_BUFFER: usize = 1 << 20;

/// Copy both ways between the agent's connection and the host's until
/// both sides are done.
pub(super) async fn relay(mut agent: TcpStream, mut upstream: TcpStream) -> std::io::Result<()> {
    unpaced_on_loopback(&agent);
    let (mut agent_reads, mut agent_writes) = agent.split();
    let (mut upstream_reads, mut upstream_writes) = upstream.split();
    tokio::try_join!(
        one_way(&mut agent_reads, &mut upstream_writes),
        one_way(&mut upstream_reads, &mut agent_writes),
    )
    .map(|_| ())
}

/// Move what `from` sends to `to` until `from` ends, then end `to`'s
/// sending side.
async fn one_way<R, W>(from: &mut R, to: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = Vec::with_capacity(FIRST_BUFFER);
    loop {
        buf.clear();
        // Reads into the spare capacity: at most `buf.capacity()`.
        let got = from.read_buf(&mut buf).await?;
        if got == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf).await?;
        if got == buf.capacity() && buf.capacity() < BULK_BUFFER {
            buf = Vec::with_capacity(BULK_BUFFER);
        }
    }
}

/// The agent's side of a connection is loopback (its namespace's or the
/// host's): there, a congestion control that paces (bbr, when it is the
/// system's default) only spends timers and small segments, about a
/// third of the proxy's CPU per byte as measured. Reno, which every user
/// may choose, does not pace. Best effort: a socket that refuses keeps
/// the default.
fn unpaced_on_loopback(agent: &TcpStream) {
    let loopback = |addr: std::io::Result<std::net::SocketAddr>| {
        addr.is_ok_and(|addr| addr.ip().is_loopback())
    };
    if !(loopback(agent.local_addr()) && loopback(agent.peer_addr())) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        const RENO: &[u8] = b"reno";
        // SAFETY: a plain system call on a live socket, with a valid
        // pointer and its length.
        unsafe {
            libc::setsockopt(
                agent.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                RENO.as_ptr().cast(),
                RENO.len() as libc::socklen_t,
            )
        };
    }
}

/// How many bytes of body follow a request head: its `Content-Length`
/// (none: 0). `None` when that is not plain: a `Transfer-Encoding`, or
/// lengths that disagree or do not parse.
pub(crate) fn body_length(head: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(head);
    let mut length = None;
    for header in text.split("\r\n").skip(1) {
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        if name == "transfer-encoding" {
            return None;
        }
        if name == "content-length" {
            let value: u64 = value.trim().parse().ok()?;
            if length.is_some_and(|l| l != value) {
                return None;
            }
            length = Some(value);
        }
    }
    Some(length.unwrap_or(0))
}

/// A forwarded request, its head sent: its body (`body` bytes, the first
/// of them in `rest`), then the answer back, and nothing more of the
/// agent's. A second request in the same connection would go unjudged: to
/// the user's proxy for any host, to a server for any site it serves.
pub(crate) async fn forward_once(
    mut client: TcpStream,
    mut upstream: TcpStream,
    rest: &[u8],
    body: u64,
) -> std::io::Result<()> {
    let now = rest.len().min(usize::try_from(body).unwrap_or(usize::MAX));
    upstream.write_all(&rest[..now]).await?;
    let left = body.saturating_sub(now as u64);
    if left > 0 {
        tokio::io::copy(&mut (&mut client).take(left), &mut upstream).await?;
    }
    tokio::io::copy(&mut upstream, &mut client).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    use super::*;

    /// A connected pair on loopback: (the side we hold, the side the
    /// relay gets).
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (ours, theirs) = tokio::join!(TcpStream::connect(("127.0.0.1", port)), async {
            listener.accept().await.map(|(s, _)| s)
        });
        (ours.unwrap(), theirs.unwrap())
    }

    /// Agent and host, with a relay between them on its own task.
    async fn relayed() -> (
        TcpStream,
        TcpStream,
        tokio::task::JoinHandle<std::io::Result<()>>,
    ) {
        let (agent, agent_side) = pair().await;
        let (host, host_side) = pair().await;
        let task = tokio::spawn(relay(agent_side, host_side));
        (agent, host, task)
    }

    const BOUND: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn each_end_of_sending_is_passed_on_and_the_other_way_still_flows() {
        let (mut agent, mut host, task) = relayed().await;
        agent.write_all(b"ping").await.unwrap();
        agent.shutdown().await.unwrap();
        // The host reads what was sent, then the end.
        let mut got = Vec::new();
        tokio::time::timeout(BOUND, host.read_to_end(&mut got))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, b"ping");
        // The other way is still open: a large answer, then its end.
        let answer: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = answer.clone();
        let writer = tokio::spawn(async move {
            host.write_all(&sent).await.unwrap();
            host.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        tokio::time::timeout(BOUND, agent.read_to_end(&mut got))
            .await
            .unwrap()
            .unwrap();
        assert!(got == answer, "the answer arrived changed");
        writer.await.unwrap();
        tokio::time::timeout(BOUND, task)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn an_error_on_one_side_ends_both() {
        let (mut agent, host, task) = relayed().await;
        // The host resets its connection: the relay ends with the error
        // and the agent's connection is closed, not left open.
        host.set_zero_linger().unwrap();
        drop(host);
        let done = tokio::time::timeout(BOUND, task).await.unwrap().unwrap();
        assert!(done.is_err(), "a reset ended the relay without an error");
        let mut rest = Vec::new();
        let read = tokio::time::timeout(BOUND, agent.read_to_end(&mut rest))
            .await
            .unwrap();
        assert!(read.is_err() || rest.is_empty());
    }

    /// The CPU time this thread has used.
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a plain system call with a valid pointer.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) },
            0
        );
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    #[test]
    fn an_idle_relay_does_not_spin() {
        // A runtime on this thread alone, so this thread's CPU clock
        // counts the relay's work and nothing else's.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let used = runtime.block_on(async {
            let (mut agent, mut host, _task) = relayed().await;
            // One exchange, then one side ends its sending: the relay
            // then has one direction done and one idle.
            agent.write_all(b"x").await.unwrap();
            let mut byte = [0u8; 1];
            host.read_exact(&mut byte).await.unwrap();
            agent.shutdown().await.unwrap();
            assert_eq!(host.read(&mut byte).await.unwrap(), 0);
            let start = thread_cpu();
            tokio::time::sleep(Duration::from_secs(1)).await;
            let used = thread_cpu() - start;
            drop((agent, host));
            used
        });
        // A busy loop would use most of the second.
        assert!(
            used < Duration::from_millis(200),
            "idle relay used {used:?}"
        );
    }
}

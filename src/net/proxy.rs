//! warden's proxy in front of one agent process (or one terminal warden
//! runs for it): HTTP (`CONNECT` and absolute-URI requests, HTTP/1.1) and
//! SOCKS5 on the same port (the first byte tells them apart). It resolves
//! names itself. Each connection is served on its own task: a host the
//! agent may reach without asking ([`Hosts::allows`]) is connected at
//! once; with `network = "closed"` any other is refused at once (and told,
//! for the log); else it sends one [`ConnectAsk`] and waits for its answer
//! (a dropped answer is a refusal). A refused connection gets a 403 (or
//! SOCKS's "not allowed") and nothing reaches the host. No TLS is
//! intercepted: the gate judges the host and port only. An allowed
//! connection is dialled directly or through the user's own proxy
//! (`chain.rs`), which only ever sees the connections the gate let through.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::chain::{Dialed, Dialer, absolute_head};
use super::hosts::{Hosts, NetworkMode};
use super::relay::{body_length, forward_once, relay};
use super::upstream::Kind;
use super::{ConnectAsk, NetAnswer, Reply};

/// Why a connection is refused without asking when the network is closed.
pub(crate) const CLOSED: &str = "the network is closed ([sandbox] network = \"closed\")";

/// The longest request head read (request line and headers).
const MAX_HEAD: usize = 64 * 1024;

/// What one proxy judges by: whose it is, the hosts it reaches without
/// asking, and where it asks about the others.
#[derive(Debug, Clone)]
pub struct Gate {
    pub agent: String,
    pub hosts: Hosts,
    pub asks: mpsc::UnboundedSender<ConnectAsk>,
}

/// A listener in the agent's namespace for one of the host's loopback
/// services, and the service (the host as the user named it, its port).
#[derive(Debug)]
pub struct Forward {
    pub listener: std::net::TcpListener,
    pub host: String,
    pub port: u16,
}

/// What the proxy serves on: its own listener, and the loopback forwards.
#[derive(Debug)]
pub struct Listeners {
    pub proxy: std::net::TcpListener,
    pub forwards: Vec<Forward>,
}

/// A running proxy; dropping it stops it and every connection it serves.
#[derive(Debug)]
pub struct Proxy {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Serve on `listener` (listening already; in the agent's network
    /// namespace or on the host's loopback), going out through the user's
    /// proxy of warden's environment. Call inside the runtime.
    pub fn serve(listener: std::net::TcpListener, gate: Gate) -> std::io::Result<Proxy> {
        Proxy::serve_with(listener, gate, Dialer::own())
    }

    /// [`Proxy::serve`], dialling allowed connections with `dialer`.
    pub fn serve_with(
        listener: std::net::TcpListener,
        gate: Gate,
        dialer: Dialer,
    ) -> std::io::Result<Proxy> {
        let listeners = Listeners {
            proxy: listener,
            forwards: Vec::new(),
        };
        Proxy::serve_all(listeners, gate, dialer)
    }

    /// Serve on a door's listeners: the proxy's, and each loopback
    /// forward's, whose connections go to the host's service it names,
    /// judged as a `CONNECT` to it would be.
    pub fn serve_all(listeners: Listeners, gate: Gate, dialer: Dialer) -> std::io::Result<Proxy> {
        let Listeners { proxy, forwards } = listeners;
        let port = proxy.local_addr()?.port();
        let gate = Arc::new(gate);
        let dialer = Arc::new(dialer);
        let mut doors = vec![(into_tokio(proxy)?, None)];
        for Forward {
            listener,
            host,
            port,
        } in forwards
        {
            doors.push((into_tokio(listener)?, Some(Arc::new((host, port)))));
        }
        let task = tokio::spawn(async move {
            // Aborting this task drops the set: every loop and connection ends.
            let mut loops = JoinSet::new();
            for (listener, to) in doors {
                loops.spawn(accept_loop(listener, to, gate.clone(), dialer.clone()));
            }
            while loops.join_next().await.is_some() {}
        });
        Ok(Proxy { port, task })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A listening socket made outside the runtime, for it to accept on.
fn into_tokio(listener: std::net::TcpListener) -> std::io::Result<TcpListener> {
    listener.set_nonblocking(true)?;
    TcpListener::from_std(listener)
}

/// Accept on one listener, each connection on its own task: the proxy's
/// protocol, or (`to`) the loopback service it forwards to.
async fn accept_loop(
    listener: TcpListener,
    to: Option<Arc<(String, u16)>>,
    gate: Arc<Gate>,
    dialer: Arc<Dialer>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let (gate, dialer, to) = (gate.clone(), dialer.clone(), to.clone());
                    connections.spawn(async move {
                        let served = match to.as_deref() {
                            None => serve_one(stream, &gate, &dialer).await,
                            Some((host, port)) => {
                                serve_forward(stream, &gate, &dialer, host, *port).await
                            }
                        };
                        if let Err(err) = served {
                            tracing::debug!(agent = %gate.agent, "proxy connection: {err}");
                        }
                    });
                }
                Err(err) => {
                    tracing::warn!("proxy accept: {err}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// A connection to a loopback forward: judged and dialled as a `CONNECT`
/// to `host:port` (the host's own loopback, never the user's proxy), then
/// relayed. Refused or unreachable, it is closed: the agent sees its
/// server go away.
async fn serve_forward(
    client: TcpStream,
    gate: &Gate,
    dialer: &Dialer,
    host: &str,
    port: u16,
) -> std::io::Result<()> {
    let _ = client.set_nodelay(true);
    match open(gate, dialer, host, port, Kind::Tunnel).await {
        Ok(dialed) => relay(client, dialed.stream).await,
        Err(refusal) => {
            tracing::debug!(agent = %gate.agent, "loopback {host}:{port}: {refusal:?}");
            Ok(())
        }
    }
}

/// The variables that send an agent's connections through the proxy on
/// `port`. `NO_PROXY` is emptied (a host the user's list lets bypass
/// would find no way out), but for loopback when the agent has a network
/// namespace of its own (`own_loopback`): its own servers are there
/// (`curl localhost:3000`, and agents that talk to a server of their own,
/// as opencode does), where the proxy is not.
pub fn proxy_env(port: u16, own_loopback: bool) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((name.to_string(), url.clone()));
        env.push((name.to_ascii_lowercase(), url.clone()));
    }
    let bypass = if own_loopback {
        "localhost,127.0.0.1,::1"
    } else {
        ""
    };
    env.push(("NO_PROXY".to_string(), bypass.to_string()));
    env.push(("no_proxy".to_string(), bypass.to_string()));
    env.push(("NODE_USE_ENV_PROXY".to_string(), "1".to_string()));
    env
}

/// Why a connection was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The request could not be read as one the proxy serves.
    BadRequest(&'static str),
    /// The gate (or `network = "closed"`) refused it.
    Denied(Option<String>),
    /// Allowed, but the host could not be reached.
    Unreachable(String),
}

/// What the client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `CONNECT host:port`: a tunnel.
    Connect { host: String, port: u16 },
    /// An absolute-URI request, its head rewritten for the origin server.
    Forward {
        host: String,
        port: u16,
        head: Vec<u8>,
        /// The bytes of body after the head (its `Content-Length`).
        body: u64,
    },
}

/// Read an HTTP request head: the request line and headers (the
/// `\r\n\r\n` included); what followed it is left in `rest`.
async fn read_head<R: AsyncRead + Unpin>(
    stream: &mut R,
    first: u8,
) -> Result<(Vec<u8>, Vec<u8>), Refusal> {
    let mut buf = vec![first];
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(Refusal::BadRequest("request head too long"));
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| Refusal::BadRequest("connection closed"))?;
        if n == 0 {
            return Err(Refusal::BadRequest("connection closed in the request head"));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `host[:port]` or `[v6][:port]`: the host (lower case, no brackets)
/// and the port (`default` when none is named).
pub(crate) fn split_authority(authority: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if tail.is_empty() => default?,
            None => return None,
        };
        (host, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, port.parse().ok()?),
            Some(_) => return None,
            None => (authority, default?),
        }
    };
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    (ok && port != 0).then(|| (host.to_ascii_lowercase(), port))
}

/// Headers not passed to the origin server: the proxy's own, and the
/// connection's (the forwarded request is the connection's only one).
const HOP_HEADERS: &[&str] = &[
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
];

/// Read a request head (the request line and headers, as received).
pub(crate) fn parse_head(head: &[u8]) -> Result<Request, Refusal> {
    let text = std::str::from_utf8(head).map_err(|_| Refusal::BadRequest("not text"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(Refusal::BadRequest("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(Refusal::BadRequest("only HTTP/1.x"));
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Refusal::BadRequest("malformed method"));
    }
    if method == "CONNECT" {
        let (host, port) =
            split_authority(target, None).ok_or(Refusal::BadRequest("CONNECT needs host:port"))?;
        return Ok(Request::Connect { host, port });
    }
    let Some(rest) = target.strip_prefix("http://") else {
        return Err(Refusal::BadRequest(
            "a proxy request names an absolute http:// URI (https goes through CONNECT)",
        ));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    if authority.contains('@') {
        return Err(Refusal::BadRequest("credentials in the URI"));
    }
    let (host, port) =
        split_authority(authority, Some(80)).ok_or(Refusal::BadRequest("malformed host"))?;
    // The host the gate judged is the one the server is told: the agent's
    // own `Host` is dropped (on a shared address it would name another
    // site), as a proxy must (RFC 9112, 3.2.2).
    let mut out = format!(
        "{method} {path} {version}\r\nHost: {}\r\n",
        authority.to_ascii_lowercase()
    );
    for header in lines.filter(|l| !l.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim();
        let lower = name.to_ascii_lowercase();
        if lower == "host" || HOP_HEADERS.contains(&lower.as_str()) {
            continue;
        }
        out.push_str(header);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    // Exactly one request goes on the connection: a second one after its
    // body would reach the server (or the user's proxy) unjudged.
    let body =
        body_length(out.as_bytes()).ok_or(Refusal::BadRequest("a body of no stated length"))?;
    Ok(Request::Forward {
        host,
        port,
        head: out.into_bytes(),
        body,
    })
}

/// The HTTP reply to a refused request.
pub(crate) fn http_refusal(refusal: &Refusal, host: &str, port: u16) -> Vec<u8> {
    let (status, body) = match refusal {
        Refusal::BadRequest(why) => ("400 Bad Request", format!("warden: bad request: {why}")),
        Refusal::Denied(reason) => (
            "403 Forbidden",
            match reason {
                Some(reason) => format!(
                    "warden: the connection to {host}:{port} was refused: {}",
                    clean(reason)
                ),
                None => format!("warden: the connection to {host}:{port} was refused"),
            },
        ),
        Refusal::Unreachable(why) => (
            "502 Bad Gateway",
            format!("warden: {host}:{port} could not be reached: {}", clean(why)),
        ),
    };
    let body = format!("{body}\n");
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A reason as one printable line.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect()
}

/// SOCKS5 reply codes.
const SOCKS_OK: u8 = 0;
const SOCKS_FAILURE: u8 = 1;
const SOCKS_NOT_ALLOWED: u8 = 2;
const SOCKS_HOST_UNREACHABLE: u8 = 4;
const SOCKS_COMMAND: u8 = 7;
const SOCKS_ADDRESS: u8 = 8;

/// A SOCKS5 reply with `code` (the bound address left zero).
pub(crate) fn socks_reply(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

/// Serve one accepted connection.
async fn serve_one(mut client: TcpStream, gate: &Gate, dialer: &Dialer) -> std::io::Result<()> {
    let _ = client.set_nodelay(true);
    let mut first = [0u8; 1];
    if client.read(&mut first).await? == 0 {
        return Ok(());
    }
    if first[0] == 5 {
        return serve_socks(client, gate, dialer).await;
    }
    let (head, rest) = match read_head(&mut client, first[0]).await {
        Ok(read) => read,
        Err(refusal) => {
            client.write_all(&http_refusal(&refusal, "", 0)).await.ok();
            return Ok(());
        }
    };
    let request = match parse_head(&head) {
        Ok(request) => request,
        Err(refusal) => {
            client.write_all(&http_refusal(&refusal, "", 0)).await?;
            return Ok(());
        }
    };
    let (host, port, kind) = match &request {
        Request::Connect { host, port } => (host.clone(), *port, Kind::Tunnel),
        Request::Forward { host, port, .. } => (host.clone(), *port, Kind::Forward),
    };
    let Dialed {
        stream: mut upstream,
        forward_via,
    } = match open(gate, dialer, &host, port, kind).await {
        Ok(dialed) => dialed,
        Err(refusal) => {
            client
                .write_all(&http_refusal(&refusal, &host, port))
                .await?;
            return Ok(());
        }
    };
    match request {
        Request::Connect { .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?;
        }
        Request::Forward { head, body, .. } => {
            let head = match forward_via {
                Some(proxy) => absolute_head(&head, &host, port, &proxy),
                None => head,
            };
            upstream.write_all(&head).await?;
            return forward_once(client, upstream, &rest, body).await;
        }
    }
    if !rest.is_empty() {
        upstream.write_all(&rest).await?;
    }
    relay(client, upstream).await
}

/// SOCKS5 (no authentication, `CONNECT` only), its version byte read.
async fn serve_socks(mut client: TcpStream, gate: &Gate, dialer: &Dialer) -> std::io::Result<()> {
    let count = client.read_u8().await?;
    let mut methods = vec![0u8; usize::from(count)];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        client.write_all(&[5, 0xFF]).await?;
        return Ok(());
    }
    client.write_all(&[5, 0]).await?;
    let mut fixed = [0u8; 4];
    client.read_exact(&mut fixed).await?;
    if fixed[0] != 5 {
        client.write_all(&socks_reply(SOCKS_FAILURE)).await?;
        return Ok(());
    }
    let host = match fixed[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip).await?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip).await?;
            std::net::Ipv6Addr::from(ip).to_string()
        }
        3 => {
            let len = client.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            client.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(name) => name,
                Err(_) => {
                    client.write_all(&socks_reply(SOCKS_ADDRESS)).await?;
                    return Ok(());
                }
            }
        }
        _ => {
            client.write_all(&socks_reply(SOCKS_ADDRESS)).await?;
            return Ok(());
        }
    };
    let port = client.read_u16().await?;
    if fixed[1] != 1 {
        client.write_all(&socks_reply(SOCKS_COMMAND)).await?;
        return Ok(());
    }
    let Some((host, port)) = split_authority(&format!("[{host}]:{port}"), None) else {
        client.write_all(&socks_reply(SOCKS_ADDRESS)).await?;
        return Ok(());
    };
    match open(gate, dialer, &host, port, Kind::Socks).await {
        Ok(dialed) => {
            client.write_all(&socks_reply(SOCKS_OK)).await?;
            relay(client, dialed.stream).await
        }
        Err(Refusal::Denied(_)) => client.write_all(&socks_reply(SOCKS_NOT_ALLOWED)).await,
        Err(_) => client.write_all(&socks_reply(SOCKS_HOST_UNREACHABLE)).await,
    }
}

/// The gate's answer for `host:port`, then (only when it allowed it) the
/// connection: direct (names resolved here) or through the user's proxy.
async fn open(
    gate: &Gate,
    dialer: &Dialer,
    host: &str,
    port: u16,
    kind: Kind,
) -> Result<Dialed, Refusal> {
    judge(gate, host, port).await?;
    dialer
        .dial(host, port, kind)
        .await
        .map_err(Refusal::Unreachable)
}

/// Whether the connection may be made: at once for an allowed host,
/// refused at once when the network is closed (and told to the gate, which
/// logs it), else the gate's answer.
pub(crate) async fn judge(gate: &Gate, host: &str, port: u16) -> Result<(), Refusal> {
    if gate.hosts.allows(host, port) {
        return Ok(());
    }
    if gate.hosts.mode == NetworkMode::Closed {
        let why = CLOSED.to_string();
        let refused = ConnectAsk {
            agent: gate.agent.clone(),
            host: host.to_string(),
            port,
            reply: Reply::Refused(why.clone()),
        };
        // Refused whether or not anyone hears of it.
        let _ = gate.asks.send(refused);
        return Err(Refusal::Denied(Some(why)));
    }
    let (ask, answer) = ConnectAsk::waiting(&gate.agent, host, port);
    if gate.asks.send(ask).is_err() {
        return Err(Refusal::Denied(None));
    }
    match answer.await {
        Ok(NetAnswer::Allow) => Ok(()),
        Ok(NetAnswer::Deny { reason }) => Err(Refusal::Denied(reason)),
        Err(_) => Err(Refusal::Denied(None)),
    }
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
pub(super) mod tests;

//! How warden's proxy dials a connection the gate let through: directly,
//! or through the user's own proxy ([`super::upstream`]): an `http://`
//! one by `CONNECT` (or, for a plain HTTP request, by forwarding it in
//! absolute form), a `socks5://` or `socks5h://` one by the SOCKS5
//! handshake (no authentication, or RFC 1929's user name and password).
//! Once the tunnel is open, the relay is the same as for a direct
//! connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::upstream::{Kind, Scheme, Upstream, Upstreams};
use crate::text::base64;

/// The longest an upstream proxy may take to open a tunnel.
const HANDSHAKE: Duration = Duration::from_secs(60);

/// The longest reply head read from an upstream HTTP proxy.
const MAX_REPLY_HEAD: usize = 16 * 1024;

/// How one proxy dials: the upstreams, and names it resolves to fixed
/// addresses instead of asking the system (as curl's `--resolve`; only
/// tests give any).
#[derive(Debug, Clone, Default)]
pub struct Dialer {
    pub upstreams: Arc<Upstreams>,
    pub pinned: Vec<(String, IpAddr)>,
}

/// A connection made for an allowed `host:port`.
#[derive(Debug)]
pub(crate) struct Dialed {
    pub stream: TcpStream,
    /// The HTTP proxy a forwarded request is sent to in absolute form
    /// (none: the stream reaches the host, or a tunnel to it).
    pub forward_via: Option<Upstream>,
}

impl Dialer {
    /// warden's own: the upstreams of its environment.
    pub fn own() -> Dialer {
        Dialer {
            upstreams: super::upstream::own(),
            pinned: Vec::new(),
        }
    }

    /// Connect to `host:port` (allowed already) as `kind` asks; the error
    /// says why, and was logged.
    pub(crate) async fn dial(&self, host: &str, port: u16, kind: Kind) -> Result<Dialed, String> {
        let Some(upstream) = self.upstreams.for_target(host, port, kind) else {
            let stream = self
                .direct(host, port)
                .await
                .map_err(|err| err.to_string())?;
            return Ok(Dialed {
                stream,
                forward_via: None,
            });
        };
        let opened = tokio::time::timeout(HANDSHAKE, self.through(upstream, host, port, kind))
            .await
            .unwrap_or_else(|_| Err("the upstream proxy did not answer in time".to_string()));
        opened.map_err(|why| {
            let why = format!("upstream proxy {}: {why}", upstream.shown());
            tracing::warn!("{host}:{port} not reached: {why}");
            why
        })
    }

    async fn through(
        &self,
        upstream: &Upstream,
        host: &str,
        port: u16,
        kind: Kind,
    ) -> Result<Dialed, String> {
        let mut stream = TcpStream::connect((upstream.host.as_str(), upstream.port))
            .await
            .map_err(|err| format!("cannot connect to it: {err}"))?;
        let _ = stream.set_nodelay(true);
        let forward_via = match (upstream.scheme, kind) {
            (Scheme::Http, Kind::Forward) => Some(upstream.clone()),
            (Scheme::Http, _) => {
                http_connect(&mut stream, upstream, host, port).await?;
                None
            }
            (Scheme::Socks5 | Scheme::Socks5h, _) => {
                let address = if upstream.scheme == Scheme::Socks5 {
                    Address::Ip(self.resolve(host, port).await?.ip())
                } else {
                    Address::of(host)
                };
                socks_connect(&mut stream, upstream, &address, port).await?;
                None
            }
        };
        Ok(Dialed {
            stream,
            forward_via,
        })
    }

    /// The first address of `host`: pinned, else the system's.
    async fn resolve(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        if let Some((_, ip)) = self.pinned.iter().find(|(name, _)| name == host) {
            return Ok(SocketAddr::new(*ip, port));
        }
        tokio::net::lookup_host((host, port))
            .await
            .map_err(|err| format!("cannot resolve {host}: {err}"))?
            .next()
            .ok_or_else(|| format!("{host} has no address"))
    }

    /// A direct connection (a pinned name at its address).
    async fn direct(&self, host: &str, port: u16) -> std::io::Result<TcpStream> {
        let stream = match self.pinned.iter().find(|(name, _)| name == host) {
            Some((_, ip)) => TcpStream::connect((*ip, port)).await?,
            None => TcpStream::connect((host, port)).await?,
        };
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

/// `host:port` as a request names it (an IPv6 literal in brackets).
fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The `Proxy-Authorization` header line for `upstream`, when it has a user.
fn proxy_authorization(upstream: &Upstream) -> String {
    match &upstream.auth {
        Some((user, pass)) => format!(
            "Proxy-Authorization: Basic {}\r\n",
            base64(format!("{user}:{pass}").as_bytes())
        ),
        None => String::new(),
    }
}

/// Ask an HTTP proxy for a tunnel to `host:port`; a 2xx opens it.
async fn http_connect(
    stream: &mut TcpStream,
    upstream: &Upstream,
    host: &str,
    port: u16,
) -> Result<(), String> {
    let target = authority(host, port);
    let request = format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{}\r\n",
        proxy_authorization(upstream)
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|err| format!("cannot send CONNECT: {err}"))?;
    // Byte by byte: what follows the head is the tunnel's, not ours.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > MAX_REPLY_HEAD {
            return Err("its reply head is too long".to_string());
        }
        let byte = stream
            .read_u8()
            .await
            .map_err(|_| "it closed the connection without an answer".to_string())?;
        head.push(byte);
    }
    let line = String::from_utf8_lossy(&head);
    let line = line.lines().next().unwrap_or_default();
    let status = line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok());
    match status {
        Some(200..=299) => Ok(()),
        _ => Err(format!(
            "CONNECT {target} answered {}",
            line.chars()
                .filter(|c| !c.is_control())
                .take(120)
                .collect::<String>()
        )),
    }
}

/// Where a SOCKS5 request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Address {
    Ip(IpAddr),
    Name(String),
}

impl Address {
    /// An IP literal as an address, else the name.
    pub(crate) fn of(host: &str) -> Address {
        match host.parse::<IpAddr>() {
            Ok(ip) => Address::Ip(ip),
            Err(_) => Address::Name(host.to_string()),
        }
    }
}

/// A SOCKS5 `CONNECT` to `address:port` through `upstream`.
async fn socks_connect(
    stream: &mut TcpStream,
    upstream: &Upstream,
    address: &Address,
    port: u16,
) -> Result<(), String> {
    let io = |err: std::io::Error| format!("SOCKS5: {err}");
    let greeting: &[u8] = if upstream.auth.is_some() {
        &[5, 2, 0, 2]
    } else {
        &[5, 1, 0]
    };
    stream.write_all(greeting).await.map_err(io)?;
    let mut chosen = [0u8; 2];
    stream.read_exact(&mut chosen).await.map_err(io)?;
    match (chosen, &upstream.auth) {
        ([5, 0], _) => {}
        ([5, 2], Some((user, pass))) => {
            let (Ok(ulen), Ok(plen)) = (u8::try_from(user.len()), u8::try_from(pass.len())) else {
                return Err("SOCKS5: the user name or password is too long".to_string());
            };
            let mut auth = vec![1, ulen];
            auth.extend_from_slice(user.as_bytes());
            auth.push(plen);
            auth.extend_from_slice(pass.as_bytes());
            stream.write_all(&auth).await.map_err(io)?;
            let mut status = [0u8; 2];
            stream.read_exact(&mut status).await.map_err(io)?;
            if status[1] != 0 {
                return Err("SOCKS5: the user name and password were refused".to_string());
            }
        }
        _ => return Err("SOCKS5: no authentication method it accepts".to_string()),
    }
    let mut request = vec![5, 1, 0];
    match address {
        Address::Ip(IpAddr::V4(ip)) => {
            request.push(1);
            request.extend_from_slice(&ip.octets());
        }
        Address::Ip(IpAddr::V6(ip)) => {
            request.push(4);
            request.extend_from_slice(&ip.octets());
        }
        Address::Name(name) => {
            let len = u8::try_from(name.len())
                .map_err(|_| "SOCKS5: the host name is too long".to_string())?;
            request.extend_from_slice(&[3, len]);
            request.extend_from_slice(name.as_bytes());
        }
    }
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.map_err(io)?;
    let mut reply = [0u8; 4];
    stream.read_exact(&mut reply).await.map_err(io)?;
    if reply[0] != 5 {
        return Err("SOCKS5: a malformed reply".to_string());
    }
    if reply[1] != 0 {
        return Err(format!("SOCKS5: CONNECT refused (reply {})", reply[1]));
    }
    // The bound address, which nothing here needs.
    let bound = match reply[3] {
        1 => 4,
        4 => 16,
        3 => usize::from(stream.read_u8().await.map_err(io)?),
        _ => return Err("SOCKS5: a malformed reply address".to_string()),
    };
    let mut skip = vec![0u8; bound + 2];
    stream.read_exact(&mut skip).await.map_err(io)?;
    Ok(())
}

/// A forwarded request's head (origin form, as `parse_head` made it)
/// rewritten for an HTTP proxy: the absolute URI, and its credentials.
pub(crate) fn absolute_head(head: &[u8], host: &str, port: u16, upstream: &Upstream) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let (line, headers) = text.split_once("\r\n").unwrap_or((&text, ""));
    let mut words = line.splitn(3, ' ');
    let (method, path, version) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    format!(
        "{method} http://{}{path} {version}\r\n{}{headers}",
        authority(host, port),
        proxy_authorization(upstream)
    )
    .into_bytes()
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;

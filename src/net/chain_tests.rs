//! warden's proxy going out through an upstream proxy, end to end on
//! loopback: fake upstream proxies (HTTP and SOCKS5) record what they are
//! asked and relay to a real loopback listener.
//!
//! The targets are names (`target.test`), not `127.0.0.1`: loopback is
//! never sent upstream, and the fake upstreams map every name to their
//! listener. A target connected to directly (`NO_PROXY`) is pinned to
//! loopback through the dialer's own resolver seam ([`Dialer::pinned`]).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::*;
use crate::net::proxy::tests::exchange;
use crate::net::proxy::{Gate, Proxy};
use crate::net::{ConnectAsk, Hosts, NetAnswer, NetworkMode};

/// A listener that answers `pong` to whatever it is sent first.
async fn target() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                if s.read(&mut buf).await.is_ok_and(|n| n > 0) {
                    let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\npong").await;
                }
            });
        }
    });
    port
}

type Seen = Arc<Mutex<Vec<String>>>;

/// A fake HTTP proxy: records each request head; answers `status` to a
/// `CONNECT` (relaying to `target` on a 2xx), and relays any other
/// request, its head included, to `target`.
async fn http_upstream(status: &'static str, target: u16) -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let Ok(b) = s.read_u8().await else { return };
                    head.push(b);
                }
                let head = String::from_utf8(head).unwrap();
                record.lock().unwrap().push(head.clone());
                let mut out = TcpStream::connect(("127.0.0.1", target)).await.unwrap();
                if head.starts_with("CONNECT ") {
                    s.write_all(format!("HTTP/1.1 {status}\r\n\r\n").as_bytes())
                        .await
                        .unwrap();
                    if !status.starts_with('2') {
                        return;
                    }
                } else {
                    out.write_all(head.as_bytes()).await.unwrap();
                }
                let _ = tokio::io::copy_bidirectional(&mut s, &mut out).await;
            });
        }
    });
    (port, seen)
}

/// A fake SOCKS5 proxy: records `user:pass` (when it asked for them) and
/// the requested address as `ip 1.2.3.4:port` or `name host:port`, then
/// answers `code` and, on success (0), relays to `target`.
async fn socks_upstream(target: u16, code: u8) -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let mut hello = [0u8; 2];
                s.read_exact(&mut hello).await.unwrap();
                let mut methods = vec![0u8; usize::from(hello[1])];
                s.read_exact(&mut methods).await.unwrap();
                if methods.contains(&2) {
                    s.write_all(&[5, 2]).await.unwrap();
                    let mut v = [0u8; 2];
                    s.read_exact(&mut v).await.unwrap();
                    let mut user = vec![0u8; usize::from(v[1])];
                    s.read_exact(&mut user).await.unwrap();
                    let mut pass = vec![0u8; usize::from(s.read_u8().await.unwrap())];
                    s.read_exact(&mut pass).await.unwrap();
                    record.lock().unwrap().push(format!(
                        "auth {}:{}",
                        String::from_utf8_lossy(&user),
                        String::from_utf8_lossy(&pass)
                    ));
                    s.write_all(&[1, 0]).await.unwrap();
                } else {
                    s.write_all(&[5, 0]).await.unwrap();
                }
                let mut fixed = [0u8; 4];
                s.read_exact(&mut fixed).await.unwrap();
                let address = match fixed[3] {
                    1 => {
                        let mut ip = [0u8; 4];
                        s.read_exact(&mut ip).await.unwrap();
                        format!("ip {}", std::net::Ipv4Addr::from(ip))
                    }
                    3 => {
                        let mut name = vec![0u8; usize::from(s.read_u8().await.unwrap())];
                        s.read_exact(&mut name).await.unwrap();
                        format!("name {}", String::from_utf8_lossy(&name))
                    }
                    other => panic!("address type {other}"),
                };
                let port = s.read_u16().await.unwrap();
                record.lock().unwrap().push(format!("{address}:{port}"));
                // A bound address given as a name, as some servers do.
                s.write_all(&[5, code, 0, 3, 1, b'x', 0, 1]).await.unwrap();
                if code != 0 {
                    return;
                }
                let mut out = TcpStream::connect(("127.0.0.1", target)).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut s, &mut out).await;
            });
        }
    });
    (port, seen)
}

/// A dialer going out through the proxies these variables name.
fn via(pairs: &[(&str, String)]) -> Dialer {
    Dialer {
        upstreams: upstreams(pairs),
        pinned: Vec::new(),
    }
}

fn upstreams(pairs: &[(&str, String)]) -> Arc<Upstreams> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    Arc::new(Upstreams::from_vars(move |name| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }))
}

fn proxy(
    mode: NetworkMode,
    allow: Vec<String>,
    dialer: Dialer,
) -> (Proxy, mpsc::UnboundedReceiver<ConnectAsk>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (asks, rx) = mpsc::unbounded_channel();
    let gate = Gate {
        agent: "t".into(),
        hosts: Hosts::new(mode, allow),
        asks,
    };
    (Proxy::serve_with(listener, gate, dialer).unwrap(), rx)
}

/// A gated proxy that allows `target.test:tport` without asking.
fn gated_to_target(tport: u16, dialer: Dialer) -> (Proxy, mpsc::UnboundedReceiver<ConnectAsk>) {
    proxy(
        NetworkMode::Gated,
        vec![format!("target.test:{tport}")],
        dialer,
    )
}

/// `CONNECT target.test:tport` through the proxy on `port`, then "hello":
/// everything that came back.
async fn connect_to_target(port: u16, tport: u16) -> Vec<u8> {
    exchange(
        port,
        format!("CONNECT target.test:{tport} HTTP/1.1\r\n\r\nhello").as_bytes(),
    )
    .await
}

/// Answer the next ask (which must wait) with `answer`, in the background.
fn answer_next(
    mut asks: mpsc::UnboundedReceiver<ConnectAsk>,
    host: &'static str,
    answer: NetAnswer,
) -> tokio::task::JoinHandle<mpsc::UnboundedReceiver<ConnectAsk>> {
    tokio::spawn(async move {
        let ask = asks.recv().await.unwrap();
        assert_eq!(ask.host, host);
        crate::net::proxy::tests::answer(ask, answer);
        asks
    })
}

#[tokio::test]
async fn an_allowed_connect_reaches_the_upstream_as_connect_with_its_credentials() {
    let tport = target().await;
    let (up, seen) = http_upstream("200 Connection established", tport).await;
    let dialer = via(&[("HTTPS_PROXY", format!("http://us%40er:pw@127.0.0.1:{up}"))]);
    let (p, asks) = gated_to_target(tport, dialer);
    let reply = connect_to_target(p.port(), tport).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("pong"), "{reply}");
    let head = seen.lock().unwrap()[0].clone();
    assert!(
        head.starts_with(&format!(
            "CONNECT target.test:{tport} HTTP/1.1\r\nHost: target.test:{tport}\r\n"
        )),
        "{head}"
    );
    assert!(
        head.contains("\r\nProxy-Authorization: Basic dXNAZXI6cHc=\r\n"),
        "{head}"
    );
    // A host the user allowed on its card goes the same way.
    let asked = answer_next(asks, "asked.test", NetAnswer::Allow);
    let reply = exchange(p.port(), b"CONNECT asked.test:443 HTTP/1.1\r\n\r\nhello").await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    asked.await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].starts_with("CONNECT asked.test:443 HTTP/1.1\r\n"));
}

#[tokio::test]
async fn a_plain_http_request_is_forwarded_to_the_upstream_in_absolute_form() {
    let tport = target().await;
    let (up, seen) = http_upstream("200 OK", tport).await;
    let dialer = Dialer {
        upstreams: upstreams(&[
            ("http_proxy", format!("http://u:p@127.0.0.1:{up}")),
            ("HTTPS_PROXY", "http://unused.test:1".into()),
        ]),
        pinned: Vec::new(),
    };
    let (p, _asks) = gated_to_target(tport, dialer);
    let reply = exchange(
        p.port(),
        format!("GET http://target.test:{tport}/x?y HTTP/1.1\r\nHost: target.test\r\n\r\n")
            .as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    let head = seen.lock().unwrap()[0].clone();
    assert!(
        head.starts_with(&format!(
            "GET http://target.test:{tport}/x?y HTTP/1.1\r\nProxy-Authorization: Basic dTpw\r\n"
        )),
        "{head}"
    );
}

#[tokio::test]
async fn a_refusal_by_the_upstream_fails_the_agents_connection() {
    let tport = target().await;
    let (up, seen) = http_upstream("403 Forbidden", tport).await;
    let dialer = via(&[("all_proxy", format!("127.0.0.1:{up}"))]);
    let (p, _asks) = gated_to_target(tport, dialer);
    let reply = connect_to_target(p.port(), tport).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
    assert!(reply.contains("403 Forbidden"), "{reply}");
    assert!(!reply.contains("pong"));
    // SOCKS from the agent: the failure reply SOCKS gives an unreachable host.
    let mut socks = vec![5, 1, 0, 5, 1, 0, 3, 11];
    socks.extend_from_slice(b"target.test");
    socks.extend_from_slice(&tport.to_be_bytes());
    let reply = exchange(p.port(), &socks).await;
    assert_eq!(reply, [5, 0, 5, 4, 0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn no_proxy_goes_direct_and_a_refused_host_never_reaches_the_upstream() {
    let tport = target().await;
    let (up, seen) = http_upstream("200 OK", tport).await;
    let dialer = Dialer {
        upstreams: upstreams(&[
            ("https_proxy", format!("http://127.0.0.1:{up}")),
            ("no_proxy", "other.test,.direct.test".into()),
        ]),
        pinned: vec![("api.direct.test".into(), [127, 0, 0, 1].into())],
    };
    let (p, asks) = proxy(
        NetworkMode::Gated,
        vec![format!("api.direct.test:{tport}")],
        dialer,
    );
    let reply = exchange(
        p.port(),
        format!("CONNECT api.direct.test:{tport} HTTP/1.1\r\n\r\nhello").as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    assert!(seen.lock().unwrap().is_empty(), "NO_PROXY went upstream");
    // Refused by the gate: 403, and the upstream hears nothing.
    let asked = answer_next(asks, "denied.test", NetAnswer::Deny { reason: None });
    let reply = exchange(p.port(), b"CONNECT denied.test:443 HTTP/1.1\r\n\r\nhello").await;
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 403"));
    asked.await.unwrap();
    // Closed: refused at once, and the upstream hears nothing either.
    let (closed, _asks) = proxy(
        NetworkMode::Closed,
        Vec::new(),
        via(&[("https_proxy", format!("http://127.0.0.1:{up}"))]),
    );
    let reply = exchange(closed.port(), b"CONNECT denied.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 403"));
    assert!(
        seen.lock().unwrap().is_empty(),
        "a refused host went upstream"
    );
}

#[tokio::test]
async fn a_socks5_upstream_gets_the_name_with_socks5h_and_an_address_with_socks5() {
    let tport = target().await;
    let (up, seen) = socks_upstream(tport, 0).await;
    let dialer = Dialer {
        upstreams: upstreams(&[(
            "https_proxy",
            format!("socks5h://me:s%3Acret@127.0.0.1:{up}"),
        )]),
        pinned: Vec::new(),
    };
    let (p, _asks) = proxy(NetworkMode::Gated, vec!["target.test".into()], dialer);
    let reply = exchange(p.port(), b"CONNECT target.test:443 HTTP/1.1\r\n\r\nhello").await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.starts_with("HTTP/1.1 200") && reply.ends_with("pong"),
        "{reply}"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        ["auth me:s:cret", "name target.test:443"]
    );
    seen.lock().unwrap().clear();
    // socks5: resolved here (pinned), the address sent; no credentials.
    let dialer = Dialer {
        upstreams: upstreams(&[("ALL_PROXY", format!("socks5://127.0.0.1:{up}"))]),
        pinned: vec![("target.test".into(), [192, 0, 2, 7].into())],
    };
    let (p, _asks) = proxy(NetworkMode::Gated, vec!["target.test".into()], dialer);
    let mut socks = vec![5, 1, 0, 5, 1, 0, 3, 11];
    socks.extend_from_slice(b"target.test");
    socks.extend_from_slice(&80u16.to_be_bytes());
    socks.extend_from_slice(b"ping");
    let reply = exchange(p.port(), &socks).await;
    assert!(reply.starts_with(&[5, 0, 5, 0]) && reply.ends_with(b"pong"));
    assert_eq!(*seen.lock().unwrap(), ["ip 192.0.2.7:80"]);
}

#[tokio::test]
async fn a_socks5_upstreams_refusal_fails_the_agents_connection() {
    let tport = target().await;
    // 2: "connection not allowed by ruleset".
    let (up, seen) = socks_upstream(tport, 2).await;
    let dialer = via(&[("all_proxy", format!("socks5h://127.0.0.1:{up}"))]);
    let (p, _asks) = proxy(NetworkMode::Gated, vec!["target.test".into()], dialer);
    let reply = exchange(p.port(), b"CONNECT target.test:443 HTTP/1.1\r\n\r\nhello").await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
    assert!(reply.contains("CONNECT refused (reply 2)"), "{reply}");
    assert_eq!(*seen.lock().unwrap(), ["name target.test:443"]);
}

/// A fake HTTP proxy that answers the first request head `pong` and keeps
/// every byte it receives on the connection until a second after that.
async fn keeping_upstream() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let kept: Arc<Mutex<Vec<u8>>> = Arc::default();
    let keep = kept.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let mut answered = false;
                let mut buf = [0u8; 4096];
                // Up to 10 s for the head; once answered, a second more
                // for anything sent after it.
                let mut until = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
                while let Ok(Ok(n)) = tokio::time::timeout_at(until, s.read(&mut buf)).await {
                    if n == 0 {
                        break;
                    }
                    keep.lock().unwrap().extend_from_slice(&buf[..n]);
                    if !answered && keep.lock().unwrap().windows(4).any(|w| w == b"\r\n\r\n") {
                        answered = true;
                        until = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
                        let _ = s
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong")
                            .await;
                    }
                }
            });
        }
    });
    (port, kept)
}

/// The user's proxy gets the one request the gate allowed, with its body,
/// and nothing the agent sends after it: a second request in the same
/// connection (for a host nobody allowed) never reaches it. A body of no
/// stated length is refused before anything is sent.
#[tokio::test]
async fn only_the_allowed_request_reaches_the_users_proxy() {
    let (up, kept) = keeping_upstream().await;
    let dialer = via(&[("http_proxy", format!("http://127.0.0.1:{up}"))]);
    let (p, _asks) = proxy(NetworkMode::Gated, vec!["target.test:80".into()], dialer);
    let reply = exchange(
        p.port(),
        b"POST http://target.test/a HTTP/1.1\r\nHost: target.test\r\nContent-Length: 3\r\n\r\n\
abcGET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    let got = String::from_utf8_lossy(&kept.lock().unwrap()).into_owned();
    assert!(
        got.starts_with("POST http://target.test:80/a HTTP/1.1\r\n"),
        "{got}"
    );
    assert!(got.ends_with("\r\n\r\nabc"), "{got}");
    assert!(!got.contains("evil"), "{got}");
    kept.lock().unwrap().clear();
    let reply = exchange(
        p.port(),
        b"POST http://target.test/a HTTP/1.1\r\nHost: target.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    )
    .await;
    assert!(
        String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&reply)
    );
    assert!(kept.lock().unwrap().is_empty());
}

/// Without the user's proxy, the same: the server is told only the host
/// the gate judged (the agent's own `Host`, naming another site a shared
/// address serves, is dropped), and nothing after the request's body
/// reaches it. A body of no stated length is refused before anything is
/// asked or dialled.
#[tokio::test]
async fn a_forwarded_request_names_only_the_judged_host_and_goes_alone() {
    let (tport, kept) = keeping_upstream().await;
    let direct = Dialer {
        upstreams: Arc::default(),
        pinned: Vec::new(),
    };
    let (p, mut asks) = proxy(
        NetworkMode::Gated,
        vec![format!("127.0.0.1:{tport}")],
        direct,
    );
    let reply = exchange(
        p.port(),
        format!(
            "POST http://127.0.0.1:{tport}/a HTTP/1.1\r\nHost: evil.test\r\nContent-Length: 3\r\n\r\n\
abcGET /second HTTP/1.1\r\nHost: evil.test\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    let got = String::from_utf8_lossy(&kept.lock().unwrap()).into_owned();
    assert!(
        got.starts_with(&format!("POST /a HTTP/1.1\r\nHost: 127.0.0.1:{tport}\r\n")),
        "{got}"
    );
    assert!(got.ends_with("\r\n\r\nabc"), "{got}");
    assert!(!got.contains("evil") && !got.contains("second"), "{got}");
    kept.lock().unwrap().clear();
    let reply = exchange(
        p.port(),
        format!(
            "POST http://unasked.test:{tport}/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
    assert!(asks.try_recv().is_err(), "asked about a request it refuses");
    assert!(kept.lock().unwrap().is_empty());
}

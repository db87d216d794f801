//! The proxy's tests: parsing a request head, the refusal replies, and
//! connections served end to end on loopback.

use super::*;

#[test]
fn connect_names_host_and_port() {
    assert_eq!(
        parse_head(b"CONNECT API.github.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
        Ok(Request::Connect {
            host: "api.github.com".into(),
            port: 443
        })
    );
    assert_eq!(
        parse_head(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n"),
        Ok(Request::Connect {
            host: "::1".into(),
            port: 8443
        })
    );
    for bad in [
        &b"CONNECT github.com HTTP/1.1\r\n\r\n"[..],
        b"CONNECT github.com:0 HTTP/1.1\r\n\r\n",
        b"CONNECT github.com:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT a b:1 HTTP/1.1\r\n\r\n",
        b"CONNECT git/hub.com:1 HTTP/1.1\r\n\r\n",
        b"CONNECT github.com:443 HTTP/2\r\n\r\n",
    ] {
        assert!(
            matches!(parse_head(bad), Err(Refusal::BadRequest(_))),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn an_absolute_uri_is_forwarded_in_origin_form_on_a_connection_of_its_own() {
    let head = b"POST http://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\n\
                 Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n\
                 Connection: keep-alive\r\nContent-Length: 3\r\n\r\n";
    let Ok(Request::Forward {
        host, port, head, ..
    }) = parse_head(head)
    else {
        panic!("not a forward");
    };
    assert_eq!((host.as_str(), port), ("example.com", 8080));
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "POST /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 3\r\n\
         Connection: close\r\n\r\n"
    );
    let Ok(Request::Forward {
        host, port, head, ..
    }) = parse_head(b"GET http://a.test?x HTTP/1.0\r\n\r\n")
    else {
        panic!("not a forward");
    };
    assert_eq!((host.as_str(), port), ("a.test", 80));
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "GET /?x HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n"
    );
    for bad in [
        &b"GET /relative HTTP/1.1\r\n\r\n"[..],
        b"GET https://a.test/ HTTP/1.1\r\n\r\n",
        b"GET http://user:pw@a.test/ HTTP/1.1\r\n\r\n",
        b"get http://a.test/ HTTP/1.1\r\n\r\n",
    ] {
        assert!(matches!(parse_head(bad), Err(Refusal::BadRequest(_))));
    }
}

#[test]
fn refusals_say_why_on_one_line() {
    let text = String::from_utf8(http_refusal(
        &Refusal::Denied(Some("no\r\nX-Evil: 1".into())),
        "a.test",
        443,
    ))
    .unwrap();
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
    assert!(
        text.ends_with("\r\n\r\nwarden: the connection to a.test:443 was refused: no  X-Evil: 1\n")
    );
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.contains(&format!("Content-Length: {}", body.len())));
    assert!(
        String::from_utf8(http_refusal(&Refusal::BadRequest("x"), "", 0))
            .unwrap()
            .starts_with("HTTP/1.1 400 ")
    );
    assert_eq!(socks_reply(SOCKS_NOT_ALLOWED)[1], 2);
}

/// A listener that counts the bytes it receives.
async fn target() -> (u16, tokio::sync::watch::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::watch::channel(0usize);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                if let Ok(n) = s.read(&mut buf).await {
                    tx.send_modify(|c| *c += n);
                    let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\npong").await;
                }
            });
        }
    });
    (port, rx)
}

fn proxy(hosts: Hosts) -> (Proxy, mpsc::UnboundedReceiver<ConnectAsk>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (asks, rx) = mpsc::unbounded_channel();
    let gate = Gate {
        agent: "t".into(),
        hosts,
        asks,
    };
    (Proxy::serve(listener, gate).unwrap(), rx)
}

/// Answer an ask that waits.
pub(in crate::net) fn answer(ask: ConnectAsk, answer: NetAnswer) {
    let Reply::Wait(reply) = ask.reply else {
        panic!("a refusal, not an ask: {ask:?}");
    };
    reply.send(answer).unwrap();
}

/// Send `send` to the proxy on `port`: everything that came back before it
/// closed (or 5 s passed).
pub(in crate::net) async fn exchange(port: u16, send: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(send).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut out)).await;
    out
}

#[tokio::test]
async fn an_allowed_host_connects_without_asking_and_a_refused_one_reaches_nothing() {
    let (tport, received) = target().await;
    let (p, mut asks) = proxy(Hosts::new(
        NetworkMode::Gated,
        vec![format!("127.0.0.1:{tport}")],
    ));
    let reply = exchange(
        p.port(),
        format!("GET http://127.0.0.1:{tport}/x HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).ends_with("pong"));
    assert!(asks.try_recv().is_err(), "an allowed host asked");
    let before = *received.borrow();
    assert!(before > 0);

    // By name, not allowed: one ask; denied, nothing reaches it.
    let asked = tokio::spawn(async move {
        let ask = asks.recv().await.unwrap();
        assert_eq!((ask.host.as_str(), ask.port), ("localhost", tport));
        answer(
            ask,
            NetAnswer::Deny {
                reason: Some("no".into()),
            },
        );
        asks
    });
    let reply = exchange(
        p.port(),
        format!("CONNECT localhost:{tport} HTTP/1.1\r\n\r\nhello").as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 403"));
    let mut asks = asked.await.unwrap();
    // Allowed by the gate: the tunnel carries what follows the head.
    let asked = tokio::spawn(async move {
        let ask = asks.recv().await.unwrap();
        answer(ask, NetAnswer::Allow);
        asks
    });
    let reply = exchange(
        p.port(),
        format!("CONNECT localhost:{tport} HTTP/1.1\r\n\r\nhello").as_bytes(),
    )
    .await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("pong"), "{reply}");
    assert_eq!(*received.borrow(), before + 5);
    // An unanswered ask (its reply dropped) is a refusal.
    let mut asks = asked.await.unwrap();
    tokio::spawn(async move { drop(asks.recv().await) });
    let mut socks = vec![5, 1, 0, 5, 1, 0, 3, 9];
    socks.extend_from_slice(b"localhost");
    socks.extend_from_slice(&tport.to_be_bytes());
    let reply = exchange(p.port(), &socks).await;
    assert_eq!(
        reply,
        [&[5u8, 0][..], &socks_reply(SOCKS_NOT_ALLOWED)].concat()
    );
    assert_eq!(*received.borrow(), before + 5);
}

#[tokio::test]
async fn socks_connects_an_allowed_host_and_closed_refuses_without_asking_but_tells() {
    let (tport, received) = target().await;
    let (p, mut asks) = proxy(Hosts::new(
        NetworkMode::Closed,
        vec![format!("127.0.0.1:{tport}")],
    ));
    let mut socks = vec![5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1];
    socks.extend_from_slice(&tport.to_be_bytes());
    socks.extend_from_slice(b"ping");
    let reply = exchange(p.port(), &socks).await;
    assert_eq!(
        &reply[..12],
        &[&[5u8, 0][..], &socks_reply(SOCKS_OK)].concat()
    );
    assert!(reply.ends_with(b"pong"));
    assert_eq!(*received.borrow(), 4);
    let reply = exchange(
        p.port(),
        format!("CONNECT localhost:{tport} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&reply).contains("closed"));
    assert_eq!(*received.borrow(), 4);
    // Nothing asks: the refusal is only told, once, for the log.
    let told = asks.try_recv().expect("the refusal is told");
    assert_eq!((told.host.as_str(), told.port), ("localhost", tport));
    assert!(
        matches!(&told.reply, Reply::Refused(why) if why == CLOSED),
        "{told:?}"
    );
    assert!(asks.try_recv().is_err());
}

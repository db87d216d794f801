//! `[remote] notify_url`: a POST to an ntfy-style topic URL (or any
//! webhook) when a card has waited longer than `notify_after`, once per
//! card. It carries a title and a link to the page, never the content:
//! no command, no diff, no path, no agent-written title, and no token
//! (the link is the bare address; the phone signed in before, or opens
//! the URL warden showed).
//!
//! `http://`, or `https://` through rustls (the `ring` provider, no
//! OpenSSL), trusting the Mozilla roots `webpki-roots` carries: ntfy.sh
//! is reached directly.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::rustls;

use super::server::{Shared, lock};
use crate::state::{ChatId, RequestId};

/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// The notification's title (ntfy's `Title` header).
const TITLE: &str = "warden: a card waits";

/// Where and when to notify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notify {
    pub url: NotifyUrl,
    /// How long a card waits before the POST.
    pub after: Duration,
}

impl Notify {
    /// From `[remote]`: `None` without a `notify_url`.
    pub fn from_settings(
        settings: &crate::settings::RemoteSettings,
    ) -> Result<Option<Notify>, NotifyUrlError> {
        let Some(url) = &settings.notify_url else {
            return Ok(None);
        };
        Ok(Some(Notify {
            url: NotifyUrl::parse(url)?,
            after: Duration::from_secs(settings.notify_after),
        }))
    }
}

/// An `http(s)://host[:port]/path` URL, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyUrl {
    /// `https://`: the POST goes over TLS.
    tls: bool,
    host: String,
    port: u16,
    /// `host[:port]`, for the Host header.
    authority: String,
    /// The path and query.
    path: String,
}

/// Why a `notify_url` cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NotifyUrlError {
    #[error("notify_url must start with http:// or https://")]
    NotHttp,
    #[error("notify_url has no host")]
    NoHost,
    #[error("notify_url has a bad port")]
    BadPort,
}

impl NotifyUrl {
    pub fn parse(text: &str) -> Result<NotifyUrl, NotifyUrlError> {
        let (tls, rest) = match (text.strip_prefix("https://"), text.strip_prefix("http://")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => return Err(NotifyUrlError::NotHttp),
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if authority.contains('@') || authority.chars().any(|c| c.is_whitespace()) {
            return Err(NotifyUrlError::NoHost);
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => (
                host,
                port.parse::<u16>().map_err(|_| NotifyUrlError::BadPort)?,
            ),
            _ => (authority, if tls { 443 } else { 80 }),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(NotifyUrlError::NoHost);
        }
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        Ok(NotifyUrl {
            tls,
            host: host.to_string(),
            port,
            authority: authority.to_string(),
            path,
        })
    }
}

/// Watch the published cards; POST once for each that waited `after`.
/// `link` is the page's bare address.
pub(super) async fn watch(shared: Arc<Mutex<Shared>>, notify: Notify, link: String) {
    let mut changes = lock(&shared).changed.subscribe();
    let mut sent: HashSet<(ChatId, RequestId)> = HashSet::new();
    loop {
        let now = Instant::now();
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        {
            let shared = lock(&shared);
            let waiting: HashSet<(ChatId, RequestId)> = shared
                .snapshot
                .chats
                .iter()
                .flat_map(|chat| chat.cards.iter().map(|card| (chat.chat, card.summary.id)))
                .collect();
            sent.retain(|key| waiting.contains(key));
            for chat in &shared.snapshot.chats {
                for card in &chat.cards {
                    if sent.contains(&(chat.chat, card.summary.id)) {
                        continue;
                    }
                    let at = card.since + notify.after;
                    if at <= now {
                        sent.insert((chat.chat, card.summary.id));
                        due.push((card.summary.kind.clone(), now.duration_since(card.since)));
                    } else {
                        next = Some(next.map_or(at, |n| n.min(at)));
                    }
                }
            }
        }
        for (kind, waited) in due {
            let message = format!(
                "A card ({}) has waited {} s: {link}",
                plain_kind(&kind),
                waited.as_secs()
            );
            if let Err(err) = post(&notify.url, &link, message, None).await {
                tracing::warn!("remote notify_url: {err}");
            }
        }
        let next = next.map(tokio::time::Instant::from_std);
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            _ = sleep_until(next), if next.is_some() => {}
        }
    }
}

/// A card's kind as the POST may say it: one of warden's kind names,
/// else `other` (nothing agent-written leaves the machine).
fn plain_kind(kind: &str) -> &str {
    if !kind.is_empty() && kind.len() <= 16 && kind.bytes().all(|b| b.is_ascii_lowercase()) {
        kind
    } else {
        "other"
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The TLS settings of an `https://` POST: rustls with `ring`, the
/// Mozilla roots of `webpki-roots`, made once.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            client_config(roots)
        })
        .clone()
}

/// A client configuration trusting `roots` (no client certificate).
fn client_config(roots: rustls::RootCertStore) -> Result<Arc<rustls::ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// One POST over HTTP/1.1 (over TLS for `https://`, trusting `tls` when
/// given, else [`tls_config`]), ntfy's headers (Title, Click, Tags) on a
/// plain-text body any webhook can read.
async fn post(
    url: &NotifyUrl,
    link: &str,
    message: String,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<(), String> {
    let send = async {
        let stream = tokio::net::TcpStream::connect((url.host.as_str(), url.port))
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", url.authority))?;
        if !url.tls {
            return post_over(stream, url, link, message).await;
        }
        let config = match tls {
            Some(config) => config,
            None => tls_config()?,
        };
        let name = rustls::pki_types::ServerName::try_from(url.host.clone())
            .map_err(|e| format!("{}: {e}", url.authority))?;
        let stream = tokio_rustls::TlsConnector::from(config)
            .connect(name, stream)
            .await
            .map_err(|e| format!("TLS with {}: {e}", url.authority))?;
        post_over(stream, url, link, message).await
    };
    tokio::time::timeout(POST_TIMEOUT, send)
        .await
        .map_err(|_| format!("{} did not answer in time", url.authority))?
}

/// The POST itself, on a connected stream.
async fn post_over<S>(stream: S, url: &NotifyUrl, link: &str, message: String) -> Result<(), String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let mut request = hyper::Request::new(Full::new(Bytes::from(message)));
    *request.method_mut() = hyper::Method::POST;
    *request.uri_mut() = url.path.parse().map_err(|_| "a bad path".to_string())?;
    let headers = request.headers_mut();
    let value = |text: &str| HeaderValue::from_str(text).map_err(|e| e.to_string());
    headers.insert(header::HOST, value(&url.authority)?);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert("title", HeaderValue::from_static(TITLE));
    headers.insert("tags", HeaderValue::from_static("warning"));
    headers.insert("click", value(link)?);
    let reply = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string());
    drop(sender);
    driver.abort();
    let reply = reply?;
    if reply.status().is_success() {
        Ok(())
    } else {
        Err(format!("{} answered {}", url.authority, reply.status()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_urls_are_plain_http_with_a_host() {
        let url = NotifyUrl::parse("http://ntfy.example:8080/warden-topic").unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.path.as_str()),
            ("ntfy.example", 8080, "/warden-topic")
        );
        let url = NotifyUrl::parse("http://127.0.0.1").unwrap();
        assert_eq!((url.port, url.path.as_str()), (80, "/"));
        let url = NotifyUrl::parse("http://[::1]:9/x?y=1").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("::1", 9));
        let url = NotifyUrl::parse("https://ntfy.sh/warden-topic").unwrap();
        assert_eq!(
            (url.tls, url.host.as_str(), url.port, url.path.as_str()),
            (true, "ntfy.sh", 443, "/warden-topic")
        );
        assert!(!NotifyUrl::parse("http://ntfy.sh/x").unwrap().tls);
        assert_eq!(
            NotifyUrl::parse("ftp://ntfy.sh/x"),
            Err(NotifyUrlError::NotHttp)
        );
        assert_eq!(
            NotifyUrl::parse("http://:80/x"),
            Err(NotifyUrlError::NoHost)
        );
        assert_eq!(
            NotifyUrl::parse("http://user@host/x"),
            Err(NotifyUrlError::NoHost)
        );
        assert_eq!(
            NotifyUrl::parse("http://host:http/x"),
            Err(NotifyUrlError::BadPort)
        );
    }

    /// A TLS listener on loopback with a certificate for `localhost` made
    /// here: the acceptor, the listener, its port and the certificate.
    async fn tls_listener() -> (
        tokio_rustls::TlsAcceptor,
        tokio::net::TcpListener,
        u16,
        rustls::pki_types::CertificateDer<'static>,
    ) {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let cert_der = cert.cert.der().clone();
        let key =
            rustls::pki_types::PrivateKeyDer::try_from(cert.signing_key.serialize_der()).unwrap();
        let server = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert_der.clone()], key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        (acceptor, listener, port, cert_der)
    }

    /// A local TLS server (a certificate made here, trusted through a root
    /// of this test only) receives the POST of an `https://` notify_url.
    #[tokio::test]
    async fn an_https_notify_url_gets_the_post_over_tls() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (acceptor, listener, port, cert_der) = tls_listener().await;
        let received = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut tls = acceptor.accept(tcp).await.unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then the body its Content-Length says.
            loop {
                let n = tls.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .and_then(|l| l.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= length || n == 0 {
                        break;
                    }
                }
                assert!(n > 0, "closed early: {text}");
            }
            tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            tls.flush().await.unwrap();
            String::from_utf8_lossy(&got).to_string()
        });

        let url = NotifyUrl::parse(&format!("https://localhost:{port}/warden-topic")).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert_der).unwrap();
        let trusted = client_config(roots).unwrap();
        post(
            &url,
            "https://box.example/",
            "a card waits".into(),
            Some(trusted),
        )
        .await
        .unwrap();
        let request = received.await.unwrap();
        assert!(
            request.starts_with("POST /warden-topic HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains(&format!("host: localhost:{port}\r\n")),
            "{request}"
        );
        assert!(
            request.contains("click: https://box.example/\r\n"),
            "{request}"
        );
        assert!(request.ends_with("\r\n\r\na card waits"), "{request}");
    }

    /// The same server, not trusted: nothing is sent (the default roots,
    /// webpki's, do not know a certificate made here).
    #[tokio::test]
    async fn an_https_notify_url_with_an_unknown_certificate_is_refused() {
        let (acceptor, listener, port, _) = tls_listener().await;
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            acceptor.accept(tcp).await.is_ok()
        });
        let url = NotifyUrl::parse(&format!("https://localhost:{port}/t")).unwrap();
        let err = post(&url, "https://box.example/", "x".into(), None)
            .await
            .unwrap_err();
        assert!(err.contains("TLS with localhost"), "{err}");
        assert!(!server.await.unwrap(), "the handshake did not complete");
    }

    #[test]
    fn only_warden_kind_names_leave_the_machine() {
        assert_eq!(plain_kind("edit"), "edit");
        assert_eq!(plain_kind("rm -rf /"), "other");
        assert_eq!(plain_kind("/etc/passwd"), "other");
        assert_eq!(plain_kind(""), "other");
    }
}

//! `[remote] notify_url`: a POST to an ntfy-style topic URL (or any
//! webhook) when a card has waited longer than `notify_after`, once per
//! card. It carries a title and a link to the page, never the content:
//! no command, no diff, no path, no agent-written title, and no token
//! (the link is the bare address; the phone signed in before, or opens
//! the URL warden showed).
//!
//! Plain `http://` only: warden brings no TLS stack of its own. Reach a
//! TLS service through a local relay (an ntfy server on the tailnet, or a
//! forwarding proxy on this machine).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};

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

/// An `http://host[:port]/path` URL, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyUrl {
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
    #[error("notify_url must start with http:// (no TLS of its own: use a local relay)")]
    NotHttp,
    #[error("notify_url has no host")]
    NoHost,
    #[error("notify_url has a bad port")]
    BadPort,
}

impl NotifyUrl {
    pub fn parse(text: &str) -> Result<NotifyUrl, NotifyUrlError> {
        let rest = text
            .strip_prefix("http://")
            .ok_or(NotifyUrlError::NotHttp)?;
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
            _ => (authority, 80),
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
                .flat_map(|chat| chat.cards.iter().map(|card| (chat.chat, card.id)))
                .collect();
            sent.retain(|key| waiting.contains(key));
            for chat in &shared.snapshot.chats {
                for card in &chat.cards {
                    if sent.contains(&(chat.chat, card.id)) {
                        continue;
                    }
                    let at = card.since + notify.after;
                    if at <= now {
                        sent.insert((chat.chat, card.id));
                        due.push((card.kind.clone(), now.duration_since(card.since)));
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
            if let Err(err) = post(&notify.url, &link, message).await {
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

/// One POST over plain HTTP/1.1, ntfy's headers (Title, Click, Tags) on a
/// plain-text body any webhook can read.
async fn post(url: &NotifyUrl, link: &str, message: String) -> Result<(), String> {
    let send = async {
        let stream = tokio::net::TcpStream::connect((url.host.as_str(), url.port))
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", url.authority))?;
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
    };
    tokio::time::timeout(POST_TIMEOUT, send)
        .await
        .map_err(|_| format!("{} did not answer in time", url.authority))?
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
        assert_eq!(
            NotifyUrl::parse("https://ntfy.sh/x"),
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

    #[test]
    fn only_warden_kind_names_leave_the_machine() {
        assert_eq!(plain_kind("edit"), "edit");
        assert_eq!(plain_kind("rm -rf /"), "other");
        assert_eq!(plain_kind("/etc/passwd"), "other");
        assert_eq!(plain_kind(""), "other");
    }
}

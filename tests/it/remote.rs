//! End to end: waiting cards served over HTTP and answered from another
//! device through the same gate as a key (issue 26). A plain TCP client
//! speaks HTTP/1.1 to the server; the demo agent raises the cards.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warden::app::App;
use warden::policy::Mode;
use warden::state::Action;

use crate::common::*;

/// One HTTP exchange: status, raw headers, body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: String,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

pub(crate) async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    body: Option<&str>,
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(cookie) = cookie {
        request.push_str(&format!("Cookie: {cookie}\r\n"));
    }
    let body = body.unwrap_or("");
    if method == "POST" {
        request.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(GUARD, stream.read_to_end(&mut raw))
        .await
        .expect("the server answers")
        .expect("read");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let (status_line, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    Reply {
        status,
        headers: headers.to_string(),
        body: body.to_string(),
    }
}

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The demo agent with a card waiting, the server on, arming off (the
/// arming has its own test).
async fn card_served(dir: &std::path::Path) -> (App, SocketAddr, String) {
    let mut app = started_with(dir, logged_options(dir, Mode::Default)).await;
    let url = app.start_remote(localhost()).expect("the server starts");
    app.set_remote_arming(Duration::ZERO);
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let addr = app.remote_addr().expect("serving");
    let path = url
        .split_once(&addr.to_string())
        .map(|(_, p)| p.to_string())
        .expect("the URL names the address");
    (app, addr, path)
}

/// Open the URL: the token for the session cookie.
pub(crate) async fn sign_in(addr: SocketAddr, path: &str) -> String {
    let reply = http(addr, "GET", path, None, None).await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    let cookie = reply.header("set-cookie").expect("a cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    cookie.split(';').next().unwrap().to_string()
}

pub(crate) fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    page[at..at + 32].to_string()
}

fn card_form(app: &App, pick: &str, csrf: Option<&str>) -> String {
    let chat = app.ws.chats[app.ws.active].id;
    let card = app.state().gate.approvals[0].id;
    let mut form = format!("chat={chat}&card={card}&pick={pick}");
    if let Some(csrf) = csrf {
        form.push_str(&format!("&csrf={csrf}"));
    }
    form
}

/// Feed the app until the inbox is quiet for a moment (the page's answer
/// is in the inbox once the POST is answered).
async fn pump_inbox(app: &mut App) {
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(200), app.next_agent_event()).await
    {
        app.on_agent_event(event);
    }
}

#[tokio::test]
async fn a_card_answered_over_http_reaches_the_agent_and_is_logged_remote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(page.body.contains("Allow once"), "{}", page.body);
    let title = app.state().gate.approvals[0].title();
    assert!(page.body.contains(&title), "the card's title on the page");
    let form = card_form(&app, "allow", Some(&csrf_of(&page.body)));
    let answer = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected allow-once"),
        "{text}"
    );
    assert!(
        decisions(app.state())
            .iter()
            .any(|(allowed, line)| *allowed && line.contains("allowed remotely")),
        "{:?}",
        decisions(app.state())
    );
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].source, "remote");
    // The page now says who decided.
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    assert!(page.body.contains("by remote"), "{}", page.body);
    app.shutdown().await;
}

#[tokio::test]
async fn deny_with_a_reason_over_http_tells_the_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let form = format!(
        "{}&reason=use+the+other+file",
        card_form(&app, "reason", Some(&csrf_of(&page.body)))
    );
    let answer = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    pump_until(&mut app, "the card answered", |s| {
        s.gate.approvals.is_empty()
    })
    .await;
    assert!(
        decisions(app.state())
            .iter()
            .any(|(allowed, line)| !*allowed && line.contains("use the other file")),
        "{:?}",
        decisions(app.state())
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_bad_or_used_token_gets_nothing_and_failures_are_rate_limited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    // No cookie, no token: nothing.
    let page = http(addr, "GET", "/", None, None).await;
    assert_eq!(page.status, 403);
    assert!(!page.body.contains("Allow once"));
    let bad = http(
        addr,
        "GET",
        "/?t=00000000000000000000000000000000",
        None,
        None,
    )
    .await;
    assert_eq!(bad.status, 403);
    assert!(bad.header("set-cookie").is_none());
    // A forged cookie gets nothing either.
    let forged = http(addr, "GET", "/", Some("warden_session=0000"), None).await;
    assert_eq!(forged.status, 403);
    // The right token works once.
    let cookie = sign_in(addr, &path).await;
    let again = http(addr, "GET", &path, None, None).await;
    assert_eq!(again.status, 403, "the token is good once");
    assert!(again.header("set-cookie").is_none());
    // Rotated (`/remote` again): the old cookie is out, the new URL works.
    let url = app.start_remote(localhost()).expect("rotates");
    let stale = http(addr, "GET", "/", Some(&cookie), None).await;
    assert_eq!(stale.status, 403, "a rotated session is out");
    let new_path = url.split_once(&addr.to_string()).unwrap().1.to_string();
    assert_ne!(new_path, path);
    app.shutdown().await;
}

/// Wrong tokens (an agent on this machine can reach the port and try
/// them) are each answered later than the one before; they never lock
/// sign-in: the right token still gets in at once.
#[tokio::test]
async fn wrong_tokens_are_slowed_and_never_lock_out_the_right_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let wrong = "/?t=ffffffffffffffffffffffffffffffff";
    // One after the other: the third waits at least 4 × the first's delay
    // (50 ms, doubling).
    let mut took = Vec::new();
    for _ in 0..3 {
        let at = std::time::Instant::now();
        let bad = http(addr, "GET", wrong, None, None).await;
        took.push(at.elapsed());
        assert_eq!(bad.status, 403, "{}", bad.body);
        assert!(bad.header("set-cookie").is_none());
    }
    assert!(
        took[2] >= Duration::from_millis(200),
        "the third wrong token is slowed: {took:?}"
    );
    // Many more at once: each is refused, none locks anything.
    let flood: Vec<_> = (0..30)
        .map(|_| tokio::spawn(async move { http(addr, "GET", wrong, None, None).await.status }))
        .collect();
    for bad in flood {
        assert_eq!(bad.await.unwrap(), 403);
    }
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    assert_eq!(page.status, 200, "signed in after 33 wrong tokens");
    assert!(page.body.contains("Allow once"), "{}", page.body);
    app.shutdown().await;
}

#[tokio::test]
async fn no_answer_without_csrf_by_get_or_without_the_cookie() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let csrf = csrf_of(&page.body);
    let missing = card_form(&app, "allow", None);
    let reply = http(addr, "POST", "/answer", Some(&cookie), Some(&missing)).await;
    assert_eq!(reply.status, 403, "no CSRF token");
    let wrong = card_form(&app, "allow", Some("ffffffffffffffffffffffffffffffff"));
    let reply = http(addr, "POST", "/answer", Some(&cookie), Some(&wrong)).await;
    assert_eq!(reply.status, 403, "a CSRF token the server never gave");
    let good = card_form(&app, "allow", Some(&csrf));
    let reply = http(addr, "GET", &format!("/answer?{good}"), Some(&cookie), None).await;
    assert_eq!(reply.status, 405, "no answer by GET");
    let reply = http(addr, "POST", "/answer", None, Some(&good)).await;
    assert_eq!(reply.status, 403, "no answer without the session cookie");
    pump_inbox(&mut app).await;
    assert_eq!(app.state().gate.approvals.len(), 1, "the card still waits");
    assert!(decisions(app.state()).is_empty());
    app.shutdown().await;
}

#[tokio::test]
async fn a_key_and_a_post_race_the_first_wins_and_the_page_says_who() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let form = card_form(&app, "deny", Some(&csrf_of(&page.body)));
    // The POST lands in the inbox first; the key is pressed before the
    // runtime reads it: the key wins, the remote answer finds no card.
    let reply = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(reply.status, 303);
    key(&mut app, Action::ch('1'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert_eq!(text.matches("permission outcome:").count(), 1, "{text}");
    assert!(text.contains("selected allow-once"), "{text}");
    // A POST after the key: the card no longer waits, and says who decided.
    let late = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(late.status, 409);
    assert!(late.body.contains("by user"), "{}", late.body);
    app.settle_disk().await;
    let log = warden::decision_log::read(&dir.path().join("decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].source, "user");
    app.shutdown().await;
}

#[tokio::test]
async fn a_card_gone_from_the_terminal_leaves_the_page_and_cannot_be_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let form = card_form(&app, "allow", Some(&csrf_of(&page.body)));
    let card_anchor = format!("id=\"card-{}-", app.ws.chats[app.ws.active].id);
    assert!(page.body.contains(&card_anchor));
    // The turn is cancelled: its card is answered cancelled, withdrawn.
    key(&mut app, Action::Cancel);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    assert!(!page.body.contains(&card_anchor), "{}", page.body);
    let late = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(late.status, 409);
    let text = agent_text(app.state());
    assert!(!text.contains("selected allow"), "{text}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_card_cannot_be_answered_the_instant_it_appears() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    app.set_remote_arming(Duration::from_secs(3600));
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let form = card_form(&app, "allow", Some(&csrf_of(&page.body)));
    let reply = http(addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
    assert_eq!(reply.status, 409, "{}", reply.body);
    pump_inbox(&mut app).await;
    assert_eq!(app.state().gate.approvals.len(), 1, "the card still waits");
    app.shutdown().await;
}

#[tokio::test]
async fn the_mode_switches_from_the_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let chat = app.ws.chats[app.ws.active].id;
    let form = format!("chat={chat}&mode=plan&csrf={}", csrf_of(&page.body));
    let reply = http(addr, "POST", "/mode", Some(&cookie), Some(&form)).await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    pump_until(&mut app, "plan mode", |s| s.gate.mode == Mode::Plan).await;
    app.shutdown().await;
}

#[tokio::test]
async fn the_server_is_gone_when_warden_exits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    app.shutdown().await;
    // The aborted server task is dropped at the runtime's next turn.
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still listening after shutdown"
    );
    drop(cookie);
}

/// Every file under `dir`, read as text.
fn all_text_under(dir: &std::path::Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&all_text_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

#[tokio::test]
async fn slash_remote_starts_the_server_and_again_makes_a_new_url() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = logged_options(dir.path(), Mode::Default);
    options.chats_dir = Some(dir.path().join("chats"));
    let mut app = started_with(dir.path(), options).await;
    app.set_remote_listen(localhost());
    assert!(app.remote_url().is_none(), "off by default");
    send(&mut app, "/remote");
    let first = app.remote_url().expect("/remote starts it");
    assert!(first.starts_with("http://127.0.0.1:"), "{first}");
    let token = first.split_once("?t=").expect("a token").1.to_string();
    // The URL with its token and its QR code are over the screen...
    let shown = app.ws.remote_code.clone().expect("the URL is shown");
    assert_eq!(shown.url, first);
    assert_eq!(
        Some(shown.qr),
        warden::remote::qr::lines(&first),
        "its QR code"
    );
    // ...until a key, which does nothing else.
    key(&mut app, Action::ch('x'));
    assert!(app.ws.remote_code.is_none(), "a key closes it");
    assert_eq!(app.state().view.composer.text(), "", "the key went nowhere");
    send(&mut app, "/remote");
    let second = app.remote_url().expect("still on");
    assert_ne!(first, second, "a new token");
    let addr = app.remote_addr().unwrap();
    let old = first.split_once(&addr.to_string()).unwrap().1.to_string();
    let reply = http(addr, "GET", &old, None, None).await;
    assert_eq!(reply.status, 403, "the old URL is out");
    // The chat says where it serves, never the token: a transcript is
    // recorded (and exported), a token in it would outlive its use.
    key(&mut app, Action::ch('x'));
    send(&mut app, "hello");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let said = infos(app.state());
    assert!(
        said.iter().any(|t| t.contains(&format!("http://{addr}/"))),
        "the address is said: {said:?}"
    );
    let token2 = second.split_once("?t=").expect("a token").1.to_string();
    for entry in app.state().session.transcript.entries() {
        let text = format!("{:?}", entry.kind);
        assert!(!text.contains(&token), "token in the transcript: {text}");
        assert!(!text.contains(&token2), "token in the transcript: {text}");
    }
    app.shutdown().await;
    let recorded = all_text_under(&dir.path().join("chats"));
    assert!(
        recorded.contains("hello"),
        "the chat was recorded: {recorded}"
    );
    assert!(!recorded.contains(&token), "token in the record");
    assert!(!recorded.contains(&token2), "token in the record");
}

/// An open `/events` stream: the raw bytes read so far.
struct Events {
    stream: tokio::net::TcpStream,
    seen: String,
}

impl Events {
    async fn open(addr: SocketAddr, cookie: &str) -> Events {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let request = format!("GET /events HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        Events {
            stream,
            seen: String::new(),
        }
    }

    /// Read until the text after `from` holds `want`; returns the offset
    /// just past it.
    async fn until(&mut self, from: usize, want: &str) -> usize {
        tokio::time::timeout(GUARD, async {
            while !self.seen[from..].contains(want) {
                let mut buf = [0u8; 4096];
                let n = self.stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "the stream ended before {want:?}: {}", self.seen);
                self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no {want:?} in {}", self.seen));
        from + self.seen[from..].find(want).unwrap_or(0) + want.len()
    }

    /// Whether the server ends the stream.
    async fn ends(&mut self) -> bool {
        tokio::time::timeout(GUARD, async {
            loop {
                let mut buf = [0u8; 4096];
                match self.stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return true,
                    Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&buf[..n])),
                }
                // The chunked body's last chunk: the stream is over.
                if self.seen.ends_with("\r\n0\r\n\r\n") {
                    return true;
                }
            }
        })
        .await
        .unwrap_or(false)
    }
}

#[tokio::test]
async fn the_page_follows_the_cards_live_over_server_sent_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, addr, path) = card_served(dir.path()).await;
    let cookie = sign_in(addr, &path).await;
    // The page's script, and only it, may run: by its nonce.
    let page = http(addr, "GET", "/", Some(&cookie), None).await;
    let csp = page.header("content-security-policy").expect("a CSP");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("a script nonce")
        .to_string();
    assert!(
        page.body.contains(&format!("<script nonce=\"{nonce}\">")),
        "{}",
        page.body
    );
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    assert!(!page.body.contains("http-equiv=\"refresh\""), "no refresh");
    assert!(page.body.contains("href=\"/\">reload</a>"), "a reload link");
    // No stream without the session.
    let refused = http(addr, "GET", "/events", None, None).await;
    assert_eq!(refused.status, 403);

    let mut events = Events::open(addr, &cookie).await;
    let chat = app.ws.chats[app.ws.active].id;
    let card = app.state().gate.approvals[0].id;
    let anchor = format!("id=\"card-{chat}-{card}\"");
    let at = events.until(0, "text/event-stream").await;
    let at = events.until(at, &anchor).await;
    // Answered in the terminal: the next event has no card, and says who.
    key(&mut app, Action::ch('1'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let end = events.until(at, "by user").await;
    let event = &events.seen[at..end];
    assert!(!event.contains(&anchor), "{event}");
    assert!(event.contains("data: "), "{event}");
    // A new card comes: it is on the stream.
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let next = app.state().gate.approvals[0].id;
    let at = events
        .until(end, &format!("id=\"card-{chat}-{next}\""))
        .await;
    // Withdrawn (the turn cancelled): gone from the stream at once.
    key(&mut app, Action::Cancel);
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let end = events.until(at, "No card waits").await;
    assert!(
        !events.seen[at..end].contains(&format!("id=\"card-{chat}-{next}\"")),
        "{}",
        &events.seen[at..end]
    );
    // `/remote` again: the session is out, and so is its stream.
    app.start_remote(localhost()).expect("rotates");
    assert!(events.ends().await, "the stream of a rotated session ends");
    app.shutdown().await;
}

/// One request a fake ntfy server took: its head and body; it answers 200.
pub(crate) async fn take_post(listener: &tokio::net::TcpListener) -> (String, String) {
    let (mut stream, _) = tokio::time::timeout(GUARD, listener.accept())
        .await
        .expect("a POST comes")
        .expect("accept");
    let mut raw = Vec::new();
    let (head, body) = loop {
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "the request ended early");
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length {
                break (head.to_string(), body.to_string());
            }
        }
    };
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        .await
        .expect("answer");
    (head, body)
}

#[tokio::test]
async fn a_card_left_waiting_is_told_to_notify_url_once_without_its_content() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let topic = format!("http://{}/warden-topic", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    app.set_remote_notify(warden::remote::Notify {
        url: warden::remote::NotifyUrl::parse(&topic).unwrap(),
        after: Duration::ZERO,
    });
    let url = app.start_remote(localhost()).expect("the server starts");
    let addr = app.remote_addr().unwrap();
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let (head, body) = take_post(&listener).await;
    assert!(head.starts_with("POST /warden-topic HTTP/1.1"), "{head}");
    let head_lower = head.to_ascii_lowercase();
    assert!(head_lower.contains("title: warden: a card waits"), "{head}");
    let link = format!("http://{addr}/");
    assert!(head_lower.contains(&format!("click: {link}")), "{head}");
    assert!(body.contains(&link), "{body}");
    // Nothing of the card leaves the machine: not its title, command,
    // paths or diff, and not the URL's token.
    let approval = &app.state().gate.approvals[0];
    let mut secrets = vec![
        approval.title(),
        url.split_once("?t=").unwrap().1.to_string(),
    ];
    secrets.extend(approval.view.locations.iter().cloned());
    secrets.extend(approval.view.diff_paths.iter().cloned());
    for content in approval.request.fields.content.as_deref().unwrap_or(&[]) {
        if let warden::model::ToolContent::Diff { new, .. } = content {
            secrets.extend(new.lines().filter(|l| l.len() > 3).map(str::to_string));
        }
    }
    assert!(secrets.len() >= 3, "{secrets:?}");
    let sent = format!("{head}\n{body}");
    for secret in &secrets {
        assert!(!sent.contains(secret.as_str()), "{secret:?} sent: {sent}");
    }
    // Once per card: the page republished (a new token) while the card
    // still waits sends nothing more...
    app.start_remote(localhost()).expect("rotates");
    let more = tokio::time::timeout(Duration::from_millis(500), listener.accept()).await;
    assert!(more.is_err(), "a card was told twice");
    // ...and the next card gets its own POST.
    key(&mut app, Action::ch('1'));
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let (head, _) = take_post(&listener).await;
    assert!(head.starts_with("POST /warden-topic"), "{head}");
    let more = tokio::time::timeout(Duration::from_millis(500), listener.accept()).await;
    assert!(more.is_err(), "a card was told twice");
    app.shutdown().await;
}

#[tokio::test]
async fn a_notify_url_warden_cannot_use_is_said_in_red_not_dropped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    let settings = warden::settings::RemoteSettings {
        notify_url: Some("ftp://ntfy.sh/warden".into()),
        public_url: Some("box.tailnet.ts.net".into()),
        ..Default::default()
    };
    app.set_remote_settings(&settings);
    let errors: Vec<String> = app
        .state()
        .session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            warden::state::EntryKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|m| m.contains("notify_url must start with http:// or https://")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("public_url must start with http:// or https://")),
        "{errors:?}"
    );
    app.shutdown().await;
}

//! The HTTP server: hyper's HTTP/1.1 on warden's runtime, bound to
//! 127.0.0.1 unless the settings say otherwise.
//!
//! Security: the URL's token (128 random bits, compared in constant time)
//! is good once: it is exchanged for an HttpOnly, SameSite=Strict session
//! cookie, and the URL then no longer opens anything. A wrong token is
//! answered after a delay that grows with each failure; nothing locks, so
//! the right token always gets in (the agent runs on this machine and can
//! reach the port: a lockout would be its way to shut the user out). Every change is a POST carrying a CSRF token the page
//! was served with; a GET never answers. Every reply carries a CSP that
//! forbids frames and anything from outside, and every script but the
//! page's own few lines (by a nonce), which follow `/events`: a server-sent
//! event stream of the cards, re-rendered whenever they change, that ends
//! when the session does.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::token::Token;
use super::{ARMING, Command, Snapshot, page};
use crate::policy::Mode;

/// How long the first wrong token waits for its answer; each further one
/// waits twice as long as the one before, up to [`WRONG_DELAY_MAX`].
const WRONG_DELAY: Duration = Duration::from_millis(50);
/// The longest a wrong token waits.
const WRONG_DELAY_MAX: Duration = Duration::from_secs(2);
/// Failures older than this are forgotten.
const WRONG_FORGOTTEN: Duration = Duration::from_secs(600);
/// CSRF tokens kept valid (one per page served).
const CSRF_KEPT: usize = 32;
/// The largest form body read.
const BODY_LIMIT: usize = 16 * 1024;
/// The name of the session cookie.
const COOKIE: &str = "warden_session";
/// How often an idle event stream says it is still there (a closed one is
/// then noticed and dropped).
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The headers every reply carries.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
frame-ancestors 'none'; base-uri 'none'";

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    /// The port asked and the ones after it are all taken (other wardens).
    #[error(
        "cannot listen on {0}: it and the {1} ports after it are taken (--remote-port picks another)"
    )]
    Taken(SocketAddr, u16),
    #[error("no random token: {0}")]
    Random(std::io::Error),
}

/// What the server and the runtime share.
pub(super) struct Shared {
    /// The URL's token, until its first use.
    token: Option<Token>,
    /// The session cookie's value.
    session: Token,
    /// CSRF tokens of the pages served, newest last.
    csrf: VecDeque<Token>,
    /// Wrong tokens since the last good one (or [`WRONG_FORGOTTEN`] ago).
    failures: u32,
    /// When the last wrong token came.
    last_failure: Option<Instant>,
    pub(super) snapshot: Snapshot,
    /// How long a card waits on the page before an answer takes.
    arming: Duration,
    /// Bumped at each publish: the event streams and the notifier follow it.
    pub(super) changed: tokio::sync::watch::Sender<u64>,
}

/// The running server; dropping it stops it and every connection.
pub struct Remote {
    shared: Arc<Mutex<Shared>>,
    addr: SocketAddr,
    /// The address the URL says, without its trailing `/`.
    base: String,
    task: tokio::task::JoinHandle<()>,
    /// The `notify_url` watcher, when one is set.
    notifier: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(notifier) = &self.notifier {
            notifier.abort();
        }
    }
}

type Sink = Arc<dyn Fn(Command) + Send + Sync>;

/// How many ports after the one asked a server tries when that one is
/// taken (another warden serves there), unless the port was given exactly.
pub const PORT_TRIES: u16 = 15;

/// Start the server on `listen`, or when its port is taken on the next
/// free one of the `tries` after it; answers and mode switches go to
/// `sink`. Must run inside the tokio runtime.
pub fn start(
    listen: SocketAddr,
    tries: u16,
    sink: impl Fn(Command) + Send + Sync + 'static,
) -> Result<Remote, RemoteError> {
    let std_listener = bind(listen, tries)?;
    std_listener
        .set_nonblocking(true)
        .map_err(|e| RemoteError::Bind(listen, e))?;
    let addr = std_listener
        .local_addr()
        .map_err(|e| RemoteError::Bind(listen, e))?;
    let listener = tokio::net::TcpListener::from_std(std_listener)
        .map_err(|e| RemoteError::Bind(listen, e))?;
    let shared = Arc::new(Mutex::new(Shared {
        token: Some(Token::fresh().map_err(RemoteError::Random)?),
        session: Token::fresh().map_err(RemoteError::Random)?,
        csrf: VecDeque::new(),
        failures: 0,
        last_failure: None,
        snapshot: Snapshot::default(),
        arming: ARMING,
        changed: tokio::sync::watch::channel(0).0,
    }));
    let sink: Sink = Arc::new(sink);
    let task = tokio::spawn(serve(listener, shared.clone(), sink));
    Ok(Remote {
        shared,
        addr,
        base: super::addrs::listen_base(addr),
        task,
        notifier: None,
    })
}

/// `listen`, else the first free port of the `tries` after it.
fn bind(listen: SocketAddr, tries: u16) -> Result<std::net::TcpListener, RemoteError> {
    let mut at = listen;
    for _ in 0..=tries {
        match std::net::TcpListener::bind(at) {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries > 0 => {}
            Err(e) => return Err(RemoteError::Bind(at, e)),
        }
        match at.port().checked_add(1) {
            Some(port) if listen.port() != 0 => at.set_port(port),
            _ => break,
        }
    }
    Err(RemoteError::Taken(listen, tries))
}

impl Remote {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address as the URL says it, with a trailing `/`.
    pub fn base(&self) -> String {
        format!("{}/", self.base)
    }

    /// Say `base` (`[remote] public_url`, checked, no trailing `/`) in the
    /// URL and the notification's link instead of the listening address.
    pub fn set_public_base(&mut self, base: String) {
        self.base = base;
    }

    /// The URL to open, with the token while it is unused.
    pub fn url(&self) -> String {
        let token = lock(&self.shared).token.clone();
        match token {
            Some(token) => format!("{}/?t={}", self.base, token.as_str()),
            None => self.base(),
        }
    }

    /// A new token and a new session: the old URL and every device signed
    /// in with it are out. Returns the new URL.
    pub fn rotate(&self) -> Result<String, RemoteError> {
        {
            let mut shared = lock(&self.shared);
            shared.token = Some(Token::fresh().map_err(RemoteError::Random)?);
            shared.session = Token::fresh().map_err(RemoteError::Random)?;
            shared.csrf.clear();
            // The open event streams see the session is gone, and end.
            shared.changed.send_modify(|v| *v += 1);
        }
        Ok(self.url())
    }

    /// POST to `notify.url` for each card left waiting `notify.after`
    /// (replacing an earlier watcher).
    pub fn set_notify(&mut self, notify: super::Notify) {
        if let Some(old) = self.notifier.take() {
            old.abort();
        }
        let link = self.base();
        self.notifier = Some(tokio::spawn(super::notify::watch(
            self.shared.clone(),
            notify,
            link,
        )));
    }

    /// How long a card must wait before an answer takes ([`ARMING`] unless
    /// a test says otherwise).
    pub fn set_arming(&self, arming: Duration) {
        lock(&self.shared).arming = arming;
    }

    /// Change what the page shows (`f` gets the last snapshot).
    pub fn publish(&self, f: impl FnOnce(&Snapshot) -> Snapshot) {
        let mut shared = lock(&self.shared);
        let next = f(&shared.snapshot);
        shared.snapshot = next;
        shared.changed.send_modify(|v| *v += 1);
    }
}

pub(super) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn serve(listener: tokio::net::TcpListener, shared: Arc<Mutex<Shared>>, sink: Sink) {
    // The connections live in this set: aborting the server drops them all.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                let sink = sink.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        let sink = sink.clone();
                        async move { Ok::<_, Infallible>(handle(req, &shared, &sink).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(10))
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

type Reply = Response<UnsyncBoxBody<Bytes, Infallible>>;

async fn handle(req: Request<Incoming>, shared: &Arc<Mutex<Shared>>, sink: &Sink) -> Reply {
    let path = req.uri().path().to_string();
    let query = parse_form(req.uri().query().unwrap_or(""));
    let signed_in = {
        let cookie = cookie_of(&req);
        let shared = lock(shared);
        cookie.is_some_and(|c| shared.session.matches(&c))
    };
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/") if query.contains_key("t") => exchange(shared, &query["t"]).await,
        (Method::GET, "/") if signed_in => {
            let mut shared = lock(shared);
            let (Some(csrf), Ok(nonce)) = (issue_csrf(&mut shared), Token::fresh()) else {
                return text(StatusCode::INTERNAL_SERVER_ERROR, "no random token");
            };
            let html = page::cards(
                &shared.snapshot,
                csrf.as_str(),
                shared.arming,
                nonce.as_str(),
            );
            let mut reply = html_reply(StatusCode::OK, html);
            let csp = format!(
                "{CSP}; script-src 'nonce-{}'; connect-src 'self'",
                nonce.as_str()
            );
            if let Ok(value) = HeaderValue::from_str(&csp) {
                reply
                    .headers_mut()
                    .insert(header::CONTENT_SECURITY_POLICY, value);
            }
            reply
        }
        (Method::GET, "/events") if signed_in => events(shared),
        (Method::GET, "/reason") if signed_in => {
            let (chat, card) = (number(&query, "chat"), number(&query, "card"));
            let mut shared = lock(shared);
            let found = find_card(&shared.snapshot, chat, card).and_then(|c| {
                let choice = c.summary.choices.iter().find(|x| x.needs_reason)?;
                Some((c.summary.title.clone(), *choice))
            });
            match issue_csrf(&mut shared) {
                Some(csrf) => html_reply(
                    StatusCode::OK,
                    page::reason(
                        chat.unwrap_or(0),
                        card.unwrap_or(0),
                        found
                            .as_ref()
                            .map(|(title, choice)| (title.as_str(), choice)),
                        csrf.as_str(),
                    ),
                ),
                None => text(StatusCode::INTERNAL_SERVER_ERROR, "no random token"),
            }
        }
        (Method::POST, "/answer" | "/mode") if signed_in => {
            let form = match read_form(req).await {
                Some(form) => form,
                None => return text(StatusCode::BAD_REQUEST, "bad form"),
            };
            let csrf_ok = form
                .get("csrf")
                .is_some_and(|given| lock(shared).csrf.iter().any(|t| t.matches(given)));
            if !csrf_ok {
                return text(
                    StatusCode::FORBIDDEN,
                    "stale or missing form token: reload the page",
                );
            }
            if path == "/mode" {
                post_mode(shared, sink, &form)
            } else {
                post_answer(shared, sink, &form)
            }
        }
        (_, "/answer" | "/mode") if signed_in => {
            let mut reply = text(
                StatusCode::METHOD_NOT_ALLOWED,
                "answers are POSTed from the page",
            );
            reply
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            reply
        }
        (_, "/" | "/reason" | "/answer" | "/mode" | "/events") => text(
            StatusCode::FORBIDDEN,
            "not signed in: open the URL warden showed (`/remote` in warden makes a new one)",
        ),
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}

/// `/events`: the cards as server-sent events, a whole re-render (with a
/// fresh CSRF token) at each change and when a new card's arming ends.
/// The stream ends when its session does (`/remote` again, or the server
/// stops).
fn events(shared: &Arc<Mutex<Shared>>) -> Reply {
    let (session, changes) = {
        let shared = lock(shared);
        (shared.session.clone(), shared.changed.subscribe())
    };
    let stream = EventStream {
        shared: shared.clone(),
        session,
        changes,
        first: true,
        armed_at: None,
    };
    let body = futures::stream::unfold(stream, |mut stream| async move {
        let bytes = stream.next().await?;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), stream))
    });
    let mut reply = Response::new(StreamBody::new(body).boxed_unsync());
    secure_headers(&mut reply, "text/event-stream");
    reply
}

/// One page's event stream.
struct EventStream {
    shared: Arc<Mutex<Shared>>,
    /// The session it was opened in.
    session: Token,
    changes: tokio::sync::watch::Receiver<u64>,
    /// The first event is sent at once (a reconnected page catches up).
    first: bool,
    /// When the next card shown as just arrived takes answers.
    armed_at: Option<Instant>,
}

impl EventStream {
    /// The next bytes to send; `None` ends the stream.
    async fn next(&mut self) -> Option<Bytes> {
        if !self.first {
            let armed_at = self.armed_at.map(tokio::time::Instant::from_std);
            tokio::select! {
                changed = self.changes.changed() => changed.ok()?,
                _ = sleep_until(armed_at), if armed_at.is_some() => {}
                _ = tokio::time::sleep(KEEPALIVE) => {
                    let shared = lock(&self.shared);
                    return shared
                        .session
                        .matches(self.session.as_str())
                        .then(|| Bytes::from_static(b": still here\n\n"));
                }
            }
        }
        self.first = false;
        let mut shared = lock(&self.shared);
        if !shared.session.matches(self.session.as_str()) {
            return None;
        }
        let csrf = issue_csrf(&mut shared)?;
        let html = page::fragment(&shared.snapshot, csrf.as_str(), shared.arming);
        let now = Instant::now();
        self.armed_at = shared
            .snapshot
            .chats
            .iter()
            .flat_map(|c| &c.cards)
            .map(|c| c.since + shared.arming)
            .filter(|at| *at > now)
            .min();
        let mut event = String::with_capacity(html.len() + 64);
        for line in html.lines() {
            event.push_str("data: ");
            event.push_str(line);
            event.push('\n');
        }
        event.push('\n');
        Some(Bytes::from(event))
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The URL's token for the session cookie, once. The right token is
/// looked at first and never waits; a wrong one is answered after
/// [`wrong_delay`] of the failures so far.
async fn exchange(shared: &Mutex<Shared>, given: &str) -> Reply {
    let wait = {
        let mut shared = lock(shared);
        if shared.token.as_ref().is_some_and(|t| t.matches(given)) {
            return session_cookie(&mut shared);
        }
        let now = Instant::now();
        if shared
            .last_failure
            .is_some_and(|at| now.duration_since(at) > WRONG_FORGOTTEN)
        {
            shared.failures = 0;
        }
        shared.failures = shared.failures.saturating_add(1);
        shared.last_failure = Some(now);
        wrong_delay(shared.failures)
    };
    tokio::time::sleep(wait).await;
    text(
        StatusCode::FORBIDDEN,
        "wrong or used token: `/remote` in warden makes a new one",
    )
}

/// The URL's token is used: the session cookie, and the token is gone.
fn session_cookie(shared: &mut Shared) -> Reply {
    shared.token = None;
    shared.failures = 0;
    shared.last_failure = None;
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        shared.session.as_str()
    );
    let mut reply = text(StatusCode::SEE_OTHER, "signed in");
    let headers = reply.headers_mut();
    headers.insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    reply
}

/// How long the `failures`-th wrong token in a row waits for its answer.
fn wrong_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    WRONG_DELAY
        .saturating_mul(1 << doublings)
        .min(WRONG_DELAY_MAX)
}

fn post_answer(shared: &Mutex<Shared>, sink: &Sink, form: &HashMap<String, String>) -> Reply {
    let (chat, card) = (number(form, "chat"), number(form, "card"));
    let picked = form.get("pick").map_or("", String::as_str);
    let reason = form.get("reason").map_or("", String::as_str);
    let shared = lock(shared);
    let Some(found) = find_card(&shared.snapshot, chat, card) else {
        let last = shared.snapshot.decided.last().cloned().unwrap_or_default();
        return html_reply(
            StatusCode::CONFLICT,
            page::message(&format!(
                "That card no longer waits: already decided or withdrawn. Last decision: {last}"
            )),
        );
    };
    // The card's own rows say what may be picked, and what each sends.
    let Some(choice) = found.summary.choices.iter().find(|c| c.id == picked) else {
        return text(StatusCode::BAD_REQUEST, "no answer picked");
    };
    let Some(pick) = choice.answer(reason) else {
        return text(
            StatusCode::BAD_REQUEST,
            "type why the agent should not do this",
        );
    };
    if found.since.elapsed() < shared.arming {
        return html_reply(
            StatusCode::CONFLICT,
            page::message("That card just arrived: look at it, then answer."),
        );
    }
    let (Some(chat), Some(id)) = (chat, card) else {
        return text(StatusCode::BAD_REQUEST, "bad card");
    };
    sink(Command::Answer { chat, id, pick });
    see_other()
}

fn post_mode(shared: &Mutex<Shared>, sink: &Sink, form: &HashMap<String, String>) -> Reply {
    let chat = number(form, "chat");
    let mode = form
        .get("mode")
        .and_then(|m| Mode::ALL.into_iter().find(|x| x.as_str() == m));
    let known = chat.is_some_and(|c| lock(shared).snapshot.chats.iter().any(|x| x.chat == c));
    match (chat, mode) {
        (Some(chat), Some(mode)) if known => {
            sink(Command::Mode { chat, mode });
            see_other()
        }
        _ => text(StatusCode::BAD_REQUEST, "no such chat or mode"),
    }
}

fn find_card(
    snapshot: &Snapshot,
    chat: Option<u64>,
    card: Option<u64>,
) -> Option<&super::CardView> {
    let (chat, card) = (chat?, card?);
    snapshot
        .chats
        .iter()
        .find(|c| c.chat == chat)?
        .cards
        .iter()
        .find(|c| c.summary.id == card)
}

fn issue_csrf(shared: &mut Shared) -> Option<Token> {
    let token = Token::fresh().ok()?;
    shared.csrf.push_back(token.clone());
    while shared.csrf.len() > CSRF_KEPT {
        shared.csrf.pop_front();
    }
    Some(token)
}

fn number(form: &HashMap<String, String>, key: &str) -> Option<u64> {
    form.get(key)?.parse().ok()
}

fn cookie_of(req: &Request<Incoming>) -> Option<String> {
    for value in req.headers().get_all(header::COOKIE) {
        let Ok(value) = value.to_str() else { continue };
        for part in value.split(';') {
            if let Some((name, value)) = part.trim().split_once('=')
                && name == COOKIE
            {
                return Some(value.to_string());
            }
        }
    }
    None
}

async fn read_form(req: Request<Incoming>) -> Option<HashMap<String, String>> {
    let body = Limited::new(req.into_body(), BODY_LIMIT)
        .collect()
        .await
        .ok()?
        .to_bytes();
    Some(parse_form(std::str::from_utf8(&body).ok()?))
}

/// `application/x-www-form-urlencoded` (and a query string) as a map; the
/// first of a repeated key wins.
pub(super) fn parse_form(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        out.entry(decode(key)).or_insert_with(|| decode(value));
    }
    out
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn see_other() -> Reply {
    let mut reply = text(StatusCode::SEE_OTHER, "");
    reply
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    reply
}

fn text(status: StatusCode, body: &str) -> Reply {
    reply(status, "text/plain; charset=utf-8", body.to_string())
}

fn html_reply(status: StatusCode, body: String) -> Reply {
    reply(status, "text/html; charset=utf-8", body)
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *reply.status_mut() = status;
    secure_headers(&mut reply, content_type);
    reply
}

/// The type, the CSP and the other headers every reply carries.
fn secure_headers(reply: &mut Reply, content_type: &'static str) {
    let headers = reply.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_percent_and_plus_and_keep_the_first_of_a_key() {
        let form = parse_form("a=1&reason=no+way%21&a=2&bad=%zz&cut=%4");
        assert_eq!(form["a"], "1");
        assert_eq!(form["reason"], "no way!");
        assert_eq!(form["bad"], "%zz");
        assert_eq!(form["cut"], "%4");
    }

    #[test]
    fn only_a_row_the_card_offers_is_taken_and_it_sends_that_rows_answer() {
        use crate::remote::{CardView, ChatCards};
        use crate::state::Answer;
        let card = CardView {
            summary: crate::state::CardSummary {
                id: 7,
                title: "t".into(),
                kind: "execute".into(),
                command: None,
                paths: Vec::new(),
                diff: String::new(),
                reason: String::new(),
                choices: crate::state::remote_choices(crate::gate::CardKind::AgentTool),
            },
            since: Instant::now() - Duration::from_secs(60),
        };
        let shared = Mutex::new(Shared {
            token: None,
            session: Token::fresh().expect("random"),
            csrf: VecDeque::new(),
            failures: 0,
            last_failure: None,
            snapshot: Snapshot {
                chats: vec![ChatCards {
                    chat: 1,
                    label: "chat".into(),
                    agent: "demo".into(),
                    project: "~".into(),
                    mode: Mode::Default,
                    cards: vec![card],
                }],
                decided: Vec::new(),
            },
            arming: ARMING,
            changed: tokio::sync::watch::channel(0).0,
        });
        let sent = Arc::new(Mutex::new(Vec::new()));
        let into = sent.clone();
        let sink: Sink = Arc::new(move |command| into.lock().expect("sent").push(command));
        let post = |body: &str| post_answer(&shared, &sink, &parse_form(body)).status();
        // Lasting choices are the terminal's: the page's card has no such row.
        for pick in [
            "chat",
            "bypass",
            "rule",
            "all",
            "option",
            "",
            "allow-always",
        ] {
            let status = post(&format!("chat=1&card=7&pick={pick}"));
            assert_eq!(status, StatusCode::BAD_REQUEST, "{pick}");
        }
        assert_eq!(
            post("chat=1&card=7&pick=reason&reason=+"),
            StatusCode::BAD_REQUEST
        );
        assert!(sent.lock().expect("sent").is_empty());
        assert_eq!(post("chat=1&card=7&pick=deny"), StatusCode::SEE_OTHER);
        assert_eq!(
            post("chat=1&card=7&pick=reason&reason=not+now"),
            StatusCode::SEE_OTHER
        );
        let picks: Vec<Answer> = sent
            .lock()
            .expect("sent")
            .iter()
            .filter_map(|c| match c {
                Command::Answer {
                    chat: 1,
                    id: 7,
                    pick,
                } => Some(pick.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            picks,
            [Answer::Deny, Answer::DenyWithReason("not now".into())]
        );
    }

    #[test]
    fn each_wrong_token_waits_longer_up_to_a_bound() {
        assert_eq!(wrong_delay(1), WRONG_DELAY);
        assert_eq!(wrong_delay(2), WRONG_DELAY * 2);
        assert_eq!(wrong_delay(3), WRONG_DELAY * 4);
        assert_eq!(wrong_delay(40), WRONG_DELAY_MAX);
        assert_eq!(wrong_delay(u32::MAX), WRONG_DELAY_MAX);
    }
}

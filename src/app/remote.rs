//! The runtime's side of the remote server (`src/remote/`): starting it,
//! publishing the waiting cards after each pump, and turning the page's
//! answers into messages for the chats (the same path as a key press).

use std::net::SocketAddr;

use super::{App, Incoming};
use crate::policy::Mode;
use crate::remote::{ChatCards, Command, Notify, Remote, RemoteError, Snapshot};
use crate::state::{ChatId, Effect, Msg, RemoteCode, RequestId, WsEffect};

/// The decisions the page lists (newest last).
const DECIDED_KEPT: usize = 10;

/// The server, when on, and where `/remote` starts it.
#[derive(Default)]
pub(super) struct RemoteSlot {
    link: Option<RemoteLink>,
    /// `[remote] listen` (127.0.0.1:8765 when not set).
    listen: Option<SocketAddr>,
    /// A headless run's wait for an answer (`--ask-timeout`).
    ask_timeout: Option<std::time::Duration>,
    /// `[remote] notify_url` and `notify_after`.
    notify: Option<Notify>,
}

/// The running server and what it was last told.
struct RemoteLink {
    server: Remote,
    /// Per chat: its label, mode and waiting card ids as last published.
    published: Vec<(ChatId, String, Mode, Vec<RequestId>)>,
    /// Decisions since the last publish.
    decided: Vec<String>,
}

impl App {
    /// Start serving the waiting cards on `listen` (or, already serving,
    /// make a new token: the old URL and every device signed in are out).
    /// Returns the URL to open.
    pub fn start_remote(&mut self, listen: SocketAddr) -> Result<String, RemoteError> {
        if let Some(link) = &self.remote.link {
            return link.server.rotate();
        }
        let inbox = self.inbox_tx.clone();
        let server = crate::remote::start(listen, move |command| {
            let (chat, msg) = match command {
                Command::Answer { chat, id, pick } => (chat, Msg::RemoteAnswer { id, pick }),
                Command::Mode { chat, mode } => (chat, Msg::RemoteMode(mode)),
            };
            let _ = inbox.send(Incoming::Chat(chat, msg));
        })?;
        let mut server = server;
        if let Some(notify) = &self.remote.notify {
            server.set_notify(notify.clone());
        }
        let url = server.url();
        self.remote.link = Some(RemoteLink {
            server,
            published: Vec::new(),
            decided: Vec::new(),
        });
        self.publish_remote();
        Ok(url)
    }

    /// Tell `notify.url` of each card left waiting (`[remote] notify_url`),
    /// from the next start of the server on (and now, if it runs).
    pub fn set_remote_notify(&mut self, notify: Notify) {
        if let Some(link) = &mut self.remote.link {
            link.server.set_notify(notify.clone());
        }
        self.remote.notify = Some(notify);
    }

    /// Read `[remote]`: where `/remote` listens and whom it notifies; a
    /// setting that cannot be used is said in red.
    pub fn set_remote_settings(&mut self, settings: &crate::settings::RemoteSettings) {
        match settings.listen.parse::<SocketAddr>() {
            Ok(listen) => self.set_remote_listen(listen),
            Err(_) => self.handle(Msg::ErrorLine(format!(
                "remote: [remote] listen is not an address and port: {}",
                crate::sanitize::one_line(&settings.listen)
            ))),
        }
        match Notify::from_settings(settings) {
            Ok(Some(notify)) => self.set_remote_notify(notify),
            Ok(None) => {}
            Err(err) => self.handle(Msg::ErrorLine(format!("remote: {err}"))),
        }
    }

    /// Where `/remote` starts the server (`[remote] listen`).
    pub fn set_remote_listen(&mut self, listen: SocketAddr) {
        self.remote.listen = Some(listen);
    }

    /// `/remote`: start the server where the settings say, or make a new
    /// token for it.
    pub(super) fn remote_command(&mut self) {
        let listen = self
            .remote
            .listen
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8765)));
        self.start_remote_told(listen);
    }

    /// Start the server and say so: the URL (its one-time token in it) and
    /// its QR code over the screen until a key, and in the chat on screen
    /// only the address (a transcript is recorded: no token in it), in red
    /// when it listens beyond this machine.
    pub fn start_remote_told(&mut self, listen: SocketAddr) {
        let msg = match self.start_remote(listen) {
            Ok(url) => {
                if !listen.ip().is_loopback() {
                    self.handle(Msg::ErrorLine(format!(
                        "remote: listening on {listen}, beyond this machine: anyone who reaches it with the URL can answer cards"
                    )));
                }
                let qr = crate::remote::qr::lines(&url).unwrap_or_default();
                self.ws.remote_code = Some(RemoteCode { url, qr });
                Msg::Note(format!(
                    "remote: serving on {}; its URL (good once) is shown over the screen: /remote makes a new one",
                    self.remote_base().unwrap_or_default()
                ))
            }
            Err(err) => Msg::ErrorLine(format!("remote: {err}")),
        };
        self.handle(msg);
    }

    /// The server's address as a URL, without the token.
    fn remote_base(&self) -> Option<String> {
        self.remote_addr().map(|addr| format!("http://{addr}/"))
    }

    /// `warden exec --on-ask remote`: serve the cards on `listen`, each
    /// waiting at most `ask_timeout` for an answer, and tell `err` the URL
    /// (with its token) and its QR code. The run's transcript gets neither.
    pub fn start_remote_headless(
        &mut self,
        listen: SocketAddr,
        ask_timeout: std::time::Duration,
        err: &mut impl std::io::Write,
    ) -> Result<(), RemoteError> {
        let url = self.start_remote(listen)?;
        self.remote.ask_timeout = Some(ask_timeout);
        if !listen.ip().is_loopback() {
            let _ = writeln!(
                err,
                "remote: listening on {listen}, beyond this machine: anyone who reaches it with the URL can answer cards"
            );
        }
        for row in crate::remote::qr::lines(&url).unwrap_or_default() {
            let _ = writeln!(err, "{row}");
        }
        let _ = writeln!(
            err,
            "remote: answer this run's cards at {url} (each is denied after {} s without an answer)",
            ask_timeout.as_secs()
        );
        let _ = err.flush();
        Ok(())
    }

    /// How long a headless run waits for a remote answer, if it serves
    /// its cards.
    pub(super) fn remote_ask_timeout(&self) -> Option<std::time::Duration> {
        self.remote.link.as_ref().and(self.remote.ask_timeout)
    }

    /// The address the server listens on, if it runs.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote.link.as_ref().map(|l| l.server.addr())
    }

    /// The URL of the running server (with its token while unused).
    pub fn remote_url(&self) -> Option<String> {
        self.remote.link.as_ref().map(|l| l.server.url())
    }

    /// How long a card must wait before a remote answer takes (tests).
    pub fn set_remote_arming(&self, arming: std::time::Duration) {
        if let Some(link) = &self.remote.link {
            link.server.set_arming(arming);
        }
    }

    /// Stop the server (and every connection to it).
    pub fn stop_remote(&mut self) {
        self.remote.link = None;
    }

    /// Note a decision for the page ("the other side sees who decided").
    pub(super) fn remote_saw(&mut self, effect: &WsEffect) {
        let Some(link) = &mut self.remote.link else {
            return;
        };
        if let WsEffect::Chat(_, Effect::LogDecision(record)) = effect {
            link.decided.push(format!(
                "{} by {} · {}",
                record.decision.as_str(),
                record.source.as_str(),
                crate::sanitize::one_line(&record.title)
            ));
        }
    }

    /// Give the page what changed: cards, modes, labels, decisions. Cheap
    /// when nothing did (a streamed chunk).
    pub(super) fn publish_remote(&mut self) {
        let Some(link) = &mut self.remote.link else {
            return;
        };
        let now: Vec<(ChatId, String, Mode, Vec<RequestId>)> = self
            .ws
            .chats
            .iter()
            .map(|slot| {
                (
                    slot.id,
                    slot.label(),
                    slot.state.gate.mode,
                    slot.state.gate.approvals.iter().map(|a| a.id).collect(),
                )
            })
            .collect();
        if now == link.published && link.decided.is_empty() {
            return;
        }
        let decided = std::mem::take(&mut link.decided);
        let chats = &self.ws.chats;
        link.server.publish(|before| {
            let mut all = before.decided.clone();
            all.extend(decided);
            let skip = all.len().saturating_sub(DECIDED_KEPT);
            Snapshot {
                chats: chats
                    .iter()
                    .map(|slot| {
                        let old = before.chats.iter().find(|c| c.chat == slot.id);
                        ChatCards {
                            chat: slot.id,
                            label: slot.label(),
                            mode: slot.state.gate.mode,
                            cards: crate::remote::cards_of(&slot.state, old),
                        }
                    })
                    .collect(),
                decided: all.into_iter().skip(skip).collect(),
            }
        });
        link.published = now;
    }
}

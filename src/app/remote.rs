//! The runtime's side of the remote server (`src/remote/`): starting it,
//! publishing the waiting cards after each pump, and turning the page's
//! answers into messages for the chats (the same path as a key press).

use std::net::SocketAddr;

use super::{App, Incoming};
use crate::policy::Mode;
use crate::remote::{ChatCards, Command, Notify, PORT_TRIES, Remote, RemoteError, Snapshot};
use crate::state::{ChatId, Effect, Msg, RemoteCode, RequestId, WsEffect};

/// The decisions the page lists (newest last).
const DECIDED_KEPT: usize = 10;

/// The server, when on, and where `/remote` starts it.
#[derive(Default)]
pub(super) struct RemoteSlot {
    link: Option<RemoteLink>,
    /// `[remote] listen` (127.0.0.1:8765 when not set).
    listen: Option<SocketAddr>,
    /// `--remote-port`: that port or none (else a taken one moves on to
    /// the next free).
    exact_port: bool,
    /// `[remote] public_url`, checked: what the URL says instead of the
    /// listening address.
    public: Option<String>,
    /// A headless run's wait for an answer (`--ask-timeout`).
    ask_timeout: Option<std::time::Duration>,
    /// `[remote] notify_url` and `notify_after`.
    notify: Option<Notify>,
}

/// What a chat last showed on the page: label, agent, project, mode, cards.
type Published = (ChatId, [String; 3], Mode, Vec<RequestId>);

/// The running server and what it was last told.
struct RemoteLink {
    server: Remote,
    /// Per chat: its label, agent, project, mode and waiting card ids as
    /// last published.
    published: Vec<Published>,
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
        let tries = if self.remote.exact_port {
            0
        } else {
            PORT_TRIES
        };
        let server = crate::remote::start(listen, tries, move |command| {
            let (chat, msg) = match command {
                Command::Answer { chat, id, pick } => (chat, Msg::RemoteAnswer { id, pick }),
                Command::Mode { chat, mode } => (chat, Msg::RemoteMode(mode)),
            };
            let _ = inbox.send(Incoming::Chat(chat, msg));
        })?;
        let mut server = server;
        if let Some(base) = &self.remote.public {
            server.set_public_base(base.clone());
        }
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

    /// Read `[remote]`: where `/remote` listens, what its URL says and
    /// whom it notifies; a setting that cannot be used is said in red.
    pub fn set_remote_settings(&mut self, settings: &crate::settings::RemoteSettings) {
        match settings.listen.parse::<SocketAddr>() {
            Ok(listen) => self.set_remote_listen(listen),
            Err(_) => self.handle(Msg::ErrorLine(format!(
                "remote: [remote] listen is not an address and port: {}",
                crate::sanitize::one_line(&settings.listen)
            ))),
        }
        if let Some(public) = &settings.public_url {
            match crate::remote::public_base(public) {
                Ok(base) => self.set_remote_public(Some(base)),
                Err(err) => self.handle(Msg::ErrorLine(format!(
                    "remote: {err}: {}",
                    crate::sanitize::one_line(public)
                ))),
            }
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

    /// `--remote-port`: listen on this port, and only on it.
    pub fn set_remote_port(&mut self, port: u16) {
        let mut listen = self.remote_listen();
        listen.set_port(port);
        self.remote.listen = Some(listen);
        self.remote.exact_port = true;
    }

    /// What the URL says instead of the listening address (a checked
    /// `[remote] public_url`, see [`crate::remote::public_base`]).
    pub fn set_remote_public(&mut self, base: Option<String>) {
        self.remote.public = base;
    }

    /// Where the server starts: `[remote] listen` and `--remote-port`,
    /// else 127.0.0.1:8765.
    pub fn remote_listen(&self) -> SocketAddr {
        self.remote
            .listen
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8765)))
    }

    /// `/remote`: start the server where the settings say, or make a new
    /// token for it.
    pub(super) fn remote_command(&mut self) {
        self.start_remote_told(self.remote_listen());
    }

    /// What to say of where the server went beyond its URL: beyond this
    /// machine (red), another port than asked (another warden has it), and
    /// then a `public_url` that may lead elsewhere (red).
    fn remote_warnings(&self, listen: SocketAddr) -> (Vec<String>, Vec<String>) {
        let (mut red, mut notes) = (Vec::new(), Vec::new());
        let Some(addr) = self.remote_addr() else {
            return (red, notes);
        };
        if !addr.ip().is_loopback() {
            red.push(format!(
                "remote: listening on {addr}, beyond this machine: anyone who reaches it with the URL can answer cards"
            ));
        }
        if listen.port() != 0 && addr.port() != listen.port() {
            notes.push(format!(
                "remote: port {} is taken (another warden?): serving on port {} (--remote-port picks one)",
                listen.port(),
                addr.port()
            ));
            if let Some(public) = &self.remote.public {
                red.push(format!(
                    "remote: [remote] public_url says {public}: it reaches this warden only if it leads to port {}",
                    addr.port()
                ));
            }
        }
        (red, notes)
    }

    /// Start the server and say so: the URL (its one-time token in it) and
    /// its QR code over the screen until a key, and in the chat on screen
    /// only the address (a transcript is recorded: no token in it), in red
    /// when it listens beyond this machine.
    pub fn start_remote_told(&mut self, listen: SocketAddr) {
        let msg = match self.start_remote(listen) {
            Ok(url) => {
                let (red, notes) = self.remote_warnings(listen);
                for line in red {
                    self.handle(Msg::ErrorLine(line));
                }
                for line in notes {
                    self.handle(Msg::Note(line));
                }
                let qr = crate::remote::qr::lines(&url).unwrap_or_default();
                self.ws.remote_code = Some(RemoteCode { url, qr });
                let base = self.remote_base().unwrap_or_default();
                let serving = match (&self.remote.public, self.remote_addr()) {
                    (Some(_), Some(addr)) => format!("listening on {addr}, opened as {base}"),
                    _ => format!("serving on {base}"),
                };
                Msg::Note(format!(
                    "remote: {serving}; its URL (good once) is shown over the screen: /remote makes a new one"
                ))
            }
            Err(err @ RemoteError::Bind(..)) if self.remote.exact_port => Msg::ErrorLine(format!(
                "remote: {err} (--remote-port asks for that port only: pick another, or leave it out to take the next free one)"
            )),
            Err(err) => Msg::ErrorLine(format!("remote: {err}")),
        };
        self.handle(msg);
    }

    /// The page's address as the URL says it, without the token.
    pub fn remote_base(&self) -> Option<String> {
        self.remote.link.as_ref().map(|l| l.server.base())
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
        let (red, notes) = self.remote_warnings(listen);
        for line in red.iter().chain(&notes) {
            let _ = writeln!(err, "{line}");
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
        let now: Vec<Published> = self
            .ws
            .chats
            .iter()
            .map(|slot| {
                (
                    slot.id,
                    [
                        slot.label(),
                        slot.state.session.agent_name.clone(),
                        slot.state.session.cwd.clone(),
                    ],
                    slot.state.gate.mode,
                    slot.state.waiting_ids(),
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
                            agent: crate::sanitize::one_line(&slot.state.session.agent_name),
                            project: crate::sanitize::one_line(&slot.state.session.cwd),
                            mode: slot.state.gate.mode,
                            cards: crate::remote::cards_of(slot.state.card_summaries(), old),
                        }
                    })
                    .collect(),
                decided: all.into_iter().skip(skip).collect(),
            }
        });
        link.published = now;
    }
}

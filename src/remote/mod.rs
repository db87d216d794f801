//! Approve from anywhere: warden's waiting cards served over HTTP to
//! another device (a phone), answered through the same gate as a key.
//!
//! - `server.rs`: the HTTP server (hyper, HTTP/1.1) on the runtime warden
//!   already runs; its routes, the session cookie, CSRF and rate limit.
//! - `page.rs`: the server-rendered page, everything agent-written escaped.
//! - `token.rs`: random tokens and their constant-time comparison.
//! - `qr.rs`: the URL as a QR code for the terminal.
//! - `notify.rs`: a POST to `[remote] notify_url` (`http://` or, through
//!   rustls, `https://`) for a card left waiting.
//! - `addrs.rs`: the address the URL says (`[remote] public_url`, else
//!   the one listened on, a usable one for `0.0.0.0`).
//!
//! The runtime publishes a [`Snapshot`] of the waiting cards after each
//! pump; the server only reads it, and an answer goes back as a message
//! for the chat ([`crate::state::Msg::RemoteAnswer`]), so the first answer
//! wins and the decision log says `remote`.

mod addrs;
mod notify;
mod page;
pub mod qr;
mod server;
mod token;

pub use addrs::{PublicUrlError, public_base};
pub use notify::{Notify, NotifyUrl, NotifyUrlError};
pub use server::{PORT_TRIES, Remote, RemoteError, start};
pub use token::Token;

use std::time::Instant;

use crate::policy::Mode;
use crate::state::{Answer, CardSummary, ChatId, RequestId};

/// How long a card must have been on the page before a remote answer takes
/// (the key-race rule: no card is answered in the instant it appears).
pub const ARMING: std::time::Duration = std::time::Duration::from_secs(1);

/// What the page shows: every chat's waiting cards, and the last decisions.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub chats: Vec<ChatCards>,
    /// The last few decisions, newest last: `allowed by you · title`.
    pub decided: Vec<String>,
}

/// One chat's waiting cards.
#[derive(Debug, Clone)]
pub struct ChatCards {
    pub chat: ChatId,
    pub label: String,
    /// The agent's name (as it named itself, or its command).
    pub agent: String,
    /// The project: the chat's working directory as shown (`~/src/app`).
    pub project: String,
    pub mode: Mode,
    pub cards: Vec<CardView>,
}

/// One waiting card as the page shows it (plain text, escaped when drawn):
/// the state's summary of it, and when the page first had it.
#[derive(Debug, Clone)]
pub struct CardView {
    pub summary: CardSummary,
    /// When the page first had it (its arming starts then).
    pub since: Instant,
}

/// What the server asks of the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Answer {
        chat: ChatId,
        id: RequestId,
        pick: Answer,
    },
    Mode {
        chat: ChatId,
        mode: Mode,
    },
}

/// The cards of one chat as the page shows them, from the summaries the
/// state makes (`ChatState::card_summaries`); `since` of a card already
/// published is kept from `before`.
pub fn cards_of(cards: Vec<CardSummary>, before: Option<&ChatCards>) -> Vec<CardView> {
    let now = Instant::now();
    cards
        .into_iter()
        .map(|card| {
            let since = before
                .and_then(|b| b.cards.iter().find(|c| c.summary.id == card.id))
                .map_or(now, |c| c.since);
            CardView {
                summary: card,
                since,
            }
        })
        .collect()
}

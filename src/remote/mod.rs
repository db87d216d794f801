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
use crate::state::{Answer, ChatId, RequestId};

/// How long a card must have been on the page before a remote answer takes
/// (the key-race rule: no card is answered in the instant it appears).
pub const ARMING: std::time::Duration = std::time::Duration::from_secs(1);

/// The most bytes of a diff shown on the page (the rest is said as a count).
const DIFF_BYTES: usize = 16 * 1024;

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

/// One waiting card as the page shows it (plain text, escaped when drawn).
#[derive(Debug, Clone)]
pub struct CardView {
    pub id: RequestId,
    pub title: String,
    pub kind: String,
    pub command: Option<String>,
    pub paths: Vec<String>,
    pub diff: String,
    /// Why the policy left it to the user.
    pub reason: String,
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

/// The cards of one chat as the page shows them; `since` of a card already
/// published is kept from `before`.
pub fn cards_of(state: &crate::state::ChatState, before: Option<&ChatCards>) -> Vec<CardView> {
    let now = Instant::now();
    state
        .gate
        .approvals
        .iter()
        .map(|approval| {
            let since = before
                .and_then(|b| b.cards.iter().find(|c| c.id == approval.id))
                .map_or(now, |c| c.since);
            let mut paths = approval.view.locations.clone();
            for path in &approval.view.diff_paths {
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
            CardView {
                id: approval.id,
                title: approval.title(),
                kind: approval.view.kind.as_str().to_string(),
                command: approval.view.command(),
                paths,
                diff: diff_of(approval),
                reason: approval.reason.clone(),
                since,
            }
        })
        .collect()
}

/// The request's diffs as unified text, bounded.
fn diff_of(approval: &crate::state::Approval) -> String {
    let mut out = String::new();
    for content in approval.request.fields.content.as_deref().unwrap_or(&[]) {
        if let crate::model::ToolContent::Diff { path, old, new } = content {
            let old = old.as_deref().unwrap_or("");
            let diff = similar::TextDiff::from_lines(old, new.as_str());
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(path, path)
                    .to_string(),
            );
        }
    }
    if out.len() > DIFF_BYTES {
        let mut cut = DIFF_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = out.len() - cut;
        out.truncate(cut);
        out.push_str(&format!("\n… {rest} more bytes\n"));
    }
    out
}

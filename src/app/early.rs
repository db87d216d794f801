//! Updates that arrive for a session before warden knows it: an agent may
//! send one right after answering `session/new` (claude-agent-acp sends its
//! `available_commands_update` so), and that notification can overtake the
//! answer on the way to the loop. They wait here, bounded, until the session
//! opens on the same agent process.

use std::collections::VecDeque;

use super::App;
use crate::model::SessionUpdate;
use crate::state::{ChatId, Msg};

/// Updates kept for sessions not known yet (the oldest go first).
const EARLY_UPDATES: usize = 64;

/// The updates waiting, with the agent process and session they are for.
pub(super) type Early = VecDeque<(u64, String, SessionUpdate)>;

impl App {
    /// Keep an update for a session not known yet.
    pub(super) fn keep_early(&mut self, key: u64, session_id: String, update: SessionUpdate) {
        if self.early.len() == EARLY_UPDATES {
            self.early.pop_front();
        }
        self.early.push_back((key, session_id, update));
    }

    /// A session opened: give its chat what arrived for it before.
    pub(super) fn replay_early(&mut self, key: u64, session_id: &str, chat: ChatId) {
        let (mine, rest): (Early, Early) = std::mem::take(&mut self.early)
            .into_iter()
            .partition(|(k, s, _)| *k == key && s == session_id);
        self.early = rest;
        for (_, _, update) in mine {
            self.send_chat(chat, Msg::Update(update));
        }
    }
}

//! What warden records, as plain data: a logged permission decision and a
//! past chat as the picker lists it. The IO that writes and reads them lives
//! in `decision_log` and `chats`; the state uses these types without it.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// One decision, as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// RFC 3339 UTC time of the decision.
    pub time: String,
    pub agent: String,
    pub session: String,
    /// warden's chat id (one per TUI or exec run).
    pub chat: String,
    pub request_id: u64,
    pub tool_call_id: String,
    pub title: String,
    pub kind: String,
    pub category: String,
    pub mode: String,
    /// `allowed`, `denied` or `cancelled`.
    pub decision: String,
    pub option_id: Option<String>,
    pub option_kind: Option<String>,
    /// plan / rule / bypass / auto / chat grant / read / user, or stale for
    /// a card answered `cancelled` because it went stale (turn cancelled or
    /// ended, tool call finished, agent exited, warden quitting).
    pub source: String,
    pub reason: String,
}

/// A past chat as the picker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSummary {
    /// The chat's id (its file name), for [`crate::chats::ChatStore::load`].
    pub chat_id: String,
    pub agent: String,
    /// The latest session of the chat.
    pub session_id: String,
    pub cwd: PathBuf,
    /// The last title line, else the first line of the first user message.
    pub title: Option<String>,
    /// The last mode line, if any.
    pub mode: Option<String>,
    /// When the record was last written.
    pub updated: SystemTime,
    /// How many transcript entries the record holds.
    pub entries: usize,
}

/// The `chat_id` prefix of a session only its agent knows (from `session/list`).
pub(crate) const LISTED: &str = "session:";

impl ChatSummary {
    /// Whether this is a session the agent listed rather than a record.
    pub fn is_agent_listed(&self) -> bool {
        self.chat_id.starts_with(LISTED)
    }
}

/// The chats whose title, agent or cwd contain `query` (case-insensitive);
/// all of them for a blank query.
pub fn filter<'a>(summaries: &'a [ChatSummary], query: &str) -> Vec<&'a ChatSummary> {
    let query = query.trim().to_lowercase();
    summaries
        .iter()
        .filter(|chat| {
            query.is_empty()
                || chat.chat_id.to_lowercase() == query
                || chat
                    .title
                    .as_deref()
                    .is_some_and(|t| t.to_lowercase().contains(&query))
                || chat.agent.to_lowercase().contains(&query)
                || chat.cwd.to_string_lossy().to_lowercase().contains(&query)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A line as warden writes it to the decision log reads back into the
    /// same record and is written again byte for byte.
    #[test]
    fn a_logged_decision_line_round_trips() {
        let line = r#"{"time":"2026-11-23T19:38:10Z","agent":"claude","session":"s-1","chat":"c-1","request_id":7,"tool_call_id":"toolu_1","title":"cargo test","kind":"execute","category":"execute","mode":"default","decision":"allowed","option_id":"allow","option_kind":"allow_once","source":"user","reason":"approved by you"}"#;
        let record: DecisionRecord = serde_json::from_str(line).unwrap();
        assert_eq!(record.source, "user");
        assert_eq!(record.decision, "allowed");
        assert_eq!(serde_json::to_string(&record).unwrap(), line);
    }
}

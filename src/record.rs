//! What warden records, as plain data: a logged permission decision, a past
//! chat as the picker lists it, and the lines of a chat's record (its
//! header, its entries, its title, mode and session lines). The IO that
//! writes and reads them lives in `decision_log` and `chats`; the state
//! uses these types without it (`state/record.rs` says which lines a chat
//! appends).

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::model::{PlanEntry, ToolCall};
use crate::policy::Source;
use crate::state::{EntryKind, ToolEntry, ToolState};

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
    pub decision: Verdict,
    pub option_id: Option<String>,
    pub option_kind: Option<String>,
    /// Who or what answered: plan / rule / bypass / auto / chat grant / read
    /// / user, or stale for a card answered `cancelled` because it went stale
    /// (turn cancelled or ended, tool call finished, agent exited, warden
    /// quitting), protected or safety for a refusal whatever the mode.
    pub source: Answerer,
    pub reason: String,
    /// The chat's working directory: the project it was asked in (`warden
    /// log`'s project column). Empty in records of older wardens.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cwd: String,
}

/// How a request was answered, as the log's `decision` field spells it.
///
/// A value this warden does not know (a newer warden's log) is kept as
/// [`Verdict::Other`], so reading an old or newer log never fails on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Verdict {
    /// An allow option was sent.
    Allowed,
    /// A reject option was sent (or the request was refused).
    Denied,
    /// The request was answered `cancelled`.
    Cancelled,
    /// A value this warden does not know, kept as written.
    Other(String),
}

impl Verdict {
    /// The name in the log and in `warden log`.
    pub fn as_str(&self) -> &str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Denied => "denied",
            Verdict::Cancelled => "cancelled",
            Verdict::Other(other) => other,
        }
    }
}

impl From<String> for Verdict {
    fn from(text: String) -> Self {
        match text.as_str() {
            "allowed" => Verdict::Allowed,
            "denied" => Verdict::Denied,
            "cancelled" => Verdict::Cancelled,
            _ => Verdict::Other(text),
        }
    }
}

/// Who or what answered a request, as the log's `source` field spells it.
///
/// A value this warden does not know is kept as [`Answerer::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Answerer {
    /// The policy or the user (see [`Source`]).
    Decided(Source),
    /// The card went stale and was answered `cancelled` by warden.
    Stale,
    /// Refused whatever the mode: the request touches one of warden's own
    /// files (settings, decision log, chat records, log).
    Protected,
    /// Refused whatever the mode for another reason of safety: a session
    /// with no turn running, a session no chat has open, a path outside
    /// the roots or one that changed under warden.
    Safety,
    /// A value this warden does not know, kept as written.
    Other(String),
}

impl Answerer {
    /// The name in the log and in `warden log`.
    pub fn as_str(&self) -> &str {
        match self {
            Answerer::Decided(source) => source.as_str(),
            Answerer::Stale => "stale",
            Answerer::Protected => "protected",
            Answerer::Safety => "safety",
            Answerer::Other(other) => other,
        }
    }
}

impl From<Source> for Answerer {
    fn from(source: Source) -> Self {
        Answerer::Decided(source)
    }
}

impl From<String> for Answerer {
    fn from(text: String) -> Self {
        const SOURCES: [Source; 9] = [
            Source::Plan,
            Source::Rule,
            Source::Bypass,
            Source::Auto,
            Source::ChatGrant,
            Source::Read,
            Source::User,
            Source::Remote,
            Source::OnAsk,
        ];
        match text.as_str() {
            "stale" => return Answerer::Stale,
            "protected" => return Answerer::Protected,
            "safety" => return Answerer::Safety,
            _ => {}
        }
        SOURCES
            .into_iter()
            .find(|s| s.as_str() == text)
            .map_or(Answerer::Other(text), Answerer::Decided)
    }
}

/// Both enums: written as their names, shown as them, compared with them.
macro_rules! named {
    ($ty:ident) => {
        impl From<$ty> for String {
            fn from(value: $ty) -> String {
                match value {
                    $ty::Other(other) => other,
                    known => known.as_str().to_string(),
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

named!(Verdict);
named!(Answerer);

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
    /// A `warden exec` run's record (marked in the picker).
    pub exec: bool,
}

/// The `chat_id` prefix of a session only its agent knows (from `session/list`).
pub(crate) const LISTED: &str = "session:";

impl ChatSummary {
    /// Whether this is a session the agent listed rather than a record.
    pub fn is_agent_listed(&self) -> bool {
        self.chat_id.starts_with(LISTED)
    }
}

/// The chats whose id starts with `query`, or whose title, agent or cwd
/// contain it (case-insensitive); all of them for a blank query.
pub fn filter<'a>(summaries: &'a [ChatSummary], query: &str) -> Vec<&'a ChatSummary> {
    let query = query.trim().to_lowercase();
    summaries
        .iter()
        .filter(|chat| {
            query.is_empty()
                || chat.chat_id.to_lowercase().starts_with(&query)
                || chat
                    .title
                    .as_deref()
                    .is_some_and(|t| t.to_lowercase().contains(&query))
                || chat.agent.to_lowercase().contains(&query)
                || chat.cwd.to_string_lossy().to_lowercase().contains(&query)
        })
        .collect()
}

/// Seconds since 1970 as UTC (year, month, day, hour, minute, second),
/// without a date crate.
pub(crate) fn civil_utc(secs: u64) -> (i64, i64, i64, u64, u64, u64) {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil-from-days (Howard Hinnant's algorithm), for days since 1970-01-01.
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (y, mo, d, h, m, s)
}

// A chat's record, line by line: `chats` writes and reads these lines on
// the disk writer; the state says which lines a chat appends
// (`state/record.rs`).

/// Line 1 of a chat record: what the chat is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatHeader {
    /// warden's id of the chat (the file's name without `.jsonl`).
    pub chat_id: String,
    /// The agent's name from the settings.
    pub agent: String,
    /// The ACP session the chat started with.
    pub session_id: String,
    /// The working directory of the session.
    pub cwd: PathBuf,
    /// RFC 3339 UTC time the chat was created.
    pub created: String,
    /// The agent's command line (program, then arguments), to start it again.
    #[serde(default)]
    pub command: Vec<String>,
    /// A `warden exec` run's record: the picker marks it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exec: bool,
}

/// A finished transcript entry as recorded: mirrors [`EntryKind`] with the
/// tool state as a string so the record stays readable and stable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordedEntry {
    /// A message the user sent.
    User { text: String },
    /// The agent's finished answer (markdown).
    Agent { text: String },
    /// The agent's finished reasoning.
    Thought { text: String },
    /// A tool call with warden's state label (`done`, `failed`, ...).
    Tool { call: Box<ToolCall>, state: String },
    /// The agent's plan as it last stood.
    Plan { entries: Vec<PlanEntry> },
    /// A neutral line from warden.
    Info { text: String },
    /// Something that went wrong, with its extra lines.
    Error {
        message: String,
        detail: Vec<String>,
    },
    /// One permission decision.
    Decision { allowed: bool, text: String },
}

impl RecordedEntry {
    /// The record of a transcript entry.
    pub(crate) fn from_kind(kind: &EntryKind) -> Self {
        match kind {
            EntryKind::User(text) => RecordedEntry::User { text: text.clone() },
            EntryKind::Agent(text) => RecordedEntry::Agent { text: text.clone() },
            EntryKind::Thought(text) => RecordedEntry::Thought { text: text.clone() },
            EntryKind::Tool(entry) => RecordedEntry::Tool {
                call: Box::new(entry.call.clone()),
                state: entry.state.label().to_string(),
            },
            EntryKind::Plan(entries) => RecordedEntry::Plan {
                entries: entries.clone(),
            },
            EntryKind::Info(text) => RecordedEntry::Info { text: text.clone() },
            EntryKind::Decision { allowed, text } => RecordedEntry::Decision {
                allowed: *allowed,
                text: text.clone(),
            },
            EntryKind::Error { message, detail } => RecordedEntry::Error {
                message: message.clone(),
                detail: detail.clone(),
            },
        }
    }

    /// The transcript entry again. A tool state warden does not know (a
    /// record from another version) reads as cancelled: the call is not
    /// running any more.
    pub fn to_kind(&self) -> EntryKind {
        match self {
            RecordedEntry::User { text } => EntryKind::User(text.clone()),
            RecordedEntry::Agent { text } => EntryKind::Agent(text.clone()),
            RecordedEntry::Thought { text } => EntryKind::Thought(text.clone()),
            RecordedEntry::Tool { call, state } => EntryKind::Tool(Box::new(ToolEntry::new(
                ToolCall::clone(call),
                parse_tool_state(state).unwrap_or(ToolState::Cancelled),
            ))),
            RecordedEntry::Plan { entries } => EntryKind::Plan(entries.clone()),
            RecordedEntry::Info { text } => EntryKind::Info(text.clone()),
            RecordedEntry::Error { message, detail } => EntryKind::Error {
                message: message.clone(),
                detail: detail.clone(),
            },
            RecordedEntry::Decision { allowed, text } => EntryKind::Decision {
                allowed: *allowed,
                text: text.clone(),
            },
        }
    }
}

/// A tool state from its label (`done`), or its snake-case name (`completed`).
pub(crate) fn parse_tool_state(text: &str) -> Option<ToolState> {
    if let Some(state) = ToolState::ALL.into_iter().find(|s| s.label() == text) {
        return Some(state);
    }
    match text {
        "awaiting_approval" => Some(ToolState::AwaitingApproval),
        "in_progress" => Some(ToolState::InProgress),
        "completed" => Some(ToolState::Completed),
        // The label of a denied call before it read "denied".
        "rejected" => Some(ToolState::Rejected),
        _ => None,
    }
}

/// One line of a chat record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// The header, line 1 only.
    Chat(ChatHeader),
    /// The chat's title changed: the agent's session title, or (with
    /// `renamed`) the name the user gave the chat, which wins over any
    /// title when the chat is listed or reopened.
    Title {
        title: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        renamed: bool,
    },
    /// warden's mode for the chat changed.
    Mode { mode: String },
    /// The chat went on in a new ACP session.
    Session { session_id: String },
    /// One finished transcript entry.
    Entry { entry: RecordedEntry },
}

impl Line {
    /// The line of one finished transcript entry.
    pub(crate) fn entry(kind: &EntryKind) -> Line {
        Line::Entry {
            entry: RecordedEntry::from_kind(kind),
        }
    }
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

    fn line(decision: &str, source: &str) -> String {
        format!(
            r#"{{"time":"2026-11-23T19:38:10Z","agent":"claude","session":"s-1","chat":"c-1","request_id":7,"tool_call_id":"toolu_1","title":"cargo test","kind":"execute","category":"execute","mode":"default","decision":"{decision}","option_id":null,"option_kind":null,"source":"{source}","reason":"r"}}"#
        )
    }

    /// Every verdict and answerer warden writes reads back as its variant
    /// and is written again byte for byte.
    #[test]
    fn every_known_verdict_and_answerer_round_trips() {
        let verdicts = [
            ("allowed", Verdict::Allowed),
            ("denied", Verdict::Denied),
            ("cancelled", Verdict::Cancelled),
        ];
        let answerers = [
            ("plan", Answerer::Decided(Source::Plan)),
            ("rule", Answerer::Decided(Source::Rule)),
            ("bypass", Answerer::Decided(Source::Bypass)),
            ("auto", Answerer::Decided(Source::Auto)),
            ("chat grant", Answerer::Decided(Source::ChatGrant)),
            ("read", Answerer::Decided(Source::Read)),
            ("user", Answerer::Decided(Source::User)),
            ("stale", Answerer::Stale),
            ("protected", Answerer::Protected),
            ("safety", Answerer::Safety),
        ];
        for (decision, verdict) in &verdicts {
            for (source, answerer) in &answerers {
                let text = line(decision, source);
                let record: DecisionRecord = serde_json::from_str(&text).unwrap();
                assert_eq!(&record.decision, verdict, "{text}");
                assert_eq!(&record.source, answerer, "{text}");
                assert_eq!(serde_json::to_string(&record).unwrap(), text);
            }
        }
    }

    /// A value this warden does not know (an older or newer log) still
    /// loads, shows as written and is written back unchanged.
    #[test]
    fn an_unknown_verdict_or_answerer_still_loads() {
        let text = line("deferred", "hook");
        let record: DecisionRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(record.decision, Verdict::Other("deferred".into()));
        assert_eq!(record.source, Answerer::Other("hook".into()));
        assert_eq!(record.decision.to_string(), "deferred");
        assert_eq!(record.source.as_str(), "hook");
        assert_eq!(serde_json::to_string(&record).unwrap(), text);
    }

    /// `decision_log::read` (what `warden log` shows) keeps an old file's
    /// lines with unknown values next to current ones.
    #[test]
    fn a_log_with_unknown_values_reads_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        let text = format!("{}\n{}\n", line("allowed", "rule"), line("maybe", "oracle"));
        std::fs::write(&path, text).unwrap();
        let records = crate::decision_log::read(&path).unwrap();
        let shown: Vec<(&str, &str)> = records
            .iter()
            .map(|r| (r.decision.as_str(), r.source.as_str()))
            .collect();
        assert_eq!(shown, [("allowed", "rule"), ("maybe", "oracle")]);
    }
}

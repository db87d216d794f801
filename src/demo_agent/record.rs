//! Session records: what another demo-agent process needs to load a session.
//!
//! Every session the agent serves is kept as one JSON file,
//! `<dir>/<session id>.json`, in the directory named by `WARDEN_DEMO_STATE`
//! (default: the platform data dir's `warden/demo-sessions/`). A record is
//! written when the session is created, after every turn and after a
//! `session/set_mode`, always atomically (a temporary file renamed over the
//! old one). `session/load` replays its `updates`; `session/list` lists the
//! records of a cwd, newest first.
//!
//! ```json
//! {
//!   "version": 1,
//!   "sessionId": "session-1",
//!   "cwd": "/work",
//!   "mode": "default",
//!   "title": "hello",
//!   "createdAt": "2025-01-02T03:04:05.678Z",
//!   "updatedAt": "2025-01-02T03:04:09.012Z",
//!   "updates": [
//!     {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hello"}},
//!     {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "..."}}
//!   ]
//! }
//! ```
//!
//! `updates` are ACP `session/update` payloads exactly as they are replayed:
//! the user's prompts as `user_message_chunk`s, then what the agent sent
//! (message and thought chunks, tool calls and their updates, plans), in
//! order. Consecutive text chunks of the same kind are stored as one.
//! Mode changes are not in `updates`: the record's `mode` is the current one.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionId, SessionInfo, SessionUpdate,
};
use serde::{Deserialize, Serialize};

/// The environment variable naming the records' directory.
pub(crate) const STATE_ENV: &str = "WARDEN_DEMO_STATE";
/// The version written into records.
const RECORD_VERSION: u32 = 1;

/// One session, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    #[serde(default = "record_version")]
    pub(crate) version: u32,
    pub(crate) session_id: SessionId,
    /// The session's working directory.
    pub(crate) cwd: PathBuf,
    /// The current mode id.
    pub(crate) mode: String,
    /// The first line of the first prompt.
    #[serde(default)]
    pub(crate) title: Option<String>,
    /// When the session was created (RFC 3339, UTC).
    pub(crate) created_at: String,
    /// When the session last changed (RFC 3339, UTC).
    pub(crate) updated_at: String,
    /// The `session/update` payloads to replay, in order.
    #[serde(default)]
    pub(crate) updates: Vec<SessionUpdate>,
    /// The `additionalDirectories` the session last opened with (only
    /// when the scenario advertises them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) additional_directories: Vec<PathBuf>,
    /// When the client sent `session/close` for it (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) closed_at: Option<String>,
}

fn record_version() -> u32 {
    RECORD_VERSION
}

impl Record {
    pub(crate) fn new(session_id: SessionId, cwd: PathBuf, mode: &str) -> Self {
        let now = now_rfc3339();
        Self {
            version: RECORD_VERSION,
            session_id,
            cwd,
            mode: mode.to_owned(),
            title: None,
            created_at: now.clone(),
            updated_at: now,
            updates: Vec::new(),
            additional_directories: Vec::new(),
            closed_at: None,
        }
    }

    /// Append an update; a text chunk that follows a text chunk of the same
    /// kind is joined to it. Mode updates are not kept (see `mode`).
    pub(crate) fn push(&mut self, update: SessionUpdate) {
        if matches!(update, SessionUpdate::CurrentModeUpdate(_)) {
            return;
        }
        if let (Some(last), Some(text)) = (self.updates.last_mut(), chunk_text(&update))
            && let Some(into) = same_kind_text(last, &update)
        {
            into.push_str(text);
            return;
        }
        self.updates.push(update);
    }

    /// What `session/list` says about this session.
    pub(crate) fn info(&self) -> SessionInfo {
        SessionInfo::new(self.session_id.clone(), self.cwd.clone())
            .title(self.title.clone())
            .updated_at(self.updated_at.clone())
    }
}

/// The text of a plain text chunk (no message id, no meta).
fn chunk_text(update: &SessionUpdate) -> Option<&str> {
    let chunk = match update {
        SessionUpdate::UserMessageChunk(chunk)
        | SessionUpdate::AgentMessageChunk(chunk)
        | SessionUpdate::AgentThoughtChunk(chunk) => chunk,
        _ => return None,
    };
    plain_text(chunk).map(|text| text.text.as_str())
}

fn plain_text(chunk: &ContentChunk) -> Option<&agent_client_protocol::v1::schema::TextContent> {
    if chunk.message_id.is_some() || chunk.meta.is_some() {
        return None;
    }
    match &chunk.content {
        ContentBlock::Text(text) if text.annotations.is_none() && text.meta.is_none() => Some(text),
        _ => None,
    }
}

/// The text of `last` to append to when `update` is a text chunk of the same kind.
fn same_kind_text<'a>(
    last: &'a mut SessionUpdate,
    update: &SessionUpdate,
) -> Option<&'a mut String> {
    let chunk = match (last, update) {
        (SessionUpdate::UserMessageChunk(chunk), SessionUpdate::UserMessageChunk(_))
        | (SessionUpdate::AgentMessageChunk(chunk), SessionUpdate::AgentMessageChunk(_))
        | (SessionUpdate::AgentThoughtChunk(chunk), SessionUpdate::AgentThoughtChunk(_)) => chunk,
        _ => return None,
    };
    plain_text(chunk)?;
    match &mut chunk.content {
        ContentBlock::Text(text) => Some(&mut text.text),
        _ => None,
    }
}

/// Where records are kept; without a directory nothing is kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    /// The directory from `WARDEN_DEMO_STATE` (in `env`, else warden's
    /// own environment), else the default one.
    pub(crate) fn dir_for(env: &[(String, String)]) -> Option<PathBuf> {
        env.iter()
            .rev()
            .find(|(name, value)| name == STATE_ENV && !value.is_empty())
            .map(|(_, value)| PathBuf::from(value))
            .or_else(|| Self::from_env().dir)
    }

    /// The directory from `WARDEN_DEMO_STATE`, else the default one.
    pub(crate) fn from_env() -> Self {
        let dir = std::env::var_os(STATE_ENV)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                directories::ProjectDirs::from("", "", "warden")
                    .map(|dirs| dirs.data_local_dir().join("demo-sessions"))
            });
        Self { dir }
    }

    #[cfg(test)]
    pub(crate) fn at(dir: &Path) -> Self {
        Self {
            dir: Some(dir.to_owned()),
        }
    }

    /// The file of session `id`; none for ids that are not plain file
    /// names (a client could send `../x`).
    fn path(&self, id: &SessionId) -> Option<PathBuf> {
        let id = id.0.as_ref();
        let plain = !id.is_empty()
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let dir = self.dir.as_ref()?;
        plain.then(|| dir.join(format!("{id}.json")))
    }

    /// Write `record` atomically: a temporary file, then a rename.
    pub(crate) fn save(&self, record: &Record) -> std::io::Result<()> {
        let Some(path) = self.path(&record.session_id) else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
        let temp = path.with_extension(format!("json.tmp-{}", std::process::id()));
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    /// The record of session `id`; `Ok(None)` when there is none.
    pub(crate) fn load(&self, id: &SessionId) -> std::io::Result<Option<Record>> {
        let Some(path) = self.path(id) else {
            return Ok(None);
        };
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let record: Record = serde_json::from_slice(&text).map_err(|error| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {error}", path.display()),
            )
        })?;
        Ok(Some(record))
    }

    /// Every readable record (of `cwd` when given), newest first.
    pub(crate) fn list(&self, cwd: Option<&Path>) -> Vec<Record> {
        let Some(entries) = self
            .dir
            .as_ref()
            .and_then(|dir| std::fs::read_dir(dir).ok())
        else {
            return Vec::new();
        };
        let mut records: Vec<Record> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .filter_map(|path| std::fs::read(path).ok())
            .filter_map(|text| serde_json::from_slice::<Record>(&text).ok())
            .filter(|record| cwd.is_none_or(|cwd| record.cwd == cwd))
            .collect();
        records.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| b.created_at.cmp(&a.created_at))
                .then_with(|| a.session_id.0.cmp(&b.session_id.0))
        });
        records
    }
}

/// The current time as RFC 3339 in UTC with milliseconds
/// (`2025-01-02T03:04:05.678Z`), so that records sort by text.
pub(crate) fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

fn rfc3339(secs: u64, millis: u32) -> String {
    let (year, month, day, h, m, s) = crate::decision_log::civil_utc(secs);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn text(update: fn(ContentChunk) -> SessionUpdate, text: &str) -> SessionUpdate {
        update(ContentChunk::new(ContentBlock::from(text)))
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_735_787_045, 678), "2025-01-02T03:04:05.678Z");
    }

    #[test]
    fn text_chunks_of_one_kind_are_joined() {
        let mut record = Record::new(SessionId::new("s"), PathBuf::from("/w"), "default");
        record.push(text(SessionUpdate::UserMessageChunk, "hi"));
        record.push(text(SessionUpdate::AgentMessageChunk, "a"));
        record.push(text(SessionUpdate::AgentMessageChunk, "b"));
        record.push(SessionUpdate::CurrentModeUpdate(
            agent_client_protocol::v1::schema::CurrentModeUpdate::new("plan"),
        ));
        record.push(text(SessionUpdate::AgentThoughtChunk, "t"));
        record.push(text(SessionUpdate::AgentMessageChunk, "c"));
        let updates = serde_json::to_value(&record.updates).unwrap();
        assert_eq!(
            updates,
            json!([
                {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}},
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ab"}},
                {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "t"}},
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "c"}},
            ])
        );
    }

    #[test]
    fn store_saves_loads_and_lists_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let mut old = Record::new(SessionId::new("old"), PathBuf::from("/w"), "plan");
        old.updated_at = "2025-01-01T00:00:00.000Z".into();
        let mut new = Record::new(SessionId::new("new"), PathBuf::from("/w"), "auto");
        new.updated_at = "2025-01-02T00:00:00.000Z".into();
        let other = Record::new(SessionId::new("other"), PathBuf::from("/x"), "default");
        for record in [&old, &new, &other] {
            store.save(record).unwrap();
        }
        assert_eq!(store.load(&SessionId::new("old")).unwrap(), Some(old));
        assert_eq!(store.load(&SessionId::new("nope")).unwrap(), None);
        assert_eq!(store.load(&SessionId::new("../old")).unwrap(), None);
        let ids: Vec<String> = store
            .list(Some(Path::new("/w")))
            .iter()
            .map(|record| record.session_id.to_string())
            .collect();
        assert_eq!(ids, ["new", "old"]);
        assert_eq!(store.list(None).len(), 3);
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|entry| {
                !entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".json")
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn without_a_directory_nothing_is_kept() {
        let store = Store::default();
        let record = Record::new(SessionId::new("s"), PathBuf::from("/w"), "default");
        store.save(&record).unwrap();
        assert_eq!(store.load(&SessionId::new("s")).unwrap(), None);
        assert!(store.list(None).is_empty());
    }
}

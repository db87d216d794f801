//! The chat record store: one JSON-lines file per chat in the platform data
//! dir, `<data dir>/warden/chats/<chat-id>.jsonl`, written as the chat goes
//! so that `warden --resume` can list and reopen past chats.
//!
//! Line 1 is the header (`{"type":"chat", ...}`); every later line is one
//! event: a title, a mode, a new session of the same chat, or one finished
//! transcript entry. Like the decision log, each line is one `write` on a file
//! opened with `O_APPEND`, so a crash loses at most the last line, and a
//! reader drops a torn last line and keeps the rest. The runtime builds the
//! [`Line`]s on its loop and writes them on its disk writer (`app/disk.rs`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::model::{PlanEntry, ToolCall};
use crate::record::LISTED;
pub use crate::record::{ChatSummary, filter};
use crate::state::{EntryKind, ToolEntry, ToolState};

/// The extension of a chat record.
const EXTENSION: &str = "jsonl";

/// Why reading or writing a chat record failed.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// The file system refused (missing dir, permissions, disk full, ...).
    #[error("chat record {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A chat id that cannot name a file in the chats dir (empty, a path
    /// separator, `..`): refused so a crafted id never escapes the dir.
    #[error("invalid chat id {0:?}")]
    InvalidId(String),
    /// The file does not start with a chat header: not a chat record, or
    /// garbage.
    #[error("{path} is not a chat record")]
    NotAChat { path: PathBuf },
    /// A line could not be encoded (a path that is not UTF-8, ...).
    #[error("cannot encode a chat record line: {0}")]
    Encode(#[from] serde_json::Error),
}

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
fn parse_tool_state(text: &str) -> Option<ToolState> {
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

/// A chat record read back whole.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedChat {
    /// Line 1 as written (its `session_id` is the first session).
    pub header: ChatHeader,
    /// The latest session of the chat.
    pub session_id: String,
    /// The last title line of the agent's, if any.
    pub title: Option<String>,
    /// The last name the user gave the chat, if any.
    pub name: Option<String>,
    /// The last mode line, if any.
    pub mode: Option<String>,
    /// The transcript entries, oldest first.
    pub entries: Vec<RecordedEntry>,
    /// Lines that did not parse and were dropped: a line torn by a crash, or
    /// one written by a newer warden.
    pub skipped: usize,
}

impl LoadedChat {
    /// The title to show: the user's name for the chat, else the last
    /// title line, else the first line of the first user message.
    pub fn display_title(&self) -> Option<String> {
        self.name
            .clone()
            .or_else(|| self.title.clone())
            .or_else(|| first_user_line(&self.entries))
    }
}

/// The first non-blank line of the first user message.
fn first_user_line(entries: &[RecordedEntry]) -> Option<String> {
    entries.iter().find_map(|entry| match entry {
        RecordedEntry::User { text } => text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(str::to_string),
        _ => None,
    })
}

/// The directory of chat records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatStore {
    dir: PathBuf,
}

impl ChatStore {
    /// A store over `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ChatStore { dir: dir.into() }
    }

    /// The default place: `<data dir>/warden/chats`.
    pub fn default_dir() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "warden").map(|d| d.data_local_dir().join("chats"))
    }

    /// The directory this store reads and writes.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a chat.
    pub(crate) fn path(&self, chat_id: &str) -> Result<PathBuf, ChatError> {
        let valid = !chat_id.is_empty()
            && chat_id != "."
            && chat_id != ".."
            && !chat_id.contains(['/', '\\', '\0']);
        if !valid {
            return Err(ChatError::InvalidId(chat_id.to_string()));
        }
        Ok(self.dir.join(format!("{chat_id}.{EXTENSION}")))
    }

    #[cfg(test)]
    /// Start the record of a new chat (with a fresh id) and write its header.
    pub(crate) fn create(
        &self,
        agent: &str,
        session_id: &str,
        cwd: &Path,
    ) -> Result<ChatWriter, ChatError> {
        let header = ChatHeader {
            chat_id: uuid::Uuid::new_v4().to_string(),
            agent: agent.to_string(),
            session_id: session_id.to_string(),
            cwd: cwd.to_path_buf(),
            created: crate::decision_log::now_rfc3339(),
            command: Vec::new(),
            exec: false,
        };
        self.create_with(header)
    }

    /// Start the record of a chat with this header (its `chat_id` names the
    /// file, which must not exist yet).
    pub(crate) fn create_with(&self, header: ChatHeader) -> Result<ChatWriter, ChatError> {
        let path = self.path(&header.chat_id)?;
        let line = encode(&Line::Chat(header.clone()))?;
        std::fs::create_dir_all(&self.dir).map_err(|source| ChatError::Io {
            path: self.dir.clone(),
            source,
        })?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|source| io_error(&path, source))?;
        let mut writer = ChatWriter { path, file };
        writer.write_line(&line)?;
        Ok(writer)
    }

    /// Go on writing an existing chat's record (a resumed chat). A line torn
    /// by a crash is closed first, so the next line starts whole.
    pub(crate) fn reopen(&self, chat_id: &str) -> Result<ChatWriter, ChatError> {
        let path = self.path(chat_id)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|source| io_error(&path, source))?;
        let torn = ends_torn(&mut file).map_err(|source| io_error(&path, source))?;
        if torn {
            file.write_all(b"\n")
                .map_err(|source| io_error(&path, source))?;
        }
        Ok(ChatWriter { path, file })
    }

    /// Every readable chat, newest first (by last write). Files that are not
    /// chat records are skipped; a missing dir is no chats.
    pub fn list(&self) -> Vec<ChatSummary> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut chats: Vec<ChatSummary> = dir
            .filter_map(Result::ok)
            .filter_map(|item| summarize(&item.path()))
            .collect();
        chats.sort_by(|a, b| {
            b.updated
                .cmp(&a.updated)
                .then_with(|| a.chat_id.cmp(&b.chat_id))
        });
        chats
    }

    /// Read one chat back whole.
    pub fn load(&self, chat_id: &str) -> Result<LoadedChat, ChatError> {
        let path = self.path(chat_id)?;
        let bytes = std::fs::read(&path).map_err(|source| io_error(&path, source))?;
        parse(&bytes).ok_or(ChatError::NotAChat { path })
    }
}

/// A session an agent listed, as a picker item.
pub(crate) fn listed_summary(agent: &str, session: crate::acp::ListedSession) -> ChatSummary {
    let updated = session
        .updated_at
        .as_deref()
        .and_then(crate::decision_log::parse_rfc3339)
        .map_or(SystemTime::UNIX_EPOCH, |secs| {
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs)
        });
    ChatSummary {
        chat_id: format!("{LISTED}{}", session.session_id),
        agent: agent.to_string(),
        session_id: session.session_id,
        cwd: session.cwd,
        title: session.title,
        mode: None,
        updated,
        entries: 0,
        exec: false,
    }
}

/// Appends events to one chat's record; each call is one line, one write.
#[derive(Debug)]
pub(crate) struct ChatWriter {
    path: PathBuf,
    file: File,
}

impl ChatWriter {
    /// The chat's id (the record's file name).
    #[cfg(test)]
    pub(crate) fn chat_id(&self) -> &str {
        self.path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default()
    }

    #[cfg(test)]
    /// The record's file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    #[cfg(test)]
    /// Record one finished transcript entry.
    pub(crate) fn append_entry(&mut self, entry: &EntryKind) -> Result<(), ChatError> {
        self.append(&Line::entry(entry))
    }

    #[cfg(test)]
    /// Record the chat's new title (the agent's).
    pub(crate) fn set_title(&mut self, title: &str) -> Result<(), ChatError> {
        self.append(&Line::Title {
            title: title.to_string(),
            renamed: false,
        })
    }

    #[cfg(test)]
    /// Record the name the user gave the chat.
    pub(crate) fn set_name(&mut self, name: &str) -> Result<(), ChatError> {
        self.append(&Line::Title {
            title: name.to_string(),
            renamed: true,
        })
    }

    #[cfg(test)]
    /// Record the chat's new mode (`plan`, `default`, `auto`).
    pub(crate) fn set_mode(&mut self, mode: &str) -> Result<(), ChatError> {
        self.append(&Line::Mode {
            mode: mode.to_string(),
        })
    }

    #[cfg(test)]
    /// Record that the chat goes on in a new session.
    pub(crate) fn set_session(&mut self, session_id: &str) -> Result<(), ChatError> {
        self.append(&Line::Session {
            session_id: session_id.to_string(),
        })
    }

    /// Append one line (the runtime's disk writer builds them on the event
    /// loop and writes them off it, see `app::disk`).
    pub(crate) fn append(&mut self, line: &Line) -> Result<(), ChatError> {
        let line = encode(line)?;
        self.write_line(&line)
    }

    fn write_line(&mut self, line: &str) -> Result<(), ChatError> {
        // One write call: O_APPEND makes it land whole at the end.
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| io_error(&self.path, source))
    }
}

fn io_error(path: &Path, source: std::io::Error) -> ChatError {
    ChatError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A line with its newline.
fn encode(line: &Line) -> Result<String, ChatError> {
    // Agent text is escaped as in the decision log: `cat` on a record shows
    // no raw C1 controls or bidi characters.
    let mut text = crate::sanitize::json(&serde_json::to_string(line)?).into_owned();
    text.push('\n');
    Ok(text)
}

/// Whether a non-empty file does not end with a newline.
fn ends_torn(file: &mut File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// A record's lines: the header, then the events that parse, and how many
/// did not. `None` when line 1 is not a header.
fn parse(bytes: &[u8]) -> Option<LoadedChat> {
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace));
    let Ok(Line::Chat(header)) = serde_json::from_slice::<Line>(lines.next()?) else {
        return None;
    };
    let mut chat = LoadedChat {
        session_id: header.session_id.clone(),
        header,
        title: None,
        name: None,
        mode: None,
        entries: Vec::new(),
        skipped: 0,
    };
    for line in lines {
        match serde_json::from_slice::<Line>(line) {
            Ok(Line::Title {
                title,
                renamed: true,
            }) => chat.name = Some(title),
            Ok(Line::Title { title, .. }) => chat.title = Some(title),
            Ok(Line::Mode { mode }) => chat.mode = Some(mode),
            Ok(Line::Session { session_id }) => chat.session_id = session_id,
            Ok(Line::Entry { entry }) => chat.entries.push(entry),
            Ok(Line::Chat(_)) | Err(_) => chat.skipped += 1,
        }
    }
    Some(chat)
}

/// The picker's view of one file, or `None` when it is not a readable record.
fn summarize(path: &Path) -> Option<ChatSummary> {
    if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
        return None;
    }
    let chat_id = path.file_stem()?.to_str()?.to_string();
    let updated = std::fs::metadata(path).ok()?.modified().ok()?;
    let chat = parse(&std::fs::read(path).ok()?)?;
    let title = chat.display_title();
    Some(ChatSummary {
        chat_id,
        agent: chat.header.agent,
        session_id: chat.session_id,
        cwd: chat.header.cwd,
        title,
        mode: chat.mode,
        updated,
        entries: chat.entries.len(),
        exec: chat.header.exec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Location, PlanStatus, ToolContent, ToolKind, WireStatus};
    use pretty_assertions::assert_eq;
    use std::time::Duration;

    fn store() -> (tempfile::TempDir, ChatStore) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ChatStore::new(dir.path().join("chats"));
        (dir, store)
    }

    fn edit_call() -> ToolCall {
        ToolCall {
            id: "call-1".into(),
            title: "Edit src/a.rs".into(),
            kind: ToolKind::Edit,
            status: WireStatus::Completed,
            content: vec![
                ToolContent::Diff {
                    path: "src/a.rs".into(),
                    old: Some("fn a() {}\n".into()),
                    new: "fn a() -> u8 { 1 }\n".into(),
                },
                ToolContent::Diff {
                    path: "src/new.rs".into(),
                    old: None,
                    new: "// new\n".into(),
                },
                ToolContent::Text {
                    text: "edited".into(),
                },
            ],
            locations: vec![Location {
                path: "src/a.rs".into(),
                line: Some(1),
            }],
            raw_input: Some(serde_json::json!({"path": "src/a.rs", "n": [1, 2]})),
            raw_output: None,
            tool_name: Some("Edit".into()),
            agent_terminals: Vec::new(),
        }
    }

    fn every_kind() -> Vec<EntryKind> {
        let mut kinds = vec![
            EntryKind::User("fix the bug\nin a.rs \"quoted\"".into()),
            EntryKind::Thought("let me look".into()),
            EntryKind::Agent("Done: **fixed**.\n\n```rust\nfn a() {}\n```".into()),
            EntryKind::Plan(vec![
                PlanEntry {
                    content: "read".into(),
                    status: PlanStatus::Completed,
                },
                PlanEntry {
                    content: "edit".into(),
                    status: PlanStatus::InProgress,
                },
            ]),
            EntryKind::Info("turn ended".into()),
            EntryKind::Decision {
                allowed: true,
                text: "Edit src/a.rs: allowed by you".into(),
            },
            EntryKind::Decision {
                allowed: false,
                text: "rm -rf: refused in Plan".into(),
            },
            EntryKind::Error {
                message: "agent exited".into(),
                detail: vec!["stderr: boom".into(), "ünïcödé ✓".into()],
            },
        ];
        for state in ToolState::ALL {
            kinds.push(EntryKind::Tool(Box::new(ToolEntry::new(
                edit_call(),
                state,
            ))));
        }
        kinds
    }

    #[test]
    fn a_rename_outlives_later_agent_titles_and_old_title_lines_still_read() {
        let (_dir, store) = store();
        let mut writer = store
            .create("demo", "s1", Path::new("/tmp/project"))
            .expect("create");
        writer
            .append_entry(&EntryKind::User("the first prompt".into()))
            .expect("entry");
        writer.set_title("agent title").expect("title");
        writer.set_name("my name").expect("name");
        writer.set_title("a later agent title").expect("title");
        let chat = store.load(writer.chat_id()).expect("load");
        assert_eq!(chat.name.as_deref(), Some("my name"));
        assert_eq!(chat.title.as_deref(), Some("a later agent title"));
        assert_eq!(chat.display_title().as_deref(), Some("my name"));
        assert_eq!(store.list()[0].title.as_deref(), Some("my name"));
        // A record of an older warden: a plain title line, no `renamed`.
        let text = std::fs::read_to_string(writer.path()).expect("read");
        assert!(text.contains(r#""renamed":true"#), "{text}");
        assert_eq!(text.matches("renamed").count(), 1, "{text}");
    }

    #[test]
    fn every_entry_kind_round_trips() {
        let (_dir, store) = store();
        let mut writer = store
            .create("demo", "s1", Path::new("/tmp/project"))
            .expect("create");
        writer.set_mode("plan").expect("mode");
        for kind in every_kind() {
            writer.append_entry(&kind).expect("append");
        }
        writer.set_title("Fix the bug").expect("title");
        writer.set_session("s2").expect("session");
        writer.set_mode("auto").expect("mode");

        let chat = store.load(writer.chat_id()).expect("load");
        assert_eq!(chat.header.chat_id, writer.chat_id());
        assert_eq!(chat.header.agent, "demo");
        assert_eq!(chat.header.session_id, "s1");
        assert_eq!(chat.header.cwd, PathBuf::from("/tmp/project"));
        assert_eq!(chat.session_id, "s2");
        assert_eq!(chat.mode.as_deref(), Some("auto"));
        assert_eq!(chat.title.as_deref(), Some("Fix the bug"));
        assert_eq!(chat.skipped, 0);
        let kinds: Vec<EntryKind> = chat.entries.iter().map(RecordedEntry::to_kind).collect();
        assert_eq!(kinds, every_kind());
    }

    #[test]
    fn the_record_reads_as_documented() {
        let (_dir, store) = store();
        let mut writer = store.create("demo", "s1", Path::new("/p")).expect("create");
        writer
            .append_entry(&EntryKind::Tool(Box::new(ToolEntry::new(
                edit_call(),
                ToolState::Completed,
            ))))
            .expect("append");
        writer.set_mode("default").expect("mode");
        let text = std::fs::read_to_string(writer.path()).expect("read");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["type"], "chat");
        assert_eq!(lines[0]["agent"], "demo");
        assert!(
            lines[0]["created"]
                .as_str()
                .is_some_and(|c| c.ends_with('Z'))
        );
        assert_eq!(lines[1]["type"], "entry");
        assert_eq!(lines[1]["entry"]["kind"], "tool");
        assert_eq!(lines[1]["entry"]["state"], "done");
        assert_eq!(lines[1]["entry"]["call"]["content"][0]["type"], "diff");
        assert_eq!(
            lines[2],
            serde_json::json!({"type": "mode", "mode": "default"})
        );
    }

    #[test]
    fn unknown_tool_state_reads_as_cancelled() {
        let entry = RecordedEntry::Tool {
            call: Box::new(edit_call()),
            state: "exploded".into(),
        };
        let EntryKind::Tool(tool) = entry.to_kind() else {
            panic!("a tool entry");
        };
        assert_eq!(tool.state, ToolState::Cancelled);
        assert_eq!(parse_tool_state("completed"), Some(ToolState::Completed));
    }

    #[test]
    fn a_torn_last_line_loses_only_that_line() {
        let (_dir, store) = store();
        let mut writer = store.create("demo", "s1", Path::new("/p")).expect("create");
        writer
            .append_entry(&EntryKind::User("hello".into()))
            .expect("append");
        writer
            .append_entry(&EntryKind::Agent("héllo wörld".into()))
            .expect("append");
        let id = writer.chat_id().to_string();
        let path = writer.path().to_path_buf();
        drop(writer);

        // A crash in the middle of a write: half of the next line, cut
        // inside a multi-byte character.
        let line = encode(&Line::Entry {
            entry: RecordedEntry::Agent {
                text: "ééééééé".into(),
            },
        })
        .expect("encode");
        let cut = line.find('é').expect("an é") + 3;
        let half = &line.as_bytes()[..cut];
        assert!(std::str::from_utf8(half).is_err(), "cut inside a character");
        let mut file = OpenOptions::new().append(true).open(&path).expect("open");
        file.write_all(half).expect("write");
        drop(file);

        let chat = store.load(&id).expect("load");
        assert_eq!(
            chat.entries,
            vec![
                RecordedEntry::User {
                    text: "hello".into()
                },
                RecordedEntry::Agent {
                    text: "héllo wörld".into()
                },
            ]
        );
        assert_eq!(chat.skipped, 1);
        let listed = store.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].entries, 2);
        assert_eq!(listed[0].title.as_deref(), Some("hello"));

        // Resuming closes the torn line: the next entry lands whole.
        let mut writer = store.reopen(&id).expect("reopen");
        writer
            .append_entry(&EntryKind::Info("resumed".into()))
            .expect("append");
        let chat = store.load(&id).expect("load");
        assert_eq!(chat.entries.len(), 3);
        assert_eq!(
            chat.entries[2],
            RecordedEntry::Info {
                text: "resumed".into()
            }
        );
        assert_eq!(chat.skipped, 1);
    }

    fn set_updated(path: &Path, secs_after_epoch: u64) {
        let file = OpenOptions::new().write(true).open(path).expect("open");
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs_after_epoch))
            .expect("set mtime");
    }

    #[test]
    fn list_is_newest_first_and_filters() {
        let (_dir, store) = store();
        assert_eq!(store.list(), Vec::new(), "no dir yet: no chats");

        let mut old = store
            .create("claude", "s-old", Path::new("/home/me/Website"))
            .expect("create");
        old.append_entry(&EntryKind::User("\n  Refactor the parser  \nplease".into()))
            .expect("append");
        old.append_entry(&EntryKind::Agent("ok".into()))
            .expect("append");
        let mut mid = store
            .create("codex", "s-mid", Path::new("/srv/api"))
            .expect("create");
        mid.set_title("Plan the migration").expect("title");
        mid.set_mode("plan").expect("mode");
        let new = store
            .create("gemini", "s-new", Path::new("/home/me/notes"))
            .expect("create");
        set_updated(old.path(), 1_000);
        set_updated(new.path(), 3_000);
        set_updated(mid.path(), 2_000);

        let listed = store.list();
        let order: Vec<&str> = listed.iter().map(|c| c.chat_id.as_str()).collect();
        assert_eq!(order, vec![new.chat_id(), mid.chat_id(), old.chat_id()]);
        assert_eq!(
            listed[2],
            ChatSummary {
                chat_id: old.chat_id().to_string(),
                agent: "claude".into(),
                session_id: "s-old".into(),
                cwd: PathBuf::from("/home/me/Website"),
                title: Some("Refactor the parser".into()),
                mode: None,
                updated: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
                entries: 2,
                exec: false,
            }
        );
        assert_eq!(listed[1].title.as_deref(), Some("Plan the migration"));
        assert_eq!(listed[1].mode.as_deref(), Some("plan"));
        assert_eq!(listed[0].title, None);

        let ids = |query: &str| -> Vec<String> {
            filter(&listed, query)
                .into_iter()
                .map(|c| c.agent.clone())
                .collect()
        };
        assert_eq!(ids(""), vec!["gemini", "codex", "claude"]);
        assert_eq!(ids("  PARSER "), vec!["claude"]);
        assert_eq!(ids("Codex"), vec!["codex"]);
        assert_eq!(ids("/home/me"), vec!["gemini", "claude"]);
        assert_eq!(ids("website"), vec!["claude"]);
        assert_eq!(ids("nothing like it"), Vec::<String>::new());
    }

    #[test]
    fn two_writers_on_two_chats_at_once() {
        let (_dir, store) = store();
        let writers: Vec<ChatWriter> = ["a", "b"]
            .iter()
            .map(|agent| store.create(agent, "s", Path::new("/p")).expect("create"))
            .collect();
        let ids: Vec<String> = writers.iter().map(|w| w.chat_id().to_string()).collect();
        let threads: Vec<_> = writers
            .into_iter()
            .map(|mut writer| {
                std::thread::spawn(move || {
                    for i in 0..300 {
                        writer
                            .append_entry(&EntryKind::Agent(format!("{i} {}", "x".repeat(3000))))
                            .expect("append");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("thread");
        }
        for (id, agent) in ids.iter().zip(["a", "b"]) {
            let chat = store.load(id).expect("load");
            assert_eq!(chat.header.agent, agent);
            assert_eq!(chat.skipped, 0);
            let numbers: Vec<usize> = chat
                .entries
                .iter()
                .map(|e| match e {
                    RecordedEntry::Agent { text } => text
                        .split(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .expect("number"),
                    other => panic!("unexpected {other:?}"),
                })
                .collect();
            assert_eq!(numbers, (0..300).collect::<Vec<_>>());
        }
    }

    #[test]
    fn two_writers_on_one_chat_keep_whole_lines() {
        let (_dir, store) = store();
        let id = store
            .create("a", "s", Path::new("/p"))
            .expect("create")
            .chat_id()
            .to_string();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let mut writer = store.reopen(&id).expect("reopen");
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        writer
                            .append_entry(&EntryKind::Info("y".repeat(5000)))
                            .expect("append");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("thread");
        }
        let chat = store.load(&id).expect("load");
        assert_eq!((chat.entries.len(), chat.skipped), (800, 0));
    }

    #[test]
    fn garbage_is_skipped_by_list_and_an_error_from_load() {
        let (_dir, store) = store();
        let good = store.create("demo", "s", Path::new("/p")).expect("create");
        let dir = store.dir();
        std::fs::write(dir.join("garbage.jsonl"), "not json at all\n{}\n").expect("write");
        std::fs::write(dir.join("empty.jsonl"), "").expect("write");
        std::fs::write(
            dir.join("headless.jsonl"),
            "{\"type\":\"mode\",\"mode\":\"auto\"}\n",
        )
        .expect("write");
        std::fs::write(dir.join("binary.jsonl"), [0xff, 0xfe, 0x00, b'\n']).expect("write");
        std::fs::write(dir.join("notes.txt"), "ignored").expect("write");
        std::fs::create_dir(dir.join("sub.jsonl")).expect("mkdir");

        let listed = store.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].chat_id, good.chat_id());

        for id in ["garbage", "empty", "headless", "binary"] {
            assert!(
                matches!(store.load(id), Err(ChatError::NotAChat { .. })),
                "{id}"
            );
        }
        assert!(matches!(
            store.load("missing"),
            Err(ChatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound
        ));
        for id in ["", "..", "../x", "a/b"] {
            assert!(
                matches!(store.load(id), Err(ChatError::InvalidId(_))),
                "{id:?}"
            );
        }
    }

    #[test]
    fn a_chat_id_is_never_reused() {
        let (_dir, store) = store();
        let first = store.create("demo", "s", Path::new("/p")).expect("create");
        let header = store.load(first.chat_id()).expect("load").header;
        assert!(matches!(
            store.create_with(header),
            Err(ChatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists
        ));
    }

    #[test]
    fn write_errors_are_returned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").expect("write");
        let store = ChatStore::new(blocker.join("chats"));
        assert!(matches!(
            store.create("demo", "s", Path::new("/p")),
            Err(ChatError::Io { .. })
        ));
    }
}

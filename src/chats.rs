//! The chat record store: one JSON-lines file per chat in the platform data
//! dir, `<data dir>/warden/chats/<chat-id>.jsonl`, written as the chat goes
//! so that `warden --resume` can list and reopen past chats.
//!
//! Line 1 is the header (`{"type":"chat", ...}`); every later line is one
//! event: a title, a mode, a new session of the same chat, or one finished
//! transcript entry. Like the decision log, each line is one `write` on a file
//! opened with `O_APPEND`, so a crash loses at most the last line, and a
//! reader drops a torn last line and keeps the rest. The lines are plain
//! data in `crate::record` (re-exported here); the state says which a chat
//! appends (`state/record.rs`), and the runtime writes them on its disk
//! writer (`app/disk.rs`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::record::LISTED;
pub(crate) use crate::record::Line;
pub use crate::record::{ChatHeader, ChatSummary, RecordedEntry, filter};

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
    pub(crate) fn append_entry(
        &mut self,
        entry: &crate::state::EntryKind,
    ) -> Result<(), ChatError> {
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
#[path = "chats_tests.rs"]
mod tests;

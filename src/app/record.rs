//! The chat's record in the data dir (`crate::chats`), its IO side: the
//! file created once the user says something, reopened or let go, and each
//! line a job for the disk writer (`disk.rs`); which lines, and when, the
//! state says (`state/record.rs`). Read back to reopen a past chat.

use super::chat::Chat;
use super::disk::{DiskQueue, Job};
use crate::chats::{ChatHeader, Line, LoadedChat};
use crate::model::{SessionInfo, SessionOrigin};
use crate::state::{ChatId, ChatState, EntryKind, Msg, RecordCursor, lines_added};

/// A past chat to reopen.
#[derive(Debug, Clone)]
pub struct ResumeChat {
    /// The chat's record; none for a session only the agent listed.
    pub chat_id: Option<String>,
    /// The session to ask the agent to load or resume.
    pub session_id: String,
    /// The saved transcript, shown when the agent cannot replay it.
    pub entries: Vec<EntryKind>,
    /// The agent's title for it.
    pub title: Option<String>,
    /// The name the user gave the chat: the reopened chat keeps it.
    pub name: Option<String>,
}

impl ResumeChat {
    /// From a loaded record.
    pub fn from_loaded(chat: &LoadedChat) -> ResumeChat {
        ResumeChat {
            chat_id: Some(chat.header.chat_id.clone()),
            session_id: chat.session_id.clone(),
            entries: chat.entries.iter().map(reopened).collect(),
            title: chat.title.clone(),
            name: chat.name.clone(),
        }
    }
}

/// A recorded entry as a reopened chat shows it: a tool call recorded
/// while still open (the chat ended mid-turn, or an older warden wrote it)
/// is not running any more, and has no result warden knows of.
fn reopened(entry: &crate::chats::RecordedEntry) -> EntryKind {
    let mut kind = entry.to_kind();
    if let EntryKind::Tool(tool) = &mut kind
        && !tool.state.is_finished()
    {
        tool.state = crate::state::ToolState::NoResult;
    }
    kind
}

/// Where the chat's record is written.
#[derive(Debug)]
pub(super) struct Record {
    /// The chat (its record's lines are queued under this id).
    chat: ChatId,
    /// The disk writer, which owns the record's file.
    disk: DiskQueue,
    /// The id of the record being written (its lines go to the writer);
    /// none before it starts, and once it stopped.
    pub(super) open: Option<String>,
    /// The record to create once the user has said something: a chat
    /// closed untouched leaves no record behind.
    pub(super) deferred: Option<ChatHeader>,
    /// What the record holds already (entries, name, title, mode).
    pub(super) cursor: RecordCursor,
    /// The session the record last named.
    pub(super) session: Option<String>,
    /// A `warden exec` run: its record says so (the picker marks it).
    pub(super) exec: bool,
}

impl Record {
    /// No record yet for `chat`; its lines will go to `disk`.
    pub(super) fn new(chat: ChatId, disk: DiskQueue) -> Record {
        Record {
            chat,
            disk,
            open: None,
            deferred: None,
            cursor: RecordCursor::default(),
            session: None,
            exec: false,
        }
    }

    /// Queue a job; a writer that is gone stops the record (one error line
    /// in `out`).
    fn send(&mut self, job: Job, out: &mut std::collections::VecDeque<Msg>) {
        if !self.disk.send(job) {
            self.open = None;
            out.push_back(Msg::ErrorLine(
                "the chat record stopped: the disk writer is gone".into(),
            ));
        }
    }

    /// The chat goes on in a new session under a new record (`/clear`):
    /// this one is let go as written.
    pub(super) fn start_over(&mut self) {
        self.close();
        *self = Record::new(self.chat, self.disk.clone());
    }

    /// Let the record's file go (the chat closed).
    pub(super) fn close(&mut self) {
        if self.open.take().is_some() {
            let _ = self.disk.send(Job::CloseRecord(self.chat));
        }
    }
}

impl Chat {
    /// A session opened: start the record, or go on with the reopened one.
    /// Returns the lines (and the saved transcript of a reopened chat) to
    /// show before the session starts; `len` is the transcript's length
    /// once what is already queued for the chat is applied. The record
    /// starts after all of that.
    pub(super) fn on_session_record(&mut self, len: usize, info: &SessionInfo) -> Vec<Msg> {
        let mut lines = Vec::new();
        if let Some(previous) = self.restarting.take() {
            // A restart: the transcript on screen already holds the session.
            let same = info.session_id == previous;
            let note = match info.origin {
                SessionOrigin::Resumed if same => "restarted: the agent continues the same session",
                SessionOrigin::Loaded if same => {
                    "restarted: the agent reloaded the same session (its replay of the turns above is not shown again)"
                }
                _ => {
                    "the agent could not continue the session (no session/resume or session/load, or it failed): \
                     this is a new session in the same directory; the agent does not remember the turns above"
                }
            };
            lines.push(Msg::Note(note.into()));
        }
        let after = |lines: &[Msg]| len + lines.iter().map(lines_added).sum::<usize>();
        if let Some(resume) = self.resume.take() {
            match info.origin {
                SessionOrigin::Loaded => {
                    lines.push(Msg::Note(
                        "reopened: the agent replayed the conversation".into(),
                    ));
                }
                SessionOrigin::Resumed => {
                    lines.push(Msg::Restored(resume.entries.clone()));
                    lines.push(Msg::Note(
                        "reopened: the agent continues the session".into(),
                    ));
                }
                SessionOrigin::New => {
                    lines.push(Msg::Restored(resume.entries.clone()));
                    lines.push(Msg::Note(
                        "the agent could not continue this chat (no session/load or session/resume, or it failed): \
                         above is the saved transcript; this is a new session in the same directory"
                            .into(),
                    ));
                }
            }
            if let Some(store) = &self.chat_store {
                match &resume.chat_id {
                    Some(chat_id) => {
                        let job = Job::ReopenRecord {
                            chat: self.record.chat,
                            store: store.clone(),
                            chat_id: chat_id.clone(),
                        };
                        self.record.open = Some(chat_id.clone());
                        self.record.send(job, &mut self.out);
                    }
                    // A session only the agent knew of: its record starts
                    // now, with what the agent replayed.
                    None => {
                        self.create_record(info);
                        self.record.session = Some(info.session_id.clone());
                        return lines;
                    }
                }
            }
            self.record.cursor.title = resume.title;
            self.record.cursor.name = resume.name;
            self.record.cursor.written = after(&lines);
            self.record.session = Some(info.session_id.clone());
            if info.session_id != resume.session_id {
                self.write_record(Line::Session {
                    session_id: info.session_id.clone(),
                });
            }
            return lines;
        }
        if self.record.open.is_some() {
            // A restart: the same session goes on, or a new one of the same chat.
            if self.record.session.as_deref() != Some(info.session_id.as_str()) {
                self.record.session = Some(info.session_id.clone());
                self.write_record(Line::Session {
                    session_id: info.session_id.clone(),
                });
            }
            return lines;
        }
        self.record.session = Some(info.session_id.clone());
        if let Some(header) = &mut self.record.deferred {
            header.session_id.clone_from(&info.session_id);
            return lines;
        }
        self.create_record(info);
        // The start-up notes are not part of the conversation.
        self.record.cursor.written = after(&lines);
        lines
    }

    /// Start this chat's record (the file is written once the user says something).
    fn create_record(&mut self, info: &SessionInfo) {
        if self.chat_store.is_none() {
            return;
        }
        let mut command = vec![self.command.program.clone()];
        command.extend(self.command.args.iter().cloned());
        let header = ChatHeader {
            exec: self.record.exec,
            chat_id: uuid::Uuid::new_v4().to_string(),
            agent: self.command.name.clone(),
            session_id: info.session_id.clone(),
            cwd: self.command.cwd.clone(),
            created: crate::decision_log::now_rfc3339(),
            command,
        };
        self.record.deferred = Some(header);
    }

    /// Append what settled since the last call (`ChatState::record_lines`:
    /// the entries, the name, the title, the mode), creating the record's
    /// file first once the user has said something. With `last`, the chat
    /// is ending: a still streaming last entry is written too.
    /// Each line is a job for the disk writer; what fails there comes back
    /// as an error line (see `App::on_disk`).
    pub(super) fn flush_record(&mut self, state: &ChatState, name: Option<&str>, last: bool) {
        if self.record.open.is_none() {
            match &self.chat_store {
                Some(store) if self.record.deferred.is_some() && state.user_spoke() => {
                    let Some(header) = self.record.deferred.take() else {
                        return;
                    };
                    self.record.open = Some(header.chat_id.clone());
                    let job = Job::CreateRecord {
                        chat: self.record.chat,
                        store: store.clone(),
                        header,
                    };
                    self.record.send(job, &mut self.out);
                    if self.record.open.is_none() {
                        return;
                    }
                }
                _ => return,
            }
        }
        for line in state.record_lines(&mut self.record.cursor, name, last) {
            self.write_record(line);
        }
    }

    /// Queue one line of the record, if it is being written.
    fn write_record(&mut self, line: Line) {
        if self.record.open.is_some() {
            let job = Job::Record {
                chat: self.record.chat,
                line,
            };
            self.record.send(job, &mut self.out);
        }
    }
}

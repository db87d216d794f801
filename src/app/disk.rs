//! Disk IO off the event loop: the chats' records, the decision log, the
//! prompt history, `/export`, the picker's list of records and the record
//! of a chat being reopened are jobs for one writer task, which runs them on
//! the blocking pool in the order they were queued (a chat's record lines
//! land in the order they were produced; a read sees the writes queued
//! before it). Queuing never waits for the disk; what comes of a job (a
//! failure, an export's outcome, the history or the records read) comes
//! back as [`Incoming::Disk`]. On quit, [`DiskWriter::finish`] waits until
//! everything queued has landed.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use tokio::sync::{mpsc, oneshot};

use super::{App, Incoming};
use crate::chats::{ChatHeader, ChatStore, ChatSummary, ChatWriter, Line, LoadedChat};
use crate::decision_log::DecisionRecord;
use crate::state::{ChatId, DraftsMsg, Msg, WsMsg};

/// At most this many queued jobs run in one trip to the blocking pool.
const BATCH: usize = 512;

/// One piece of disk IO for the writer.
#[derive(Debug)]
pub(super) enum Job {
    /// Start a chat's record: create its file with this header.
    CreateRecord {
        chat: ChatId,
        store: ChatStore,
        header: ChatHeader,
    },
    /// Go on with an existing record (a reopened chat).
    ReopenRecord {
        chat: ChatId,
        store: ChatStore,
        chat_id: String,
    },
    /// One line of a chat's record.
    Record { chat: ChatId, line: Line },
    /// The chat closed: its record's file is let go.
    CloseRecord(ChatId),
    /// One permission decision for the decision log.
    Decision {
        chat: ChatId,
        path: PathBuf,
        record: Box<DecisionRecord>,
    },
    /// Read a new chat's prompt history (after the appends queued before).
    LoadHistory {
        chat: ChatId,
        dir: PathBuf,
        cwd: PathBuf,
    },
    /// One prompt for the history file of `cwd`.
    History {
        chat: ChatId,
        dir: PathBuf,
        cwd: PathBuf,
        text: String,
    },
    /// `/export`: the chat as Markdown into `path`.
    Export {
        chat: ChatId,
        path: PathBuf,
        text: String,
    },
    /// The picker's recorded chats (the agents of `cwd` are asked for
    /// theirs once they are in).
    ListChats {
        store: ChatStore,
        cwd: Option<PathBuf>,
    },
    /// Read a record to reopen (after the lines queued before it).
    LoadChat {
        store: ChatStore,
        summary: Box<ChatSummary>,
    },
    /// Answered once every job queued before it has run.
    Barrier(oneshot::Sender<()>),
}

/// What a job sends back (an error line, an export's outcome, the history,
/// the picker's records).
#[derive(Debug)]
pub enum DiskDone {
    /// A message for the chat: a write that failed, an export's outcome,
    /// the loaded history.
    Chat(ChatId, Box<Msg>),
    /// The chat's record could not be written: it stops, and this says why.
    RecordStopped(ChatId, String),
    /// The recorded chats for the picker, and the directory whose agent
    /// sessions are listed next.
    Listed(Vec<ChatSummary>, Option<PathBuf>),
    /// A record read to reopen that chat.
    Loaded(Box<ChatSummary>, Box<Result<LoadedChat, String>>),
}

impl DiskDone {
    fn chat(chat: ChatId, msg: Msg) -> DiskDone {
        DiskDone::Chat(chat, Box::new(msg))
    }
}

/// Where jobs are queued; each chat's IO holds one (a clone).
#[derive(Debug, Clone)]
pub(super) struct DiskQueue {
    tx: mpsc::UnboundedSender<Job>,
}

impl DiskQueue {
    /// Queue a job; false when the writer is gone (it never ends while the
    /// app runs, unless it panicked).
    pub(super) fn send(&self, job: Job) -> bool {
        self.tx.send(job).is_ok()
    }
}

/// The writer task.
pub(super) struct DiskWriter {
    queue: DiskQueue,
}

impl DiskWriter {
    /// Start the writer; what jobs send back goes to `inbox`.
    pub(super) fn start(inbox: mpsc::UnboundedSender<Incoming>) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        tokio::spawn(async move {
            let mut files = Files::default();
            let mut batch = Vec::with_capacity(BATCH);
            while rx.recv_many(&mut batch, BATCH).await > 0 {
                let jobs = std::mem::take(&mut batch);
                let back = inbox.clone();
                let ran = tokio::task::spawn_blocking(move || {
                    for job in jobs {
                        files.run(job, &back);
                    }
                    files
                })
                .await;
                files = match ran {
                    Ok(files) => files,
                    Err(err) => {
                        // Its records' files are gone with it: later lines are dropped.
                        tracing::error!("the disk writer failed: {err}");
                        Files::default()
                    }
                };
            }
        });
        DiskWriter {
            queue: DiskQueue { tx },
        }
    }

    /// A queue for a chat's IO.
    pub(super) fn queue(&self) -> DiskQueue {
        self.queue.clone()
    }

    /// Queue a job (see [`DiskQueue::send`]).
    pub(super) fn send(&self, job: Job) -> bool {
        self.queue.send(job)
    }

    /// Wait until every job queued so far has run (on quit, so that no
    /// record or decision is lost).
    pub(super) async fn finish(&self) {
        let (tx, rx) = oneshot::channel();
        if self.queue.send(Job::Barrier(tx)) {
            // An error: the writer failed, and with it the rest of its queue.
            let _ = rx.await;
        }
    }
}

/// The writer's side: the open records, by chat.
#[derive(Default)]
struct Files {
    records: HashMap<ChatId, ChatWriter>,
    /// Chats whose history could not be saved (said once).
    history_failed: HashSet<ChatId>,
}

impl Files {
    fn run(&mut self, job: Job, back: &mpsc::UnboundedSender<Incoming>) {
        let done = match job {
            Job::CreateRecord {
                chat,
                store,
                header,
            } => match store.create_with(header) {
                Ok(writer) => {
                    self.records.insert(chat, writer);
                    None
                }
                Err(err) => Some(DiskDone::RecordStopped(
                    chat,
                    format!("the chat cannot be recorded: {err}"),
                )),
            },
            Job::ReopenRecord {
                chat,
                store,
                chat_id,
            } => match store.reopen(&chat_id) {
                Ok(writer) => {
                    self.records.insert(chat, writer);
                    None
                }
                Err(err) => Some(DiskDone::RecordStopped(
                    chat,
                    format!("the chat record cannot be reopened: {err}"),
                )),
            },
            Job::Record { chat, line } => {
                // None: the record stopped (and said why) or never started.
                let writer = self.records.get_mut(&chat);
                match writer.map(|w| w.append(&line)) {
                    Some(Err(err)) => {
                        self.records.remove(&chat);
                        Some(DiskDone::RecordStopped(
                            chat,
                            format!("the chat record stopped: {err}"),
                        ))
                    }
                    _ => None,
                }
            }
            Job::CloseRecord(chat) => {
                self.records.remove(&chat);
                self.history_failed.remove(&chat);
                None
            }
            Job::Decision { chat, path, record } => crate::decision_log::append(&path, &record)
                .err()
                .map(|err| {
                    let message = format!(
                        "could not append to the decision log {}: {err}",
                        path.display()
                    );
                    DiskDone::chat(chat, Msg::ErrorLine(message))
                }),
            Job::LoadHistory { chat, dir, cwd } => {
                let earlier = crate::history::load(&dir, &cwd);
                (!earlier.is_empty())
                    .then(|| DiskDone::chat(chat, Msg::Drafts(DraftsMsg::HistoryLoaded(earlier))))
            }
            Job::History {
                chat,
                dir,
                cwd,
                text,
            } => match crate::history::append(&dir, &cwd, &text) {
                Ok(()) => None,
                Err(err) => {
                    tracing::warn!(error = %err, "could not save the prompt history");
                    self.history_failed.insert(chat).then(|| {
                        DiskDone::chat(
                            chat,
                            Msg::ErrorLine(format!(
                                "the prompt history cannot be saved in {}: {err}",
                                dir.display()
                            )),
                        )
                    })
                }
            },
            Job::Export { chat, path, text } => {
                let result = crate::export::write(&path, &text)
                    .map(|()| path.display().to_string())
                    .map_err(|err| err.to_string());
                Some(DiskDone::chat(
                    chat,
                    Msg::Drafts(DraftsMsg::Exported(result)),
                ))
            }
            Job::LoadChat { store, summary } => {
                let loaded = store.load(&summary.chat_id).map_err(|err| err.to_string());
                Some(DiskDone::Loaded(summary, Box::new(loaded)))
            }
            Job::ListChats { store, cwd } => Some(DiskDone::Listed(store.list(), cwd)),
            Job::Barrier(done) => {
                let _ = done.send(());
                None
            }
        };
        if let Some(done) = done {
            // The app is gone (quitting): nobody is left to tell.
            let _ = back.send(Incoming::Disk(done));
        }
    }
}

impl App {
    /// What a disk job sent back: a message for its chat, or a record that
    /// stopped (one error line; nothing more is written for that chat).
    pub(super) fn on_disk(&mut self, done: DiskDone) {
        match done {
            DiskDone::Chat(id, msg) => self.send_chat(id, *msg),
            DiskDone::RecordStopped(id, message) => {
                if let Some(chat) = self.chats.get_mut(&id) {
                    chat.record.open = None;
                }
                self.send_chat(id, Msg::ErrorLine(message));
            }
            DiskDone::Loaded(summary, loaded) => self.reopen_loaded(&summary, *loaded),
            DiskDone::Listed(items, cwd) => {
                self.queue.push_back(WsMsg::PickerItems(items));
                self.list_sessions(cwd);
            }
        }
    }

    /// On quit, once the writer is done: the records that could not be
    /// written are marked stopped, so that no resume hint names them (the
    /// other answers are dropped; nothing applies them any more).
    pub(super) fn note_stopped_records(&mut self) {
        while let Ok(event) = self.inbox.try_recv() {
            if let Incoming::Disk(DiskDone::RecordStopped(id, _)) = event
                && let Some(chat) = self.chats.get_mut(&id)
            {
                chat.record.open = None;
            }
        }
    }

    /// Wait until every disk write queued so far has landed, then apply
    /// what came back (and any other event already waiting). For tests and
    /// tools that read the files while the app runs; the loop never calls it.
    pub async fn settle_disk(&mut self) {
        self.disk.finish().await;
        while let Some(event) = self.try_agent_event() {
            self.on_agent_event(event);
        }
    }
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "disk_attack_tests.rs"]
mod attack_tests;

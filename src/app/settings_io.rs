//! Settings writes off the event loop: one writer task takes the edits in
//! the order they were made and runs each on the blocking pool (waiting for
//! another warden's lock may take seconds); the outcome comes back as
//! [`Incoming::Settings`] and becomes messages for the chats.

use std::path::PathBuf;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{App, Incoming};
use crate::settings::{self, Edit};
use crate::state::{ChatId, Msg, SettingsEdit};

/// One settings edit for the writer.
#[derive(Debug, Clone)]
struct SettingsJob {
    /// The chat that asked for it.
    chat: ChatId,
    /// That chat's agent (chats of the same agent learn a new block name).
    agent: String,
    path: PathBuf,
    edit: Edit,
}

/// A finished settings write and what came of it.
#[derive(Debug)]
pub struct SettingsDone {
    job: SettingsJob,
    result: Result<settings::Applied, String>,
}

/// The writer task, started with the first edit.
pub(super) struct Writer {
    inbox: mpsc::UnboundedSender<Incoming>,
    running: Option<(mpsc::UnboundedSender<SettingsJob>, JoinHandle<()>)>,
}

impl Writer {
    pub(super) fn new(inbox: mpsc::UnboundedSender<Incoming>) -> Self {
        Writer {
            inbox,
            running: None,
        }
    }

    /// Queue a job; false when the writer is gone.
    fn send(&mut self, job: SettingsJob) -> bool {
        let (tx, _) = self.running.get_or_insert_with(|| {
            let (tx, mut rx) = mpsc::unbounded_channel::<SettingsJob>();
            let inbox = self.inbox.clone();
            let task = tokio::spawn(async move {
                while let Some(job) = rx.recv().await {
                    let (path, edit) = (job.path.clone(), job.edit.clone());
                    let result =
                        tokio::task::spawn_blocking(move || settings::apply_edit(&path, &edit))
                            .await
                            .map_err(|err| format!("the settings writer failed: {err}"))
                            .and_then(|result| result.map_err(|err| err.to_string()));
                    if inbox
                        .send(Incoming::Settings(Box::new(SettingsDone { job, result })))
                        .is_err()
                    {
                        break;
                    }
                }
            });
            (tx, task)
        });
        tx.send(job).is_ok()
    }

    /// Wait for the queued writes to finish (on quit, so none is lost).
    pub(super) async fn finish(&mut self) {
        if let Some((tx, task)) = self.running.take() {
            drop(tx);
            let _ = task.await;
        }
    }
}

impl App {
    /// Carry out a settings edit off the event loop (the writer waits for
    /// the lock, reads, edits and replaces the file); the outcome comes back
    /// as [`Incoming::Settings`].
    pub(super) fn edit_settings(&mut self, id: ChatId, edit: SettingsEdit) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        let Some(path) = chat.settings.path.clone() else {
            self.send_chat(
                id,
                Msg::SettingsWriteFailed("there is no settings path on this system".into()),
            );
            return;
        };
        if !chat.settings.writable {
            self.send_chat(
                id,
                Msg::SettingsWriteFailed(format!(
                    "{} did not load, and warden never writes over a file it could not read",
                    path.display()
                )),
            );
            return;
        }
        let edit = match edit {
            SettingsEdit::SetBypass { agent, value } => {
                let block = self
                    .ws
                    .chat(id)
                    .and_then(|c| c.state.session.settings_agent.as_deref());
                settings::bypass_edit(agent, value, block, chat.settings.create_as.as_ref())
            }
            SettingsEdit::AppendRule(rule) => {
                // A rule naming an agent with no block yet goes with one:
                // only a block binds a name to an agent.
                let block = self
                    .ws
                    .chat(id)
                    .and_then(|c| c.state.session.settings_agent.as_deref());
                match &chat.settings.create_as {
                    Some((name, program, args))
                        if block.is_none() && rule.agent.as_deref() == Some(name.as_str()) =>
                    {
                        Edit::AppendAgentRule {
                            rule,
                            create: (program.clone(), args.clone()),
                        }
                    }
                    _ => Edit::AppendRule(rule),
                }
            }
            SettingsEdit::RemoveRule { index, expected } => Edit::RemoveRule { index, expected },
            SettingsEdit::AllowHost { agent, host } => {
                // An agent with no block yet gets one, as for a bypass.
                let block = self
                    .ws
                    .chat(id)
                    .and_then(|c| c.state.session.settings_agent.as_deref());
                let create = match (&chat.settings.create_as, block) {
                    (Some((_, program, args)), None) => Some((program.clone(), args.clone())),
                    _ => None,
                };
                Edit::AllowHost {
                    agent,
                    host,
                    create,
                }
            }
        };
        let job = SettingsJob {
            chat: id,
            agent: chat.command.name.clone(),
            path,
            edit,
        };
        if !self.writer.send(job) {
            self.send_chat(
                id,
                Msg::SettingsWriteFailed("the settings writer is gone".into()),
            );
        }
    }

    /// A settings write finished: every chat follows the file; the one that
    /// wrote it says so (or why it could not).
    pub(super) fn on_settings_done(&mut self, done: SettingsDone) {
        let SettingsDone { job, result } = done;
        let applied = match result {
            Ok(applied) => applied,
            Err(err) => {
                self.send_chat(job.chat, Msg::SettingsWriteFailed(err));
                return;
            }
        };
        let (note, agent_block) = settings::describe_applied(&job.edit, &applied, &job.path);
        let now = applied.settings;
        let bypassed: Vec<String> = now
            .agents
            .iter()
            .filter(|(_, a)| a.bypass_permissions)
            .map(|(name, _)| name.clone())
            .collect();
        let ids: Vec<ChatId> = self.ws.chats.iter().map(|c| c.id).collect();
        for other in ids {
            let same_agent = self
                .chats
                .get(&other)
                .is_some_and(|c| c.command.name == job.agent);
            self.send_chat(
                other,
                Msg::SettingsChanged {
                    rules: now.rules.clone(),
                    bypassed: bypassed.clone(),
                    agent_block: agent_block.clone().filter(|_| same_agent),
                    note: (other == job.chat).then(|| note.clone()),
                },
            );
        }
    }
}

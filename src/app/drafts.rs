//! The runtime side of the composer's memory: the history file, `/export`,
//! the external editor and the workspace keys slash commands stand for. The
//! history and the export are jobs for the disk writer (`disk.rs`): read and
//! written off the loop, their outcome back as a message.

use super::App;
use super::disk::Job;
use crate::state::{ChatId, DraftsEffect, DraftsMsg, Msg, WsMsg};

impl App {
    /// The directory of the prompt history: beside the chat records (none
    /// when chats are not recorded, as in tests that do not ask for it).
    fn history_dir(&self, id: ChatId) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        let chat = self.chats.get(&id)?;
        let store = chat.chat_store.as_ref()?;
        Some((
            crate::history::dir_beside(store.dir()),
            chat.command.cwd.clone(),
        ))
    }

    /// Give a new chat its working directory's earlier prompts (read by
    /// the disk writer after the appends queued before; they come back as
    /// [`DraftsMsg::HistoryLoaded`]).
    pub(super) fn load_history(&mut self, id: ChatId) {
        if let Some((dir, cwd)) = self.history_dir(id) {
            // A writer that is gone: no history, as for an unreadable file.
            let _ = self.disk.send(Job::LoadHistory { chat: id, dir, cwd });
        }
    }

    /// Append to the history files the prompts each chat remembered since
    /// the last look.
    pub(super) fn flush_history(&mut self) {
        // The common case (nothing new remembered): no allocation.
        let fresh = |app: &Self, id: ChatId, remembered: u64| {
            app.history_saved.get(&id).copied().unwrap_or(0) != remembered
        };
        if !self
            .ws
            .chats
            .iter()
            .any(|slot| fresh(self, slot.id, slot.state.view.drafts.remembered))
        {
            return;
        }
        let ids: Vec<ChatId> = self.ws.chats.iter().map(|slot| slot.id).collect();
        for id in ids {
            let Some(slot) = self.ws.chat(id) else {
                continue;
            };
            let drafts = &slot.state.view.drafts;
            let saved = self.history_saved.get(&id).copied().unwrap_or(0);
            if drafts.remembered == saved {
                continue;
            }
            let fresh = usize::try_from(drafts.remembered - saved)
                .unwrap_or(usize::MAX)
                .min(drafts.history.len());
            let texts: Vec<String> = drafts.history[drafts.history.len() - fresh..].to_vec();
            self.history_saved.insert(id, drafts.remembered);
            if let Some((dir, cwd)) = self.history_dir(id) {
                for text in texts {
                    let job = Job::History {
                        chat: id,
                        dir: dir.clone(),
                        cwd: cwd.clone(),
                        text,
                    };
                    if !self.disk.send(job) {
                        tracing::warn!("the disk writer is gone: a prompt is not saved");
                    }
                }
            }
        }
    }

    /// Run one of the composer's effects.
    pub(super) fn run_drafts(&mut self, id: ChatId, effect: DraftsEffect) {
        match effect {
            DraftsEffect::OpenEditor(text) => self.editor = Some((id, text)),
            DraftsEffect::Login(method) => self.login = Some((id, method)),
            DraftsEffect::Remote => self.remote_command(),
            DraftsEffect::Export(name) => match self.export(id, name.as_deref()) {
                // The file is written off the loop; the outcome comes back.
                Ok(job) => {
                    if !self.disk.send(job) {
                        let result = Err("the disk writer is gone".to_string());
                        self.send_chat(id, Msg::Drafts(DraftsMsg::Exported(result)));
                    }
                }
                Err(why) => self.send_chat(id, Msg::Drafts(DraftsMsg::Exported(Err(why)))),
            },
            DraftsEffect::Workspace(action) => self.queue.push_back(WsMsg::Action(action)),
            DraftsEffect::ListFiles => {
                let Some(chat) = self.chats.get(&id) else {
                    return;
                };
                let cwd = chat.command.cwd.clone();
                let protected = chat.roots.protected().clone();
                let inbox = self.inbox_tx.clone();
                std::thread::spawn(move || {
                    let files = crate::mention::list_files(&cwd, &protected);
                    let _ = inbox.send(super::Incoming::Chat(
                        id,
                        Msg::Drafts(DraftsMsg::Files(files)),
                    ));
                });
            }
        }
    }

    /// The export job: the chat as Markdown and the file it goes to.
    fn export(&self, id: ChatId, name: Option<&str>) -> Result<Job, String> {
        let chat = self.chats.get(&id).ok_or("the chat is gone")?;
        let slot = self.ws.chat(id).ok_or("the chat is gone")?;
        let entries: Vec<_> = slot
            .state
            .session
            .transcript
            .entries()
            .iter()
            .map(|e| e.kind.clone())
            .collect();
        let title = slot.label();
        let text = crate::export::markdown(&title, &entries);
        // Named by the id `warden --resume` takes, once the chat is recorded.
        let path = crate::export::target(
            &chat.command.cwd,
            name,
            chat.chat_store.as_ref().map(crate::chats::ChatStore::dir),
            &title,
            chat.record.open.as_deref(),
        )
        .map_err(|e| e.to_string())?;
        Ok(Job::Export {
            chat: id,
            path,
            text,
        })
    }

    /// The files a prompt `@`-mentions, as blocks to send along.
    pub(super) fn mention_blocks(
        &self,
        chat: &super::chat::Chat,
        text: &str,
    ) -> Vec<crate::model::PromptBlock> {
        let abilities = self
            .agents
            .get(&chat.command.name)
            .and_then(|slot| slot.abilities);
        let takes = crate::mention::Takes {
            embedded: abilities.is_some_and(|a| a.embedded_context),
            image: abilities.is_some_and(|a| a.image),
        };
        crate::mention::blocks(&chat.command.cwd, &chat.roots, text, takes)
    }

    /// The terminal login to run, once asked (`/login`): the chat, its
    /// agent's command and the method named. The TUI suspends the screen,
    /// runs it ([`crate::acp::login`]) and calls [`App::login_done`].
    pub fn take_login(&mut self) -> Option<(ChatId, crate::acp::AgentCommand, Option<String>)> {
        let (id, method) = self.login.take()?;
        let command = self.chats.get(&id)?.command.clone();
        Some((id, command, method))
    }

    /// The sandbox of a chat's agent, for its terminal login.
    pub fn login_sandbox(&self, id: ChatId) -> Option<crate::sandbox::Profile> {
        self.chats.get(&id)?.sandbox.clone()
    }

    /// The terminal login ended: say how, and start the agent again (its
    /// sessions open anew, signed in).
    pub fn login_done(&mut self, id: ChatId, result: Result<i32, String>) {
        match result {
            Ok(0) => {
                self.send_chat(
                    id,
                    Msg::Note("the login finished: restarting the agent".into()),
                );
                self.send_chat(id, Msg::Restart);
            }
            Ok(code) => self.send_chat(
                id,
                Msg::ErrorLine(format!("the login exited with status {code}")),
            ),
            Err(message) => self.send_chat(id, Msg::ErrorLine(message)),
        }
        self.pump();
    }

    /// The message to open in the external editor, once asked (Ctrl-X):
    /// the TUI suspends the screen, runs it and calls [`App::editor_done`].
    pub fn take_editor(&mut self) -> Option<(ChatId, String)> {
        self.editor.take()
    }

    /// The external editor closed.
    pub fn editor_done(&mut self, id: ChatId, result: Result<String, String>) {
        self.send_chat(id, Msg::Drafts(DraftsMsg::Edited(result)));
        self.pump();
    }
}

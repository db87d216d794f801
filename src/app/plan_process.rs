//! Plan holds at the kernel level: a chat in Plan is served by an agent
//! process whose workspace is read-only (its sandbox profile's
//! `read_only`). Agent processes are keyed by the agent's name and that
//! profile ([`slot_key`]); when a chat enters or leaves Plan between turns,
//! it moves to the process with the other rules, continuing its session
//! there (`session/resume`, else `session/load`), once the mode has
//! settled (`ChatState::mode_settled`: cycling through Plan moves nothing)
//! or at once when a message is sent meanwhile (the state holds it until
//! the chat is on the new process). Where the agent can do
//! neither, the chat asks ([`Msg::StuckMove`]): a fresh session on the
//! other process, with the transcript kept on screen, or staying put. The
//! question is asked again the next time the mode and the process part.

use std::time::Duration;

use super::App;
use super::chat::Chat;
use crate::policy::Mode;
use crate::sandbox::SandboxMode;
use crate::state::process_move::StuckMove;
use crate::state::{ChatId, Msg};

/// The key of the agent process that serves `name` with the workspace
/// read-only or not.
pub(super) fn slot_key(name: &str, read_only: bool) -> String {
    if read_only {
        format!("{name} (plan)")
    } else {
        name.to_string()
    }
}

impl Chat {
    /// The chat goes on an agent process with the workspace read-only or
    /// not: the profile that process gets (none without a sandbox); the
    /// footer's badge follows.
    pub(super) fn take_rules(&mut self, read_only: bool) -> Option<crate::sandbox::Profile> {
        self.read_only = read_only;
        let follows_plan = self
            .sandbox
            .as_ref()
            .is_some_and(|p| p.mode == SandboxMode::WorkspaceWrite);
        self.out.push_back(Msg::ProcessRules {
            read_only,
            follows_plan,
        });
        let profile = self.sandbox.as_ref().map(|profile| {
            if read_only {
                profile.read_only()
            } else {
                profile.clone()
            }
        })?;
        self.out
            .push_back(Msg::Sandbox(crate::sandbox::badge_of(&profile)));
        self.process_sandbox = Some(profile.clone());
        Some(profile)
    }
}

impl App {
    /// Whether chat `id` should run on a read-only process now: it is in
    /// Plan and its sandbox would otherwise let it write the workspace.
    pub(super) fn wants_read_only(&self, id: ChatId) -> bool {
        let plan = self
            .ws
            .chat(id)
            .is_some_and(|slot| slot.state.gate.mode == Mode::Plan);
        let writable = self
            .chats
            .get(&id)
            .and_then(|c| c.sandbox.as_ref())
            .is_some_and(|p| p.mode == SandboxMode::WorkspaceWrite);
        plan && writable
    }

    /// Move every idle chat whose mode no longer fits its process's rules
    /// to the process with the other rules. Returns whether it queued
    /// anything.
    pub(super) fn follow_plan(&mut self) -> bool {
        // A chat whose mode fits its process again is asked again the next
        // time they part.
        let fitting: Vec<ChatId> = self
            .chats
            .iter()
            .filter(|(id, chat)| chat.plan_stuck && chat.read_only == self.wants_read_only(**id))
            .map(|(id, _)| *id)
            .collect();
        for id in fitting {
            if let Some(chat) = self.chats.get_mut(&id) {
                chat.plan_stuck = false;
            }
        }
        let movers: Vec<ChatId> = self
            .chats
            .iter()
            .filter(|(id, chat)| {
                chat.agent_key.is_some()
                    && chat.session.is_some()
                    && chat.loading.is_none()
                    && !chat.plan_stuck
                    && chat.read_only != self.wants_read_only(**id)
                    && self.ws.chat(**id).is_some_and(|s| {
                        !s.state.is_busy()
                            && s.state.gate.approvals.is_empty()
                            && s.state.mode_settled()
                    })
            })
            .map(|(id, _)| *id)
            .collect();
        let mut queued = false;
        for id in movers {
            queued = true;
            self.move_chat(id);
        }
        queued
    }

    fn move_chat(&mut self, id: ChatId) {
        let read_only = self.wants_read_only(id);
        let Some(chat) = self.chats.get_mut(&id) else {
            return;
        };
        let old_slot = slot_key(&chat.command.name, chat.read_only);
        let abilities = self.agents.get(&old_slot).and_then(|slot| slot.abilities);
        if !abilities.is_some_and(|a| a.load_session || a.resume_session) {
            // Asked once, until the mode and the process fit again.
            chat.plan_stuck = true;
            let stuck = StuckMove {
                to_read_only: read_only,
                selected: 0,
            };
            self.send_chat(id, Msg::StuckMove(stuck));
            return;
        }
        self.move_now(id);
    }

    /// The user's answer to [`Msg::StuckMove`]. A fresh session moves the
    /// chat as a move with its session would, the session being new: the
    /// transcript stays, and the chat says the agent does not remember it.
    /// Nothing moves if the chat no longer needs to, or is busy now.
    pub(super) fn on_move_choice(&mut self, id: ChatId, fresh: bool) {
        let needed = self
            .chats
            .get(&id)
            .is_some_and(|chat| chat.read_only != self.wants_read_only(id));
        let idle = self
            .ws
            .chat(id)
            .is_some_and(|s| !s.state.is_busy() && s.state.gate.approvals.is_empty());
        if !fresh || !needed || !idle {
            return;
        }
        if let Some(chat) = self.chats.get_mut(&id) {
            chat.plan_stuck = false;
        }
        self.move_now(id);
    }

    /// Move chat `id` to the process its mode asks for, continuing its
    /// session there where the agent can.
    fn move_now(&mut self, id: ChatId) {
        let read_only = self.wants_read_only(id);
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        let old_slot = slot_key(&chat.command.name, chat.read_only);
        let old_key = chat.agent_key;
        if let Some(chat) = self.chats.get_mut(&id) {
            chat.detach();
            chat.restarting = chat.last_session.clone();
        }
        // The old process goes when no chat uses it any more.
        let unused = !self.chats.values().any(|c| c.agent_key == old_key);
        if unused && let Some(slot) = self.agents.remove(&old_slot) {
            tokio::spawn(slot.handle.shutdown(Duration::from_millis(200)));
        }
        self.send_chat(id, Msg::SandboxMove);
        self.send_chat(
            id,
            Msg::Note(if read_only {
                "Plan: this chat moves to an agent process whose sandbox keeps the workspace read-only".to_string()
            } else {
                "this chat moves to an agent process whose sandbox lets it write the workspace".to_string()
            }),
        );
        if let Err(err) = self.connect(id) {
            self.send_chat(id, Msg::ConnectFailed(err.to_string()));
        }
    }
}

//! Running the state's effects: prompts, cancels and answers to the agent,
//! the decision log (a job for the disk writer, see `disk.rs`), alerts,
//! agent mode and option switches, new chats, the picker of past chats and
//! reopening one. What an effect learns comes back as a queued message,
//! never as a write into the state.

use std::time::Duration;

use tokio::time::Instant;

use super::calls::CLIENT_ALLOW;
use super::chat::Chat;
use super::disk;
use super::{
    AgentChoice, App, CANCEL_GRACE, ChatOptions, Incoming, ResumeChat, SHUTDOWN_GRACE, display_path,
};
use crate::acp::{AgentCommand, AgentHandle, ClientCaps};
use crate::decision_log;
use crate::model::PermissionOutcome;
use crate::sanitize::one_line;
use crate::state::{ChatId, ChatSlot, Effect, Msg, WsEffect, WsMsg};

/// At most one bell and desktop notification in this long.
const ALERT_GAP: Duration = Duration::from_secs(2);

/// Whether an alert may go off now, the last one having gone off at `last`.
fn alert_due(last: Option<Instant>, now: Instant) -> bool {
    last.is_none_or(|last| now.saturating_duration_since(last) >= ALERT_GAP)
}

impl App {
    pub(super) fn run(&mut self, effect: WsEffect) {
        match effect {
            WsEffect::Chat(id, effect) => self.run_chat(id, effect),
            WsEffect::NewChat { agent } => self.new_chat(&agent),
            WsEffect::Closed(mut slot) => self.close_chat(&mut slot),
            WsEffect::OpenPicker => self.open_picker(),
            WsEffect::Reopen(summary) => self.reopen(&summary),
        }
    }

    /// The agent process a chat's session lives on.
    pub(super) fn agent_of(&self, chat: &Chat) -> Option<&AgentHandle> {
        // By its spawn key: an agent may run one process per sandbox rules.
        let key = chat.agent_key?;
        let slot = self.agents.values().find(|slot| slot.key == key)?;
        Some(&slot.handle)
    }

    fn run_chat(&mut self, id: ChatId, effect: Effect) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        match effect {
            Effect::SendPrompt(text) => match (chat.session.clone(), self.agent_of(chat)) {
                (Some(session), Some(_)) => {
                    let blocks = self.mention_blocks(chat, &text);
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.quiet_tail = false;
                    }
                    self.prompt_after_checkpoint(id, session, text, blocks);
                }
                _ => self.send_chat(id, Msg::TurnFailed("the agent is not connected".into())),
            },
            Effect::CancelTurn => {
                if let (Some(session), Some(agent)) = (&chat.session, self.agent_of(chat)) {
                    agent.cancel(session);
                }
                // An agent that never answers the cancelled prompt must not
                // leave the chat working forever.
                let overdue = self.inbox_tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(CANCEL_GRACE).await;
                    let _ = overdue.send(Incoming::CancelOverdue(id));
                });
                // Cancelling the turn ends the commands the agent started.
                if let Some(chat) = self.chats.get_mut(&id) {
                    chat.terminals.kill_all();
                }
            }
            Effect::RespondPermission {
                id: request,
                outcome,
            } => {
                let Some(chat) = self.chats.get_mut(&id) else {
                    return;
                };
                if let Some(responder) = chat.responders.remove(&request) {
                    tracing::info!(chat = id, request, ?outcome, "permission answered");
                    responder.respond(outcome);
                } else if let Some(responder) = chat.elicitations.remove(&request) {
                    tracing::info!(chat = id, request, ?outcome, "elicitation answered");
                    responder.respond(&outcome);
                } else if let Some(reply) = chat.net_pending.remove(&request) {
                    let answer = super::network::net_answer(&outcome);
                    tracing::info!(chat = id, request, ?answer, "connection answered");
                    let status = if answer == crate::net::NetAnswer::Allow {
                        crate::model::WireStatus::Completed
                    } else {
                        crate::model::WireStatus::Failed
                    };
                    chat.mark(request, status, None);
                    // A connection already given up has nobody to hear it.
                    let _ = reply.send(answer);
                } else if let Some((call, responder, path)) = chat.client_pending.remove(&request) {
                    let allowed = outcome == PermissionOutcome::Selected(CLIENT_ALLOW.into());
                    chat.finish_client_call(request, call, responder, path, allowed);
                } else {
                    tracing::warn!(chat = id, request, "no responder for a permission answer");
                }
            }
            Effect::ElicitationContent {
                id: request,
                content,
            } => {
                if let Some(responder) = self
                    .chats
                    .get_mut(&id)
                    .and_then(|chat| chat.elicitations.get_mut(&request))
                {
                    responder.fill(content);
                }
            }
            Effect::RestartAgent => self.restart(id),
            Effect::MoveProcess { fresh } => self.on_move_choice(id, fresh),
            Effect::NewSession => self.new_session(id),
            Effect::Quit => self.quit = true,
            Effect::LogDecision(mut record) => {
                record.time = decision_log::now_rfc3339();
                tracing::info!(
                    decision = %record.decision,
                    source = %record.source,
                    tool_call = %record.tool_call_id,
                    "permission decision"
                );
                // Off the loop, in order; a failure comes back as an error line.
                if let Some(path) = chat.decision_log.clone() {
                    let job = disk::Job::Decision {
                        chat: id,
                        path,
                        record,
                    };
                    if !self.disk.send(job) {
                        let message =
                            "could not append to the decision log: the disk writer is gone";
                        self.send_chat(id, Msg::ErrorLine(message.into()));
                    }
                }
            }
            Effect::Copy(text) => {
                if crate::tui::clipboard::in_tmux() {
                    // tmux is a process to run: off the loop.
                    let inbox = self.inbox_tx.clone();
                    std::thread::spawn(move || {
                        let notice = crate::tui::clipboard::copy(&text);
                        let _ = inbox.send(Incoming::Chat(id, Msg::Copied(notice)));
                    });
                } else {
                    let notice = crate::tui::clipboard::copy(&text);
                    self.send_chat(id, Msg::Copied(notice));
                }
            }
            Effect::Notify(text) => {
                // A burst of cards (an agent asking 3,000 times) rings once.
                let now = Instant::now();
                if alert_due(self.last_alert, now) {
                    self.last_alert = Some(now);
                    crate::tui::notify(&text, chat.notify.bell, chat.notify.desktop);
                }
            }
            Effect::SetAgentMode {
                mode_id,
                config_option,
            } => {
                if let (Some(session), Some(agent)) = (&chat.session, self.agent_of(chat)) {
                    match config_option {
                        Some(option) => agent.set_config_option(session, &option, &mode_id),
                        None => agent.set_mode(session, &mode_id),
                    }
                }
            }
            Effect::EditSettings(edit) => self.edit_settings(id, edit),
            Effect::SetSessionOption { option_id, value } => {
                if let (Some(session), Some(agent)) = (&chat.session, self.agent_of(chat)) {
                    let value = match value {
                        crate::state::OptionPick::Choice(id) => crate::acp::OptionValue::Choice(id),
                        crate::state::OptionPick::Flag(on) => crate::acp::OptionValue::Flag(on),
                    };
                    agent.set_option(session, &option_id, value);
                }
            }
            Effect::Drafts(effect) => self.run_drafts(id, effect),
            Effect::Checkpoint(effect) => self.run_checkpoint(id, effect),
        }
    }

    /// A new chat with `agent`, in the directory of the chat on screen.
    fn new_chat(&mut self, agent: &str) {
        let Some(choice) = self.choices.iter().find(|c| c.command.name == agent) else {
            self.queue
                .push_back(WsMsg::Notice(format!("no agent named `{agent}`")));
            return;
        };
        let mut command = choice.command.clone();
        let mut options = choice.options.clone();
        if let Some(current) = self.ws.active_id().and_then(|id| self.chats.get(&id)) {
            command.cwd.clone_from(&current.command.cwd);
            // What this run learnt of the settings holds for new chats too.
            options.settings.bypassed = self.state().gate.bypassed_agents.clone();
            options.rules = self.state().gate.rules.clone();
        }
        options.resume = None;
        options.headless = None;
        let line = format!(
            "new chat with {} in {} · Alt-1..9 switch · Ctrl-L chats",
            command.name,
            display_path(&command.cwd)
        );
        self.open_chat(command, options, Some(line));
    }

    /// Add a chat (on screen, with a first line when given) and connect it;
    /// an agent that cannot start is an error line in that chat.
    pub(super) fn open_chat(
        &mut self,
        command: AgentCommand,
        options: ChatOptions,
        line: Option<String>,
    ) {
        let id = self.add_chat(command, options);
        if let Some(line) = line {
            self.send_chat(id, Msg::Note(line));
        }
        if let Err(err) = self.connect(id) {
            self.send_chat(id, Msg::ConnectFailed(err.to_string()));
        }
    }

    /// Where chats are recorded (none when recording is off).
    fn store(&self) -> Option<crate::chats::ChatStore> {
        self.chats.values().find_map(|c| c.chat_store.clone())
    }

    /// `/clear`: the chat leaves its session (the agent may let it go; its
    /// record ends as written) and opens a new one on the same agent, whose
    /// record starts once the user says something.
    fn new_session(&mut self, id: ChatId) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        if let (Some(session), Some(handle)) = (&chat.session, self.agent_of(chat)) {
            handle.close_session(session);
        }
        let Some(chat) = self.chats.get_mut(&id) else {
            return;
        };
        chat.detach();
        chat.restarting = None;
        chat.resume = None;
        chat.last_session = None;
        chat.record.start_over();
        if let Err(err) = self.connect(id) {
            self.send_chat(id, Msg::ConnectFailed(err.to_string()));
        }
    }

    /// Drop a closed chat's IO; its agent ends when no chat uses it.
    fn close_chat(&mut self, slot: &mut ChatSlot) {
        let id = slot.id;
        let Some(mut chat) = self.chats.remove(&id) else {
            return;
        };
        self.checkpoints.forget(id);
        // The agent may keep serving other chats: it can let this session go.
        if let (Some(session), Some(handle)) = (&chat.session, self.agent_of(&chat)) {
            handle.close_session(session);
        }
        chat.detach();
        // What happened last (the cancellations) goes into its record.
        chat.out.clear();
        chat.flush_record(&slot.state, slot.name.as_deref(), true);
        chat.record.close();
        self.closed.push(id);
        let name = super::plan_process::slot_key(&chat.command.name, chat.read_only);
        let used = self
            .chats
            .values()
            .any(|c| c.command.name == chat.command.name && c.read_only == chat.read_only);
        if !used && let Some(slot) = self.agents.remove(&name) {
            tokio::spawn(slot.handle.shutdown(SHUTDOWN_GRACE));
        }
    }

    /// Open the picker and fill it: the recorded chats (read by the disk
    /// writer, after the record lines queued before), then the sessions of
    /// running agents that can list them as they answer (after the records,
    /// so a recorded chat is not shown again as an agent's session).
    fn open_picker(&mut self) {
        self.queue.push_back(WsMsg::ShowPicker(Vec::new()));
        let cwd = self
            .ws
            .active_id()
            .and_then(|id| self.chats.get(&id))
            .map(|c| c.command.cwd.clone());
        let listing = self.store().map(|store| disk::Job::ListChats {
            store,
            cwd: cwd.clone(),
        });
        // No records (or no writer): the agents' sessions alone.
        if !listing.is_some_and(|job| self.disk.send(job)) {
            self.list_sessions(cwd);
        }
    }

    /// Ask every running agent that can list its sessions for those of `cwd`.
    pub(super) fn list_sessions(&mut self, cwd: Option<std::path::PathBuf>) {
        let Some(cwd) = cwd else { return };
        for slot in self.agents.values_mut() {
            match slot.abilities {
                Some(abilities) if abilities.list_sessions => slot.handle.list_sessions(&cwd),
                Some(_) => {}
                None => slot.list_for = Some(cwd.clone()),
            }
        }
    }

    /// Reopen a past chat (its record, or a session its agent listed) in a
    /// new chat. A record is read by the disk writer first (see
    /// [`App::reopen_loaded`]).
    fn reopen(&mut self, summary: &crate::chats::ChatSummary) {
        if summary.is_agent_listed() {
            let Some(choice) = self.choice(&summary.agent, &[], &summary.cwd) else {
                return;
            };
            let resume = ResumeChat {
                chat_id: None,
                session_id: summary.session_id.clone(),
                entries: Vec::new(),
                title: summary.title.clone(),
                name: None,
            };
            self.reopen_with(summary, choice, resume, None);
            return;
        }
        let Some(store) = self.store() else {
            self.queue
                .push_back(WsMsg::Notice("chats are not recorded in this run".into()));
            return;
        };
        let job = disk::Job::LoadChat {
            store,
            summary: Box::new(summary.clone()),
        };
        if !self.disk.send(job) {
            self.queue.push_back(WsMsg::Notice(
                "cannot reopen the chat: the disk writer is gone".into(),
            ));
        }
    }

    /// A record to reopen was read (after the lines queued before it).
    pub(super) fn reopen_loaded(
        &mut self,
        summary: &crate::chats::ChatSummary,
        loaded: Result<crate::chats::LoadedChat, String>,
    ) {
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(err) => {
                self.queue
                    .push_back(WsMsg::Notice(format!("cannot reopen the chat: {err}")));
                return;
            }
        };
        let Some(choice) = self.choice(&loaded.header.agent, &loaded.header.command, &summary.cwd)
        else {
            return;
        };
        let mode = loaded.mode.as_deref().and_then(|m| m.parse().ok());
        self.reopen_with(summary, choice, ResumeChat::from_loaded(&loaded), mode);
    }

    /// Open the reopened chat; an untouched chat on screen (nothing sent
    /// yet) gives way.
    fn reopen_with(
        &mut self,
        summary: &crate::chats::ChatSummary,
        choice: AgentChoice,
        resume: ResumeChat,
        mode: Option<crate::policy::Mode>,
    ) {
        let AgentChoice {
            mut command,
            mut options,
        } = choice;
        command.cwd.clone_from(&summary.cwd);
        if let Some(mode) = mode {
            options.mode = mode;
        }
        options.resume = Some(resume);
        options.headless = None;
        let before = self.ws.active_id();
        self.open_chat(command, options, None);
        if let Some(before) = before {
            self.queue.push_back(WsMsg::DiscardUntouched(before));
        }
    }

    /// What runs a reopened chat's agent: the agent of that name, else the
    /// command line the record kept (`-- CMD` agents), with the first
    /// chat's rules and settings but no bypass of its own.
    ///
    /// For a record kept in `cwd`, the agent of that name only when it is
    /// the agent the record's command line ran there (the same resolved
    /// program and script): `sh run-agent.sh` of another repository is
    /// another agent, which never gets this one's process, name or bypass.
    fn choice(
        &mut self,
        agent: &str,
        command_line: &[String],
        cwd: &std::path::Path,
    ) -> Option<AgentChoice> {
        let same = |c: &AgentChoice| match command_line.split_first() {
            Some((program, args)) => {
                crate::settings::agent_identity(&c.command.program, &c.command.args, &c.command.cwd)
                    == crate::settings::agent_identity(program, args, cwd)
            }
            None => true,
        };
        if let Some(choice) = self
            .choices
            .iter()
            .find(|c| c.command.name == agent && same(c))
        {
            return Some(choice.clone());
        }
        // Another agent under a name this run knows: a name of its own.
        let mut name = agent.to_string();
        let mut n = 2;
        while self.agents.contains_key(&name)
            || self.choices.iter().any(|c| c.command.name == name)
            || self.chats.values().any(|c| c.command.name == name)
        {
            name = format!("{agent}-{n}");
            n += 1;
        }
        let agent = name.as_str();
        let (Some((program, args)), Some(first)) =
            (command_line.split_first(), self.choices.first())
        else {
            self.queue.push_back(WsMsg::Notice(format!(
                "`{}` is not an agent warden knows now: start warden with it to reopen this chat",
                one_line(agent)
            )));
            return None;
        };
        let mut options = first.options.clone();
        options.bypass = false;
        options.agent_plan_mode = None;
        options.asking_mode = None;
        options.caps = ClientCaps::default();
        options.settings.agent_block = None;
        // No block binds it: `b` writes one pinned to this command line.
        options.settings.named_by_command = true;
        let (pinned, pinned_args) = crate::settings::pinned_command(program, args, cwd);
        options.settings.create_as = Some((agent.to_string(), pinned, pinned_args));
        Some(AgentChoice {
            command: AgentCommand {
                name: agent.to_string(),
                program: program.clone(),
                args: args.to_vec(),
                env: Vec::new(),
                cwd: first.command.cwd.clone(),
            },
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_cards_alerts_once() {
        let t0 = Instant::now();
        assert!(alert_due(None, t0));
        let mut last = Some(t0);
        let mut rung = 1;
        // 3,000 cards in one second: no more alerts.
        for i in 1..3000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 333);
            if alert_due(last, now) {
                rung += 1;
                last = Some(now);
            }
        }
        assert_eq!(rung, 1);
        assert!(alert_due(last, t0 + ALERT_GAP), "a later card rings again");
    }
}

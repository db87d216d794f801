//! The agent processes (one per agent name, shared by its chats) and the
//! routing of their events: each event becomes messages for the chat that
//! owns its session; requests for no known session are answered at once.

use std::path::PathBuf;
use std::time::Duration;

use super::{App, CANCEL_GRACE, Incoming};
use crate::acp::{
    self, AgentAbilities, AgentEvent, AgentHandle, ClientCall, ClientError, LaunchError,
};
use crate::settings;
use crate::state::{ChatId, Connection, DraftsMsg, Msg, Refusal, WsMsg};

/// A running agent process, shared by the chats of its agent.
pub(super) struct AgentSlot {
    /// Tells its events from those of an earlier process of the same agent.
    pub(super) key: u64,
    pub(super) handle: AgentHandle,
    /// Known once it is initialised.
    pub(super) abilities: Option<AgentAbilities>,
    /// The agent warden knows it as (`agents::identify` at `initialize`):
    /// its quirks, given to each chat whose session opens on it.
    pub(super) agent: Option<crate::agents::Agent>,
    /// A `session/list` to send once it is initialised.
    pub(super) list_for: Option<PathBuf>,
    /// Events that wait, in order: for the settings file's verdict on the
    /// agent's name (see `App::on_agent_info`), for the facts of a
    /// permission request being gathered off the loop (so no later update
    /// of the agent's reaches its chat before the request does).
    pub(super) parked: Option<Vec<AgentEvent>>,
    /// How many of those waits are open.
    pub(super) holds: u32,
    /// What the agent called itself (`agentInfo.name`, made a safe word):
    /// deny and ask rules naming it apply to its chats.
    pub(super) claims: Vec<String>,
}

/// An agent's events held for a job off the loop: a job dropped before it
/// ran (its chat closed, the worker gone) or that failed releases them, so
/// the agent's other chats never wait for it forever.
pub(super) struct Hold {
    pub(super) key: u64,
    /// `None` once the job's own step releases them.
    pub(super) inbox: Option<tokio::sync::mpsc::UnboundedSender<Incoming>>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(inbox) = self.inbox.take() {
            let _ = inbox.send(Incoming::Released(self.key));
        }
    }
}

/// Where an agent process is prepared and forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Here, before returning: at start-up, before the loop runs, so that a
    /// command that does not exist is a plain error (`warden -- nosuchcmd`).
    Now,
    /// On the blocking pool, the loop going on meanwhile (a failure comes
    /// back as `AgentEvent::ConnectFailed`).
    OffLoop,
}

impl App {
    /// Start the agent of every chat not connected yet and open their
    /// sessions (a command that does not exist is an error at once). For
    /// warden's start-up, before the loop runs: each process is prepared and
    /// forked here; from the loop, [`App::connect`] starts them off it.
    pub fn start_agent(&mut self) -> Result<(), LaunchError> {
        let waiting: Vec<ChatId> = self
            .ws
            .chats
            .iter()
            .map(|c| c.id)
            .filter(|id| self.chats.get(id).is_some_and(|c| c.agent_key.is_none()))
            .collect();
        for id in waiting {
            self.connect_as(id, Start::Now)?;
        }
        Ok(())
    }

    /// Open the chat's session on its agent, spawning the agent if no
    /// process of it runs. The spawn runs off the loop: the session is
    /// asked for at once and opens once the agent is up; a spawn that
    /// fails is an error line in each chat of that agent (never an `Err`).
    pub(super) fn connect(&mut self, id: ChatId) -> Result<(), LaunchError> {
        self.connect_as(id, Start::OffLoop)
    }

    /// [`App::connect`], spawning as `start` says.
    fn connect_as(&mut self, id: ChatId, start: Start) -> Result<(), LaunchError> {
        let read_only = self.wants_read_only(id);
        let Some(chat) = self.chats.get_mut(&id) else {
            return Ok(());
        };
        // One process per agent and sandbox rules (a chat in Plan: read-only).
        let name = super::plan_process::slot_key(&chat.command.name, read_only);
        let sandbox = chat.take_rules(read_only);
        if !self.agents.contains_key(&name) {
            let key = self.next_key;
            self.next_key += 1;
            let inbox = self.inbox_tx.clone();
            let tx = acp::Events::new(move |event| inbox.send(Incoming::Agent(key, event)).is_ok());
            // Each connection its proxy asks about, into the inbox as a
            // network card's question (issue 35).
            let (asks, mut asked) = tokio::sync::mpsc::unbounded_channel();
            let inbox = self.inbox_tx.clone();
            tokio::spawn(async move {
                while let Some(ask) = asked.recv().await {
                    if inbox.send(Incoming::Net(key, Box::new(ask))).is_err() {
                        break;
                    }
                }
            });
            let handle = match start {
                Start::Now => acp::spawn_now(&chat.command, chat.caps, sandbox.as_ref(), tx, asks)?,
                Start::OffLoop => acp::spawn(&chat.command, chat.caps, sandbox.as_ref(), tx, asks),
            };
            if !chat.mcp_servers.is_empty() {
                handle.set_mcp_servers(chat.mcp_servers.clone());
            }
            if let Some(method) = &chat.auth_method {
                handle.set_auth_method(method);
            }
            self.agents.insert(
                name.clone(),
                AgentSlot {
                    key,
                    handle,
                    abilities: None,
                    agent: None,
                    list_for: None,
                    parked: None,
                    holds: 0,
                    claims: Vec::new(),
                },
            );
        }
        let Some(slot) = self.agents.get(&name) else {
            return Ok(());
        };
        // A reopened chat's session, else (a restart) the one the chat had.
        let reopen = chat.resume.as_ref().map(|r| r.session_id.clone());
        let prefer_resume = reopen.is_none() && chat.restarting.is_some();
        let resume = reopen.or_else(|| chat.restarting.clone());
        chat.quiet_replay = prefer_resume;
        chat.loading.clone_from(&resume);
        chat.agent_key = Some(slot.key);
        let cwd_real = chat.command.cwd.canonicalize().ok();
        let additional_directories = chat
            .roots
            .as_slice()
            .iter()
            .filter(|root| Some(*root) != cwd_real.as_ref())
            .cloned()
            .collect();
        slot.handle.open_session(
            id,
            acp::SessionOpen {
                cwd: chat.command.cwd.clone(),
                additional_directories,
                resume,
                prefer_resume,
            },
        );
        Ok(())
    }

    /// The process id of the agent of the chat on screen (its process group id too).
    pub fn agent_pid(&self) -> Option<u32> {
        let chat = self.chats.get(&self.ws.active_id()?)?;
        self.agents
            .get(&super::plan_process::slot_key(
                &chat.command.name,
                chat.read_only,
            ))
            .and_then(|slot| slot.handle.pid())
    }

    /// How many agent processes run.
    pub fn agent_count(&self) -> usize {
        self.agents.len()
    }

    /// The chat whose session this is, on the agent process `key`.
    pub(super) fn chat_of(&self, key: u64, session_id: &str) -> Option<ChatId> {
        self.chats
            .iter()
            .find(|(_, chat)| chat.owns(key, session_id))
            .map(|(id, _)| *id)
    }

    /// The chats on the agent process `key`.
    pub(super) fn chats_on(&self, key: u64) -> Vec<ChatId> {
        let mut ids: Vec<ChatId> = self
            .chats
            .iter()
            .filter(|(_, chat)| chat.agent_key == Some(key))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The agent slot of process `key`.
    pub(super) fn slot_of(&mut self, key: u64) -> Option<(&String, &mut AgentSlot)> {
        self.agents.iter_mut().find(|(_, slot)| slot.key == key)
    }

    /// The agent's further events wait (see [`AgentSlot::parked`]).
    pub(super) fn hold_events(&mut self, key: u64) {
        if let Some((_, slot)) = self.slot_of(key) {
            slot.holds += 1;
            slot.parked.get_or_insert_with(Vec::new);
        }
    }

    /// One wait is over; when none is left, the events that waited are
    /// routed, each as if it had just arrived, between pumps (this runs
    /// from `on_agent_event`, never inside a pump). An event that waits
    /// again parks the ones after it again, in order.
    pub(super) fn release_events(&mut self, key: u64) {
        let parked = match self.slot_of(key) {
            Some((_, slot)) => {
                slot.holds = slot.holds.saturating_sub(1);
                if slot.holds > 0 {
                    return;
                }
                slot.parked.take().unwrap_or_default()
            }
            None => return,
        };
        let mut parked = parked.into_iter();
        while let Some(event) = parked.next() {
            self.pump();
            self.on_agent(key, event);
            if let Some((_, slot)) = self.slot_of(key)
                && let Some(waiting) = &mut slot.parked
            {
                waiting.extend(parked);
                return;
            }
        }
    }

    /// Turn an event into messages for the chat it belongs to, and apply
    /// them.
    pub fn on_agent_event(&mut self, event: Incoming) {
        self.route(event);
        self.pump();
    }

    fn route(&mut self, event: Incoming) {
        match event {
            Incoming::Agent(key, event) => self.on_agent(key, event),
            Incoming::CancelOverdue(id) => {
                let stuck = self
                    .ws
                    .chat(id)
                    .and_then(|c| c.state.session.turn.as_ref())
                    .is_some_and(|t| t.cancelling);
                if stuck {
                    // Its answer, should it come after all, ends nothing.
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.abandoned_prompts += 1;
                    }
                    self.send_chat(id, Msg::CancelOverdue(CANCEL_GRACE));
                }
            }
            Incoming::Terminal(id, event) => {
                if let Some(chat) = self.chats.get_mut(&id) {
                    chat.on_terminal_event(event);
                }
            }
            Incoming::Settings(done) => self.on_settings_done(*done),
            Incoming::Files(id, step) => {
                // A request's facts are in: the agent's events after it go on.
                let held = match &*step {
                    super::calls::FsStep::Checked { key, .. } => Some(*key),
                    _ => None,
                };
                // A closed chat's step is dropped: its responder answers an error.
                if let Some(chat) = self.chats.get_mut(&id) {
                    chat.on_file_step(*step);
                }
                if let Some(key) = held {
                    self.pump();
                    self.release_events(key);
                }
            }
            Incoming::AgentName(check) => self.on_name_checked(check),
            Incoming::Released(key) => self.release_events(key),
            Incoming::Chat(id, msg) => self.send_chat(id, msg),
            Incoming::Disk(done) => self.on_disk(done),
            Incoming::Net(key, ask) => self.on_connect_ask(key, *ask),
            Incoming::TerminalNet(id, ask) => self.on_terminal_connect_ask(id, *ask),
            Incoming::Checkpoint(id, msg) => self.on_checkpoint(id, *msg),
            Incoming::CheckpointWait(id, token) => self.on_checkpoint_wait(id, token),
        }
    }

    /// An agent process's event (parked while its name is being checked).
    fn on_agent(&mut self, key: u64, event: AgentEvent) {
        if let Some((_, slot)) = self.slot_of(key)
            && let Some(parked) = &mut slot.parked
        {
            parked.push(event);
            return;
        }
        match event {
            AgentEvent::Initialized(abilities, info, agent) => {
                for id in self.chats_on(key) {
                    self.send_chat(id, Msg::Drafts(DraftsMsg::SignIn(abilities.sign_in)));
                }
                if let Some((_, slot)) = self.slot_of(key) {
                    slot.abilities = Some(abilities);
                    slot.agent = agent;
                    if let Some(cwd) = slot.list_for.take()
                        && abilities.list_sessions
                    {
                        slot.handle.list_sessions(&cwd);
                    }
                }
                if let Some(info) = info {
                    // What it calls itself is display at most, never its
                    // identity; deny and ask rules naming it apply.
                    let claim = settings::agent_slug(&info.name);
                    if !claim.is_empty() {
                        if let Some((_, slot)) = self.slot_of(key)
                            && !slot.claims.contains(&claim)
                        {
                            slot.claims.push(claim.clone());
                        }
                        for id in self.chats_on(key) {
                            self.send_chat(id, Msg::AgentAlias(claim.clone()));
                        }
                    }
                    self.on_agent_info(key, &info);
                }
            }
            AgentEvent::Client { call, responder } => match self.chat_of(key, call.session_id()) {
                Some(id) => {
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.on_client_call(call, responder);
                    }
                }
                None => {
                    let error = ClientError::InvalidParams(format!(
                        "unknown session {}",
                        call.session_id()
                    ));
                    // Said and logged in a chat of the same process.
                    match self
                        .chats_on(key)
                        .first()
                        .and_then(|id| self.chats.get_mut(id))
                    {
                        Some(chat)
                            if matches!(
                                call,
                                ClientCall::ReadTextFile { .. }
                                    | ClientCall::WriteTextFile { .. }
                                    | ClientCall::CreateTerminal { .. }
                            ) =>
                        {
                            let refusal = Refusal::foreign_session(call.session_id());
                            chat.gate_refused(call, responder, error, refusal);
                        }
                        _ => responder.respond(Err(error)),
                    }
                }
            },
            AgentEvent::SessionStarted { tag, info } => {
                let agent = self.slot_of(key).and_then(|(_, slot)| slot.agent);
                let Some(chat) = self.chats.get_mut(&tag) else {
                    return;
                };
                if chat.agent_key != Some(key) {
                    return;
                }
                chat.loading = None;
                // An agent whose replay may end after its answer (gemini):
                // what it sends until the next prompt is not shown again.
                chat.quiet_tail = chat.quiet_replay
                    && info.origin == crate::model::SessionOrigin::Loaded
                    && crate::agents::quirks::replays_after_load(agent);
                chat.quiet_replay = false;
                chat.session = Some(info.session_id.clone());
                // What the restart or reopening shows comes first; the
                // record starts after it (the queue holds nothing else now:
                // events are routed between pumps).
                let lines = self.ws.chat(tag).map_or_else(Vec::new, |slot| {
                    let queued: usize = self
                        .queue
                        .iter()
                        .map(|m| match m {
                            WsMsg::Chat(id, msg) if *id == tag => crate::state::lines_added(msg),
                            _ => 0,
                        })
                        .sum();
                    chat.on_session_record(slot.state.session.transcript.len() + queued, &info)
                });
                for line in lines {
                    self.send_chat(tag, line);
                }
                let claims = self
                    .slot_of(key)
                    .map(|(_, slot)| slot.claims.clone())
                    .unwrap_or_default();
                for claim in claims {
                    self.send_chat(tag, Msg::AgentAlias(claim));
                }
                if let Some(abilities) = self.slot_of(key).and_then(|(_, slot)| slot.abilities) {
                    self.send_chat(tag, Msg::Drafts(DraftsMsg::SignIn(abilities.sign_in)));
                }
                let session_id = info.session_id.clone();
                self.send_chat(tag, Msg::AgentKnown(agent));
                self.send_chat(tag, Msg::SessionStarted(info));
                self.replay_early(key, &session_id, tag);
            }
            AgentEvent::SessionFailed { tag, message } => {
                if let Some(chat) = self.chats.get_mut(&tag)
                    && chat.agent_key == Some(key)
                {
                    chat.loading = None;
                    chat.quiet_replay = false;
                    chat.restarting = None;
                    self.send_chat(tag, Msg::ConnectFailed(message));
                }
            }
            AgentEvent::ModeSet {
                session_id,
                mode_id,
                result,
            } => {
                if let Some(id) = self.chat_of(key, &session_id) {
                    self.send_chat(id, Msg::AgentModeSet { mode_id, result });
                }
            }
            AgentEvent::OptionSet {
                session_id,
                option,
                result,
            } => {
                if let Some(id) = self.chat_of(key, &session_id) {
                    self.send_chat(id, Msg::OptionSet { option, result });
                }
            }
            AgentEvent::Update { session_id, update } => match self.chat_of(key, &session_id) {
                Some(id)
                    if self
                        .chats
                        .get(&id)
                        .is_some_and(|c| c.quiet_replay && c.loading.is_some()) =>
                {
                    tracing::debug!(%session_id, "replay of a restarted session not shown again");
                }
                Some(id)
                    if self.chats.get(&id).is_some_and(|c| c.quiet_tail)
                        && update.is_conversation() =>
                {
                    tracing::debug!(%session_id, "replay after the answer to session/load not shown again");
                }
                Some(id) => self.send_chat(id, Msg::Update(update)),
                None => {
                    tracing::debug!(%session_id, "update for a session not known yet: kept");
                    self.keep_early(key, session_id, update);
                }
            },
            AgentEvent::Permission { request, responder } => {
                self.on_permission_ask(key, *request, responder);
            }
            AgentEvent::Elicitation { request, responder } => {
                self.on_elicitation_ask(key, request, responder);
            }
            AgentEvent::PromptDone { session_id, result } => {
                let Some(id) = self.chat_of(key, &session_id) else {
                    return;
                };
                if let Some(chat) = self.chats.get_mut(&id)
                    && chat.abandoned_prompts > 0
                {
                    chat.abandoned_prompts -= 1;
                    tracing::info!("the agent answered an abandoned prompt: {result:?}");
                    return;
                }
                match result {
                    Ok(reason) => self.send_chat(id, Msg::TurnEnded(reason)),
                    Err(message) => {
                        let down = self
                            .ws
                            .chat(id)
                            .is_none_or(|c| c.state.session.connection == Connection::Down);
                        if down {
                            tracing::info!("prompt failed after the agent exited: {message}");
                        } else {
                            self.send_chat(id, Msg::TurnFailed(message));
                        }
                    }
                }
            }
            AgentEvent::Sessions(listed) => {
                let agent = self.slot_of(key).map(|(name, _)| name.clone());
                match (listed, agent) {
                    (Ok(listed), Some(agent)) => {
                        // Sessions open in this warden are not past chats.
                        let items = listed
                            .into_iter()
                            .filter(|s| self.chat_of(key, &s.session_id).is_none())
                            .map(|s| crate::chats::listed_summary(&agent, s))
                            .collect();
                        self.queue.push_back(WsMsg::PickerItems(items));
                    }
                    (Err(err), _) => tracing::warn!("session/list failed: {err}"),
                    _ => {}
                }
            }
            AgentEvent::ConnectFailed(message) => {
                // Initialising failed: no session of this process can open.
                let name = self.slot_of(key).map(|(name, _)| name.clone());
                if let Some(slot) = name.and_then(|n| self.agents.remove(&n)) {
                    tokio::spawn(slot.handle.shutdown(Duration::from_millis(200)));
                }
                for id in self.chats_on(key) {
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.detach();
                    }
                    self.send_chat(id, Msg::ConnectFailed(message.clone()));
                }
            }
            AgentEvent::Notice(message) => {
                for id in self.chats_on(key) {
                    self.send_chat(id, Msg::AgentNotice(message.clone()));
                }
            }
            AgentEvent::Exited {
                status,
                stderr_tail,
            } => {
                let name = self.slot_of(key).map(|(name, _)| name.clone());
                if let Some(name) = name {
                    self.agents.remove(&name);
                }
                for id in self.chats_on(key) {
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.detach();
                    }
                    self.send_chat(
                        id,
                        Msg::AgentExited {
                            status: status.clone(),
                            stderr_tail: stderr_tail.clone(),
                        },
                    );
                }
            }
        }
    }

    /// Restart a chat's agent and continue the chat's session on it (see
    /// [`acp::SessionOpen::prefer_resume`]). Every other chat of the same
    /// process restarts with it: one `r` brings back all the chats a crash
    /// took down (and a stuck agent ended here takes its chats along).
    pub(super) fn restart(&mut self, id: ChatId) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        let name = super::plan_process::slot_key(&chat.command.name, chat.read_only);
        let old = chat.agent_key.or(chat.last_key);
        // A stuck agent still runs: end it first.
        if chat.agent_key.is_some()
            && self
                .agents
                .get(&name)
                .is_some_and(|slot| Some(slot.key) == chat.agent_key)
            && let Some(slot) = self.agents.remove(&name)
        {
            tokio::spawn(slot.handle.shutdown(Duration::from_millis(200)));
        }
        let mut siblings = Vec::new();
        if let Some(old) = old {
            for (other, chat) in &mut self.chats {
                if *other != id && chat.agent_key == Some(old) {
                    // Still on the process just ended.
                    chat.detach();
                }
                if *other != id && chat.agent_key.is_none() && chat.last_key == Some(old) {
                    siblings.push(*other);
                }
            }
        }
        siblings.sort_unstable();
        if let Some(chat) = self.chats.get_mut(&id) {
            chat.detach();
            chat.restarting = if chat.resume.is_some() {
                None
            } else {
                chat.last_session.clone()
            };
        }
        if let Err(err) = self.connect(id) {
            self.send_chat(id, Msg::ConnectFailed(err.to_string()));
        }
        for other in siblings {
            // Restarted already (by a restart this one set off)?
            if self
                .chats
                .get(&other)
                .is_some_and(|c| c.agent_key.is_none())
            {
                self.send_chat(other, Msg::Restart);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A facts job dropped before it ran (its chat closed) releases the
    /// agent's events; one that ran leaves that to its step.
    #[test]
    fn a_hold_dropped_unreleased_lets_the_agents_events_go_on() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        drop(Hold {
            key: 7,
            inbox: Some(tx.clone()),
        });
        assert!(matches!(rx.try_recv(), Ok(Incoming::Released(7))));
        drop(Hold {
            key: 8,
            inbox: None,
        });
        let job: crate::app::calls::FileJob = {
            let hold = Hold {
                key: 9,
                inbox: Some(tx),
            };
            Box::new(move || {
                let _hold = hold;
                unreachable!("never run")
            })
        };
        drop(job);
        assert!(matches!(rx.try_recv(), Ok(Incoming::Released(9))));
        assert!(rx.try_recv().is_err());
    }
}

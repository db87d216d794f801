//! The runtime: one `select!` loop that owns all IO. It feeds terminal input
//! and agent events to the pure state, runs the effects that come back, keeps
//! the permission responders keyed by request id, and redraws at most once
//! per frame interval, only when something changed.

mod calls;
mod chat;
mod record;
mod signals;

pub use signals::QuitSignals;

pub use record::ResumeChat;

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use std::path::PathBuf;

use crate::acp::{
    self, AgentAbilities, AgentCommand, AgentEvent, AgentHandle, ClientCaps, ClientError,
    LaunchError,
};
use crate::client::terminal::TerminalEvent;
use crate::decision_log;
use crate::model::PermissionOutcome;
use crate::policy::{Mode, Rule};
use crate::sanitize::one_line;
use crate::settings::{self, Edit};
use crate::state::{
    Action, AppState, ChatFocus, ChatId, ChatSlot, Connection, Effect, Msg, OnAsk, SettingsEdit,
    Workspace, WsEffect, WsMsg,
};
use crate::tui::keymap::{self, Input};
use crate::ui::{self, Scroll};
use calls::CLIENT_ALLOW;
use chat::Chat;

/// Shortest time between two frames: bursts of updates share one frame.
pub const FRAME: Duration = Duration::from_millis(16);

/// How long the agent gets to exit by itself after its stdin closes.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// How a chat starts: its mode, the agent's settings, the user's rules.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    pub mode: Mode,
    /// The agent's `bypass_permissions`.
    pub bypass: bool,
    /// The agent's own mode to switch to in Plan (opt-in).
    pub agent_plan_mode: Option<String>,
    /// The agent's own mode that asks (the `asking_mode` setting), when set.
    pub asking_mode: Option<String>,
    pub rules: Vec<Rule>,
    /// Where decisions are appended (none: not logged).
    pub decision_log: Option<PathBuf>,
    /// What to do when a card appears (the TUI sets it; headless runs leave it off).
    pub notify: Notify,
    /// Answer asks without a user (`warden exec`).
    pub headless: Option<OnAsk>,
    /// The settings file and what the chat knows of it.
    pub settings: SettingsLink,
    /// Files and terminals offered to the agent.
    pub caps: ClientCaps,
    /// Directories besides the cwd the agent's file calls may touch.
    pub extra_roots: Vec<PathBuf>,
    /// Where chats are recorded (none: not recorded).
    pub chats_dir: Option<PathBuf>,
    /// A past chat to reopen instead of starting a new one.
    pub resume: Option<ResumeChat>,
    /// MCP servers passed to the agent's sessions.
    pub mcp_servers: Vec<crate::acp::McpServer>,
    /// The agent's authentication method to sign in with (`auth_method`).
    pub auth_method: Option<String>,
}

/// How a new card makes itself noticed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Notify {
    /// Ring the terminal bell.
    pub bell: bool,
    /// Send an OSC 9 desktop notification.
    pub desktop: bool,
}

/// Where the settings file is and whether warden may write to it.
#[derive(Debug, Clone, Default)]
pub struct SettingsLink {
    pub path: Option<PathBuf>,
    /// False when the file did not load: warden never writes over it then.
    pub writable: bool,
    /// The agent has no block yet (`-- CMD`, or the built-in demo): a bypass
    /// creates `[agents.NAME]` with this (name, command, args); an existing
    /// block for the same command is reused. The name is made unique unless
    /// it is the demo's.
    pub create_as: Option<(String, String, Vec<String>)>,
    /// The agent's block name, when it has one.
    pub agent_block: Option<String>,
    /// Agents with `bypass_permissions = true`.
    pub bypassed: Vec<String>,
    /// The agent's name came from its command (`-- CMD`, no block runs it):
    /// the name it gives itself in `initialize` may replace it, when that
    /// name is nobody else's (see `App::on_agent_info`).
    pub named_by_command: bool,
}

/// At most one bell and desktop notification in this long.
const ALERT_GAP: Duration = Duration::from_secs(2);

/// Whether an alert may go off now, the last one having gone off at `last`.
fn alert_due(last: Option<Instant>, now: Instant) -> bool {
    last.is_none_or(|last| now.saturating_duration_since(last) >= ALERT_GAP)
}

/// How long a cancelled turn may take to end before warden ends it on its
/// side (the TUI) or gives up waiting (`warden exec`).
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Something that happened outside the state: an agent, or a terminal.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived value, moved once from a channel to its handler"
)]
pub enum Incoming {
    /// From an agent connection (by the spawn key of its process).
    Agent(u64, AgentEvent),
    /// A chat's terminal output or exit.
    Terminal(ChatId, TerminalEvent),
    /// A settings write finished (on the writer thread).
    Settings(SettingsDone),
    /// A chat's cancelled turn has had [`CANCEL_GRACE`] to end.
    CancelOverdue(ChatId),
}

/// One settings edit for the writer thread.
#[derive(Debug)]
pub struct SettingsJob {
    /// The chat that asked for it.
    chat: ChatId,
    /// That chat's agent (chats of the same agent learn a new block name).
    agent: String,
    path: PathBuf,
    edit: Edit,
}

impl SettingsJob {
    fn run(self) -> SettingsDone {
        let result = settings::apply_edit(&self.path, &self.edit);
        SettingsDone { job: self, result }
    }
}

/// A finished settings write and what came of it.
#[derive(Debug)]
pub struct SettingsDone {
    job: SettingsJob,
    result: Result<settings::Applied, settings::WriteError>,
}

/// The thread that writes the settings file, one edit after another in the
/// order they were made, so that waiting for another warden's lock (up to
/// ten seconds) never stops the event loop. Started with the first edit.
struct Writer {
    /// Where finished writes go (the app's event loop).
    done_tx: mpsc::UnboundedSender<SettingsDone>,
    running: Option<(
        std::sync::mpsc::Sender<SettingsJob>,
        std::thread::JoinHandle<()>,
    )>,
}

impl Writer {
    /// Queue a job; gives it back when no thread can run it.
    fn send(
        &mut self,
        job: SettingsJob,
    ) -> Result<(), Box<std::sync::mpsc::SendError<SettingsJob>>> {
        if self.running.is_none() {
            let done_tx = self.done_tx.clone();
            let (tx, rx) = std::sync::mpsc::channel::<SettingsJob>();
            let spawned = std::thread::Builder::new()
                .name("warden-settings".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        let done = job.run();
                        if done_tx.send(done).is_err() {
                            break;
                        }
                    }
                });
            match spawned {
                Ok(handle) => self.running = Some((tx, handle)),
                Err(err) => {
                    tracing::warn!("cannot start the settings writer: {err}");
                    return Err(Box::new(std::sync::mpsc::SendError(job)));
                }
            }
        }
        match &self.running {
            Some((tx, _)) => tx.send(job).map_err(Box::new),
            None => Err(Box::new(std::sync::mpsc::SendError(job))),
        }
    }

    /// Wait for the queued writes to finish (on quit, so none is lost).
    async fn finish(&mut self) {
        if let Some((tx, handle)) = self.running.take() {
            drop(tx);
            let _ = tokio::task::spawn_blocking(move || handle.join()).await;
        }
    }
}

/// An agent a new chat can run: its command (the cwd is the first chat's)
/// and its chat options from the settings.
#[derive(Debug, Clone)]
pub struct AgentChoice {
    pub command: AgentCommand,
    pub options: ChatOptions,
}

/// A running agent process, shared by the chats of its agent.
struct AgentSlot {
    /// Tells its events from those of an earlier process of the same agent.
    key: u64,
    handle: AgentHandle,
    /// Known once it is initialised.
    abilities: Option<AgentAbilities>,
    /// A `session/list` to send once it is initialised.
    list_for: Option<PathBuf>,
}

/// The running application: every chat's state (the workspace) plus the IO
/// each needs, and the agent processes they share (one per agent name).
pub struct App {
    /// The pure state of every chat (public so that tests can look at it).
    pub ws: Workspace,
    chats: HashMap<ChatId, Chat>,
    agents: HashMap<String, AgentSlot>,
    next_key: u64,
    events_tx: mpsc::UnboundedSender<(u64, AgentEvent)>,
    events: mpsc::UnboundedReceiver<(u64, AgentEvent)>,
    terminal_tx: mpsc::UnboundedSender<(ChatId, TerminalEvent)>,
    terminal_events: mpsc::UnboundedReceiver<(ChatId, TerminalEvent)>,
    /// Writes the settings file off the loop.
    writer: Writer,
    settings_done: mpsc::UnboundedReceiver<SettingsDone>,
    overdue_tx: mpsc::UnboundedSender<ChatId>,
    overdue: mpsc::UnboundedReceiver<ChatId>,
    /// What new chats can run, by agent name.
    choices: Vec<AgentChoice>,
    /// Closed chats whose render caches the TUI should drop.
    closed: Vec<ChatId>,
    quit: bool,
    /// When the bell and the desktop notification last went off.
    last_alert: Option<Instant>,
}

impl App {
    /// An app with one chat for `command` and default options; the agent is
    /// not started yet.
    pub fn new(command: AgentCommand) -> Self {
        App::with_options(command, ChatOptions::default())
    }

    /// An app with one chat for `command`; the agent is not started yet.
    /// New chats can run the same agent (see [`App::set_choices`] for more).
    pub fn with_options(command: AgentCommand, options: ChatOptions) -> Self {
        let (events_tx, events) = mpsc::unbounded_channel();
        let (terminal_tx, terminal_events) = mpsc::unbounded_channel();
        let (done_tx, settings_done) = mpsc::unbounded_channel();
        let (overdue_tx, overdue) = mpsc::unbounded_channel();
        // New chats of this agent start at Default (the first chat's mode
        // may come from `--mode`); see [`App::set_choices`].
        let first = AgentChoice {
            command: command.clone(),
            options: ChatOptions {
                resume: None,
                mode: Mode::Default,
                ..options.clone()
            },
        };
        let mut app = App {
            ws: Workspace::new(vec![command.name.clone()]),
            chats: HashMap::new(),
            agents: HashMap::new(),
            next_key: 0,
            events_tx,
            events,
            terminal_tx,
            terminal_events,
            writer: Writer {
                done_tx,
                running: None,
            },
            settings_done,
            overdue_tx,
            overdue,
            choices: vec![first],
            closed: Vec::new(),
            quit: false,
            last_alert: None,
        };
        app.add_chat(command, options);
        app
    }

    /// The agents new chats can run (the first chat's agent stays first).
    pub fn set_choices(&mut self, choices: Vec<AgentChoice>) {
        for choice in choices {
            if !self
                .choices
                .iter()
                .any(|c| c.command.name == choice.command.name)
            {
                self.choices.push(choice);
            }
        }
        self.ws.agents = self
            .choices
            .iter()
            .map(|c| c.command.name.clone())
            .collect();
    }

    fn add_chat(&mut self, command: AgentCommand, options: ChatOptions) -> ChatId {
        let id = self.ws.next_chat_id();
        // A reopened chat keeps the name the user gave it.
        let name = options.resume.as_ref().and_then(|r| r.name.clone());
        let (chat, state) = Chat::new(id, command, options, &self.terminal_tx);
        self.chats.insert(id, chat);
        let id = self.ws.add_chat(state);
        if let Some(slot) = self.ws.chat_mut(id) {
            slot.name = name;
        }
        id
    }

    /// The chat on screen.
    pub fn state(&self) -> &AppState {
        &self.ws.chats[self.ws.active].state
    }

    /// The chat on screen, to change.
    pub fn state_mut(&mut self) -> &mut AppState {
        &mut self.ws.chats[self.ws.active].state
    }

    /// Start the agent of every chat not connected yet and open their
    /// sessions (a command that does not exist is an error at once).
    pub fn start_agent(&mut self) -> Result<(), LaunchError> {
        let waiting: Vec<ChatId> = self
            .ws
            .chats
            .iter()
            .map(|c| c.id)
            .filter(|id| self.chats.get(id).is_some_and(|c| c.agent_key.is_none()))
            .collect();
        for id in waiting {
            self.connect(id)?;
        }
        Ok(())
    }

    /// Open the chat's session on its agent, spawning the agent if no
    /// process of it runs.
    fn connect(&mut self, id: ChatId) -> Result<(), LaunchError> {
        let Some(chat) = self.chats.get_mut(&id) else {
            return Ok(());
        };
        let name = chat.command.name.clone();
        if !self.agents.contains_key(&name) {
            let key = self.next_key;
            self.next_key += 1;
            let tx = tagged(key, self.events_tx.clone());
            let handle = acp::spawn(&chat.command, chat.caps, tx)?;
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
                    list_for: None,
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
            .get(&chat.command.name)
            .and_then(|slot| slot.handle.pid())
    }

    /// How many agent processes run.
    pub fn agent_count(&self) -> usize {
        self.agents.len()
    }

    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Closed chats since the last call (the TUI drops their caches).
    pub fn take_closed(&mut self) -> Vec<ChatId> {
        std::mem::take(&mut self.closed)
    }

    /// Apply a message: a key goes to the workspace (and from there to the
    /// chat on screen); anything else to the chat on screen.
    pub fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Action(action) => self.apply(WsMsg::Action(action)),
            other => {
                if let Some(id) = self.ws.active_id() {
                    self.apply(WsMsg::Chat(id, other));
                }
            }
        }
    }

    /// Give one chat a message.
    fn send_chat(&mut self, id: ChatId, msg: Msg) {
        self.apply(WsMsg::Chat(id, msg));
    }

    /// Update the workspace, run the effects, then apply what the effects
    /// queued for the chats, until nothing is left.
    fn apply(&mut self, msg: WsMsg) {
        let effects = self.ws.update(msg);
        for effect in effects {
            self.run(effect);
        }
        self.drain_outboxes();
        self.flush_records();
    }

    fn drain_outboxes(&mut self) {
        for slot in &mut self.ws.chats {
            if let Some(chat) = self.chats.get_mut(&slot.id) {
                for refusal in chat.refusals.drain(..) {
                    slot.state.error(refusal, Vec::new());
                }
            }
        }
        loop {
            let next = self
                .chats
                .iter_mut()
                .find_map(|(id, chat)| chat.out.pop_front().map(|msg| (*id, msg)));
            let Some((id, msg)) = next else { break };
            let effects = self.ws.update(WsMsg::Chat(id, msg));
            for effect in effects {
                self.run(effect);
            }
        }
    }

    fn flush_records(&mut self) {
        for slot in &mut self.ws.chats {
            if let Some(chat) = self.chats.get_mut(&slot.id) {
                chat.flush_record(&mut slot.state, slot.name.as_deref(), false);
            }
        }
    }

    /// The next agent or terminal event, waiting if there is none yet.
    pub async fn next_agent_event(&mut self) -> Option<Incoming> {
        tokio::select! {
            event = self.events.recv() => event.map(|(key, e)| Incoming::Agent(key, e)),
            Some((id, event)) = self.terminal_events.recv() => Some(Incoming::Terminal(id, event)),
            Some(done) = self.settings_done.recv() => Some(Incoming::Settings(done)),
            Some(id) = self.overdue.recv() => Some(Incoming::CancelOverdue(id)),
        }
    }

    /// An event, if one is already queued.
    pub fn try_agent_event(&mut self) -> Option<Incoming> {
        if let Ok((id, event)) = self.terminal_events.try_recv() {
            return Some(Incoming::Terminal(id, event));
        }
        if let Ok(done) = self.settings_done.try_recv() {
            return Some(Incoming::Settings(done));
        }
        if let Ok(id) = self.overdue.try_recv() {
            return Some(Incoming::CancelOverdue(id));
        }
        self.events
            .try_recv()
            .ok()
            .map(|(key, e)| Incoming::Agent(key, e))
    }

    /// The chat whose session this is, on the agent process `key`.
    fn chat_of(&self, key: u64, session_id: &str) -> Option<ChatId> {
        self.chats
            .iter()
            .find(|(_, chat)| chat.owns(key, session_id))
            .map(|(id, _)| *id)
    }

    /// The chats on the agent process `key`.
    fn chats_on(&self, key: u64) -> Vec<ChatId> {
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
    fn slot_of(&mut self, key: u64) -> Option<(&String, &mut AgentSlot)> {
        self.agents.iter_mut().find(|(_, slot)| slot.key == key)
    }

    /// An agent named from its command (no settings block runs it) takes
    /// the name it gives itself (`agentInfo.name`, made a safe word), unless
    /// that word says nothing, is an interpreter's, or is another agent's (a
    /// settings block, the demo, an agent of this run): an agent never gets
    /// the rules or the bypass of another by what it calls itself. The new
    /// name reaches the agent's process slot, its chats (footer, chat list,
    /// decision log, rules) and what new chats and `b` use.
    fn on_agent_info(&mut self, key: u64, info: &acp::AgentInfo) {
        let Some(old) = self.slot_of(key).map(|(name, _)| name.clone()) else {
            return;
        };
        let mut ids: Vec<ChatId> = self
            .chats
            .iter()
            .filter(|(_, chat)| chat.command.name == old)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        let by_command = !ids.is_empty()
            && ids.iter().all(|id| {
                self.chats
                    .get(id)
                    .is_some_and(|c| c.settings.named_by_command)
            });
        let new = settings::agent_slug(&info.name);
        if !by_command || new == old {
            return;
        }
        if let Some(reason) = self.name_refused(&new, &old, ids[0]) {
            tracing::info!(agent = %old, wanted = %new, "agent name from agentInfo refused: {reason}");
            let claim: String = info.name.chars().take(80).collect();
            let line = format!(
                "the agent calls itself `{}`, but {reason}: it stays `{}`",
                one_line(&claim),
                one_line(&old)
            );
            for id in &ids {
                if let Some(slot) = self.ws.chat_mut(*id) {
                    slot.state.info(line.clone());
                }
            }
            return;
        }
        tracing::info!(agent = %old, name = %new, "agent named from agentInfo");
        if let Some(slot) = self.agents.remove(&old) {
            self.agents.insert(new.clone(), slot);
        }
        let commands = self
            .chats
            .values_mut()
            .filter(|c| c.command.name == old)
            .map(|c| (&mut c.command, &mut c.settings));
        let choices = self
            .choices
            .iter_mut()
            .filter(|c| c.command.name == old)
            .map(|c| (&mut c.command, &mut c.options.settings));
        for (command, link) in commands.chain(choices) {
            command.name.clone_from(&new);
            // `b` writes the block under the new name, with this command.
            if let Some(create) = &mut link.create_as {
                create.0.clone_from(&new);
            }
        }
        self.ws.rename_agent(&old, &new);
        for id in ids {
            self.send_chat(id, Msg::AgentNamed(new.clone()));
        }
    }

    /// Why the agent `old` (of chat `id`) may not be called `new`, if it may not.
    fn name_refused(&self, new: &str, old: &str, id: ChatId) -> Option<String> {
        if new.is_empty() {
            return Some("that has no letters or digits warden can use".into());
        }
        if settings::is_launcher(new) {
            return Some(format!("`{new}` is an interpreter or launcher"));
        }
        if new == settings::DEMO_AGENT {
            return Some(format!("`{new}` is warden's demo agent"));
        }
        let running = self
            .agents
            .keys()
            .chain(self.choices.iter().map(|c| &c.command.name))
            .chain(self.chats.values().map(|c| &c.command.name))
            .any(|name| name != old && name == new);
        if running {
            return Some(format!("another agent of this run is `{new}`"));
        }
        let Some(link) = self.chats.get(&id).map(|c| &c.settings) else {
            return Some("its chat is gone".into());
        };
        if !link.writable {
            return Some("the settings file did not load".into());
        }
        // The file as it is now: another warden may have added a block.
        match link.path.as_deref().map(settings::load) {
            Some(Err(_)) => Some("the settings file does not load".into()),
            Some(Ok(Some(file))) if file.agents.contains_key(new) => Some(format!(
                "`[agents.{new}]` of the settings runs another command"
            )),
            _ => None,
        }
    }

    /// Turn an event into state messages for the chat it belongs to.
    pub fn on_agent_event(&mut self, event: Incoming) {
        let (key, event) = match event {
            Incoming::Agent(key, event) => (key, event),
            Incoming::CancelOverdue(id) => {
                let stuck = self
                    .ws
                    .chat(id)
                    .and_then(|c| c.state.turn.as_ref())
                    .is_some_and(|t| t.cancelling);
                if stuck {
                    // Its answer, should it come after all, ends nothing.
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.abandoned_prompts += 1;
                    }
                    self.send_chat(id, Msg::CancelOverdue(CANCEL_GRACE));
                }
                return;
            }
            Incoming::Terminal(id, event) => {
                if let Some(chat) = self.chats.get_mut(&id) {
                    chat.on_terminal_event(event);
                }
                self.drain_outboxes();
                self.flush_records();
                return;
            }
            Incoming::Settings(done) => {
                self.on_settings_done(done);
                return;
            }
        };
        match event {
            AgentEvent::Initialized(abilities, info) => {
                if let Some((_, slot)) = self.slot_of(key) {
                    slot.abilities = Some(abilities);
                    if let Some(cwd) = slot.list_for.take()
                        && abilities.list_sessions
                    {
                        slot.handle.list_sessions(&cwd);
                    }
                }
                if let Some(info) = info {
                    self.on_agent_info(key, &info);
                }
            }
            AgentEvent::Client { call, responder } => match self.chat_of(key, call.session_id()) {
                Some(id) => {
                    if let Some(chat) = self.chats.get_mut(&id) {
                        chat.on_client_call(call, responder);
                    }
                    self.drain_outboxes();
                    self.flush_records();
                }
                None => responder.respond(Err(ClientError::InvalidParams(format!(
                    "unknown session {}",
                    call.session_id()
                )))),
            },
            AgentEvent::SessionStarted { tag, info } => {
                let Some(chat) = self.chats.get_mut(&tag) else {
                    return;
                };
                if chat.agent_key != Some(key) {
                    return;
                }
                chat.loading = None;
                chat.quiet_replay = false;
                chat.session = Some(info.session_id.clone());
                if let Some(slot) = self.ws.chat_mut(tag) {
                    chat.on_session_record(&mut slot.state, &info);
                }
                self.send_chat(tag, Msg::SessionStarted(info));
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
                Some(id) => self.send_chat(id, Msg::Update(update)),
                None => tracing::debug!(%session_id, "update for an unknown session ignored"),
            },
            AgentEvent::Permission { request, responder } => {
                let Some(id) = self.chat_of(key, &request.session_id) else {
                    tracing::warn!(session = %request.session_id, "permission request for an unknown session: cancelled");
                    responder.respond(PermissionOutcome::Cancelled);
                    return;
                };
                let Some(chat) = self.chats.get_mut(&id) else {
                    return;
                };
                let mut request = *request;
                let refusal = self.ws.chat(id).and_then(|slot| {
                    calls::resolve_request_paths(&mut request, &slot.state, &chat.roots)
                });
                if let Some(refusal) = refusal {
                    // warden's own files: refused before any mode or rule can allow it.
                    tracing::warn!(%refusal, "agent permission request refused");
                    let outcome = crate::policy::reject_option(&request.options)
                        .map_or(PermissionOutcome::Cancelled, |o| {
                            PermissionOutcome::Selected(o.id.clone())
                        });
                    responder.respond(outcome);
                    chat.refusals.push(format!(
                        "warden refused the agent's request {:?}: {refusal}",
                        request
                            .fields
                            .title
                            .as_deref()
                            .unwrap_or(&request.tool_call_id)
                    ));
                    self.drain_outboxes();
                    return;
                }
                let request_id = chat.next_request;
                chat.next_request += 1;
                chat.responders.insert(request_id, responder);
                self.send_chat(
                    id,
                    Msg::PermissionRequested {
                        id: request_id,
                        request,
                    },
                );
            }
            AgentEvent::Elicitation { request, responder } => {
                let Some(id) = self.chat_of(key, &request.session_id) else {
                    tracing::warn!(session = %request.session_id, "elicitation for an unknown session: cancelled");
                    responder.respond(&PermissionOutcome::Cancelled);
                    return;
                };
                let Some(chat) = self.chats.get_mut(&id) else {
                    return;
                };
                let request_id = chat.next_request;
                chat.next_request += 1;
                chat.elicitations.insert(request_id, responder);
                self.send_chat(
                    id,
                    Msg::PermissionRequested {
                        id: request_id,
                        request: *request,
                    },
                );
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
                            .is_none_or(|c| c.state.connection == Connection::Down);
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
                        self.ws.add_to_picker(items);
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

    fn run(&mut self, effect: WsEffect) {
        match effect {
            WsEffect::Chat(id, effect) => self.run_chat(id, effect),
            WsEffect::NewChat { agent } => self.new_chat(&agent),
            WsEffect::Closed(mut slot) => self.close_chat(&mut slot),
            WsEffect::OpenPicker => self.open_picker(),
            WsEffect::Reopen(summary) => self.reopen(&summary),
        }
    }

    /// The agent process a chat's session lives on.
    fn agent_of(&self, chat: &Chat) -> Option<&AgentHandle> {
        let slot = self.agents.get(&chat.command.name)?;
        (chat.agent_key == Some(slot.key)).then_some(&slot.handle)
    }

    fn run_chat(&mut self, id: ChatId, effect: Effect) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        match effect {
            Effect::SendPrompt(text) => match (&chat.session, self.agent_of(chat)) {
                (Some(session), Some(agent)) => agent.prompt(session, &text),
                _ => self.send_chat(id, Msg::TurnFailed("the agent is not connected".into())),
            },
            Effect::CancelTurn => {
                if let (Some(session), Some(agent)) = (&chat.session, self.agent_of(chat)) {
                    agent.cancel(session);
                }
                // An agent that never answers the cancelled prompt must not
                // leave the chat working forever.
                let overdue = self.overdue_tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(CANCEL_GRACE).await;
                    let _ = overdue.send(id);
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
                } else if let Some((call, responder, path)) = chat.client_pending.remove(&request) {
                    let allowed = outcome == PermissionOutcome::Selected(CLIENT_ALLOW.into());
                    chat.finish_client_call(request, call, responder, path, allowed);
                } else {
                    tracing::warn!(chat = id, request, "no responder for a permission answer");
                }
            }
            Effect::RestartAgent => self.restart(id),
            Effect::Quit => self.quit = true,
            Effect::LogDecision(mut record) => {
                record.time = decision_log::now_rfc3339();
                tracing::info!(
                    decision = %record.decision,
                    source = %record.source,
                    tool_call = %record.tool_call_id,
                    "permission decision"
                );
                if let Some(path) = &chat.decision_log
                    && let Err(err) = decision_log::append(path, &record)
                {
                    let message = format!(
                        "could not append to the decision log {}: {err}",
                        path.display()
                    );
                    if let Some(slot) = self.ws.chat_mut(id) {
                        slot.state.error(message, Vec::new());
                    }
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
        }
    }

    /// Restart a chat's agent and continue the chat's session on it (see
    /// [`acp::SessionOpen::prefer_resume`]). Every other chat of the same
    /// process restarts with it: one `r` brings back all the chats a crash
    /// took down (and a stuck agent ended here takes its chats along).
    fn restart(&mut self, id: ChatId) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        let name = chat.command.name.clone();
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

    /// A new chat with `agent`, in the directory of the chat on screen.
    fn new_chat(&mut self, agent: &str) {
        let Some(choice) = self.choices.iter().find(|c| c.command.name == agent) else {
            self.ws.notice = Some(format!("no agent named `{agent}`"));
            return;
        };
        let mut command = choice.command.clone();
        let mut options = choice.options.clone();
        if let Some(current) = self.ws.active_id().and_then(|id| self.chats.get(&id)) {
            command.cwd.clone_from(&current.command.cwd);
            // What this run learnt of the settings holds for new chats too.
            options.settings.bypassed = self.state().bypassed_agents.clone();
            options.rules = self.state().rules.clone();
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
    fn open_chat(&mut self, command: AgentCommand, options: ChatOptions, line: Option<String>) {
        let id = self.add_chat(command, options);
        if let Some(line) = line {
            self.state_mut().info(line);
        }
        if let Err(err) = self.connect(id) {
            self.send_chat(id, Msg::ConnectFailed(err.to_string()));
        }
    }

    /// Where chats are recorded (none when recording is off).
    fn store(&self) -> Option<crate::chats::ChatStore> {
        self.chats.values().find_map(|c| c.chat_store.clone())
    }

    /// Drop a closed chat's IO; its agent ends when no chat uses it.
    fn close_chat(&mut self, slot: &mut ChatSlot) {
        let id = slot.id;
        let Some(mut chat) = self.chats.remove(&id) else {
            return;
        };
        // The agent may keep serving other chats: it can let this session go.
        if let (Some(session), Some(slot)) = (&chat.session, self.agents.get(&chat.command.name))
            && chat.agent_key == Some(slot.key)
        {
            slot.handle.close_session(session);
        }
        chat.detach();
        // What happened last (the cancellations) goes into its record.
        chat.out.clear();
        chat.flush_record(&mut slot.state, slot.name.as_deref(), true);
        self.closed.push(id);
        let name = chat.command.name.clone();
        let used = self.chats.values().any(|c| c.command.name == name);
        if !used && let Some(slot) = self.agents.remove(&name) {
            tokio::spawn(slot.handle.shutdown(SHUTDOWN_GRACE));
        }
    }

    /// Fill the picker: the recorded chats now, and the sessions of running
    /// agents that can list them as they answer.
    fn open_picker(&mut self) {
        let items = self.store().map(|s| s.list()).unwrap_or_default();
        self.ws.show_picker(items);
        let cwd = self
            .ws
            .active_id()
            .and_then(|id| self.chats.get(&id))
            .map(|c| c.command.cwd.clone());
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
    /// new chat. An untouched chat on screen (nothing sent yet) gives way.
    fn reopen(&mut self, summary: &crate::chats::ChatSummary) {
        let (choice, resume, mode) = if summary.is_agent_listed() {
            let Some(choice) = self.choice(&summary.agent, &[]) else {
                return;
            };
            let resume = ResumeChat {
                chat_id: None,
                session_id: summary.session_id.clone(),
                entries: Vec::new(),
                title: summary.title.clone(),
                name: None,
            };
            (choice, resume, None)
        } else {
            let loaded = match self.store().map(|s| s.load(&summary.chat_id)) {
                Some(Ok(loaded)) => loaded,
                Some(Err(err)) => {
                    self.ws.notice = Some(format!("cannot reopen the chat: {err}"));
                    return;
                }
                None => {
                    self.ws.notice = Some("chats are not recorded in this run".into());
                    return;
                }
            };
            let Some(choice) = self.choice(&loaded.header.agent, &loaded.header.command) else {
                return;
            };
            let mode = loaded.mode.as_deref().and_then(|m| m.parse().ok());
            (choice, ResumeChat::from_loaded(&loaded), mode)
        };
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
            let effects = self.ws.discard_untouched(before);
            for effect in effects {
                self.run(effect);
            }
        }
    }

    /// What runs a reopened chat's agent: the agent of that name, else the
    /// command line the record kept (`-- CMD` agents), with the first
    /// chat's rules and settings but no bypass of its own.
    fn choice(&mut self, agent: &str, command_line: &[String]) -> Option<AgentChoice> {
        if let Some(choice) = self.choices.iter().find(|c| c.command.name == agent) {
            return Some(choice.clone());
        }
        let (Some((program, args)), Some(first)) =
            (command_line.split_first(), self.choices.first())
        else {
            self.ws.notice = Some(format!(
                "`{}` is not an agent warden knows now: start warden with it to reopen this chat",
                one_line(agent)
            ));
            return None;
        };
        let mut options = first.options.clone();
        options.bypass = false;
        options.agent_plan_mode = None;
        options.asking_mode = None;
        options.caps = ClientCaps::default();
        options.settings.agent_block = None;
        options.settings.create_as = Some((agent.to_string(), program.clone(), args.to_vec()));
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

    /// Carry out a settings edit off the event loop (the writer thread waits
    /// for the lock, reads, edits and replaces the file); the outcome comes
    /// back as [`Incoming::Settings`].
    fn edit_settings(&mut self, id: ChatId, edit: SettingsEdit) {
        let Some(chat) = self.chats.get(&id) else {
            return;
        };
        let settings_agent = self
            .ws
            .chat(id)
            .and_then(|c| c.state.settings_agent.clone());
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
                match (value, &settings_agent, &chat.settings.create_as) {
                    // No block yet: the writer picks it under the lock (the one
                    // that runs this command, else a new one with a free name).
                    (true, None, Some((name, program, args))) => Edit::SetBypass {
                        agent: name.clone(),
                        value,
                        create: Some((program.clone(), args.clone())),
                    },
                    _ => Edit::SetBypass {
                        agent,
                        value,
                        create: None,
                    },
                }
            }
            SettingsEdit::AppendRule(rule) => Edit::AppendRule(rule),
            SettingsEdit::RemoveRule { index, expected } => Edit::RemoveRule { index, expected },
        };
        let job = SettingsJob {
            chat: id,
            agent: chat.command.name.clone(),
            path,
            edit,
        };
        if let Err(job) = self.writer.send(job) {
            // No writer thread: write here rather than lose the choice.
            let done = job.0.run();
            self.on_settings_done(done);
        }
    }

    /// A settings write finished: every chat follows the file; the one that
    /// wrote it says so (or why it could not).
    fn on_settings_done(&mut self, done: SettingsDone) {
        let SettingsDone { job, result } = done;
        let applied = match result {
            Ok(applied) => applied,
            Err(err) => {
                self.send_chat(job.chat, Msg::SettingsWriteFailed(err.to_string()));
                return;
            }
        };
        let path = job.path.display();
        let (note, agent_block) = match &job.edit {
            Edit::SetBypass { value, create, .. } => {
                let block = applied.agent.clone().unwrap_or_default();
                let note = if *value {
                    format!(
                        "bypass for `{}` saved to {path} ([agents.{}])",
                        one_line(&block),
                        one_line(&block)
                    )
                } else {
                    format!("bypass for `{}` removed from {path}", one_line(&block))
                };
                (note, create.as_ref().map(|_| block))
            }
            Edit::AppendRule(_) => (format!("rule saved to {path}"), None),
            Edit::RemoveRule { .. } => (format!("rule removed from {path}"), None),
        };
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

    /// Answer everything still pending in every chat, close the agents'
    /// stdin and end their process groups after a grace period.
    pub async fn shutdown(&mut self) {
        if !self.ws.chats.iter().all(|c| c.state.quitting) {
            self.handle(Msg::Action(Action::Quit));
        }
        for slot in &mut self.ws.chats {
            if let Some(chat) = self.chats.get_mut(&slot.id) {
                chat.detach();
                chat.flush_record(&mut slot.state, slot.name.as_deref(), true);
            }
        }
        // A choice saved just before quitting still lands in the file.
        self.writer.finish().await;
        let agents: Vec<AgentSlot> = self.agents.drain().map(|(_, slot)| slot).collect();
        futures::future::join_all(
            agents
                .into_iter()
                .map(|slot| slot.handle.shutdown(SHUTDOWN_GRACE)),
        )
        .await;
    }
}

/// A sender whose messages reach `shared` tagged with `tag` (an agent's
/// events with its spawn key, a chat's terminal events with its id), in order.
pub(super) fn tagged<K, T>(
    tag: K,
    shared: mpsc::UnboundedSender<(K, T)>,
) -> mpsc::UnboundedSender<T>
where
    K: Copy + Send + 'static,
    T: Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if shared.send((tag, message)).is_err() {
                break;
            }
        }
    });
    tx
}

/// A path as shown: `~` for the home directory.
pub fn display_path(path: &std::path::Path) -> String {
    let shown = path.display().to_string();
    match directories::BaseDirs::new() {
        Some(base) => {
            let home = base.home_dir().display().to_string();
            match shown.strip_prefix(&home) {
                Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                    format!("~{rest}")
                }
                _ => shown,
            }
        }
        None => shown,
    }
}

/// When to draw: only after something changed, and at most once per
/// [`FRAME`]. While nothing changes there is no deadline, so the loop sleeps
/// until input or an agent event arrives (no tick, no wakeup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameClock {
    dirty: bool,
    last_draw: Option<Instant>,
}

impl Default for FrameClock {
    fn default() -> Self {
        // The first frame is drawn at once.
        FrameClock {
            dirty: true,
            last_draw: None,
        }
    }
}

impl FrameClock {
    /// Something changed: a frame is owed.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether to draw now.
    pub fn should_draw(&self, now: Instant) -> bool {
        self.dirty && self.last_draw.is_none_or(|t| now >= t + FRAME)
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.last_draw = Some(now);
    }

    /// When the loop must wake to draw; `None` while nothing is owed.
    pub fn deadline(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(self.last_draw.map_or_else(Instant::now, |t| t + FRAME))
    }
}

/// Run the TUI until the user quits. Draws only when something changed,
/// never more often than [`FRAME`].
pub async fn run_tui(app: &mut App, terminal: &mut crate::tui::Tui) -> std::io::Result<()> {
    let mut input = crossterm::event::EventStream::new();
    let mut signals = QuitSignals::new()?;
    let mut views = ui::Views::new();
    let mut clock = FrameClock::default();
    loop {
        for id in app.take_closed() {
            views.forget(id);
        }
        if clock.should_draw(Instant::now()) {
            terminal.draw(|frame| ui::draw_workspace(frame, &app.ws, &mut views))?;
            clock.drawn(Instant::now());
        }
        if app.should_quit() {
            break;
        }
        let deadline = clock.deadline();
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    let composer_empty = app.state().composer.is_empty();
                    let lists = !matches!(app.ws.focus, ChatFocus::Chat);
                    match keymap::map_event(&event, composer_empty) {
                        Some(Input::Action(action)) => app.handle(Msg::Action(action)),
                        // Over a list, the wheel and the page keys move the selection.
                        Some(Input::Scroll(Scroll::Up(_) | Scroll::PageUp)) if lists => {
                            app.handle(Msg::Action(Action::Up));
                        }
                        Some(Input::Scroll(Scroll::Down(_) | Scroll::PageDown)) if lists => {
                            app.handle(Msg::Action(Action::Down));
                        }
                        Some(Input::Scroll(scroll)) => match app.ws.active_id() {
                            Some(id) => views.scroll(id, scroll),
                            None => continue,
                        },
                        Some(Input::Click(column, row)) => match views.hit(column, row) {
                            Some(action) => app.handle(Msg::Action(action)),
                            None => continue,
                        },
                        Some(Input::Resize) => {}
                        None => continue,
                    }
                    clock.mark_dirty();
                }
                Some(Err(err)) => return Err(err),
                None => break,
            },
            Some(event) = app.next_agent_event() => {
                app.on_agent_event(event);
                // Take whatever else already arrived into the same frame.
                while let Some(event) = app.try_agent_event() {
                    app.on_agent_event(event);
                }
                clock.mark_dirty();
            }
            _ = sleep_until(deadline), if deadline.is_some() => {}
            name = signals.recv() => {
                // Leave as Ctrl-D does: the caller answers what is pending,
                // ends the agents and restores the terminal.
                tracing::info!(signal = name, "quitting on a signal");
                break;
            }
        }
    }
    Ok(())
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

#[cfg(test)]
mod frame_tests {
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

    #[test]
    fn idle_has_no_deadline_and_bursts_share_one_frame() {
        let t0 = Instant::now();
        let mut clock = FrameClock::default();
        assert!(clock.should_draw(t0), "the first frame at once");
        clock.drawn(t0);
        assert_eq!(clock.deadline(), None, "nothing changed: no wakeup");
        assert!(!clock.should_draw(t0 + FRAME * 10));
        // A burst right after a frame: no second frame inside the interval.
        clock.mark_dirty();
        clock.mark_dirty();
        assert!(!clock.should_draw(t0 + FRAME / 2));
        assert_eq!(
            clock.deadline(),
            Some(t0 + FRAME),
            "woken once, at the next frame"
        );
        assert!(clock.should_draw(t0 + FRAME));
        clock.drawn(t0 + FRAME);
        assert_eq!(clock.deadline(), None);
        // A change long after the last frame draws at once.
        clock.mark_dirty();
        assert!(clock.should_draw(t0 + FRAME * 5));
    }
}

/// Why a headless run did not end with `end_turn`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExecError {
    /// The agent could not be reached, exited, or failed the prompt.
    #[error("{0}")]
    Agent(String),
    /// The turn ended for another reason than `end_turn`.
    #[error("the turn ended with {0}")]
    Stopped(String),
    /// The agent did not start, or the turn did not end, in time.
    #[error("{0}")]
    TimedOut(String),
    /// A signal (SIGTERM, SIGHUP, SIGINT) stopped the run.
    #[error("stopped by {0}")]
    Interrupted(&'static str),
}

impl ExecError {
    /// The exit status of `warden exec` for this failure: 124 for a time
    /// out (as `timeout(1)`), 130 for a signal, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ExecError::TimedOut(_) => 124,
            ExecError::Interrupted(_) => 130,
            ExecError::Agent(_) | ExecError::Stopped(_) => 1,
        }
    }
}

/// How long `warden exec` waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecLimits {
    /// For the agent to initialise and open its session.
    pub start: Duration,
    /// For the turn, from the prompt to the agent's answer (`None`: no limit).
    pub turn: Option<Duration>,
}

/// What woke a headless run.
enum Wake {
    Event(Option<Box<Incoming>>),
    Deadline,
    Signal(&'static str),
}

async fn wake(app: &mut App, deadline: Option<Instant>, signals: &mut Option<QuitSignals>) -> Wake {
    let signal = async {
        match signals.as_mut() {
            Some(signals) => signals.recv().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        event = app.next_agent_event() => Wake::Event(event.map(Box::new)),
        _ = sleep_until(deadline), if deadline.is_some() => Wake::Deadline,
        name = signal => Wake::Signal(name),
    }
}

/// Run one turn without a terminal (`warden exec`): the agent's text goes to
/// `out` as it streams, one line per decision (and error) to `err`. The
/// agent has `limits.start` to open its session and `limits.turn` for the
/// turn; a time out or a signal cancels the turn (pending requests are
/// answered) and ends the run with [`ExecError::TimedOut`] or
/// [`ExecError::Interrupted`].
pub async fn run_exec(
    app: &mut App,
    prompt: &str,
    limits: ExecLimits,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> Result<(), ExecError> {
    let mut printer = Printer::default();
    let mut signals = QuitSignals::new().ok();
    let start_by = Instant::now() + limits.start;
    while !matches!(app.state().connection, Connection::Ready { .. }) {
        if app.state().connection == Connection::Down {
            printer.flush(app.state(), out, err);
            return Err(ExecError::Agent(
                app.state()
                    .failed
                    .clone()
                    .unwrap_or_else(|| "the agent is not running".into()),
            ));
        }
        match wake(app, Some(start_by), &mut signals).await {
            Wake::Event(Some(event)) => app.on_agent_event(*event),
            Wake::Event(None) => {
                return Err(ExecError::Agent("the agent connection closed".into()));
            }
            Wake::Deadline => {
                printer.flush(app.state(), out, err);
                return Err(ExecError::TimedOut(format!(
                    "the agent did not start a session within {} s (no answer to initialize or session/new)",
                    limits.start.as_secs()
                )));
            }
            Wake::Signal(name) => return Err(ExecError::Interrupted(name)),
        }
    }
    app.handle(Msg::Action(Action::Paste(prompt.to_string())));
    app.handle(Msg::Action(Action::Submit));
    let turn_by = limits.turn.map(|limit| Instant::now() + limit);
    let mut stopped: Option<ExecError> = None;
    let mut give_up: Option<Instant> = None;
    while app.state().is_busy() {
        let deadline = give_up.or(turn_by);
        match wake(app, deadline, &mut signals).await {
            Wake::Event(Some(event)) => app.on_agent_event(*event),
            Wake::Event(None) => break,
            // The agent did not end the cancelled turn either: stop waiting.
            Wake::Deadline if give_up.is_some() => break,
            Wake::Deadline => {
                stopped = Some(ExecError::TimedOut(format!(
                    "the turn did not end within {} s; cancelled it",
                    limits.turn.map_or(0, |t| t.as_secs())
                )));
                app.handle(Msg::Action(Action::Cancel));
                give_up = Some(Instant::now() + CANCEL_GRACE);
            }
            Wake::Signal(name) => {
                stopped = Some(ExecError::Interrupted(name));
                app.handle(Msg::Action(Action::Cancel));
                give_up = Some(Instant::now() + CANCEL_GRACE);
            }
        }
        printer.flush(app.state(), out, err);
    }
    printer.flush(app.state(), out, err);
    if let Some(stopped) = stopped {
        return Err(stopped);
    }
    if let Some(failed) = &app.state().failed {
        return Err(ExecError::Agent(failed.clone()));
    }
    match &app.state().last_stop {
        Some(crate::model::StopReason::EndTurn) => Ok(()),
        Some(other) => Err(ExecError::Stopped(crate::sanitize::one_line(
            other.as_str(),
        ))),
        None => Err(ExecError::Agent("the turn did not end".into())),
    }
}

/// Streams new transcript content of a headless run.
#[derive(Default)]
struct Printer {
    /// Entries before this index are fully printed.
    done: usize,
    /// Bytes of entry `done` already printed (agent text still streaming).
    partial: usize,
}

impl Printer {
    fn flush(
        &mut self,
        state: &AppState,
        out: &mut impl std::io::Write,
        err: &mut impl std::io::Write,
    ) {
        use crate::sanitize::visible;
        use crate::state::EntryKind;
        let entries = state.transcript.entries();
        while self.done < entries.len() {
            let last = self.done + 1 == entries.len();
            match &entries[self.done].kind {
                EntryKind::Agent(text) => {
                    let _ = write!(out, "{}", visible(&text[self.partial.min(text.len())..]));
                    let _ = out.flush();
                    if last {
                        self.partial = text.len();
                        return;
                    }
                    if !text.ends_with('\n') {
                        let _ = writeln!(out);
                    }
                }
                EntryKind::Decision { text, .. } => {
                    let _ = writeln!(err, "{}", visible(text));
                }
                EntryKind::Error { message, detail } => {
                    let _ = writeln!(err, "error: {}", visible(message));
                    for line in detail {
                        let _ = writeln!(err, "  {}", visible(line));
                    }
                }
                _ => {}
            }
            self.done += 1;
            self.partial = 0;
        }
    }
}

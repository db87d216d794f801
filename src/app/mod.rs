//! The runtime: one message pump between the outside world and the pure
//! state. Terminal input and agent events come in; each becomes messages on
//! the app's one queue; [`App`] applies them to the workspace in order, runs
//! the effects that come back, and whatever the effects learn (an answer, a
//! failure, a line to show) is queued as a message again, never written into
//! the state directly. IO that may block (the agent's file calls, settings
//! writes, reading the settings, the chats' records, the decision log, the
//! prompt history, `/export`, the picker's records) runs off the loop and
//! comes back as an [`Incoming`] event.
//!
//! - `agents.rs`: the agent processes (one per agent name) and routing their
//!   events to the chat that owns the session; restarts.
//! - `effects.rs`: running the state's effects (prompts, answers, new chats,
//!   the picker, reopening).
//! - `settings_io.rs`: settings writes on a writer task.
//! - `disk.rs`: the other disk IO (records, decision log, history,
//!   `/export`, the picker's reads) on one ordered writer task.
//! - `calls.rs`: the agent's file and terminal calls, their IO on a worker.
//! - `chat.rs`, `record.rs`: one chat's IO and its record.
//! - `tui_loop.rs`: the frame clock and `run_tui`; `exec.rs`: `warden exec`.

mod agent_name;
mod agents;
mod asks;
mod calls;
mod chat;
mod checkpoints;
mod disk;
mod drafts;
mod early;
mod effects;
mod exec;
mod facts;
mod focus;
mod network;
mod options;
mod plan_process;
mod record;
mod remote;
mod settings_io;
mod signals;
mod tui_loop;

pub use disk::DiskDone;
pub use exec::{ExecError, ExecLimits, run_exec};
pub use focus::Extras;
pub use options::{AgentChoice, ChatOptions, Notify, SettingsLink};
pub use record::ResumeChat;
pub use settings_io::SettingsDone;
pub(crate) use signals::QuitSignals;
pub use tui_loop::{FRAME, FrameClock, run_tui};

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::acp::{AgentCommand, AgentEvent};
use crate::client::terminal::TerminalEvent;
use crate::state::{Action, ChatId, ChatState, Msg, Workspace, WsMsg};
use agents::AgentSlot;
use chat::Chat;

/// How long the agent gets to exit by itself after its stdin closes.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// How long a cancelled turn may take to end before warden ends it on its
/// side (the TUI) or gives up waiting (`warden exec`).
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Something that happened outside the state: an agent, a terminal, or IO
/// the runtime ran off the loop.
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
    /// A settings write finished (on the writer task).
    Settings(Box<SettingsDone>),
    /// A chat's cancelled turn has had [`CANCEL_GRACE`] to end.
    CancelOverdue(ChatId),
    /// A chat's file call: its IO ran off the loop.
    Files(ChatId, Box<calls::FsStep>),
    /// The settings file's verdict on the name an agent gave itself.
    AgentName(agent_name::NameCheck),
    /// A message for a chat from work done off the loop (the file list of
    /// an `@` mention).
    Chat(ChatId, Msg),
    /// What a disk write sent back (see `disk.rs`).
    Disk(DiskDone),
    /// What the checkpoint worker answered for a chat (see `checkpoints.rs`).
    Checkpoint(ChatId, Box<crate::state::checkpoints::CheckpointMsg>),
    /// A prompt held for its checkpoint has waited long enough (its token).
    CheckpointWait(ChatId, u64),
    /// A job that held an agent's events was dropped before it ran (see
    /// `agents::Hold`): they go on.
    Released(u64),
    /// A connection the agent of this spawn key wants (through warden's proxy).
    Net(u64, Box<crate::net::ConnectAsk>),
    /// A connection one of this chat's terminals wants (through the
    /// terminal's own proxy): asked in that chat.
    TerminalNet(ChatId, Box<crate::net::ConnectAsk>),
}

// Every agent event is moved through the inbox's channel and into the pump:
// the big, rare payloads (tool calls, permission requests, file steps, the
// SDK's responders) are boxed so that a text chunk moves few bytes (as
// rustc's `static_assert_size!` keeps its hot enums small).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<Incoming>() <= 160);
    assert!(std::mem::size_of::<AgentEvent>() <= 144);
    assert!(std::mem::size_of::<Msg>() <= 104);
};

/// The running application: every chat's state (the workspace) plus the IO
/// each needs, and the agent processes they share (one per agent name).
pub struct App {
    /// The pure state of every chat (public so that tests can look at it).
    pub ws: Workspace,
    /// Messages for the workspace, applied in order by [`App::pump`].
    queue: VecDeque<WsMsg>,
    /// Each chat's IO, by id (ordered: a few chats, looked up on every event).
    chats: BTreeMap<ChatId, Chat>,
    agents: HashMap<String, AgentSlot>,
    next_key: u64,
    /// Every [`Incoming`] event arrives here.
    inbox_tx: mpsc::UnboundedSender<Incoming>,
    inbox: mpsc::UnboundedReceiver<Incoming>,
    /// Writes the settings file off the loop.
    writer: settings_io::Writer,
    /// Writes the records, the decision log, the history, exports, in order.
    disk: disk::DiskWriter,
    /// Runs the agent's file calls off the loop, in order.
    files: calls::FileWorker,
    /// What new chats can run, by agent name.
    choices: Vec<AgentChoice>,
    /// Closed chats whose render caches the TUI should drop.
    closed: Vec<ChatId>,
    quit: bool,
    /// When the bell and the desktop notification last went off.
    last_alert: Option<Instant>,
    /// A message to open in the external editor (see [`App::take_editor`]).
    editor: Option<(ChatId, String)>,
    /// A terminal login to run in the foreground (see [`App::take_login`]).
    login: Option<(ChatId, Option<String>)>,
    /// Per chat, how many remembered prompts are in the history file.
    history_saved: BTreeMap<ChatId, u64>,
    /// Updates for sessions not known yet (see `early.rs`).
    early: early::Early,
    /// Each chat's checkpoint workspace and the worker (see `checkpoints.rs`).
    checkpoints: checkpoints::Checkpoints,
    /// The server of waiting cards for another device, when on (`remote.rs`).
    remote: remote::RemoteSlot,
}

impl App {
    /// An app with one chat for `command` and default options; the agent is
    /// not started yet.
    pub fn new(command: AgentCommand) -> Self {
        App::with_options(command, ChatOptions::default())
    }

    /// An app with one chat for `command`; the agent is not started yet.
    /// New chats can run the same agent, in `options.new_chat_mode` (see
    /// [`App::set_choices`] for more agents).
    pub fn with_options(command: AgentCommand, options: ChatOptions) -> Self {
        let (inbox_tx, inbox) = mpsc::unbounded_channel();
        let first = AgentChoice {
            command: command.clone(),
            options: options.for_new_chat(),
        };
        let mut app = App {
            ws: Workspace::new(vec![command.name.clone()]),
            queue: VecDeque::new(),
            chats: BTreeMap::new(),
            agents: HashMap::new(),
            next_key: 0,
            writer: settings_io::Writer::new(inbox_tx.clone()),
            disk: disk::DiskWriter::start(inbox_tx.clone()),
            files: calls::FileWorker::new(inbox_tx.clone()),
            inbox_tx,
            inbox,
            choices: vec![first],
            closed: Vec::new(),
            quit: false,
            last_alert: None,
            editor: None,
            login: None,
            history_saved: BTreeMap::new(),
            early: early::Early::new(),
            checkpoints: checkpoints::Checkpoints::default(),
            remote: remote::RemoteSlot::default(),
        };
        app.add_chat(command, options);
        app
    }

    /// The agents new chats can run besides those it has (the first chat's
    /// agent stays first; an agent it already has keeps its options).
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
        let agents = self.choices.iter().map(|c| c.command.name.clone());
        self.queue.push_back(WsMsg::Agents(agents.collect()));
        self.pump();
    }

    fn add_chat(&mut self, command: AgentCommand, options: ChatOptions) -> ChatId {
        let id = self.ws.next_chat_id();
        // A reopened chat keeps the name the user gave it.
        let name = options.resume.as_ref().and_then(|r| r.name.clone());
        let mut checkpoints = options.checkpoints.clone();
        let (chat, state) = Chat::new(id, command, options, &self.inbox_tx, self.disk.queue());
        // The files the agent's calls never touch are the files an undo
        // never puts back.
        if let Some(options) = checkpoints.as_mut() {
            options.own.extend(chat.roots.protected().places());
            if let Some(profile) = &chat.sandbox {
                options.writable.extend(profile.writable.iter().cloned());
            }
        }
        let roots = chat.roots.as_slice().to_vec();
        // No program warden runs for itself comes from where this agent writes.
        crate::own_path::distrust(roots.iter().cloned());
        if let Some(profile) = &chat.sandbox {
            crate::own_path::distrust(profile.writable.iter().cloned());
        }
        self.checkpoints
            .register(id, checkpoints, roots, &state.session.chat_id);
        self.checkpoint_baseline(id);
        self.chats.insert(id, chat);
        let id = self.ws.add_chat(state);
        if let Some(slot) = self.ws.chat_mut(id) {
            slot.name = name;
        }
        self.load_history(id);
        id
    }

    /// The chat on screen.
    pub fn state(&self) -> &ChatState {
        &self.ws.chats[self.ws.active].state
    }

    /// The chat on screen, to change (tests set up a state this way).
    pub fn state_mut(&mut self) -> &mut ChatState {
        &mut self.ws.chats[self.ws.active].state
    }

    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Closed chats since the last call (the TUI drops their caches).
    pub(crate) fn take_closed(&mut self) -> Vec<ChatId> {
        std::mem::take(&mut self.closed)
    }

    /// Apply a message: a key goes to the workspace (and from there to the
    /// chat on screen); anything else to the chat on screen.
    pub fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Action(action) => self.queue.push_back(WsMsg::Action(action)),
            Msg::Key { action, at } => self.queue.push_back(WsMsg::Key(action, at)),
            Msg::Tick(now) => self.queue.push_back(WsMsg::Tick(now)),
            other => {
                if let Some(id) = self.ws.active_id() {
                    self.send_chat(id, other);
                }
            }
        }
        self.pump();
    }

    /// Queue a message for one chat (applied by the running [`App::pump`],
    /// or the next one).
    fn send_chat(&mut self, id: ChatId, msg: Msg) {
        let told = self.sandbox_told(id, &msg);
        self.queue.push_back(WsMsg::Chat(id, msg));
        if let Some(line) = told
            && let Some(chat) = self.chats.get_mut(&id)
            && !chat.sandbox_told.contains(&line)
        {
            chat.sandbox_told.push(line.clone());
            self.queue.push_back(WsMsg::Chat(id, Msg::Note(line)));
        }
    }

    /// A tool's or an exited terminal's output that shows the sandbox
    /// denying a path: the line that says so, and which setting allows it.
    fn sandbox_told(&self, id: ChatId, msg: &Msg) -> Option<String> {
        let chat = self.chats.get(&id)?;
        let profile = chat.process_sandbox.as_ref().or(chat.sandbox.as_ref())?;
        match msg {
            Msg::Update(update) => crate::sandbox::told(profile, update),
            Msg::TerminalOutput { view, .. } if view.exit.is_some() => {
                crate::sandbox::told_terminal(profile, &view.output)
            }
            _ => None,
        }
    }

    /// Apply the queued messages in order: each one's effects run (and may
    /// queue more), then what the chats' IO queued follows; the chats'
    /// records take what settled. Returns when nothing is left. Never called
    /// from inside itself: effects only queue.
    fn pump(&mut self) {
        loop {
            while let Some(msg) = self.queue.pop_front() {
                for effect in self.ws.update(msg) {
                    self.remote_saw(&effect);
                    self.run(effect);
                }
                self.collect_outboxes();
            }
            self.flush_records();
            self.flush_history();
            self.collect_outboxes();
            // A card that came (or became the selected one) is seen from now.
            if self.queue.is_empty() && self.ws.needs_clock() {
                self.queue.push_back(WsMsg::Tick(std::time::Instant::now()));
            }
            if self.queue.is_empty() && !self.follow_plan() {
                self.publish_remote();
                return;
            }
        }
    }

    /// Move what each chat's IO queued (messages, file IO) to the app's
    /// queue and the file worker, chat by chat.
    fn collect_outboxes(&mut self) {
        // The common case (a streamed chunk queued nothing): no allocation.
        if self
            .chats
            .values()
            .all(|chat| chat.out.is_empty() && chat.jobs.is_empty())
        {
            return;
        }
        // In id order (the map is ordered).
        let ids: Vec<ChatId> = self.chats.keys().copied().collect();
        for id in ids {
            let Some(chat) = self.chats.get_mut(&id) else {
                continue;
            };
            let out: Vec<Msg> = chat.out.drain(..).collect();
            let jobs: Vec<_> = chat.jobs.drain(..).collect();
            for msg in out {
                self.send_chat(id, msg);
            }
            for job in jobs {
                self.files.send(id, job);
            }
        }
    }

    fn flush_records(&mut self) {
        for slot in &self.ws.chats {
            if let Some(chat) = self.chats.get_mut(&slot.id) {
                chat.flush_record(&slot.state, slot.name.as_deref(), false);
            }
        }
    }

    /// The next event, waiting if there is none yet.
    pub async fn next_agent_event(&mut self) -> Option<Incoming> {
        self.inbox.recv().await
    }

    /// An event, if one is already queued.
    pub fn try_agent_event(&mut self) -> Option<Incoming> {
        self.inbox.try_recv().ok()
    }

    /// Answer everything still pending in every chat, close the agents'
    /// stdin and end their process groups after a grace period.
    pub async fn shutdown(&mut self) {
        // Nobody answers from afar any more.
        self.stop_remote();
        if !self.ws.chats.iter().all(|c| c.state.view.quitting) {
            self.handle(Msg::Action(Action::Quit));
        }
        for slot in &self.ws.chats {
            if let Some(chat) = self.chats.get_mut(&slot.id) {
                chat.detach();
                chat.flush_record(&slot.state, slot.name.as_deref(), true);
            }
        }
        // File IO already allowed, and a choice saved just before quitting,
        // still land.
        self.collect_outboxes();
        self.files.finish().await;
        self.writer.finish().await;
        // Every record line and decision queued so far lands before exit.
        self.disk.finish().await;
        self.note_stopped_records();
        let agents: Vec<AgentSlot> = self.agents.drain().map(|(_, slot)| slot).collect();
        futures::future::join_all(
            agents
                .into_iter()
                .map(|slot| slot.handle.shutdown(SHUTDOWN_GRACE)),
        )
        .await;
    }
}

/// A sender whose messages reach the app's inbox, each wrapped by `wrap`
/// (a chat's terminal events with its id), in order. (An agent's events
/// need no task between: `acp::Events` puts them in the inbox at once.)
pub(super) fn forward<T>(
    inbox: mpsc::UnboundedSender<Incoming>,
    wrap: impl Fn(T) -> Incoming + Send + 'static,
) -> mpsc::UnboundedSender<T>
where
    T: Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if inbox.send(wrap(message)).is_err() {
                break;
            }
        }
    });
    tx
}

/// A path as shown: `~` for the home directory.
pub(crate) fn display_path(path: &std::path::Path) -> String {
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

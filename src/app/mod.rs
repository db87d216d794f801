//! The runtime: one `select!` loop that owns all IO. It feeds terminal input
//! and agent events to the pure state, runs the effects that come back, keeps
//! the permission responders keyed by request id, and redraws at most once
//! per frame interval, only when something changed.

mod calls;
mod record;

pub use record::ResumeChat;

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use std::path::PathBuf;

use crate::acp::{
    self, AgentCommand, AgentEvent, AgentHandle, ClientCall, ClientCaps, ClientError,
    ClientResponder, LaunchError, PermissionResponder,
};
use crate::client::fs::Roots;
use crate::client::terminal::{TerminalEvent, Terminals};
use crate::decision_log;
use crate::model::PermissionOutcome;
use crate::policy::{AgentPolicy, Mode, Rule};
use crate::settings::{self, Edit};
use crate::state::{Action, AppState, Connection, Effect, Msg, OnAsk, RequestId, SettingsEdit};
use crate::tui::keymap::{self, Input};
use crate::ui::{self, View};
use calls::CLIENT_ALLOW;

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
}

/// Something that happened outside the state: the agent, or a terminal.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived value, moved once from a channel to its handler"
)]
pub enum Incoming {
    /// From the agent connection.
    Agent(AgentEvent),
    /// A terminal's output or exit.
    Terminal(TerminalEvent),
}

/// The running application: state plus the IO it needs.
pub struct App {
    /// The pure state (public so that tests can look at it).
    pub state: AppState,
    command: AgentCommand,
    decision_log: Option<PathBuf>,
    notify: Notify,
    settings: SettingsLink,
    agent: Option<AgentHandle>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    responders: HashMap<RequestId, PermissionResponder>,
    /// File and terminal calls waiting for the gate, by request id.
    client_pending: HashMap<RequestId, (ClientCall, ClientResponder, PathBuf)>,
    caps: ClientCaps,
    roots: Roots,
    terminals: Terminals,
    terminal_events: mpsc::UnboundedReceiver<TerminalEvent>,
    /// Terminal id -> the transcript tool call that shows it.
    terminal_tools: HashMap<String, String>,
    chat_store: Option<crate::chats::ChatStore>,
    record: record::Record,
    resume: Option<ResumeChat>,
    /// The session being loaded: its replayed updates arrive before it is open.
    loading_session: Option<String>,
    next_request: RequestId,
    quit: bool,
}

impl App {
    /// An app for `command` with default options; the agent is not started yet.
    pub fn new(command: AgentCommand) -> Self {
        App::with_options(command, ChatOptions::default())
    }

    /// An app for `command`; the agent is not started yet.
    pub fn with_options(command: AgentCommand, options: ChatOptions) -> Self {
        let cwd = display_path(&command.cwd);
        let mut state = AppState::new(command.name.clone(), cwd);
        state.mode = options.mode;
        state.agent_policy = AgentPolicy {
            name: command.name.clone(),
            bypass: options.bypass,
        };
        state.agent_plan_mode = options.agent_plan_mode;
        state.rules = options.rules;
        state.home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
        state.cwd_path = command.cwd.clone();
        state.headless = options.headless;
        state.chat_id = uuid::Uuid::new_v4().to_string();
        state.settings_agent = options.settings.agent_block.clone();
        state.bypassed_agents = options.settings.bypassed.clone();
        let (_, events) = mpsc::unbounded_channel();
        let (terminal_tx, terminal_events) = mpsc::unbounded_channel();
        let roots = Roots::new(&command.cwd, &options.extra_roots);
        App {
            client_pending: HashMap::new(),
            caps: options.caps,
            roots,
            terminals: Terminals::new(terminal_tx),
            terminal_events,
            terminal_tools: HashMap::new(),
            chat_store: options.chats_dir.clone().map(crate::chats::ChatStore::new),
            record: record::Record::default(),
            resume: options.resume.clone(),
            loading_session: None,
            state,
            decision_log: options.decision_log,
            notify: options.notify,
            settings: options.settings,
            command,
            agent: None,
            events,
            responders: HashMap::new(),
            next_request: 0,
            quit: false,
        }
    }

    /// Spawn the agent (a fresh event channel drops anything an earlier
    /// agent still had in flight).
    pub fn start_agent(&mut self) -> Result<(), LaunchError> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.events = rx;
        let resume = self.resume.as_ref().map(|r| r.session_id.clone());
        self.loading_session.clone_from(&resume);
        let handle = acp::spawn(&self.command, self.caps, resume, tx)?;
        self.agent = Some(handle);
        Ok(())
    }

    /// The running agent's process id (its process group id too).
    pub fn agent_pid(&self) -> Option<u32> {
        self.agent.as_ref().and_then(AgentHandle::pid)
    }

    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Apply a message to the state and run the effects.
    pub fn handle(&mut self, msg: Msg) {
        let effects = self.state.update(msg);
        for effect in effects {
            self.run(effect);
        }
        self.flush_record();
    }

    /// The next agent or terminal event, waiting if there is none yet.
    pub async fn next_agent_event(&mut self) -> Option<Incoming> {
        tokio::select! {
            event = self.events.recv() => event.map(Incoming::Agent),
            Some(event) = self.terminal_events.recv() => Some(Incoming::Terminal(event)),
        }
    }

    /// An event, if one is already queued.
    pub fn try_agent_event(&mut self) -> Option<Incoming> {
        if let Ok(event) = self.terminal_events.try_recv() {
            return Some(Incoming::Terminal(event));
        }
        self.events.try_recv().ok().map(Incoming::Agent)
    }

    /// Turn an event into state messages.
    pub fn on_agent_event(&mut self, event: Incoming) {
        let event = match event {
            Incoming::Agent(event) => event,
            Incoming::Terminal(event) => {
                self.on_terminal_event(event);
                return;
            }
        };
        match event {
            AgentEvent::Client { call, responder } => {
                if self.is_current_session(call.session_id()) {
                    self.on_client_call(call, responder);
                } else {
                    responder.respond(Err(ClientError::InvalidParams(format!(
                        "unknown session {}",
                        call.session_id()
                    ))));
                }
            }
            AgentEvent::SessionStarted(info) => {
                self.loading_session = None;
                self.on_session_record(&info);
                self.handle(Msg::SessionStarted(info));
            }
            AgentEvent::Update { session_id, update } => {
                if self.is_current_session(&session_id) {
                    self.handle(Msg::Update(update));
                } else {
                    tracing::debug!(%session_id, "update for another session ignored");
                }
            }
            AgentEvent::Permission { request, responder } => {
                if !self.is_current_session(&request.session_id) {
                    tracing::warn!(session = %request.session_id, "permission request for an unknown session: cancelled");
                    responder.respond(PermissionOutcome::Cancelled);
                    return;
                }
                let id = self.next_request;
                self.next_request += 1;
                self.responders.insert(id, responder);
                self.handle(Msg::PermissionRequested {
                    id,
                    request: *request,
                });
            }
            AgentEvent::PromptDone(Ok(reason)) => self.handle(Msg::TurnEnded(reason)),
            AgentEvent::PromptDone(Err(message)) => {
                if self.state.connection == Connection::Down {
                    tracing::info!("prompt failed after the agent exited: {message}");
                } else {
                    self.handle(Msg::TurnFailed(message));
                }
            }
            AgentEvent::ConnectFailed(message) => self.handle(Msg::ConnectFailed(message)),
            AgentEvent::Exited {
                status,
                stderr_tail,
            } => {
                self.agent = None;
                self.handle(Msg::AgentExited {
                    status,
                    stderr_tail,
                });
            }
        }
    }

    fn is_current_session(&self, session_id: &str) -> bool {
        matches!(&self.state.connection, Connection::Ready { session_id: s } if s == session_id)
            || self.loading_session.as_deref() == Some(session_id)
    }

    fn session_id(&self) -> Option<&str> {
        match &self.state.connection {
            Connection::Ready { session_id } => Some(session_id),
            _ => None,
        }
    }

    fn run(&mut self, effect: Effect) {
        match effect {
            Effect::SendPrompt(text) => match (self.session_id(), &self.agent) {
                (Some(session), Some(agent)) => agent.prompt(session, &text),
                _ => self.handle(Msg::TurnFailed("the agent is not connected".into())),
            },
            Effect::CancelTurn => {
                if let (Some(session), Some(agent)) = (self.session_id(), &self.agent) {
                    agent.cancel(session);
                }
                // Cancelling the turn ends the commands the agent started.
                self.terminals.kill_all();
            }
            Effect::RespondPermission { id, outcome } => {
                if let Some(responder) = self.responders.remove(&id) {
                    tracing::info!(request = id, ?outcome, "permission answered");
                    responder.respond(outcome);
                } else if let Some((call, responder, path)) = self.client_pending.remove(&id) {
                    let allowed = outcome == PermissionOutcome::Selected(CLIENT_ALLOW.into());
                    self.finish_client_call(id, call, responder, path, allowed);
                } else {
                    tracing::warn!(request = id, "no responder for a permission answer");
                }
            }
            Effect::RestartAgent => {
                self.cancel_all_responders();
                if let Some(old) = self.agent.take() {
                    tokio::spawn(old.shutdown(Duration::from_millis(200)));
                }
                if let Err(err) = self.start_agent() {
                    self.handle(Msg::ConnectFailed(err.to_string()));
                }
            }
            Effect::Quit => self.quit = true,
            Effect::LogDecision(mut record) => {
                record.time = decision_log::now_rfc3339();
                tracing::info!(
                    decision = %record.decision,
                    source = %record.source,
                    tool_call = %record.tool_call_id,
                    "permission decision"
                );
                if let Some(path) = &self.decision_log
                    && let Err(err) = decision_log::append(path, &record)
                {
                    self.state.error(
                        format!(
                            "could not append to the decision log {}: {err}",
                            path.display()
                        ),
                        Vec::new(),
                    );
                }
            }
            Effect::Notify(text) => {
                crate::tui::notify(&text, self.notify.bell, self.notify.desktop);
            }
            Effect::SetAgentMode {
                mode_id,
                config_option,
            } => {
                if let (Some(session), Some(agent)) = (self.session_id(), &self.agent) {
                    match config_option {
                        Some(option) => agent.set_config_option(session, &option, &mode_id),
                        None => agent.set_mode(session, &mode_id),
                    }
                }
            }
            Effect::EditSettings(edit) => self.edit_settings(edit),
        }
    }

    /// Carry out a settings edit and tell the state what the file now says.
    fn edit_settings(&mut self, edit: SettingsEdit) {
        let Some(path) = self.settings.path.clone() else {
            self.handle(Msg::SettingsWriteFailed(
                "there is no settings path on this system".into(),
            ));
            return;
        };
        if !self.settings.writable {
            self.handle(Msg::SettingsWriteFailed(format!(
                "{} did not load, and warden never writes over a file it could not read",
                path.display()
            )));
            return;
        }
        let mut agent_block = None;
        let (edit, note) = match edit {
            SettingsEdit::SetBypass { agent, value } => {
                let mut agent = agent;
                let mut create = None;
                if let (true, None, Some((name, program, args))) =
                    (value, &self.state.settings_agent, &self.settings.create_as)
                {
                    // No block yet: attach the bypass to one for this command.
                    let current = settings::load(&path).ok().flatten().unwrap_or_default();
                    match settings::agent_for_command(&current, program, args) {
                        Some(existing) => agent = existing.to_string(),
                        None => {
                            agent = if name == settings::DEMO_AGENT {
                                name.clone()
                            } else {
                                settings::unique_agent_name(&current, name)
                            };
                            create = Some((program.clone(), args.clone()));
                        }
                    }
                    agent_block = Some(agent.clone());
                }
                let note = if value {
                    format!(
                        "bypass for `{agent}` saved to {} ([agents.{agent}])",
                        path.display()
                    )
                } else {
                    format!("bypass for `{agent}` removed from {}", path.display())
                };
                (
                    Edit::SetBypass {
                        agent,
                        value,
                        create,
                    },
                    note,
                )
            }
            SettingsEdit::AppendRule(rule) => (
                Edit::AppendRule(rule),
                format!("rule saved to {}", path.display()),
            ),
            SettingsEdit::RemoveRule { index, expected } => (
                Edit::RemoveRule { index, expected },
                format!("rule removed from {}", path.display()),
            ),
        };
        match settings::apply(&path, &edit) {
            Ok(now) => {
                let bypassed = now
                    .agents
                    .iter()
                    .filter(|(_, a)| a.bypass_permissions)
                    .map(|(name, _)| name.clone())
                    .collect();
                self.handle(Msg::SettingsChanged {
                    rules: now.rules,
                    bypassed,
                    agent_block,
                    note: Some(note),
                });
            }
            Err(err) => self.handle(Msg::SettingsWriteFailed(err.to_string())),
        }
    }

    fn cancel_all_responders(&mut self) {
        for (_, responder) in self.responders.drain() {
            responder.respond(PermissionOutcome::Cancelled);
        }
    }

    /// Answer everything still pending, close the agent's stdin and end its
    /// process group after a grace period.
    pub async fn shutdown(&mut self) {
        if !self.state.quitting {
            self.handle(Msg::Action(Action::Quit));
        }
        self.cancel_all_responders();
        for (_, (_, responder, _)) in self.client_pending.drain() {
            responder.respond(Err(ClientError::Denied("warden is quitting".into())));
        }
        self.terminals.kill_all();
        if let Some(agent) = self.agent.take() {
            agent.shutdown(SHUTDOWN_GRACE).await;
        }
    }
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
    let mut view = View::new();
    let mut clock = FrameClock::default();
    loop {
        if clock.should_draw(Instant::now()) {
            terminal.draw(|frame| ui::draw(frame, &app.state, &mut view))?;
            clock.drawn(Instant::now());
        }
        if app.should_quit() {
            break;
        }
        let deadline = clock.deadline();
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    match keymap::map_event(&event, app.state.composer.is_empty()) {
                        Some(Input::Action(action)) => app.handle(Msg::Action(action)),
                        Some(Input::Scroll(scroll)) => view.scroll(scroll),
                        Some(Input::Click(column, row)) => match view.hit(column, row) {
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
    Stopped(&'static str),
}

/// Run one turn without a terminal (`warden exec`): the agent's text goes to
/// `out` as it streams, one line per decision (and error) to `err`.
pub async fn run_exec(
    app: &mut App,
    prompt: &str,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> Result<(), ExecError> {
    let mut printer = Printer::default();
    while !matches!(app.state.connection, Connection::Ready { .. }) {
        if app.state.connection == Connection::Down {
            printer.flush(&app.state, out, err);
            return Err(ExecError::Agent(
                app.state
                    .failed
                    .clone()
                    .unwrap_or_else(|| "the agent is not running".into()),
            ));
        }
        match app.next_agent_event().await {
            Some(event) => app.on_agent_event(event),
            None => return Err(ExecError::Agent("the agent connection closed".into())),
        }
    }
    app.handle(Msg::Action(Action::Paste(prompt.to_string())));
    app.handle(Msg::Action(Action::Submit));
    while app.state.is_busy() {
        match app.next_agent_event().await {
            Some(event) => app.on_agent_event(event),
            None => break,
        }
        printer.flush(&app.state, out, err);
    }
    printer.flush(&app.state, out, err);
    if let Some(failed) = &app.state.failed {
        return Err(ExecError::Agent(failed.clone()));
    }
    match app.state.last_stop {
        Some(crate::model::StopReason::EndTurn) => Ok(()),
        Some(other) => Err(ExecError::Stopped(other.as_str())),
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

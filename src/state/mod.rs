//! Pure application state: `update(msg) -> Vec<Effect>`. No IO, no tokio,
//! no ratatui. The runtime (`app.rs`) feeds messages in and runs the effects.

mod composer;
mod transcript;

pub use composer::Composer;
pub use transcript::{Entry, EntryKind, ToolEntry, ToolState, Transcript};

use crate::model::{
    AgentModes, PermissionOutcome, PermissionRequest, SessionInfo, SessionUpdate, StopReason,
};
use crate::sanitize::one_line;

/// Identifies one permission request for the runtime, which keeps its responder.
pub type RequestId = u64;

/// What the user asked for, already mapped from keys by `tui::keymap`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Type a character.
    Char(char),
    /// Insert a newline (Alt+Enter, Shift+Enter).
    Newline,
    /// Bracketed paste.
    Paste(String),
    /// Delete before the cursor.
    Backspace,
    /// Delete under the cursor.
    Delete,
    /// Delete the word before the cursor.
    DeleteWordBack,
    /// Delete to the start of the line.
    KillLineStart,
    /// Delete to the end of the line.
    KillLineEnd,
    /// Cursor left.
    Left,
    /// Cursor right.
    Right,
    /// Cursor a word left.
    WordLeft,
    /// Cursor a word right.
    WordRight,
    /// Cursor up a line.
    Up,
    /// Cursor down a line.
    Down,
    /// Cursor to the start of the line.
    LineStart,
    /// Cursor to the end of the line.
    LineEnd,
    /// Enter: send the message.
    Submit,
    /// Esc: cancel the running turn.
    Cancel,
    /// Ctrl-C: clear the composer, or quit when it is empty.
    Interrupt,
    /// Ctrl-D: quit.
    Quit,
    /// Fold or unfold thoughts.
    ToggleThoughts,
    /// Restart the agent after it exited (Ctrl-R, or `r` on an empty composer).
    Restart,
}

/// Everything that can change the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// A user action.
    Action(Action),
    /// The agent is initialised and a session is open.
    SessionStarted(SessionInfo),
    /// A `session/update` for our session.
    Update(SessionUpdate),
    /// The agent asks permission; the runtime holds the responder under `id`.
    PermissionRequested {
        id: RequestId,
        request: PermissionRequest,
    },
    /// The agent answered `session/prompt`.
    TurnEnded(StopReason),
    /// `session/prompt` failed with an error.
    TurnFailed(String),
    /// The agent could not be started or initialised.
    ConnectFailed(String),
    /// The agent process ended.
    AgentExited {
        status: String,
        stderr_tail: Vec<String>,
    },
}

/// IO the runtime must do on the state's behalf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send `session/prompt` with this text.
    SendPrompt(String),
    /// Send `session/cancel` for the current session.
    CancelTurn,
    /// Answer a permission request.
    RespondPermission {
        id: RequestId,
        outcome: PermissionOutcome,
    },
    /// Kill the agent (if any) and start it again with a new session.
    RestartAgent,
    /// Leave: cancel, answer everything pending, end the agent, restore the terminal.
    Quit,
}

/// The agent connection as the user sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Connection {
    /// Spawning and initialising.
    #[default]
    Starting,
    /// A session is open.
    Ready { session_id: String },
    /// The agent is gone (exited, crashed, failed to start); `r` restarts.
    Down,
}

/// A turn in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Esc was pressed; waiting for the agent to answer the prompt.
    pub cancelling: bool,
}

/// The whole UI state of one chat.
#[derive(Debug, Clone, PartialEq)]
pub struct AppState {
    /// The agent's display name.
    pub agent_name: String,
    /// The session's working directory, as shown.
    pub cwd: String,
    pub connection: Connection,
    pub transcript: Transcript,
    pub composer: Composer,
    pub turn: Option<Turn>,
    /// Unfold every thought.
    pub thoughts_expanded: bool,
    /// The agent's own modes, when it advertises any.
    pub agent_modes: Option<AgentModes>,
    /// Session title from the agent.
    pub title: Option<String>,
    /// One transient line above the composer (refusals, hints); cleared by the next key.
    pub notice: Option<String>,
    /// Permission requests not yet answered, oldest first.
    pub pending: Vec<RequestId>,
    /// Set once quitting has begun.
    pub quitting: bool,
}

impl AppState {
    /// A fresh state for an agent about to start.
    pub fn new(agent_name: impl Into<String>, cwd: impl Into<String>) -> Self {
        AppState {
            agent_name: agent_name.into(),
            cwd: cwd.into(),
            connection: Connection::Starting,
            transcript: Transcript::default(),
            composer: Composer::default(),
            turn: None,
            thoughts_expanded: false,
            agent_modes: None,
            title: None,
            notice: None,
            pending: Vec::new(),
            quitting: false,
        }
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        self.turn.is_some()
    }

    /// Add an info line.
    pub fn info(&mut self, text: impl Into<String>) {
        self.transcript.push(EntryKind::Info(text.into()));
    }

    /// Add an error line with detail lines.
    pub fn error(&mut self, message: impl Into<String>, detail: Vec<String>) {
        self.transcript.push(EntryKind::Error {
            message: message.into(),
            detail,
        });
    }

    /// Apply one message; return the IO to do.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Action(action) => self.on_action(action),
            Msg::SessionStarted(info) => {
                self.connection = Connection::Ready {
                    session_id: info.session_id,
                };
                self.agent_modes = info.modes;
                Vec::new()
            }
            Msg::Update(update) => {
                self.on_update(update);
                Vec::new()
            }
            Msg::PermissionRequested { id, request } => self.on_permission(id, request),
            Msg::TurnEnded(_) | Msg::TurnFailed(_) if self.turn.is_none() => Vec::new(),
            Msg::TurnEnded(reason) => {
                self.finish_turn(reason == StopReason::Cancelled);
                match reason {
                    StopReason::EndTurn => {}
                    StopReason::Cancelled => self.info("turn cancelled"),
                    other => self.info(format!("turn ended: {}", other.as_str())),
                }
                self.answer_all_pending()
            }
            Msg::TurnFailed(message) => {
                self.finish_turn(true);
                self.error(
                    format!("the agent failed the prompt: {message}"),
                    Vec::new(),
                );
                self.answer_all_pending()
            }
            Msg::ConnectFailed(message) => {
                self.connection = Connection::Down;
                self.finish_turn(true);
                self.error(message, Vec::new());
                self.notice = Some("the agent is not running: press r to restart it".into());
                self.answer_all_pending()
            }
            Msg::AgentExited {
                status,
                stderr_tail,
            } => {
                let was_quitting = self.quitting;
                self.connection = Connection::Down;
                self.finish_turn(true);
                if !was_quitting {
                    self.error(format!("the agent exited ({status})"), stderr_tail);
                    self.notice = Some("the agent is not running: press r to restart it".into());
                }
                self.answer_all_pending()
            }
        }
    }

    /// The turn is over; with `cancel_tools`, calls still open are marked cancelled.
    fn finish_turn(&mut self, cancel_tools: bool) {
        if self.turn.take().is_some() && cancel_tools {
            self.transcript.cancel_unfinished_tools();
        }
        self.transcript.end_turn();
    }

    fn answer_all_pending(&mut self) -> Vec<Effect> {
        self.pending
            .drain(..)
            .map(|id| Effect::RespondPermission {
                id,
                outcome: PermissionOutcome::Cancelled,
            })
            .collect()
    }

    fn on_update(&mut self, update: SessionUpdate) {
        match update {
            SessionUpdate::UserChunk(text) => {
                if let Some(Entry {
                    kind: EntryKind::User(last),
                    ..
                }) = self.transcript.entries().last()
                {
                    let joined = format!("{last}{text}");
                    self.replace_last_user(joined);
                } else {
                    self.transcript.push(EntryKind::User(text));
                }
            }
            SessionUpdate::AgentChunk(text) => self.transcript.push_agent_text(&text),
            SessionUpdate::ThoughtChunk(text) => self.transcript.push_thought(&text),
            SessionUpdate::ToolCall(call) => self.transcript.upsert_tool(call),
            SessionUpdate::ToolCallUpdate { id, fields } => {
                self.transcript.update_tool(&id, &fields)
            }
            SessionUpdate::Plan(plan) => self.transcript.set_plan(plan),
            SessionUpdate::AvailableCommands(_) | SessionUpdate::Other(_) => {}
            SessionUpdate::CurrentMode(mode) => {
                let modes = self.agent_modes.get_or_insert_with(AgentModes::default);
                if modes.current != mode {
                    modes.current.clone_from(&mode);
                    let name = modes
                        .available
                        .iter()
                        .find(|m| m.id == mode)
                        .map_or(mode.as_str(), |m| m.name.as_str())
                        .to_string();
                    self.info(format!("agent mode: {}", one_line(&name)));
                }
            }
            SessionUpdate::ConfigModes(modes) => self.agent_modes = Some(modes),
            SessionUpdate::SessionInfo { title } => self.title = title,
        }
    }

    fn replace_last_user(&mut self, text: String) {
        // Replayed user messages arrive in chunks; keep them one entry.
        self.transcript.replace_last(EntryKind::User(text));
    }

    /// Until the approval gate exists, a request is shown as a line and
    /// answered `cancelled` at once.
    fn on_permission(&mut self, id: RequestId, request: PermissionRequest) -> Vec<Effect> {
        let known = self
            .transcript
            .tool(&request.tool_call_id)
            .map(|t| t.call.clone());
        let title = request
            .fields
            .title
            .clone()
            .or_else(|| known.as_ref().map(|c| c.title.clone()))
            .unwrap_or_else(|| request.tool_call_id.clone());
        let kind = request
            .fields
            .kind
            .or_else(|| known.as_ref().map(|c| c.kind))
            .unwrap_or_default();
        self.info(format!(
            "permission asked: {} ({}) — answered cancelled: approval cards are not built yet",
            one_line(&title),
            kind.as_str()
        ));
        vec![Effect::RespondPermission {
            id,
            outcome: PermissionOutcome::Cancelled,
        }]
    }

    fn on_action(&mut self, action: Action) -> Vec<Effect> {
        if !matches!(action, Action::ToggleThoughts) {
            self.notice = None;
        }
        match action {
            Action::Char(c) => {
                if c == 'r' && self.composer.is_empty() && self.connection == Connection::Down {
                    return self.restart();
                }
                self.composer.insert_char(c);
            }
            Action::Newline => self.composer.insert_char('\n'),
            Action::Paste(text) => self.composer.insert_str(&text),
            Action::Backspace => self.composer.backspace(),
            Action::Delete => self.composer.delete(),
            Action::DeleteWordBack => self.composer.delete_word_back(),
            Action::KillLineStart => self.composer.kill_to_line_start(),
            Action::KillLineEnd => self.composer.kill_to_line_end(),
            Action::Left => self.composer.left(),
            Action::Right => self.composer.right(),
            Action::WordLeft => self.composer.word_left(),
            Action::WordRight => self.composer.word_right(),
            Action::Up => {
                self.composer.up();
            }
            Action::Down => {
                self.composer.down();
            }
            Action::LineStart => self.composer.home(),
            Action::LineEnd => self.composer.end(),
            Action::Submit => return self.submit(),
            Action::Cancel => return self.cancel(),
            Action::Interrupt => {
                if self.composer.is_empty() {
                    return self.quit();
                }
                self.composer.take();
            }
            Action::Quit => return self.quit(),
            Action::ToggleThoughts => self.thoughts_expanded = !self.thoughts_expanded,
            Action::Restart => {
                if self.connection == Connection::Down {
                    return self.restart();
                }
                self.notice =
                    Some("the agent is running; restart is for when it has exited".into());
            }
        }
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Effect> {
        if self.composer.text().trim().is_empty() {
            return Vec::new();
        }
        if self.is_busy() {
            self.notice = Some(
                "the agent is still working: wait for the turn to end, or Esc to cancel it".into(),
            );
            return Vec::new();
        }
        match self.connection {
            Connection::Ready { .. } => {}
            Connection::Starting => {
                self.notice = Some("the agent is still starting".into());
                return Vec::new();
            }
            Connection::Down => {
                self.notice = Some("the agent is not running: press Ctrl-R to restart it".into());
                return Vec::new();
            }
        }
        let text = self.composer.take();
        self.transcript.end_turn();
        self.transcript.push(EntryKind::User(text.clone()));
        self.turn = Some(Turn { cancelling: false });
        vec![Effect::SendPrompt(text)]
    }

    fn cancel(&mut self) -> Vec<Effect> {
        match &mut self.turn {
            Some(turn) if !turn.cancelling => {
                turn.cancelling = true;
                self.transcript.cancel_unfinished_tools();
                let mut effects = vec![Effect::CancelTurn];
                effects.extend(self.answer_all_pending());
                effects
            }
            _ => Vec::new(),
        }
    }

    fn quit(&mut self) -> Vec<Effect> {
        self.quitting = true;
        let mut effects = Vec::new();
        if self.turn.is_some() {
            effects.extend(self.cancel());
        }
        effects.extend(self.answer_all_pending());
        effects.push(Effect::Quit);
        effects
    }

    fn restart(&mut self) -> Vec<Effect> {
        self.connection = Connection::Starting;
        self.agent_modes = None;
        self.transcript.end_turn();
        self.info("restarting the agent…");
        vec![Effect::RestartAgent]
    }
}

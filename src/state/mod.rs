//! Pure application state: `update(msg) -> Vec<Effect>`. No IO, no tokio,
//! no ratatui. The runtime (`app.rs`) feeds messages in and runs the effects.

mod agent_modes;
pub(crate) mod alert;
pub mod checkpoints;
mod composer;
pub(crate) mod drafts;
mod focus;
mod form;
mod grants;
pub(crate) mod interrupt;
pub mod mention;
mod messages;
mod mode_menu;
mod options;
pub(crate) mod paste;
pub(crate) mod picker;
pub mod process_move;
mod prompts;
mod record;
mod runtime_msgs;
pub(crate) mod search;
mod terminals;
mod transcript;
mod turn_end;
mod updates;
pub(crate) mod workspace;

pub use options::{OptionPick, SessionControls};

// The gate's card queue and its answering live in `crate::gate`; the
// state names them as its own, so the rest of the crate keeps its paths.
pub use crate::gate::answer::{Answer, By, Pick};
pub use crate::gate::arming::{ARM_DELAY, Seen, TYPING_WINDOW};
pub use crate::gate::cards::{Approval, PLAN_INSTRUCTION};
pub use crate::gate::chat::Gate;
#[cfg(test)]
pub(crate) use crate::gate::choices::CHOICES;
pub use crate::gate::choices::{CardView, Choice, ChoiceRow, Tone, option_kind_label};
pub(crate) use crate::gate::choices::{ChoiceDef, choice_bindings, choice_of_key};
pub use crate::gate::on_ask::OnAsk;
pub use crate::gate::scope::AllowedScope;
pub use crate::gate::summary::{CardSummary, ChoiceSummary, remote_choices};
pub use crate::gate::{Refusal, RequestFacts};
pub use composer::Composer;
pub use drafts::{Drafts, DraftsEffect, DraftsMsg};
pub use focus::{CardCursor, Focus, Modal, Pane, Question};
pub use form::{FieldKind, FormEditor, FormField};
pub(crate) use grants::NOT_LOADED;
pub use grants::{GrantItem, RuleDraft, SettingsEdit, fail_closed_rule};
pub use interrupt::QUIT_WINDOW;
pub use mode_menu::ModeItem;
pub use record::RecordCursor;
pub(crate) use runtime_msgs::lines_added;
pub use search::Search;
pub use transcript::{AGENT_SENT_USER, Entry, EntryKind, ToolEntry, ToolState, Transcript};
pub use workspace::{ChatFocus, ChatId, ChatSlot, RemoteCode, Workspace, WsEffect, WsMsg};

use std::path::PathBuf;

use crate::model::{
    AgentModes, PermissionOutcome, PermissionRequest, SessionInfo, SessionUpdate, StopReason,
    WireStatus,
};
#[cfg(test)]
use crate::policy::ChatGrant;
use crate::policy::{AgentPolicy, Mode, Rule};
use crate::record::DecisionRecord;

/// Identifies one permission request for the runtime, which keeps its responder.
pub(crate) type RequestId = u64;

pub use crate::keys::{Action, Code, Key};
pub use messages::{Effect, Msg};
use prompts::NOT_READY_NOTICES;
pub(crate) use prompts::edit_composer;

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
    /// When the prompt was sent, as the state's clock knew it.
    pub started: Option<std::time::Instant>,
}

impl Turn {
    /// How long the turn has run, by the state's clock `now`.
    pub(crate) fn elapsed(&self, now: Option<std::time::Instant>) -> Option<std::time::Duration> {
        Some(now?.saturating_duration_since(self.started?))
    }
}

/// The most bytes of an agent's error message kept (a failed prompt, a
/// failed connection): the rest is said as a count.
const AGENT_ERROR: usize = 4096;

/// The whole UI state of one chat, in three parts.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatState {
    /// The agent and the conversation.
    pub session: Session,
    /// What may run without asking, and what waits.
    pub gate: Gate,
    /// Where the user is and what is open.
    pub view: View,
}

/// The agent and the conversation: connection, transcript, turn, the agent's
/// own modes and options, and where the chat runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The agent's display name.
    pub agent_name: String,
    /// Which agent it is, as known at `initialize` (its quirks:
    /// `agents::quirks`); `None` for one warden does not know.
    pub agent: Option<crate::agents::quirks::Agent>,
    /// The session's working directory, as shown.
    pub cwd: String,
    /// The session's working directory, for relative paths in rules.
    pub cwd_path: PathBuf,
    pub connection: Connection,
    pub transcript: Transcript,
    pub turn: Option<Turn>,
    /// The agent never ended a cancelled turn (warden ended it): Ctrl+R
    /// may restart it although it runs.
    pub agent_stuck: bool,
    /// The agent's own modes, when it advertises any.
    pub agent_modes: Option<AgentModes>,
    /// Session title from the agent.
    pub title: Option<String>,
    /// A session whose agent is being moved into this mode before the chat
    /// is ready: (session id, mode id).
    pub opening: Option<(String, String)>,
    /// The agent mode warden (or the user) last asked for.
    pub expected_agent_mode: Option<String>,
    /// This chat's id in the decision log.
    pub chat_id: String,
    /// Why the last turn ended.
    pub last_stop: Option<StopReason>,
    /// Live output of the agent's terminals, by terminal id.
    pub terminals: std::collections::BTreeMap<String, TerminalView>,
    /// The agent's session options besides its modes, and its usage.
    pub controls: SessionControls,
    /// Why a headless run failed.
    pub failed: Option<String>,
    /// This chat's agent's block name in the settings, when it has one.
    pub settings_agent: Option<String>,
    /// A denial reason to send as the next prompt once the cancelled turn ends.
    pub queued_prompt: Option<String>,
    /// How the agent is confined (the footer's badge); none: no sandbox
    /// was configured (warden embedded without settings).
    pub sandbox: Option<crate::sandbox::explain::Badge>,
    /// The agent process's rules against the mode, and what waits for a
    /// move (`process_move.rs`).
    pub process: process_move::ProcessPlace,
}

/// Where the user is: the composer, the focus, the card cursor, overlays and
/// one-line notices.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub composer: Composer,
    /// History, queued messages, cleared text and slash commands.
    pub drafts: Drafts,
    /// Where keys go: the pane, and the modal open over it.
    pub focus: Focus,
    /// Position among the cards.
    pub cursor: CardCursor,
    /// The transcript search bar, while open.
    pub search: Option<Search>,
    /// One transient line above the composer (refusals, hints); cleared by the next key.
    pub notice: Option<String>,
    /// The help overlay is open (any key closes it).
    pub help: bool,
    /// How many rows of the help's key table are scrolled past (↑/↓ while it is open).
    pub help_scroll: u16,
    /// When Ctrl-C on an idle, empty composer was pressed: a second press
    /// within [`QUIT_WINDOW`] quits.
    pub quit_armed: Option<std::time::Instant>,
    /// Set once quitting has begun.
    pub quitting: bool,
    /// The latest instant the state was told (a key's, the runtime's clock).
    pub clock: Option<std::time::Instant>,
    /// When a key last went into the composer (keys with their time only).
    pub typed_at: Option<std::time::Instant>,
    /// The instant of the key being handled, while it is.
    pub pressed_at: Option<std::time::Instant>,
    /// Unfold every thought.
    pub thoughts_expanded: bool,
    /// Show terminals' whole output instead of their last lines.
    pub terminals_expanded: bool,
    /// The restore card, the checkpoint list, the note for the agent.
    pub checkpoints: checkpoints::Checkpoints,
    /// The question when the chat cannot take its session to the process
    /// its mode asks for.
    pub stuck_move: Option<process_move::StuckMove>,
}

/// A terminal's output as last read, for the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TerminalView {
    pub output: String,
    pub truncated: bool,
    /// Bytes of older output not kept (said in the entry).
    pub dropped: u64,
    /// How it ended, once it has.
    pub exit: Option<String>,
}

impl ChatState {
    /// A fresh state for an agent about to start.
    pub fn new(agent_name: impl Into<String>, cwd: impl Into<String>) -> Self {
        ChatState {
            session: Session {
                agent_name: agent_name.into(),
                agent: None,
                cwd: cwd.into(),
                cwd_path: PathBuf::new(),
                connection: Connection::Starting,
                transcript: Transcript::default(),
                turn: None,
                agent_stuck: false,
                agent_modes: None,
                title: None,
                opening: None,
                expected_agent_mode: None,
                chat_id: String::new(),
                last_stop: None,
                terminals: std::collections::BTreeMap::new(),
                controls: SessionControls::default(),
                failed: None,
                settings_agent: None,
                queued_prompt: None,
                sandbox: None,
                process: process_move::ProcessPlace::default(),
            },
            gate: Gate {
                mode: Mode::Default,
                approvals: Vec::new(),
                grants: Vec::new(),
                agent_policy: AgentPolicy::default(),
                rules: Vec::new(),
                bypassed_agents: Vec::new(),
                rule_draft: None,
                allowed_scopes: Vec::new(),
                agent_plan_mode: None,
                asking_mode: None,
                configured_asking_mode: None,
                no_asking_mode: false,
                prompt_blocked: None,
                home: None,
                headless: None,
            },
            view: View {
                composer: Composer::default(),
                drafts: Drafts::default(),
                focus: Focus::COMPOSER,
                cursor: CardCursor::default(),
                search: None,
                notice: None,
                help: false,
                help_scroll: 0,
                quit_armed: None,
                quitting: false,
                clock: None,
                typed_at: None,
                pressed_at: None,
                thoughts_expanded: false,
                terminals_expanded: false,
                checkpoints: checkpoints::Checkpoints::default(),
                stuck_move: None,
            },
        }
    }

    /// The open session's id.
    pub fn session_id(&self) -> Option<&str> {
        match &self.session.connection {
            Connection::Ready { session_id } => Some(session_id),
            _ => None,
        }
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        self.session.turn.is_some()
    }

    /// Add an info line.
    pub fn info(&mut self, text: impl Into<String>) {
        self.session.transcript.push(EntryKind::Info(text.into()));
    }

    /// Add an error line with detail lines.
    pub(crate) fn error(&mut self, message: impl Into<String>, detail: Vec<String>) {
        self.session.transcript.push(EntryKind::Error {
            message: message.into(),
            detail,
        });
    }

    /// Apply one message; return the IO to do. A turn that ends takes
    /// its end checkpoint first (before a queued prompt takes its own).
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let busy = self.is_busy();
        // What the cards show depends on the agent's modes and name.
        let refresh = matches!(
            &msg,
            Msg::SessionStarted(_)
                | Msg::AgentModeSet { .. }
                | Msg::AgentNamed(_)
                | Msg::Update(SessionUpdate::CurrentMode(_) | SessionUpdate::ConfigModes(_))
        );
        let mut effects = self.apply(msg);
        if refresh && !self.gate.approvals.is_empty() {
            self.refresh_cards();
        }
        if busy && !self.is_busy() {
            effects.insert(
                0,
                Effect::Checkpoint(checkpoints::CheckpointEffect::TurnEnded),
            );
        }
        effects
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Checkpoint(msg) => self.on_checkpoint(*msg),
            Msg::Action(action) => self.on_action(action),
            Msg::Key { action, at } => self.on_key(action, at),
            Msg::Tick(now) => {
                self.stamp(now);
                Vec::new()
            }
            Msg::SessionStarted(info) => {
                let mut effects = self.on_session_started(info);
                self.drop_stale_notice();
                effects.extend(self.release_held());
                effects.extend(self.send_when_ready());
                effects
            }
            Msg::AgentModeSet { mode_id, result } => {
                let mut effects = self.on_agent_mode_set(mode_id, result);
                self.drop_stale_notice();
                effects.extend(self.release_held());
                effects.extend(self.send_when_ready());
                effects
            }
            Msg::OptionSet { option, result } => {
                self.on_option_set(option, result);
                Vec::new()
            }
            Msg::Update(update) => self.on_update(update),
            Msg::OwnToolUpdate { id, fields } => {
                self.session.transcript.update_own_tool(&id, &fields);
                Vec::new()
            }
            Msg::Drafts(msg) => self.on_drafts(msg),
            Msg::Sandbox(badge) => {
                self.session.sandbox = Some(badge);
                Vec::new()
            }
            Msg::ProcessRules {
                read_only,
                follows_plan,
            } => self.on_process_rules(read_only, follows_plan),
            Msg::StuckMove(stuck) => {
                self.on_stuck_move(stuck);
                Vec::new()
            }
            Msg::SandboxMove => {
                let effects = self.cancel_all_approvals("the agent process changes");
                self.finish_turn(true);
                // The runtime reconnects by itself: no restart effect.
                let _ = self.restart();
                effects
            }
            Msg::TerminalOutput { id, view } => {
                self.on_terminal_output(id, view);
                Vec::new()
            }
            msg @ (Msg::SettingsChanged { .. } | Msg::SettingsWriteFailed(_)) => {
                self.on_settings(msg)
            }
            Msg::PermissionRequested { id, request } => {
                // warden's own requests are all warden's: no tool call the
                // agent made up under their id shapes them.
                let known = (!request.client)
                    .then(|| self.session.transcript.tool(&request.tool_call_id))
                    .flatten()
                    .map(|t| t.call.clone());
                let facts = RequestFacts::of(&request, known.as_ref());
                self.on_permission(id, *request, facts)
            }
            Msg::PermissionChecked { id, request, facts } => {
                self.on_permission(id, *request, *facts)
            }
            Msg::ClientRefused { id, refusal } => self.on_client_refused(id, &refusal),
            Msg::RemoteAnswer { id, pick } => self.on_remote_answer(id, pick),
            Msg::RemoteMode(mode) => self.set_mode(mode),
            Msg::AgentKnown(agent) => {
                self.session.agent = agent;
                Vec::new()
            }
            Msg::AgentAlias(name) => {
                if name != self.gate.agent_policy.name
                    && !self.gate.agent_policy.aliases.contains(&name)
                {
                    self.gate.agent_policy.aliases.push(name);
                }
                Vec::new()
            }
            Msg::CancelOverdue(grace) => self.on_cancel_overdue(grace),
            msg @ (Msg::Note(_) | Msg::ErrorLine(_) | Msg::Restored(_)) => {
                self.on_runtime_line(msg);
                Vec::new()
            }
            Msg::Copied(notice) => {
                self.view.notice = Some(crate::sanitize::one_line(&notice));
                Vec::new()
            }
            Msg::AgentNotice(message) => {
                self.session.transcript.push(EntryKind::Error {
                    message: crate::sanitize::one_line(&message),
                    detail: Vec::new(),
                });
                Vec::new()
            }
            Msg::TurnEnded(reason) => self.on_turn_ended(reason),
            Msg::TurnFailed(message) => self.on_turn_failed(&message),
            Msg::ConnectFailed(message) => {
                let message = crate::sanitize::cut(&message, AGENT_ERROR).into_owned();
                let effects = self.cancel_all_approvals("the agent is not connected");
                self.session.connection = Connection::Down;
                self.finish_turn(true);
                self.error(message.clone(), Vec::new());
                self.view.notice = Some("the agent is not running: press r to restart it".into());
                self.session.failed.get_or_insert(message);
                effects
            }
            Msg::Restart => {
                let mut effects = self.cancel_all_approvals("the agent restarts");
                self.finish_turn(true);
                effects.extend(self.restart());
                effects
            }
            Msg::AgentNamed(name) => {
                if name != self.session.agent_name {
                    self.info(format!(
                        "shown as `{}`, what the agent calls itself (its command gave `{}`, \
                         which its rules and bypass keep to)",
                        crate::sanitize::one_line(&name),
                        crate::sanitize::one_line(&self.gate.agent_policy.name)
                    ));
                    // Display only: rules and bypasses keep to the
                    // agent's identity; deny and ask rules naming what it
                    // calls itself apply too.
                    if name != self.gate.agent_policy.name
                        && !self.gate.agent_policy.aliases.contains(&name)
                    {
                        self.gate.agent_policy.aliases.push(name.clone());
                    }
                    self.session.agent_name = name;
                }
                Vec::new()
            }
            Msg::AgentExited {
                status,
                stderr_tail,
            } => {
                let was_quitting = self.view.quitting;
                let effects = self.cancel_all_approvals("the agent exited");
                self.session.connection = Connection::Down;
                self.finish_turn(true);
                if !was_quitting {
                    let message = format!("the agent exited ({status})");
                    self.error(message.clone(), stderr_tail);
                    self.view.notice =
                        Some("the agent is not running: press r to restart it".into());
                    self.session.failed.get_or_insert(message);
                }
                effects
            }
        }
    }

    /// Once the agent is ready, a notice saying it is not goes.
    fn drop_stale_notice(&mut self) {
        if matches!(self.session.connection, Connection::Ready { .. })
            && self
                .view
                .notice
                .as_deref()
                .is_some_and(|n| NOT_READY_NOTICES.contains(&n))
        {
            self.view.notice = None;
        }
    }

    /// When the footer's elapsed time next changes (the next whole second
    /// of the running turn): the runtime ticks then.
    pub fn turn_tick(&self) -> Option<std::time::Instant> {
        let turn = self.session.turn.as_ref()?;
        let started = turn.started?;
        let secs = turn.elapsed(self.view.clock)?.as_secs();
        Some(started + std::time::Duration::from_secs(secs + 1))
    }
}

/// The transcript's info lines, for tests.
#[cfg(test)]
pub(crate) fn infos(s: &ChatState) -> Vec<String> {
    s.session
        .transcript
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Info(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod always_tests;
#[cfg(test)]
mod card_race_tests;
#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod focus_attack_tests;
#[cfg(test)]
mod focus_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod modes_tests;
#[cfg(test)]
pub(crate) mod tests;

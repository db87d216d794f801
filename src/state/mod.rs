//! Pure application state: `update(msg) -> Vec<Effect>`. No IO, no tokio,
//! no ratatui. The runtime (`app.rs`) feeds messages in and runs the effects.

mod agent_modes;
pub(crate) mod alert;
mod approval;
pub mod checkpoints;
mod composer;
pub(crate) mod drafts;
mod form;
mod grants;
mod interrupt;
pub mod mention;
mod options;
pub(crate) mod paste;
pub(crate) mod picker;
pub mod process_move;
mod runtime_msgs;
pub(crate) mod search;
mod terminals;
mod transcript;
pub(crate) mod workspace;

pub use options::{OptionPick, SessionControls};

#[cfg(test)]
pub(crate) use approval::CHOICES;
pub use approval::{
    ARM_DELAY, AllowedScope, Answer, Approval, By, CardCursor, CardView, Choice, ChoiceRow, Focus,
    Modal, ModeItem, OnAsk, PLAN_INSTRUCTION, Pane, Pick, Question, Refusal, RequestFacts, Seen,
    TYPING_WINDOW, Tone, option_kind_label,
};
pub use approval::{CardSummary, ChoiceSummary, remote_choices};
pub(crate) use approval::{ChoiceDef, choice_bindings, choice_of_key};
pub use composer::Composer;
pub use drafts::{Drafts, DraftsEffect, DraftsMsg};
pub use form::{FieldKind, FormEditor, FormField};
pub(crate) use grants::NOT_LOADED;
pub use grants::{GrantItem, RuleDraft, SettingsEdit, fail_closed_rule};
pub use interrupt::QUIT_WINDOW;
pub(crate) use runtime_msgs::lines_added;
pub use search::Search;
pub use transcript::{AGENT_SENT_USER, Entry, EntryKind, ToolEntry, ToolState, Transcript};
pub use workspace::{ChatFocus, ChatId, ChatSlot, RemoteCode, Workspace, WsEffect, WsMsg};

use std::path::PathBuf;

use crate::model::{
    AgentModes, PermissionOutcome, PermissionRequest, SessionInfo, SessionUpdate, StopReason,
    WireStatus,
};
use crate::policy::{AgentPolicy, ChatGrant, Mode, Rule};
use crate::record::DecisionRecord;

/// Identifies one permission request for the runtime, which keeps its responder.
pub(crate) type RequestId = u64;

pub use crate::keys::{Action, Code, Key};

/// Everything that can change the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// A user action whose time is not known (tests, scripted input): not
    /// judged by time (see [`Msg::Key`]).
    Action(Action),
    /// A user action from the terminal (a key, a paste, a click) with the
    /// instant it was made: a card that became the selected one less than
    /// [`ARM_DELAY`] before takes no answer from it, and a key typed into
    /// the composer keeps a new card from taking the keys.
    Key {
        action: Action,
        at: std::time::Instant,
    },
    /// The runtime's clock: a new or newly selected card is seen from
    /// now; a card's delay that ended is drawn as ended.
    Tick(std::time::Instant),
    /// The agent is initialised and a session is open.
    SessionStarted(SessionInfo),
    /// A `session/update` for our session.
    Update(SessionUpdate),
    /// From the runtime: how warden's own client call `id` went (its
    /// status, a terminal's content). Only this reaches warden's own
    /// entries; the agent's `tool_call_update`s never do.
    OwnToolUpdate {
        id: String,
        fields: Box<crate::model::ToolCallFields>,
    },
    /// A permission request without the runtime's facts (an elicitation,
    /// which always asks): the state builds its view; the runtime holds the
    /// responder under `id`.
    PermissionRequested {
        id: RequestId,
        request: Box<PermissionRequest>,
    },
    /// The agent asks permission, or warden gates one of its client calls,
    /// with what the runtime found out about the request (its view built
    /// once, resolved paths, a refusal for safety); the runtime holds the
    /// responder under `id`.
    PermissionChecked {
        id: RequestId,
        request: Box<PermissionRequest>,
        facts: Box<RequestFacts>,
    },
    /// The IO of client call `id`, which the gate allowed, was refused for
    /// safety (one of warden's own files by inode, a path that changed).
    ClientRefused { id: RequestId, refusal: Refusal },
    /// A name the agent goes by besides its identity (what it calls itself,
    /// the name its command gives): deny and ask rules naming it apply.
    AgentAlias(String),
    /// The agent answered `session/prompt`.
    TurnEnded(StopReason),
    /// `session/prompt` failed with an error.
    TurnFailed(String),
    /// The agent could not be started or initialised.
    ConnectFailed(String),
    /// Another chat of the same agent process restarts it: this chat
    /// restarts along (one `r` brings back every chat a crash took down).
    Restart,
    /// The agent process ended.
    AgentExited {
        status: String,
        stderr_tail: Vec<String>,
    },
    /// The settings file was written: what it now says (rules, bypassed
    /// agents), the block name of this chat's agent if it was just created,
    /// and a line to show.
    SettingsChanged {
        rules: Vec<Rule>,
        bypassed: Vec<String>,
        agent_block: Option<String>,
        note: Option<String>,
    },
    /// A settings write failed; the choice still holds for this run.
    SettingsWriteFailed(String),
    /// A terminal's output (or exit) changed.
    TerminalOutput { id: String, view: TerminalView },
    /// The badge of the sandbox of the chat's agent process (the footer's).
    Sandbox(crate::sandbox::explain::Badge),
    /// The rules of the chat's agent process: whether it keeps the
    /// workspace read-only, and whether the chat's sandbox moves with Plan.
    ProcessRules { read_only: bool, follows_plan: bool },
    /// The chat moves to an agent process with other sandbox rules (it
    /// entered or left Plan): it reconnects as after a restart, which the
    /// runtime is already doing.
    SandboxMove,
    /// The chat should move to an agent process with other sandbox rules,
    /// but the agent can neither load nor resume a session: ask the user.
    StuckMove(process_move::StuckMove),
    /// The agent answered warden's switch of its own mode.
    AgentModeSet {
        mode_id: String,
        result: Result<(), String>,
    },
    /// The agent answered a change of one of its session options.
    OptionSet {
        option: String,
        result: Result<Vec<crate::model::SessionOption>, String>,
    },
    /// Something about the agent's connection to show as an error line
    /// (a skipped line of its output, its output closing).
    AgentNotice(String),
    /// What became of an Alt-C / Alt-Y copy (into tmux's buffer, sent with
    /// OSC 52, or nothing copied and why): the notice, from the runtime,
    /// which alone knows.
    Copied(String),
    /// The agent has not ended the cancelled turn within this grace period:
    /// end it here.
    CancelOverdue(std::time::Duration),
    /// An agent with no settings block, named from its command so far, is
    /// shown by what it calls itself (`agentInfo.name`, made a safe word
    /// the runtime checked is nobody else's): the footer and the chat list
    /// show it. Display only: the decision log, allow rules and bypasses
    /// keep to its identity; deny and ask rules naming it apply too.
    AgentNamed(String),
    /// From the runtime: an info line (a start-up note, a new chat's first
    /// line, how a restart or a reopening went).
    Note(String),
    /// From the runtime: an error line (a file call refused for safety, a
    /// record or decision log that cannot be written, a settings file that
    /// did not load).
    ErrorLine(String),
    /// From the runtime: a reopened chat's saved transcript, put back when
    /// the agent cannot replay it.
    Restored(Vec<EntryKind>),
    /// For the composer's history, external editor and export.
    Drafts(DraftsMsg),
    /// From the checkpoint worker (`src/checkpoint/`).
    Checkpoint(Box<checkpoints::CheckpointMsg>),
    /// From another device (`src/remote/`): answer card `id`, if it still waits.
    RemoteAnswer { id: RequestId, pick: Answer },
    /// From another device: switch the chat's mode.
    RemoteMode(Mode),
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
    /// The values the user filled in for the form elicitation `id`, sent
    /// with its `accept` (which follows as `RespondPermission`).
    ElicitationContent {
        id: RequestId,
        content: serde_json::Map<String, serde_json::Value>,
    },
    /// Kill the agent (if any) and start it again with a new session.
    RestartAgent,
    /// The answer to [`Msg::StuckMove`]: move to the other process with a
    /// fresh session, or stay.
    MoveProcess { fresh: bool },
    /// `/clear`: leave the chat's session (its record stays, for
    /// `/resume`) and open a new one on the same agent, with a new record.
    NewSession,
    /// Leave: cancel, answer everything pending, end the agent, restore the terminal.
    Quit,
    /// Append a decision to the log (the runtime stamps the time).
    LogDecision(Box<DecisionRecord>),
    /// A card appeared: ring the bell and send a desktop notification.
    Notify(String),
    /// Put this (sanitized) text on the clipboard (through tmux inside
    /// tmux, else with OSC 52); the outcome comes back as [`Msg::Copied`].
    Copy(String),
    /// Switch the agent's own mode (`session/set_config_option` when it
    /// offers a mode option, else `session/set_mode`).
    SetAgentMode {
        mode_id: String,
        config_option: Option<String>,
    },
    /// Change the settings file.
    EditSettings(SettingsEdit),
    /// Change one of the agent's session options (`session/set_config_option`).
    SetSessionOption {
        option_id: String,
        value: OptionPick,
    },
    /// The composer's IO (history, editor, export, workspace commands).
    Drafts(DraftsEffect),
    /// Checkpoints of the workspace: a turn's end, undo, list, diff.
    Checkpoint(checkpoints::CheckpointEffect),
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

/// What may run without asking, and what waits: the chat's mode, the user's
/// rules and bypasses, this chat's grants, and the cards.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The chat's permission mode.
    pub mode: Mode,
    /// Requests waiting for the user, oldest first.
    pub approvals: Vec<Approval>,
    /// "Allow for this chat" grants.
    pub grants: Vec<ChatGrant>,
    /// The agent's name and bypass setting.
    pub agent_policy: AgentPolicy,
    /// The user's rules, in file order.
    pub rules: Vec<Rule>,
    /// Agents with `bypass_permissions = true` in the settings (and set this run).
    pub bypassed_agents: Vec<String>,
    /// The rule being kept from a card, while its pattern is edited.
    pub rule_draft: Option<grants::RuleDraft>,
    /// What allowed requests of this turn named (for client writes and terminals).
    pub allowed_scopes: Vec<AllowedScope>,
    /// The agent's own mode to switch to in Plan (opt-in per agent).
    pub agent_plan_mode: Option<String>,
    /// The agent's mode that asks before acting, where warden keeps it.
    pub asking_mode: Option<String>,
    /// The asking mode the settings name (`asking_mode`), if any.
    pub configured_asking_mode: Option<String>,
    /// The agent offers modes but none known to ask: Plan is refused.
    pub no_asking_mode: bool,
    /// Why no prompt may be sent (the agent would not leave a mode that may
    /// act without asking).
    pub prompt_blocked: Option<String>,
    /// Home directory, for `~` in rules.
    pub home: Option<PathBuf>,
    /// Set for `warden exec`: how asks are answered without a user.
    pub headless: Option<OnAsk>,
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
            Msg::Key { action, at } => {
                self.key_at(&crate::keys::split(action.clone()).0, at);
                self.view.pressed_at = Some(at);
                let effects = self.on_action(action);
                self.view.pressed_at = None;
                effects
            }
            Msg::Tick(now) => {
                self.stamp(now);
                Vec::new()
            }
            Msg::SessionStarted(info) => {
                let mut effects = self.on_session_started(info);
                self.drop_stale_notice();
                effects.extend(self.release_held());
                effects
            }
            Msg::AgentModeSet { mode_id, result } => {
                let mut effects = self.on_agent_mode_set(mode_id, result);
                self.drop_stale_notice();
                effects.extend(self.release_held());
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
                self.on_permission(id, *request, RequestFacts::default())
            }
            Msg::PermissionChecked { id, request, facts } => {
                self.on_permission(id, *request, *facts)
            }
            Msg::ClientRefused { id, refusal } => self.on_client_refused(id, &refusal),
            Msg::RemoteAnswer { id, pick } => self.on_remote_answer(id, pick),
            Msg::RemoteMode(mode) => self.set_mode(mode),
            Msg::AgentAlias(name) => {
                if name != self.gate.agent_policy.name
                    && !self.gate.agent_policy.aliases.contains(&name)
                {
                    self.gate.agent_policy.aliases.push(name);
                }
                Vec::new()
            }
            Msg::CancelOverdue(grace)
                if self.session.turn.as_ref().is_some_and(|t| t.cancelling) =>
            {
                self.session.transcript.push(EntryKind::Error {
                    message: format!(
                        "the agent did not end the cancelled turn within {} s; warden ended it here (the agent may still be busy: go on, or Ctrl+R to restart it)",
                        grace.as_secs()
                    ),
                    detail: Vec::new(),
                });
                let effects = self.update(Msg::TurnEnded(StopReason::Cancelled));
                self.session.agent_stuck = true;
                effects
            }
            Msg::CancelOverdue(_) => Vec::new(),
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
            Msg::TurnEnded(_) | Msg::TurnFailed(_) if self.session.turn.is_none() => Vec::new(),
            Msg::TurnEnded(reason) => {
                let mut effects = self.cancel_all_approvals("the turn ended");
                self.finish_turn(reason == StopReason::Cancelled);
                match &reason {
                    StopReason::EndTurn => {}
                    StopReason::Cancelled => self.info("turn cancelled"),
                    other => self.info(format!(
                        "turn ended: {}",
                        crate::sanitize::one_line(other.as_str())
                    )),
                }
                self.session.last_stop = Some(reason);
                if let Some(reason) = self.session.queued_prompt.take()
                    && !self.refuse_turn()
                {
                    effects.extend(self.send_prompt(reason));
                }
                effects.extend(self.send_queued());
                effects
            }
            Msg::TurnFailed(message) => {
                // The agent's error can be one huge line: a bounded part of
                // it on every output path.
                let message = crate::sanitize::cut(&message, AGENT_ERROR).into_owned();
                let effects = self.cancel_all_approvals("the prompt failed");
                self.finish_turn(true);
                self.error(
                    format!("the agent failed the prompt: {message}"),
                    Vec::new(),
                );
                self.session.failed.get_or_insert(message);
                effects
            }
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

    /// The turn is over; calls still open are marked cancelled with
    /// `cancel_tools`, else as having no result from the agent.
    fn finish_turn(&mut self, cancel_tools: bool) {
        self.gate.allowed_scopes.clear();
        if self.session.turn.take().is_some() {
            if cancel_tools {
                self.session.transcript.cancel_unfinished_tools();
            } else {
                self.session.transcript.close_open_tools();
            }
        }
        self.session.transcript.end_turn();
    }

    fn on_update(&mut self, update: SessionUpdate) -> Vec<Effect> {
        // The agent shows a terminal in its own tool call: warden's entry for
        // the same terminal stops showing it, so the output appears once.
        let embedded = match &update {
            SessionUpdate::ToolCall(call) => Some((call.id.as_str(), call.content.as_slice())),
            SessionUpdate::ToolCallUpdate { id, fields } => {
                fields.content.as_deref().map(|c| (id.as_str(), c))
            }
            _ => None,
        };
        if let Some((tool_id, content)) = embedded {
            for item in content {
                if let crate::model::ToolContent::Terminal { id: terminal } = item {
                    self.session
                        .transcript
                        .hand_over_terminal(terminal, tool_id);
                }
            }
        }
        if let SessionUpdate::ToolCallUpdate { id, fields } = &update
            && matches!(
                fields.status,
                Some(WireStatus::Completed | WireStatus::Failed)
            )
        {
            let effects = self.drop_stale_for_tool(id);
            self.session.transcript.update_tool(id, fields);
            return effects;
        }
        match update {
            // Only a session/load replay speaks for the user: it comes
            // before the session is open. Any other user message is the
            // agent's text, marked.
            SessionUpdate::UserChunk(text) if !self.replaying() => {
                self.session.transcript.push_agent_sent_user(&text);
            }
            SessionUpdate::UserChunk(text) => {
                if let Some(Entry {
                    kind: EntryKind::User(last),
                    ..
                }) = self.session.transcript.entries().last()
                {
                    let joined = format!("{last}{text}");
                    self.replace_last_user(joined);
                } else {
                    self.session.transcript.push(EntryKind::User(text));
                }
            }
            SessionUpdate::AgentChunk(text) => self.session.transcript.push_agent_text(&text),
            SessionUpdate::ThoughtChunk(text) => self.session.transcript.push_thought(&text),
            SessionUpdate::MessageChunk {
                message_id,
                text,
                thought,
            } => self
                .session
                .transcript
                .push_message_chunk(&message_id, &text, thought),
            SessionUpdate::ToolCall(call) => self.session.transcript.upsert_tool(*call),
            SessionUpdate::ToolCallUpdate { id, fields } => {
                self.session.transcript.update_tool(&id, &fields)
            }
            SessionUpdate::Plan(plan) => self.session.transcript.set_plan(plan),
            SessionUpdate::AvailableCommands(commands) => self.view.drafts.commands = commands,
            SessionUpdate::Other(_) => {}
            SessionUpdate::Options(options) => self.on_options(options),
            SessionUpdate::Usage(usage) => {
                self.session.transcript.end_answer();
                self.on_usage(usage);
            }
            SessionUpdate::CurrentMode(mode) => return self.on_agent_mode_now(&mode),
            SessionUpdate::ConfigModes(modes) => {
                let current = modes.current.clone();
                let known = self.session.agent_modes.as_ref().map(|m| m.current.clone());
                self.session.agent_modes = Some(AgentModes {
                    current: known.unwrap_or_else(|| current.clone()),
                    ..modes
                });
                return self.on_agent_mode_now(&current);
            }
            SessionUpdate::SessionInfo { title } => self.session.title = title,
        }
        Vec::new()
    }

    /// Whether the agent is replaying a session being loaded: its updates
    /// reach the chat before the session opens (`SessionStarted`); a new
    /// session's early updates come after it.
    fn replaying(&self) -> bool {
        self.session.connection == Connection::Starting && self.session.opening.is_none()
    }

    fn replace_last_user(&mut self, text: String) {
        // Replayed user messages arrive in chunks; keep them one entry.
        self.session.transcript.replace_last(EntryKind::User(text));
    }

    /// A key (as pressed), a paste or a click. The composer's meaning of a
    /// key (`action`) serves the keys that mean the same everywhere and the
    /// composer; the context that has the keys (a card, a modal) matches
    /// the raw `key` against its own table.
    fn on_action(&mut self, input: Action) -> Vec<Effect> {
        let (action, mut key) = crate::keys::split(input);
        if !matches!(action, Action::ToggleThoughts) {
            self.view.notice = None;
        }
        // While the search is open it has the keys, also when a card took
        // the focus meanwhile: a letter typed for the search never answers it.
        if self.view.focus.modal.is_none()
            && let Some(effects) = self.on_search_key(&action)
        {
            return effects;
        }
        let interrupt = matches!(action, Action::Interrupt(_));
        let action = match self.on_help_or_interrupt(action, key) {
            std::ops::ControlFlow::Break(effects) => return effects,
            std::ops::ControlFlow::Continue(action) => action,
        };
        if interrupt && action == Action::Cancel {
            // Ctrl-C in a field, a menu or a question is Esc there.
            key = Some(Key::plain(Code::Esc));
        }
        if let Some(effects) = self.stuck_move_key(&action) {
            return effects;
        }
        if let Some(effects) = self.checkpoint_key(&action) {
            return effects;
        }
        if let Some(effects) = self.drafts_key(&action) {
            return effects;
        }
        // Keys that mean the same wherever the focus is.
        match action {
            // Not over a field or a question of a card's: those keep their keys.
            Action::Search if self.view.focus.modal.is_none() => {
                return self.open_search();
            }
            Action::Copy => return self.copy(false),
            Action::CopyCode => return self.copy(true),
            // A modal closes on Esc instead.
            Action::Cancel if self.view.focus.modal.is_none() => {
                return self.cancel();
            }
            Action::Quit => return self.quit(),
            Action::ToggleThoughts => {
                self.view.thoughts_expanded = !self.view.thoughts_expanded;
                return Vec::new();
            }
            Action::ToggleTerminals => {
                self.view.terminals_expanded = !self.view.terminals_expanded;
                self.session.transcript.touch_all_tools();
                return Vec::new();
            }
            Action::OpenModeMenu => {
                let current = self
                    .mode_menu_items()
                    .iter()
                    .position(|i| *i == ModeItem::Chat(self.gate.mode));
                self.view.focus.open(Modal::ModeMenu(current.unwrap_or(0)));
                return Vec::new();
            }
            Action::ClickChoice(_)
                if !self.gate.approvals.is_empty() && self.view.focus.is(Pane::Composer) =>
            {
                // A click on a card answers it even while the composer has the keys.
                self.view.focus.pane = Pane::Cards;
            }
            Action::RulesScreen if !matches!(self.view.focus.modal, Some(Modal::Rules { .. })) => {
                self.view.focus.open(Modal::Rules {
                    selected: 0,
                    confirm: false,
                });
                return Vec::new();
            }
            Action::ToggleCards => {
                // Ctrl-P: between the composer and the cards; from a modal,
                // back to typing. The user chose: no card takes the keys
                // by itself after this.
                self.view.cursor.wants_keys = false;
                self.view.focus =
                    if self.view.focus.is(Pane::Composer) && !self.gate.approvals.is_empty() {
                        Focus::CARDS
                    } else {
                        Focus::COMPOSER
                    };
                return Vec::new();
            }
            _ => {}
        }
        // A modal has the keys while it is open: its handler takes it, and
        // puts it back unless the key closed it (then the pane beneath has
        // the keys again, as it was).
        let Some(modal) = self.view.focus.modal.take() else {
            return match self.view.focus.pane {
                Pane::Composer => self.on_composer_key(action),
                Pane::Cards => self.on_card_key(&action, key),
            };
        };
        match modal {
            Modal::Reason { card, field } => self.on_reason_key(&action, key, card, field),
            Modal::ConfirmAll(ids) => self.on_confirm_key(key, ids),
            Modal::Confirm(question) => self.on_question_key(key, question),
            Modal::ModeMenu(highlighted) => self.on_menu_key(&action, key, highlighted),
            Modal::KeepRule(field) => self.on_keep_rule_key(&action, key, field),
            Modal::Form(form) => self.on_form_key(&action, key, form),
            Modal::Rules { selected, confirm } => self.on_grants_key(key, selected, confirm),
        }
    }

    fn on_composer_key(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Char('r')
                if self.view.composer.is_empty() && self.session.connection == Connection::Down =>
            {
                self.restart()
            }
            Action::Submit => self.submit(),
            Action::BackTab => self.set_mode(self.gate.mode.next()),
            Action::Restart => {
                if self.session.connection == Connection::Down || self.session.agent_stuck {
                    return self.restart();
                }
                self.view.notice =
                    Some("the agent is running; restart is for when it has exited".into());
                Vec::new()
            }
            other => {
                edit_composer(&mut self.view.composer, &other);
                Vec::new()
            }
        }
    }

    fn submit(&mut self) -> Vec<Effect> {
        if self.view.composer.text().trim().is_empty() {
            return Vec::new();
        }
        if self.is_busy() {
            self.view.notice = Some(
                "the agent is still working: wait for the turn to end, or Esc to cancel it".into(),
            );
            return Vec::new();
        }
        match self.session.connection {
            Connection::Ready { .. } => {}
            Connection::Starting => {
                self.view.notice = Some(STILL_STARTING.into());
                return Vec::new();
            }
            Connection::Down => {
                self.view.notice = Some(NOT_RUNNING.into());
                return Vec::new();
            }
        }
        if self.refuse_turn() {
            return Vec::new();
        }
        let text = self.view.composer.take();
        if let Some(effects) = self.hold_for_move(text.clone()) {
            return effects;
        }
        self.send_prompt(text)
    }

    /// Show the user's message and send it (with the plan instruction in Plan).
    fn send_prompt(&mut self, text: String) -> Vec<Effect> {
        if self.session_id().is_none() {
            self.view.notice = Some(NOT_CONNECTED.into());
            return Vec::new();
        }
        self.session.transcript.end_turn();
        // The transcript shows a long paste folded, as the composer did; the
        // agent gets the message whole.
        self.session.transcript.push(EntryKind::User(text.clone()));
        let text = self.view.drafts.pastes.expand(&text);
        self.session.turn = Some(Turn {
            cancelling: false,
            started: self.view.clock,
        });
        self.session.controls.turn_base = self.session.controls.usage.as_ref().and_then(|u| u.used);
        let text = self.with_checkpoint_note(text);
        if self.gate.mode == Mode::Plan {
            self.info("plan mode: the prompt asks the agent to read and propose only");
            return vec![Effect::SendPrompt(format!("{PLAN_INSTRUCTION}\n\n{text}"))];
        }
        vec![Effect::SendPrompt(text)]
    }

    pub(crate) fn cancel(&mut self) -> Vec<Effect> {
        match &mut self.session.turn {
            Some(turn) if !turn.cancelling => {
                turn.cancelling = true;
                let mut effects = vec![Effect::CancelTurn];
                effects.extend(self.cancel_all_approvals("turn cancelled"));
                self.session.transcript.cancel_unfinished_tools();
                effects
            }
            _ => Vec::new(),
        }
    }

    /// Deny with a reason: `reason` goes as the next prompt once the turn
    /// ends by itself. The turn is not cancelled: claude-agent-acp 0.23.1
    /// answers a cancelled prompt before its own end, so a prompt sent then
    /// is answered at once and every later one a turn late. Its other cards
    /// get their reject option, and its later requests are refused
    /// (`no_turn_running`), so the agent soon ends it; Esc still cancels.
    pub(crate) fn send_after_turn(&mut self, reason: String) -> Vec<Effect> {
        let mut effects = self.reject_all_approvals("you denied this turn with a reason");
        if self.session.turn.is_none() {
            if !self.refuse_turn() {
                effects.extend(self.send_prompt(reason));
            }
            return effects;
        }
        self.session.queued_prompt = Some(reason);
        self.info("your reason goes to the agent as the next message when this turn ends (Esc cancels the turn)");
        effects
    }

    pub(crate) fn quit(&mut self) -> Vec<Effect> {
        self.view.quitting = true;
        let mut effects = Vec::new();
        if self.session.turn.is_some() {
            effects.extend(self.cancel());
        }
        effects.extend(self.cancel_all_approvals("warden is quitting"));
        effects.push(Effect::Quit);
        effects
    }

    fn restart(&mut self) -> Vec<Effect> {
        self.session.agent_stuck = false;
        self.gate.asking_mode = None;
        self.session.opening = None;
        self.gate.prompt_blocked = None;
        self.session.connection = Connection::Starting;
        self.session.agent_modes = None;
        // The new session reports its own options, usage and mode switches.
        self.session.controls = SessionControls::default();
        self.session.expected_agent_mode = None;
        self.session.transcript.end_turn();
        self.info("restarting the agent…");
        vec![Effect::RestartAgent]
    }
}

/// The notice when a prompt is sent before the agent has started.
const STILL_STARTING: &str = "the agent is still starting";
/// The notice when a prompt is sent while the agent is down.
const NOT_RUNNING: &str = "the agent is not running: press Ctrl-R to restart it";
/// The notice when a prompt is sent without a session.
const NOT_CONNECTED: &str = "the agent is not connected";
/// Notices that a started session makes stale (the last: the agent exited).
const NOT_READY_NOTICES: [&str; 4] = [
    STILL_STARTING,
    NOT_RUNNING,
    NOT_CONNECTED,
    "the agent is not running: press r to restart it",
];

/// Apply an editing key to a composer; other keys are ignored.
fn edit_composer(composer: &mut Composer, action: &Action) {
    match action {
        Action::Char(c) => composer.insert_char(*c),
        Action::Tab => composer.insert_char('\t'),
        Action::Newline => composer.insert_char('\n'),
        Action::Paste(text) => composer.insert_str(text),
        Action::Backspace => composer.backspace(),
        Action::Delete => composer.delete(),
        Action::DeleteWordBack => composer.delete_word_back(),
        Action::KillLineStart => composer.kill_to_line_start(),
        Action::KillLineEnd => composer.kill_to_line_end(),
        Action::Left => composer.left(),
        Action::Right => composer.right(),
        Action::WordLeft => composer.word_left(),
        Action::WordRight => composer.word_right(),
        Action::Up => {
            composer.up();
        }
        Action::Down => {
            composer.down();
        }
        Action::LineStart => composer.home(),
        Action::LineEnd => composer.end(),
        _ => {}
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
mod tests;

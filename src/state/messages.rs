//! The messages into the state ([`Msg`]: everything that can change it)
//! and out of it ([`Effect`]: the IO the runtime does on its behalf).

use super::*;

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
    /// Which agent the chat talks to, known at `initialize`: its quirks.
    AgentKnown(Option<crate::agents::quirks::Agent>),
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

//! The transcript: an append-mostly list of entries with stable ids and
//! revision numbers, so that the widgets can cache each entry's wrapped lines
//! and re-wrap only what changed.

use std::collections::HashMap;

use crate::model::{AgentTerminal, PlanEntry, ToolCall, ToolCallFields, WireStatus};

/// Where a tool call is in its life, as warden sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Announced, not started.
    Pending,
    /// A permission request for it is waiting for a decision.
    AwaitingApproval,
    /// Allowed; the agent has not said yet that it runs.
    Approved,
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// The user (or policy) rejected it.
    Rejected,
    /// The turn was cancelled before it finished.
    Cancelled,
    /// The turn ended and the agent never said how the call finished.
    NoResult,
}

impl ToolState {
    /// Every state, in life order.
    pub(crate) const ALL: [ToolState; 9] = [
        ToolState::Pending,
        ToolState::AwaitingApproval,
        ToolState::Approved,
        ToolState::InProgress,
        ToolState::Completed,
        ToolState::Failed,
        ToolState::Rejected,
        ToolState::Cancelled,
        ToolState::NoResult,
    ];

    /// Whether the call can still change.
    pub(crate) fn is_finished(self) -> bool {
        matches!(
            self,
            ToolState::Completed
                | ToolState::Failed
                | ToolState::Rejected
                | ToolState::Cancelled
                | ToolState::NoResult
        )
    }

    /// Short label for the screen.
    pub(crate) fn label(self) -> &'static str {
        match self {
            ToolState::Pending => "pending",
            ToolState::AwaitingApproval => "awaiting approval",
            ToolState::Approved => "approved",
            ToolState::InProgress => "running",
            ToolState::Completed => "done",
            ToolState::Failed => "failed",
            ToolState::Rejected => "denied",
            ToolState::Cancelled => "cancelled",
            ToolState::NoResult => "no result from the agent",
        }
    }

    fn from_wire(status: WireStatus) -> Self {
        match status {
            WireStatus::Pending => ToolState::Pending,
            WireStatus::InProgress => ToolState::InProgress,
            WireStatus::Completed => ToolState::Completed,
            WireStatus::Failed => ToolState::Failed,
        }
    }
}

/// A tool call in the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub call: ToolCall,
    pub state: ToolState,
    /// warden's own entry: its request for one of the agent's client calls.
    pub own: bool,
    /// Why the agent's tool may pass for one of warden's own
    /// ([`crate::confusable::call_warning`]), kept with the call as it changes.
    pub lookalike: Option<String>,
    /// The shell command of an execute call as the policy reads it from
    /// `rawInput` ([`crate::policy::command_of_input`]), read when the call
    /// or an update arrives, so that what the user reads is what the
    /// policy judged and drawing computes nothing.
    pub command: Option<String>,
}

impl ToolEntry {
    /// An entry of the agent's.
    pub fn new(call: ToolCall, state: ToolState) -> ToolEntry {
        let lookalike = crate::confusable::call_warning(&call);
        let command = command_of(&call);
        ToolEntry {
            call,
            state,
            own: false,
            lookalike,
            command,
        }
    }

    /// Read the command again after the call changed in place.
    pub(crate) fn reread_command(&mut self) {
        self.command = command_of(&self.call);
    }

    /// Merge an update's fields and status into the entry.
    fn apply(&mut self, fields: &ToolCallFields) {
        self.call.apply(fields);
        self.reread_command();
        if !self.own && (fields.title.is_some() || fields.tool_name.is_some()) {
            self.lookalike = crate::confusable::call_warning(&self.call);
        }
        if let Some(status) = fields.status {
            let next = ToolState::from_wire(status);
            // A rejection stays a rejection when the agent then reports
            // the call failed (because it was rejected); any other word
            // of the agent on the call wins.
            let keep_rejected = self.state == ToolState::Rejected
                && matches!(next, ToolState::Failed | ToolState::Pending);
            // An approved call is not "pending" again until it runs.
            let keep_approved = self.state == ToolState::Approved && next == ToolState::Pending;
            if !keep_rejected && !keep_approved {
                self.state = next;
            }
        }
    }
}

/// What one transcript entry shows.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// A message the user sent.
    User(String),
    /// The agent's answer, markdown, growing as chunks stream in.
    Agent(String),
    /// The agent's reasoning, shown dimmed and folded.
    Thought(String),
    /// A tool call with its current state (boxed: it is much larger than text).
    Tool(Box<ToolEntry>),
    /// The agent's plan (replaced whole on every update).
    Plan(Vec<PlanEntry>),
    /// A neutral line from warden (turn ended, mode changed, ...).
    Info(String),
    /// One permission decision, automatic or the user's.
    Decision { allowed: bool, text: String },
    /// Something went wrong; `detail` holds extra lines such as a stderr tail.
    Error {
        message: String,
        detail: Vec<String>,
    },
}

/// One entry with its identity and revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Stable for the entry's life; cache key.
    pub id: u64,
    /// The transcript's generation when this entry last changed; cache validity.
    pub rev: u64,
    pub kind: EntryKind,
}

/// What starts the agent's entry for a user message the agent sent itself
/// (a `user_message_chunk` outside a `session/load` replay).
pub const AGENT_SENT_USER: &str = "*(agent-sent user message)*\n\n";

/// The most output the agent's own terminals (`_meta`) keep in one chat's
/// tool calls together: past it, older output is dropped, finished calls'
/// first, oldest first.
pub(crate) const AGENT_TERMINALS_TOTAL: usize = 32 << 20;

/// What dropping for the total leaves of each terminal: its newest output.
pub(crate) const TERMINAL_KEPT: usize = 64 << 10;

/// How many recent changes the transcript remembers for incremental layout.
const CHANGE_LOG: usize = 1024;

/// The whole conversation as shown.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    next_id: u64,
    /// Tool call id -> index into `entries`, for the ids of the current
    /// turn only: agents reuse ids across turns (the TS SDK's example agent
    /// says `call_1` in every turn), and a later turn's update must never
    /// rewrite an earlier turn's call.
    tools: HashMap<String, usize>,
    /// warden's own entries (its requests for the agent's file and terminal
    /// calls, `client: true`), by tool call id: kept apart from `tools`, so
    /// that nothing the agent sends about a tool call ever reaches them.
    own: HashMap<String, usize>,
    /// The call as the agent said it is while its card waited, by entry
    /// index (one copy, however many updates): shown once the card is
    /// answered, so that the entry beside the card shows what the card
    /// asks about.
    deferred: HashMap<usize, ToolCall>,
    /// Bytes the agent's own terminals (`_meta`) hold in the tool calls.
    agent_terminal_bytes: usize,
    /// Indices of every tool call entry, of every turn.
    all_tools: Vec<usize>,
    /// Index of the entry that streaming text of the current turn appends to.
    open_text: Option<usize>,
    /// The `messageId` of the message streaming into `open_text`, if it named one.
    open_message: Option<String>,
    /// Index of the open entry of a user message the agent sent (outside a
    /// replay): the agent's text, marked, which the agent's own chunks never join.
    open_agent_user: Option<usize>,
    /// Index of the current turn's plan entry.
    open_plan: Option<usize>,
    /// Bumped on every change; entries carry the value of their last change.
    generation: u64,
    /// (generation, index) of the most recent changes, oldest first, bounded.
    changes: std::collections::VecDeque<(u64, usize)>,
}

impl Transcript {
    /// Start afresh (`/clear`): no entries. Ids go on from where they
    /// were and the change log is left behind, so a view lays everything
    /// out again and caches nothing under a reused id.
    pub(crate) fn clear(&mut self) {
        *self = Transcript {
            next_id: self.next_id,
            generation: self.generation + 2,
            ..Transcript::default()
        };
    }

    /// All entries, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The current generation: it grows with every change.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Indices of the entries changed (or added) after generation `since`,
    /// or `None` when that is too long ago to know: then everything may have
    /// changed. Indices may repeat.
    pub(crate) fn changed_since(&self, since: u64) -> Option<Vec<usize>> {
        if since == self.generation {
            return Some(Vec::new());
        }
        let oldest_known = self.changes.front().map_or(self.generation, |c| c.0);
        if since + 1 < oldest_known {
            return None;
        }
        Some(
            self.changes
                .iter()
                .filter(|(generation, _)| *generation > since)
                .map(|(_, index)| *index)
                .collect(),
        )
    }

    fn record_change(&mut self, index: usize) -> u64 {
        self.generation += 1;
        // A streamed answer changes one entry thousands of times between two
        // frames: one record of it is enough, so that a flood never pushes
        // older changes out of the log (which would make the view lay out
        // everything again, every frame).
        if let Some(last) = self.changes.back_mut()
            && last.1 == index
        {
            last.0 = self.generation;
            return self.generation;
        }
        if self.changes.len() == CHANGE_LOG {
            self.changes.pop_front();
        }
        self.changes.push_back((self.generation, index));
        self.generation
    }

    /// Append an entry; returns its index.
    pub(crate) fn push(&mut self, kind: EntryKind) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        let rev = self.record_change(self.entries.len());
        if matches!(kind, EntryKind::User(_)) {
            // A user message starts a turn: tool call ids start afresh.
            self.tools.clear();
        }
        self.entries.push(Entry { id, rev, kind });
        if !matches!(
            self.entries.last().map(|e| &e.kind),
            Some(EntryKind::Agent(_) | EntryKind::Thought(_))
        ) {
            self.open_text = None;
        }
        self.entries.len() - 1
    }

    /// Replace the last entry's content (or push when empty).
    pub(crate) fn replace_last(&mut self, kind: EntryKind) {
        match self.entries.len().checked_sub(1) {
            Some(last) => {
                if let Some(current) = self.touch(last) {
                    *current = kind;
                }
            }
            None => {
                self.push(kind);
            }
        }
    }

    fn touch(&mut self, index: usize) -> Option<&mut EntryKind> {
        if index >= self.entries.len() {
            return None;
        }
        let rev = self.record_change(index);
        let entry = self.entries.get_mut(index)?;
        entry.rev = rev;
        Some(&mut entry.kind)
    }

    /// Close the streaming text and plan of the current turn, so the next
    /// chunk starts a new entry.
    pub(crate) fn end_turn(&mut self) {
        self.open_text = None;
        self.open_agent_user = None;
        self.open_message = None;
        self.open_plan = None;
    }

    /// The agent's model finished an answer (a `usage_update`): the next
    /// chunk starts a new block. codex-acp sends the answers of one turn
    /// with no `messageId`, and with no tool call between them when the
    /// command it ran failed to start; a `usage_update` follows each one.
    pub(crate) fn end_answer(&mut self) {
        self.open_text = None;
        self.open_message = None;
    }

    /// Append a chunk of agent text, joining the previous chunk while the
    /// agent keeps streaming.
    pub(crate) fn push_agent_text(&mut self, chunk: &str) {
        self.push_text(chunk, false, None);
    }

    /// Append a chunk of reasoning, joining the previous one.
    pub(crate) fn push_thought(&mut self, chunk: &str) {
        self.push_text(chunk, true, None);
    }

    /// Append a chunk of message `message_id` (reasoning with `thought`): it
    /// joins the open block only when that block is the same message.
    pub(crate) fn push_message_chunk(&mut self, message_id: &str, chunk: &str, thought: bool) {
        self.push_text(chunk, thought, Some(message_id));
    }

    /// Append a chunk of a user message the agent sent outside a
    /// `session/load` replay: it is the agent's text, never the user's, so it
    /// shows (and exports) as the agent's, under [`AGENT_SENT_USER`].
    pub(crate) fn push_agent_sent_user(&mut self, chunk: &str) {
        let last = self.entries.len().checked_sub(1);
        if let Some(index) = self
            .open_agent_user
            .filter(|&i| Some(i) == last && self.open_text == Some(i))
        {
            if let Some(EntryKind::Agent(text)) = self.touch(index) {
                text.push_str(chunk);
            }
            return;
        }
        let index = self.push(EntryKind::Agent(format!("{AGENT_SENT_USER}{chunk}")));
        self.open_text = Some(index);
        self.open_message = None;
        self.open_agent_user = Some(index);
    }

    fn push_text(&mut self, chunk: &str, thought: bool, message_id: Option<&str>) {
        let last = self.entries.len().checked_sub(1);
        let same_message = match (message_id, self.open_message.as_deref()) {
            (Some(new), Some(open)) => new == open,
            _ => true,
        };
        let joinable =
            |i: usize| Some(i) == last && same_message && self.open_agent_user != Some(i);
        if let Some(index) = self.open_text.filter(|&i| joinable(i)) {
            let joins = matches!(
                (&self.entries[index].kind, thought),
                (EntryKind::Agent(_), false) | (EntryKind::Thought(_), true)
            );
            if joins {
                if let Some(EntryKind::Agent(text) | EntryKind::Thought(text)) = self.touch(index) {
                    text.push_str(chunk);
                }
                return;
            }
        }
        let kind = if thought {
            EntryKind::Thought(chunk.to_string())
        } else {
            EntryKind::Agent(chunk.to_string())
        };
        let index = self.push(kind);
        self.open_text = Some(index);
        self.open_message = message_id.map(str::to_string);
    }

    /// Add a tool call, or merge it into the entry of the same id.
    pub(crate) fn upsert_tool(&mut self, call: ToolCall) {
        // Text after a tool call is a new block, even when the call was
        // announced before the text began.
        self.open_text = None;
        if let Some(&index) = self.tools.get(&call.id)
            && self.awaiting(index)
        {
            let before = self.agent_held(index);
            self.deferred.insert(index, call);
            return self.account(index, before);
        }
        if let Some(&index) = self.tools.get(&call.id) {
            let before = self.agent_held(index);
            if let Some(EntryKind::Tool(entry)) = self.touch(index) {
                let state = ToolState::from_wire(call.status);
                entry.lookalike = crate::confusable::call_warning(&call);
                entry.call = call;
                let keep_approved =
                    entry.state == ToolState::Approved && state == ToolState::Pending;
                if !entry.state.is_finished()
                    && entry.state != ToolState::AwaitingApproval
                    && !keep_approved
                {
                    entry.state = state;
                }
            }
            return self.account(index, before);
        }
        let state = ToolState::from_wire(call.status);
        let id = call.id.clone();
        let index = self.push(EntryKind::Tool(Box::new(ToolEntry::new(call, state))));
        self.tools.insert(id, index);
        self.all_tools.push(index);
        self.account(index, 0);
    }

    /// Bytes the agent's own terminals hold in the call at `index` (and in
    /// what waits to be applied to it).
    fn agent_held(&self, index: usize) -> usize {
        let held = |call: &ToolCall| -> usize {
            call.agent_terminals.iter().map(AgentTerminal::held).sum()
        };
        let shown = match self.entries.get(index).map(|e| &e.kind) {
            Some(EntryKind::Tool(t)) => held(&t.call),
            _ => 0,
        };
        shown + self.deferred.get(&index).map_or(0, held)
    }

    /// The call at `index` changed: count its agent terminals anew
    /// (`before` they held that much) and keep the total.
    fn account(&mut self, index: usize, before: usize) {
        let after = self.agent_held(index);
        self.agent_terminal_bytes = (self.agent_terminal_bytes + after).saturating_sub(before);
        if self.agent_terminal_bytes > AGENT_TERMINALS_TOTAL {
            self.trim_agent_terminals();
        }
    }

    /// Drop the agent terminals' older output until the total is back
    /// under three quarters of [`AGENT_TERMINALS_TOTAL`]: finished calls
    /// first, then any, oldest first, each to its newest [`TERMINAL_KEPT`];
    /// with very many terminals, to less, the oldest finished to nothing.
    fn trim_agent_terminals(&mut self) {
        let target = AGENT_TERMINALS_TOTAL / 4 * 3;
        let finished = |t: &Self, i: usize| matches!(&t.entries[i].kind, EntryKind::Tool(e) if e.state.is_finished());
        let finished: Vec<usize> = self
            .all_tools
            .iter()
            .copied()
            .filter(|&i| finished(self, i))
            .collect();
        let mut order: Vec<(usize, usize)> = Vec::new();
        for keep in [TERMINAL_KEPT, TERMINAL_KEPT / 16, 0] {
            order.extend(finished.iter().map(|&i| (i, keep)));
            if keep > 0 {
                order.extend(self.all_tools.iter().map(|&i| (i, keep)));
            }
        }
        for (index, keep) in order {
            if self.agent_terminal_bytes <= target {
                break;
            }
            if self.agent_held(index) == 0 {
                continue;
            }
            let mut freed = 0;
            if let Some(call) = self.deferred.get_mut(&index) {
                freed += call
                    .agent_terminals
                    .iter_mut()
                    .map(|t| t.shrink_to(keep))
                    .sum::<usize>();
            }
            if let Some(EntryKind::Tool(entry)) = self.touch(index) {
                freed += entry
                    .call
                    .agent_terminals
                    .iter_mut()
                    .map(|t| t.shrink_to(keep))
                    .sum::<usize>();
            }
            self.agent_terminal_bytes = self.agent_terminal_bytes.saturating_sub(freed);
        }
    }

    /// Apply an update to a tool call; an unknown id starts a new entry.
    pub(crate) fn update_tool(&mut self, id: &str, fields: &ToolCallFields) {
        self.open_text = None;
        let index = match self.tools.get(id) {
            Some(&index) => index,
            None => {
                self.upsert_tool(ToolCall::placeholder(id));
                match self.tools.get(id) {
                    Some(&index) => index,
                    None => return,
                }
            }
        };
        let before = self.agent_held(index);
        if self.awaiting(index) {
            if !self.deferred.contains_key(&index)
                && let Some(EntryKind::Tool(entry)) = self.entries.get(index).map(|e| &e.kind)
            {
                let shadow = entry.call.clone();
                self.deferred.insert(index, shadow);
            }
            if let Some(shadow) = self.deferred.get_mut(&index) {
                shadow.apply(fields);
            }
            return self.account(index, before);
        }
        if let Some(EntryKind::Tool(entry)) = self.touch(index) {
            entry.apply(fields);
        }
        self.account(index, before);
    }

    /// Whether the entry at `index` is a call whose card waits.
    fn awaiting(&self, index: usize) -> bool {
        matches!(self.entries.get(index).map(|e| &e.kind),
            Some(EntryKind::Tool(t)) if t.state == ToolState::AwaitingApproval)
    }

    /// Set the state of the tool call entry at `index`; leaving "awaiting
    /// approval", what the agent said of it meanwhile applies first.
    fn set_state_at(&mut self, index: usize, state: ToolState) {
        let before = self.agent_held(index);
        let deferred = if state == ToolState::AwaitingApproval {
            None
        } else {
            self.deferred.remove(&index)
        };
        // Allowed while the agent already said the call runs or ended:
        // its word is newer than "approved".
        let state = match &deferred {
            Some(call) if state == ToolState::Approved && call.status != WireStatus::Pending => {
                ToolState::from_wire(call.status)
            }
            _ => state,
        };
        if let Some(EntryKind::Tool(entry)) = self.touch(index) {
            if let Some(call) = deferred {
                if !entry.own {
                    entry.lookalike = crate::confusable::call_warning(&call);
                }
                entry.call = call;
            }
            entry.state = state;
        }
        self.account(index, before);
    }

    /// Set a tool call's state (e.g. awaiting approval, rejected).
    pub(crate) fn set_tool_state(&mut self, id: &str, state: ToolState) {
        if let Some(&index) = self.tools.get(id) {
            self.set_state_at(index, state);
        }
    }

    /// The tool call of that id, if known.
    pub fn tool(&self, id: &str) -> Option<&ToolEntry> {
        let index = *self.tools.get(id)?;
        match &self.entries.get(index)?.kind {
            EntryKind::Tool(entry) => Some(entry),
            _ => None,
        }
    }

    /// warden's own entry `id` (a client call's request) changes, by
    /// warden's word only: made on its first word.
    pub(crate) fn update_own_tool(&mut self, id: &str, fields: &ToolCallFields) {
        let index = match self.own.get(id) {
            Some(&index) => index,
            None => {
                self.open_text = None;
                let call = ToolCall::placeholder(id);
                let state = ToolState::from_wire(call.status);
                let entry = ToolEntry {
                    own: true,
                    lookalike: None,
                    ..ToolEntry::new(call, state)
                };
                let index = self.push(EntryKind::Tool(Box::new(entry)));
                self.own.insert(id.to_string(), index);
                self.all_tools.push(index);
                index
            }
        };
        if let Some(EntryKind::Tool(entry)) = self.touch(index) {
            entry.apply(fields);
        }
    }

    /// warden's own entry of that id, if known.
    pub fn own_tool(&self, id: &str) -> Option<&ToolEntry> {
        let index = *self.own.get(id)?;
        match &self.entries.get(index)?.kind {
            EntryKind::Tool(entry) => Some(entry),
            _ => None,
        }
    }

    /// The entry of a request's tool call: warden's own for a client
    /// call's request, else the agent's.
    pub fn call(&self, id: &str, client: bool) -> Option<&ToolEntry> {
        if client {
            self.own_tool(id)
        } else {
            self.tool(id)
        }
    }

    /// [`Transcript::set_tool_state`] of warden's own entry for a client call's
    /// request, else of the agent's.
    pub(crate) fn set_call_state(&mut self, id: &str, client: bool, state: ToolState) {
        if !client {
            return self.set_tool_state(id, state);
        }
        if let Some(&index) = self.own.get(id) {
            self.set_state_at(index, state);
        }
    }

    /// A terminal's output changed: the tool calls that embed it must be drawn again.
    pub(crate) fn touch_terminal(&mut self, terminal_id: &str) {
        self.touch_terminals(|id| id == terminal_id);
    }

    /// The agent's tool call `owner` now shows `terminal_id`: every other
    /// entry showing it (warden's own entry for the terminal request) says
    /// where the output is instead.
    pub(crate) fn hand_over_terminal(&mut self, terminal_id: &str, owner: &str) {
        use crate::model::ToolContent;
        let owner = self.tools.get(owner).copied();
        let others: Vec<usize> = self
            .all_tools
            .iter()
            .copied()
            .filter(|&i| Some(i) != owner)
            .filter(|&i| {
                matches!(&self.entries[i].kind, EntryKind::Tool(t)
                    if t.call.content.iter().any(|c| matches!(c, ToolContent::Terminal { id } if id == terminal_id)))
            })
            .collect();
        for index in others {
            if let Some(EntryKind::Tool(entry)) = self.touch(index) {
                for item in &mut entry.call.content {
                    if matches!(item, ToolContent::Terminal { id } if id == terminal_id) {
                        *item = ToolContent::Text {
                            text: format!("{terminal_id}: output shown in the agent's tool call"),
                        };
                    }
                }
            }
        }
    }

    /// Every tool call must be drawn again (Ctrl-O: cut output unfolds).
    pub(crate) fn touch_all_tools(&mut self) {
        for index in self.all_tools.clone() {
            self.touch(index);
        }
    }

    fn touch_terminals(&mut self, which: impl Fn(&str) -> bool) {
        use crate::model::ToolContent;
        let embedding: Vec<usize> = self
            .all_tools
            .iter()
            .copied()
            .filter(|&i| {
                matches!(&self.entries[i].kind, EntryKind::Tool(t)
                    if t.call.content.iter().any(|c| matches!(c, ToolContent::Terminal { id } if which(id))))
            })
            .collect();
        for index in embedding {
            self.touch(index);
        }
    }

    /// Mark every unfinished tool call cancelled (the turn was cancelled).
    pub(crate) fn cancel_unfinished_tools(&mut self) {
        self.close_unfinished_tools(ToolState::Cancelled);
    }

    /// The turn ended while calls were still open (the agent never sent
    /// their completion): they stop spinning, marked as having no result.
    pub(crate) fn close_open_tools(&mut self) {
        self.close_unfinished_tools(ToolState::NoResult);
    }

    fn close_unfinished_tools(&mut self, state: ToolState) {
        let open: Vec<usize> = self
            .all_tools
            .iter()
            .copied()
            .filter(
                |&i| matches!(&self.entries[i].kind, EntryKind::Tool(t) if !t.state.is_finished()),
            )
            .collect();
        for index in open {
            self.set_state_at(index, state);
        }
    }

    /// Replace the current turn's plan (or start one).
    pub(crate) fn set_plan(&mut self, plan: Vec<PlanEntry>) {
        if let Some(index) = self.open_plan
            && let Some(EntryKind::Plan(current)) = self.touch(index)
        {
            *current = plan;
            return;
        }
        let index = self.push(EntryKind::Plan(plan));
        self.open_plan = Some(index);
    }
}

/// The command an execute call's `rawInput` runs, as the policy reads it.
fn command_of(call: &ToolCall) -> Option<String> {
    match call.kind {
        crate::model::ToolKind::Execute => {
            crate::policy::command_of_input(call.raw_input.as_ref()?)
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;

//! Several chats at once: the chat list, which chat is on screen, and the
//! keys that act on chats (new, switch, rename, close, reopen a past one).
//! Each chat keeps its own [`ChatState`]: transcript, mode, grants and
//! approval queue. Nothing here crosses from one chat to another: a message
//! for chat A only ever reaches A's state, and A's effects come back tagged
//! with A's id. Who has a key (the workspace's screens, its chat keys, or
//! the chat on screen) is said in `keys/route.rs`.

use crate::keys::{self, ListCmd};
use crate::record::ChatSummary;
use crate::sanitize::one_line;

use super::picker::{Picker, PickerOutcome};

use super::{Action, ChatState, Composer, Effect, EntryKind, Focus, Msg};

/// Identifies a chat for the runtime (stable while the chat is open; the
/// list position is what the user sees as "chat N").
pub type ChatId = u64;

/// Chats the Alt+digit keys reach.
pub(crate) const DIGIT_CHATS: usize = 9;

/// One open chat.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatSlot {
    pub id: ChatId,
    pub state: ChatState,
    /// The name the user gave it; shown instead of the title.
    pub name: Option<String>,
}

impl ChatSlot {
    /// What the chat list calls it: the user's name, else the agent's
    /// title, else the first prompt, else "new chat". One line.
    pub fn label(&self) -> String {
        if let Some(name) = &self.name {
            return one_line(name);
        }
        if let Some(title) = self
            .state
            .session
            .title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        {
            return one_line(title);
        }
        self.state
            .session
            .transcript
            .entries()
            .iter()
            .find_map(|e| match &e.kind {
                EntryKind::User(text) if !text.trim().is_empty() => Some(one_line(text.trim())),
                _ => None,
            })
            .unwrap_or_else(|| "new chat".to_string())
    }

    /// Requests waiting for the user in this chat.
    pub(crate) fn pending(&self) -> usize {
        self.state.gate.approvals.len()
    }

    /// Whether a turn is running.
    pub(crate) fn running(&self) -> bool {
        self.state.is_busy()
    }
}

/// Where keys go at the workspace level.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ChatFocus {
    /// To the chat on screen.
    #[default]
    Chat,
    /// The chat list has the keys (`selected` is a list index).
    List { selected: usize },
    /// A new name for a chat is being typed.
    Rename { chat: ChatId, field: Composer },
    /// Closing a chat with a running turn or pending cards: y / n.
    ConfirmClose { chat: ChatId },
    /// Choosing the agent of a new chat (index into `agents`).
    NewChat { selected: usize },
    /// The picker of past chats.
    Picker(Box<Picker>),
}

/// Messages for the workspace.
#[derive(Debug, Clone, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived value, moved once into the update"
)]
pub enum WsMsg {
    /// A key, for the workspace or the chat on screen.
    Action(Action),
    /// A key from the terminal with the instant it was pressed (see
    /// `Msg::Key`).
    Key(Action, std::time::Instant),
    /// The runtime's clock, for every chat (see `Msg::Tick`).
    Tick(std::time::Instant),
    /// Something for one chat (from its agent session or its terminals).
    Chat(ChatId, Msg),
    /// From the runtime: a notice for the workspace (an agent no chat can
    /// run, a past chat that cannot be reopened).
    Notice(String),
    /// From the runtime: open the picker over these past chats.
    ShowPicker(Vec<ChatSummary>),
    /// From the runtime: sessions an agent listed, for the open picker.
    PickerItems(Vec<ChatSummary>),
    /// From the runtime: the agent `old` is now called `new`.
    AgentRenamed { old: String, new: String },
    /// From the runtime: the agents new chats can run (the first is the default).
    Agents(Vec<String>),
    /// From the runtime: a reopened chat takes the place of this one, if
    /// nothing was said in it yet.
    DiscardUntouched(ChatId),
}

/// The remote URL to open on a phone, as text and as QR rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCode {
    pub url: String,
    pub qr: Vec<String>,
}

/// IO the runtime must do.
#[derive(Debug, Clone, PartialEq)]
pub enum WsEffect {
    /// An effect of one chat's state.
    Chat(ChatId, Effect),
    /// Open a new chat with this agent; the runtime builds its state and
    /// calls [`Workspace::add_chat`].
    NewChat { agent: String },
    /// The chat is gone from the list (here is what it was, for its
    /// record); its answers went out before this.
    Closed(Box<ChatSlot>),
    /// Fill the picker of past chats: the runtime calls
    /// [`Workspace::show_picker`] (and later [`Workspace::add_to_picker`]).
    OpenPicker,
    /// Reopen this past chat (a record, or a session the agent listed).
    Reopen(Box<ChatSummary>),
}

/// Every open chat and which one is on screen.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workspace {
    /// In list order: chat N is `chats[N - 1]`.
    pub chats: Vec<ChatSlot>,
    /// Index of the chat on screen.
    pub active: usize,
    pub focus: ChatFocus,
    /// The agents a new chat can run, by name; the first is the default.
    pub agents: Vec<String>,
    /// Show the chat list beside the chat when the terminal is wide enough.
    pub sidebar: bool,
    /// One transient line for the workspace (shown like a chat's notice).
    pub notice: Option<String>,
    /// The help of the chat list is open (any key closes it).
    pub help: bool,
    /// How many rows of the help's key table are scrolled past.
    pub help_scroll: u16,
    /// The remote URL (its one-time token in it) and its QR code, shown
    /// over everything until a key; never in a transcript (`src/remote/`).
    pub remote_code: Option<RemoteCode>,
    next_id: ChatId,
}

impl Workspace {
    /// No chats yet; `agents` are what new chats can run.
    pub(crate) fn new(agents: Vec<String>) -> Self {
        Workspace {
            agents,
            sidebar: true,
            ..Workspace::default()
        }
    }

    /// The agent `old` is now called `new` (its chats learn it through
    /// [`Msg::AgentNamed`]): new chats offer it under that name.
    pub(crate) fn rename_agent(&mut self, old: &str, new: &str) {
        for agent in self.agents.iter_mut().filter(|a| *a == old) {
            *agent = new.to_string();
        }
    }

    /// The id the next added chat gets.
    pub(crate) fn next_chat_id(&self) -> ChatId {
        self.next_id
    }

    /// Add a chat at the end of the list and put it on screen.
    pub(crate) fn add_chat(&mut self, state: ChatState) -> ChatId {
        let id = self.next_id;
        self.next_id += 1;
        self.chats.push(ChatSlot {
            id,
            state,
            name: None,
        });
        self.active = self.chats.len() - 1;
        if matches!(self.focus, ChatFocus::NewChat { .. } | ChatFocus::Picker(_)) {
            self.focus = ChatFocus::Chat;
        }
        id
    }

    /// The chat on screen.
    pub(crate) fn active_chat(&self) -> Option<&ChatSlot> {
        self.chats.get(self.active)
    }

    /// The id of the chat on screen.
    pub(crate) fn active_id(&self) -> Option<ChatId> {
        self.active_chat().map(|c| c.id)
    }

    /// A chat by id.
    pub(crate) fn chat(&self, id: ChatId) -> Option<&ChatSlot> {
        self.chats.iter().find(|c| c.id == id)
    }

    /// A chat by id, to change.
    pub(crate) fn chat_mut(&mut self, id: ChatId) -> Option<&mut ChatSlot> {
        self.chats.iter_mut().find(|c| c.id == id)
    }

    /// Position of a chat in the list (chat N is position N - 1).
    pub(crate) fn position(&self, id: ChatId) -> Option<usize> {
        self.chats.iter().position(|c| c.id == id)
    }

    /// Chats not on screen with requests waiting: (chat number, count), in
    /// list order.
    pub fn waiting_elsewhere(&self) -> Vec<(usize, usize)> {
        self.chats
            .iter()
            .enumerate()
            .filter(|(i, c)| *i != self.active && c.pending() > 0)
            .map(|(i, c)| (i + 1, c.pending()))
            .collect()
    }

    /// The picker of past chats, when it is open.
    pub fn picker(&self) -> Option<&Picker> {
        match &self.focus {
            ChatFocus::Picker(picker) => Some(picker),
            _ => None,
        }
    }

    /// Open the picker over these past chats (newest first).
    pub(crate) fn show_picker(&mut self, items: Vec<ChatSummary>) {
        self.focus = ChatFocus::Picker(Box::new(Picker::new(items)));
    }

    /// Sessions an agent listed arrived: add the ones not shown yet.
    pub(crate) fn add_to_picker(&mut self, items: Vec<ChatSummary>) {
        if let ChatFocus::Picker(picker) = &mut self.focus {
            picker.add(items);
        }
    }

    /// Apply a message; return the IO to do.
    pub(crate) fn update(&mut self, msg: WsMsg) -> Vec<WsEffect> {
        match msg {
            WsMsg::Chat(id, msg) => self.send_chat(id, msg),
            WsMsg::Action(action) => self.on_action(action, None),
            WsMsg::Key(action, at) => self.on_action(action, Some(at)),
            WsMsg::Tick(now) => {
                for chat in &mut self.chats {
                    chat.state.update(Msg::Tick(now));
                }
                Vec::new()
            }
            other => self.on_runtime(other),
        }
    }

    /// Give a message to one chat; its effects come back tagged with its id.
    pub(crate) fn send_chat(&mut self, id: ChatId, msg: Msg) -> Vec<WsEffect> {
        let Some(chat) = self.chat_mut(id) else {
            return Vec::new();
        };
        let effects = chat.state.update(msg);
        let quit = effects.contains(&Effect::Quit);
        let mut out: Vec<WsEffect> = effects.into_iter().map(|e| WsEffect::Chat(id, e)).collect();
        if quit {
            // Leaving warden leaves every chat: each answers its own cards.
            for other in &mut self.chats {
                if other.id != id && !other.state.view.quitting {
                    let more = other.state.update(Msg::Action(Action::Quit));
                    out.extend(more.into_iter().map(|e| WsEffect::Chat(other.id, e)));
                }
            }
        }
        out
    }

    /// Whether a chat needs the runtime's clock now (a card not yet seen).
    pub(crate) fn needs_clock(&self) -> bool {
        self.chats.iter().any(|c| c.state.needs_clock())
    }

    /// When the chat on screen's selected card starts taking answers (or
    /// takes the keys), while it does not yet, or a chat's mode change
    /// settles: the runtime sends its clock then.
    pub(crate) fn arming_deadline(&self) -> Option<std::time::Instant> {
        let arming = self.chats.get(self.active)?.state.arming_deadline();
        let settle = self
            .chats
            .iter()
            .filter_map(|c| c.state.settle_deadline())
            .min();
        [arming, settle].into_iter().flatten().min()
    }

    pub(crate) fn on_list_key(
        &mut self,
        action: Action,
        key: Option<keys::Key>,
        selected: usize,
    ) -> Vec<WsEffect> {
        let last = self.chats.len().saturating_sub(1);
        let selected = selected.min(last);
        let stay = |ws: &mut Workspace, selected| {
            ws.focus = ChatFocus::List { selected };
            Vec::new()
        };
        // The chat keys mean here what the list's own keys do.
        let cmd = match &action {
            Action::GoToChat(n) => {
                self.go_to(*n);
                return Vec::new();
            }
            Action::NewChat => Some(ListCmd::New),
            Action::PastChats => Some(ListCmd::Past),
            Action::CloseChat => Some(ListCmd::Remove),
            // Shift-Tab changes the mode of the chat on screen, as the
            // footer says; the list stays open.
            Action::BackTab => {
                let effects = match self.active_id() {
                    Some(id) => self.send_chat(id, Msg::Action(Action::BackTab)),
                    None => Vec::new(),
                };
                self.focus = ChatFocus::List { selected };
                return effects;
            }
            _ => keys::lookup_key(keys::CHAT_LIST, key),
        };
        match cmd {
            Some(ListCmd::Up) => stay(self, selected.saturating_sub(1)),
            Some(ListCmd::Down) => stay(self, (selected + 1).min(last)),
            Some(ListCmd::Pick) => {
                self.active = selected;
                Vec::new()
            }
            Some(ListCmd::Close) => Vec::new(),
            Some(ListCmd::Help) => {
                self.help = true;
                self.help_scroll = 0;
                stay(self, selected)
            }
            Some(ListCmd::Digit) => {
                if let Action::Char(c @ '1'..='9') = action {
                    self.go_to(c as usize - '0' as usize);
                }
                Vec::new()
            }
            Some(ListCmd::New) => self.new_chat(),
            Some(ListCmd::Past) => vec![WsEffect::OpenPicker],
            Some(ListCmd::Sidebar) => {
                self.sidebar = !self.sidebar;
                stay(self, selected)
            }
            Some(ListCmd::Rename) => {
                if let Some(chat) = self.chats.get(selected) {
                    let mut field = Composer::default();
                    field.insert_str(&chat.label());
                    self.focus = ChatFocus::Rename {
                        chat: chat.id,
                        field,
                    };
                }
                Vec::new()
            }
            Some(ListCmd::Remove) => match self.chats.get(selected) {
                Some(chat) => {
                    let id = chat.id;
                    let effects = self.close(id);
                    if self.focus == ChatFocus::Chat && !self.chats.is_empty() {
                        self.focus = ChatFocus::List {
                            selected: selected.min(self.chats.len() - 1),
                        };
                    }
                    effects
                }
                None => Vec::new(),
            },
            None => stay(self, selected),
        }
    }

    pub(crate) fn on_rename_key(
        &mut self,
        action: Action,
        chat: ChatId,
        mut field: Composer,
    ) -> Vec<WsEffect> {
        match action {
            Action::Submit => {
                let name = one_line(field.text().trim());
                if let Some(slot) = self.chat_mut(chat) {
                    slot.name = (!name.is_empty()).then_some(name);
                }
                self.focus = ChatFocus::List {
                    selected: self.position(chat).unwrap_or(self.active),
                };
            }
            Action::Cancel => {
                self.focus = ChatFocus::List {
                    selected: self.position(chat).unwrap_or(self.active),
                };
            }
            Action::Char(c) if c.is_control() => self.focus = ChatFocus::Rename { chat, field },
            Action::Newline | Action::Tab | Action::BackTab | Action::Up | Action::Down => {
                self.focus = ChatFocus::Rename { chat, field };
            }
            Action::Paste(text) => {
                let clean: String = text
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                field.insert_str(&clean);
                self.focus = ChatFocus::Rename { chat, field };
            }
            other => {
                super::edit_composer(&mut field, &other);
                self.focus = ChatFocus::Rename { chat, field };
            }
        }
        Vec::new()
    }

    pub(crate) fn on_confirm_key(&mut self, action: &Action, chat: ChatId) -> Vec<WsEffect> {
        match action {
            Action::Char('y' | 'Y') | Action::Submit => self.close_now(chat),
            Action::Char('n' | 'N') | Action::Cancel => Vec::new(),
            _ => {
                self.focus = ChatFocus::ConfirmClose { chat };
                Vec::new()
            }
        }
    }

    pub(crate) fn on_new_chat_key(&mut self, action: &Action, selected: usize) -> Vec<WsEffect> {
        let last = self.agents.len().saturating_sub(1);
        match action {
            Action::Up | Action::BackTab => {
                self.focus = ChatFocus::NewChat {
                    selected: selected.saturating_sub(1),
                };
                Vec::new()
            }
            Action::Down | Action::Tab => {
                self.focus = ChatFocus::NewChat {
                    selected: (selected + 1).min(last),
                };
                Vec::new()
            }
            Action::Submit => match self.agents.get(selected) {
                Some(agent) => vec![WsEffect::NewChat {
                    agent: agent.clone(),
                }],
                None => Vec::new(),
            },
            Action::Char(c @ '1'..='9') => match self.agents.get(*c as usize - '1' as usize) {
                Some(agent) => vec![WsEffect::NewChat {
                    agent: agent.clone(),
                }],
                None => {
                    self.focus = ChatFocus::NewChat { selected };
                    Vec::new()
                }
            },
            Action::Cancel => Vec::new(),
            _ => {
                self.focus = ChatFocus::NewChat { selected };
                Vec::new()
            }
        }
    }

    pub(crate) fn on_picker_key(
        &mut self,
        action: &Action,
        mut picker: Box<Picker>,
    ) -> Vec<WsEffect> {
        match picker.update(action) {
            PickerOutcome::Continue => {
                self.focus = ChatFocus::Picker(picker);
                Vec::new()
            }
            PickerOutcome::Quit => Vec::new(),
            PickerOutcome::Open(id) => {
                let chosen = picker.items().iter().find(|c| c.chat_id == id).cloned();
                if let Some(open) = self.chats.iter().position(|c| {
                    chosen.as_ref().is_some_and(|s| {
                        c.state.session_id() == Some(s.session_id.as_str())
                            && (c.state.session.agent_name == s.agent
                                || c.state.gate.agent_policy.name == s.agent)
                    })
                }) {
                    // Already open: go there rather than load it twice.
                    self.active = open;
                    return Vec::new();
                }
                chosen
                    .map(|c| vec![WsEffect::Reopen(Box::new(c))])
                    .unwrap_or_default()
            }
        }
    }

    /// Ctrl-N: one agent opens at once; several ask which.
    pub(crate) fn new_chat(&mut self) -> Vec<WsEffect> {
        match self.agents.as_slice() {
            [] => {
                self.notice = Some("no agent to start a chat with".into());
                Vec::new()
            }
            [only] => vec![WsEffect::NewChat {
                agent: only.clone(),
            }],
            _ => {
                let current = self.active_chat().and_then(|c| {
                    self.agents
                        .iter()
                        .position(|a| *a == c.state.session.agent_name)
                });
                self.focus = ChatFocus::NewChat {
                    selected: current.unwrap_or(0),
                };
                Vec::new()
            }
        }
    }

    /// Chat number `n` (1-based) on screen, if there is one.
    pub(crate) fn go_to(&mut self, n: usize) {
        if n >= 1 && n <= self.chats.len() {
            self.active = n - 1;
        } else {
            self.notice = Some(format!("there is no chat {n}"));
        }
    }

    pub(crate) fn switch_by(&mut self, step: isize) -> Vec<WsEffect> {
        let n = self.chats.len();
        if n > 1 {
            self.active = (self.active as isize + step).rem_euclid(n as isize) as usize;
        }
        Vec::new()
    }

    /// Drop a chat nothing was sent in yet (a reopened chat takes its place).
    pub(crate) fn discard_untouched(&mut self, id: ChatId) -> Vec<WsEffect> {
        let untouched = self.chat(id).is_some_and(|c| {
            !c.running()
                && c.pending() == 0
                && c.name.is_none()
                && !c
                    .state
                    .session
                    .transcript
                    .entries()
                    .iter()
                    .any(|e| matches!(e.kind, EntryKind::User(_)))
        });
        if untouched && self.chats.len() > 1 {
            let active = self.active_id();
            let effects = self.close_now(id);
            // The chat the user opened replaced it: "closed chat 1: new
            // chat" would only puzzle.
            self.notice = None;
            if let Some(active) = active.and_then(|a| self.position(a)) {
                self.active = active;
            }
            effects
        } else {
            Vec::new()
        }
    }

    /// Close a chat: at once when it is idle, else ask first.
    pub(crate) fn close(&mut self, id: ChatId) -> Vec<WsEffect> {
        let Some(chat) = self.chat(id) else {
            return Vec::new();
        };
        if self.chats.len() == 1 {
            self.notice = Some("this is the only chat: Ctrl-D quits warden".into());
            return Vec::new();
        }
        if chat.running() || chat.pending() > 0 {
            self.focus = ChatFocus::ConfirmClose { chat: id };
            return Vec::new();
        }
        self.close_now(id)
    }

    /// Cancel the chat's turn, answer its requests `cancelled`, drop it.
    fn close_now(&mut self, id: ChatId) -> Vec<WsEffect> {
        let Some(index) = self.position(id) else {
            return Vec::new();
        };
        let chat = &mut self.chats[index];
        let mut out: Vec<WsEffect> = chat
            .state
            .close()
            .into_iter()
            .map(|e| WsEffect::Chat(id, e))
            .collect();
        let slot = self.chats.remove(index);
        self.notice = Some(format!("closed chat {}: {}", index + 1, slot.label()));
        if self.active > index || self.active >= self.chats.len() {
            self.active = self.active.saturating_sub(1);
        }
        out.push(WsEffect::Closed(Box::new(slot)));
        out
    }
}

/// The question asked before closing a busy chat.
pub(crate) fn close_question(chat: &ChatSlot) -> String {
    let mut what = Vec::new();
    if chat.running() {
        what.push("its running turn".to_string());
    }
    match chat.pending() {
        0 => {}
        1 => what.push("1 pending request".to_string()),
        n => what.push(format!("{n} pending requests")),
    }
    let what = what.join(" and ");
    let what = if chat.running() {
        what
    } else {
        format!("its {what}")
    };
    format!(
        "close \"{}\"? {what} will be cancelled · y close · n keep",
        chat.label(),
    )
}

impl ChatState {
    /// The chat is closing: cancel its turn and answer every pending
    /// request `cancelled` (the runtime then drops its IO).
    pub(crate) fn close(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.session.turn.is_some() {
            effects.extend(self.cancel());
        }
        effects.extend(self.cancel_all_approvals("the chat was closed"));
        self.view.focus = Focus::COMPOSER;
        self.view.quitting = true;
        effects
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;

//! What the composer keeps besides its text: the prompt history (Up/Down,
//! Ctrl-R search), the messages queued while the agent works, the last
//! cleared text (Ctrl-Y brings it back), and the slash commands (warden's
//! own and the agent's, from `available_commands_update`).
//!
//! The runtime loads the history when a chat opens ([`DraftsMsg`]) and saves
//! the prompts remembered since it last looked ([`Drafts::remembered`]);
//! nothing here does IO.

use super::{Action, ChatState, Connection, Effect, Modal, Pane};
use crate::model::{SlashCommand, StopReason};
use crate::policy::Mode;

mod own_commands;

use own_commands::SIGN_IN;
pub(crate) use own_commands::WARDEN_COMMANDS;

/// Entries of the history kept per working directory.
pub(crate) const HISTORY_LIMIT: usize = 1000;

/// Rows of a popup list shown at most.
pub(crate) const POPUP_ROWS: usize = 8;

/// What a message typed while the agent starts is told.
const QUEUED_UNTIL_READY: &str = "queued: sent when the agent is ready";

/// The composer's memory (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Drafts {
    /// Earlier prompts of this working directory, oldest first.
    pub history: Vec<String>,
    /// Prompts remembered this run: the runtime saves the newest ones
    /// it has not saved yet (like the chat record, after each update).
    pub remembered: u64,
    /// Walking the history with Up/Down.
    browsing: Option<Browse>,
    /// Messages typed while the agent works, sent in order when turns end.
    pub queue: Vec<String>,
    /// Ctrl-S during a turn: the cancelled turn's end sends the queue.
    send_now: bool,
    /// Messages were queued while the agent was starting: the first goes
    /// once it is ready, the rest turn by turn.
    until_ready: bool,
    /// Alt-Up took the queued message at this place back into the
    /// composer: sent again, it goes back there, not ahead of the ones
    /// queued before it.
    pulled: Option<usize>,
    /// The text Ctrl-C, Ctrl-U or Ctrl-K last removed (Ctrl-Y puts it back).
    pub cleared: Option<String>,
    /// The agent's slash commands.
    pub commands: Vec<SlashCommand>,
    /// The Ctrl-R history search, while open.
    pub search: Option<Search>,
    /// Highlighted row of the slash command list.
    slash_selected: usize,
    /// Esc closed the slash list (until the composer is cleared).
    pub(super) slash_dismissed: bool,
    /// The working directory's files (relative paths), once listed.
    pub files: Option<Vec<String>>,
    /// The `@` finder, while a mention is typed.
    pub mention: Option<super::mention::Mention>,
    /// Long pastes folded in the composer, by marker (`paste.rs`).
    pub pastes: super::paste::Pastes,
    /// The agent lists ways to sign in (`authMethods`): `/login` is offered.
    pub sign_in: bool,
}

/// Where Up/Down are in the history, and the draft they replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Browse {
    index: usize,
    draft: String,
}

/// The Ctrl-R search: what is typed and the highlighted match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Search {
    pub query: String,
    pub selected: usize,
}

/// What the runtime tells the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftsMsg {
    /// This working directory's earlier prompts, oldest first (read when
    /// the chat opens).
    HistoryLoaded(Vec<String>),
    /// The external editor closed: the edited text, or why it failed.
    Edited(Result<String, String>),
    /// `/export` wrote the chat (to this path), or failed (why).
    Exported(Result<String, String>),
    /// The working directory's files, for the `@` finder.
    Files(Vec<String>),
    /// Whether the agent lists ways to sign in (`authMethods` at
    /// `initialize`): only then is `/login` offered and taken.
    SignIn(bool),
}

/// IO the composer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftsEffect {
    /// Suspend the screen and open `$VISUAL` / `$EDITOR` on this text.
    OpenEditor(String),
    /// Write the chat as Markdown (`/export [FILE]`: FILE in the working
    /// directory, else the exports folder).
    Export(Option<String>),
    /// A workspace key a slash command stands for (`/new`, `/resume`).
    Workspace(Action),
    /// List the working directory's files off the loop (`@` typed).
    ListFiles,
    /// Suspend the screen and run the agent's terminal login (`/login
    /// [METHOD]`), then restart the agent.
    Login(Option<String>),
    /// Serve the waiting cards to another device, or make its URL anew
    /// (`/remote`, `src/remote/`).
    Remote,
}

/// One row of a popup list above the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopupItem {
    /// What is picked (`/name`, or a history entry's first line).
    pub label: String,
    /// Said beside it (a command's description).
    pub detail: String,
}

/// A list shown above the composer: the slash commands or the history search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popup {
    /// The title on its border.
    pub title: String,
    pub items: Vec<PopupItem>,
    pub selected: usize,
}

/// A slash command offered in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Offer {
    name: String,
    description: String,
    hint: String,
    own: bool,
}

impl Drafts {
    /// Remember a prompt (not twice in a row), its pastes whole.
    pub(crate) fn remember(&mut self, text: &str) {
        let text = self.pastes.expand(text);
        if self.history.last().is_some_and(|last| *last == text) {
            return;
        }
        self.history.push(text);
        self.remembered += 1;
        if self.history.len() > HISTORY_LIMIT {
            let extra = self.history.len() - HISTORY_LIMIT;
            self.history.drain(..extra);
        }
    }

    /// History entries matching `query` (case-insensitive), newest first,
    /// each once.
    pub(crate) fn search_matches(&self, query: &str) -> Vec<&str> {
        let query = query.to_lowercase();
        let mut out: Vec<&str> = Vec::new();
        for entry in self.history.iter().rev() {
            if entry.to_lowercase().contains(&query) && !out.contains(&entry.as_str()) {
                out.push(entry);
            }
        }
        out
    }

    /// warden's commands this chat offers: `/login` only when the agent
    /// lists ways to sign in.
    fn own_commands(
        &self,
    ) -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
        let sign_in = self.sign_in;
        WARDEN_COMMANDS
            .iter()
            .filter(move |(name, _, _)| sign_in || *name != SIGN_IN)
    }

    /// Commands whose name starts with (then contains) `query`: warden's
    /// own first; an agent's command whose name is or looks like warden's
    /// is not offered (warden's runs).
    fn offers(&self, query: &str) -> Vec<Offer> {
        let query = query.to_lowercase();
        let own = self.own_commands().map(|(name, description, hint)| Offer {
            name: (*name).to_string(),
            description: (*description).to_string(),
            hint: (*hint).to_string(),
            own: true,
        });
        let agent = self
            .commands
            .iter()
            .filter(|c| {
                // Nor one whose name only looks like warden's (`/еxport`
                // with a Cyrillic `е`): the user would take it for warden's.
                let name = crate::confusable::skeleton(&c.name);
                !self
                    .own_commands()
                    .any(|(n, _, _)| crate::confusable::skeleton(n) == name)
            })
            .map(|c| Offer {
                name: c.name.clone(),
                description: c.description.clone(),
                hint: c.hint.clone().unwrap_or_default(),
                own: false,
            });
        let all: Vec<Offer> = own.chain(agent).collect();
        let (mut first, rest): (Vec<Offer>, Vec<Offer>) = all
            .into_iter()
            .filter(|o| o.name.to_lowercase().contains(&query))
            .partition(|o| o.name.to_lowercase().starts_with(&query));
        first.extend(rest);
        first
    }
}

/// The slash command being typed: the text after `/` while it is one word.
fn slash_query(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('/')?;
    (!rest.contains(char::is_whitespace)).then_some(rest)
}

/// A history entry as one row: its first line, and how many more.
fn one_row(entry: &str) -> PopupItem {
    let mut lines = entry.lines();
    let first = lines.next().unwrap_or_default().to_string();
    let more = lines.count();
    PopupItem {
        label: first,
        detail: if more > 0 {
            format!("+{more} lines")
        } else {
            String::new()
        },
    }
}

impl ChatState {
    /// The list shown above the composer, if any: the history search, or
    /// the slash commands matching what is typed.
    pub fn composer_popup(&self) -> Option<Popup> {
        if !self.view.focus.is(Pane::Composer) {
            return None;
        }
        if let Some(popup) = self.stuck_move_popup() {
            return Some(popup);
        }
        if let Some(popup) = self.checkpoint_popup() {
            return Some(popup);
        }
        if let Some(popup) = self.mention_popup() {
            return Some(popup);
        }
        if let Some(search) = &self.view.drafts.search {
            let matches = self.view.drafts.search_matches(&search.query);
            return Some(Popup {
                title: format!(
                    "history: {}▏ · Ctrl+R older · Enter take · Esc close",
                    search.query
                ),
                selected: search.selected.min(matches.len().saturating_sub(1)),
                items: matches.into_iter().map(one_row).collect(),
            });
        }
        let offers = self.slash_offers()?;
        Some(Popup {
            title: "commands · Tab complete · Enter run · Esc close".into(),
            selected: self.view.drafts.slash_selected.min(offers.len() - 1),
            items: offers
                .into_iter()
                .map(|o| PopupItem {
                    label: format!("/{}", o.name),
                    // Whose it is comes first, where the agent's own
                    // description cannot push it out of sight.
                    detail: if o.own {
                        format!("warden: {}", o.description)
                    } else {
                        format!("agent: {}", o.description)
                    },
                })
                .collect(),
        })
    }

    /// The offered commands while the slash list is open (never empty).
    fn slash_offers(&self) -> Option<Vec<Offer>> {
        if self.view.drafts.slash_dismissed || self.view.drafts.search.is_some() {
            return None;
        }
        let query = slash_query(self.view.composer.text())?;
        let offers = self.view.drafts.offers(query);
        (!offers.is_empty()).then_some(offers)
    }

    /// The input hint to show after a command typed with nothing after it
    /// (`/name` or `/name `).
    pub fn composer_hint(&self) -> Option<String> {
        let text = self.view.composer.text();
        let name = text.strip_prefix('/')?;
        let name = name.strip_suffix(' ').unwrap_or(name);
        if name.is_empty() || name.contains(char::is_whitespace) {
            return None;
        }
        self.view
            .drafts
            .offers(name)
            .into_iter()
            .find(|o| o.name == name)
            .map(|o| o.hint)
            .filter(|hint| !hint.is_empty())
    }

    /// Keys the composer's memory takes before the usual composer keys;
    /// `None` passes the key on.
    pub(crate) fn drafts_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
        if !self.view.focus.is(Pane::Composer) {
            return None;
        }
        if self.view.drafts.search.is_some() {
            return Some(self.search_key(action));
        }
        if let Some(effects) = self.mention_key(action) {
            return Some(effects);
        }
        if !matches!(action, Action::Up | Action::Down) {
            self.view.drafts.browsing = None;
        }
        if let Some(offers) = self.slash_offers() {
            let selected = self.view.drafts.slash_selected.min(offers.len() - 1);
            let picked = &offers[selected];
            match action {
                Action::Up => {
                    self.view.drafts.slash_selected =
                        selected.checked_sub(1).unwrap_or(offers.len() - 1);
                    return Some(Vec::new());
                }
                Action::Down => {
                    self.view.drafts.slash_selected = (selected + 1) % offers.len();
                    return Some(Vec::new());
                }
                Action::Tab => {
                    self.view.composer.set(&format!("/{} ", picked.name));
                    return Some(Vec::new());
                }
                Action::Cancel => {
                    self.view.drafts.slash_dismissed = true;
                    return Some(Vec::new());
                }
                Action::Submit if !picked.own && !picked.hint.is_empty() => {
                    // It takes input: complete it and let the user type it.
                    self.view.composer.set(&format!("/{} ", picked.name));
                    return Some(Vec::new());
                }
                Action::Submit => self.view.composer.set(&format!("/{}", picked.name)),
                Action::Char(_) | Action::Backspace => self.view.drafts.slash_selected = 0,
                _ => {}
            }
        }
        // A paste of many lines: one marked line, sent whole.
        if let Action::Paste(text) = action
            && let Some(marker) = self
                .view
                .drafts
                .pastes
                .fold(&text.replace("\r\n", "\n").replace('\r', "\n"))
        {
            self.view.composer.insert_str(&marker);
            return Some(Vec::new());
        }
        // A dropped or pasted image file: a mention, which goes as an
        // `image` block when the agent takes images (else a link).
        if let Action::Paste(text) = action
            && let Some(path) = pasted_image(text)
        {
            let quoted = if path.contains(char::is_whitespace) {
                format!("@\"{path}\" ")
            } else {
                format!("@{path} ")
            };
            self.view.composer.insert_str(&quoted);
            return Some(Vec::new());
        }
        match action {
            Action::Submit => Some(self.submit_draft()),
            Action::SendNow => Some(self.send_now()),
            Action::Up => self.history_up(),
            Action::Down => self.history_down(),
            Action::Restart
                if self.session.connection != Connection::Down && !self.session.agent_stuck =>
            {
                self.view.drafts.search = Some(Search::default());
                Some(Vec::new())
            }
            Action::KillLineStart | Action::KillLineEnd => {
                let (before, after) = self.view.composer.line_around_cursor();
                let gone = if *action == Action::KillLineStart {
                    before
                } else {
                    after
                };
                if !gone.is_empty() {
                    self.view.drafts.cleared = Some(gone);
                }
                None
            }
            Action::Restore => {
                match self.view.drafts.cleared.clone() {
                    Some(text) => self.view.composer.insert_str(&text),
                    None => self.view.notice = Some("nothing cleared to bring back".into()),
                }
                Some(Vec::new())
            }
            Action::EditQueued => Some(self.edit_queued()),
            Action::Editor => Some(vec![Effect::Drafts(DraftsEffect::OpenEditor(
                self.view.drafts.pastes.expand(self.view.composer.text()),
            ))]),
            _ => {
                if self.view.composer.is_empty() {
                    self.view.drafts.slash_dismissed = false;
                }
                None
            }
        }
    }

    fn search_key(&mut self, action: &Action) -> Vec<Effect> {
        let Some(query) = self.view.drafts.search.as_ref().map(|s| s.query.clone()) else {
            return Vec::new();
        };
        let count = self.view.drafts.search_matches(&query).len();
        let Some(search) = &mut self.view.drafts.search else {
            return Vec::new();
        };
        match action {
            Action::Char(c) => {
                search.query.push(*c);
                search.selected = 0;
            }
            Action::Paste(text) => {
                search.query.push_str(text);
                search.selected = 0;
            }
            Action::Backspace => {
                search.query.pop();
                search.selected = 0;
            }
            Action::Restart | Action::Up => {
                search.selected = (search.selected + 1).min(count.saturating_sub(1));
            }
            Action::Down => search.selected = search.selected.saturating_sub(1),
            Action::Submit | Action::Tab => {
                let query = search.query.clone();
                let selected = search.selected;
                self.view.drafts.search = None;
                let picked = self
                    .view
                    .drafts
                    .search_matches(&query)
                    .get(selected)
                    .map(|s| s.to_string());
                if let Some(text) = picked {
                    self.set_composer_folded(&text);
                }
            }
            _ => self.view.drafts.search = None,
        }
        Vec::new()
    }

    fn history_up(&mut self) -> Option<Vec<Effect>> {
        let on_first_line = self.view.composer.cursor_line_col().0 == 0;
        if self.view.drafts.history.is_empty() || !on_first_line {
            return None;
        }
        let index = match &self.view.drafts.browsing {
            Some(browse) => browse.index,
            None => {
                self.view.drafts.browsing = Some(Browse {
                    index: self.view.drafts.history.len(),
                    draft: self.view.composer.text().to_string(),
                });
                self.view.drafts.history.len()
            }
        };
        if index == 0 {
            return Some(Vec::new());
        }
        let text = self.view.drafts.history[index - 1].clone();
        self.set_composer_folded(&text);
        if let Some(browse) = &mut self.view.drafts.browsing {
            browse.index = index - 1;
        }
        Some(Vec::new())
    }

    /// A remembered prompt back in the composer, folded when long.
    fn set_composer_folded(&mut self, text: &str) {
        match self.view.drafts.pastes.fold(text) {
            Some(marker) => self.view.composer.set(&marker),
            None => self.view.composer.set(text),
        }
    }

    fn history_down(&mut self) -> Option<Vec<Effect>> {
        let browse = self.view.drafts.browsing.as_ref()?;
        let (line, _) = self.view.composer.cursor_line_col();
        if line < self.view.composer.text().matches('\n').count() {
            return None;
        }
        let next = browse.index + 1;
        if next >= self.view.drafts.history.len() {
            let draft = browse.draft.clone();
            self.view.composer.set(&draft);
            self.view.drafts.browsing = None;
        } else {
            let text = self.view.drafts.history[next].clone();
            self.set_composer_folded(&text);
            if let Some(browse) = &mut self.view.drafts.browsing {
                browse.index = next;
            }
        }
        Some(Vec::new())
    }

    /// Enter: warden's own command runs, a message during a turn is queued,
    /// anything else is sent as usual (and remembered).
    fn submit_draft(&mut self) -> Vec<Effect> {
        let text = self.view.composer.text().to_string();
        if text.trim().is_empty() {
            return Vec::new();
        }
        if let Some(effects) = self.own_command(&text) {
            self.view.composer.take();
            self.view.drafts.slash_dismissed = false;
            let mut all = self.remember(&text);
            all.extend(effects);
            return all;
        }
        if self.view.drafts.pulled.is_some() {
            return self.requeue(&text);
        }
        if self.session.connection == Connection::Starting && !self.is_busy() {
            // Typed while the agent starts (Claude Code takes seconds):
            // nothing is lost, and nothing needs typing again.
            self.enqueue_composer();
            self.view.drafts.until_ready = true;
            self.view.notice = Some(format!(
                "{QUEUED_UNTIL_READY} ({} waiting) · Alt+↑ edit",
                self.view.drafts.queue.len()
            ));
            return self.remember(&text);
        }
        if self.is_busy() && self.session.connection != Connection::Down {
            self.enqueue_composer();
            self.view.notice = Some(format!(
                "queued: sent when the turn ends ({} waiting) · Ctrl+S send now · Alt+↑ edit",
                self.view.drafts.queue.len()
            ));
            return self.remember(&text);
        }
        let mut effects = self.submit();
        if self.view.composer.is_empty() {
            self.view.drafts.slash_dismissed = false;
            let mut all = self.remember(&text);
            all.append(&mut effects);
            return all;
        }
        effects
    }

    /// A message Alt-Up pulled back goes back to its place in the queue;
    /// when no turn runs, the queue goes on from its first message.
    fn requeue(&mut self, text: &str) -> Vec<Effect> {
        self.enqueue_composer();
        self.view.drafts.slash_dismissed = false;
        let mut effects = self.remember(text);
        if self.is_busy() {
            self.view.notice = Some(format!(
                "queued again in its place ({} waiting) · Ctrl+S send now · Alt+↑ edit",
                self.view.drafts.queue.len()
            ));
        } else {
            self.view.drafts.send_now = true;
            effects.extend(self.send_queued());
        }
        effects
    }

    /// The composer's message into the queue: back at the place Alt-Up took
    /// it from, else last.
    fn enqueue_composer(&mut self) {
        let view = &mut self.view;
        let queue = &mut view.drafts.queue;
        let place = view.drafts.pulled.take().unwrap_or(queue.len());
        queue.insert(place.min(queue.len()), view.composer.take());
    }

    fn remember(&mut self, text: &str) -> Vec<Effect> {
        self.view.drafts.remember(text);
        Vec::new()
    }

    /// Ctrl-S: queue what is typed, then cancel the turn so the queue goes
    /// at once (or send it now when no turn runs).
    fn send_now(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        let text = self.view.composer.text().to_string();
        if !text.trim().is_empty() {
            self.enqueue_composer();
            effects.extend(self.remember(&text));
        }
        if self.view.drafts.queue.is_empty() {
            self.view.notice = Some("nothing to send".into());
            return effects;
        }
        self.view.drafts.send_now = true;
        if self.is_busy() {
            effects.extend(self.cancel());
            return effects;
        }
        effects.extend(self.send_queued());
        effects
    }

    /// Alt-Up: the newest queued message back into the composer.
    fn edit_queued(&mut self) -> Vec<Effect> {
        if self.view.drafts.queue.is_empty() {
            self.view.notice = Some("nothing is queued".into());
        } else if !self.view.composer.is_empty() {
            self.view.notice =
                Some("send or clear the message first (Ctrl+C, Ctrl+Y brings it back)".into());
        } else if let Some(text) = self.view.drafts.queue.pop() {
            self.view.composer.set(&text);
            self.view.drafts.pulled = Some(self.view.drafts.queue.len());
        }
        Vec::new()
    }

    /// The agent is ready (its session open, its mode set): what was queued
    /// while it started goes, the first message now.
    pub(super) fn send_when_ready(&mut self) -> Vec<Effect> {
        let ready = matches!(self.session.connection, Connection::Ready { .. });
        if !ready || self.session.turn.is_some() || !self.view.drafts.until_ready {
            return Vec::new();
        }
        self.view.drafts.until_ready = false;
        self.view.drafts.send_now = true;
        let effects = self.send_queued();
        if !effects.is_empty()
            && self
                .view
                .notice
                .as_deref()
                .is_some_and(|n| n.starts_with(QUEUED_UNTIL_READY))
        {
            self.view.notice = None;
        }
        effects
    }

    /// A turn ended: the next queued message goes, unless the user cancelled
    /// the turn (Esc): then the queue waits for Ctrl+S.
    pub(super) fn send_queued(&mut self) -> Vec<Effect> {
        if self.session.turn.is_some() || self.view.drafts.queue.is_empty() {
            return Vec::new();
        }
        let now = std::mem::take(&mut self.view.drafts.send_now);
        if self.session.last_stop == Some(StopReason::Cancelled) && !now {
            self.view.notice = Some(format!(
                "{} queued message(s) wait: Ctrl+S sends, Alt+↑ edits",
                self.view.drafts.queue.len()
            ));
            return Vec::new();
        }
        if !matches!(self.session.connection, Connection::Ready { .. }) || self.refuse_turn() {
            return Vec::new();
        }
        let text = self.view.drafts.queue.remove(0);
        self.send_prompt(text)
    }

    /// A message from the runtime for the composer.
    pub(super) fn on_drafts(&mut self, msg: DraftsMsg) -> Vec<Effect> {
        match msg {
            DraftsMsg::HistoryLoaded(mut earlier) => {
                earlier.append(&mut self.view.drafts.history);
                self.view.drafts.history = earlier;
                if self.view.drafts.history.len() > HISTORY_LIMIT {
                    let extra = self.view.drafts.history.len() - HISTORY_LIMIT;
                    self.view.drafts.history.drain(..extra);
                }
            }
            DraftsMsg::Edited(Ok(text)) => {
                let text = text.strip_suffix('\n').unwrap_or(&text);
                self.set_composer_folded(text);
            }
            DraftsMsg::Edited(Err(why)) => {
                self.view.notice = Some(format!("the editor failed: {why}"));
            }
            DraftsMsg::Exported(Ok(path)) => self.info(format!("exported the chat to {path}")),
            DraftsMsg::Exported(Err(why)) => {
                self.error(format!("the export failed: {why}"), Vec::new());
            }
            DraftsMsg::Files(files) => self.on_files(files),
            DraftsMsg::SignIn(offered) => self.view.drafts.sign_in = offered,
        }
        Vec::new()
    }
}

#[cfg(test)]
#[path = "drafts_tests.rs"]
mod tests;

/// The path of an image file a paste names, if the paste is exactly one
/// absolute path (as terminals paste a dropped file: plain, quoted, with
/// backslash-escaped spaces, or a `file://` URI) ending in an image
/// extension. Pure: whether the file exists is checked when the prompt goes.
pub(crate) fn pasted_image(text: &str) -> Option<String> {
    let text = text.trim();
    if text.contains('\n') {
        return None;
    }
    let unquoted = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(text);
    let path = match unquoted.strip_prefix("file://") {
        Some(uri) => percent_decode(uri)?,
        None => unquoted.replace("\\ ", " "),
    };
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    (path.starts_with('/') && matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp"))
        .then_some(path)
}

/// `%XX` escapes decoded (a `file://` URI's path); `None` if not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

//! The picker of past chats (`warden --resume`): the chats newest first, a
//! one-line filter, and the selected one. Pure: keys in, an outcome out.

use crate::record::{ChatSummary, filter};

use super::{Action, Composer};

/// What the picker's loop does after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PickerOutcome {
    /// Keep showing the picker: the action changed it, or meant nothing here.
    Continue,
    /// The user chose this chat (its `chat_id`) to reopen.
    Open(String),
    /// The user left without choosing.
    Quit,
}

/// Past chats to choose from, with the filter typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// Every chat, newest first.
    items: Vec<ChatSummary>,
    /// What the user typed to narrow the list.
    filter: Composer,
    /// Index into [`Picker::visible`].
    selected: usize,
}

impl Picker {
    /// A picker over `items`, which are already newest first; the first is
    /// selected and the filter is empty.
    pub(crate) fn new(items: Vec<ChatSummary>) -> Self {
        Picker {
            items,
            filter: Composer::default(),
            selected: 0,
        }
    }

    /// More chats (sessions an agent listed): those not shown yet (same
    /// agent and session) join the list, which stays newest first.
    pub(crate) fn add(&mut self, items: Vec<ChatSummary>) {
        let selected = self.selected_chat().map(|c| c.chat_id.clone());
        for item in items {
            let known = self
                .items
                .iter()
                .any(|c| c.agent == item.agent && c.session_id == item.session_id);
            if !known {
                self.items.push(item);
            }
        }
        self.items.sort_by_key(|c| std::cmp::Reverse(c.updated));
        if let Some(id) = selected {
            self.selected = self
                .visible()
                .iter()
                .position(|c| c.chat_id == id)
                .unwrap_or(0);
        }
    }

    /// Every chat, filtered or not.
    pub fn items(&self) -> &[ChatSummary] {
        &self.items
    }

    /// The filter being typed (its text and cursor).
    pub fn filter(&self) -> &Composer {
        &self.filter
    }

    /// The chats the filter lets through, newest first.
    pub(crate) fn visible(&self) -> Vec<&ChatSummary> {
        filter(&self.items, self.filter.text())
    }

    /// Index of the selected chat in [`Picker::visible`] (0 when none shows).
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// The selected chat, if any shows.
    pub(crate) fn selected_chat(&self) -> Option<&ChatSummary> {
        self.visible().get(self.selected).copied()
    }

    /// The one chat whose id starts with `prefix` (ignoring case), when
    /// exactly one does (`warden --resume` takes a unique prefix).
    pub(crate) fn only_id_with_prefix(&self, prefix: &str) -> Option<String> {
        let prefix = prefix.trim().to_ascii_lowercase();
        if prefix.is_empty() {
            return None;
        }
        let mut hits = self
            .items
            .iter()
            .filter(|c| c.chat_id.to_ascii_lowercase().starts_with(&prefix));
        match (hits.next(), hits.next()) {
            (Some(chat), None) => Some(chat.chat_id.clone()),
            _ => None,
        }
    }

    /// Select the shown chat `id`; whether it shows.
    pub(crate) fn select_id(&mut self, id: &str) -> bool {
        match self.visible().iter().position(|c| c.chat_id == id) {
            Some(index) => {
                self.selected = index;
                true
            }
            None => false,
        }
    }

    /// Apply one user action.
    pub(crate) fn update(&mut self, action: &Action) -> PickerOutcome {
        match action {
            Action::Char(c) => {
                if !c.is_control() {
                    self.filter.insert_char(*c);
                }
                self.selected = 0;
            }
            Action::Paste(text) => {
                // One line: line breaks and other controls become spaces.
                let clean: String = text
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                self.filter.insert_str(&clean);
                self.selected = 0;
            }
            Action::Backspace => self.edit(Composer::backspace),
            Action::Delete => self.edit(Composer::delete),
            Action::KillLineStart => self.edit(Composer::kill_to_line_start),
            Action::KillLineEnd => self.edit(Composer::kill_to_line_end),
            Action::DeleteWordBack => self.edit(Composer::delete_word_back),
            Action::Left => self.filter.left(),
            Action::Right => self.filter.right(),
            Action::WordLeft => self.filter.word_left(),
            Action::WordRight => self.filter.word_right(),
            Action::LineStart => self.filter.home(),
            Action::LineEnd => self.filter.end(),
            Action::Up | Action::BackTab => self.selected = self.selected.saturating_sub(1),
            Action::Down | Action::Tab => {
                let last = self.visible().len().saturating_sub(1);
                self.selected = (self.selected + 1).min(last);
            }
            Action::Submit => {
                if let Some(chat) = self.selected_chat() {
                    return PickerOutcome::Open(chat.chat_id.clone());
                }
            }
            Action::Cancel | Action::Quit | Action::Interrupt(_) => return PickerOutcome::Quit,
            _ => {}
        }
        PickerOutcome::Continue
    }

    /// Change the filter text; the list starts over at its newest chat.
    fn edit(&mut self, f: fn(&mut Composer)) {
        f(&mut self.filter);
        self.selected = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_unique_prefix_names_one_chat_and_an_ambiguous_one_none() {
        let mut p = Picker::new(vec![
            chat("ab12", "one", "demo", "/w"),
            chat("ab34", "two", "demo", "/w"),
            chat("cd56", "three", "demo", "/w"),
        ]);
        assert_eq!(p.only_id_with_prefix("AB3").as_deref(), Some("ab34"));
        assert_eq!(p.only_id_with_prefix("ab"), None, "two chats");
        assert_eq!(p.only_id_with_prefix("zz"), None);
        assert_eq!(p.only_id_with_prefix(" "), None);
        assert!(p.select_id("cd56"));
        assert_eq!(p.selected_chat().map(|c| c.chat_id.as_str()), Some("cd56"));
        assert!(!p.select_id("nope"));
    }

    fn chat(id: &str, title: &str, agent: &str, cwd: &str) -> ChatSummary {
        ChatSummary {
            chat_id: id.into(),
            agent: agent.into(),
            session_id: format!("s-{id}"),
            cwd: PathBuf::from(cwd),
            title: Some(title.into()),
            mode: None,
            updated: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            entries: 3,
            exec: false,
        }
    }

    fn picker() -> Picker {
        Picker::new(vec![
            chat("c3", "Refactor the parser", "claude", "/src/warden"),
            chat("c2", "Plan the release", "gemini", "/src/site"),
            chat("c1", "Fix parser tests", "claude", "/src/warden"),
        ])
    }

    fn ids(p: &Picker) -> Vec<&str> {
        p.visible().iter().map(|c| c.chat_id.as_str()).collect()
    }

    fn typed(p: &mut Picker, text: &str) {
        for c in text.chars() {
            assert_eq!(p.update(&Action::Char(c)), PickerOutcome::Continue);
        }
    }

    #[test]
    fn starts_with_everything_newest_first() {
        let p = picker();
        assert_eq!(ids(&p), ["c3", "c2", "c1"]);
        assert_eq!(p.selected(), 0);
        assert_eq!(p.filter().text(), "");
    }

    #[test]
    fn typing_filters_and_resets_the_selection() {
        let mut p = picker();
        p.update(&Action::Down);
        p.update(&Action::Down);
        assert_eq!(p.selected(), 2);
        typed(&mut p, "PARSER");
        assert_eq!(p.filter().text(), "PARSER");
        assert_eq!(ids(&p), ["c3", "c1"]);
        assert_eq!(p.selected(), 0);
    }

    #[test]
    fn paste_filters_on_one_line() {
        let mut p = picker();
        p.update(&Action::Down);
        p.update(&Action::Paste("gem\nini".into()));
        assert_eq!(p.filter().text(), "gem ini");
        assert_eq!(p.selected(), 0);
        p.update(&Action::KillLineStart);
        p.update(&Action::Paste("gemini".into()));
        assert_eq!(ids(&p), ["c2"]);
    }

    #[test]
    fn deleting_widens_the_filter_and_resets_the_selection() {
        let mut p = picker();
        typed(&mut p, "parserx");
        assert_eq!(ids(&p), Vec::<&str>::new());
        p.update(&Action::Backspace);
        assert_eq!(ids(&p), ["c3", "c1"]);
        p.update(&Action::Down);
        assert_eq!(p.selected(), 1);
        p.update(&Action::DeleteWordBack);
        assert_eq!(p.filter().text(), "");
        assert_eq!(p.selected(), 0);
        assert_eq!(ids(&p), ["c3", "c2", "c1"]);

        typed(&mut p, "site");
        p.update(&Action::LineStart);
        p.update(&Action::Delete);
        assert_eq!(p.filter().text(), "ite");
        p.update(&Action::LineEnd);
        p.update(&Action::Down);
        p.update(&Action::KillLineStart);
        assert_eq!(p.filter().text(), "");
        assert_eq!(p.selected(), 0);
    }

    #[test]
    fn up_and_down_stay_within_the_visible_chats() {
        let mut p = picker();
        p.update(&Action::Up);
        assert_eq!(p.selected(), 0);
        for _ in 0..5 {
            p.update(&Action::Down);
        }
        assert_eq!(p.selected(), 2);
        p.update(&Action::Up);
        assert_eq!(p.selected(), 1);
        p.update(&Action::BackTab);
        assert_eq!(p.selected(), 0);
        p.update(&Action::Tab);
        assert_eq!(p.selected(), 1);

        typed(&mut p, "parser");
        for _ in 0..5 {
            p.update(&Action::Tab);
        }
        assert_eq!(p.selected(), 1);
        assert_eq!(p.selected_chat().map(|c| c.chat_id.as_str()), Some("c1"));
    }

    #[test]
    fn enter_opens_the_selected_visible_chat() {
        let mut p = picker();
        assert_eq!(p.update(&Action::Submit), PickerOutcome::Open("c3".into()));
        p.update(&Action::Down);
        assert_eq!(p.update(&Action::Submit), PickerOutcome::Open("c2".into()));
        typed(&mut p, "fix");
        assert_eq!(p.update(&Action::Submit), PickerOutcome::Open("c1".into()));
    }

    #[test]
    fn enter_with_nothing_shown_does_nothing() {
        let mut p = picker();
        typed(&mut p, "nothing like this");
        assert_eq!(p.update(&Action::Submit), PickerOutcome::Continue);
        let mut empty = Picker::new(Vec::new());
        assert_eq!(empty.update(&Action::Down), PickerOutcome::Continue);
        assert_eq!(empty.selected(), 0);
        assert_eq!(empty.update(&Action::Submit), PickerOutcome::Continue);
    }

    #[test]
    fn esc_ctrl_c_and_ctrl_d_quit() {
        for action in [
            Action::Cancel,
            Action::Interrupt(std::time::Instant::now()),
            Action::Quit,
        ] {
            let mut p = picker();
            typed(&mut p, "parser");
            assert_eq!(p.update(&action), PickerOutcome::Quit);
        }
    }

    #[test]
    fn other_actions_change_nothing() {
        let mut p = picker();
        typed(&mut p, "cl");
        let before = p.clone();
        for action in [Action::Newline, Action::ToggleThoughts, Action::RulesScreen] {
            assert_eq!(p.update(&action), PickerOutcome::Continue);
        }
        assert_eq!(p, before);
    }
}

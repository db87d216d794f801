//! `@` mentions: typing `@` at the start of a word opens a fuzzy finder over
//! the working directory's files (listed by the runtime off the loop,
//! `.gitignore` respected); Tab or Enter puts `@path ` in the message.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

use super::drafts::{Popup, PopupItem};
use super::{Action, ChatState, DraftsEffect, Effect, Pane};

/// Matches kept (and listed) per query.
const MATCHES: usize = 50;

/// The finder while a mention is typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte index of the `@` in the composer's text.
    start: usize,
    /// The best matches of the text after the `@`, best first.
    pub matches: Vec<String>,
    pub selected: usize,
}

/// The best `MATCHES` of `files` for `query` (all files, in order, for an
/// empty query).
pub fn fuzzy(files: &[String], query: &str) -> Vec<String> {
    if query.is_empty() {
        return files.iter().take(MATCHES).cloned().collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    pattern
        .match_list(files.iter(), &mut matcher)
        .into_iter()
        .take(MATCHES)
        .map(|(path, _)| path.clone())
        .collect()
}

impl ChatState {
    /// The finder's list, while a mention is typed.
    pub(super) fn mention_popup(&self) -> Option<Popup> {
        let mention = self.view.drafts.mention.as_ref()?;
        if !self.view.focus.is(Pane::Composer) {
            return None;
        }
        let title = if self.view.drafts.files.is_none() {
            "files: listing… · Esc close".to_string()
        } else {
            "files · Tab/Enter insert · Esc close".to_string()
        };
        Some(Popup {
            title,
            selected: mention
                .selected
                .min(mention.matches.len().saturating_sub(1)),
            items: mention
                .matches
                .iter()
                .map(|path| PopupItem {
                    label: path.clone(),
                    detail: String::new(),
                })
                .collect(),
        })
    }

    /// The query: the text from after the `@` to the cursor.
    fn mention_query(&self, start: usize) -> Option<String> {
        let text = self.view.composer.text();
        let cursor = self.view.composer.cursor();
        if cursor <= start || !text.is_char_boundary(start + 1) || cursor < start + 1 {
            return None;
        }
        let query = &text[start + 1..cursor];
        (!query.contains(char::is_whitespace)).then(|| query.to_string())
    }

    /// Match again after the text changed; closes the finder when the
    /// cursor left the mention.
    fn refresh_mention(&mut self) {
        let Some(start) = self.view.drafts.mention.as_ref().map(|m| m.start) else {
            return;
        };
        let Some(query) = self.mention_query(start) else {
            self.view.drafts.mention = None;
            return;
        };
        let matches = fuzzy(
            self.view.drafts.files.as_deref().unwrap_or_default(),
            &query,
        );
        if let Some(mention) = &mut self.view.drafts.mention {
            mention.matches = matches;
            mention.selected = 0;
        }
    }

    /// The file list arrived (or changed): match again.
    pub(super) fn on_files(&mut self, files: Vec<String>) {
        self.view.drafts.files = Some(files);
        self.refresh_mention();
    }

    /// Keys while a mention is typed, and `@` opening one; `None` passes
    /// the key on.
    pub(super) fn mention_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
        if self.view.drafts.mention.is_none() {
            let text = self.view.composer.text();
            let before = &text[..self.view.composer.cursor()];
            let word_start = before.is_empty() || before.ends_with(char::is_whitespace);
            if *action != Action::Char('@') || !word_start {
                return None;
            }
            let start = self.view.composer.cursor();
            self.view.composer.insert_char('@');
            self.view.drafts.mention = Some(Mention {
                start,
                matches: Vec::new(),
                selected: 0,
            });
            self.refresh_mention();
            // List the files again each time: the tree changes.
            return Some(vec![Effect::Drafts(DraftsEffect::ListFiles)]);
        }
        let count = self
            .view
            .drafts
            .mention
            .as_ref()
            .map_or(0, |m| m.matches.len());
        match action {
            Action::Up | Action::Down => {
                if let Some(mention) = &mut self.view.drafts.mention
                    && count > 0
                {
                    mention.selected = if *action == Action::Up {
                        mention.selected.checked_sub(1).unwrap_or(count - 1)
                    } else {
                        (mention.selected + 1) % count
                    };
                }
                Some(Vec::new())
            }
            Action::Tab | Action::Submit => {
                let Some(mention) = self.view.drafts.mention.take() else {
                    return Some(Vec::new());
                };
                let Some(path) = mention.matches.get(mention.selected) else {
                    // Nothing matches: Enter sends as usual.
                    return if *action == Action::Submit {
                        None
                    } else {
                        Some(Vec::new())
                    };
                };
                let text = self.view.composer.text();
                let cursor = self.view.composer.cursor();
                let quoted = if path.contains(char::is_whitespace) {
                    format!("@\"{path}\" ")
                } else {
                    format!("@{path} ")
                };
                let new = format!("{}{quoted}{}", &text[..mention.start], &text[cursor..]);
                let at = mention.start + quoted.len();
                self.view.composer.set(&new);
                self.view.composer.set_cursor(at);
                Some(Vec::new())
            }
            Action::Cancel => {
                self.view.drafts.mention = None;
                Some(Vec::new())
            }
            Action::Char(_)
            | Action::Backspace
            | Action::Paste(_)
            | Action::Left
            | Action::Right => {
                super::edit_composer(&mut self.view.composer, action);
                self.refresh_mention();
                Some(Vec::new())
            }
            _ => {
                self.view.drafts.mention = None;
                None
            }
        }
    }
}

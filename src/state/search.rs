//! Search in the transcript (Ctrl-F) and copying from it (Alt-C, Alt-Y).
//!
//! Pure: the query, which match is selected, and what a copy key copies.
//! The view finds the selected match's row, scrolls to it and highlights
//! every match on screen (`ui::search`).
//!
//! Matches are counted in each entry's text as [`searchable`] gives it,
//! case-insensitively; "the n-th match of entry i" is what the view looks
//! for in that entry's rows.

use super::{Action, ChatState, Effect, EntryKind, Pane, Transcript};
use crate::model::ToolContent;

/// One match: the entry it is in and which of that entry's matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// Index into the transcript's entries.
    pub entry: usize,
    /// 0-based: the first, second, ... match in that entry.
    pub nth: usize,
}

/// The search bar's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// What is searched for.
    pub query: String,
    /// The query is being typed (keys go into it); else n / N move.
    pub typing: bool,
    /// The selected match, if any matched.
    pub current: Option<Match>,
    /// 1-based position of `current` among all matches, and their number,
    /// as of the last key.
    pub position: usize,
    pub count: usize,
    /// Bumped whenever `current` moves, so that the view scrolls to it once
    /// (and the user can scroll away afterwards).
    pub jumps: u64,
}

/// Lowercase, one char for one char (so that indices in the lowered text
/// are indices in the original).
pub(crate) fn lower(c: char) -> char {
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// Start indices (in chars) of the non-overlapping case-insensitive
/// matches of `needle` in `hay`.
pub(crate) fn find_all(hay: &[char], needle: &[char]) -> Vec<usize> {
    let mut found = Vec::new();
    if needle.is_empty() || hay.len() < needle.len() {
        return found;
    }
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()]
            .iter()
            .zip(needle)
            .all(|(&h, &n)| lower(h) == n)
        {
            found.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    found
}

/// The query as the matcher wants it: lowered chars.
pub(crate) fn needle(query: &str) -> Vec<char> {
    query.chars().map(lower).collect()
}

/// The text of an entry that search looks in and the copy key copies, made
/// visible (no raw control characters from the agent).
pub(crate) fn searchable(kind: &EntryKind) -> String {
    let text = match kind {
        EntryKind::User(text) | EntryKind::Agent(text) | EntryKind::Thought(text) => text.clone(),
        EntryKind::Info(text) | EntryKind::Decision { text, .. } => text.clone(),
        EntryKind::Error { message, detail } => {
            let mut all = message.clone();
            for line in detail {
                all.push('\n');
                all.push_str(line);
            }
            all
        }
        EntryKind::Plan(plan) => plan
            .iter()
            .map(|p| p.content.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        EntryKind::Tool(tool) => {
            let mut all = tool.call.title.clone();
            for content in &tool.call.content {
                match content {
                    ToolContent::Text { text } => {
                        all.push('\n');
                        all.push_str(text);
                    }
                    ToolContent::Diff { path, new, .. } => {
                        all.push('\n');
                        all.push_str(path);
                        all.push('\n');
                        all.push_str(new);
                    }
                    ToolContent::Terminal { .. } => {}
                }
            }
            all
        }
    };
    crate::sanitize::visible(&text.replace("\r\n", "\n")).into_owned()
}

/// Every match of `query` in the transcript, oldest first.
pub(crate) fn matches(transcript: &Transcript, query: &str) -> Vec<Match> {
    let needle = needle(query);
    let mut all = Vec::new();
    if needle.is_empty() {
        return all;
    }
    for (entry, e) in transcript.entries().iter().enumerate() {
        let hay: Vec<char> = searchable(&e.kind).chars().collect();
        let n = find_all(&hay, &needle).len();
        all.extend((0..n).map(|nth| Match { entry, nth }));
    }
    all
}

/// The fenced code blocks of a markdown text, in order (without the fences).
pub(crate) fn code_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let fence: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        match &mut open {
            Some((start, body)) => {
                if fence.len() >= start.len()
                    && fence.starts_with(&start[..1])
                    && trimmed[fence.len()..].trim().is_empty()
                {
                    blocks.push(body.join("\n"));
                    open = None;
                } else {
                    body.push(line);
                }
            }
            None if fence.len() >= 3 && fence.chars().all(|c| c == fence.as_bytes()[0] as char) => {
                open = Some((fence, Vec::new()));
            }
            None => {}
        }
    }
    if let Some((_, body)) = open {
        blocks.push(body.join("\n"));
    }
    blocks
}

impl ChatState {
    /// Keys while the search bar is open; `None` lets the key through.
    pub(crate) fn on_search_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
        let search = self.view.search.as_mut()?;
        match action {
            Action::Cancel | Action::Interrupt(_) => {
                self.view.search = None;
            }
            Action::Search => search.typing = true,
            Action::Char(c) if search.typing => {
                search.query.push(*c);
                self.select_newest();
            }
            Action::Paste(text) if search.typing => {
                search.query.push_str(&crate::sanitize::one_line(text));
                self.select_newest();
            }
            Action::Backspace if search.typing => {
                search.query.pop();
                self.select_newest();
            }
            Action::Submit if search.typing => {
                search.typing = false;
                if search.current.is_none() {
                    self.select_newest();
                }
            }
            Action::Submit | Action::Char('n') | Action::Up => self.step(-1),
            Action::Char('N') | Action::Down => self.step(1),
            Action::Copy | Action::CopyCode => return None,
            // Anything else leaves the search; the key then does what it
            // does in the composer, but a card that took the focus meanwhile
            // is shown first, never answered by it.
            _ if !search.typing => {
                self.view.search = None;
                if self.view.focus.is(Pane::Composer) {
                    return None;
                }
            }
            _ => {}
        }
        Some(Vec::new())
    }

    /// Open the search bar (or go back to typing in it).
    pub(crate) fn open_search(&mut self) -> Vec<Effect> {
        match &mut self.view.search {
            Some(search) => search.typing = true,
            None => {
                self.view.search = Some(Search {
                    typing: true,
                    ..Search::default()
                });
            }
        }
        Vec::new()
    }

    fn select(&mut self, all: &[Match], index: Option<usize>) {
        let Some(search) = self.view.search.as_mut() else {
            return;
        };
        search.count = all.len();
        let current = index.and_then(|i| all.get(i).copied());
        search.position = index.filter(|_| current.is_some()).map_or(0, |i| i + 1);
        search.current = current;
        if current.is_some() {
            search.jumps += 1;
        }
    }

    /// Select the newest match (as the query changes).
    fn select_newest(&mut self) {
        let query = self
            .view
            .search
            .as_ref()
            .map(|s| s.query.clone())
            .unwrap_or_default();
        let all = matches(&self.session.transcript, &query);
        let last = all.len().checked_sub(1);
        self.select(&all, last);
    }

    /// Move to an older (`-1`) or newer (`1`) match, wrapping around.
    fn step(&mut self, by: isize) {
        let Some(search) = self.view.search.as_ref() else {
            return;
        };
        let all = matches(&self.session.transcript, &search.query);
        if all.is_empty() {
            self.select(&all, None);
            return;
        }
        let n = all.len();
        let next = match search
            .current
            .and_then(|c| all.iter().position(|m| *m == c))
        {
            Some(i) => (i as isize + by).rem_euclid(n as isize) as usize,
            None if by < 0 => n - 1,
            None => 0,
        };
        self.select(&all, Some(next));
    }

    /// The entry a copy key copies from: the selected search match's, else
    /// the last answer.
    fn copy_source(&self) -> Option<&EntryKind> {
        let entries = self.session.transcript.entries();
        if let Some(m) = self.view.search.as_ref().and_then(|s| s.current) {
            return entries.get(m.entry).map(|e| &e.kind);
        }
        entries
            .iter()
            .rev()
            .map(|e| &e.kind)
            .find(|k| matches!(k, EntryKind::Agent(t) if !t.trim().is_empty()))
    }

    /// Alt-C: copy the selected message (or the last answer); Alt-Y: the
    /// last code block in it. The text is sanitized: never a raw escape.
    pub(crate) fn copy(&mut self, code: bool) -> Vec<Effect> {
        let Some(kind) = self.copy_source() else {
            self.view.notice = Some("nothing to copy yet".into());
            return Vec::new();
        };
        let text = searchable(kind);
        let text = if code {
            match code_blocks(&text).pop() {
                Some(block) => block,
                None => {
                    self.view.notice = Some("no code block in that message".into());
                    return Vec::new();
                }
            }
        } else {
            text
        };
        let lines = text.lines().count().max(1);
        let what = if code { "code block" } else { "message" };
        // The runtime says what the clipboard did ([`Msg::Copied`]).
        self.view.notice = Some(format!(
            "copying the {what} ({lines} line{})…",
            if lines == 1 { "" } else { "s" }
        ));
        vec![Effect::Copy(text)]
    }
}

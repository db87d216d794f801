//! What of a chat goes to its record, and when: the entries that have
//! settled, and the name, title and mode lines when they changed. Pure: the
//! runtime (`app/record.rs`) keeps a [`RecordCursor`] per chat, asks
//! [`ChatState::record_lines`] for the lines to append, and sends each to
//! its disk writer.

use super::{ChatState, EntryKind};
use crate::record::Line;

/// How far a chat's record has got: what it already holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordCursor {
    /// Entries before this index are in the record.
    pub written: usize,
    /// The agent's title as last recorded.
    pub title: Option<String>,
    /// The user's name for the chat as last recorded.
    pub name: Option<String>,
    /// warden's mode as last recorded.
    pub mode: Option<String>,
}

impl ChatState {
    /// Whether the user has said something: a chat's record file is only
    /// created then, so a chat closed untouched leaves none.
    pub(crate) fn user_spoke(&self) -> bool {
        self.session
            .transcript
            .entries()
            .iter()
            .any(|e| matches!(e.kind, EntryKind::User(_)))
    }

    /// The lines to append to the record since `cursor`, which moves past
    /// them: what settled (every entry but a still streaming last one), the
    /// user's `name` for the chat, the agent's title, the mode, each only
    /// when it changed. With `last`, the chat is ending: a still streaming
    /// last entry and an open tool call go too.
    pub(crate) fn record_lines(
        &self,
        cursor: &mut RecordCursor,
        name: Option<&str>,
        last: bool,
    ) -> Vec<Line> {
        let mut lines = Vec::new();
        let entries = self.session.transcript.entries();
        let len = entries.len();
        let settled = if self.is_busy() && !last {
            // A record is only appended to: a tool call still open (asked,
            // approved, running) waits, and what came after it with it,
            // so that the record keeps the call's last status.
            let open = (cursor.written..len).find(|&i| {
                entries.get(i).is_some_and(
                    |e| matches!(&e.kind, EntryKind::Tool(t) if !t.state.is_finished()),
                )
            });
            open.unwrap_or(len).min(len.saturating_sub(1))
        } else {
            len
        };
        while cursor.written < settled {
            let index = cursor.written;
            cursor.written += 1;
            if let Some(entry) = entries.get(index) {
                lines.push(Line::entry(&entry.kind));
            }
        }
        // The user's name and the agent's title are kept apart, so that a
        // renamed chat keeps its name when reopened. Without either, a
        // reader falls back to the first prompt, which needs no line.
        if let Some(name) = name
            && cursor.name.as_deref() != Some(name)
        {
            cursor.name = Some(name.to_string());
            lines.push(Line::Title {
                title: name.to_string(),
                renamed: true,
            });
        }
        if let Some(title) = self.session.title.clone()
            && cursor.title.as_ref() != Some(&title)
        {
            cursor.title = Some(title.clone());
            lines.push(Line::Title {
                title,
                renamed: false,
            });
        }
        let mode = self.gate.mode.as_str();
        if cursor.mode.as_deref() != Some(mode) {
            cursor.mode = Some(mode.to_string());
            lines.push(Line::Mode {
                mode: mode.to_string(),
            });
        }
        lines
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

//! The picker of past chats (`warden --resume`), over the whole screen: a
//! title, the filter with the cursor in it, one row per chat that passes
//! the filter (newest first, the selected one reversed), and the keys.
//!
//! Everything read from a chat record (title, agent, cwd, mode) goes through
//! `crate::sanitize::one_line`: records hold what agents sent.

use std::time::{SystemTime, UNIX_EPOCH};

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::theme::Theme;
use super::wrap::{spaces, str_width, truncate_end, truncate_start};
use crate::record::ChatSummary;
use crate::sanitize::one_line;
use crate::state::picker::Picker;

/// The first row.
pub(crate) const TITLE: &str = "Resume a chat";
/// Before the filter text.
pub(crate) const FILTER: &str = "Filter › ";
/// The keys, on the last row.
pub(crate) const HINT: &str = "↑↓ choose · Enter reopen · type to filter · Esc back";
/// In place of the list when there is no record at all.
pub(crate) const NO_CHATS: &str = "no past chats";
/// In place of the list when the filter lets nothing through.
pub(crate) const NO_MATCH: &str = "no chat matches";
/// For a chat without a title.
const UNTITLED: &str = "(untitled)";
/// Before each row; the selected row's shows where it is without colour.
const MARK: &str = "› ";
/// Between columns.
const GAP: usize = 2;
/// Widths of a time as [`civil_time`] writes it.
const TIME_W: usize = 16;
/// Columns the agent and mode columns may take at most.
const AGENT_MAX: usize = 14;
const MODE_MAX: usize = 10;

/// `time` as `YYYY-MM-DD HH:MM` in UTC (times before 1970 as 1970).
pub(crate) fn civil_time(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, mo, d, h, m, _) = crate::record::civil_utc(secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}")
}

/// The widths of the columns after the mark, for the chats shown.
struct Columns {
    title: usize,
    agent: usize,
    cwd: usize,
    mode: usize,
    entries: usize,
}

impl Columns {
    /// Agent, mode and entry count as wide as their widest (within limits),
    /// the time fixed; the title and the cwd share the rest, 3 : 2.
    fn fit(rows: &[Row], width: usize) -> Self {
        let widest = |f: fn(&Row) -> usize, head: &str, max: usize| {
            rows.iter()
                .map(f)
                .chain([str_width(head)])
                .max()
                .unwrap_or(0)
                .min(max)
        };
        let agent = widest(|r| str_width(&r.agent), "Agent", AGENT_MAX);
        let mode = widest(|r| str_width(&r.mode), "Mode", MODE_MAX);
        let entries = widest(|r| str_width(&r.entries), "Entries", usize::MAX);
        let fixed = str_width(MARK) + agent + mode + TIME_W + entries + 5 * GAP;
        let rest = width.saturating_sub(fixed);
        let title = (rest * 3).div_ceil(5);
        Columns {
            title,
            agent,
            cwd: rest - title,
            mode,
            entries,
        }
    }

    /// One row: each cell cut (the cwd from the left) and padded to its
    /// column, the entry count to the right.
    fn line(&self, cells: &Row, theme: Theme, head: bool) -> Line<'static> {
        let style = |s| if head { theme.dim() } else { s };
        let cell = |text: &str, width: usize| {
            let cut = truncate_end(text, width);
            let pad = width.saturating_sub(str_width(&cut));
            format!("{cut}{}", " ".repeat(pad))
        };
        let cwd = truncate_start(&cells.cwd, self.cwd);
        let cwd_pad = self.cwd.saturating_sub(str_width(&cwd));
        let entries = truncate_end(&cells.entries, self.entries);
        let entries_pad = self.entries.saturating_sub(str_width(&entries));
        let gap = || spaces(GAP);
        Line::from(vec![
            spaces(str_width(MARK)),
            Span::styled(cell(&cells.title, self.title), style(theme.bold())),
            gap(),
            Span::styled(cell(&cells.agent, self.agent), style(theme.plain())),
            gap(),
            Span::styled(format!("{cwd}{}", " ".repeat(cwd_pad)), style(theme.dim())),
            gap(),
            Span::styled(cell(&cells.mode, self.mode), style(theme.agent_mode())),
            gap(),
            Span::styled(cell(&cells.updated, TIME_W), style(theme.plain())),
            gap(),
            spaces(entries_pad),
            Span::styled(entries.into_owned(), style(theme.plain())),
        ])
    }
}

/// A chat's cells, made safe for the terminal.
struct Row {
    title: String,
    agent: String,
    cwd: String,
    mode: String,
    updated: String,
    entries: String,
}

impl Row {
    fn of(chat: &ChatSummary) -> Self {
        Row {
            title: chat
                .title
                .as_deref()
                .filter(|t| !t.trim().is_empty())
                .map_or_else(|| UNTITLED.to_string(), one_line),
            agent: one_line(&chat.agent),
            cwd: one_line(&chat.cwd.to_string_lossy()),
            mode: match (chat.exec, chat.mode.as_deref().map(one_line)) {
                (true, Some(mode)) => format!("exec {mode}"),
                (true, None) => "exec".into(),
                (false, mode) => mode.unwrap_or_default(),
            },
            updated: civil_time(chat.updated),
            entries: chat.entries.to_string(),
        }
    }

    fn head() -> Self {
        Row {
            title: "Title".into(),
            agent: "Agent".into(),
            cwd: "Folder".into(),
            mode: "Mode".into(),
            updated: "Updated (UTC)".into(),
            entries: "Entries".into(),
        }
    }
}

/// The filter row, and where the cursor goes in it (columns from its left).
/// When the text before the cursor does not fit, its start gives way.
fn filter_line(picker: &Picker, width: usize, theme: Theme) -> (Line<'static>, usize) {
    let filter = picker.filter();
    let text = filter.text();
    let cursor = filter.cursor().min(text.len());
    let before = one_line(text.get(..cursor).unwrap_or(text));
    let after = one_line(text.get(cursor..).unwrap_or(""));
    let head = str_width(FILTER);
    let room = width.saturating_sub(head + 1);
    let before = truncate_start(&before, room).into_owned();
    let at = head + str_width(&before);
    let line = Line::from(vec![
        Span::styled(FILTER, theme.prompt()),
        Span::styled(before, theme.plain()),
        Span::styled(after, theme.plain()),
    ]);
    (line, at)
}

/// The first list row to show so that the selected one is in a list of
/// `view` rows.
fn top_for(selected: usize, view: usize) -> usize {
    (selected + 1).saturating_sub(view)
}

/// Draw the picker over `area`; where the terminal cursor goes, if the
/// filter row is on screen.
pub(crate) fn render(
    buf: &mut Buffer,
    area: Rect,
    picker: &Picker,
    theme: Theme,
) -> Option<Position> {
    Clear.render(area, buf);
    if area.is_empty() {
        return None;
    }
    let width = usize::from(area.width);
    let chats = picker.visible();
    let rows: Vec<Row> = chats.iter().map(|c| Row::of(c)).collect();
    let mut y = area.y;
    let bottom = area.bottom();

    let count = match (chats.len(), picker.items().len()) {
        (1, 1) => "1 chat".to_string(),
        (shown, all) if shown == all => format!("{all} chats"),
        (shown, all) => format!("{shown} of {all} chats"),
    };
    let title = Line::from(vec![
        Span::styled(TITLE, theme.bold()),
        spaces(GAP),
        Span::styled(count, theme.dim()),
    ]);
    buf.set_line(area.x, y, &title, area.width);
    y += 1;

    let mut cursor = None;
    if y < bottom {
        let (line, at) = filter_line(picker, width, theme);
        buf.set_line(area.x, y, &line, area.width);
        // at < width, a u16.
        cursor = Some(Position::new(area.x + at as u16, y));
        y += 1;
    }
    // A blank row under the filter, while the list keeps a few rows.
    if bottom.saturating_sub(y) > 4 {
        y += 1;
    }

    // The keys on the last row, when there is a row left for the list.
    let list_bottom = if bottom > y + 1 {
        let hint = truncate_end(HINT, width).into_owned();
        buf.set_line(
            area.x,
            bottom - 1,
            &Line::from(Span::styled(hint, theme.dim())),
            area.width,
        );
        bottom - 1
    } else {
        bottom
    };

    if rows.is_empty() {
        if y < list_bottom {
            let empty = if picker.items().is_empty() {
                NO_CHATS
            } else {
                NO_MATCH
            };
            let line = Line::from(vec![
                spaces(str_width(MARK)),
                Span::styled(empty, theme.dim()),
            ]);
            buf.set_line(area.x, y, &line, area.width);
        }
        return cursor;
    }

    let columns = Columns::fit(&rows, width);
    if y < list_bottom {
        buf.set_line(
            area.x,
            y,
            &columns.line(&Row::head(), theme, true),
            area.width,
        );
        y += 1;
    }
    let view = usize::from(list_bottom.saturating_sub(y));
    let selected = picker.selected().min(rows.len() - 1);
    let top = top_for(selected, view);
    for (i, row) in rows.iter().enumerate().skip(top).take(view) {
        // i - top < view, a u16.
        let ry = y + (i - top) as u16;
        buf.set_line(area.x, ry, &columns.line(row, theme, false), area.width);
        if i == selected {
            buf.set_stringn(area.x, ry, MARK, width, theme.bold());
            buf.set_style(Rect::new(area.x, ry, area.width, 1), theme.highlight());
        }
    }
    // Chats out of view, at the right end of the keys' row.
    let more = rows.len().saturating_sub(top + view);
    let hint = match (top, more) {
        (0, 0) => String::new(),
        (0, more) => format!(" ↓ {more} more"),
        (top, 0) => format!(" ↑ {top} more"),
        (top, more) => format!(" ↑ {top} · ↓ {more} more"),
    };
    let w = str_width(&hint);
    if list_bottom < bottom && !hint.is_empty() && str_width(HINT) + w < width {
        // w < width, a u16.
        buf.set_stringn(
            area.right() - w as u16,
            bottom - 1,
            &hint,
            w,
            theme.follow_hint(),
        );
    }
    cursor
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use insta::assert_snapshot;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::state::Action;
    use crate::ui::tests::buffer_text;

    /// The picker over the whole frame, with the cursor in the filter.
    fn draw_with(frame: &mut ratatui::Frame<'_>, picker: &Picker, theme: Theme) {
        let area = frame.area();
        if let Some(cursor) = render(frame.buffer_mut(), area, picker, theme) {
            frame.set_cursor_position(cursor);
        }
    }

    fn chat(
        id: &str,
        title: Option<&str>,
        agent: &str,
        cwd: &str,
        mode: Option<&str>,
        secs: u64,
        entries: usize,
    ) -> ChatSummary {
        ChatSummary {
            chat_id: id.into(),
            agent: agent.into(),
            session_id: format!("s-{id}"),
            cwd: PathBuf::from(cwd),
            title: title.map(Into::into),
            mode: mode.map(Into::into),
            updated: UNIX_EPOCH + Duration::from_secs(secs),
            entries,
            exec: false,
        }
    }

    /// A `warden exec` run's record is marked in the mode column.
    #[test]
    fn an_exec_run_is_marked() {
        let mut run = chat(
            "e1",
            Some("fix the build"),
            "claude",
            "/w",
            Some("auto"),
            1,
            4,
        );
        run.exec = true;
        assert_eq!(Row::of(&run).mode, "exec auto");
        run.mode = None;
        assert_eq!(Row::of(&run).mode, "exec");
        assert_eq!(
            Row::of(&chat("c", None, "a", "/w", Some("plan"), 1, 1)).mode,
            "plan"
        );
    }

    fn three() -> Picker {
        Picker::new(vec![
            chat(
                "c3",
                Some("Refactor the approval queue into its own module"),
                "claude",
                "/home/ada/src/warden",
                Some("auto"),
                1_767_268_800,
                42,
            ),
            chat(
                "c2",
                Some("\x1b[31mred\x1b[0m alert from the agent"),
                "gemini",
                "/home/ada/work/a-rather-long-client-project/services/billing",
                Some("plan"),
                1_767_182_460,
                7,
            ),
            chat("c1", None, "demo", "/tmp/x", None, 1_700_000_000, 0),
        ])
    }

    /// The screen as text, and where the cursor is.
    fn screen(picker: &Picker, width: u16, height: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
        term.hide_cursor().expect("hide cursor");
        let completed = term
            .draw(|f| draw_with(f, picker, Theme::with_color(true)))
            .expect("draw");
        let mut text = buffer_text(completed.buffer);
        if term.backend().cursor_visible() {
            let at = term.get_cursor_position().expect("cursor");
            text.push_str(&format!("cursor: ({}, {})\n", at.x, at.y));
        } else {
            text.push_str("cursor: hidden\n");
        }
        text
    }

    #[test]
    fn civil_time_is_utc() {
        assert_eq!(civil_time(UNIX_EPOCH), "1970-01-01 00:00");
        assert_eq!(
            civil_time(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
            "2023-11-14 22:13"
        );
        assert_eq!(
            civil_time(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29 00:00"
        );
    }

    #[test]
    fn picker_three_chats_80x24() {
        assert_snapshot!(screen(&three(), 80, 24));
    }

    #[test]
    fn picker_three_chats_second_selected_120x40() {
        let mut picker = three();
        picker.update(&Action::Down);
        assert_snapshot!(screen(&picker, 120, 40));
    }

    #[test]
    fn picker_filtered_80x24() {
        let mut picker = three();
        for c in "HOME/ADA".chars() {
            picker.update(&Action::Char(c));
        }
        picker.update(&Action::Left);
        assert_snapshot!(screen(&picker, 80, 24));
    }

    #[test]
    fn picker_no_match_80x24() {
        let mut picker = three();
        picker.update(&Action::Paste("nothing".into()));
        assert_snapshot!(screen(&picker, 80, 24));
    }

    #[test]
    fn picker_empty_store_80x24() {
        assert_snapshot!(screen(&Picker::new(Vec::new()), 80, 24));
    }

    #[test]
    fn picker_scrolls_to_the_selection_80x12() {
        let chats = (0..20)
            .map(|i| {
                chat(
                    &format!("c{i}"),
                    Some(&format!("chat number {i}")),
                    "claude",
                    "/w",
                    Some("default"),
                    1_767_268_800 - i * 3600,
                    i as usize,
                )
            })
            .collect();
        let mut picker = Picker::new(chats);
        for _ in 0..10 {
            picker.update(&Action::Down);
        }
        assert_snapshot!(screen(&picker, 80, 12));
    }

    #[test]
    fn selected_row_is_reversed_and_records_are_sanitized() {
        let picker = three();
        let mut term = Terminal::new(TestBackend::new(80, 24)).expect("test terminal");
        let completed = term
            .draw(|f| draw_with(f, &picker, Theme::with_color(true)))
            .expect("draw");
        let buf = completed.buffer;
        let text = buffer_text(buf);
        assert!(!text.contains('\x1b'));
        assert!(text.contains("␛[31mred␛[0m"));
        let row = (0..buf.area.height)
            .find(|&y| buffer_text_row(buf, y).contains("Refactor"))
            .expect("first chat's row");
        assert!(
            buf[(10, row)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        );
    }

    fn buffer_text_row(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
    }
}

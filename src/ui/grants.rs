//! The rules screen (Ctrl-G): what decides for the user beyond the mode,
//! over the whole screen. Agents on bypass, the settings file's rules in
//! file order, and this chat's grants, each revocable after a "y".
//!
//! Descriptions come from `ChatState::describe_grant` and go through
//! `crate::sanitize` once more here: agent names and rule notes end up in them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{Mode, spaces, str_width, truncate_end, wrap_into, wrap_text_into};
use crate::sanitize::one_line;
use crate::state::{ChatState, GrantItem};

/// On the border.
pub(crate) const TITLE: &str = " What decides for you ";
/// The dim line at the top.
pub(crate) const EXPLAIN: &str =
    "Revoking a bypass or a rule edits the settings file; the policy uses the change at once.";
/// The keys, on the last row.
pub(crate) const HINT: &str = "↑↓ choose · d revoke · Esc close";
/// Rows one description may take before it is cut with `…`.
const ITEM_ROWS: usize = 3;
/// Rows the list keeps before the explanation at the top gives way.
const MIN_LIST: usize = 3;
/// Before and after the description in the revoke question.
const CONFIRM_HEAD: &str = "Revoke ";
const CONFIRM_TAIL: &str = "? y / n";
/// Columns before an item's first row and its further rows.
const INDENT: usize = 2;
const HANG: usize = 4;

/// The screen's sections, in the order of `ChatState::grant_items`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Agents whose requests are allowed without asking.
    Bypass,
    /// The settings file's rules.
    Rules,
    /// "Allow for this chat" grants.
    Chat,
}

impl Section {
    const ALL: [Section; 3] = [Section::Bypass, Section::Rules, Section::Chat];

    fn heading(self) -> &'static str {
        match self {
            Section::Bypass => "Bypass",
            Section::Rules => "Rules (settings file order)",
            Section::Chat => "This chat",
        }
    }

    fn holds(self, item: &GrantItem) -> bool {
        matches!(
            (self, item),
            (Section::Bypass, GrantItem::Bypass(_))
                | (Section::Rules, GrantItem::Rule(_))
                | (Section::Chat, GrantItem::ChatGrant(_))
        )
    }
}

/// A row of the list and the item (index into `grant_items`) it shows.
type Row = (Line<'static>, Option<usize>);

/// `lines` cut to [`ITEM_ROWS`], the last kept row ending with `…`.
fn cut(lines: &mut Vec<Line<'static>>, width: usize, theme: Theme) {
    if lines.len() <= ITEM_ROWS {
        return;
    }
    lines.truncate(ITEM_ROWS);
    if let Some(last) = lines.last_mut() {
        let text = last.to_string();
        let mut text = truncate_end(&text, width.saturating_sub(1)).into_owned();
        if !text.ends_with('…') {
            text.push('…');
        }
        *last = Line::from(Span::styled(text, theme.plain()));
    }
}

/// The list: each section's heading, its items (wrapped) or "none", and a
/// blank row between sections.
fn list_rows(state: &ChatState, items: &[GrantItem], width: usize, theme: Theme) -> Vec<Row> {
    let mut rows = Vec::new();
    for (s, section) in Section::ALL.into_iter().enumerate() {
        if s > 0 {
            rows.push((Line::default(), None));
        }
        rows.push((
            Line::from(Span::styled(section.heading(), theme.section())),
            None,
        ));
        let mut empty = true;
        for (i, item) in items.iter().enumerate() {
            if !section.holds(item) {
                continue;
            }
            empty = false;
            let text = one_line(&state.describe_grant(item));
            let mut lines = Vec::new();
            wrap_into(
                &mut lines,
                &[Span::styled(text, theme.plain())],
                &[spaces(INDENT)],
                &[spaces(HANG)],
                width,
                Mode::Word,
            );
            cut(&mut lines, width, theme);
            rows.extend(lines.into_iter().map(|line| (line, Some(i))));
        }
        if empty {
            rows.push((
                Line::from(vec![spaces(INDENT), Span::styled("none", theme.dim())]),
                None,
            ));
        }
    }
    rows
}

/// `Revoke <description>? y / n`, the description cut to fit `width`.
fn confirm_line(
    state: &ChatState,
    item: Option<&GrantItem>,
    width: usize,
    theme: Theme,
) -> Line<'static> {
    let text = item.map_or_else(String::new, |item| one_line(&state.describe_grant(item)));
    let room = width.saturating_sub(str_width(CONFIRM_HEAD) + str_width(CONFIRM_TAIL));
    let ask = format!("{CONFIRM_HEAD}{}{CONFIRM_TAIL}", truncate_end(&text, room));
    Line::from(Span::styled(
        truncate_end(&ask, width).into_owned(),
        theme.confirm(),
    ))
}

/// The first list row to show: `top` from the last draw, moved as little as
/// possible so the selected item (and the heading just above it, when it
/// fits too) is in view, and no further down than the end of the list.
fn scroll_to(top: usize, rows: &[Row], selected: Option<usize>, view: usize) -> usize {
    let total = rows.len();
    let mut top = top.min(total.saturating_sub(view));
    let Some(sel) = selected else {
        return top;
    };
    let Some(start) = rows.iter().position(|(_, i)| *i == Some(sel)) else {
        return top;
    };
    let end = rows
        .iter()
        .rposition(|(_, i)| *i == Some(sel))
        .map_or(start + 1, |e| e + 1);
    let mut lead = start;
    while lead > 0 && rows[lead - 1].1.is_none() {
        lead -= 1;
    }
    let want = if end - lead <= view { lead } else { start };
    top = top.min(want);
    if end > top + view {
        top = end - view;
    }
    top.min(start)
}

/// A scroll hint at the right end of row `y` of `area`.
fn scroll_hint(buf: &mut Buffer, area: Rect, y: u16, hint: &str, theme: Theme) {
    let w = str_width(hint).min(usize::from(area.width));
    // w <= area.width, a u16.
    let x = area.right() - w as u16;
    buf.set_stringn(x, y, hint, w, theme.follow_hint());
}

/// " ↓ 3 more " for items out of view on one side; " ↓ more " when only
/// headings (or "none") are.
fn more(arrow: &str, items: usize) -> String {
    if items > 0 {
        format!(" {arrow} {items} more ")
    } else {
        format!(" {arrow} more ")
    }
}

/// Draw the rules screen over `area`; `top` is the first list row shown,
/// kept between draws so the list scrolls only as far as the selection needs.
pub(crate) fn render(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    selected: usize,
    confirm: bool,
    top: &mut usize,
    theme: Theme,
) {
    Clear.render(area, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(Span::styled(TITLE, theme.bold()))
        .padding(Padding::horizontal(1));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    let items = state.grant_items();
    let selected = (!items.is_empty()).then(|| selected.min(items.len() - 1));

    // From the bottom: the keys, the revoke question above them.
    let mut bottom = Vec::new();
    if confirm {
        let item = selected.and_then(|s| items.get(s));
        bottom.push(confirm_line(state, item, width, theme));
    }
    bottom.push(Line::from(Span::styled(
        truncate_end(HINT, width).into_owned(),
        theme.dim(),
    )));
    // The question outlasts the keys on a screen one row high.
    bottom.truncate(height);

    // From the top: the explanation and a blank row, while the list keeps
    // a few rows.
    let mut explain = Vec::new();
    wrap_text_into(
        &mut explain,
        EXPLAIN,
        theme.dim(),
        &[],
        &[],
        width,
        Mode::Word,
    );
    let head = if explain.len() + 1 + MIN_LIST + bottom.len() <= height {
        explain.len() + 1
    } else {
        0
    };
    let list_h = height - head - bottom.len();
    for (y, line) in (inner.y..).zip(explain.iter().take(head.saturating_sub(1))) {
        buf.set_line(inner.x, y, line, inner.width);
    }
    // head and list_h are rows of `inner`.
    let list = Rect::new(inner.x, inner.y + head as u16, inner.width, list_h as u16);

    let rows = list_rows(state, &items, width, theme);
    *top = scroll_to(*top, &rows, selected, list_h);
    for (y, (line, item)) in (list.y..list.bottom()).zip(rows.iter().skip(*top)) {
        buf.set_line(list.x, y, line, list.width);
        if item.is_some() && *item == selected {
            buf.set_style(Rect::new(list.x, y, list.width, 1), theme.highlight());
        }
    }
    if !list.is_empty() {
        // Items out of view; an item cut by the edge counts.
        let count = |rows: &[Row]| {
            let mut items: Vec<usize> = rows.iter().filter_map(|(_, i)| *i).collect();
            items.dedup();
            items.len()
        };
        let end = (*top + list_h).min(rows.len());
        let top = (*top).min(end);
        if end < rows.len() {
            let hint = more("↓", count(&rows[end..]));
            scroll_hint(buf, list, list.bottom() - 1, &hint, theme);
        }
        if top > 0 && (list.height > 1 || end == rows.len()) {
            let hint = more("↑", count(&rows[..top]));
            scroll_hint(buf, list, list.y, &hint, theme);
        }
    }

    // bottom.len() <= height, a u16.
    let first = inner.bottom() - bottom.len() as u16;
    for (y, line) in (first..).zip(&bottom) {
        buf.set_line(inner.x, y, line, inner.width);
    }
}

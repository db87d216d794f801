//! The transcript search bar (Ctrl-F), the highlighting of matches in the
//! rows on screen, and the footer's badge while the mouse is released.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::theme::Theme;
use super::wrap::{char_width, str_width, truncate_end};
use crate::sanitize::one_line;
use crate::state::Search;
use crate::state::search::find_all;

/// Shown in the footer while the mouse is released.
pub(crate) const MOUSE_BADGE: &str = " mouse released: select to copy · Alt-S ";

/// The style of a match on screen.
fn match_style(theme: Theme) -> Style {
    theme.fg(Color::Yellow).add_modifier(Modifier::REVERSED)
}

/// The style of the selected match.
fn current_style(theme: Theme) -> Style {
    theme
        .fg(Color::Magenta)
        .add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED)
}

/// The chars of a row as drawn, each with its column.
pub(crate) fn row_chars(line: &Line<'_>) -> (Vec<char>, Vec<usize>) {
    let mut chars = Vec::new();
    let mut cols = Vec::new();
    let mut x = 0;
    for span in &line.spans {
        for c in span.content.chars() {
            if c.is_ascii_control() {
                continue;
            }
            chars.push(c);
            cols.push(x);
            x += char_width(c);
        }
    }
    cols.push(x);
    (chars, cols)
}

/// Char indices of the matches of `needle` (lowered) in a row.
pub(crate) fn row_matches(line: &Line<'_>, needle: &[char]) -> Vec<usize> {
    find_all(&row_chars(line).0, needle)
}

/// Paint the matches of `needle` in row `y` of `area`; the match starting
/// at char `current` (if any) as the selected one.
pub(crate) fn highlight_row(
    buf: &mut Buffer,
    area: Rect,
    y: u16,
    line: &Line<'_>,
    needle: &[char],
    current: Option<usize>,
    theme: Theme,
) {
    let (chars, cols) = row_chars(line);
    for start in find_all(&chars, needle) {
        let style = if Some(start) == current {
            current_style(theme)
        } else {
            match_style(theme)
        };
        let from = cols[start];
        let to = cols[(start + needle.len()).min(chars.len())];
        for col in from..to {
            let Ok(col) = u16::try_from(col) else { break };
            let x = area.x.saturating_add(col);
            if x >= area.right() {
                break;
            }
            if let Some(cell) = buf.cell_mut((x, area.y + y)) {
                cell.set_style(style);
            }
        }
    }
}

/// The search bar in one row: `/ query  2/7 · n older · N newer · …`.
/// Returns where the cursor goes while the query is typed.
pub(crate) fn bar(buf: &mut Buffer, area: Rect, search: &Search, theme: Theme) -> Option<Position> {
    if area.is_empty() {
        return None;
    }
    let width = usize::from(area.width);
    let query = one_line(&search.query);
    let found = if search.query.is_empty() {
        String::new()
    } else if search.count == 0 {
        "  no match".to_string()
    } else {
        format!("  {}/{}", search.position, search.count)
    };
    let hint = if search.typing {
        " · Enter select · Esc close"
    } else {
        " · n older · N newer · Alt-C copy · Ctrl-F edit · Esc close"
    };
    buf.set_style(area, theme.plain());
    let prompt = "/ ";
    let (x, _) = buf.set_stringn(area.x, area.y, prompt, width, theme.prompt());
    let room = width.saturating_sub(str_width(prompt));
    let shown = truncate_end(&query, room.saturating_sub(1));
    let (x_end, _) = buf.set_stringn(x, area.y, &shown, room, theme.plain());
    let cursor = Position::new(x_end.min(area.right().saturating_sub(1)), area.y);
    let rest = usize::from(area.right().saturating_sub(x_end));
    let style = if search.count == 0 && !search.query.is_empty() {
        theme.error()
    } else {
        theme.dim()
    };
    let (x, _) = buf.set_stringn(x_end, area.y, &found, rest, style);
    let rest = usize::from(area.right().saturating_sub(x));
    buf.set_stringn(x, area.y, truncate_end(hint, rest), rest, theme.dim());
    search.typing.then_some(cursor)
}

/// The footer's badge while the mouse is released, over its right end.
pub(crate) fn mouse_badge(buf: &mut Buffer, footer: Rect, theme: Theme) {
    let width = str_width(MOUSE_BADGE).min(usize::from(footer.width));
    let x = footer.right().saturating_sub(width as u16);
    // A hint cut in the middle goes whole.
    let mut left = x;
    while left > footer.x
        && let Some(cell) = buf.cell_mut((left - 1, footer.y))
        && cell.symbol() != " "
    {
        cell.set_symbol(" ");
        left -= 1;
    }
    buf.set_stringn(
        x,
        footer.y,
        MOUSE_BADGE,
        width,
        theme.fg(Color::Yellow).add_modifier(Modifier::REVERSED),
    );
}

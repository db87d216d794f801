//! The help overlay (F1, or `?` on an empty message): every key of where
//! the keys are, from the key tables (`crate::keys`), in a box over the
//! chat. ↑/↓ scroll it when it does not fit; any other key closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{Mode, spaces, str_width, wrap_text_into};
use crate::keys::Context;

/// The last row of the box.
const CLOSE_HINT: &str = "any key closes this";
/// The last row of a box whose lines do not all fit.
const SCROLL_HINT: &str = "↑↓ scroll · other keys close";
/// The keys column is never wider than this share of the box (1/3).
const KEYS_SHARE: usize = 3;

/// The lines of the help for `context`, `width` columns wide, and the
/// index of the first line of each row of the key table.
fn lines_by_row(context: Context, width: usize, theme: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let rows = context.rows('-');
    let keys_w = rows
        .iter()
        .map(|r| str_width(&r.keys))
        .max()
        .unwrap_or(0)
        .min(width / KEYS_SHARE)
        .max(1);
    let help_w = width.saturating_sub(keys_w + 2).max(1);
    let mut out = Vec::new();
    let mut starts = Vec::with_capacity(rows.len());
    for row in rows {
        starts.push(out.len());
        let rest = [spaces(keys_w + 2)];
        if str_width(&row.keys) > keys_w {
            // Keys too many for the column: a row of their own, the help under them.
            wrap_text_into(
                &mut out,
                &row.keys,
                theme.choice_key(),
                &[],
                &[],
                width,
                Mode::Word,
            );
            wrap_text_into(
                &mut out,
                &row.help,
                theme.plain(),
                &rest,
                &rest,
                keys_w + 2 + help_w,
                Mode::Word,
            );
            continue;
        }
        let pad = keys_w.saturating_sub(str_width(&row.keys)) + 2;
        let first = [Span::styled(row.keys, theme.choice_key()), spaces(pad)];
        wrap_text_into(
            &mut out,
            &row.help,
            theme.plain(),
            &first,
            &rest,
            keys_w + 2 + help_w,
            Mode::Word,
        );
    }
    (out, starts)
}

/// Draw the help for `context` over `area`, `scroll` rows of the key table
/// scrolled past (a long row wraps to several lines; the window stops where
/// the last line is at the bottom).
pub(crate) fn render(buf: &mut Buffer, area: Rect, context: Context, scroll: u16, theme: Theme) {
    if area.width < 8 || area.height < 4 {
        return;
    }
    let outer = area;
    let inner_w = usize::from(outer.width.saturating_sub(4)).max(1);
    let (mut body, starts) = lines_by_row(context, inner_w, theme);
    let room = usize::from(outer.height.saturating_sub(3)).max(1);
    let hint = if body.len() > room {
        // A window of the lines, with "↑ N more" / "↓ N more" where lines
        // are cut; at the end the last line sits at the bottom.
        let n = body.len();
        let fill = room - 1;
        let first = starts
            .get(usize::from(scroll))
            .or(starts.last())
            .copied()
            .unwrap_or(0);
        let top = first.min(n - fill);
        let rows = if top == 0 {
            fill
        } else if top + fill >= n {
            n - top
        } else {
            fill.saturating_sub(1)
        };
        let below = n - top - rows;
        let mut window: Vec<Line<'static>> = Vec::with_capacity(room);
        if top > 0 {
            window.push(more_line(top, '↑', theme));
        }
        window.extend(body.drain(top..top + rows));
        if below > 0 {
            window.push(more_line(below, '↓', theme));
        }
        body = window;
        SCROLL_HINT
    } else {
        CLOSE_HINT
    };
    body.push(Line::from(Span::styled(hint, theme.dim())));
    let height = u16::try_from(body.len() + 2)
        .unwrap_or(u16::MAX)
        .min(outer.height);
    let rect = Rect::new(
        outer.x,
        outer.y + (outer.height - height) / 2,
        outer.width,
        height,
    );
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .padding(Padding::horizontal(1))
        .title(Span::styled(
            format!(" {} ", context.title()),
            theme.card_label(),
        ));
    let inner = block.inner(rect);
    block.render(rect, buf);
    for (i, line) in body.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        buf.set_line(inner.x, inner.y + dy, line, inner.width);
    }
}

/// "↑ 3 more", or an empty line when none are cut on that side.
fn more_line(n: usize, arrow: char, theme: Theme) -> Line<'static> {
    if n == 0 {
        return Line::default();
    }
    Line::from(Span::styled(format!("{arrow} {n} more"), theme.dim()))
}

//! The help overlay (F1, or `?` on an empty message): every key of where
//! the keys are, from the key tables (`crate::keys`), in a box over the
//! chat. Any key closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{Mode, spaces, str_width, wrap_text_into};
use crate::keys::Context;

/// The last row of the box.
const CLOSE_HINT: &str = "any key closes this";
/// The keys column is never wider than this share of the box (1/3).
const KEYS_SHARE: usize = 3;

/// The lines of the help for `context`, `width` columns wide.
pub(crate) fn lines(context: Context, width: usize, theme: Theme) -> Vec<Line<'static>> {
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
    for row in rows {
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
    out
}

/// Draw the help for `context` over `area`.
pub(crate) fn render(buf: &mut Buffer, area: Rect, context: Context, theme: Theme) {
    if area.width < 8 || area.height < 4 {
        return;
    }
    let outer = area;
    let inner_w = usize::from(outer.width.saturating_sub(4)).max(1);
    let mut body = lines(context, inner_w, theme);
    let room = usize::from(outer.height.saturating_sub(3));
    if body.len() > room {
        body.truncate(room.saturating_sub(1));
        body.push(Line::from(Span::styled("…", theme.dim())));
    }
    body.push(Line::from(Span::styled(CLOSE_HINT, theme.dim())));
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

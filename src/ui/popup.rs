//! What the composer shows above itself: the queued messages, and over
//! them a list (the slash commands, or the Ctrl-R history search); and in
//! itself, a command's input hint after what is typed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use super::theme::Theme;
use super::wrap::{str_width, truncate_end};
use crate::sanitize::one_line;
use crate::state::ChatState;
use crate::state::drafts::POPUP_ROWS;

/// Draw the queue and the list in the rows of `area` above the row `above`
/// (the notice line, else the composer).
pub(crate) fn render(buf: &mut Buffer, area: Rect, above: u16, state: &ChatState, theme: Theme) {
    let mut bottom = above;
    let top = area.y;
    let width = usize::from(area.width);
    if width < 8 {
        return;
    }
    // The queue, newest nearest the composer.
    let queue = &state.view.drafts.queue;
    for (i, text) in queue.iter().enumerate().rev() {
        if bottom <= top {
            return;
        }
        bottom -= 1;
        let row = Rect::new(area.x, bottom, area.width, 1);
        Clear.render(row, buf);
        let first = one_line(text.lines().next().unwrap_or_default());
        let more = match text.lines().count() {
            0 | 1 => String::new(),
            n => format!(" (+{} lines)", n - 1),
        };
        let label = format!(" ⏳ queued {}: {first}{more}", i + 1);
        let label = truncate_end(&label, width);
        buf.set_stringn(area.x, bottom, &label, width, theme.notice());
    }
    let Some(popup) = state.composer_popup() else {
        return;
    };
    let rows = popup.items.len().clamp(1, POPUP_ROWS);
    let wanted = u16::try_from(rows + 2).unwrap_or(u16::MAX);
    let height = wanted.min(bottom.saturating_sub(top));
    if height < 3 {
        return;
    }
    let rect = Rect::new(area.x, bottom - height, area.width, height);
    Clear.render(rect, buf);
    let title = truncate_end(&popup.title, width.saturating_sub(4)).into_owned();
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(format!(" {title} "));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let shown = usize::from(inner.height);
    let first = popup.selected.saturating_sub(shown.saturating_sub(1));
    if popup.items.is_empty() {
        buf.set_stringn(
            inner.x,
            inner.y,
            "(no match)",
            usize::from(inner.width),
            theme.dim(),
        );
        return;
    }
    let inner_w = usize::from(inner.width);
    let label_w = popup
        .items
        .iter()
        .map(|i| str_width(&one_line(&i.label)))
        .max()
        .unwrap_or(0)
        .min(if popup.items.iter().all(|i| i.detail.is_empty()) {
            inner_w.saturating_sub(2)
        } else {
            inner_w / 2
        });
    for (y, (index, item)) in
        (inner.y..inner.bottom()).zip(popup.items.iter().enumerate().skip(first))
    {
        let selected = index == popup.selected;
        let marker = if selected { "▸ " } else { "  " };
        let label = one_line(&item.label);
        let label = truncate_end(&label, label_w);
        let pad = " ".repeat(label_w.saturating_sub(str_width(&label)));
        let detail = one_line(&item.detail);
        let line = if detail.is_empty() {
            format!("{marker}{label}")
        } else {
            format!("{marker}{label}{pad}  {detail}")
        };
        let line = truncate_end(&line, inner_w);
        let style = if selected {
            theme.bold()
        } else {
            theme.plain()
        };
        buf.set_stringn(inner.x, y, &line, inner_w, style);
    }
}

/// The input hint of a command typed with nothing after it, dimmed after
/// the cursor inside the composer's text row.
pub(crate) fn render_hint(buf: &mut Buffer, composer: Rect, state: &ChatState, theme: Theme) {
    let Some(hint) = state.composer_hint() else {
        return;
    };
    if composer.height < 3 || composer.width < 6 {
        return;
    }
    let text = one_line(state.view.composer.text());
    // Borders and padding: the text starts two columns in.
    let x = composer.x + 2 + u16::try_from(str_width(&text)).unwrap_or(u16::MAX);
    let sep = u16::from(!text.ends_with(' '));
    let x = x.saturating_add(sep);
    let right = composer.right().saturating_sub(2);
    if x >= right {
        return;
    }
    let room = usize::from(right - x);
    let hint = one_line(&hint);
    buf.set_stringn(
        x,
        composer.y + 1,
        truncate_end(&hint, room),
        room,
        theme.placeholder(),
    );
}

#[cfg(test)]
#[path = "popup_tests.rs"]
mod tests;

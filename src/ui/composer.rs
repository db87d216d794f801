//! The message composer: a bordered box that grows with its text from one
//! to [`MAX_ROWS`] rows, then scrolls to keep the cursor in view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, BorderType, Padding};

use super::theme::Theme;
use super::wrap::{str_width, truncate_end};
use crate::sanitize::visible;
use crate::state::Composer;

/// Text rows shown before the composer scrolls.
pub(crate) const MAX_ROWS: usize = 10;
/// Shown in the empty composer.
pub(crate) const PLACEHOLDER: &str = "Type a message · Enter send · Alt+Enter newline";

/// Columns of text in a composer `width` columns wide: borders and a
/// space of padding on each side.
pub(crate) fn text_width(width: u16) -> usize {
    usize::from(width.saturating_sub(4))
}

fn block(theme: Theme) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .padding(Padding::horizontal(1))
}

/// One screen row of the composer's text: a byte range of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    start: usize,
    end: usize,
    /// The last row of its line: a cursor at `end` belongs here.
    last: bool,
}

/// The composer's text wrapped to a width, with the cursor's row and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wrapped {
    rows: Vec<String>,
    cursor: (usize, usize),
    empty: bool,
}

impl Wrapped {
    /// Height of the box: the text rows (1 to `MAX_ROWS`) and the borders.
    pub(crate) fn height(&self) -> u16 {
        // At most MAX_ROWS + 2, well within u16.
        (self.rows.len().clamp(1, MAX_ROWS) + 2) as u16
    }

    /// The rows, made visible.
    pub(crate) fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The cursor's row and column.
    pub(crate) fn cursor(&self) -> (usize, usize) {
        self.cursor
    }
}

/// How a character shows: made visible when it is a control character.
fn shown_width(c: char) -> usize {
    let mut buf = [0; 4];
    str_width(&visible(c.encode_utf8(&mut buf)))
}

/// Wrap the composer's text to `width` columns: at the last space that fits,
/// or anywhere in a word longer than the row.
pub(crate) fn wrap(composer: &Composer, width: usize) -> Wrapped {
    let text = composer.text();
    let width = width.max(1);
    let mut rows: Vec<Row> = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut row_start = line_start;
        let mut row_w = 0;
        // Byte index just after the last space in the row, and the row's width up to it.
        let mut brk: Option<(usize, usize)> = None;
        for (i, c) in line.char_indices() {
            let at = line_start + i;
            let w = shown_width(c);
            while row_w + w > width && row_w > 0 {
                match brk.take() {
                    Some((b, bw)) if b > row_start && b <= at => {
                        rows.push(Row {
                            start: row_start,
                            end: b,
                            last: false,
                        });
                        row_start = b;
                        row_w -= bw;
                    }
                    _ => {
                        rows.push(Row {
                            start: row_start,
                            end: at,
                            last: false,
                        });
                        row_start = at;
                        row_w = 0;
                    }
                }
            }
            row_w += w;
            if c == ' ' {
                brk = Some((at + 1, row_w));
            }
        }
        let end = line_start + line.len();
        rows.push(Row {
            start: row_start,
            end,
            last: true,
        });
        line_start = end + 1;
    }

    let cursor = composer.cursor();
    let mut at = (0, 0);
    for (r, row) in rows.iter().enumerate() {
        let inside = row.start <= cursor && (cursor < row.end || (cursor == row.end && row.last));
        if inside {
            at = (r, str_width(&visible(&text[row.start..cursor])));
            break;
        }
    }
    if at.1 >= width {
        // The cursor sits after a full row: show it at the start of a new one.
        let (r, _) = at;
        rows[r].last = false;
        rows.insert(
            r + 1,
            Row {
                start: cursor,
                end: cursor,
                last: true,
            },
        );
        at = (r + 1, 0);
    }
    Wrapped {
        rows: rows
            .iter()
            .map(|r| visible(&text[r.start..r.end]).into_owned())
            .collect(),
        cursor: at,
        empty: text.is_empty(),
    }
}

/// Draw the box and, when it has the keys (`focused`), set the terminal
/// cursor; `top` is the first text row shown, kept so the cursor stays
/// visible.
pub(crate) fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    wrapped: &Wrapped,
    top: &mut usize,
    theme: Theme,
    focused: bool,
) {
    let block = block(theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let buf = frame.buffer_mut();
    if wrapped.empty {
        let hint = truncate_end(PLACEHOLDER, usize::from(inner.width));
        buf.set_stringn(
            inner.x,
            inner.y,
            &hint,
            usize::from(inner.width),
            theme.placeholder(),
        );
        *top = 0;
        if focused {
            frame.set_cursor_position((inner.x, inner.y));
        }
        return;
    }
    let shown = usize::from(inner.height);
    let (row, col) = wrapped.cursor;
    if row < *top {
        *top = row;
    } else if row >= *top + shown {
        *top = row + 1 - shown;
    }
    *top = (*top).min(wrapped.rows.len().saturating_sub(shown));
    for (y, text) in (inner.y..inner.bottom()).zip(wrapped.rows.iter().skip(*top)) {
        buf.set_stringn(inner.x, y, text, usize::from(inner.width), theme.plain());
    }
    if !focused {
        return;
    }
    let y = inner
        .y
        .saturating_add(u16::try_from(row - *top).unwrap_or(u16::MAX));
    let x = inner
        .x
        .saturating_add(u16::try_from(col).unwrap_or(u16::MAX));
    frame.set_cursor_position((
        x.min(inner.right().saturating_sub(1)),
        y.min(inner.bottom().saturating_sub(1)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Composer {
        let mut c = Composer::default();
        c.insert_str(text);
        c
    }

    #[test]
    fn wraps_at_spaces_and_places_the_cursor() {
        let w = wrap(&typed("hello brave new world"), 12);
        assert_eq!(w.rows, ["hello brave ", "new world"]);
        assert_eq!(w.cursor, (1, 9));
    }

    #[test]
    fn cursor_after_a_full_row_moves_to_a_new_row() {
        let w = wrap(&typed("abcd"), 4);
        assert_eq!(w.rows, ["abcd", ""]);
        assert_eq!(w.cursor, (1, 0));
        assert_eq!(w.height(), 4);
    }

    #[test]
    fn wide_characters_and_long_words() {
        let w = wrap(&typed("日本語のテキスト"), 6);
        assert_eq!(w.rows, ["日本語", "のテキ", "スト"]);
        assert_eq!(w.cursor, (2, 4));
        let w = wrap(&typed("abcdefghij"), 4);
        assert_eq!(w.rows, ["abcd", "efgh", "ij"]);
    }

    #[test]
    fn cursor_in_the_middle_of_lines() {
        let mut c = typed("one\ntwo three");
        c.home();
        assert_eq!(wrap(&c, 20).cursor, (1, 0));
        c.up();
        c.end();
        assert_eq!(wrap(&c, 20).cursor, (0, 3));
    }

    #[test]
    fn control_characters_are_visible_and_counted() {
        let w = wrap(&typed("a\u{1b}[1mb\tc"), 40);
        assert_eq!(w.rows, ["a␛[1mb    c"]);
        assert_eq!(w.cursor, (0, 11));
    }

    #[test]
    fn height_grows_to_ten_rows() {
        assert_eq!(wrap(&typed(""), 10).height(), 3);
        assert_eq!(wrap(&typed("a\nb\nc"), 10).height(), 5);
        assert_eq!(wrap(&typed(&"x\n".repeat(30)), 10).height(), 12);
    }
}

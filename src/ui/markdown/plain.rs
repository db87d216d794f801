//! Plain text, the bulk of a long answer, laid out without the markdown
//! parser: paragraphs of lines that no markdown rule could touch render as
//! the parser would render them (each source line its own row or rows, a
//! blank row between paragraphs), at a fraction of the cost.

use ratatui::text::{Line, Span};

use super::super::wrap::wrap_owned;
use crate::sanitize::visible;

/// ASCII punctuation that means nothing to markdown inside a line of a
/// paragraph. Everything else (`*_`~[]<>&\|` and the rest) may start
/// emphasis, code, a link, an entity, a table, an escape or HTML.
const INERT: &[u8] = b" ,.;:?!'\"()/%+-=@#$^{}";

/// Which bytes may appear in an inert line: letters, digits, [`INERT`]
/// punctuation, and every byte of a non-ASCII character.
const INERT_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b >= 0x80 || (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let mut i = 0;
    while i < INERT.len() {
        table[INERT[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether `line` is a line of a paragraph that renders as its own text:
/// it starts with a letter (so no block starts there: no list, heading,
/// quote, fence, rule, indented code or HTML), and holds only letters,
/// digits, non-ASCII characters and [`INERT`] punctuation.
fn inert(line: &str) -> bool {
    line.starts_with(char::is_alphabetic)
        && crate::text::every_byte(line.as_bytes(), |b| INERT_BYTES[usize::from(b)])
}

/// The rows of `src` when every line is blank or [`inert`]; `None` when
/// the markdown parser must lay it out.
pub(super) fn render(src: &str, width: usize) -> Option<Vec<Line<'static>>> {
    // A blank line is empty: one of spaces could end an indented code
    // block or sit inside one, and a tab is not inert.
    if !src.split('\n').all(|line| line.is_empty() || inert(line)) {
        return None;
    }
    let mut out = Vec::new();
    let mut pieces = Vec::with_capacity(1);
    let mut blank_before = false;
    for line in src.split('\n') {
        if line.is_empty() {
            blank_before = !out.is_empty();
            continue;
        }
        if blank_before {
            out.push(Line::default());
            blank_before = false;
        }
        // The parser drops a line's trailing spaces (two of them are a
        // hard break, which also starts a new row here).
        let text = line.trim_end_matches(' ');
        pieces.push(Span::raw(visible(text).into_owned()));
        wrap_owned(&mut out, &mut pieces, &[], &[], width);
    }
    Some(out)
}

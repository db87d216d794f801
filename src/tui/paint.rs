//! A frame's changed cells as bytes for the terminal.
//!
//! What ratatui's crossterm backend sends for the same cells, shorter and
//! without its formatting machinery (a `write!` per escape):
//! - one SGR per change of style, holding only what changed (a new
//!   foreground alone is `ESC[38;5;3m`, not the pair of colours again);
//! - the end of a row that is blank from some column on is erased with
//!   `ESC[K` (after a reset, so that the erased cells take the default
//!   colours), not written over with spaces;
//! - a reset at the end of the frame only when the style is not the
//!   default already.
//!
//! Colours keep crossterm's forms (`38;5;N` for the named ones), so a
//! terminal shows exactly what it showed before.

use std::io::Write as _;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

/// The terminal's current style, as far as this frame set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

impl Pen {
    const DEFAULT: Pen = Pen {
        fg: Color::Reset,
        bg: Color::Reset,
        underline: Color::Reset,
        modifier: Modifier::empty(),
    };

    fn of(cell: &Cell) -> Pen {
        Pen {
            fg: cell.fg,
            bg: cell.bg,
            underline: cell.underline_color,
            modifier: cell.modifier,
        }
    }
}

/// Erasing the rest of a row is chosen over writing its cells when it
/// saves at least this many bytes (the erase itself, a move and a reset
/// cost about as much).
const ERASE_MIN: usize = 4;

/// Append to `out` what draws `updates` (cells of `frame`, in the order of
/// ratatui's diff: by row, then column) over a screen whose style is the
/// default.
pub(crate) fn paint(out: &mut Vec<u8>, updates: &[(u16, u16, &Cell)], frame: &Buffer) {
    let mut pen = Pen::DEFAULT;
    // Where the cursor is known to be: the cell after the last one written.
    let mut cursor: Option<(u16, u16)> = None;
    let mut rest = updates;
    while let Some(&(_, y, _)) = rest.first() {
        let len = rest.iter().take_while(|u| u.1 == y).count();
        let (row, after) = rest.split_at(len);
        rest = after;
        // The row is blank in the frame from `cut` on: what changed there
        // may be erased rather than written.
        let cut = blank_from(frame, y);
        let keep = row.iter().take_while(|u| u.0 < cut).count();
        let erase = row.len() - keep >= ERASE_MIN;
        let cells = if erase { &row[..keep] } else { row };
        for &(x, y, cell) in cells {
            if cursor != Some((x, y)) {
                move_to(out, x, y);
            }
            let next = Pen::of(cell);
            if next != pen {
                restyle(out, pen, next);
                pen = next;
            }
            let symbol = cell.symbol();
            out.extend_from_slice(symbol.as_bytes());
            // After a wide (or empty) symbol, move before the next cell
            // rather than guess where the terminal put the cursor.
            cursor = (narrow(symbol) && x < u16::MAX).then_some((x + 1, y));
        }
        if erase {
            if cursor != Some((cut, y)) {
                move_to(out, cut, y);
            }
            if pen != Pen::DEFAULT {
                out.extend_from_slice(b"\x1b[0m");
                pen = Pen::DEFAULT;
            }
            out.extend_from_slice(b"\x1b[K");
            cursor = Some((cut, y));
        }
    }
    if pen != Pen::DEFAULT {
        out.extend_from_slice(b"\x1b[0m");
    }
}

/// The first column of row `y` of `frame` from which every cell is blank
/// (a space in the default style) to the end of the row; the width when the
/// last cell is not blank. Never the column covered by a wide character.
pub(super) fn blank_from(frame: &Buffer, y: u16) -> u16 {
    let area = frame.area;
    let width = usize::from(area.width);
    let start = usize::from(y.saturating_sub(area.y)) * width;
    let Some(row) = frame.content.get(start..start + width) else {
        return area.right();
    };
    let blank = row
        .iter()
        .rev()
        .take_while(|c| same_cell(c, &Cell::EMPTY))
        .count();
    let mut at = width - blank;
    if at > 0 && at < width && !narrow(row[at - 1].symbol()) {
        at += 1;
    }
    area.x + u16::try_from(at).unwrap_or(area.width)
}

/// Whether `symbol` takes exactly one column.
pub(super) fn narrow(symbol: &str) -> bool {
    match symbol.as_bytes() {
        [b] => (0x20..0x7f).contains(b),
        _ => unicode_width::UnicodeWidthStr::width(symbol) == 1,
    }
}

/// `ESC[row;colH` (one-based), as crossterm's `MoveTo`.
fn move_to(out: &mut Vec<u8>, x: u16, y: u16) {
    let _ = write!(out, "\x1b[{};{}H", u32::from(y) + 1, u32::from(x) + 1);
}

/// One SGR from the style `from` to `to` (which differ).
fn restyle(out: &mut Vec<u8>, from: Pen, to: Pen) {
    let start = out.len();
    out.extend_from_slice(b"\x1b[");
    let mut sgr = Sgr {
        first: out.len(),
        out,
    };
    sgr.modifiers(from.modifier, to.modifier);
    if to.fg != from.fg {
        sgr.color(to.fg, b"38", b"39");
    }
    if to.bg != from.bg {
        sgr.color(to.bg, b"48", b"49");
    }
    if to.underline != from.underline {
        sgr.color(to.underline, b"58", b"59");
    }
    if out.len() == start + 2 {
        // Nothing to say (`ESC[m` would reset everything).
        out.truncate(start);
    } else {
        out.push(b'm');
    }
}

/// The parameters of one SGR, written as they come.
struct Sgr<'a> {
    out: &'a mut Vec<u8>,
    /// Where the first parameter starts.
    first: usize,
}

impl Sgr<'_> {
    fn param(&mut self, p: &[u8]) {
        if self.out.len() > self.first {
            self.out.push(b';');
        }
        self.out.extend_from_slice(p);
    }

    /// From modifiers `from` to `to`, as ratatui's crossterm backend
    /// chooses the parameters.
    fn modifiers(&mut self, from: Modifier, to: Modifier) {
        let removed = from - to;
        if removed.contains(Modifier::REVERSED) {
            self.param(b"27");
        }
        let reset_intensity = removed.intersects(Modifier::BOLD | Modifier::DIM);
        if reset_intensity {
            // Normal intensity ends both; what stays is set again.
            self.param(b"22");
            if to.contains(Modifier::DIM) {
                self.param(b"2");
            }
            if to.contains(Modifier::BOLD) {
                self.param(b"1");
            }
        }
        for (modifier, off) in [
            (Modifier::ITALIC, b"23"),
            (Modifier::UNDERLINED, b"24"),
            (Modifier::CROSSED_OUT, b"29"),
            (Modifier::HIDDEN, b"28"),
        ] {
            if removed.contains(modifier) {
                self.param(off);
            }
        }
        if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
            self.param(b"25");
        }
        let added = to - from;
        for (modifier, on) in [
            (Modifier::REVERSED, b"7"),
            (Modifier::BOLD, b"1"),
            (Modifier::ITALIC, b"3"),
            (Modifier::UNDERLINED, b"4"),
            (Modifier::DIM, b"2"),
            (Modifier::CROSSED_OUT, b"9"),
            (Modifier::HIDDEN, b"8"),
            (Modifier::SLOW_BLINK, b"5"),
            (Modifier::RAPID_BLINK, b"6"),
        ] {
            let again = reset_intensity && modifier.intersects(Modifier::BOLD | Modifier::DIM);
            if added.contains(modifier) && !again {
                self.param(on);
            }
        }
    }

    /// A colour: `set` (38, 48 or 58) and crossterm's form of it, or `reset`.
    fn color(&mut self, color: Color, set: &[u8], reset: &[u8]) {
        let index = match color {
            Color::Reset => return self.param(reset),
            Color::Rgb(r, g, b) => {
                self.param(set);
                let _ = write!(self.out, ";2;{r};{g};{b}");
                return;
            }
            Color::Black => 0,
            Color::Red => 1,
            Color::Green => 2,
            Color::Yellow => 3,
            Color::Blue => 4,
            Color::Magenta => 5,
            Color::Cyan => 6,
            Color::Gray => 7,
            Color::DarkGray => 8,
            Color::LightRed => 9,
            Color::LightGreen => 10,
            Color::LightYellow => 11,
            Color::LightBlue => 12,
            Color::LightMagenta => 13,
            Color::LightCyan => 14,
            Color::White => 15,
            Color::Indexed(i) => i,
        };
        self.param(set);
        let _ = write!(self.out, ";5;{index}");
    }
}

/// Whether two cells are equal, as `Cell`'s `==` says, with its cheap
/// fields first and a one-byte symbol compared without a call to `memcmp`
/// (a frame compares a screen's worth of cells or more).
#[allow(deprecated)] // `skip` is part of equality
#[inline]
pub(super) fn same_cell(a: &Cell, b: &Cell) -> bool {
    a.fg == b.fg
        && a.bg == b.bg
        && a.modifier == b.modifier
        && a.underline_color == b.underline_color
        && a.diff_option == b.diff_option
        && a.skip == b.skip
        && match (a.symbol().as_bytes(), b.symbol().as_bytes()) {
            ([x], [y]) => x == y,
            (x, y) => x == y,
        }
}

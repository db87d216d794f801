//! [`paint`] draws the frame: in a terminal emulator (vt100), the screen
//! after its bytes is the frame drawn on a blank screen, cell by cell with
//! colours and attributes; and it sends no more bytes than ratatui's
//! crossterm backend for the same cells.

use proptest::prelude::*;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier, Style};

use super::paint::paint;
use super::scroll_tests::{Shown, cells, parser};

/// Styles a cell may take: default, colours of each form, modifiers that
/// ratatui's diff turns on and off in every combination.
fn style(i: u8) -> Style {
    match i % 9 {
        0 => Style::default(),
        1 => Style::default().fg(Color::Yellow),
        2 => Style::default().fg(Color::Cyan).bg(Color::DarkGray),
        3 => Style::default().add_modifier(Modifier::BOLD),
        4 => Style::default()
            .add_modifier(Modifier::DIM | Modifier::ITALIC)
            .fg(Color::Magenta),
        // Not bold and dim at once: vt100 keeps one intensity (the last
        // set), where a terminal such as xterm keeps both.
        5 => Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        6 => Style::default()
            .fg(Color::Rgb(250, 128, 7))
            .bg(Color::Indexed(236))
            .add_modifier(Modifier::UNDERLINED),
        7 => Style::default().bg(Color::Blue),
        _ => Style::default().add_modifier(Modifier::CROSSED_OUT | Modifier::ITALIC),
    }
}

/// Pieces of text a row is made of: words, spaces, wide characters.
const PIECES: [&str; 6] = ["word", " ", "  ", "界", "a界b", "x"];

/// A buffer of `size` with rows made of `(piece, style)` runs.
fn frame(size: Size, rows: &[Vec<(usize, u8)>]) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, size.width, size.height));
    for (y, runs) in rows.iter().enumerate().take(usize::from(size.height)) {
        let y = y as u16;
        let mut x = 0u16;
        for &(piece, st) in runs {
            if x >= size.width {
                break;
            }
            let text = PIECES[piece % PIECES.len()];
            let (end, _) = buf.set_stringn(x, y, text, usize::from(size.width - x), style(st));
            x = end;
        }
    }
    buf
}

/// What the terminal shows after `shown` was drawn and then `next` over it
/// by `draw` (the bytes of the diff from `shown` to `next`).
fn screen_after(
    size: Size,
    shown: &Buffer,
    next: &Buffer,
    draw: impl Fn(&Buffer, &Buffer) -> Vec<u8>,
) -> (Vec<Vec<Shown>>, usize) {
    let mut term = parser(size);
    term.process(&crossterm_bytes(&Buffer::empty(shown.area), shown));
    let bytes = draw(shown, next);
    term.process(&bytes);
    (visible(cells(term.screen())), bytes.len())
}

/// The frame drawn on a blank screen.
fn redrawn(size: Size, next: &Buffer) -> Vec<Vec<Shown>> {
    let mut term = parser(size);
    term.process(&crossterm_bytes(&Buffer::empty(next.area), next));
    visible(cells(term.screen()))
}

/// What shows of each cell: a blank's foreground colour and intensity do
/// not (ratatui's diff leaves the half of a wide character that a blank
/// overwrote with the pen's foreground, in vt100).
fn visible(mut rows: Vec<Vec<Shown>>) -> Vec<Vec<Shown>> {
    for cell in rows.iter_mut().flatten() {
        let [bold, dim, italic, underline, inverse, ..] = &mut cell.3;
        if cell.0 == " " && !*underline && !*inverse {
            cell.1 = vt100::Color::Default;
            (*bold, *dim, *italic) = (false, false, false);
        }
    }
    rows
}

fn crossterm_bytes(shown: &Buffer, next: &Buffer) -> Vec<u8> {
    let mut out = Vec::new();
    CrosstermBackend::new(&mut out)
        .draw(shown.diff(next).into_iter())
        .expect("draw");
    out
}

fn paint_bytes(shown: &Buffer, next: &Buffer) -> Vec<u8> {
    let mut out = Vec::new();
    paint(&mut out, &shown.diff(next), next);
    out
}

fn rows() -> impl Strategy<Value = Vec<Vec<(usize, u8)>>> {
    prop::collection::vec(prop::collection::vec((0usize..6, 0u8..9), 0..10), 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn paint_draws_the_frame_in_no_more_bytes(before in rows(), after in rows(), width in 4u16..24) {
        let size = Size::new(width, 6);
        let (shown, next) = (frame(size, &before), frame(size, &after));
        let (before, plain) = screen_after(size, &shown, &next, crossterm_bytes);
        let (got, ours) = screen_after(size, &shown, &next, paint_bytes);
        // The frame; or, where ratatui's diff leaves a cell out (the half
        // of a wide character a coloured cell overwrote), what crossterm's
        // backend showed for the same cells.
        // Judged cell by cell: a frame may have a left-out cell in one row
        // and an otherwise different row elsewhere.
        let want = redrawn(size, &next);
        let fits = got.iter().zip(&want).zip(&before).all(|((g, w), b)| {
            g.iter().zip(w).zip(b).all(|((g, w), b)| g == w || g == b)
        });
        prop_assert!(fits, "{got:?}\n{want:?}\n{before:?}");
        prop_assert!(ours <= plain, "{ours} bytes, crossterm {plain}");
    }
}

proptest! {
    #[test]
    fn the_fast_cell_comparison_is_cell_equality(before in rows(), after in rows()) {
        let size = Size::new(12, 6);
        let (a, b) = (frame(size, &before), frame(size, &after));
        let extra = [
            ratatui::buffer::Cell::EMPTY,
            ratatui::buffer::Cell::default(),
            ratatui::buffer::Cell::new("é"),
            ratatui::buffer::Cell::new("e\u{301}"),
        ];
        let cells: Vec<_> = a.content.iter().chain(&b.content).chain(&extra).collect();
        for x in &cells {
            for y in &cells {
                prop_assert_eq!(super::paint::same_cell(x, y), x == y, "{:?} {:?}", x, y);
            }
        }
    }
}

#[test]
fn a_row_that_got_shorter_is_erased_not_written_over() {
    let size = Size::new(40, 2);
    let long = frame(size, &[vec![(0, 0); 9], vec![(0, 3); 9]]);
    let short = frame(size, &[vec![(5, 0)], vec![(5, 3)]]);
    let bytes = paint_bytes(&long, &short);
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(text.matches("\x1b[K").count(), 2, "{text:?}");
    assert!(!text.contains("  "), "no run of spaces: {text:?}");
    let (_, plain) = screen_after(size, &long, &short, crossterm_bytes);
    let (got, ours) = screen_after(size, &long, &short, paint_bytes);
    assert_eq!(got, redrawn(size, &short));
    assert!(ours * 3 < plain, "{ours} bytes, crossterm {plain}");
}

#[test]
fn a_colour_that_alone_changes_is_alone_in_its_escape() {
    let size = Size::new(8, 1);
    let blank = Buffer::empty(Rect::new(0, 0, 8, 1));
    let mut next = blank.clone();
    next.set_string(0, 0, "ab", Style::default().fg(Color::Yellow));
    next.set_string(
        2,
        0,
        "cd",
        Style::default().fg(Color::Yellow).bg(Color::Blue),
    );
    next.set_string(4, 0, "ef", Style::default());
    let text = String::from_utf8(paint_bytes(&blank, &next)).expect("utf-8");
    assert_eq!(
        text, "\x1b[1;1H\x1b[38;5;3mab\x1b[48;5;4mcd\x1b[39;49mef",
        "the style is the default at the end: no reset"
    );
    let (got, _) = screen_after(size, &blank, &next, paint_bytes);
    assert_eq!(got, redrawn(size, &next));
}

#[test]
fn the_end_of_a_row_after_a_wide_character_is_not_cut_in_half() {
    let size = Size::new(10, 1);
    let full = frame(size, &[vec![(0, 0), (0, 0), (0, 0)]]);
    let mut wide = Buffer::empty(Rect::new(0, 0, 10, 1));
    wide.set_string(0, 0, "ab界", Style::default());
    let (got, _) = screen_after(size, &full, &wide, paint_bytes);
    assert_eq!(got, redrawn(size, &wide));
    assert_eq!(
        super::paint::blank_from(&wide, 0),
        4,
        "the column after the wide character's second half"
    );
    // A blank cell covered by a wide character is not where the erase
    // starts.
    let mut covered = Buffer::empty(Rect::new(0, 0, 10, 1));
    covered.set_string(0, 0, "ab界", Style::default());
    covered[(3, 0)] = ratatui::buffer::Cell::EMPTY;
    assert_eq!(super::paint::blank_from(&covered, 0), 4);
}

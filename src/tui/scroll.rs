//! Fewer bytes to the terminal while the transcript scrolls.
//!
//! ratatui sends the cells that differ from the last frame; when the
//! transcript moves by a row, every row of it differs, so each frame of a
//! streaming answer used to redraw the whole transcript. [`ScrollBackend`]
//! wraps the real backend and lets the terminal move the rows instead: it
//! keeps the last frame it drew (what the terminal shows), and when the rows
//! of the transcript's band (the rows the UI names for the frame) match the
//! shown rows shifted by `k`, it sets a scroll region over the band and
//! scrolls it (`ESC[top;bottom r`, then `k` line feeds at its bottom row or
//! `k` reverse indexes at its top row, then `ESC[r`), shifts
//! its copy the same way, and sends only the cells that still differ: the
//! new rows. The result on screen is the same frame as a full redraw's.
//!
//! A frame that scrolls or changes much is wrapped in a synchronized update
//! (`ESC[?2026h` ... `ESC[?2026l`), so terminals that know it show it at
//! once (the others ignore it). Cursor moves and shows that change nothing
//! are not sent again.
//!
//! Fallbacks: no band (an overlay, a modal, the picker), no scroll (the
//! scroll would not save a row), `WARDEN_NO_SCROLL_REGION` set (terminals
//! without scroll regions), or a screen warden cannot vouch for (a resize,
//! a partial clear, a draw outside [`draw`]): the plain diff, after a clear
//! when the screen is unknown.

use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::rc::Rc;

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal};

/// The environment variable that turns scroll regions off.
pub(crate) const NO_SCROLL_REGION: &str = "WARDEN_NO_SCROLL_REGION";

/// Cells a frame must change before it is wrapped in a synchronized
/// update even without a scroll (a small change cannot tear).
const SYNC_CELLS: usize = 80;

/// Whether the environment allows scroll regions (`WARDEN_NO_SCROLL_REGION`
/// unset or empty).
pub(crate) fn regions_from_env() -> bool {
    std::env::var_os(NO_SCROLL_REGION).is_none_or(|v| v.is_empty())
}

/// Rows `top..bottom` of the screen that may scroll together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Band {
    /// First row.
    pub top: u16,
    /// One past the last row.
    pub bottom: u16,
}

impl From<Rect> for Band {
    fn from(area: Rect) -> Self {
        Band {
            top: area.top(),
            bottom: area.bottom(),
        }
    }
}

/// What warden knows of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screen {
    /// It shows the last frame drawn.
    Shown,
    /// It was cleared since.
    Blank,
    /// Something else wrote to it.
    Unknown,
}

/// What [`draw`] hands the backend for one frame.
#[derive(Default)]
struct Stage {
    /// The frame just rendered, complete.
    frame: Option<Buffer>,
    /// Its scrolling band.
    band: Option<Band>,
    /// A buffer to reuse for the next frame.
    spare: Buffer,
}

/// What the backend did, for tests and benches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Frames drawn through [`draw`].
    pub frames: u64,
    /// Frames in which a band was scrolled.
    pub scrolled: u64,
    /// Frames drawn in full after a clear (first frame, resize, unknown screen).
    pub full: u64,
}

/// A backend that scrolls the transcript with the terminal's own scroll
/// regions. Draw through [`draw`]; a plain `Terminal::draw` works too, as a
/// full diff without scrolling.
pub struct ScrollBackend<B> {
    inner: B,
    stage: Rc<RefCell<Stage>>,
    /// The last frame drawn: what the terminal shows, when `screen` is
    /// [`Screen::Shown`].
    shown: Buffer,
    screen: Screen,
    /// Whether the terminal may be asked to scroll a region.
    regions: bool,
    /// Whether the terminal is inside a synchronized update.
    syncing: bool,
    /// Whether the cursor is visible, when known.
    cursor_visible: Option<bool>,
    /// Where the cursor is, when known.
    cursor_at: Option<Position>,
    /// The row hashes of `shown` over a band, kept from the frame that
    /// computed them (and shifted with the rows), so a frame hashes only
    /// its own rows.
    shown_rows: Option<(Band, Vec<RowHash>)>,
    /// Time between two frames while the terminal is not focused.
    unfocused_frame: std::time::Duration,
    stats: Stats,
}

impl<B: Backend<Error = io::Error> + Write> ScrollBackend<B> {
    /// Wrap `inner`. `regions`: whether the terminal can scroll a region
    /// (DECSTBM); without, every frame is a plain diff.
    pub(crate) fn new(inner: B, regions: bool) -> Self {
        ScrollBackend {
            inner,
            stage: Rc::default(),
            shown: Buffer::default(),
            screen: Screen::Unknown,
            regions,
            syncing: false,
            cursor_visible: None,
            cursor_at: None,
            shown_rows: None,
            unfocused_frame: std::time::Duration::from_millis(250),
            stats: Stats::default(),
        }
    }

    /// Set the time between two frames while the terminal is not focused.
    pub(crate) fn with_unfocused_frame(mut self, every: std::time::Duration) -> Self {
        self.unfocused_frame = every;
        self
    }

    /// The time between two frames while the terminal is not focused.
    pub fn unfocused_frame(&self) -> std::time::Duration {
        self.unfocused_frame
    }

    /// The screen may have changed behind warden's back: the next frame
    /// clears it and draws everything.
    pub(crate) fn forget(&mut self) {
        self.screen = Screen::Unknown;
        self.shown_rows = None;
        self.cursor_visible = None;
        self.cursor_at = None;
    }

    #[cfg(test)]
    /// What was done so far.
    pub(crate) fn stats(&self) -> Stats {
        self.stats
    }

    fn begin_sync(&mut self) -> io::Result<()> {
        if !self.syncing {
            self.inner.write_all(b"\x1b[?2026h")?;
            self.syncing = true;
        }
        Ok(())
    }

    /// Draw `frame` over what is shown, scrolling `band` when that saves rows.
    fn draw_frame(&mut self, frame: Buffer, band: Option<Band>) -> io::Result<Buffer> {
        self.stats.frames += 1;
        if self.screen != Screen::Shown || self.shown.area != frame.area {
            // A resize or an unknown screen: (clear it and) draw everything.
            if self.screen != Screen::Blank {
                self.begin_sync()?;
                self.inner.clear_region(ClearType::All)?;
            }
            self.shown = Buffer::empty(frame.area);
            self.shown_rows = None;
            self.screen = Screen::Shown;
            self.stats.full += 1;
        }
        let band = band
            .filter(|_| self.regions)
            .and_then(|band| clamp(band, frame.area));
        // The new frame's rows, hashed once; the shown rows' hashes come
        // from the last frame when it had the same band.
        let rows = band.map(|band| {
            let new = row_hashes(&frame, band);
            let old = match self.shown_rows.take() {
                Some((was, old)) if was == band => old,
                _ => row_hashes(&self.shown, band),
            };
            (band, old, new)
        });
        let shift = rows
            .as_ref()
            .and_then(|(band, old, new)| best_shift(&self.shown, &frame, *band, old, new));
        if let Some((band, k)) = shift {
            self.begin_sync()?;
            // Line feeds at the bottom margin (reverse indexes at the top
            // one) scroll the region on every VT100-like terminal; `CSI S`
            // is shorter but unknown to some (the Linux console).
            let (row, step) = if k > 0 {
                (band.bottom, "\n")
            } else {
                (band.top + 1, "\x1bM")
            };
            write!(
                self.inner,
                "\x1b[{};{}r\x1b[{row};1H{}\x1b[r",
                band.top + 1,
                band.bottom,
                step.repeat(k.unsigned_abs() as usize)
            )?;
            shift_rows(&mut self.shown, band, k);
            self.cursor_at = None;
            self.stats.scrolled += 1;
        }
        self.shown_rows = rows.map(|(band, _, new)| (band, new));
        let updates = bridge_gaps(self.shown.diff(&frame), &frame);
        if !updates.is_empty() {
            if updates.len() >= SYNC_CELLS {
                self.begin_sync()?;
            }
            self.inner.draw(updates.into_iter())?;
            self.cursor_at = None;
        }
        Ok(std::mem::replace(&mut self.shown, frame))
    }
}

/// Draw a frame: `render` draws it and names the rows that may scroll
/// together (the transcript's), or `None` when something covers them.
pub(crate) fn draw<B, F>(terminal: &mut Terminal<ScrollBackend<B>>, render: F) -> io::Result<()>
where
    B: Backend<Error = io::Error> + Write,
    F: FnOnce(&mut Frame<'_>) -> Option<Rect>,
{
    let stage = Rc::clone(&terminal.backend().stage);
    terminal.draw(|frame| {
        let band = render(frame).map(Band::from);
        let mut stage = stage.borrow_mut();
        let mut copy = std::mem::take(&mut stage.spare);
        let drawn = frame.buffer_mut();
        copy.area = drawn.area;
        copy.content.clone_from(&drawn.content);
        stage.frame = Some(copy);
        stage.band = band;
    })?;
    Ok(())
}

/// Unchanged cells of a row between two changed ones, at most this many,
/// are sent again instead of moving the cursor over them (a move costs
/// 6 to 10 bytes; a plain cell one).
const GAP: u16 = 6;

/// The cells to send, with short runs of unchanged plain cells between two
/// changes on a row sent again: the new words of a row scrolled in come
/// as one run, not a cursor move per word.
fn bridge_gaps<'a>(
    updates: Vec<(u16, u16, &'a Cell)>,
    frame: &'a Buffer,
) -> Vec<(u16, u16, &'a Cell)> {
    let mut out = Vec::with_capacity(updates.len());
    let mut end: Option<(u16, u16)> = None;
    for (x, y, cell) in updates {
        if let Some((row, from)) = end
            && row == y
            && x > from
            && x - from <= GAP
        {
            let gap: Vec<_> = (from..x).map(|gx| &frame[(gx, y)]).collect();
            if gap.iter().all(|c| plain(c)) {
                out.extend((from..x).zip(gap).map(|(gx, c)| (gx, y, c)));
            }
        }
        out.push((x, y, cell));
        end = Some((y, x.saturating_add(cell_width(cell))));
    }
    out
}

/// Columns a cell's symbol takes (at least one).
fn cell_width(cell: &Cell) -> u16 {
    u16::try_from(unicode_width::UnicodeWidthStr::width(cell.symbol()))
        .unwrap_or(1)
        .max(1)
}

/// A one-column cell drawn the ordinary way, safe to send again.
#[allow(deprecated)] // `skip` still marks cells not to draw
fn plain(cell: &Cell) -> bool {
    cell.diff_option == ratatui::buffer::CellDiffOption::None
        && !cell.skip
        && unicode_width::UnicodeWidthStr::width(cell.symbol()) == 1
}

/// A row's hash and whether it is blank.
type RowHash = (u64, bool);

/// A hash of each row of `buf` from `band`, and whether it is blank.
fn row_hashes(buf: &Buffer, band: Band) -> Vec<RowHash> {
    let width = usize::from(buf.area.width);
    (band.top..band.bottom)
        .map(|y| {
            let start = usize::from(y - buf.area.y) * width;
            let row = &buf.content[start..start + width];
            let mut hasher = DefaultHasher::new();
            row.hash(&mut hasher);
            let blank = row.iter().all(|cell| *cell == Cell::EMPTY);
            (hasher.finish(), blank)
        })
        .collect()
}

/// `band` cut to `area`, when two rows or more of it remain.
fn clamp(band: Band, area: Rect) -> Option<Band> {
    let band = Band {
        top: band.top.max(area.top()),
        bottom: band.bottom.min(area.bottom()),
    };
    (band.bottom >= band.top + 2).then_some(band)
}

/// The scroll of `band` (rows up when positive, down when negative) after
/// which most non-blank rows of `next` are already on screen, when it
/// keeps more of them than not scrolling does. `old` and `new` are the row
/// hashes of `shown` and `next` over `band` (already clamped to the area).
fn best_shift(
    shown: &Buffer,
    next: &Buffer,
    band: Band,
    old: &[RowHash],
    new: &[RowHash],
) -> Option<(Band, i32)> {
    if shown.area != next.area || old.len() != new.len() {
        return None;
    }
    let height = new.len() as i32;
    let kept = |k: i32| -> usize {
        new.iter()
            .enumerate()
            .filter(|&(r, &(hash, blank))| {
                let from = r as i32 + k;
                !blank && (0..height).contains(&from) && old[from as usize].0 == hash
            })
            .count()
    };
    let still = kept(0);
    let mut best: Option<(usize, i32)> = None;
    for distance in 1..height {
        for k in [distance, -distance] {
            let score = kept(k);
            if score > still && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, k));
            }
        }
    }
    // Rows alike are a guess; the cells to send decide.
    let (_, k) = best?;
    let cost = |k| changed_cells(shown, next, band, k, old, new);
    (cost(k) + SCROLL_COST < cost(0)).then_some((band, k))
}

/// About what the escapes of a scroll cost, in cells.
const SCROLL_COST: usize = 16;

/// The cells of `band` in `next` that differ from `shown` once the band
/// scrolled by `k`. Rows whose hashes match count as unchanged without a
/// look at their cells (a collision only misjudges the estimate; the diff
/// that follows sends what differs).
fn changed_cells(
    shown: &Buffer,
    next: &Buffer,
    band: Band,
    k: i32,
    old_rows: &[RowHash],
    new_rows: &[RowHash],
) -> usize {
    let width = usize::from(next.area.width);
    fn row(buf: &Buffer, y: i32, width: usize) -> &[Cell] {
        let start = (y - i32::from(buf.area.y)) as usize * width;
        &buf.content[start..start + width]
    }
    (i32::from(band.top)..i32::from(band.bottom))
        .map(|y| {
            let from = y + k;
            let new = row(next, y, width);
            if (i32::from(band.top)..i32::from(band.bottom)).contains(&from) {
                let (r, f) = (
                    (y - i32::from(band.top)) as usize,
                    (from - i32::from(band.top)) as usize,
                );
                if old_rows[f].0 == new_rows[r].0 {
                    return 0;
                }
                let old = row(shown, from, width);
                new.iter().zip(old).filter(|(a, b)| a != b).count()
            } else {
                new.iter().filter(|c| **c != Cell::EMPTY).count()
            }
        })
        .sum()
}

/// Move the rows of `band` up by `k` (down when negative), as the terminal
/// does inside a scroll region: the rows that come in are blank.
fn shift_rows(buf: &mut Buffer, band: Band, k: i32) {
    let width = usize::from(buf.area.width);
    let first = usize::from(band.top - buf.area.y) * width;
    let rows = &mut buf.content[first..first + usize::from(band.bottom - band.top) * width];
    let cells = k.unsigned_abs() as usize * width;
    if cells >= rows.len() {
        rows.fill(Cell::EMPTY);
    } else if k > 0 {
        rows.rotate_left(cells);
        let len = rows.len();
        rows[len - cells..].fill(Cell::EMPTY);
    } else {
        rows.rotate_right(cells);
        rows[..cells].fill(Cell::EMPTY);
    }
}

impl<B: Backend<Error = io::Error> + Write> Backend for ScrollBackend<B> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let (frame, band) = {
            let mut stage = self.stage.borrow_mut();
            let band = stage.band.take();
            (stage.frame.take(), band)
        };
        match frame {
            Some(frame) => match self.draw_frame(frame, band) {
                Ok(spare) => {
                    self.stage.borrow_mut().spare = spare;
                    Ok(())
                }
                Err(err) => {
                    // Half a frame may have gone out.
                    self.forget();
                    Err(err)
                }
            },
            None => {
                // Not from `draw`: pass it on; the copy no longer holds.
                self.screen = Screen::Unknown;
                self.cursor_at = None;
                self.inner.draw(content)
            }
        }
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.forget();
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        if self.cursor_visible == Some(false) {
            return Ok(());
        }
        self.cursor_visible = Some(false);
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        if self.cursor_visible == Some(true) {
            return Ok(());
        }
        self.cursor_visible = Some(true);
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let position = position.into();
        if self.cursor_at == Some(position) {
            return Ok(());
        }
        self.cursor_at = Some(position);
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.clear_region(ClearType::All)
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.screen = match clear_type {
            ClearType::All => Screen::Blank,
            _ => Screen::Unknown,
        };
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.syncing {
            self.syncing = false;
            self.inner.write_all(b"\x1b[?2026l")?;
        }
        Backend::flush(&mut self.inner)
    }
}

impl<B: Write> Write for ScrollBackend<B> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

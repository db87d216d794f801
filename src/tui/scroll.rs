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
//! are not sent again. The cells that differ go out as [`super::paint`]
//! writes them (one SGR per change of style, a row's blank end erased),
//! and nothing is flushed before ratatui flushes the frame: it leaves in
//! one write.
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

use super::paint::same_cell;

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

/// What the ui says of the transcript's rows (it lays them out).
pub(crate) use crate::ui::TranscriptRows as Rows;

/// What [`draw`] hands the backend for one frame.
#[derive(Default)]
struct Stage {
    /// The frame just rendered, complete.
    frame: Option<Buffer>,
    /// Its scrolling band, and the shift its layout knows.
    band: Option<(Band, Option<i32>)>,
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
    /// Frames whose scroll was searched for (row hashes compared over
    /// every shift) because the layout's own shift was unknown or did not
    /// hold.
    pub searched: u64,
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
    /// Two one-row buffers to diff a changed row in ([`changed`]).
    rows: (Buffer, Buffer),
    /// By row of the frame: found equal to the shown row (after the
    /// frame's scroll) while the scroll was checked; the diff passes over
    /// these rows.
    same: Vec<bool>,
    /// The terminal's size, asked once and again after [`Self::resized`]
    /// (ratatui asks before every frame; each ask opens `/dev/tty`).
    size: std::cell::Cell<Option<Size>>,
    /// A frame's cells as bytes ([`super::paint`]), kept for its room.
    out: Vec<u8>,
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
            rows: Default::default(),
            same: Vec::new(),
            size: std::cell::Cell::new(None),
            out: Vec::new(),
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

    /// The terminal may have changed size (it said so, or warden was away
    /// from the screen): the next frame asks it.
    pub(crate) fn resized(&mut self) {
        self.size.set(None);
    }

    /// The screen may have changed behind warden's back: the next frame
    /// clears it and draws everything.
    pub(crate) fn forget(&mut self) {
        self.resized();
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

    /// Draw `frame` over what is shown, scrolling `band` when that saves
    /// rows. `moved`: the shift the transcript's layout knows.
    fn draw_frame(
        &mut self,
        frame: Buffer,
        band: Option<Band>,
        moved: Option<i32>,
    ) -> io::Result<Buffer> {
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
        self.same.clear();
        let shift = band.and_then(|band| self.shift_for(&frame, band, moved));
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
        let updates = changed(&self.shown, &frame, &mut self.rows, &self.same);
        let updates = bridge_gaps(updates, &frame);
        if !updates.is_empty() {
            if updates.len() >= SYNC_CELLS {
                self.begin_sync()?;
            }
            self.out.clear();
            super::paint::paint(&mut self.out, &updates, &frame);
            self.inner.write_all(&self.out)?;
            self.cursor_at = None;
        }
        Ok(std::mem::replace(&mut self.shown, frame))
    }

    /// The scroll of `band` that brings `frame` closest to what is shown,
    /// when it saves cells. The layout's shift `moved` is checked first,
    /// row against row, with no hashing: a streamed answer's frame costs
    /// what changed. Without it, or when it does not hold (something above
    /// the view changed height), every shift is searched by row hashes.
    fn shift_for(&mut self, frame: &Buffer, band: Band, moved: Option<i32>) -> Option<(Band, i32)> {
        self.same.clear();
        if self.shown.area != frame.area {
            return None;
        }
        if let Some(k) = moved
            && let Some(verdict) = known_shift(&self.shown, frame, band, k, &mut self.same)
        {
            // The hashes kept are of rows that moved since.
            self.shown_rows = None;
            if !verdict && k != 0 {
                // Rows found equal at a shift not taken tell nothing.
                self.same.clear();
            }
            return verdict.then_some((band, k));
        }
        self.same.clear();
        self.stats.searched += 1;
        // The new frame's rows, hashed once; the shown rows' hashes come
        // from the last frame when it had the same band.
        let new = row_hashes(frame, band);
        let old = match self.shown_rows.take() {
            Some((was, old)) if was == band => old,
            _ => row_hashes(&self.shown, band),
        };
        let shift = best_shift(&self.shown, frame, band, &old, &new);
        self.shown_rows = Some((band, new));
        shift
    }
}

/// Whether two rows of cells are equal.
fn same_row(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_cell(a, b))
}

/// How many cells of two rows differ.
fn differing(a: &[Cell], b: &[Cell]) -> usize {
    a.iter().zip(b).filter(|(a, b)| !same_cell(a, b)).count()
}

/// Row `y` of `buf` (a screen row; `buf` starts at column 0 of its area).
fn row_of(buf: &Buffer, y: i32) -> &[Cell] {
    let width = usize::from(buf.area.width);
    let start = (y - i32::from(buf.area.y)) as usize * width;
    &buf.content[start..start + width]
}

/// Whether the layout's shift `k` holds for `band`, and if so whether
/// scrolling by it saves cells: `Some(true)` scroll, `Some(false)` do not,
/// `None` it does not hold (fewer than half the rows that stay on screen
/// match), search instead. A shift of a screen or more keeps nothing.
/// `same` (by row of the frame) is set for the rows found equal to the
/// shown ones moved by `k`.
fn known_shift(
    shown: &Buffer,
    next: &Buffer,
    band: Band,
    k: i32,
    same: &mut Vec<bool>,
) -> Option<bool> {
    let (top, bottom) = (i32::from(band.top), i32::from(band.bottom));
    if k.unsigned_abs() >= (bottom - top).unsigned_abs() {
        return Some(false);
    }
    // Cells to send after the scroll; rows kept that match.
    let mut cost = 0;
    let (mut kept, mut matched) = (0, 0);
    for y in top..bottom {
        let new = row_of(next, y);
        let from = y + k;
        if (top..bottom).contains(&from) {
            kept += 1;
            let old = row_of(shown, from);
            if same_row(new, old) {
                matched += 1;
                let at = (y - i32::from(next.area.y)) as usize;
                if same.len() <= at {
                    same.resize(at + 1, false);
                }
                same[at] = true;
            } else {
                cost += differing(new, old);
            }
        } else {
            cost += new.iter().filter(|c| !same_cell(c, &Cell::EMPTY)).count();
        }
    }
    if matched * 2 < kept {
        return None;
    }
    if k == 0 {
        return Some(false);
    }
    // Not scrolling must cost more, counted only as far as needed.
    let limit = cost + SCROLL_COST;
    let mut still = 0;
    for y in top..bottom {
        let (new, old) = (row_of(next, y), row_of(shown, y));
        if !same_row(new, old) {
            still += differing(new, old);
            if still > limit {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// Draw a frame: `render` draws it and names the rows that may scroll
/// together (the transcript's, with the shift its layout knows), or `None`
/// when something covers them.
pub(crate) fn draw<B, F>(terminal: &mut Terminal<ScrollBackend<B>>, render: F) -> io::Result<()>
where
    B: Backend<Error = io::Error> + Write,
    F: FnOnce(&mut Frame<'_>) -> Option<Rows>,
{
    let stage = Rc::clone(&terminal.backend().stage);
    terminal.draw(|frame| {
        let rows = render(frame);
        let mut stage = stage.borrow_mut();
        // The frame is taken, not copied: ratatui keeps the spare (of the
        // same size) in its place. Its own diff of the two is never read
        // (the backend draws the staged frame), and it clears that buffer
        // before it renders into it again.
        let mut taken = std::mem::take(&mut stage.spare);
        let drawn = frame.buffer_mut();
        if taken.area != drawn.area {
            taken.resize(drawn.area);
        }
        std::mem::swap(drawn, &mut taken);
        stage.frame = Some(taken);
        stage.band = rows.map(|rows| (Band::from(rows.area), rows.moved));
    })?;
    Ok(())
}

/// The cells of `next` that differ from `shown` (of the same area), as
/// ratatui's diff finds them, row by row: a row equal to the one shown is
/// passed over in one comparison, without the diff's width lookup of each
/// cell, and a row in `same` (found equal already) without any; a changed
/// row is diffed alone in `scratch`. (Warden draws no cell that asks to be
/// sent even when unchanged; a row holding one that is compared is diffed.)
fn changed<'a>(
    shown: &Buffer,
    next: &'a Buffer,
    scratch: &mut (Buffer, Buffer),
    same: &[bool],
) -> Vec<(u16, u16, &'a Cell)> {
    let area = next.area;
    let width = usize::from(area.width);
    let mut out = Vec::new();
    if shown.area != area || width == 0 {
        out.extend(shown.diff(next));
        return out;
    }
    let rows = next.content.chunks(width).zip(shown.content.chunks(width));
    for (i, ((new, old), y)) in rows.zip(area.top()..area.bottom()).enumerate() {
        if same.get(i).copied().unwrap_or(false) {
            continue;
        }
        let always = |c: &Cell| c.diff_option == ratatui::buffer::CellDiffOption::AlwaysUpdate;
        if same_row(new, old) && !new.iter().any(always) {
            continue;
        }
        let (was, now) = scratch;
        for (buf, cells) in [(&mut *was, old), (&mut *now, new)] {
            buf.area = Rect::new(area.x, y, area.width, 1);
            buf.content.clear();
            buf.content.extend_from_slice(cells);
        }
        out.extend(
            was.diff(now)
                .into_iter()
                .map(|(x, y, _)| (x, y, &next[(x, y)])),
        );
    }
    out
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
            && (from..x).all(|gx| plain(&frame[(gx, y)]))
        {
            out.extend((from..x).map(|gx| (gx, y, &frame[(gx, y)])));
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
        && super::paint::narrow(cell.symbol())
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
            let blank = row.iter().all(|cell| same_cell(cell, &Cell::EMPTY));
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
                differing(new, old)
            } else {
                new.iter().filter(|c| !same_cell(c, &Cell::EMPTY)).count()
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
        let (band, moved) = band.map_or((None, None), |(band, moved)| (Some(band), moved));
        match frame {
            Some(frame) => match self.draw_frame(frame, band, moved) {
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
        // Written, not flushed: ratatui flushes once the frame is out.
        self.inner.write_all(b"\x1b[?25l")
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        if self.cursor_visible == Some(true) {
            return Ok(());
        }
        self.cursor_visible = Some(true);
        self.inner.write_all(b"\x1b[?25h")
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
        write!(
            self.inner,
            "\x1b[{};{}H",
            u32::from(position.y) + 1,
            u32::from(position.x) + 1
        )
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
        if let Some(size) = self.size.get() {
            return Ok(size);
        }
        let size = self.inner.size()?;
        self.size.set(Some(size));
        Ok(size)
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

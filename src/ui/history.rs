//! The transcript viewport: entry heights in a Fenwick tree (prefix sums in
//! O(log n), so the first visible entry is found by search), a bounded cache
//! of laid-out entries near the viewport, and the scroll position.
//!
//! Rows are numbered over the whole transcript: entry `i` starts at the sum
//! of the heights before it; an entry's height includes the blank row that
//! separates it from the previous entry.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::Scroll;
use super::entry::{self, Ctx, Laid, Terminals};
use super::search::{highlight_row, row_matches};
use super::theme::Theme;
use super::wrap::str_width;
use crate::state::search::{Match, needle};
use crate::state::{Entry, EntryKind, Search, Transcript};

/// Rows of laid-out entries kept at least, whatever the viewport.
const MIN_CACHED_ROWS: usize = 2_000;
/// Viewports' worth of laid-out rows kept.
const CACHED_VIEWPORTS: usize = 8;
/// New entries laid out (and cached) rather than only measured, per frame.
const EAGER_NEW_ENTRIES: usize = 256;

/// Sums of entry heights: point update, prefix sum and search in O(log n).
#[derive(Debug, Default, Clone)]
struct Heights {
    values: Vec<usize>,
    /// 1-based Fenwick tree over `values`.
    tree: Vec<usize>,
}

impl Heights {
    fn get(&self, i: usize) -> usize {
        self.values.get(i).copied().unwrap_or(0)
    }

    /// Sum of the heights of entries `0..i`.
    fn prefix(&self, i: usize) -> usize {
        let mut i = i.min(self.values.len());
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }

    fn total(&self) -> usize {
        self.prefix(self.values.len())
    }

    fn push(&mut self, h: usize) {
        if self.tree.is_empty() {
            self.tree.push(0);
        }
        let n = self.values.len() + 1;
        let low = n & n.wrapping_neg();
        let node = h + self.prefix(n - 1) - self.prefix(n - low);
        self.values.push(h);
        self.tree.push(node);
    }

    fn set(&mut self, i: usize, h: usize) {
        let Some(old) = self.values.get(i).copied() else {
            return;
        };
        if old == h {
            return;
        }
        self.values[i] = h;
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k] + h - old;
            k += k & k.wrapping_neg();
        }
    }

    /// The entry holding `row` and the row's offset inside it; `(len, 0)`
    /// past the end.
    fn find(&self, row: usize) -> (usize, usize) {
        let n = self.values.len();
        let mut pos = 0;
        let mut rem = row;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= rem {
                pos = next;
                rem -= self.tree[next];
            }
            step >>= 1;
        }
        if pos >= n { (n, 0) } else { (pos, rem) }
    }
}

/// How much layout work was done, for tests and benches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Entries measured for their height only.
    pub(crate) measured: u64,
    /// Entries laid out (or re-laid out) and kept in the cache.
    pub(crate) laid_out: u64,
}

/// The search as the view needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// The query, lowered.
    needle: Vec<char>,
    current: Option<Match>,
    jumps: u64,
}

/// A laid-out entry in the cache.
struct Cached {
    rev: u64,
    laid: Laid,
    /// The frame that last used it (eviction picks the oldest).
    used: u64,
}

/// The transcript's layout and scroll state.
pub(crate) struct History {
    ctx: Option<Ctx>,
    /// The transcript generation and length last synced.
    generation: u64,
    synced: usize,
    heights: Heights,
    cache: HashMap<u64, Cached>,
    cached_rows: usize,
    frame: u64,
    /// `None` follows the tail; `Some(row)` is the first visible row.
    top: Option<usize>,
    /// The viewport height and total rows at the last draw, for scrolling.
    viewport: usize,
    total: usize,
    /// The open search: matches on screen are highlighted.
    search: Option<Found>,
    /// The search jump last scrolled to (see [`Search::jumps`]).
    jumped: u64,
    /// The area and first visible row of the last draw.
    drawn_at: Option<(Rect, usize)>,
    /// Rows the content moved up since the draw before, in the same area.
    moved: Option<i32>,
    pub(crate) stats: Stats,
}

impl History {
    pub(crate) fn new() -> Self {
        History {
            ctx: None,
            generation: 0,
            synced: 0,
            heights: Heights::default(),
            cache: HashMap::new(),
            cached_rows: 0,
            frame: 0,
            top: None,
            viewport: 0,
            total: 0,
            search: None,
            jumped: 0,
            drawn_at: None,
            moved: None,
            stats: Stats::default(),
        }
    }

    /// The search to highlight and scroll to (`None`: closed).
    pub(crate) fn set_search(&mut self, search: Option<&Search>) {
        self.search = search.map(|s| Found {
            needle: needle(&s.query),
            current: s.current,
            jumps: s.jumps,
        });
    }

    /// Where match `m` is in its entry's rows: (row, char index). The
    /// rows may not hold as many matches as the text (markdown markup,
    /// words cut by wrapping): then the last one, or the entry's first row.
    fn locate(
        &mut self,
        m: Match,
        entry: &Entry,
        needle: &[char],
        ctx: Ctx,
        terminals: Terminals<'_>,
    ) -> (usize, Option<usize>) {
        self.ensure(m.entry, entry, ctx, terminals);
        let Some(cached) = self.cache.get_mut(&entry.id) else {
            return (0, None);
        };
        if cached.laid.dropped() > 0 {
            cached.laid.keep_all(true);
            entry::relayout(&mut cached.laid, entry, ctx, terminals);
        }
        let mut seen = 0;
        let mut last = (0, None);
        for row in 0..cached.laid.len() {
            let Some(line) = cached.laid.line(row) else {
                continue;
            };
            for start in row_matches(line, needle) {
                last = (row, Some(start));
                if seen == m.nth {
                    return last;
                }
                seen += 1;
            }
        }
        last
    }

    /// How many rows the content on screen moved up (down when negative)
    /// between the last two draws in the same area, counted by the layout
    /// (an answer that grew by `k` rows at the tail: `k`); `None` after a
    /// draw elsewhere or of another size. A guess for the terminal's
    /// scroll ([`crate::tui::scroll`] checks it against the rows): an entry
    /// above the view that changes height moves the count, not the rows.
    pub(crate) fn moved(&self) -> Option<i32> {
        self.moved
    }

    pub(crate) fn is_following(&self) -> bool {
        self.top.is_none()
    }

    pub(crate) fn scroll(&mut self, scroll: Scroll) {
        let page = self.viewport.saturating_sub(1).max(1);
        let max_top = self.total.saturating_sub(self.viewport);
        let current = self.top.unwrap_or(max_top).min(max_top);
        let next = match scroll {
            Scroll::Up(n) => current.saturating_sub(usize::from(n)),
            Scroll::Down(n) => current.saturating_add(usize::from(n)),
            Scroll::PageUp => current.saturating_sub(page),
            Scroll::PageDown => current.saturating_add(page),
            Scroll::Top => 0,
            Scroll::Bottom => max_top,
        };
        self.top = (next < max_top).then_some(next);
    }

    fn height_of(index: usize, rows: usize) -> usize {
        if rows == 0 {
            0
        } else {
            rows + usize::from(index > 0)
        }
    }

    /// Change entry `index`'s height; a change above the viewport moves the
    /// scroll position with it, so what is on screen stays put.
    fn set_height(&mut self, index: usize, height: usize) {
        let old = self.heights.get(index);
        if old == height {
            return;
        }
        if let Some(top) = self.top {
            let start = self.heights.prefix(index);
            if start + old <= top {
                self.top = Some((top + height).saturating_sub(old));
            }
        }
        self.heights.set(index, height);
    }

    fn insert(&mut self, id: u64, rev: u64, laid: Laid) {
        self.cached_rows += laid.len();
        let cached = Cached {
            rev,
            laid,
            used: self.frame,
        };
        if let Some(old) = self.cache.insert(id, cached) {
            self.cached_rows -= old.laid.len();
        }
    }

    /// Lay out entry `index` again (incrementally when cached) and update its height.
    fn refresh(&mut self, index: usize, entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) {
        self.stats.laid_out += 1;
        let rows = match self.cache.get_mut(&entry.id) {
            Some(cached) => {
                let before = cached.laid.len();
                entry::relayout(&mut cached.laid, entry, ctx, terminals);
                cached.rev = entry.rev;
                cached.used = self.frame;
                let after = cached.laid.len();
                self.cached_rows = self.cached_rows + after - before;
                after
            }
            None => {
                let laid = entry::layout(entry, ctx, terminals);
                let rows = laid.len();
                self.insert(entry.id, entry.rev, laid);
                rows
            }
        };
        self.set_height(index, Self::height_of(index, rows));
    }

    /// Measure every entry again (first draw, width change, lost track).
    fn relayout_all(&mut self, entries: &[Entry], ctx: Ctx, terminals: Terminals<'_>) {
        let anchor = self.top.map(|top| self.heights.find(top));
        self.cache.clear();
        self.cached_rows = 0;
        let mut heights = Heights::default();
        for (i, entry) in entries.iter().enumerate() {
            self.stats.measured += 1;
            heights.push(Self::height_of(i, entry::measure(entry, ctx, terminals)));
        }
        self.heights = heights;
        if let Some((index, offset)) = anchor {
            let start = self.heights.prefix(index);
            let height = self.heights.get(index);
            self.top = Some(start + offset.min(height.saturating_sub(1)));
        }
    }

    /// Bring heights and cache up to date with the transcript.
    fn sync(&mut self, transcript: &Transcript, ctx: Ctx, terminals: Terminals<'_>) {
        let entries = transcript.entries();
        let generation = transcript.generation();
        let changed = match self.ctx {
            Some(old) if old.width == ctx.width && old.theme == ctx.theme => {
                if entries.len() < self.synced || generation < self.generation {
                    None
                } else {
                    transcript.changed_since(self.generation)
                }
            }
            _ => None,
        };
        let Some(mut changed) = changed else {
            self.relayout_all(entries, ctx, terminals);
            self.ctx = Some(ctx);
            self.generation = generation;
            self.synced = entries.len();
            return;
        };
        let toggled = self.ctx.is_some_and(|old| old.expanded != ctx.expanded);
        self.ctx = Some(ctx);
        let fresh = entries.len() - self.synced;
        for (i, entry) in entries.iter().enumerate().skip(self.synced) {
            if fresh <= EAGER_NEW_ENTRIES {
                self.heights.push(0);
                self.refresh(i, entry, ctx, terminals);
            } else {
                self.stats.measured += 1;
                self.heights
                    .push(Self::height_of(i, entry::measure(entry, ctx, terminals)));
            }
        }
        changed.retain(|&i| i < self.synced);
        changed.sort_unstable();
        changed.dedup();
        for &i in &changed {
            let entry = &entries[i];
            if self.cache.get(&entry.id).is_none_or(|c| c.rev != entry.rev) {
                self.refresh(i, entry, ctx, terminals);
            }
        }
        if toggled {
            for (i, entry) in entries.iter().enumerate().take(self.synced) {
                if !matches!(entry.kind, EntryKind::Thought(_)) || changed.binary_search(&i).is_ok()
                {
                    continue;
                }
                if self.cache.contains_key(&entry.id) {
                    self.refresh(i, entry, ctx, terminals);
                } else {
                    self.stats.measured += 1;
                    self.set_height(i, Self::height_of(i, entry::measure(entry, ctx, terminals)));
                }
            }
        }
        self.generation = generation;
        self.synced = entries.len();
    }

    /// Make sure entry `index` is laid out and current; returns whether its
    /// height changed.
    fn ensure(&mut self, index: usize, entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> bool {
        match self.cache.get_mut(&entry.id) {
            Some(cached) if cached.rev == entry.rev => {
                cached.used = self.frame;
                false
            }
            _ => {
                let before = self.heights.get(index);
                self.refresh(index, entry, ctx, terminals);
                self.heights.get(index) != before
            }
        }
    }

    /// Drop the least recently used entries once the cache holds too many rows.
    fn evict(&mut self) {
        let budget = MIN_CACHED_ROWS.max(CACHED_VIEWPORTS * self.viewport);
        if self.cached_rows <= budget {
            return;
        }
        let mut by_age: Vec<(u64, u64, usize)> = self
            .cache
            .iter()
            .filter(|(_, c)| c.used != self.frame)
            .map(|(&id, c)| (c.used, id, c.laid.len()))
            .collect();
        by_age.sort_unstable();
        let target = budget * 3 / 4;
        for (_, id, rows) in by_age {
            if self.cached_rows <= target {
                break;
            }
            self.cache.remove(&id);
            self.cached_rows -= rows;
        }
    }

    /// The first visible row, clamped; resumes following when at the bottom.
    fn top_row(&mut self) -> usize {
        let max_top = self.total.saturating_sub(self.viewport);
        match self.top {
            Some(top) if top < max_top => top,
            _ => {
                self.top = None;
                max_top
            }
        }
    }

    pub(crate) fn render(
        &mut self,
        transcript: &Transcript,
        expanded: bool,
        terminals: Terminals<'_>,
        theme: Theme,
        area: Rect,
        buf: &mut Buffer,
    ) {
        self.frame += 1;
        let ctx = Ctx {
            width: usize::from(area.width).max(1),
            expanded,
            theme,
        };
        self.sync(transcript, ctx, terminals);
        self.viewport = usize::from(area.height);
        let entries = transcript.entries();

        // The selected search match: where it is, and a jump to it.
        let needle = self
            .search
            .as_ref()
            .map(|f| f.needle.clone())
            .unwrap_or_default();
        let mut current_at = None;
        if let Some(found) = self.search.clone()
            && let Some(m) = found.current
            && !needle.is_empty()
            && let Some(entry) = entries.get(m.entry)
        {
            let (row, start) = self.locate(m, entry, &needle, ctx, terminals);
            current_at = start.map(|start| (m.entry, row, start));
            if found.jumps != self.jumped {
                self.jumped = found.jumps;
                let gap = usize::from(m.entry > 0);
                let target = self.heights.prefix(m.entry) + gap + row;
                self.total = self.heights.total();
                let max_top = self.total.saturating_sub(self.viewport);
                let top = target.saturating_sub(self.viewport / 3);
                self.top = (top < max_top).then_some(top);
            }
        }

        // Entries on screen may still be missing from the cache (scrolled to,
        // or evicted); laying them out can only fix heights that were
        // already measured, so two passes settle it.
        let mut top = 0;
        for _ in 0..2 {
            self.total = self.heights.total();
            top = self.top_row();
            let (mut index, _) = self.heights.find(top);
            let end = top + self.viewport;
            let mut changed = false;
            while index < entries.len() && self.heights.prefix(index) < end {
                changed |= self.ensure(index, &entries[index], ctx, terminals);
                index += 1;
            }
            if !changed {
                break;
            }
        }

        self.moved = self
            .drawn_at
            .filter(|&(was, _)| was == area)
            .and_then(|(_, was)| i32::try_from(top as i64 - was as i64).ok());
        self.drawn_at = Some((area, top));
        let (mut index, mut offset) = self.heights.find(top);
        let following = self.top.is_none();
        let mut y = 0;
        while y < self.viewport && index < entries.len() {
            let height = self.heights.get(index);
            let gap = usize::from(index > 0);
            if let Some(cached) = self.cache.get_mut(&entries[index].id) {
                cached.used = self.frame;
                // A long streaming answer keeps only its newest rows while
                // the view follows; scrolled up into the older ones, it lays
                // them out again (same rows, so the heights hold).
                if following {
                    cached.laid.keep_all(false);
                } else if cached.laid.dropped() > offset.saturating_sub(gap) {
                    cached.laid.keep_all(true);
                    entry::relayout(&mut cached.laid, &entries[index], ctx, terminals);
                }
                while offset < height && y < self.viewport {
                    if offset >= gap
                        && let Some(line) = cached.laid.line(offset - gap)
                    {
                        write_line(buf, area, y, line);
                        if !needle.is_empty()
                            && let Ok(row) = u16::try_from(y)
                        {
                            let current = current_at
                                .filter(|&(e, r, _)| e == index && r == offset - gap)
                                .map(|(_, _, start)| start);
                            highlight_row(buf, area, row, line, &needle, current, theme);
                        }
                    }
                    offset += 1;
                    y += 1;
                }
            } else {
                y += height.saturating_sub(offset);
            }
            index += 1;
            offset = 0;
        }

        if !self.is_following() && self.viewport > 0 {
            let below = self.total.saturating_sub(top + self.viewport);
            let hint = format!(" ↓ {below} more lines · End to follow ");
            let width = str_width(&hint).min(usize::from(area.width));
            let x = area.right().saturating_sub(width as u16);
            buf.set_stringn(x, area.bottom() - 1, &hint, width, theme.follow_hint());
        }
        self.evict();
    }

    /// The layout cache's size in rows (for tests).
    #[cfg(test)]
    pub(crate) fn cached_rows(&self) -> usize {
        self.cached_rows
    }

    #[cfg(test)]
    pub(crate) fn top(&self) -> Option<usize> {
        self.top
    }

    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        self.total
    }
}

/// Write one row. ASCII spans go straight into the cells (the common case,
/// and much cheaper than grapheme segmentation); the rest through
/// `set_stringn`.
fn write_line(buf: &mut Buffer, area: Rect, y: usize, line: &Line<'_>) {
    let Ok(y) = u16::try_from(y) else {
        return;
    };
    let y = area.y + y;
    let right = area.right();
    let mut x = area.x;
    for span in &line.spans {
        if x >= right {
            break;
        }
        let style = line.style.patch(span.style);
        let text: &str = &span.content;
        if text.is_ascii() {
            for c in text.chars() {
                if x >= right {
                    break;
                }
                if c.is_ascii_control() {
                    continue;
                }
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.set_char(c).set_style(style);
                }
                x += 1;
            }
        } else {
            let (end, _) = buf.set_stringn(x, y, text, usize::from(right - x), style);
            x = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_prefix_find_and_update() {
        let mut h = Heights::default();
        let values = [3, 0, 2, 5, 1, 4, 0, 7];
        for v in values {
            h.push(v);
        }
        for i in 0..=values.len() {
            assert_eq!(h.prefix(i), values[..i].iter().sum::<usize>());
        }
        assert_eq!(h.find(0), (0, 0));
        assert_eq!(h.find(2), (0, 2));
        assert_eq!(h.find(3), (2, 0), "empty entries are skipped");
        assert_eq!(h.find(10), (4, 0));
        assert_eq!(h.find(21), (7, 6));
        assert_eq!(h.find(22), (8, 0), "past the end");
        h.set(1, 10);
        assert_eq!(h.total(), 32);
        assert_eq!(h.find(3), (1, 0));
        assert_eq!(h.find(13), (2, 0));
    }

    #[test]
    fn fenwick_matches_naive_sums_for_many_sizes() {
        let mut h = Heights::default();
        let mut naive = Vec::new();
        for i in 0..300usize {
            let v = (i * 7 + 3) % 5;
            h.push(v);
            naive.push(v);
            if i % 17 == 0 {
                let j = i / 2;
                naive[j] = 9;
                h.set(j, 9);
            }
            let total: usize = naive.iter().sum();
            assert_eq!(h.total(), total);
            for row in (0..total).step_by(7) {
                let (idx, off) = h.find(row);
                let start: usize = naive[..idx].iter().sum();
                assert!(
                    row >= start && row - start == off && off < naive[idx],
                    "row {row}"
                );
            }
        }
    }
}

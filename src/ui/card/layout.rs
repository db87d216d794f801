//! Fitting the cards in their area and drawing them: how many rows the
//! card wants and needs, which other cards show, the box, scrolling.

use super::*;

/// Rows the whole card area would like.
pub(crate) fn wanted(state: &ChatState, card: &Card, detail: &[Line<'static>]) -> usize {
    let others = state.gate.approvals.len().saturating_sub(1);
    others + box_wanted(card, detail)
}

/// The box with everything in it: borders, header, a blank row, the
/// request part and another blank row when there is one, choices, keys.
pub(super) fn box_wanted(card: &Card, detail: &[Line<'static>]) -> usize {
    let detail = if detail.is_empty() {
        0
    } else {
        detail.len() + 1
    };
    2 + card.top.len() + 1 + detail + card.bottom.len() + card.hints.len()
}

/// Rows the box needs for its choices and keys to stay in sight, with
/// warden's first row and what the card is about (its command, its
/// diff's first lines: [`ABOUT_MIN`] rows, one at least) above them.
pub(crate) fn box_least(card: &Card, detail: &[Line<'static>]) -> usize {
    2 + 1 + about_rows(card, detail).max(1) + card.bottom.len() + card.short_hints.len()
}

/// The detail row of a diff's first changed line (`-` or `+`), on a tiny
/// card about its diff: one row of the diff shows what changes, where its
/// location and headers do not.
pub(super) fn first_change(card: &Card, detail: &[Line<'static>], theme: Theme) -> Option<usize> {
    if card.about.is_some() || card.about_min > ABOUT_MIN.1 {
        return None;
    }
    detail.iter().position(|line| {
        line.spans.get(1).is_some_and(|sign| {
            (sign.content == "-" && sign.style == theme.diff_del())
                || (sign.content == "+" && sign.style == theme.diff_add())
        })
    })
}

/// Rows of what the card is about that must stay in sight.
pub(super) fn about_rows(card: &Card, detail: &[Line<'static>]) -> usize {
    let len = match &card.about {
        Some(rows) => rows.len(),
        None => detail.len(),
    };
    len.min(card.about_min)
}

/// Which one-liners to show within `budget` rows: how many before and
/// after the selected card (nearest first), and whether each side says how
/// many it leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Others {
    before: usize,
    after: usize,
    more_before: bool,
    more_after: bool,
}

fn pick_others(selected: usize, n: usize, budget: usize) -> Others {
    let (before, after) = (selected, n - selected - 1);
    let cost = |b: usize, a: usize| b + a + usize::from(b < before) + usize::from(a < after);
    if cost(0, 0) > budget {
        let more_before = before > 0 && budget > 0;
        return Others {
            before: 0,
            after: 0,
            more_before,
            more_after: after > 0 && budget > usize::from(more_before),
        };
    }
    let (mut b, mut a) = (0, 0);
    loop {
        let mut grew = false;
        if b < before && cost(b + 1, a) <= budget {
            b += 1;
            grew = true;
        }
        if a < after && cost(b, a + 1) <= budget {
            a += 1;
            grew = true;
        }
        if !grew {
            return Others {
                before: b,
                after: a,
                more_before: b < before,
                more_after: a < after,
            };
        }
    }
}

/// Where a body row comes from.
#[derive(Clone, Copy)]
enum Src {
    Top(usize),
    Detail(usize),
    Bottom(usize),
    Hint(usize),
    ShortHint(usize),
    Blank,
}

/// Draw the card area: one-liners, the selected card, one-liners.
pub(crate) fn render(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    card: &Card,
    detail: &[Line<'static>],
    theme: Theme,
) -> Drawn {
    let mut drawn = Drawn::default();
    let n = state.gate.approvals.len();
    if n == 0 || area.is_empty() {
        return drawn;
    }
    let sel = selected(state);
    let height = usize::from(area.height);
    let width = usize::from(area.width);
    let others = n - 1;
    let reserve = if height >= MIN_BOX + others.min(MIN_OTHERS) {
        others.min(MIN_OTHERS)
    } else {
        0
    };
    let box_h = box_wanted(card, detail).min(height - reserve);
    let others = pick_others(sel, n, height - box_h);

    let mut above = Vec::new();
    if others.more_before {
        above.push(hidden_line(sel - others.before, theme));
    }
    for i in sel - others.before..sel {
        above.push(one_liner(state, i, width, theme));
    }
    let mut below = Vec::new();
    for i in sel + 1..=sel + others.after {
        below.push(one_liner(state, i, width, theme));
    }
    if others.more_after {
        below.push(hidden_line(n - sel - 1 - others.after, theme));
    }
    let mut y = area.y;
    for line in &above {
        buf.set_line(area.x, y, line, area.width);
        y += 1;
    }
    // box_h <= area.height, a u16.
    let box_area = Rect::new(area.x, y, area.width, box_h as u16);
    y += box_area.height;
    for line in &below {
        buf.set_line(area.x, y, line, area.width);
        y += 1;
    }
    render_box(buf, box_area, state, card, detail, theme, &mut drawn);
    drawn
}

/// The selected card's box; the request part scrolls between a pinned
/// header and pinned choices while there is room for both.
pub(super) fn render_box(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    card: &Card,
    detail: &[Line<'static>],
    theme: Theme,
    drawn: &mut Drawn,
) {
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.card_border(state.view.focus.on_cards()))
        .padding(Padding::horizontal(1));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let h = usize::from(inner.height);
    let scroll = usize::from(state.view.cursor.scroll);
    let tops = (0..card.top.len()).map(Src::Top);
    let details = (0..detail.len()).map(Src::Detail);
    let bottoms = (0..card.bottom.len()).map(Src::Bottom);

    // The rows shown, and the scrolled window: (first row on screen, rows
    // on screen, rows above, rows below).
    let mut rows: Vec<Src> = Vec::with_capacity(h);
    let mut window = None;
    let full_hints = (0..card.hints.len()).map(Src::Hint);
    let short_hints = (0..card.short_hints.len()).map(Src::ShortHint);
    let content = card.top.len() + detail.len() + card.bottom.len();
    // Everything, with the long keys when they fit, and the rows left over
    // as blank rows: before the choices, then after the header.
    let full = content + card.hints.len() <= h;
    let hints_len = if full {
        card.hints.len()
    } else {
        card.short_hints.len()
    };
    if content + hints_len <= h {
        let spare = h - content - hints_len;
        let before_choices = !detail.is_empty() && spare >= 1;
        let after_header = spare > usize::from(before_choices);
        rows.extend(tops);
        if after_header {
            rows.push(Src::Blank);
        }
        rows.extend(details);
        if before_choices {
            rows.push(Src::Blank);
        }
        rows.extend(bottoms);
        if full {
            rows.extend(full_hints);
        } else {
            rows.extend(short_hints);
        }
    } else {
        // Short of room: no blank rows, the short keys; the header and the
        // choices stay while they leave room for the request part.
        let hints = short_hints;
        let (top, bottom) = (card.top.len(), card.bottom.len() + card.short_hints.len());
        let mut scrolled = |rows: &mut Vec<Src>, list: Vec<Src>, view: usize| {
            let view = view.min(list.len());
            let s = scroll.min(list.len() - view);
            window = Some((rows.len(), view, s, list.len() - s - view));
            rows.extend(&list[s..s + view]);
        };
        // The first row (warden's: what kind of call, why it asks) never
        // scrolls away, nor do the first rows of what the card is about.
        let about = about_rows(card, detail);
        let change = first_change(card, detail, theme);
        let details_fit =
            card.about.is_some() || h.saturating_sub(top + bottom) >= about + change.unwrap_or(0);
        if h > top + bottom && details_fit {
            rows.extend(tops);
            scrolled(&mut rows, details.collect(), h - top - bottom);
            rows.extend(bottoms.chain(hints));
        } else if h > bottom + 1 {
            rows.push(Src::Top(0));
            let view = h - bottom - 1;
            let mut rest: Vec<Src> = tops.skip(1).chain(details).collect();
            make_room_for_about(&mut rest, card, change, about, view);
            scrolled(&mut rows, rest, view);
            rows.extend(bottoms.chain(hints));
        } else {
            // Hardly any room: the choices and the keys stay in sight, and
            // whatever rows are left above them scroll through the rest.
            // warden's first row (what kind of call, why it asks) first,
            // when there are two rows: no agent text passes for it.
            let keep = if h >= 2 { (h - 1).min(bottom) } else { h };
            if h > keep {
                rows.push(Src::Top(0));
            }
            if h > keep + 1 {
                let rest = tops.skip(1).chain(details).collect();
                scrolled(&mut rows, rest, h - keep - 1);
            }
            let mut pinned: Vec<Src> = bottoms.chain(hints).collect();
            if pinned.len() > keep {
                // The last row is the keys: it stays, the last choices go.
                let keys = pinned.pop();
                pinned.truncate(keep.saturating_sub(1));
                pinned.extend(keys);
            }
            rows.extend(pinned);
        }
    }

    for (y, src) in (inner.y..inner.bottom()).zip(rows.iter().copied()) {
        let line = match src {
            Src::Top(i) => card.top.get(i),
            Src::Detail(i) => detail.get(i),
            Src::Bottom(i) => card.bottom.get(i),
            Src::Hint(i) => card.hints.get(i),
            Src::ShortHint(i) => card.short_hints.get(i),
            Src::Blank => None,
        };
        if let Some(line) = line {
            buf.set_line(inner.x, y, line, inner.width);
        }
        if let Src::Bottom(i) = src {
            if let Some(Some(choice)) = card.choice_at.get(i) {
                drawn
                    .choices
                    .push((Rect::new(inner.x, y, inner.width, 1), *choice));
            }
            if let Some((r, c)) = card.cursor
                && r == i
            {
                let x = inner.x.saturating_add(u16::try_from(c).unwrap_or(u16::MAX));
                drawn.cursor = Some(Position::new(x.min(inner.right() - 1), y));
            }
        }
    }

    if let Some((first, view, above, below)) = window {
        // Both fit in u16: they are rows of `inner`.
        let first_y = inner.y + first as u16;
        // Narrow, the count alone, so that most of the row it sits on
        // stays in sight.
        let wide = usize::from(inner.width) >= WIDE_HINTS;
        if below > 0 {
            let hint = if wide {
                format!(" ↓ {below} more · Shift-↓ ")
            } else {
                format!(" ↓{below} ")
            };
            scroll_hint(buf, inner, first_y + view as u16 - 1, &hint, theme);
        }
        if above > 0 && (view > 1 || below == 0) {
            let hint = if wide {
                format!(" ↑ {above} more · Shift-↑ ")
            } else {
                format!(" ↑{above} ")
            };
            scroll_hint(buf, inner, first_y, &hint, theme);
        }
    }
}

/// Move the rows that yield (the header's continuation, the agent's
/// title) from before what the card is about to after it, one at a time,
/// until its first `about` rows fit in the `view` rows at the top of
/// `rest`; warden's warnings never move.
/// `change`: the diff's first changed row, which is what a tiny card is
/// about; the rows before it (`at FILE`, the diff's header) yield too.
fn make_room_for_about(
    rest: &mut Vec<Src>,
    card: &Card,
    change: Option<usize>,
    about: usize,
    view: usize,
) {
    let is_about = |src: &Src| match (src, &card.about, change) {
        (Src::Top(i), Some(rows), _) => rows.contains(i),
        (Src::Detail(i), None, Some(c)) => *i == c,
        (Src::Detail(_), None, None) => true,
        _ => false,
    };
    let yields = |src: &Src| match src {
        Src::Top(i) => card.yields.contains(i),
        Src::Detail(i) => change.is_some_and(|c| *i < c),
        _ => false,
    };
    loop {
        let Some(at) = rest.iter().position(is_about) else {
            return;
        };
        if at + about <= view {
            return;
        }
        let Some(i) = rest[..at].iter().rposition(yields) else {
            return;
        };
        let row = rest.remove(i);
        let end = rest
            .iter()
            .rposition(is_about)
            .map_or(rest.len(), |last| last + 1);
        rest.insert(end, row);
    }
}

/// A scroll hint at the right end of row `y`.
pub(super) fn scroll_hint(buf: &mut Buffer, inner: Rect, y: u16, hint: &str, theme: Theme) {
    let w = str_width(hint).min(usize::from(inner.width));
    // w <= inner.width, a u16.
    let x = inner.right() - w as u16;
    buf.set_stringn(x, y, hint, w, theme.follow_hint());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_nearest_first_with_a_summary_row() {
        let got = |sel, n, budget| {
            let o = pick_others(sel, n, budget);
            (o.before, o.after, o.more_before, o.more_after)
        };
        assert_eq!(got(1, 3, 5), (1, 1, false, false));
        assert_eq!(got(0, 10, 3), (0, 2, false, true));
        assert_eq!(got(5, 11, 4), (1, 1, true, true));
        assert_eq!(got(5, 11, 1), (0, 0, true, false));
        assert_eq!(got(5, 11, 0), (0, 0, false, false));
        assert_eq!(got(0, 1, 0), (0, 0, false, false));
    }
}

//! The rows a card is made of: the command it runs, a text field, a
//! choice, the one line of a card not selected.

use super::*;

/// The command a card runs, every line of it, `runs ` before the first:
/// a run of blank lines is one row that says how many (no blank rows an
/// agent can push the rest below the fold with), and past `max` rows the
/// last one says how many lines are left, in warden's colour. Returns
/// whether it cut.
pub(super) fn runs_lines(
    out: &mut Vec<Line<'static>>,
    command: &str,
    width: usize,
    max: usize,
    theme: Theme,
) -> bool {
    let lines: Vec<&str> = command.lines().collect();
    // Each row, and how many of the command's lines are whole after it.
    let mut rows: Vec<(Line<'static>, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let lead = if rows.is_empty() {
            Span::styled("runs ", theme.card_label())
        } else {
            spaces(INDENT)
        };
        let blank = lines[i..]
            .iter()
            .take_while(|l| l.trim().is_empty())
            .count();
        if blank > 0 {
            let what = if blank == 1 { "line" } else { "lines" };
            let row = Line::from(vec![
                lead,
                Span::styled(format!("⋮ {blank} blank {what}"), theme.card_label()),
            ]);
            i += blank;
            rows.push((row, i));
            continue;
        }
        let mut wrapped = Vec::new();
        let piece = [Span::styled(lines[i].to_string(), theme.tool_title())];
        wrap_into(
            &mut wrapped,
            &piece,
            &[lead],
            &[spaces(INDENT)],
            width,
            Mode::Char,
        );
        i += 1;
        let n = wrapped.len();
        for (k, row) in wrapped.into_iter().enumerate() {
            rows.push((row, if k + 1 == n { i } else { i - 1 }));
        }
    }
    if rows.len() <= max {
        out.extend(rows.into_iter().map(|(row, _)| row));
        return false;
    }
    let keep = max.max(1);
    let whole = if keep >= 2 { rows[keep - 2].1 } else { 0 };
    let left = lines.len() - whole;
    let what = if left == 1 { "line" } else { "lines" };
    // Narrow, the count alone: what is left is said before any of it.
    let expand = if width >= WIDE_HINTS {
        " · e expand"
    } else {
        ""
    };
    let note = format!(" {left} more {what}{expand}");
    // The note ends short of the row's end, where a scroll marker may sit.
    let marker = if width >= WIDE_HINTS { 21 } else { 5 };
    let room = width.saturating_sub(str_width(&note) + 2 + marker);
    let mut kept: Vec<Line<'static>> = rows.into_iter().take(keep).map(|(row, _)| row).collect();
    if let Some(last) = kept.pop() {
        // A row cut short ends in `…` already.
        let lead = if last.width() > room { "" } else { " …" };
        let mut cut = fit(&last.spans, room);
        cut.spans
            .push(Span::styled(format!("{lead}{note}"), theme.card_label()));
        kept.push(cut);
    }
    out.extend(kept);
    true
}

/// `e expand` stays in the keys only while there is more to see: the raw
/// input or the title is cut (its last row says so) or already expanded.
pub(crate) fn fit_expand_hint(
    card: &mut Card,
    detail: &[Line<'static>],
    state: &ChatState,
    width: u16,
    theme: Theme,
) {
    let cut = detail
        .iter()
        .chain(&card.top)
        .any(|l| l.spans.iter().any(|s| s.content.ends_with("· e expand")));
    if cut || state.view.cursor.expanded || card.folded || card.runs_cut {
        return;
    }
    let width = body_width(width);
    let (full, short) = hint_lines(state);
    for (rows, text) in [(&mut card.hints, full), (&mut card.short_hints, short)] {
        rows.clear();
        let text = text.replace(" · e expand", "");
        wrap_text_into(rows, &text, theme.dim(), &[], &[], width, Mode::Word);
    }
}

/// A text field under the choices: `prompt`, then the text wrapped beside
/// it (or under it, when the prompt leaves the text too little room), the
/// last [`FIELD_ROWS`] rows up to the cursor. Returns the cursor's row in
/// `out` and its column.
pub(super) fn field_rows(
    out: &mut Vec<Line<'static>>,
    prompt: &str,
    field: &Composer,
    width: usize,
    theme: Theme,
) -> (usize, usize) {
    let prompt_w = str_width(prompt);
    let beside = prompt_w + MIN_FIELD <= width;
    let indent = if beside { prompt_w } else { INDENT };
    if !beside {
        let prompt = truncate_end(prompt.trim_end(), width).into_owned();
        out.push(Line::from(Span::styled(prompt, theme.prompt())));
    }
    let wrapped = composer::wrap(field, width.saturating_sub(indent).max(1));
    let (row, col) = wrapped.cursor();
    let skip = (row + 1).saturating_sub(FIELD_ROWS);
    let start = out.len();
    for (i, text) in wrapped
        .rows()
        .iter()
        .skip(skip)
        .take(FIELD_ROWS)
        .enumerate()
    {
        let lead = if i == 0 && beside {
            Span::styled(prompt.to_string(), theme.prompt())
        } else {
            spaces(indent)
        };
        out.push(Line::from(vec![lead, Span::raw(text.clone())]));
    }
    (start + row - skip, indent + col)
}

/// The rows of one choice: its key, warden's words for it, then the
/// agent's (dim) and a flag when the two disagree.
pub(super) fn choice_rows(
    out: &mut Vec<Line<'static>>,
    state: &ChatState,
    row: &ChoiceRow,
    width: usize,
    theme: Theme,
) {
    let style = match row.tone {
        Tone::Allow => theme.allow(),
        Tone::Reject => theme.reject(),
        Tone::Plain => theme.plain(),
    };
    let mut label = row.label.clone();
    if row.choice == Choice::ApproveAll {
        label.push_str(&format!(" ({})", state.gate.approvals.len()));
    }
    let mut pieces = vec![Span::styled(label, style)];
    if !row.detail.is_empty() {
        pieces.push(Span::styled(row.detail.clone(), theme.dim()));
    }
    if let Some(flag) = &row.flag {
        pieces.push(Span::styled(flag.clone(), theme.reject()));
    }
    let first = [Span::styled(format!("{}  ", row.key), theme.choice_key())];
    let rest = [spaces(3)];
    wrap_into(out, &pieces, &first, &rest, width, Mode::Word);
}

/// The one line of a card that is not selected: "▸ 2 of 3  title  kind".
pub(super) fn one_liner(
    state: &ChatState,
    index: usize,
    width: usize,
    theme: Theme,
) -> Line<'static> {
    let Some(approval) = state.gate.approvals.get(index) else {
        return blank();
    };
    let spans = [
        Span::styled(
            format!(" ▸ {} of {}  ", index + 1, state.gate.approvals.len()),
            theme.dim(),
        ),
        Span::styled(approval.title(), theme.plain()),
        Span::styled(
            format!("  {}", approval.view.kind.as_str()),
            theme.tool_kind(),
        ),
    ];
    fit(&spans, width)
}

/// A row of spans cut to `width` columns, with `…` where cut.
pub(super) fn fit(spans: &[Span<'static>], width: usize) -> Line<'static> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = str_width(&span.content);
        if used + w <= width {
            out.push(span.clone());
            used += w;
            continue;
        }
        let cut = truncate_end(&span.content, width - used).into_owned();
        out.push(Span::styled(cut, span.style));
        break;
    }
    Line::from(out)
}

/// A line saying how many cards are left out: "⋯ 4 more pending".
pub(super) fn hidden_line(n: usize, theme: Theme) -> Line<'static> {
    Line::from(Span::styled(format!(" ⋯ {n} more pending"), theme.dim()))
}

//! Wrapping styled text to a width, measured with `unicode-width`: word wrap
//! on spaces with long words broken hard, or character wrap for code.
//!
//! Callers pass text that already went through `crate::sanitize`; a newline
//! inside a piece is treated as a space (split logical lines first).

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Spaces to borrow indentation from without allocating.
const SPACES: &str = "                                                                ";

/// `n` columns of spaces.
pub(crate) fn spaces(n: usize) -> Span<'static> {
    match SPACES.get(..n) {
        Some(s) => Span::raw(s),
        None => Span::raw(" ".repeat(n)),
    }
}

/// Columns a character takes (0 for combining marks).
pub(crate) fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Columns a string takes.
pub(crate) fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Columns a row of spans takes.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// `s` cut to `width` columns, ending with `…` when something was cut.
pub(crate) fn truncate_end(s: &str, width: usize) -> Cow<'_, str> {
    if str_width(s) <= width {
        return Cow::Borrowed(s);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_width(c);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    Cow::Owned(out)
}

/// `s` cut from the left to `width` columns, starting with `…` when cut.
pub(crate) fn truncate_start(s: &str, width: usize) -> Cow<'_, str> {
    if str_width(s) <= width {
        return Cow::Borrowed(s);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut used = 0;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        let w = char_width(c);
        if used + w > width - 1 {
            break;
        }
        used += w;
        start = i;
    }
    Cow::Owned(format!("…{}", &s[start..]))
}

/// How a logical line breaks into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Break at spaces; words wider than a row are broken anywhere.
    Word,
    /// Break anywhere, keep every space (code, diffs).
    Char,
}

/// The rows being built for one logical line.
struct Rows<'o, 'p> {
    out: &'o mut Vec<Line<'static>>,
    rest: &'p [Span<'static>],
    width: usize,
    spans: Vec<Span<'static>>,
    run: String,
    run_style: Style,
    used: usize,
    avail: usize,
}

impl<'o, 'p> Rows<'o, 'p> {
    fn new(
        out: &'o mut Vec<Line<'static>>,
        first: &'p [Span<'static>],
        rest: &'p [Span<'static>],
        width: usize,
    ) -> Self {
        Rows {
            out,
            rest,
            width,
            spans: first.to_vec(),
            run: String::new(),
            run_style: Style::new(),
            used: 0,
            avail: width.saturating_sub(spans_width(first)).max(1),
        }
    }

    fn push(&mut self, s: &str, w: usize, style: Style) {
        if style != self.run_style && !self.run.is_empty() {
            self.flush_run();
        }
        self.run_style = style;
        self.run.push_str(s);
        self.used += w;
    }

    fn flush_run(&mut self) {
        if !self.run.is_empty() {
            let text = std::mem::take(&mut self.run);
            self.spans.push(Span::styled(text, self.run_style));
        }
    }

    fn newline(&mut self) {
        self.flush_run();
        let row = std::mem::replace(&mut self.spans, self.rest.to_vec());
        self.out.push(Line::from(row));
        self.used = 0;
        self.avail = self.width.saturating_sub(spans_width(self.rest)).max(1);
    }

    /// Characters one by one, breaking rows where they do not fit.
    fn push_broken(&mut self, s: &str, style: Style) {
        for (i, c) in s.char_indices() {
            let w = char_width(c);
            if self.used + w > self.avail && self.used > 0 {
                self.newline();
            }
            let end = i + c.len_utf8();
            self.push(&s[i..end], w, style);
        }
    }

    /// The common case of word wrap: the whole line fits on the first row.
    /// Then it is that row, trailing spaces dropped, newlines shown as
    /// spaces, exactly as the word-by-word path would lay it out. Returns
    /// false, having written nothing, when the line does not fit.
    fn fits_whole(&mut self, pieces: &[Span<'_>]) -> bool {
        let Some(end) = one_row(pieces, self.avail) else {
            return false;
        };
        let kept = end.map_or(0, |(last, _)| last + 1);
        self.put_row(pieces[..kept].iter().enumerate().map(|(pi, piece)| {
            let s: &str = &piece.content;
            let s = match end {
                Some((last, cut)) if pi == last => &s[..cut],
                _ => s,
            };
            (Cow::Owned(s.to_owned()), piece.style)
        }));
        true
    }

    /// [`Rows::fits_whole`] taking the pieces' text instead of copying it
    /// (the pieces are left empty either way).
    fn fits_whole_owned(&mut self, pieces: &mut Vec<Span<'static>>) -> bool {
        let Some(end) = one_row(pieces, self.avail) else {
            return false;
        };
        let kept = end.map_or(0, |(last, _)| last + 1);
        self.put_row(pieces.drain(..kept).enumerate().map(|(pi, mut piece)| {
            if let Some((last, cut)) = end
                && pi == last
            {
                piece.content.to_mut().truncate(cut);
            }
            (piece.content, piece.style)
        }));
        pieces.clear();
        true
    }

    /// Finish the row with `texts` after its prefix: empty ones skipped,
    /// newlines shown as spaces, neighbours of one style in one span (as
    /// [`Rows::push`] joins them).
    fn put_row(&mut self, texts: impl Iterator<Item = (Cow<'static, str>, Style)>) {
        let prefix = self.spans.len();
        for (mut text, style) in texts {
            if text.is_empty() {
                continue;
            }
            if text.contains('\n') {
                text = text.replace('\n', " ").into();
            }
            let joined = self.spans.len() > prefix;
            match self.spans.last_mut() {
                Some(prev) if joined && prev.style == style => {
                    prev.content.to_mut().push_str(&text);
                }
                _ => self.spans.push(Span::styled(text, style)),
            }
        }
        self.finish_in_place();
    }

    /// [`Rows::finish`] for a borrowed `Rows`.
    fn finish_in_place(&mut self) {
        self.flush_run();
        let spans = std::mem::take(&mut self.spans);
        self.out.push(Line::from(spans));
    }

    fn finish(mut self) {
        self.flush_run();
        self.out.push(Line::from(self.spans));
    }
}

/// Where the text of a line that fits one row ends, its trailing spaces
/// dropped: `(piece, byte)`, the byte after its last character that is not
/// a space; `None` when it is all spaces.
type TextEnd = Option<(usize, usize)>;

/// Whether a line fits on one row of `avail` columns (`None` when it does
/// not), and where its text ends. A newline counts as a space, as word wrap
/// treats it.
fn one_row(pieces: &[Span<'_>], avail: usize) -> Option<TextEnd> {
    let mut width = 0;
    let mut end: TextEnd = None;
    for (pi, piece) in pieces.iter().enumerate() {
        let s: &str = &piece.content;
        let bytes = s.as_bytes();
        // Printable ASCII and newlines, the bulk of it: a column per byte.
        if crate::sanitize::plain_ascii(bytes) {
            width += bytes.len();
            if let Some(i) = bytes.iter().rposition(|&b| b != b' ' && b != b'\n') {
                end = Some((pi, i + 1));
            }
        } else {
            for (i, c) in s.char_indices() {
                width += if c == ' ' || c == '\n' {
                    1
                } else {
                    end = Some((pi, i + c.len_utf8()));
                    char_width(c)
                };
            }
        }
        if width > avail {
            return None;
        }
    }
    Some(end)
}

/// A run of characters of one class inside one piece: (piece, start, end).
type Seg = (usize, usize, usize);

/// Wrap one logical line made of `pieces` into rows of `width` columns; the
/// first row starts with `first`, the others with `rest`. Always adds at
/// least one row.
pub(crate) fn wrap_into(
    out: &mut Vec<Line<'static>>,
    pieces: &[Span<'_>],
    first: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
    mode: Mode,
) {
    wrap_with(out, pieces, first, rest, width, mode, true);
}

/// [`wrap_into`] for pieces the caller gives up: a line that fits its row
/// keeps their text instead of copying it. `pieces` is left empty.
pub(crate) fn wrap_owned(
    out: &mut Vec<Line<'static>>,
    pieces: &mut Vec<Span<'static>>,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
) {
    let mut rows = Rows::new(out, first, rest, width);
    if rows.fits_whole_owned(pieces) {
        return;
    }
    drop(rows);
    wrap_with(out, pieces, first, rest, width, Mode::Word, false);
    pieces.clear();
}

/// [`wrap_into`]; `whole` tries the one-row shortcut first (tests compare
/// it against the word-by-word path).
fn wrap_with(
    out: &mut Vec<Line<'static>>,
    pieces: &[Span<'_>],
    first: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
    mode: Mode,
    whole: bool,
) {
    let mut rows = Rows::new(out, first, rest, width);
    if whole && mode == Mode::Word && rows.fits_whole(pieces) {
        return;
    }
    match mode {
        Mode::Char => {
            for piece in pieces {
                rows.push_broken(&piece.content, piece.style);
            }
        }
        Mode::Word => {
            let mut pending = Pending::default();
            for (pi, piece) in pieces.iter().enumerate() {
                let s: &str = &piece.content;
                let mut start = 0;
                let mut in_space = None;
                let mut seg_w = 0;
                for (i, c) in s.char_indices() {
                    let space = c == ' ' || c == '\n';
                    if in_space != Some(space) {
                        if let Some(was_space) = in_space {
                            pending.add(&mut rows, pieces, was_space, (pi, start, i), seg_w);
                        }
                        in_space = Some(space);
                        start = i;
                        seg_w = 0;
                    }
                    seg_w += if space { 1 } else { char_width(c) };
                }
                if let Some(was_space) = in_space {
                    pending.add(&mut rows, pieces, was_space, (pi, start, s.len()), seg_w);
                }
            }
            pending.place(&mut rows, pieces);
        }
    }
    rows.finish();
}

/// The word being collected and the spaces before it.
#[derive(Default)]
struct Pending {
    word: Vec<Seg>,
    word_w: usize,
    gap: Vec<Seg>,
    gap_w: usize,
}

impl Pending {
    fn add(
        &mut self,
        rows: &mut Rows<'_, '_>,
        pieces: &[Span<'_>],
        space: bool,
        seg: Seg,
        w: usize,
    ) {
        if space {
            self.place(rows, pieces);
            self.gap.push(seg);
            self.gap_w += w;
        } else {
            self.word.push(seg);
            self.word_w += w;
        }
    }

    /// Put the word collected so far (and the spaces before it) on the rows.
    fn place(&mut self, rows: &mut Rows<'_, '_>, pieces: &[Span<'_>]) {
        if self.word.is_empty() {
            return;
        }
        let text = |&(pi, a, b): &Seg| -> (&str, Style) {
            let piece = &pieces[pi];
            (&piece.content[a..b], piece.style)
        };
        if rows.used + self.gap_w + self.word_w <= rows.avail {
            for seg in &self.gap {
                let (s, style) = text(seg);
                // Only spaces here; a newline inside a piece counts as a space.
                if s.contains('\n') {
                    rows.push(&s.replace('\n', " "), s.len(), style);
                } else {
                    rows.push(s, s.len(), style);
                }
            }
            for seg in &self.word {
                let (s, style) = text(seg);
                rows.push(s, str_width(s), style);
            }
        } else {
            if rows.used > 0 {
                rows.newline();
            }
            let fits = self.word_w <= rows.avail;
            for seg in &self.word {
                let (s, style) = text(seg);
                if fits {
                    rows.push(s, str_width(s), style);
                } else {
                    rows.push_broken(s, style);
                }
            }
        }
        self.word.clear();
        self.word_w = 0;
        self.gap.clear();
        self.gap_w = 0;
    }
}

/// Wrap `text`, one logical line per `\n`, all in `style`; the very first
/// row starts with `first`, every other row with `rest`.
pub(crate) fn wrap_text_into(
    out: &mut Vec<Line<'static>>,
    text: &str,
    style: Style,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
    mode: Mode,
) {
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let piece = [Span::styled(line, style)];
        wrap_into(
            out,
            &piece,
            if i == 0 { first } else { rest },
            rest,
            width,
            mode,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(
        pieces: &[Span<'_>],
        first: &[Span<'static>],
        rest: &[Span<'static>],
        width: usize,
        mode: Mode,
    ) -> Vec<String> {
        let mut out = Vec::new();
        wrap_into(&mut out, pieces, first, rest, width, mode);
        out.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn word_wrap_breaks_at_spaces_and_drops_them_at_breaks() {
        let got = rows(
            &[Span::raw("the quick brown fox jumps")],
            &[],
            &[],
            10,
            Mode::Word,
        );
        assert_eq!(got, ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn words_span_styled_pieces() {
        let pieces = [
            Span::raw("ab"),
            Span::styled("cd", Style::new().bold()),
            Span::raw(" ef"),
        ];
        let mut out = Vec::new();
        wrap_into(&mut out, &pieces, &[], &[], 4, Mode::Word);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["abcd", "ef"]);
        assert_eq!(out[0].spans.len(), 2, "styles kept apart: {:?}", out[0]);
    }

    #[test]
    fn long_words_break_hard_and_prefixes_apply() {
        let first = [Span::raw("> ")];
        let rest = [spaces(2)];
        let got = rows(&[Span::raw("a abcdefghij")], &first, &rest, 6, Mode::Word);
        assert_eq!(got, ["> a", "  abcd", "  efgh", "  ij"]);
    }

    #[test]
    fn leading_and_inner_spaces_are_kept() {
        let got = rows(&[Span::raw("  a   b")], &[], &[], 20, Mode::Word);
        assert_eq!(got, ["  a   b"]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let got = rows(&[Span::raw("日本語テキスト")], &[], &[], 5, Mode::Word);
        assert_eq!(got, ["日本", "語テ", "キス", "ト"]);
    }

    #[test]
    fn char_mode_breaks_anywhere_and_keeps_spaces() {
        let got = rows(&[Span::raw("let x = 1;")], &[], &[spaces(1)], 4, Mode::Char);
        assert_eq!(got, ["let ", " x =", "  1;"]);
    }

    #[test]
    fn empty_line_is_one_row() {
        assert_eq!(rows(&[], &[Span::raw("› ")], &[], 10, Mode::Word), ["› "]);
    }

    /// The one-row shortcut, copying or taking the pieces' text, lays a
    /// line out exactly as the word-by-word path does: the same rows,
    /// spans and styles.
    #[test]
    fn the_one_row_shortcut_matches_word_by_word() {
        use proptest::prelude::*;
        let piece = (
            proptest::sample::select(vec![
                "", " ", "  ", "\n", "ab", "a b ", "日本", "x\n y", "\t", "é",
            ]),
            0..3u8,
        );
        let case = (
            proptest::collection::vec(piece, 0..6),
            1..14usize,
            0..3usize,
        );
        proptest!(|((pieces, width, prefix) in case)| {
            let style = |n: u8| match n {
                0 => Style::new(),
                1 => Style::new().bold(),
                _ => Style::new().italic(),
            };
            let pieces: Vec<Span<'_>> =
                pieces.iter().map(|&(s, n)| Span::styled(s, style(n))).collect();
            let first = [spaces(prefix)];
            let rest = [spaces(prefix.min(1))];
            let mut fast = Vec::new();
            let mut slow = Vec::new();
            let mut owned = Vec::new();
            wrap_with(&mut fast, &pieces, &first, &rest, width, Mode::Word, true);
            wrap_with(&mut slow, &pieces, &first, &rest, width, Mode::Word, false);
            let mut given: Vec<Span<'static>> = pieces
                .iter()
                .map(|p| Span::styled(p.content.to_string(), p.style))
                .collect();
            wrap_owned(&mut owned, &mut given, &first, &rest, width);
            prop_assert_eq!(&fast, &slow);
            prop_assert_eq!(&owned, &slow);
            prop_assert!(given.is_empty());
        });
    }

    #[test]
    fn truncation_both_ways() {
        assert_eq!(truncate_end("abcdef", 4), "abc…");
        assert_eq!(truncate_end("abc", 4), "abc");
        assert_eq!(truncate_start("/home/me/src/warden", 8), "…/warden");
        assert_eq!(truncate_start("日本語", 4), "…語");
    }
}

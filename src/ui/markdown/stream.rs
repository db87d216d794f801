//! Streaming: the rows of an answer that grows chunk by chunk, the stable
//! part rendered once and kept.

use ratatui::text::Line;

use super::super::theme::Theme;
use super::render;
use crate::text::{ceil_char_boundary, floor_char_boundary};

/// How the text after a stable boundary is rendered and joined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resume {
    /// A new top-level block starts: a blank row separates it from what came before.
    Top,
    /// Inside a top-level code fence: render with the opening line put back,
    /// rows follow directly.
    InFence { opener: String },
    /// Inside a long top-level paragraph of plain lines: each source line is
    /// its own row, so the rest renders as a paragraph of its own, rows
    /// follow directly. (Exact unless emphasis or a code span runs across
    /// the split line; used only for paragraphs longer than `FORCE_SPLIT`.)
    Para,
}

/// Unsplit text beyond which a long paragraph is split between lines.
const FORCE_SPLIT: usize = 1024;

/// The text has a construct that makes splitting unsafe (link reference
/// definitions, raw HTML blocks, a code fence inside a container that ends
/// early): render it whole.
struct Unsplittable;

/// An open code fence while scanning.
struct Fence {
    ch: u8,
    len: usize,
    indent: usize,
    opener: String,
    code_lines: usize,
}

/// `(fence char, length)` when `t` (indentation removed) opens a code fence.
fn fence_open(t: &str) -> Option<(u8, usize)> {
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = t.bytes().take_while(|&b| b == ch).count();
    if len < 3 || (ch == b'`' && t[len..].contains('`')) {
        return None;
    }
    Some((ch, len))
}

fn is_fence_close(t: &str, fence: &Fence) -> bool {
    let t = t.trim_end();
    t.len() >= fence.len && t.bytes().all(|b| b == fence.ch)
}

/// Leading indentation in columns (a tab counts to the next multiple of 4)
/// and the rest of the line.
fn indentation(line: &str) -> (usize, &str) {
    let mut cols = 0;
    for (i, b) in line.bytes().enumerate() {
        match b {
            b' ' => cols += 1,
            b'\t' => cols += 4 - cols % 4,
            _ => return (cols, &line[i..]),
        }
    }
    (cols, "")
}

/// The last place at or after `from` where the text may be split, with how
/// to render what follows it.
fn last_boundary(
    text: &str,
    from: usize,
    resume: &Resume,
) -> Result<Option<(usize, Resume)>, Unsplittable> {
    let mut fence = match resume {
        Resume::Top | Resume::Para => None,
        Resume::InFence { opener } => fence_open(opener).map(|(ch, len)| Fence {
            ch,
            len,
            indent: 0,
            opener: opener.clone(),
            code_lines: 1,
        }),
    };
    let mut prev_blank = false;
    let mut best = None;
    let mut pos = from;
    // The previous line belongs to a top-level paragraph of plain lines.
    let mut run = *resume == Resume::Para;
    let mut at_start = fence.is_none();
    let force = text.len() - from > FORCE_SPLIT;
    while pos < text.len() {
        let rest = &text[pos..];
        let (line, complete, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], true, pos + i + 1),
            None => (rest, false, text.len()),
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        let (indent, t) = indentation(line);
        let blank = t.trim().is_empty();
        if let Some(open) = &mut fence {
            if indent <= open.indent + 3 && is_fence_close(t, open) {
                if indent < open.indent {
                    return Err(Unsplittable);
                }
                fence = None;
                prev_blank = false;
                run = false;
            } else {
                if open.indent > 0 && indent < open.indent && !blank {
                    return Err(Unsplittable);
                }
                if open.indent == 0 && complete && open.code_lines >= 1 {
                    best = Some((
                        pos,
                        Resume::InFence {
                            opener: open.opener.clone(),
                        },
                    ));
                }
                open.code_lines += 1;
            }
            pos = next;
            continue;
        }
        if !blank && indent <= 3 && (t.starts_with('<') || (t.starts_with('[') && t.contains("]:")))
        {
            return Err(Unsplittable);
        }
        let starts_list =
            t.starts_with(['-', '*', '+']) || t.starts_with(|c: char| c.is_ascii_digit());
        if prev_blank && indent == 0 && !blank && !starts_list {
            best = Some((pos, Resume::Top));
        }
        let plain = indent == 0
            && t.starts_with(|c: char| c.is_alphabetic() || matches!(c, '(' | '"' | '\''));
        if plain && run && force {
            best = Some((pos, Resume::Para));
        }
        run = plain && (run || prev_blank || at_start);
        at_start = false;
        if let Some((ch, len)) = fence_open(t) {
            run = false;
            fence = Some(Fence {
                ch,
                len,
                indent,
                opener: line.to_string(),
                code_lines: 0,
            });
        }
        prev_blank = blank;
        pos = next;
    }
    Ok(best)
}

fn render_from(text: &str, resume: &Resume, width: usize, theme: Theme) -> Vec<Line<'static>> {
    match resume {
        Resume::Top | Resume::Para => render(text, width, theme),
        Resume::InFence { opener } => render(&format!("{opener}\n{text}"), width, theme),
    }
}

/// Rendered head rows kept of a long streaming text while the view follows
/// its end: older rows are dropped (and counted) so that a flood of text
/// costs memory for its source, not for every rendered row of it. A view
/// that scrolls up to them asks for them again ([`MdStream::keep_all`]).
const HEAD_KEEP: usize = 4096;

/// How much of the stable source's start and end is kept to check that a
/// new text still extends it (the source itself lives in the transcript).
const SAMPLE: usize = 256;

/// The rendered rows of a markdown text that grows by appending.
#[derive(Debug, Clone)]
pub(crate) struct MdStream {
    width: usize,
    theme: Theme,
    /// Bytes of the source that are stable, rendered into `head`.
    stable: usize,
    /// The stable source's first and last [`SAMPLE`] bytes (at character
    /// boundaries): a text that does not start with them is a new text.
    stable_start: String,
    stable_end: String,
    /// How the text after the stable part renders.
    resume: Resume,
    /// Rows of `head` dropped from its front (see [`HEAD_KEEP`]).
    dropped: usize,
    /// Keep every row (a view shows the older ones).
    keep_all: bool,
    head: Vec<Line<'static>>,
    tail: Vec<Line<'static>>,
    /// A blank row between `head` and `tail`.
    gap: bool,
    /// False once the text was found unsafe to split.
    splittable: bool,
}

impl MdStream {
    pub(crate) fn new(width: usize, theme: Theme) -> Self {
        MdStream {
            width,
            theme,
            stable: 0,
            stable_start: String::new(),
            stable_end: String::new(),
            resume: Resume::Top,
            dropped: 0,
            keep_all: false,
            head: Vec::new(),
            tail: Vec::new(),
            gap: false,
            splittable: true,
        }
    }

    /// Whether `text` extends the stable part rendered so far.
    fn extends_stable(&self, text: &str) -> bool {
        self.stable <= text.len()
            && text.is_char_boundary(self.stable)
            && text.starts_with(self.stable_start.as_str())
            && text[..self.stable].ends_with(self.stable_end.as_str())
    }

    fn reset(&mut self) {
        self.stable = 0;
        self.stable_start.clear();
        self.stable_end.clear();
        self.head.clear();
        self.dropped = 0;
        self.resume = Resume::Top;
    }

    /// Where [`MdStream::update`] with `text` starts rendering: the end of
    /// the stable part when `text` extends it, else its start.
    pub(crate) fn renders_from(&self, text: &str) -> usize {
        if self.extends_stable(text) {
            self.stable
        } else {
            0
        }
    }

    /// Render `text`, reusing the stable part when `text` extends it.
    pub(crate) fn update(&mut self, text: &str) {
        if !self.extends_stable(text) {
            self.reset();
            self.splittable = true;
        }
        if self.splittable {
            match last_boundary(text, self.stable, &self.resume) {
                Ok(Some((at, resume))) if at > self.stable => {
                    let region = &text[self.stable..at];
                    let lines = render_from(region, &self.resume, self.width, self.theme);
                    if !lines.is_empty() {
                        if self.resume == Resume::Top && (!self.head.is_empty() || self.dropped > 0)
                        {
                            self.head.push(Line::default());
                        }
                        self.head.extend(lines);
                    }
                    self.stable = at;
                    if self.stable_start.len() < SAMPLE {
                        let end = floor_char_boundary(text, SAMPLE.min(at));
                        self.stable_start = text[..end].to_string();
                    }
                    let from = ceil_char_boundary(text, at.saturating_sub(SAMPLE));
                    self.stable_end = text[from..at].to_string();
                    self.resume = resume;
                    self.trim_head();
                }
                Ok(_) => {}
                Err(Unsplittable) => {
                    self.splittable = false;
                    self.reset();
                }
            }
        }
        let tail = &text[self.stable..];
        self.tail = render_from(tail, &self.resume, self.width, self.theme);
        self.gap = self.resume == Resume::Top
            && (!self.head.is_empty() || self.dropped > 0)
            && !self.tail.is_empty();
    }

    /// Drop the oldest head rows past [`HEAD_KEEP`] (in bulk, so that the
    /// cost stays linear), unless a view wants them.
    fn trim_head(&mut self) {
        if self.keep_all || self.head.len() <= HEAD_KEEP {
            return;
        }
        let drop = self.head.len() - HEAD_KEEP / 2;
        self.head.drain(..drop);
        self.head.shrink_to(HEAD_KEEP);
        self.dropped += drop;
    }

    /// Rows dropped from the front; [`MdStream::line`] gives `None` for them.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }

    /// Keep (`true`) or let go of (`false`) the older rows. Keeping them
    /// starts over: the next [`MdStream::update`] renders the whole text.
    pub(crate) fn keep_all(&mut self, keep: bool) {
        if keep && !self.keep_all && self.dropped > 0 {
            self.reset();
        }
        self.keep_all = keep;
    }

    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.dropped + self.head.len() + usize::from(self.gap) + self.tail.len()
    }

    /// Row `i`; `None` for the blank gap row, a dropped row, or past the end.
    pub(crate) fn line(&self, i: usize) -> Option<&Line<'static>> {
        let i = i.checked_sub(self.dropped)?;
        if let Some(line) = self.head.get(i) {
            return Some(line);
        }
        let i = i - self.head.len();
        match (self.gap, i) {
            (true, 0) => None,
            (true, i) => self.tail.get(i - 1),
            (false, i) => self.tail.get(i),
        }
    }

    /// Bytes of source rendered once and kept (for tests).
    #[cfg(test)]
    fn stable_len(&self) -> usize {
        self.stable
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{DOCS, md, theme};
    use super::*;

    fn stream_rows(stream: &MdStream) -> Vec<String> {
        (0..stream.len())
            .map(|i| stream.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect()
    }

    #[test]
    fn streaming_renders_exactly_like_the_whole_text() {
        for doc in DOCS {
            for width in [12, 40] {
                let whole = md(doc, width);
                let mut stream = MdStream::new(width, theme());
                let mut end = 0;
                while end < doc.len() {
                    end += 1;
                    while !doc.is_char_boundary(end) {
                        end += 1;
                    }
                    stream.update(&doc[..end]);
                    assert_eq!(
                        stream_rows(&stream),
                        md(&doc[..end], width),
                        "prefix {:?} at width {width}",
                        &doc[..end]
                    );
                }
                assert_eq!(stream_rows(&stream), whole);
            }
        }
    }

    #[test]
    fn a_long_stream_keeps_only_its_newest_rows_until_asked_for_all() {
        let mut doc = String::new();
        let mut stream = MdStream::new(40, theme());
        for i in 0..3 * HEAD_KEEP {
            doc.push_str(&format!("paragraph {i} with *some* words\n\n"));
            stream.update(&doc);
        }
        let whole = md(&doc, 40);
        assert_eq!(stream.len(), whole.len(), "the row count is the whole one");
        assert!(stream.dropped() > 0, "older rows were let go");
        assert!(
            stream.head.len() <= HEAD_KEEP,
            "at most HEAD_KEEP rows kept"
        );
        for (i, want) in whole.iter().enumerate().skip(stream.dropped()) {
            let row = stream.line(i).map(|l| l.to_string()).unwrap_or_default();
            assert_eq!(&row, want, "row {i}");
        }
        assert_eq!(stream.line(0), None, "a dropped row is not shown");
        // A view scrolled up asks for every row: all of them, as rendered whole.
        stream.keep_all(true);
        stream.update(&doc);
        assert_eq!(stream.dropped(), 0);
        assert_eq!(stream_rows(&stream), whole);
        // And while kept, streaming on drops nothing.
        doc.push_str("one more\n\n");
        stream.update(&doc);
        assert_eq!((stream.dropped(), stream_rows(&stream)), (0, md(&doc, 40)));
        // Following the end again lets them go at the next update.
        stream.keep_all(false);
        doc.push_str("and another\n\n");
        stream.update(&doc);
        assert!(stream.dropped() > 0);
        assert_eq!(stream.len(), md(&doc, 40).len());
    }

    #[test]
    fn a_changed_text_is_rendered_anew() {
        let mut stream = MdStream::new(40, theme());
        let long = "word ".repeat(200) + "\n\nnext paragraph\n\n";
        stream.update(&long);
        let changed = long.replacen("word", "WORD", 1);
        stream.update(&changed);
        assert_eq!(stream_rows(&stream), md(&changed, 40));
        let end_changed = format!("{}x\n\n", &long[..long.len() - 4]);
        stream.update(&end_changed);
        assert_eq!(stream_rows(&stream), md(&end_changed, 40));
    }

    #[test]
    fn streaming_keeps_most_of_a_long_answer_stable() {
        let mut doc = String::new();
        let mut stream = MdStream::new(40, theme());
        for i in 0..50 {
            doc.push_str(&format!("Paragraph {i} with some words.\n\n"));
            stream.update(&doc);
        }
        doc.push_str("```\n");
        for i in 0..50 {
            doc.push_str(&format!("code line {i}\n"));
            stream.update(&doc);
        }
        assert!(doc.len() - stream.stable_len() < 40, "tail is one line");
    }

    #[test]
    fn a_long_paragraph_streams_line_by_line() {
        let mut doc = String::from("Intro paragraph.\n\n");
        let mut stream = MdStream::new(30, theme());
        for i in 0..400 {
            doc.push_str(&format!(
                "line {i} of **one** long `paragraph`, wrapping here\n"
            ));
            stream.update(&doc);
            if i % 37 == 0 {
                assert_eq!(stream_rows(&stream), md(&doc, 30), "after line {i}");
            }
        }
        assert_eq!(stream_rows(&stream), md(&doc, 30));
        assert!(doc.len() - stream.stable_len() <= FORCE_SPLIT + 100);
        // A lazy continuation of a list item is not a plain paragraph.
        let mut doc = String::from("- item\n");
        let mut stream = MdStream::new(30, theme());
        for i in 0..100 {
            doc.push_str(&format!("lazy line {i} continues the item text\n"));
            stream.update(&doc);
        }
        assert_eq!(stream_rows(&stream), md(&doc, 30));
        assert_eq!(stream.stable_len(), 0);
    }

    #[test]
    fn replaced_text_starts_over() {
        let mut stream = MdStream::new(40, theme());
        stream.update("one\n\ntwo\n\nthree");
        stream.update("other\n\nfour");
        assert_eq!(stream_rows(&stream), ["other", "", "four"]);
    }
}

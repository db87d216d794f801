//! The agent's markdown, rendered to wrapped ratatui lines with pulldown-cmark.
//!
//! [`render`] turns a whole document into lines. [`MdStream`] keeps the
//! lines of an answer that grows chunk by chunk: the part of the text that
//! can no longer change how it renders (everything before the last blank
//! line that starts a new top-level block, or before the last complete line
//! of an open code fence) is rendered once and kept; only the rest is
//! rendered again on every chunk.
//!
//! Every piece of text that becomes a span goes through
//! [`crate::sanitize::visible`]: entities such as `&#27;` decode to control
//! characters, so the text is made safe after parsing, not before.

use crate::text::{ceil_char_boundary, floor_char_boundary};
use pulldown_cmark::{Alignment, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{Mode, spaces, spans_width, str_width, wrap_into};
use crate::sanitize::{one_line, visible};

/// Indentation of code block lines.
const CODE_INDENT: usize = 2;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Render a whole markdown document to rows of at most `width` columns.
pub(crate) fn render(src: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut writer = Writer::new(width, theme);
    for event in Parser::new_ext(src, options()) {
        writer.event(event);
    }
    writer.finish()
}

/// A container block that prefixes the rows inside it.
enum Container {
    /// `│ ` on every row.
    Quote,
    /// The item's marker on its first row, as many spaces on the others.
    Item {
        marker: String,
        width: usize,
        used: bool,
    },
}

/// An open list.
struct List {
    /// The next number of an ordered list.
    next: Option<u64>,
    /// Items hold paragraphs: a blank row between items.
    loose: bool,
    items: usize,
}

/// A link or image being collected: where its text starts in `inline`.
struct Link {
    url: String,
    start: usize,
}

/// A table being collected; rendered at its end, when the widths are known.
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    head_rows: usize,
    in_head: bool,
}

struct Writer {
    width: usize,
    theme: Theme,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    lists: Vec<List>,
    /// The logical line being collected.
    inline: Vec<Span<'static>>,
    bold: u32,
    italic: u32,
    strike: u32,
    heading: Option<usize>,
    links: Vec<Link>,
    /// Text of the code block being collected.
    code: Option<String>,
    /// Text of the HTML block being collected.
    html: Option<String>,
    table: Option<Table>,
    /// A block ended: the next block starts after a blank row.
    pending_blank: bool,
    /// The blank row before the next block, written only once that block
    /// writes a row (an empty block leaves no blank behind).
    owed: Option<Line<'static>>,
}

impl Writer {
    fn new(width: usize, theme: Theme) -> Self {
        Writer {
            width,
            theme,
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            inline: Vec::new(),
            bold: 0,
            italic: 0,
            strike: 0,
            heading: None,
            links: Vec::new(),
            code: None,
            html: None,
            table: None,
            pending_blank: false,
            owed: None,
        }
    }

    /// Write the blank row a block owes before its first row.
    fn pay(&mut self) {
        if let Some(blank) = self.owed.take() {
            self.out.push(blank);
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if let Some(code) = self.code.take() {
            self.emit_code(&code);
        }
        self.emit_inline();
        self.out
    }

    fn style(&self) -> Style {
        let mut style = match self.heading {
            Some(level) => self.theme.heading(level),
            None => Style::new(),
        };
        if self.bold > 0 {
            style = style.add_modifier(Modifier::BOLD);
        }
        if self.italic > 0 {
            style = style.add_modifier(Modifier::ITALIC);
        }
        if self.strike > 0 {
            style = style.add_modifier(Modifier::CROSSED_OUT);
        }
        if !self.links.is_empty() {
            style = style.patch(self.theme.link());
        }
        style
    }

    /// Prefixes for the first row and the other rows of the next logical line.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::with_capacity(self.containers.len());
        let mut rest = Vec::with_capacity(self.containers.len());
        for container in &self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::styled("│ ", self.theme.quote_bar()));
                    rest.push(Span::styled("│ ", self.theme.quote_bar()));
                }
                Container::Item {
                    marker,
                    width,
                    used,
                } => {
                    if *used {
                        first.push(spaces(*width));
                    } else {
                        first.push(Span::styled(marker.clone(), self.theme.list_marker()));
                    }
                    rest.push(spaces(*width));
                }
            }
        }
        (first, rest)
    }

    /// Item markers are shown once, on the item's first row.
    fn mark_used(&mut self) {
        for container in &mut self.containers {
            if let Container::Item { used, .. } = container {
                *used = true;
            }
        }
    }

    fn emit_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        self.pay();
        let (first, rest) = self.prefixes();
        wrap_into(
            &mut self.out,
            &self.inline,
            &first,
            &rest,
            self.width,
            Mode::Word,
        );
        self.inline.clear();
        self.mark_used();
    }

    /// A blank row before the next row written, keeping quote bars.
    fn owe_blank(&mut self) {
        let (_, mut rest) = self.prefixes();
        while rest.last().is_some_and(|s| s.content.trim().is_empty()) {
            rest.pop();
        }
        if let Some(last) = rest.last_mut() {
            let trimmed = last.content.trim_end().to_string();
            last.content = trimmed.into();
        }
        self.owed = Some(Line::from(rest));
    }

    fn block_start(&mut self) {
        self.emit_inline();
        if self.pending_blank && !self.out.is_empty() {
            self.owe_blank();
        }
        self.pending_blank = false;
    }

    fn push_text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            code.push_str(text);
        } else if let Some(html) = &mut self.html {
            html.push_str(text);
        } else {
            let style = self.style();
            self.inline
                .push(Span::styled(visible(text).into_owned(), style));
        }
    }

    fn emit_code(&mut self, code: &str) {
        let body = code.strip_suffix('\n').unwrap_or(code);
        if code.is_empty() {
            return;
        }
        let style = self.theme.code_block();
        for line in body.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            self.pay();
            let (mut first, mut rest) = self.prefixes();
            first.push(spaces(CODE_INDENT));
            rest.push(spaces(CODE_INDENT));
            let piece = [Span::styled(visible(line), style)];
            wrap_into(&mut self.out, &piece, &first, &rest, self.width, Mode::Char);
            self.mark_used();
        }
    }

    fn emit_html(&mut self, html: &str) {
        let body = html.strip_suffix('\n').unwrap_or(html);
        if html.is_empty() {
            return;
        }
        let style = self.theme.dim();
        for line in body.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            self.pay();
            let (first, rest) = self.prefixes();
            let piece = [Span::styled(visible(line), style)];
            wrap_into(&mut self.out, &piece, &first, &rest, self.width, Mode::Word);
            self.mark_used();
        }
    }

    fn emit_rule(&mut self) {
        self.pay();
        let (mut first, _) = self.prefixes();
        let avail = self.width.saturating_sub(spans_width(&first)).max(1);
        first.push(Span::styled("─".repeat(avail), self.theme.rule()));
        self.out.push(Line::from(first));
        self.mark_used();
    }

    fn end_link(&mut self) {
        let Some(link) = self.links.pop() else {
            return;
        };
        let text: String = self.inline[link.start.min(self.inline.len())..]
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        let url = one_line(&link.url);
        if url.is_empty() || url == text || url.strip_prefix("mailto:") == Some(text.as_str()) {
            return;
        }
        self.inline
            .push(Span::styled(format!(" ({url})"), self.theme.url()));
    }

    fn start_item(&mut self) {
        self.emit_inline();
        let depth = self.lists.len().saturating_sub(1);
        let (gap, marker) = match self.lists.last_mut() {
            Some(list) => {
                let gap = list.loose && list.items > 0;
                list.items += 1;
                let marker = match &mut list.next {
                    Some(n) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    None => format!("{} ", ["•", "◦", "▪"][depth % 3]),
                };
                (gap, marker)
            }
            None => (false, "• ".to_string()),
        };
        if gap {
            self.owe_blank();
        }
        let width = str_width(&marker);
        self.containers.push(Container::Item {
            marker,
            width,
            used: false,
        });
        self.pending_blank = false;
    }

    fn end_item(&mut self) {
        self.emit_inline();
        if let Some(Container::Item { used: false, .. }) = self.containers.last() {
            // An empty item still shows its marker.
            self.pay();
            let (first, _) = self.prefixes();
            self.out.push(Line::from(first));
        }
        self.containers.pop();
        self.pending_blank = false;
    }

    fn end_cell(&mut self) {
        let mut cell = std::mem::take(&mut self.inline);
        if let Some(table) = &mut self.table {
            if table.in_head {
                for span in &mut cell {
                    span.style = span.style.add_modifier(Modifier::BOLD);
                }
            }
            if let Some(row) = table.rows.last_mut() {
                row.push(cell);
            }
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push_text(&text),
            Event::Code(text) => {
                let style = self.theme.inline_code();
                self.inline
                    .push(Span::styled(visible(&text).into_owned(), style));
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.push_text(&text),
            Event::Html(text) | Event::InlineHtml(text) => {
                if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    let style = self.theme.dim();
                    self.inline
                        .push(Span::styled(visible(&text).into_owned(), style));
                }
            }
            Event::FootnoteReference(label) => self.push_text(&format!("[^{label}]")),
            // Line breaks in the source are kept, as chat clients do: a
            // model's single newline is meant as one.
            Event::SoftBreak => {
                if let Some(html) = &mut self.html {
                    html.push('\n');
                } else {
                    self.emit_inline();
                }
            }
            Event::HardBreak => self.emit_inline(),
            Event::Rule => {
                self.block_start();
                self.emit_rule();
                self.pending_blank = true;
            }
            Event::TaskListMarker(checked) => {
                let mark = if checked { "☑ " } else { "☐ " };
                self.inline
                    .push(Span::styled(mark, self.theme.list_marker()));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.block_start();
                if matches!(self.containers.last(), Some(Container::Item { .. }))
                    && let Some(list) = self.lists.last_mut()
                {
                    list.loose = true;
                }
            }
            Tag::Heading { level, .. } => {
                self.block_start();
                let level = heading_level(level);
                self.heading = Some(level);
                let marker = format!("{} ", "#".repeat(level));
                self.inline
                    .push(Span::styled(marker, self.theme.heading_marker()));
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(_) => {
                self.block_start();
                self.code = Some(String::new());
            }
            Tag::HtmlBlock => {
                self.block_start();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.block_start();
                self.lists.push(List {
                    next: start,
                    loose: false,
                    items: 0,
                });
            }
            Tag::Item => self.start_item(),
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    head_rows: 0,
                    in_head: false,
                });
            }
            Tag::TableHead => {
                if let Some(table) = &mut self.table {
                    table.in_head = true;
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } => self.links.push(Link {
                url: dest_url.to_string(),
                start: self.inline.len(),
            }),
            Tag::Image { dest_url, .. } => {
                self.inline.push(Span::styled("[image: ", self.theme.dim()));
                self.links.push(Link {
                    url: dest_url.to_string(),
                    start: self.inline.len(),
                });
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.block_start(),
            Tag::Superscript | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.emit_inline();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.emit_inline();
                self.heading = None;
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.emit_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.emit_code(&code);
                }
                self.pending_blank = true;
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    self.emit_html(&html);
                }
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.emit_inline();
                self.lists.pop();
                self.pending_blank = true;
            }
            TagEnd::Item => self.end_item(),
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(table);
                }
                self.pending_blank = true;
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.in_head = false;
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => self.end_cell(),
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link => self.end_link(),
            TagEnd::Image => {
                self.inline.push(Span::styled("]", self.theme.dim()));
                self.end_link();
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.emit_inline();
                self.pending_blank = true;
            }
            TagEnd::Superscript | TagEnd::Subscript => {}
        }
    }

    fn emit_table(&mut self, table: Table) {
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let mut widths = vec![0; cols];
        for row in &table.rows {
            for (c, cell) in row.iter().enumerate() {
                widths[c] = widths[c].max(spans_width(cell));
            }
        }
        self.pay();
        let sep = Span::styled(" │ ", self.theme.dim());
        let (first, rest) = self.prefixes();
        let room = self
            .width
            .saturating_sub(spans_width(&first).max(spans_width(&rest)) + 3 * (cols - 1));
        if !fit_columns(&mut widths, room) {
            // Too narrow even for thin columns: one wrapped line per row.
            for row in &table.rows {
                let mut pieces: Vec<Span<'static>> = Vec::new();
                for (c, cell) in row.iter().enumerate() {
                    if c > 0 {
                        pieces.push(sep.clone());
                    }
                    pieces.extend(cell.iter().cloned());
                }
                let (first, rest) = self.prefixes();
                wrap_into(
                    &mut self.out,
                    &pieces,
                    &first,
                    &rest,
                    self.width,
                    Mode::Word,
                );
                self.mark_used();
            }
            return;
        }
        for (r, row) in table.rows.iter().enumerate() {
            // Each cell wrapped to its column; the row is as tall as its tallest cell.
            let cells: Vec<Vec<Line<'static>>> = widths
                .iter()
                .enumerate()
                .map(|(c, &w)| {
                    let cell = row.get(c).map(Vec::as_slice).unwrap_or(&[]);
                    let mut lines = Vec::new();
                    if spans_width(cell) <= w {
                        lines.push(Line::from(cell.to_vec()));
                    } else {
                        wrap_into(&mut lines, cell, &[], &[], w, Mode::Word);
                    }
                    lines
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
            for i in 0..height {
                let mut spans = if r == 0 && i == 0 {
                    first.clone()
                } else {
                    rest.clone()
                };
                for (c, &w) in widths.iter().enumerate() {
                    let piece: &[Span<'static>] =
                        cells[c].get(i).map_or(&[], |line| line.spans.as_slice());
                    let pad = w.saturating_sub(spans_width(piece));
                    let (before, after) = match table.aligns.get(c) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    if before > 0 {
                        spans.push(spaces(before));
                    }
                    spans.extend(piece.iter().cloned());
                    if c + 1 < cols {
                        if after > 0 {
                            spans.push(spaces(after));
                        }
                        spans.push(sep.clone());
                    }
                }
                self.out.push(Line::from(spans));
            }
            if r + 1 == table.head_rows {
                let mut rule = rest.clone();
                let dashes: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
                rule.push(Span::styled(dashes.join("─┼─"), self.theme.dim()));
                self.out.push(Line::from(rule));
            }
            self.mark_used();
        }
    }
}

/// Narrowest a column gets when a table is shrunk to fit.
const MIN_COLUMN: usize = 6;

/// Shrink column widths so that they sum to at most `room`, taking from the
/// widest first (narrow columns keep their width). False when even
/// [`MIN_COLUMN`]-wide columns would not fit.
fn fit_columns(widths: &mut [usize], room: usize) -> bool {
    let total: usize = widths.iter().sum();
    if total <= room {
        return true;
    }
    let floor: usize = widths.iter().map(|&w| w.min(MIN_COLUMN)).sum();
    if floor > room {
        return false;
    }
    // The cap that makes sum(min(w, cap)) fit, found by search.
    let (mut lo, mut hi) = (MIN_COLUMN, widths.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let cap = (lo + hi).div_ceil(2);
        if widths.iter().map(|&w| w.min(cap)).sum::<usize>() <= room {
            lo = cap;
        } else {
            hi = cap - 1;
        }
    }
    let mut spare = room - widths.iter().map(|&w| w.min(lo)).sum::<usize>();
    for w in widths.iter_mut() {
        if *w > lo {
            // What is left of the room goes to the capped columns, in order.
            let extra = spare.min(*w - lo);
            spare -= extra;
            *w = lo + extra;
        }
    }
    true
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

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
    use super::*;

    fn theme() -> Theme {
        Theme::with_color(true)
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn md(src: &str, width: usize) -> Vec<String> {
        text(&render(src, width, theme()))
    }

    fn stream_rows(stream: &MdStream) -> Vec<String> {
        (0..stream.len())
            .map(|i| stream.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect()
    }

    #[test]
    fn headings_show_their_level_and_are_bold() {
        let lines = render("# Title\n\n## Sub", 40, theme());
        assert_eq!(text(&lines), ["# Title", "", "## Sub"]);
        let title = &lines[0].spans[1];
        assert!(
            title
                .style
                .add_modifier
                .contains(Modifier::BOLD | Modifier::UNDERLINED)
        );
    }

    #[test]
    fn strong_emphasis_and_inline_code_are_styled() {
        let lines = render("a **b** *c* `d`", 40, theme());
        assert_eq!(text(&lines), ["a b c d"]);
        let spans = &lines[0].spans;
        let find = |s: &str| spans.iter().find(|sp| sp.content == s).map(|sp| sp.style);
        assert!(find("b").is_some_and(|s| s.add_modifier.contains(Modifier::BOLD)));
        assert!(find("c").is_some_and(|s| s.add_modifier.contains(Modifier::ITALIC)));
        assert_eq!(find("d"), Some(theme().inline_code()));
    }

    #[test]
    fn paragraphs_are_separated_and_source_line_breaks_kept() {
        assert_eq!(md("one\ntwo\n\nthree", 40), ["one", "two", "", "three"]);
    }

    #[test]
    fn paragraphs_word_wrap() {
        assert_eq!(md("the quick brown fox", 10), ["the quick", "brown fox"]);
    }

    #[test]
    fn fenced_and_indented_code_blocks_are_indented_and_hard_wrapped() {
        let src = "```rust\nfn main() { println!(\"hi\"); }\n\n  x\n```\n\n    indented";
        assert_eq!(
            md(src, 16),
            [
                "  fn main() { pr",
                "  intln!(\"hi\"); ",
                "  }",
                "  ",
                "    x",
                "",
                "  indented"
            ]
        );
        let lines = render("```\ncode\n```", 20, theme());
        assert_eq!(lines[0].spans[1].style, theme().code_block());
    }

    #[test]
    fn lists_nest_with_indentation_and_number() {
        let src = "- one\n- two\n  - inner\n    wrapped text here\n- three\n\n1. first\n2. second";
        assert_eq!(
            md(src, 20),
            [
                "• one",
                "• two",
                "  ◦ inner",
                "    wrapped text",
                "    here",
                "• three",
                "",
                "1. first",
                "2. second"
            ]
        );
    }

    #[test]
    fn loose_lists_get_blank_rows_and_paragraphs_in_items() {
        let src = "- a\n\n- b\n\n  more b";
        assert_eq!(md(src, 20), ["• a", "", "• b", "", "  more b"]);
    }

    #[test]
    fn task_lists() {
        assert_eq!(md("- [ ] todo\n- [x] done", 20), ["• ☐ todo", "• ☑ done"]);
    }

    #[test]
    fn block_quotes_have_a_bar() {
        assert_eq!(
            md("> quoted text that wraps\n>\n> second", 12),
            ["│ quoted", "│ text that", "│ wraps", "│", "│ second"]
        );
    }

    #[test]
    fn links_show_the_url_dimmed_after_the_text() {
        let lines = render(
            "see [docs](https://x.dev/a) and <https://y.dev>",
            80,
            theme(),
        );
        assert_eq!(
            text(&lines),
            ["see docs (https://x.dev/a) and https://y.dev"]
        );
        let url = lines[0]
            .spans
            .iter()
            .find(|s| s.content == " (https://x.dev/a)");
        assert_eq!(url.map(|s| s.style), Some(theme().url()));
    }

    #[test]
    fn rules_span_the_width() {
        assert_eq!(md("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    }

    #[test]
    fn tables_align_columns_or_fall_back_to_rows() {
        let src = "| a | bb |\n|---|---:|\n| ccc | d |";
        assert_eq!(md(src, 40), ["a   │ bb", "────┼───", "ccc │  d"]);
        assert_eq!(md(src, 5), ["a │", "bb", "ccc │", "d"]);
    }

    #[test]
    fn wide_tables_wrap_cells_inside_their_columns() {
        let src = "| prompt | what the agent does |\n|---|---|\n| `help` | this table |\n| `slow` | a chunk every 200 ms for 60 s; try cancelling it |";
        assert_eq!(
            md(src, 32),
            [
                "prompt │ what the agent does",
                "───────┼────────────────────────",
                "help   │ this table",
                "slow   │ a chunk every 200 ms",
                "       │ for 60 s; try",
                "       │ cancelling it",
            ]
        );
    }

    #[test]
    fn columns_shrink_from_the_widest() {
        let mut w = vec![4, 30, 20];
        assert!(fit_columns(&mut w, 40));
        assert_eq!(w.iter().sum::<usize>(), 40);
        assert_eq!(w[0], 4, "a narrow column keeps its width");
        assert!(w[1] >= w[2] && w[2] >= MIN_COLUMN, "{w:?}");
        let mut w = vec![10, 10, 10];
        assert!(!fit_columns(&mut w, 17), "three thin columns need 18");
        let mut w = vec![3, 5];
        assert!(fit_columns(&mut w, 100));
        assert_eq!(w, [3, 5], "a table that fits is left alone");
    }

    #[test]
    fn unfinished_constructs_render_what_parses() {
        assert_eq!(md("**bold", 20), ["**bold"]);
        assert_eq!(md("```rust\nlet x", 20), ["  let x"]);
        assert_eq!(md("- item\n- ", 20), ["• item", "• "]);
    }

    #[test]
    fn entities_and_controls_are_made_visible() {
        let lines = md("a &#27;[31m b \u{1b}[0m `\u{7}`", 40);
        assert_eq!(lines, ["a ␛[31m b ␛[0m ␇"]);
    }

    const DOCS: &[&str] = &[
        "# Title\n\nSome *intro* text that is long enough to wrap around.\n\n- a\n- b\n  - c\n\nAfter the list.\n\n```rust\nfn main() {\n\n    let x = 1;\n}\n```\n\nDone [link](http://x).\n",
        "Para one.\n\n> quote\n> more\n\nPara two\n\n1. x\n\n2. y\n\nend\n\n~~~\na\n\n~~~~\nb\n~~~\n\ntail",
        "text\n\n````\n```\ninner\n```\n````\n\nafter\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nz",
        "start\n\n  ```\n  indented fence\n\nx\n  ```\n\nend\n\n    code\n\n    more code\n\nlast",
        "ref [x][1]\n\nmiddle\n\n[1]: http://example.com\n\nend",
        "<div>\n\n```\nnot code?\n```\n\n</div>\n\nafter",
        "a\r\n\r\nb\r\n\r\n```\r\nc\r\n\r\nd\r\n```\r\n\r\ne",
        "1. step\n   ```bash\n   cargo test\n\n   ```\n2. next\n\nplain\n",
        "1. step\n   ```bash\n   code\n```\n\nafter\n\nmore",
        "Intro:\n```\nx\n```\nText right after\n\n```python\ndef f():\n\n    return 1\n```\nz",
        "a\n\n\tcode\n\nb\n\n***\n\n___\n\nc",
        "Title\n=====\n\nbody\n\nSub\n---\n\nx &#27;[1m y",
        "> quote\n\n> ```\n> code\n>\n> more\n\nafter\n\n   ```\n   three\n\n   ```\n\nend",
    ];

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

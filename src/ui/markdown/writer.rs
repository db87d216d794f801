//! The event writer: pulldown-cmark events to wrapped, styled rows.

use pulldown_cmark::{Alignment, Event, HeadingLevel, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::super::theme::Theme;
use super::super::wrap::{Mode, spaces, spans_width, str_width, wrap_into, wrap_owned};
use crate::sanitize::{one_line, visible};

/// Indentation of code block lines.
const CODE_INDENT: usize = 2;

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

pub(super) struct Writer {
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
    pub(super) fn new(width: usize, theme: Theme) -> Self {
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

    pub(super) fn finish(mut self) -> Vec<Line<'static>> {
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
        wrap_owned(&mut self.out, &mut self.inline, &first, &rest, self.width);
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

    pub(super) fn event(&mut self, event: Event<'_>) {
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
pub(super) const MIN_COLUMN: usize = 6;

/// Shrink column widths so that they sum to at most `room`, taking from the
/// widest first (narrow columns keep their width). False when even
/// [`MIN_COLUMN`]-wide columns would not fit.
pub(super) fn fit_columns(widths: &mut [usize], room: usize) -> bool {
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

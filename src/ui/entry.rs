//! One transcript entry laid out as wrapped rows, per [`EntryKind`].
//!
//! Everything the agent sent passes through `crate::sanitize` before it
//! becomes a span.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::markdown::{self, MdStream};
use super::terminal;
use super::theme::Theme;
use super::wrap::{Mode, spaces, truncate_end, wrap_into, wrap_text_into};
use crate::model::{PlanEntry, ToolContent};
use crate::sanitize::{one_line, visible};
use crate::state::{Entry, EntryKind, TerminalView, ToolEntry, ToolState};

/// Lines of tool text output shown before "… N more lines".
const TEXT_LINES: usize = 12;
/// Lines of a diff shown before "… N more lines".
const DIFF_LINES: usize = 400;
/// Locations shown before "… N more".
const LOCATIONS: usize = 6;
/// Context lines around each diff hunk.
const DIFF_CONTEXT: usize = 3;
/// Give up refining a diff after this long (a coarser diff is still correct).
const DIFF_TIMEOUT: Duration = Duration::from_millis(100);
/// Indentation of a tool call's body under its header.
pub(crate) const INDENT: usize = 2;

/// Text made safe to show, with CRLF line endings read as newlines first
/// (a lone `\r` stays visible as `␍`).
fn clean(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(visible(&text.replace("\r\n", "\n")).into_owned())
    } else {
        visible(text)
    }
}

/// Words that follow warden's own `✓` and `✗` marks (decision and error lines).
const OWN_LINE_WORDS: [&str; 8] = [
    "allowed",
    "denied",
    "blocked",
    "cancelled",
    "withdrawn",
    "approved",
    "the agent",
    "warning",
];

/// The agent's text with no line that starts like one of warden's own: a
/// user message (`› `), a block (`⊘ `), a decision (`✓ allowed…`) or an
/// error (`✗ the agent…`). Such a line's mark is shown as its code
/// (`<U+203A>`), so the agent cannot write what reads as the user's words
/// or warden's decisions.
pub(crate) fn unforged(text: &str) -> Cow<'_, str> {
    unforged_from(text, 0)
}

/// [`unforged`], looking only at the lines from the one holding byte
/// `from` on: the text is left as it is when none of them starts like
/// warden's own (what comes before is taken as looked at already).
fn unforged_from(text: &str, from: usize) -> Cow<'_, str> {
    // The mark a line starts with, when it starts like one of warden's.
    let forged = |line: &str| -> Option<char> {
        let body = line.trim_start_matches([' ', '>']);
        let mark = body.chars().next()?;
        let rest = &body[mark.len_utf8()..];
        let own = match mark {
            '›' | '⊘' => true,
            '✓' | '✗' => rest
                .strip_prefix(' ')
                .is_some_and(|rest| OWN_LINE_WORDS.iter().any(|w| rest.starts_with(w))),
            _ => false,
        };
        own.then_some(mark)
    };
    // Only the places a mark occurs are looked at (each found by a fast
    // byte search): a streamed answer is laid out again each frame, and a
    // pass over all its lines cost more than the rest of the layout.
    let from = text
        .get(..from)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |nl| nl + 1);
    let at_line_start = |at: usize| {
        let lead = text[..at].trim_end_matches([' ', '>']);
        let start = lead.len();
        (lead.is_empty() || lead.ends_with('\n')) && forged(&text[start..]).is_some()
    };
    if !['›', '⊘', '✓', '✗'].into_iter().any(|mark| {
        text[from..]
            .match_indices(mark)
            .any(|(at, _)| at_line_start(from + at))
    }) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches([' ', '>']);
        let lead = &line[..line.len() - body.len()];
        match forged(line) {
            Some(mark) => {
                out.push_str(lead);
                out.push_str(&format!("<U+{:04X}>", mark as u32));
                out.push_str(&body[mark.len_utf8()..]);
            }
            None => out.push_str(line),
        }
    }
    Cow::Owned(out)
}

/// What entry layout depends on besides the entry itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ctx {
    pub(crate) width: usize,
    pub(crate) expanded: bool,
    pub(crate) theme: Theme,
}

/// The agent's terminals, for the tool calls that embed one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terminals<'a> {
    /// Their output so far, by terminal id.
    pub(crate) views: &'a BTreeMap<String, TerminalView>,
    /// Show whole outputs instead of their last lines.
    pub(crate) expanded: bool,
}

/// The terminals when none is known.
#[cfg(test)]
static NO_TERMINALS: BTreeMap<String, TerminalView> = BTreeMap::new();

#[cfg(test)]
impl Terminals<'static> {
    /// No terminal output known: an embedded terminal shows only its id.
    pub(crate) const NONE: Self = Terminals {
        views: &NO_TERMINALS,
        expanded: false,
    };
}

/// The rows of one entry.
#[derive(Debug, Clone)]
pub(crate) enum Laid {
    /// Rows laid out in one go.
    Lines(Vec<Line<'static>>),
    /// An agent answer, re-rendered incrementally as it grows; and whether
    /// it was rendered from the agent's own text (no line rewritten by
    /// [`unforged`]), so only what it renders next need be looked at.
    Markdown(MdStream, bool),
    /// An unfolded thought, re-wrapped incrementally as it grows.
    Thought(PlainStream),
}

impl Laid {
    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            Laid::Lines(lines) => lines.len(),
            Laid::Markdown(md, _) => md.len(),
            Laid::Thought(plain) => plain.len(),
        }
    }

    /// Rows at the front not kept (a long streaming answer; see `MdStream`).
    pub(crate) fn dropped(&self) -> usize {
        match self {
            Laid::Markdown(md, _) => md.dropped(),
            Laid::Lines(_) | Laid::Thought(_) => 0,
        }
    }

    /// Keep every row (a view shows the older ones) or let them go again.
    pub(crate) fn keep_all(&mut self, keep: bool) {
        if let Laid::Markdown(md, _) = self {
            md.keep_all(keep);
        }
    }

    /// Row `i`; `None` means a blank row.
    pub(crate) fn line(&self, i: usize) -> Option<&Line<'static>> {
        match self {
            Laid::Lines(lines) => lines.get(i),
            Laid::Markdown(md, _) => md.line(i),
            Laid::Thought(plain) => plain.line(i),
        }
    }
}

/// Lay out `entry` from scratch; tool calls show `terminals`' output.
pub(crate) fn layout(entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> Laid {
    match &entry.kind {
        EntryKind::Agent(text) => {
            let mut md = MdStream::new(ctx.width, ctx.theme);
            let text = unforged(text);
            md.update(&text);
            Laid::Markdown(md, matches!(text, Cow::Borrowed(_)))
        }
        EntryKind::Thought(text) if ctx.expanded => {
            let mut plain = PlainStream::thought(ctx);
            plain.update(text);
            Laid::Thought(plain)
        }
        _ => Laid::Lines(lines(entry, ctx, terminals)),
    }
}

/// Lay `entry` out again after it changed, reusing what `laid` holds when
/// the entry only grew.
pub(crate) fn relayout(laid: &mut Laid, entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) {
    match (laid, &entry.kind) {
        (Laid::Markdown(md, own), EntryKind::Agent(text)) => {
            // Rows already rendered from the agent's own text stay; only
            // the lines from where the update renders are looked at (a
            // pass over the whole answer each frame cost more than the
            // rest of its layout).
            let from = if *own { md.renders_from(text) } else { 0 };
            let text = unforged_from(text, from);
            md.update(&text);
            *own = matches!(text, Cow::Borrowed(_));
        }
        (Laid::Thought(plain), EntryKind::Thought(text)) if ctx.expanded => plain.update(text),
        (laid, _) => *laid = layout(entry, ctx, terminals),
    }
}

/// The number of rows `entry` takes, without keeping them.
pub(crate) fn measure(entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> usize {
    match &entry.kind {
        EntryKind::Agent(text) => markdown::render(&unforged(text), ctx.width, ctx.theme).len(),
        _ => layout(entry, ctx, terminals).len(),
    }
}

/// Rows of the entries laid out in one go.
fn lines(entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> Vec<Line<'static>> {
    let theme = ctx.theme;
    let mut out = Vec::new();
    match &entry.kind {
        EntryKind::User(text) => {
            let first = [Span::styled("› ", theme.user_marker())];
            wrap_text_into(
                &mut out,
                &clean(text),
                theme.plain(),
                &first,
                &[spaces(2)],
                ctx.width,
                Mode::Word,
            );
        }
        EntryKind::Agent(text) => out = markdown::render(&unforged(text), ctx.width, theme),
        EntryKind::Thought(text) => out.push(folded_thought(text, ctx)),
        EntryKind::Tool(tool) => tool_lines(&mut out, tool, ctx, terminals),
        EntryKind::Plan(plan) => plan_lines(&mut out, plan, ctx),
        EntryKind::Info(text) => {
            wrap_text_into(
                &mut out,
                &clean(text),
                theme.dim(),
                &[],
                &[],
                ctx.width,
                Mode::Word,
            );
        }
        EntryKind::Decision { allowed, text } => {
            let (mark, style) = if *allowed {
                ("✓ ", theme.fg(ratatui::style::Color::Green))
            } else {
                ("⊘ ", theme.fg(ratatui::style::Color::Red))
            };
            let first = [Span::styled(mark, style)];
            wrap_text_into(
                &mut out,
                &clean(text),
                style,
                &first,
                &[spaces(2)],
                ctx.width,
                Mode::Word,
            );
        }
        EntryKind::Error { message, detail } => {
            // An agent's error or stderr can be one huge line: the notice
            // shows a bounded part of it, the rest is in the log.
            let style = theme.error();
            let first = [Span::styled("✗ ", style)];
            let mut rows = Vec::new();
            wrap_text_into(
                &mut rows,
                &clean(capped(message, ERROR_BYTES)),
                style,
                &first,
                &[spaces(2)],
                ctx.width,
                Mode::Word,
            );
            keep_rows(&mut out, rows, ERROR_ROWS, ctx);
            let indent = [spaces(2)];
            let mut rows = Vec::new();
            for line in detail.iter().rev().take(DETAIL_LINES).rev() {
                let mut line_rows = Vec::new();
                wrap_text_into(
                    &mut line_rows,
                    &clean(capped(line, ERROR_BYTES)),
                    theme.error_detail(),
                    &indent,
                    &indent,
                    ctx.width,
                    Mode::Word,
                );
                keep_rows(&mut rows, line_rows, DETAIL_LINE_ROWS, ctx);
            }
            out.extend(rows);
        }
    }
    out
}

/// The most bytes of an error line or a detail line laid out.
const ERROR_BYTES: usize = 4096;
/// The most rows an error's message takes.
const ERROR_ROWS: usize = 6;
/// The most detail lines (a stderr tail) an error shows.
const DETAIL_LINES: usize = 12;
/// The most rows one detail line takes.
const DETAIL_LINE_ROWS: usize = 2;

/// The first `max` bytes of `text` (at a character boundary).
fn capped(text: &str, max: usize) -> &str {
    &text[..crate::text::floor_char_boundary(text, max.min(text.len()))]
}

/// Append at most `max` of `rows`, the last of them saying how many more
/// there were.
fn keep_rows(out: &mut Vec<Line<'static>>, mut rows: Vec<Line<'static>>, max: usize, ctx: Ctx) {
    if rows.len() > max {
        let more = rows.len() - (max - 1);
        rows.truncate(max - 1);
        let piece = [Span::styled(
            format!("  … {more} more rows (the log has it)"),
            ctx.theme.dim(),
        )];
        wrap_into(&mut rows, &piece, &[], &[], ctx.width, Mode::Char);
    }
    out.extend(rows);
}

/// `▸ thinking: <first line>`, cut to the width.
fn folded_thought(text: &str, ctx: Ctx) -> Line<'static> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let more = if lines.next().is_some() { " …" } else { "" };
    let shown = format!("▸ thinking: {}{more}", one_line(first));
    Line::from(Span::styled(
        truncate_end(&shown, ctx.width).into_owned(),
        ctx.theme.thought(),
    ))
}

/// Plain text that grows by appending, re-wrapped from its last complete line.
#[derive(Debug, Clone)]
pub(crate) struct PlainStream {
    ctx: Ctx,
    style: Style,
    /// Rows before the text (a header).
    header: usize,
    /// The source of the complete lines wrapped into `head`.
    stable: String,
    head: Vec<Line<'static>>,
    tail: Vec<Line<'static>>,
}

impl PlainStream {
    fn thought(ctx: Ctx) -> Self {
        let header = Line::from(Span::styled("▾ thinking", ctx.theme.thought()));
        PlainStream {
            ctx,
            style: ctx.theme.thought(),
            header: 1,
            stable: String::new(),
            head: vec![header],
            tail: Vec::new(),
        }
    }

    fn wrap(&self, text: &str, out: &mut Vec<Line<'static>>) {
        let indent = [spaces(INDENT)];
        wrap_text_into(
            out,
            &clean(text),
            self.style,
            &indent,
            &indent,
            self.ctx.width,
            Mode::Word,
        );
    }

    fn update(&mut self, text: &str) {
        if !text.starts_with(self.stable.as_str()) {
            self.stable.clear();
            self.head.truncate(self.header);
        }
        let rest = &text[self.stable.len()..];
        if let Some(end) = rest.rfind('\n') {
            let complete = &rest[..end];
            let complete = complete.strip_suffix('\r').unwrap_or(complete);
            let mut head = std::mem::take(&mut self.head);
            self.wrap(complete, &mut head);
            self.head = head;
            self.stable.push_str(&rest[..=end]);
        }
        let rest = &text[self.stable.len()..];
        let mut tail = Vec::new();
        if !rest.is_empty() {
            self.wrap(rest, &mut tail);
        }
        self.tail = tail;
    }

    fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    fn line(&self, i: usize) -> Option<&Line<'static>> {
        match self.head.get(i) {
            Some(line) => Some(line),
            None => self.tail.get(i - self.head.len()),
        }
    }
}

/// The title shown for a tool call: its title, else the tool's name, else its id.
fn tool_title(tool: &ToolEntry) -> String {
    let call = &tool.call;
    let title = [Some(&call.title), call.tool_name.as_ref(), Some(&call.id)]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
        .map_or("", String::as_str);
    one_line(title)
}

/// A tool call's `rawOutput` as text, for a call whose content shows
/// nothing: a string as is; the output field of an object (codex's
/// `formatted_output`, `aggregated_output`, `output`, `stdout`); else the JSON.
fn raw_output_text(raw: &Value) -> Option<String> {
    match raw {
        Value::Null => None,
        Value::String(s) => (!s.trim().is_empty()).then(|| s.clone()),
        Value::Object(fields) => {
            let named = ["formatted_output", "aggregated_output", "output", "stdout"]
                .iter()
                .find_map(|key| fields.get(*key).and_then(Value::as_str));
            match named {
                Some(text) if text.trim().is_empty() => None,
                Some(text) => Some(text.to_string()),
                None => serde_json::to_string_pretty(raw).ok(),
            }
        }
        other => serde_json::to_string_pretty(other).ok(),
    }
}

/// Tool text content: markdown (Claude fences command output in
/// "```console"), rendered as the transcript renders answers, indented,
/// the first [`TEXT_LINES`] rows then "… N more lines" (all of them when
/// `open`: Ctrl-O).
fn markdown_lines(out: &mut Vec<Line<'static>>, text: &str, ctx: Ctx, open: bool) {
    let width = ctx.width.saturating_sub(INDENT).max(1);
    let rows = markdown::render(&clean(text), width, ctx.theme);
    let shown = if open { usize::MAX } else { TEXT_LINES };
    let hidden = rows.len().saturating_sub(shown);
    for row in rows.into_iter().take(shown) {
        let mut spans = vec![spaces(INDENT)];
        spans.extend(row.spans);
        out.push(Line::from(spans).style(row.style));
    }
    more_output(out, hidden, ctx);
}

/// Plain tool output (a `rawOutput`), indented, cut like text content.
fn plain_lines(out: &mut Vec<Line<'static>>, text: &str, ctx: Ctx, open: bool) {
    let indent = [spaces(INDENT)];
    let text = clean(text);
    let mut lines = text.lines();
    for line in lines
        .by_ref()
        .take(if open { usize::MAX } else { TEXT_LINES })
    {
        let piece = [Span::styled(line, ctx.theme.dim())];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Char);
    }
    more_output(out, lines.count(), ctx);
}

fn tool_lines(out: &mut Vec<Line<'static>>, tool: &ToolEntry, ctx: Ctx, terminals: Terminals<'_>) {
    let theme = ctx.theme;
    let (symbol, symbol_style) = theme.tool_state(tool.state);
    // warden's own entries say so; the agent's cannot.
    let whose = if tool.own { "warden: " } else { "" };
    let header = [
        Span::styled(symbol, symbol_style),
        Span::raw(" "),
        Span::styled(format!("[{}]", tool.call.kind.as_str()), theme.tool_kind()),
        Span::raw(" "),
        Span::styled(whose, theme.card_label()),
        Span::styled(tool_title(tool), theme.tool_title()),
        Span::styled(format!(" — {}", tool.state.label()), theme.dim()),
    ];
    let indent = [spaces(INDENT)];
    wrap_into(out, &header, &[], &indent, ctx.width, Mode::Word);
    if let Some(warning) = &tool.lookalike {
        let piece = [Span::styled(warning.clone(), theme.reject())];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
    }

    // Read from the call when it arrived ([`ToolEntry::command`]).
    if let Some(cmd) = &tool.command {
        let first = [spaces(INDENT), Span::styled("$ ", theme.command())];
        let rest = [spaces(INDENT + 2)];
        let cmd = clean(cmd);
        let mut lines = cmd.lines();
        for (i, line) in lines.by_ref().take(TEXT_LINES).enumerate() {
            let piece = [Span::styled(line, theme.command())];
            wrap_into(
                out,
                &piece,
                if i == 0 { &first } else { &rest },
                &rest,
                ctx.width,
                Mode::Word,
            );
        }
        more_lines(out, lines.count(), ctx);
    }

    for location in tool.call.locations.iter().take(LOCATIONS) {
        let shown = match location.line {
            Some(line) => format!("{}:{line}", one_line(&location.path)),
            None => one_line(&location.path),
        };
        let piece = [Span::styled(shown, theme.dim())];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Char);
    }
    if tool.call.locations.len() > LOCATIONS {
        let more = tool.call.locations.len() - LOCATIONS;
        let piece = [Span::styled(
            format!("… {more} more locations"),
            theme.dim(),
        )];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
    }

    for content in &tool.call.content {
        match content {
            ToolContent::Text { text } => markdown_lines(out, text, ctx, terminals.expanded),
            // The card shows the diff while the call waits for a decision.
            ToolContent::Diff { path, .. } if tool.state == ToolState::AwaitingApproval => {
                let piece = [Span::styled(
                    format!("diff of {}: in the permission card", one_line(path)),
                    theme.dim(),
                )];
                wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
            }
            ToolContent::Diff { path, old, new } => {
                diff_lines(out, path, old.as_deref(), new, ctx, DIFF_LINES)
            }
            ToolContent::Terminal { id } => {
                // warden's own terminal when it has one of that id (an agent
                // cannot speak for it), else what the agent reported itself.
                let output = match terminals.views.get(id) {
                    Some(view) => Some(terminal::Output::from(view)),
                    None => tool.call.agent_terminal(id).map(terminal::Output::from),
                };
                terminal::lines(out, id, output, tool.state, terminals.expanded, ctx);
            }
        }
    }
    if tool.call.content.is_empty()
        && let Some(text) = tool.call.raw_output.as_ref().and_then(raw_output_text)
    {
        plain_lines(out, &text, ctx, terminals.expanded);
    }
}

/// "… N more lines · Ctrl-O expand" under cut tool output.
fn more_output(out: &mut Vec<Line<'static>>, more: usize, ctx: Ctx) {
    if more > 0 {
        let piece = [Span::styled(
            format!("… {more} more lines · Ctrl-O expand"),
            ctx.theme.dim(),
        )];
        let indent = [spaces(INDENT)];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
    }
}

fn more_lines(out: &mut Vec<Line<'static>>, more: usize, ctx: Ctx) {
    if more > 0 {
        let piece = [Span::styled(
            format!("… {more} more lines"),
            ctx.theme.dim(),
        )];
        let indent = [spaces(INDENT)];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
    }
}

/// A coloured unified diff of one file; `old = None` is a new file; at
/// most `limit` lines, then "… N more lines".
pub(crate) fn diff_lines(
    out: &mut Vec<Line<'static>>,
    path: &str,
    old: Option<&str>,
    new: &str,
    ctx: Ctx,
    limit: usize,
) {
    let theme = ctx.theme;
    let indent = [spaces(INDENT)];
    let path = one_line(path);
    let (a, b) = if path.starts_with('/') {
        (path.clone(), path.clone())
    } else {
        (format!("a/{path}"), format!("b/{path}"))
    };
    let a = if old.is_none() {
        "/dev/null".to_string()
    } else {
        a
    };
    for header in [format!("--- {a}"), format!("+++ {b}")] {
        let piece = [Span::styled(header, theme.diff_header())];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Char);
    }
    let old = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut shown = 0;
    let mut hidden = 0;
    let mut any = false;
    for hunk in diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .iter_hunks()
    {
        any = true;
        if shown < limit {
            let piece = [Span::styled(hunk.header().to_string(), theme.diff_hunk())];
            wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Char);
            shown += 1;
        } else {
            hidden += 1;
        }
        for change in hunk.iter_changes() {
            if shown >= limit {
                hidden += 1;
                continue;
            }
            shown += 1;
            let (sign, style) = match change.tag() {
                ChangeTag::Delete => ("-", theme.diff_del()),
                ChangeTag::Insert => ("+", theme.diff_add()),
                ChangeTag::Equal => (" ", theme.plain()),
            };
            let value = change.value();
            let value = value.strip_suffix('\n').unwrap_or(value);
            let value = value.strip_suffix('\r').unwrap_or(value);
            let first = [spaces(INDENT), Span::styled(sign, style)];
            let rest = [spaces(INDENT + 1)];
            let piece = [Span::styled(visible(value), style)];
            wrap_into(out, &piece, &first, &rest, ctx.width, Mode::Char);
        }
    }
    if !any {
        let piece = [Span::styled("(no changes)", theme.dim())];
        wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
    }
    more_lines(out, hidden, ctx);
}

fn plan_lines(out: &mut Vec<Line<'static>>, plan: &[PlanEntry], ctx: Ctx) {
    let theme = ctx.theme;
    out.push(Line::from(Span::styled("Plan", theme.bold())));
    for entry in plan {
        let (mark, style) = theme.plan(entry.status);
        let first = [spaces(INDENT), Span::styled(format!("{mark} "), style)];
        let rest = [spaces(INDENT + 2)];
        let text = one_line(&entry.content);
        let piece = [Span::styled(text, style)];
        wrap_into(out, &piece, &first, &rest, ctx.width, Mode::Word);
    }
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;

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
use crate::model::{PlanEntry, ToolContent, ToolKind};
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
    /// An agent answer, re-rendered incrementally as it grows.
    Markdown(MdStream),
    /// An unfolded thought, re-wrapped incrementally as it grows.
    Thought(PlainStream),
}

impl Laid {
    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            Laid::Lines(lines) => lines.len(),
            Laid::Markdown(md) => md.len(),
            Laid::Thought(plain) => plain.len(),
        }
    }

    /// Rows at the front not kept (a long streaming answer; see `MdStream`).
    pub(crate) fn dropped(&self) -> usize {
        match self {
            Laid::Markdown(md) => md.dropped(),
            Laid::Lines(_) | Laid::Thought(_) => 0,
        }
    }

    /// Keep every row (a view shows the older ones) or let them go again.
    pub(crate) fn keep_all(&mut self, keep: bool) {
        if let Laid::Markdown(md) = self {
            md.keep_all(keep);
        }
    }

    /// Row `i`; `None` means a blank row.
    pub(crate) fn line(&self, i: usize) -> Option<&Line<'static>> {
        match self {
            Laid::Lines(lines) => lines.get(i),
            Laid::Markdown(md) => md.line(i),
            Laid::Thought(plain) => plain.line(i),
        }
    }
}

/// Lay out `entry` from scratch; tool calls show `terminals`' output.
pub(crate) fn layout(entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> Laid {
    match &entry.kind {
        EntryKind::Agent(text) => {
            let mut md = MdStream::new(ctx.width, ctx.theme);
            md.update(text);
            Laid::Markdown(md)
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
        (Laid::Markdown(md), EntryKind::Agent(text)) => md.update(text),
        (Laid::Thought(plain), EntryKind::Thought(text)) if ctx.expanded => plain.update(text),
        (laid, _) => *laid = layout(entry, ctx, terminals),
    }
}

/// The number of rows `entry` takes, without keeping them.
pub(crate) fn measure(entry: &Entry, ctx: Ctx, terminals: Terminals<'_>) -> usize {
    match &entry.kind {
        EntryKind::Agent(text) => markdown::render(text, ctx.width, ctx.theme).len(),
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
        EntryKind::Agent(text) => out = markdown::render(text, ctx.width, theme),
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
            let style = theme.error();
            let first = [Span::styled("✗ ", style)];
            wrap_text_into(
                &mut out,
                &clean(message),
                style,
                &first,
                &[spaces(2)],
                ctx.width,
                Mode::Word,
            );
            let indent = [spaces(2)];
            for line in detail {
                let line = clean(line);
                wrap_text_into(
                    &mut out,
                    &line,
                    theme.error_detail(),
                    &indent,
                    &indent,
                    ctx.width,
                    Mode::Word,
                );
            }
        }
    }
    out
}

/// "▸ thinking: <first line>", cut to the width.
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

/// The shell command of an execute call, from `raw_input.command`; an argv
/// array (codex: `["/bin/bash", "-lc", "touch x"]`) is shown as a shell
/// would need it typed, each argument quoted where needed.
fn command(raw: Option<&Value>) -> Option<String> {
    match raw?.get("command")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<String> = parts
                .iter()
                .map(|part| match part {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            (!words.is_empty()).then(|| crate::policy::shell_join(&words))
        }
        _ => None,
    }
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
    let header = [
        Span::styled(symbol, symbol_style),
        Span::raw(" "),
        Span::styled(format!("[{}]", tool.call.kind.as_str()), theme.tool_kind()),
        Span::raw(" "),
        Span::styled(tool_title(tool), theme.tool_title()),
        Span::styled(format!(" — {}", tool.state.label()), theme.dim()),
    ];
    let indent = [spaces(INDENT)];
    wrap_into(out, &header, &[], &indent, ctx.width, Mode::Word);

    if tool.call.kind == ToolKind::Execute
        && let Some(cmd) = command(tool.call.raw_input.as_ref())
    {
        let first = [spaces(INDENT), Span::styled("$ ", theme.command())];
        let rest = [spaces(INDENT + 2)];
        let cmd = clean(&cmd);
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
            ToolContent::Diff { path, old, new } => diff_lines(out, path, old.as_deref(), new, ctx),
            ToolContent::Terminal { id } => {
                // warden's own terminal when it has one of that id (an agent
                // cannot speak for it), else what the agent reported itself.
                let output = match terminals.views.get(id) {
                    Some(view) => Some(terminal::Output::from(view)),
                    None => tool.call.agent_terminal(id).map(terminal::Output::from),
                };
                terminal::lines(out, id, output, terminals.expanded, ctx);
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

/// A coloured unified diff of one file; `old = None` is a new file.
pub(crate) fn diff_lines(
    out: &mut Vec<Line<'static>>,
    path: &str,
    old: Option<&str>,
    new: &str,
    ctx: Ctx,
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
        if shown < DIFF_LINES {
            let piece = [Span::styled(hunk.header().to_string(), theme.diff_hunk())];
            wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Char);
            shown += 1;
        } else {
            hidden += 1;
        }
        for change in hunk.iter_changes() {
            if shown >= DIFF_LINES {
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
mod tests {
    use super::*;
    use crate::model::{Location, PlanStatus, ToolCall, WireStatus};
    use crate::state::ToolState;

    fn ctx(width: usize) -> Ctx {
        Ctx {
            width,
            expanded: false,
            theme: Theme::with_color(true),
        }
    }

    fn rows(kind: EntryKind, ctx: Ctx) -> Vec<String> {
        let entry = Entry {
            id: 0,
            rev: 0,
            kind,
        };
        let laid = layout(&entry, ctx, Terminals::NONE);
        assert_eq!(measure(&entry, ctx, Terminals::NONE), laid.len());
        (0..laid.len())
            .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect()
    }

    fn tool(kind: ToolKind, state: ToolState) -> ToolEntry {
        let mut call = ToolCall::placeholder("t1");
        call.kind = kind;
        call.status = WireStatus::InProgress;
        ToolEntry { call, state }
    }

    #[test]
    fn user_text_has_a_marker_and_hanging_indent() {
        let got = rows(EntryKind::User("hello there world\nsecond".into()), ctx(12));
        assert_eq!(got, ["› hello", "  there", "  world", "  second"]);
    }

    #[test]
    fn crlf_line_endings_are_newlines() {
        let mut t = tool(ToolKind::Execute, ToolState::Completed);
        t.call.content = vec![ToolContent::Text {
            text: "one\r\ntwo\rthree".into(),
        }];
        let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
        assert_eq!(&got[1..], ["  one", "  two␍three"]);
        let open = Ctx {
            expanded: true,
            ..ctx(40)
        };
        let entry = Entry {
            id: 0,
            rev: 0,
            kind: EntryKind::Thought("a\r".into()),
        };
        let mut laid = layout(&entry, open, Terminals::NONE);
        let entry = Entry {
            id: 0,
            rev: 1,
            kind: EntryKind::Thought("a\r\nb".into()),
        };
        relayout(&mut laid, &entry, open, Terminals::NONE);
        let got: Vec<String> = (0..laid.len())
            .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect();
        assert_eq!(got, ["▾ thinking", "  a", "  b"]);
    }

    #[test]
    fn thoughts_fold_to_one_line_or_unfold() {
        let text = "\nfirst idea is long\nsecond";
        assert_eq!(
            rows(EntryKind::Thought(text.into()), ctx(20)),
            ["▸ thinking: first i…"]
        );
        let open = Ctx {
            expanded: true,
            ..ctx(20)
        };
        assert_eq!(
            rows(EntryKind::Thought(text.into()), open),
            ["▾ thinking", "  ", "  first idea is long", "  second"]
        );
    }

    #[test]
    fn unfolded_thoughts_stream_like_whole_ones() {
        let open = Ctx {
            expanded: true,
            ..ctx(12)
        };
        let text = "one two three\nfour\n\nfive six seven eight";
        let mut plain = PlainStream::thought(open);
        for end in 1..=text.len() {
            plain.update(&text[..end]);
            let mut whole = PlainStream::thought(open);
            whole.update(&text[..end]);
            let got: Vec<_> = (0..plain.len()).map(|i| plain.line(i).cloned()).collect();
            let want: Vec<_> = (0..whole.len()).map(|i| whole.line(i).cloned()).collect();
            assert_eq!(got, want, "at {end}");
        }
    }

    #[test]
    fn execute_tool_shows_command_locations_and_capped_output() {
        let mut t = tool(ToolKind::Execute, ToolState::Completed);
        t.call.title = "Run tests".into();
        t.call.raw_input = Some(serde_json::json!({"command": "cargo test", "description": "x"}));
        t.call.locations = vec![Location {
            path: "src/lib.rs".into(),
            line: Some(3),
        }];
        let output: Vec<String> = (1..=15).map(|i| format!("line {i}")).collect();
        t.call.content = vec![ToolContent::Text {
            text: output.join("\n"),
        }];
        let got = rows(EntryKind::Tool(Box::new(t.clone())), ctx(40));
        assert_eq!(got[0], "✓ [execute] Run tests — done");
        assert_eq!(got[1], "  $ cargo test");
        assert_eq!(got[2], "  src/lib.rs:3");
        assert_eq!(got[3], "  line 1");
        assert_eq!(got[14], "  line 12");
        assert_eq!(got[15], "  … 3 more lines · Ctrl-O expand");
        assert_eq!(got.len(), 16);
        // Ctrl-O: the whole output.
        let views = std::collections::BTreeMap::new();
        let open = Terminals {
            views: &views,
            expanded: true,
        };
        let entry = Entry {
            id: 0,
            rev: 0,
            kind: EntryKind::Tool(Box::new(t)),
        };
        let laid = layout(&entry, ctx(40), open);
        let all: Vec<String> = (0..laid.len())
            .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect();
        assert_eq!(all.len(), 18);
        assert_eq!(all[17], "  line 15");
    }

    #[test]
    fn tool_states_have_symbols_and_colours() {
        use ratatui::style::Color;
        let cases = [
            (ToolState::Pending, "○", Some(Color::DarkGray)),
            (ToolState::AwaitingApproval, "?", Some(Color::Yellow)),
            (ToolState::InProgress, "◐", Some(Color::Blue)),
            (ToolState::Completed, "✓", Some(Color::Green)),
            (ToolState::Failed, "✗", Some(Color::Red)),
            (ToolState::Rejected, "⊘", Some(Color::Red)),
            (ToolState::Cancelled, "⊘", None),
        ];
        for (state, symbol, color) in cases {
            let entry = Entry {
                id: 0,
                rev: 0,
                kind: EntryKind::Tool(Box::new(tool(ToolKind::Read, state))),
            };
            let laid = layout(&entry, ctx(60), Terminals::NONE);
            let header = laid.line(0).cloned().unwrap_or_default();
            assert_eq!(header.spans[0].content, symbol);
            assert_eq!(header.spans[0].style.fg, color, "{state:?}");
            assert!(
                header
                    .to_string()
                    .ends_with(&format!("— {}", state.label()))
            );
        }
    }

    #[test]
    fn diffs_are_unified_with_context() {
        let old: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l5\n", "five\n");
        let mut t = tool(ToolKind::Edit, ToolState::AwaitingApproval);
        t.call.title = "Edit a.rs".into();
        t.call.content = vec![ToolContent::Diff {
            path: "src/a.rs".into(),
            old: Some(old),
            new,
        }];
        // While the card shows it, the transcript only points there.
        let waiting = rows(EntryKind::Tool(Box::new(t.clone())), ctx(60));
        assert_eq!(
            waiting,
            [
                "? [edit] Edit a.rs — awaiting approval",
                "  diff of src/a.rs: in the permission card"
            ]
        );
        t.state = ToolState::InProgress;
        let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
        assert_eq!(
            got,
            [
                "◐ [edit] Edit a.rs — running",
                "  --- a/src/a.rs",
                "  +++ b/src/a.rs",
                "  @@ -2,7 +2,7 @@",
                "   l2",
                "   l3",
                "   l4",
                "  -l5",
                "  +five",
                "   l6",
                "   l7",
                "   l8",
            ]
        );
    }

    #[test]
    fn new_file_diff_is_all_additions() {
        let mut t = tool(ToolKind::Edit, ToolState::Pending);
        t.call.content = vec![ToolContent::Diff {
            path: "new.txt".into(),
            old: None,
            new: "a\nb\n".into(),
        }];
        let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
        assert_eq!(
            &got[1..],
            [
                "  --- /dev/null",
                "  +++ b/new.txt",
                "  @@ -0,0 +1,2 @@",
                "  +a",
                "  +b"
            ]
        );
    }

    #[test]
    fn terminal_content_and_title_fallback() {
        let mut t = tool(ToolKind::Other, ToolState::InProgress);
        t.call.content = vec![ToolContent::Terminal {
            id: "term-1".into(),
        }];
        let got = rows(EntryKind::Tool(Box::new(t)), ctx(40));
        assert_eq!(
            got,
            [
                "◐ [other] t1 — running",
                "  terminal term-1 (no output yet)"
            ]
        );
    }

    #[test]
    fn plan_entries_have_checkboxes() {
        let plan = vec![
            PlanEntry {
                content: "read".into(),
                status: PlanStatus::Completed,
            },
            PlanEntry {
                content: "write".into(),
                status: PlanStatus::InProgress,
            },
            PlanEntry {
                content: "test".into(),
                status: PlanStatus::Pending,
            },
        ];
        assert_eq!(
            rows(EntryKind::Plan(plan), ctx(40)),
            ["Plan", "  ☑ read", "  ◐ write", "  ☐ test"]
        );
    }

    #[test]
    fn info_and_error_lines() {
        assert_eq!(
            rows(EntryKind::Info("turn cancelled".into()), ctx(40)),
            ["turn cancelled"]
        );
        let error = EntryKind::Error {
            message: "the agent exited (1)".into(),
            detail: vec!["panic: boom".into(), "at main.rs".into()],
        };
        assert_eq!(
            rows(error, ctx(40)),
            ["✗ the agent exited (1)", "  panic: boom", "  at main.rs"]
        );
    }

    #[test]
    fn agent_strings_are_sanitized_everywhere() {
        let evil = "\u{1b}[31mred\u{1b}]0;title\u{7}";
        let mut t = tool(ToolKind::Execute, ToolState::Failed);
        t.call.title = evil.into();
        t.call.raw_input = Some(serde_json::json!({ "command": evil }));
        t.call.locations = vec![Location {
            path: evil.into(),
            line: None,
        }];
        t.call.content = vec![
            ToolContent::Text { text: evil.into() },
            ToolContent::Diff {
                path: evil.into(),
                old: Some(evil.into()),
                new: format!("{evil}\n{evil}"),
            },
            ToolContent::Terminal { id: evil.into() },
        ];
        let kinds = [
            EntryKind::User(evil.into()),
            EntryKind::Agent(format!(
                "# {evil}\n\n- {evil}\n\n```\n{evil}\n```\n\n[{evil}]({evil}) `{evil}`"
            )),
            EntryKind::Thought(evil.into()),
            EntryKind::Tool(Box::new(t)),
            EntryKind::Plan(vec![PlanEntry {
                content: evil.into(),
                status: PlanStatus::Pending,
            }]),
            EntryKind::Info(evil.into()),
            EntryKind::Error {
                message: evil.into(),
                detail: vec![evil.into()],
            },
        ];
        for expanded in [false, true] {
            for kind in kinds.clone() {
                let got = rows(
                    kind.clone(),
                    Ctx {
                        expanded,
                        ..ctx(30)
                    },
                )
                .join("\n");
                assert!(got.contains('␛'), "{kind:?}: {got}");
                assert!(
                    !got.chars().any(|c| c.is_control() && c != '\n'),
                    "{kind:?}: {got:?}"
                );
            }
        }
    }

    fn shown(t: ToolEntry, width: usize, terminals: Terminals<'_>) -> String {
        let entry = Entry {
            id: 0,
            rev: 0,
            kind: EntryKind::Tool(Box::new(t)),
        };
        let laid = layout(&entry, ctx(width), terminals);
        (0..laid.len())
            .map(|i| laid.line(i).map(|l| l.to_string()).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// codex-acp's own terminal, as its `_meta` streamed it.
    fn codex_call() -> ToolEntry {
        use crate::model::TerminalMeta;
        let mut t = tool(ToolKind::Search, ToolState::Completed);
        t.call.title = "List /work/cwd".into();
        t.call.content = vec![ToolContent::Terminal { id: "c1".into() }];
        t.call.raw_output = Some(serde_json::json!({"formatted_output": "seed.txt\n"}));
        t.call.apply_terminal_meta(&[
            TerminalMeta::Started { id: "c1".into() },
            TerminalMeta::Output {
                id: "c1".into(),
                data: "seed.txt\n".into(),
            },
            TerminalMeta::Output {
                id: "c1".into(),
                data: "\u{1b}[32mnotes.txt\u{1b}[0m\n\u{1b}]0;pwned\u{7}".into(),
            },
            TerminalMeta::Exited {
                id: "c1".into(),
                exit: "exit status 0".into(),
            },
        ]);
        t
    }

    #[test]
    fn agent_run_terminal_output_shows_through_the_emulator() {
        insta::assert_snapshot!(shown(codex_call(), 40, Terminals::NONE), @r"
        ✓ [search] List /work/cwd — done
          seed.txt
          notes.txt
          exited: exit status 0
        ");
    }

    #[test]
    fn wardens_own_terminal_wins_over_the_agents_word_for_it() {
        let mut views = BTreeMap::new();
        views.insert(
            "c1".to_string(),
            TerminalView {
                output: "real output\n".into(),
                truncated: false,
                exit: None,
            },
        );
        let terminals = Terminals {
            views: &views,
            expanded: false,
        };
        let got = shown(codex_call(), 40, terminals);
        assert!(got.contains("real output"), "{got}");
        assert!(!got.contains("notes.txt"), "{got}");
    }

    #[test]
    fn agent_run_terminal_announced_without_output_is_running() {
        use crate::model::TerminalMeta;
        let mut t = tool(ToolKind::Execute, ToolState::InProgress);
        t.call.title = "ls".into();
        t.call.content = vec![ToolContent::Terminal { id: "c1".into() }];
        t.call
            .apply_terminal_meta(&[TerminalMeta::Started { id: "c1".into() }]);
        insta::assert_snapshot!(shown(t, 40, Terminals::NONE), @r"
        ◐ [execute] ls — running
          running…
        ");
    }

    #[test]
    fn fenced_tool_text_renders_as_markdown() {
        let mut t = tool(ToolKind::Execute, ToolState::Completed);
        t.call.title = "echo hello-from-mock-claude".into();
        t.call.raw_input = Some(serde_json::json!({"command": "echo hello-from-mock-claude"}));
        t.call.content = vec![ToolContent::Text {
            text: "```console\nhello-from-mock-claude\n```".into(),
        }];
        insta::assert_snapshot!(shown(t, 50, Terminals::NONE), @r"
        ✓ [execute] echo hello-from-mock-claude — done
          $ echo hello-from-mock-claude
            hello-from-mock-claude
        ");
    }

    #[test]
    fn raw_output_shows_only_when_there_is_no_content() {
        let mut t = tool(ToolKind::Search, ToolState::Completed);
        t.call.title = "List /work/cwd".into();
        t.call.raw_output = Some(serde_json::json!({
            "stdout": "seed.txt\n", "aggregated_output": "seed.txt\n",
            "formatted_output": "seed.txt\n", "exit_code": 0
        }));
        insta::assert_snapshot!(shown(t.clone(), 40, Terminals::NONE), @r"
        ✓ [search] List /work/cwd — done
          seed.txt
        ");
        t.call.raw_output = Some(serde_json::json!("File created successfully at: /w/a.txt"));
        insta::assert_snapshot!(shown(t.clone(), 60, Terminals::NONE), @r"
        ✓ [search] List /work/cwd — done
          File created successfully at: /w/a.txt
        ");
        t.call.raw_output = Some(serde_json::json!({"success": true}));
        insta::assert_snapshot!(shown(t.clone(), 40, Terminals::NONE), @r#"
        ✓ [search] List /work/cwd — done
          {
            "success": true
          }
        "#);
        t.call.content = vec![ToolContent::Text {
            text: "Listed.".into(),
        }];
        assert!(!shown(t, 40, Terminals::NONE).contains("success"));
    }

    #[test]
    fn argv_commands_are_shell_quoted() {
        let mut t = tool(ToolKind::Execute, ToolState::Completed);
        t.call.title = "touch".into();
        t.call.raw_input = Some(serde_json::json!({
            "command": ["/bin/bash", "-lc", "touch 'my file' && echo $HOME"]
        }));
        insta::assert_snapshot!(shown(t, 80, Terminals::NONE), @r"
        ✓ [execute] touch — done
          $ /bin/bash -lc 'touch '\''my file'\'' && echo $HOME'
        ");
    }
}

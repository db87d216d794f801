//! A terminal's output inside the tool call that embeds it.
//!
//! The output goes through a terminal emulator (`vt100`) on a virtual screen
//! as wide as the transcript's content and tall enough for the whole output
//! (up to [`MAX_ROWS`]): colours and text attributes become styles, carriage
//! returns, cursor moves and clears are interpreted, and only the cells'
//! text is shown. No escape sequence from the command reaches the terminal.
//!
//! The parse happens when the entry is laid out, which the transcript's cache
//! does only when the entry's revision changes (new output, the fold
//! toggled), not on every frame.

use std::num::NonZeroU16;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::entry::{Ctx, INDENT};
use super::theme::Theme;
use super::wrap::{Mode, spaces, wrap_into};
use crate::model::AgentTerminal;
use crate::sanitize::{one_line, visible};
use crate::state::{TerminalView, ToolState};

/// Lines of output shown while terminals are folded.
const FOLDED_LINES: usize = 12;
/// Rows of the virtual screen at most; older output is counted, not kept.
const MAX_ROWS: usize = 2_000;
/// How a command that ended well reports it.
const SUCCESS: &str = "exit status 0";

/// A terminal's output to show: one of warden's own terminals, or one the
/// agent runs itself and reports through `_meta` (both go through the same
/// emulator, so neither can put an escape sequence on the screen).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Output<'a> {
    pub(crate) output: &'a str,
    pub(crate) truncated: bool,
    /// Bytes of older output not kept, said in a line.
    pub(crate) dropped: u64,
    pub(crate) exit: Option<&'a str>,
}

impl<'a> From<&'a TerminalView> for Output<'a> {
    fn from(view: &'a TerminalView) -> Self {
        Output {
            output: &view.output,
            truncated: view.truncated,
            dropped: view.dropped,
            exit: view.exit.as_deref(),
        }
    }
}

impl<'a> From<&'a AgentTerminal> for Output<'a> {
    fn from(terminal: &'a AgentTerminal) -> Self {
        Output {
            output: terminal.output(),
            truncated: terminal.truncated,
            dropped: terminal.dropped(),
            exit: terminal.exit.as_deref(),
        }
    }
}

/// Lay out terminal `id` (`view` is its output, if any arrived yet), indented
/// under the header of the tool call, which is in `state`.
pub(crate) fn lines(
    out: &mut Vec<Line<'static>>,
    id: &str,
    view: Option<Output<'_>>,
    state: ToolState,
    expanded: bool,
    ctx: Ctx,
) {
    let theme = ctx.theme;
    let Some(view) = view else {
        note(
            out,
            format!("terminal {} (no output yet)", one_line(id)),
            theme.dim(),
            ctx,
        );
        return;
    };
    let cols = ctx
        .width
        .saturating_sub(INDENT)
        .clamp(1, usize::from(u16::MAX));
    let screen = emulate(view.output, cols, colors_on(theme));
    let rows = usize::from(screen.used);
    let total = screen.dropped + rows;
    let shown = if expanded {
        rows
    } else {
        rows.min(FOLDED_LINES)
    };
    let hidden = total - shown;
    if view.dropped > 0 {
        note(
            out,
            format!("… {} of older output dropped", size(view.dropped)),
            theme.dim(),
            ctx,
        );
    }
    if hidden > 0 {
        let hint = if expanded {
            format!("… {hidden} earlier lines not kept")
        } else {
            format!("… {hidden} earlier lines · Ctrl-O expand")
        };
        note(out, hint, theme.dim(), ctx);
    }
    let indent = [spaces(INDENT)];
    for row in rows - shown..rows {
        wrap_into(
            out,
            &screen.row(row),
            &indent,
            &indent,
            ctx.width,
            Mode::Char,
        );
    }
    if expanded && total > FOLDED_LINES {
        note(out, "Ctrl-O collapse".into(), theme.dim(), ctx);
    }
    match view.exit {
        Some(exit) => {
            let style = if exit == SUCCESS {
                theme.fg(Color::Green).add_modifier(Modifier::DIM)
            } else {
                theme.fg(Color::Red)
            };
            note(out, format!("exited: {}", one_line(exit)), style, ctx);
        }
        None => {
            // Only a call that runs says so: one waiting for a decision
            // (or denied) has not started, whatever its terminal shows.
            let said = match state {
                ToolState::InProgress => Some("running…"),
                ToolState::Pending | ToolState::AwaitingApproval | ToolState::Approved => {
                    Some("not started")
                }
                ToolState::Rejected => Some("not run"),
                ToolState::Completed
                | ToolState::Failed
                | ToolState::Cancelled
                | ToolState::NoResult => None,
            };
            if let Some(said) = said {
                note(out, said.into(), theme.dim(), ctx);
            }
        }
    }
    if view.truncated && view.dropped == 0 {
        note(
            out,
            "output truncated by the agent's limit".into(),
            theme.dim(),
            ctx,
        );
    }
}

/// A byte count for people: "512 bytes", "48 KB", "12 MB".
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{} KB", bytes / 1024),
        _ => format!("{} MB", bytes / 1_048_576),
    }
}

/// One indented line of our own, in `style`.
fn note(out: &mut Vec<Line<'static>>, text: String, style: Style, ctx: Ctx) {
    let indent = [spaces(INDENT)];
    let piece = [Span::styled(text, style)];
    wrap_into(out, &piece, &indent, &indent, ctx.width, Mode::Word);
}

/// Whether the theme draws colours (`NO_COLOR` is not set).
fn colors_on(theme: Theme) -> bool {
    theme.fg(Color::Reset).fg.is_some()
}

/// The emulated output, read row by row on demand (a folded terminal shows
/// only its last rows).
struct Screen {
    parser: vt100::Parser,
    /// Rows down to the last one with something on it.
    used: u16,
    /// Source lines dropped before the emulator saw the rest.
    dropped: usize,
    colors: bool,
}

impl Screen {
    /// Row `row` as runs of one style.
    fn row(&self, row: usize) -> Vec<Span<'static>> {
        let Ok(row) = u16::try_from(row) else {
            return Vec::new();
        };
        let screen = self.parser.screen();
        row_spans(screen, row, screen.size().1.get(), self.colors)
    }
}

/// Run `output` through a virtual terminal `cols` wide.
fn emulate(output: &str, cols: usize, colors: bool) -> Screen {
    let (start, rows) = tail(output, cols);
    let dropped = output.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let size = |n: usize| {
        u16::try_from(n)
            .ok()
            .and_then(NonZeroU16::new)
            .unwrap_or(NonZeroU16::MIN)
    };
    let (height, width) = (size(rows), size(cols));
    let mut parser = vt100::Parser::new(height, width, 0);
    // Output comes from pipes: a bare newline means what a terminal's line
    // discipline would make of it, a carriage return and a line feed.
    let mut pieces = output[start..].split('\n');
    if let Some(first) = pieces.next() {
        parser.process(first.as_bytes());
    }
    for piece in pieces {
        parser.process(b"\r\n");
        parser.process(piece.as_bytes());
    }
    let screen = parser.screen();
    let used = (0..height.get())
        .rev()
        .find(|&row| {
            (0..width.get()).any(|col| screen.cell(row, col).is_some_and(|cell| !is_blank(cell)))
        })
        .map_or(0, |row| row + 1);
    Screen {
        parser,
        used,
        dropped,
        colors,
    }
}

/// Where in `output` the emulator starts, and the screen rows it needs from
/// there: whole lines from the end while they fit in [`MAX_ROWS`], each
/// counted at one row per `cols` bytes (never fewer rows than it takes, so
/// nothing scrolls off the virtual screen).
fn tail(output: &str, cols: usize) -> (usize, usize) {
    let mut rows = 0;
    let mut end = output.len();
    loop {
        let begin = output[..end].rfind('\n').map_or(0, |i| i + 1);
        let need = (end - begin) / cols + 1;
        if rows + need > MAX_ROWS {
            if rows > 0 {
                return (end + 1, rows);
            }
            // The last line alone is longer than the screen: keep its end.
            let cut = crate::text::ceil_char_boundary(output, end - (MAX_ROWS - 1) * cols);
            return (cut, MAX_ROWS);
        }
        rows += need;
        if begin == 0 {
            return (0, rows);
        }
        end = begin - 1;
    }
}

/// Row `row` of the screen as runs of one style, without its trailing blanks.
fn row_spans(screen: &vt100::Screen, row: u16, cols: u16, colors: bool) -> Vec<Span<'static>> {
    let Some(last) = (0..cols)
        .rev()
        .find(|&col| screen.cell(row, col).is_some_and(|cell| !is_blank(cell)))
    else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    let mut text = String::new();
    let mut style = Style::new();
    for col in 0..=last {
        let Some(cell) = screen.cell(row, col) else {
            continue;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let cell_style = style_of(cell, colors);
        if cell_style != style && !text.is_empty() {
            spans.push(Span::styled(visible(&text).into_owned(), style));
            text.clear();
        }
        style = cell_style;
        match cell.contents() {
            "" => text.push(' '),
            contents => text.push_str(contents),
        }
    }
    if !text.is_empty() {
        spans.push(Span::styled(visible(&text).into_owned(), style));
    }
    spans
}

/// A cell that shows nothing: no text, no background, no underline.
fn is_blank(cell: &vt100::Cell) -> bool {
    matches!(cell.contents(), "" | " ")
        && cell.bgcolor() == vt100::Color::Default
        && !cell.inverse()
        && !cell.underline()
}

/// The cell's attributes as a style; colours only when `colors`.
fn style_of(cell: &vt100::Cell, colors: bool) -> Style {
    let mut style = Style::new();
    if colors {
        if let Some(fg) = color(cell.fgcolor()) {
            style = style.fg(fg);
        }
        if let Some(bg) = color(cell.bgcolor()) {
            style = style.bg(bg);
        }
    }
    let modifiers = [
        (cell.bold(), Modifier::BOLD),
        (cell.dim(), Modifier::DIM),
        (cell.italic(), Modifier::ITALIC),
        (cell.underline(), Modifier::UNDERLINED),
        (cell.inverse(), Modifier::REVERSED),
    ];
    for (on, modifier) in modifiers {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    style
}

/// A terminal colour: the 16 ANSI colours by name (so the user's palette
/// applies), the rest of the 256 by index, true colour as is.
fn color(c: vt100::Color) -> Option<Color> {
    let named = match c {
        vt100::Color::Default => return None,
        vt100::Color::Rgb(r, g, b) => return Some(Color::Rgb(r, g, b)),
        vt100::Color::Idx(i) => match i {
            0 => Color::Black,
            1 => Color::Red,
            2 => Color::Green,
            3 => Color::Yellow,
            4 => Color::Blue,
            5 => Color::Magenta,
            6 => Color::Cyan,
            7 => Color::Gray,
            8 => Color::DarkGray,
            9 => Color::LightRed,
            10 => Color::LightGreen,
            11 => Color::LightYellow,
            12 => Color::LightBlue,
            13 => Color::LightMagenta,
            14 => Color::LightCyan,
            15 => Color::White,
            i => Color::Indexed(i),
        },
    };
    Some(named)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use insta::assert_snapshot;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::*;
    use crate::model::{ToolCall, ToolContent, ToolKind, WireStatus};
    use crate::state::{Entry, EntryKind, ToolEntry, ToolState};
    use crate::ui::entry::{Terminals, layout, measure};
    use crate::ui::tests::buffer_text;

    const WIDTH: u16 = 50;
    const HEIGHT: u16 = 20;

    fn view(output: &str, exit: Option<&str>) -> TerminalView {
        TerminalView {
            dropped: 0,
            output: output.into(),
            truncated: false,
            exit: exit.map(Into::into),
        }
    }

    /// A tool call running `command` in terminal "term-1".
    fn entry(command: &str, state: ToolState) -> Entry {
        let mut call = ToolCall::placeholder("t1");
        call.kind = ToolKind::Execute;
        call.title = "Run it".into();
        call.status = WireStatus::InProgress;
        call.raw_input = Some(serde_json::json!({ "command": command }));
        call.content = vec![ToolContent::Terminal {
            id: "term-1".into(),
        }];
        Entry {
            id: 0,
            rev: 0,
            kind: EntryKind::Tool(Box::new(ToolEntry::new(call, state))),
        }
    }

    /// The entry drawn at the top of a `WIDTH` x `HEIGHT` buffer.
    fn draw(entry: &Entry, view: Option<TerminalView>, expanded: bool, color: bool) -> Buffer {
        let mut views = BTreeMap::new();
        if let Some(view) = view {
            views.insert("term-1".to_string(), view);
        }
        let terminals = Terminals {
            views: &views,
            expanded,
        };
        let ctx = Ctx {
            width: usize::from(WIDTH),
            expanded: false,
            theme: Theme::with_color(color),
        };
        let laid = layout(entry, ctx, terminals);
        assert_eq!(measure(entry, ctx, terminals), laid.len());
        let mut buf = Buffer::empty(Rect::new(0, 0, WIDTH, HEIGHT));
        for (y, i) in (0..HEIGHT).zip(0..laid.len()) {
            if let Some(line) = laid.line(i) {
                buf.set_line(0, y, line, WIDTH);
            }
        }
        buf
    }

    /// Where `text` starts in the buffer.
    fn find(buf: &Buffer, text: &str) -> (u16, u16) {
        let screen = buffer_text(buf);
        screen
            .lines()
            .enumerate()
            .find_map(|(y, line)| {
                line.find(text)
                    .map(|x| (line[..x].chars().count() as u16, y as u16))
            })
            .unwrap_or_else(|| panic!("{text:?} not on screen:\n{screen}"))
    }

    fn assert_clean(buf: &Buffer) {
        for cell in buf.content() {
            assert!(
                !cell.symbol().chars().any(char::is_control),
                "{:?}",
                cell.symbol()
            );
        }
    }

    /// Row `row` of the emulated screen as plain text.
    fn text_of(screen: &Screen, row: usize) -> String {
        screen.row(row).iter().map(|s| s.content.as_ref()).collect()
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn colours_become_styles_and_nothing_raw_is_drawn() {
        let output = "\u{1b}[32mgreen\u{1b}[0m and plain\r\ndone\r\n";
        let buf = draw(
            &entry("make", ToolState::Completed),
            Some(view(output, Some("exit status 0"))),
            false,
            true,
        );
        assert_snapshot!("terminal_exited_0_50x20", buffer_text(&buf));
        let (x, y) = find(&buf, "green");
        for dx in 0..5 {
            assert_eq!(buf[(x + dx, y)].fg, Color::Green);
        }
        let (x, y) = find(&buf, "and plain");
        assert_eq!(buf[(x, y)].fg, Color::Reset);
        let (x, y) = find(&buf, "exited: exit status 0");
        assert_eq!(buf[(x, y)].fg, Color::Green);
        assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
        assert!(
            buf.content().iter().all(|c| !c.symbol().contains('\u{1b}')),
            "{}",
            buffer_text(&buf)
        );
        assert_clean(&buf);
    }

    #[test]
    fn long_output_folds_to_its_last_lines() {
        let buf = draw(
            &entry("seq 16", ToolState::Completed),
            Some(view(&numbered(16), Some("exit status 0"))),
            false,
            true,
        );
        assert_snapshot!("terminal_long_collapsed_50x20", buffer_text(&buf));
    }

    #[test]
    fn long_output_unfolds_whole() {
        let buf = draw(
            &entry("seq 16", ToolState::Completed),
            Some(view(&numbered(16), Some("exit status 0"))),
            true,
            true,
        );
        assert_snapshot!("terminal_long_expanded_50x20", buffer_text(&buf));
    }

    #[test]
    fn running_terminal() {
        let buf = draw(
            &entry("cargo build", ToolState::InProgress),
            Some(view("   Compiling warden v0.1.0\n", None)),
            false,
            true,
        );
        assert_snapshot!("terminal_running_50x20", buffer_text(&buf));
    }

    /// Claude embeds its terminal in the call before it asks: while the
    /// card waits the call has not started, and the body says so, not
    /// "running…" under "awaiting approval".
    #[test]
    fn a_terminal_of_a_call_not_yet_run_does_not_say_running() {
        let said = |state: ToolState| {
            let buf = draw(&entry("touch x", state), Some(view("", None)), false, false);
            buffer_text(&buf)
        };
        for state in [
            ToolState::Pending,
            ToolState::AwaitingApproval,
            ToolState::Approved,
        ] {
            let text = said(state);
            assert!(!text.contains("running"), "{state:?}: {text}");
            assert!(text.contains("not started"), "{state:?}: {text}");
        }
        let denied = said(ToolState::Rejected);
        assert!(
            denied.contains("— denied") && denied.contains("not run"),
            "{denied}"
        );
        assert!(said(ToolState::InProgress).contains("running…"));
        assert!(!said(ToolState::NoResult).contains("running"));
    }

    #[test]
    fn killed_terminal_is_red() {
        let buf = draw(
            &entry("sleep 100", ToolState::Failed),
            Some(view("waiting\n", Some("killed by SIGKILL"))),
            false,
            true,
        );
        assert_snapshot!("terminal_killed_50x20", buffer_text(&buf));
        let (x, y) = find(&buf, "exited: killed by SIGKILL");
        assert_eq!(buf[(x, y)].fg, Color::Red);
    }

    #[test]
    fn truncated_output_says_so() {
        let mut truncated = view("…the newest output\n", Some("exit status 1"));
        truncated.truncated = true;
        let buf = draw(
            &entry("yes", ToolState::Failed),
            Some(truncated),
            false,
            true,
        );
        assert_snapshot!("terminal_truncated_50x20", buffer_text(&buf));
        let (x, y) = find(&buf, "exited: exit status 1");
        assert_eq!(buf[(x, y)].fg, Color::Red);
        let (x, y) = find(&buf, "output truncated by the agent's limit");
        assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
    }

    #[test]
    fn carriage_returns_overwrite_progress() {
        let buf = draw(
            &entry("download", ToolState::Completed),
            Some(view("10%\r50%\r100%\n", Some("exit status 0"))),
            false,
            true,
        );
        assert_snapshot!("terminal_progress_50x20", buffer_text(&buf));
        let screen = buffer_text(&buf);
        assert!(!screen.contains("10%\n") && !screen.contains("50%"));
    }

    #[test]
    fn no_color_drops_colours_and_keeps_attributes() {
        let output = "\u{1b}[1;31mbold red\u{1b}[0m \u{1b}[38;5;208mindexed\u{1b}[0m\n";
        let buf = draw(
            &entry("make", ToolState::Completed),
            Some(view(output, Some("exit status 0"))),
            false,
            false,
        );
        assert_snapshot!("terminal_no_color_50x20", buffer_text(&buf));
        assert!(
            buf.content()
                .iter()
                .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
        );
        let (x, y) = find(&buf, "bold red");
        assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn missing_terminal_says_no_output_yet() {
        let buf = draw(&entry("ls", ToolState::InProgress), None, false, true);
        let (x, y) = find(&buf, "terminal term-1 (no output yet)");
        assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
    }

    #[test]
    fn colours_map_to_names_indexes_and_rgb() {
        let output = "\u{1b}[31ma\u{1b}[91mb\u{1b}[37mc\u{1b}[97md\u{1b}[38;5;100me\u{1b}[38;2;1;2;3mf\u{1b}[44mg\u{1b}[0m\n";
        let screen = emulate(output, 20, true);
        let styles: Vec<(String, Style)> = screen
            .row(0)
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        let fg = |c| Style::new().fg(c);
        assert_eq!(
            styles,
            [
                ("a".to_string(), fg(Color::Red)),
                ("b".to_string(), fg(Color::LightRed)),
                ("c".to_string(), fg(Color::Gray)),
                ("d".to_string(), fg(Color::White)),
                ("e".to_string(), fg(Color::Indexed(100))),
                ("f".to_string(), fg(Color::Rgb(1, 2, 3))),
                ("g".to_string(), fg(Color::Rgb(1, 2, 3)).bg(Color::Blue)),
            ]
        );
    }

    #[test]
    fn cursor_moves_and_clears_are_interpreted() {
        // Up one line and rewrite it; erase to the end of a line; a title
        // sequence and a bell that must leave nothing behind.
        let output = "one\ntwo\n\u{1b}[1Aowt\ngone\u{1b}[2D\u{1b}[K\n\u{1b}]0;title\u{7}\u{7}end\n";
        let screen = emulate(output, 20, true);
        let rows: Vec<String> = (0..usize::from(screen.used))
            .map(|r| text_of(&screen, r))
            .collect();
        assert_eq!(rows, ["one", "owt", "go", "end"]);
    }

    #[test]
    fn long_lines_wrap_at_the_content_width() {
        let screen = emulate(&format!("{}\n", "x".repeat(25)), 10, true);
        assert_eq!(screen.used, 3);
    }

    #[test]
    fn output_past_the_cap_is_counted_not_kept() {
        let output = numbered(MAX_ROWS + 500);
        let screen = emulate(&output, 40, true);
        let used = usize::from(screen.used);
        assert_eq!(screen.dropped + used, MAX_ROWS + 500);
        assert!(used < MAX_ROWS);
        let last = text_of(&screen, used - 1);
        assert_eq!(last, format!("line {}", MAX_ROWS + 500));
        // One enormous line keeps its end.
        let huge = format!("{}é{}end", "a".repeat(MAX_ROWS * 40), "b".repeat(7));
        let screen = emulate(&huge, 40, true);
        let used = usize::from(screen.used);
        let last = text_of(&screen, used - 1);
        assert!(last.ends_with("bbbbbbbend"), "{last}");
        assert!(used <= MAX_ROWS);
    }

    #[test]
    fn the_screen_follows_output_and_the_fold() {
        use crate::state::{Action, ChatState, Msg};
        use crate::ui::{View, draw};
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;

        let mut state = ChatState::new("demo", "/tmp");
        let EntryKind::Tool(tool) = entry("seq", ToolState::InProgress).kind else {
            unreachable!()
        };
        state.session.transcript.upsert_tool(tool.call);
        let mut ui = View::with_theme(Theme::with_color(true));
        let mut term = Terminal::new(TestBackend::new(50, 24)).expect("terminal");
        let mut screen = |state: &ChatState, ui: &mut View| {
            let done = term.draw(|f| draw(f, state, ui)).expect("draw");
            buffer_text(done.buffer)
        };
        assert!(screen(&state, &mut ui).contains("terminal term-1 (no output yet)"));
        let output = |n| Msg::TerminalOutput {
            id: "term-1".into(),
            view: view(&numbered(n), None),
        };
        state.update(output(3));
        let got = screen(&state, &mut ui);
        assert!(got.contains("line 3") && got.contains("running…"), "{got}");
        state.update(output(15));
        let got = screen(&state, &mut ui);
        assert!(got.contains("… 3 earlier lines · Ctrl-O expand"), "{got}");
        assert!(!got.contains("line 3\n"), "{got}");
        state.update(Msg::Action(Action::ToggleTerminals));
        let got = screen(&state, &mut ui);
        assert!(
            got.contains("line 1\n") && got.contains("Ctrl-O collapse"),
            "{got}"
        );
    }

    #[test]
    fn hostile_output_never_reaches_the_screen() {
        let evil = "\u{1b}]52;c;aGk=\u{7}\u{1b}P+q\u{1b}\\\u{9b}31m\u{1b}[?1049h\u{1b}[6n\t\u{0}x\u{202e}y\n";
        for expanded in [false, true] {
            let buf = draw(
                &entry("evil", ToolState::Completed),
                Some(view(evil, Some("exit status 0\u{1b}[31m"))),
                expanded,
                true,
            );
            assert_clean(&buf);
        }
    }
}

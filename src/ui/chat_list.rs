//! The chat list: every open chat in two rows (its number, agent and
//! label; then its mode, the requests it has waiting and what it is doing),
//! the chat on screen marked with a bar. On a wide screen it is a sidebar
//! beside the chat; on a narrow one a box over the chat while it has the
//! keys. Also the chooser of a new chat's agent.
//!
//! Labels come sanitized from `ChatSlot::label`; agent names go through
//! `one_line` here; everything is cut by display width. The work is
//! O(chats): nothing reads a transcript beyond what `label` needs.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{Mode as Wrap, spans_width, str_width, truncate_end, truncate_start};
use super::wrap::{spaces, wrap_text_into};
use crate::sanitize::one_line;
use crate::state::workspace::close_question;
use crate::state::{ChatFocus, ChatSlot, Composer, Connection, Workspace};

/// The list's title.
pub(crate) const TITLE: &str = "Chats";
/// The keys while the list has them.
pub(crate) const HINT: &str = "Enter open · n new · r rename · x close · o past chats · Esc back";
/// The sidebar's keys: the same, and hiding it.
pub(crate) const SIDEBAR_HINT: &str =
    "Enter open · n new · r rename · x close · o past chats · s hide list · Esc back";
/// The keys while a chat's name is typed.
pub(crate) const RENAME_HINT: &str = "Enter save · Esc cancel";
/// The end of the close question: its keys.
const CONFIRM_KEYS: &str = " · y close · n keep";
/// How the list is reached, on the sidebar's title row.
const KEY: &str = "Ctrl-L";
/// The chooser of a new chat's agent.
pub(crate) const NEW_TITLE: &str = "New chat with…";
/// The chooser's keys.
pub(crate) const NEW_HINT: &str = "Enter or 1-9 start · Esc cancel";
/// In the chooser when no agent is configured.
const NO_AGENTS: &str = "no agent is configured";
/// The sidebar's width, its border included.
pub(crate) const SIDEBAR_W: u16 = 30;
/// The narrowest screen with a sidebar.
pub(crate) const SIDEBAR_MIN_SCREEN: u16 = 100;
/// The widest the box over a narrow screen gets.
const BOX_MAX_W: u16 = 60;
/// Beside the chat on screen.
const BAR: &str = "▌";
/// Before a chat's number: the bar's column and a space.
const LEAD: usize = 2;
/// Before the badges: under the agent's name.
const BADGE_INDENT: usize = 4;
/// Before the chooser's selected agent.
const MARK: &str = "› ";

/// Where the list landed.
#[derive(Debug, Default)]
pub(crate) struct Drawn {
    /// The two rows of a chat, and its number (1-based).
    pub(crate) rows: Vec<(Rect, usize)>,
    /// Where the terminal cursor goes (in the name being typed).
    pub(crate) cursor: Option<Position>,
    /// Chats out of view above and below, when they do not all fit.
    pub(crate) hidden: (usize, usize),
}

/// "↑ 2 · ↓ 3 more" for chats out of view; empty when all show.
fn more(hidden: (usize, usize)) -> String {
    match hidden {
        (0, 0) => String::new(),
        (0, below) => format!("↓ {below} more"),
        (above, 0) => format!("↑ {above} more"),
        (above, below) => format!("↑ {above} · ↓ {below} more"),
    }
}

/// Whether the list has the keys (the list itself, a rename, a close
/// question).
pub(crate) fn has_keys(focus: &ChatFocus) -> bool {
    matches!(
        focus,
        ChatFocus::List { .. } | ChatFocus::Rename { .. } | ChatFocus::ConfirmClose { .. }
    )
}

/// Whether a screen `width` columns wide shows the sidebar.
pub(crate) fn sidebar_shown(ws: &Workspace, width: u16) -> bool {
    width >= SIDEBAR_MIN_SCREEN && ws.sidebar && (ws.chats.len() >= 2 || has_keys(&ws.focus))
}

/// The list position highlighted, while the list has the keys.
fn selection(ws: &Workspace) -> Option<usize> {
    match &ws.focus {
        ChatFocus::List { selected } if !ws.chats.is_empty() => {
            Some((*selected).min(ws.chats.len() - 1))
        }
        ChatFocus::Rename { chat, .. } | ChatFocus::ConfirmClose { chat } => ws.position(*chat),
        _ => None,
    }
}

/// Items joined with " · ", as many to a row as fit.
fn pack(text: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut rows: Vec<String> = Vec::new();
    for item in text.split(" · ") {
        match rows.last_mut() {
            Some(row) if str_width(row) + 3 + str_width(item) <= width => {
                row.push_str(" · ");
                row.push_str(item);
            }
            _ => rows.push(truncate_end(item, width).into_owned()),
        }
    }
    rows.into_iter()
        .map(|row| Line::from(Span::styled(row, theme.dim())))
        .collect()
}

/// Under the list (drawn under the chats' numbers, `width` columns): its
/// keys, the rename keys, or the close question.
fn bottom(ws: &Workspace, width: usize, sidebar: bool, theme: Theme) -> Vec<Line<'static>> {
    match &ws.focus {
        ChatFocus::List { .. } if sidebar => pack(SIDEBAR_HINT, width, theme),
        ChatFocus::List { .. } => pack(HINT, width, theme),
        ChatFocus::Rename { .. } => pack(RENAME_HINT, width, theme),
        ChatFocus::ConfirmClose { chat } => {
            let mut out = Vec::new();
            if let Some(slot) = ws.chat(*chat) {
                let question = close_question(slot);
                // The keys on a row of their own.
                let (ask, keys) = match question.strip_suffix(CONFIRM_KEYS) {
                    Some(ask) => (ask, Some(CONFIRM_KEYS.trim_start_matches(" · "))),
                    None => (question.as_str(), None),
                };
                wrap_text_into(&mut out, ask, theme.confirm(), &[], &[], width, Wrap::Word);
                if let Some(keys) = keys {
                    out.push(Line::from(Span::styled(
                        truncate_end(keys, width).into_owned(),
                        theme.prompt(),
                    )));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// A chat's badges, "Default ⚑ 2 pending" or "Plan ● working", fitted to
/// `width` (the pending count shortens to "⚑ 2"). A chat with requests
/// waiting is waiting for the user, not working.
fn badges(slot: &ChatSlot, width: usize, theme: Theme) -> Vec<Span<'static>> {
    let state = &slot.state;
    let pending = slot.pending();
    let status = match state.session.connection {
        Connection::Down => Some(Span::styled("stopped", theme.down())),
        Connection::Starting => Some(Span::styled("starting…", theme.starting())),
        Connection::Ready { .. } if slot.running() && pending == 0 => {
            Some(Span::styled("● working", theme.working()))
        }
        Connection::Ready { .. } => None,
    };
    let build = |short: bool| {
        let mut spans = vec![Span::styled(
            state.gate.mode.label(),
            theme.mode(state.gate.mode),
        )];
        if let Some(badge) = super::footer::bypass_badge(state, theme) {
            spans.push(Span::raw(" "));
            spans.push(badge);
        }
        if pending > 0 {
            let text = if short {
                format!("⚑ {pending}")
            } else {
                format!("⚑ {pending} pending")
            };
            spans.push(Span::raw(" "));
            spans.push(Span::styled(text, theme.pending()));
        }
        if let Some(status) = &status {
            spans.push(Span::raw(" "));
            spans.push(status.clone());
        }
        spans
    };
    let full = build(false);
    if spans_width(&full) <= width || pending == 0 {
        full
    } else {
        build(true)
    }
}

/// "N agent · label": the agent takes at most half the room.
fn title_spans(
    slot: &ChatSlot,
    number: usize,
    width: usize,
    theme: Theme,
) -> (Vec<Span<'static>>, usize) {
    let number = format!("{number} ");
    let room = width.saturating_sub(str_width(&number));
    let agent = one_line(&slot.state.session.agent_name);
    let agent = truncate_end(&agent, room / 2).into_owned();
    let head = vec![
        Span::styled(number, theme.bold()),
        Span::styled(agent, theme.dim()),
        Span::styled(" · ", theme.dim()),
    ];
    let rest = width.saturating_sub(spans_width(&head));
    (head, rest)
}

/// The name being typed, cut so the cursor stays in view; the cursor's
/// column from the field's start.
fn field_spans(field: &Composer, room: usize, theme: Theme) -> (Vec<Span<'static>>, usize) {
    let text = field.text();
    let cursor = field.cursor().min(text.len());
    let before = one_line(text.get(..cursor).unwrap_or(text));
    let after = one_line(text.get(cursor..).unwrap_or(""));
    let before = truncate_start(&before, room.saturating_sub(1)).into_owned();
    let at = str_width(&before);
    (
        vec![
            Span::styled(before, theme.plain()),
            Span::styled(after, theme.plain()),
        ],
        at,
    )
}

/// Draw the chats and what goes under them into `area` (no border).
fn render_list(
    buf: &mut Buffer,
    area: Rect,
    ws: &Workspace,
    under: &[Line<'static>],
    theme: Theme,
) -> Drawn {
    let mut drawn = Drawn::default();
    if area.is_empty() || area.width <= BADGE_INDENT as u16 {
        return drawn;
    }
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    // The rows under the list; the list keeps one chat while it can.
    let under_h = under.len().min(height.saturating_sub(2));
    let gap = usize::from(under_h > 0 && height >= under_h + 3);
    let list_h = height - under_h - gap;
    // under_h < height, a u16.
    let first_under = area.bottom() - under_h as u16;
    for (y, line) in (first_under..area.bottom()).zip(under) {
        buf.set_line(area.x + LEAD as u16, y, line, area.width - LEAD as u16);
    }

    let selected = selection(ws);
    let slots = list_h / 2;
    let keep = selected.unwrap_or(ws.active);
    let top = (keep + 1).saturating_sub(slots);
    let mut y = area.y;
    for (i, slot) in ws.chats.iter().enumerate().skip(top).take(slots) {
        let on_screen = i == ws.active;
        let row = Rect::new(area.x, y, area.width, 2);
        if on_screen {
            buf.set_stringn(area.x, y, BAR, 1, theme.chat_marker());
            buf.set_stringn(area.x, y + 1, BAR, 1, theme.chat_marker());
        }
        let x = area.x + LEAD as u16;
        let room = width.saturating_sub(LEAD);
        let (mut spans, rest) = title_spans(slot, i + 1, room, theme);
        let label_style = if on_screen {
            theme.bold()
        } else {
            theme.plain()
        };
        match &ws.focus {
            ChatFocus::Rename { chat, field } if *chat == slot.id => {
                let (field, at) = field_spans(field, rest, theme);
                let col = (spans_width(&spans) + at).min(room.saturating_sub(1));
                spans.extend(field);
                // col < room <= width, a u16.
                drawn.cursor = Some(Position::new(x + col as u16, y));
            }
            _ => {
                let label = slot.label();
                spans.push(Span::styled(
                    truncate_end(&label, rest).into_owned(),
                    label_style,
                ));
            }
        }
        buf.set_line(x, y, &Line::from(spans), room as u16);
        let indent = BADGE_INDENT;
        let badges = badges(slot, width - indent, theme);
        buf.set_line(
            area.x + indent as u16,
            y + 1,
            &Line::from(badges),
            (width - indent) as u16,
        );
        if selected == Some(i) && !matches!(ws.focus, ChatFocus::Rename { .. }) {
            buf.set_style(row, theme.highlight());
        }
        drawn.rows.push((row, i + 1));
        y += 2;
    }
    drawn.hidden = (top, ws.chats.len().saturating_sub(top + slots));
    if ws.chats.is_empty() && list_h > 0 {
        buf.set_line(
            area.x + LEAD as u16,
            area.y,
            &Line::from(Span::styled("no chat open", theme.dim())),
            area.width - LEAD as u16,
        );
    }
    drawn
}

/// The sidebar: a title row, the list, a border on the right.
pub(crate) fn sidebar(buf: &mut Buffer, area: Rect, ws: &Workspace, theme: Theme) -> Drawn {
    Clear.render(area, buf);
    let block = Block::new()
        .borders(Borders::RIGHT)
        .border_style(theme.border());
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return Drawn::default();
    }
    let width = usize::from(inner.width);
    // A blank row under the title when there is room.
    let skip = if inner.height > 4 { 2 } else { 1 };
    let rest = Rect::new(
        inner.x,
        inner.y + skip.min(inner.height),
        inner.width,
        inner.height.saturating_sub(skip),
    );
    let under = bottom(ws, width.saturating_sub(LEAD), true, theme);
    let drawn = render_list(buf, rest, ws, &under, theme);

    // The title, and at its right the chats out of view, else the key.
    let mut title = vec![spaces(LEAD.min(width)), Span::styled(TITLE, theme.bold())];
    let hidden = more(drawn.hidden);
    let right = if !hidden.is_empty() {
        Some(Span::styled(hidden, theme.follow_hint()))
    } else if has_keys(&ws.focus) {
        None
    } else {
        Some(Span::styled(KEY, theme.dim()))
    };
    if let Some(right) = right {
        let pad = width.saturating_sub(spans_width(&title) + str_width(&right.content) + 1);
        if pad > 0 {
            title.push(spaces(pad));
            title.push(right);
        }
    }
    buf.set_line(inner.x, inner.y, &Line::from(title), inner.width);
    drawn
}

/// A box of `width` x `height` in the middle of `screen`.
fn centred(screen: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(screen.width);
    let height = height.min(screen.height);
    Rect::new(
        screen.x + (screen.width - width) / 2,
        screen.y + (screen.height - height) / 2,
        width,
        height,
    )
}

fn boxed(title: &str, theme: Theme) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(Span::styled(format!(" {title} "), theme.bold()))
        .padding(Padding::horizontal(1))
}

/// The list as a box over the middle of `screen`; the box's area (a click
/// there is the box's) and where its rows landed.
pub(crate) fn overlay(
    buf: &mut Buffer,
    screen: Rect,
    ws: &Workspace,
    theme: Theme,
) -> (Rect, Drawn) {
    let width = screen.width.saturating_sub(4).min(BOX_MAX_W);
    let inner_w = usize::from(width.saturating_sub(4));
    let under = bottom(ws, inner_w.saturating_sub(LEAD), false, theme);
    let rows = 2 * ws.chats.len().max(1) + if under.is_empty() { 0 } else { 1 + under.len() };
    let height = u16::try_from(rows + 2)
        .unwrap_or(u16::MAX)
        .min(screen.height.saturating_sub(2));
    if width < 12 || height < 4 {
        return (Rect::default(), Drawn::default());
    }
    let area = centred(screen, width, height);
    Clear.render(area, buf);
    let block = boxed(TITLE, theme);
    let inner = block.inner(area);
    block.render(area, buf);
    let drawn = render_list(buf, inner, ws, &under, theme);
    // The chats out of view, on the bottom border.
    let hidden = more(drawn.hidden);
    let w = str_width(&hidden) + 2;
    if !hidden.is_empty() && w + 2 <= usize::from(area.width) {
        // w + 2 <= area.width, a u16.
        buf.set_stringn(
            area.right() - 2 - w as u16,
            area.bottom() - 1,
            format!(" {hidden} "),
            w,
            theme.follow_hint(),
        );
    }
    (area, drawn)
}

/// The chooser of a new chat's agent over the middle of `screen`, agent
/// `selected` highlighted; the box's area.
pub(crate) fn new_chat(
    buf: &mut Buffer,
    screen: Rect,
    ws: &Workspace,
    selected: usize,
    theme: Theme,
) -> Rect {
    let names: Vec<String> = ws
        .agents
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{} {}", i + 1, one_line(a)))
        .collect();
    let widest = names
        .iter()
        .map(|n| str_width(n) + str_width(MARK))
        .chain([
            str_width(NEW_TITLE) + 2,
            str_width(NEW_HINT),
            str_width(NO_AGENTS),
        ])
        .max()
        .unwrap_or(0);
    let width = u16::try_from(widest + 4)
        .unwrap_or(u16::MAX)
        .min(screen.width.saturating_sub(2))
        .min(BOX_MAX_W);
    let rows = names.len().max(1) + 2;
    let height = u16::try_from(rows + 2)
        .unwrap_or(u16::MAX)
        .min(screen.height);
    if width < 8 || height < 3 {
        return Rect::default();
    }
    let area = centred(screen, width, height);
    Clear.render(area, buf);
    let block = boxed(NEW_TITLE, theme);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return area;
    }
    let w = usize::from(inner.width);
    // The keys on the last row, a blank row above them when there is room.
    let list_h = if inner.height > 2 {
        let hint = truncate_end(NEW_HINT, w).into_owned();
        buf.set_line(
            inner.x,
            inner.bottom() - 1,
            &Line::from(Span::styled(hint, theme.dim())),
            inner.width,
        );
        inner.height - 2
    } else {
        inner.height
    };
    if names.is_empty() {
        buf.set_line(
            inner.x,
            inner.y,
            &Line::from(Span::styled(NO_AGENTS, theme.dim())),
            inner.width,
        );
        return area;
    }
    let view = usize::from(list_h);
    let selected = selected.min(names.len() - 1);
    let top = (selected + 1).saturating_sub(view);
    for (i, name) in names.iter().enumerate().skip(top).take(view) {
        // i - top < view, a u16.
        let y = inner.y + (i - top) as u16;
        let mark = if i == selected { MARK } else { "  " };
        let name = truncate_end(name, w.saturating_sub(str_width(MARK))).into_owned();
        let line = Line::from(vec![
            Span::styled(mark, theme.bold()),
            Span::styled(name, theme.plain()),
        ]);
        buf.set_line(inner.x, y, &line, inner.width);
        if i == selected {
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), theme.highlight());
        }
    }
    area
}

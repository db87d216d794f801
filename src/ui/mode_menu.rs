//! The mode dropdown: opened from the footer's mode slot, drawn over the
//! screen just above it. warden's own modes first, then the agent's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{spans_width, str_width, truncate_end};
use crate::policy::Mode;
use crate::sanitize::one_line;
use crate::state::{AppState, ModeItem};

/// The keys, on the dropdown's last row.
pub(crate) const HINT: &str = "↑↓ choose · Enter pick · Esc close";
/// Under the agent's modes.
const AGENT_NOTE: &str = "warden keeps the agent in its asking mode";

/// What one of warden's modes does, in a few words.
pub(crate) fn describe(mode: Mode) -> &'static str {
    match mode {
        Mode::Plan => "read and propose; edits, deletes, commands blocked",
        Mode::Default => "reads run; edits and commands ask",
        Mode::Auto => "everything runs unless a rule says no",
    }
}

/// Where the dropdown landed.
#[derive(Debug, Default)]
pub(crate) struct Drawn {
    /// The whole popup, border included (a click there is the popup's).
    pub(crate) area: Rect,
    /// A row of an item and the item's index in `mode_menu_items`.
    pub(crate) items: Vec<(Rect, usize)>,
}

/// The dropdown's rows, each with the item it picks.
fn rows(state: &AppState, theme: Theme) -> Vec<(Line<'static>, Option<usize>)> {
    let mark = |current: bool| if current { "● " } else { "  " };
    let mut rows = vec![(
        Line::from(Span::styled("warden mode", theme.section())),
        None,
    )];
    let label_w = Mode::ALL
        .iter()
        .map(|m| str_width(m.label()))
        .max()
        .unwrap_or(0);
    let mut agent_section = false;
    for (index, item) in state.mode_menu_items().into_iter().enumerate() {
        let line = match item {
            ModeItem::Chat(mode) => Line::from(vec![
                Span::styled(mark(mode == state.mode), theme.mode(mode)),
                Span::styled(format!("{:<label_w$}", mode.label()), theme.mode(mode)),
                Span::styled(format!("  {}", describe(mode)), theme.dim()),
            ]),
            ModeItem::Agent(i) => {
                let Some(modes) = &state.agent_modes else {
                    continue;
                };
                let Some(mode) = modes.available.get(i) else {
                    continue;
                };
                if !agent_section {
                    agent_section = true;
                    rows.push((
                        Line::from(Span::styled("agent's own mode", theme.section())),
                        None,
                    ));
                }
                Line::from(vec![
                    Span::styled(mark(mode.id == modes.current), theme.agent_mode()),
                    Span::styled(one_line(&mode.name), theme.agent_mode()),
                ])
            }
        };
        rows.push((line, Some(index)));
    }
    if agent_section {
        rows.push((Line::from(Span::styled(AGENT_NOTE, theme.dim())), None));
    }
    rows.push((Line::from(Span::styled(HINT, theme.dim())), None));
    rows
}

/// Draw the dropdown with its left edge at `x` (moved left to fit) and its
/// bottom edge just above row `bottom`, inside `screen`; item `highlighted`
/// is reversed.
pub(crate) fn render(
    buf: &mut Buffer,
    screen: Rect,
    x: u16,
    bottom: u16,
    state: &AppState,
    highlighted: usize,
    theme: Theme,
) -> Drawn {
    let mut drawn = Drawn::default();
    let rows = rows(state, theme);
    let content_w = rows
        .iter()
        .map(|(line, _)| spans_width(&line.spans))
        .max()
        .unwrap_or(0);
    // Borders and a space of padding each side.
    let width = u16::try_from(content_w + 4)
        .unwrap_or(u16::MAX)
        .min(screen.width);
    let room = bottom.saturating_sub(screen.y);
    let height = u16::try_from(rows.len() + 2).unwrap_or(u16::MAX).min(room);
    if width < 5 || height < 3 {
        return drawn;
    }
    let x = x.min(screen.right() - width).max(screen.x);
    let area = Rect::new(x, bottom - height, width, height);
    drawn.area = area;
    Clear.render(area, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(Span::styled(" mode ", theme.bold()))
        .padding(Padding::horizontal(1));
    let inner = block.inner(area);
    block.render(area, buf);

    // Keep the highlighted item in view when the rows do not all fit.
    let shown = usize::from(inner.height);
    let at = rows
        .iter()
        .position(|(_, item)| *item == Some(highlighted))
        .unwrap_or(0);
    let first = (at + 1).saturating_sub(shown);
    let width = usize::from(inner.width);
    for (y, (line, item)) in (inner.y..inner.bottom()).zip(rows.iter().skip(first)) {
        let row = Rect::new(inner.x, y, inner.width, 1);
        let mut line = line.clone();
        if spans_width(&line.spans) > width {
            let text = line.to_string();
            let style = line.spans.first().map(|s| s.style).unwrap_or_default();
            line = Line::from(Span::styled(truncate_end(&text, width).into_owned(), style));
        }
        buf.set_line(inner.x, y, &line, inner.width);
        if let Some(index) = *item {
            if index == highlighted {
                buf.set_style(row, theme.highlight());
            }
            drawn.items.push((row, index));
        }
    }
    drawn
}

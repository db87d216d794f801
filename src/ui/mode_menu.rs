//! The mode dropdown: opened from the footer's mode slot, drawn over the
//! screen just above it. warden's own modes first, then the agent's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Widget};

use super::theme::Theme;
use super::wrap::{spans_width, str_width, truncate_end};
use crate::model::SessionOptionValue;
use crate::policy::Mode;
use crate::sanitize::one_line;
use crate::state::{ChatState, ModeItem};

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
fn rows(state: &ChatState, theme: Theme) -> Vec<(Line<'static>, Option<usize>)> {
    let mark = |current: bool| if current { "● " } else { "  " };
    let mut rows = vec![(
        Line::from(Span::styled("warden's modes", theme.section())),
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
                Span::styled(mark(mode == state.gate.mode), theme.mode(mode)),
                Span::styled(format!("{:<label_w$}", mode.label()), theme.mode(mode)),
                Span::styled(format!("  {}", describe(mode)), theme.dim()),
            ]),
            // The agent's session options come after the modes' note.
            ModeItem::Option { .. } => continue,
            ModeItem::Agent(i) => {
                let Some(modes) = &state.session.agent_modes else {
                    continue;
                };
                let Some(mode) = modes.available.get(i) else {
                    continue;
                };
                if !agent_section {
                    agent_section = true;
                    let whose = format!("{}'s own modes", one_line(&state.session.agent_name));
                    rows.push((Line::from(Span::styled(whose, theme.section())), None));
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
    rows.extend(option_rows(state, theme));
    rows.push((Line::from(Span::styled(HINT, theme.dim())), None));
    rows
}

/// The rows of the agent's session options (model, thought level,
/// toggles): a heading per option, then its choices, the current one marked.
fn option_rows(state: &ChatState, theme: Theme) -> Vec<(Line<'static>, Option<usize>)> {
    let mut rows = Vec::new();
    let mut heading = None;
    for (index, item) in state.mode_menu_items().into_iter().enumerate() {
        let ModeItem::Option { option, choice } = item else {
            continue;
        };
        let Some(opt) = state.session.controls.options.get(option) else {
            continue;
        };
        if heading != Some(option) {
            heading = Some(option);
            rows.push((
                Line::from(Span::styled(
                    format!("agent's {}", one_line(&opt.name).to_lowercase()),
                    theme.section(),
                )),
                None,
            ));
        }
        let (current, label) = match &opt.value {
            SessionOptionValue::Select { current, choices } => {
                let Some(c) = choices.get(choice) else {
                    continue;
                };
                (&c.id == current, one_line(&c.name))
            }
            SessionOptionValue::Boolean(on) => (
                *on,
                format!(
                    "{}: {} · Enter turns it {}",
                    one_line(&opt.name),
                    if *on { "on" } else { "off" },
                    if *on { "off" } else { "on" }
                ),
            ),
        };
        let mark = if current { "● " } else { "  " };
        rows.push((
            Line::from(vec![
                Span::styled(mark, theme.agent_mode()),
                Span::styled(label, theme.agent_mode()),
            ]),
            Some(index),
        ));
    }
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
    state: &ChatState,
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

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::super::footer;
    use super::super::tests::buffer_text;
    use super::*;
    use crate::model::{OptionChoice, SessionInfo, SessionOption, SessionUpdate, Usage};
    use crate::state::{Action, Msg};

    fn choice(id: &str, name: &str) -> OptionChoice {
        OptionChoice {
            id: id.into(),
            name: name.into(),
            description: None,
        }
    }

    /// A chat of codex-acp with its model, reasoning effort and a toggle,
    /// and a usage update.
    fn codex() -> ChatState {
        let mut state = ChatState::new("codex", "~/src/warden");
        state.update(Msg::SessionStarted(SessionInfo {
            session_id: "s1".into(),
            modes: None,
            origin: Default::default(),
        }));
        state.update(Msg::Update(SessionUpdate::Options(vec![
            SessionOption {
                id: "model".into(),
                name: "Model".into(),
                description: None,
                category: Some("model".into()),
                value: SessionOptionValue::Select {
                    current: "gpt-5.3-codex".into(),
                    choices: vec![
                        choice("gpt-5.5", "GPT-5.5"),
                        choice("gpt-5.3-codex", "gpt-5.3-codex"),
                    ],
                },
            },
            SessionOption {
                id: "reasoning_effort".into(),
                name: "Reasoning Effort".into(),
                description: None,
                category: Some("thought_level".into()),
                value: SessionOptionValue::Select {
                    current: "medium".into(),
                    choices: vec![choice("low", "Low"), choice("medium", "Medium")],
                },
            },
            SessionOption {
                id: "web".into(),
                name: "Web search".into(),
                description: None,
                category: None,
                value: SessionOptionValue::Boolean(false),
            },
        ])));
        state.update(Msg::Update(SessionUpdate::Usage(Usage {
            used: Some(53_000),
            size: Some(200_000),
            cost: Some((0.4, "USD".into())),
            turn_tokens: None,
        })));
        state
    }

    #[test]
    fn options_in_the_mode_menu() {
        let mut state = codex();
        state.update(Msg::Action(Action::OpenModeMenu));
        let screen = Rect::new(0, 0, 60, 24);
        let mut buf = Buffer::empty(screen);
        let highlighted = state
            .mode_menu_items()
            .iter()
            .position(|i| {
                *i == ModeItem::Option {
                    option: 0,
                    choice: 0,
                }
            })
            .unwrap_or_default();
        render(
            &mut buf,
            screen,
            0,
            23,
            &state,
            highlighted,
            Theme::with_color(false),
        );
        assert_snapshot!(buffer_text(&buf));
    }

    #[test]
    fn model_and_usage_in_the_footer() {
        let state = codex();
        let mut out = String::new();
        for width in [140, 100] {
            let area = Rect::new(0, 0, width, 1);
            let mut buf = Buffer::empty(area);
            footer::render(&mut buf, area, &state, Theme::with_color(false));
            out.push_str(&buffer_text(&buf));
        }
        assert_snapshot!(out);
    }
}

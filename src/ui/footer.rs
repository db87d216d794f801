//! The one-row footer: agent, working directory, the agent's mode, what is
//! happening, the permission mode slot, and key hints on the right.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{spans_width, str_width, truncate_end, truncate_start};
use crate::sanitize::one_line;
use crate::state::{AppState, Connection};

/// Key hints, dropped from the first as the footer narrows.
const HINTS: [&str; 3] = ["PgUp/PgDn scroll", "Ctrl-T thoughts", "Ctrl-C quit"];
/// Between footer parts.
const SEP: &str = " │ ";
/// The narrowest a shortened working directory gets before it is dropped.
const MIN_CWD: usize = 8;

/// The permission mode dropdown (Plan / Default / Auto). Empty until the
/// permission gate lands; the footer leaves it out while it is empty.
pub(crate) fn mode_slot(_state: &AppState) -> Span<'static> {
    Span::raw("")
}

/// What the agent is doing, when worth saying.
fn status(state: &AppState, theme: Theme) -> Option<Span<'static>> {
    match state.connection {
        Connection::Starting => return Some(Span::styled("starting agent…", theme.starting())),
        Connection::Down => return Some(Span::styled("agent stopped · r restart", theme.down())),
        Connection::Ready { .. } => {}
    }
    let turn = state.turn.as_ref()?;
    Some(if turn.cancelling {
        Span::styled("cancelling…", theme.working())
    } else {
        Span::styled("● working · Esc cancel", theme.working())
    })
}

/// The agent's own current mode, by name.
fn agent_mode(state: &AppState, theme: Theme) -> Option<Span<'static>> {
    let modes = state.agent_modes.as_ref()?;
    if modes.current.is_empty() {
        return None;
    }
    let name = modes
        .available
        .iter()
        .find(|m| m.id == modes.current)
        .map_or(modes.current.as_str(), |m| m.name.as_str());
    Some(Span::styled(
        format!("mode: {}", one_line(name)),
        theme.agent_mode(),
    ))
}

/// The parts present, in order, with separators.
fn left(parts: &[Option<Span<'static>>], theme: Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for part in parts.iter().flatten() {
        if part.content.is_empty() {
            continue;
        }
        if !spans.is_empty() {
            spans.push(Span::styled(SEP, theme.dim()));
        }
        spans.push(part.clone());
    }
    spans
}

pub(crate) fn render(buf: &mut Buffer, area: Rect, state: &AppState, theme: Theme) {
    let width = usize::from(area.width);
    let name = Some(Span::styled(one_line(&state.agent_name), theme.bold()));
    let cwd = one_line(&state.cwd);
    let status = status(state, theme);
    let slot = Some(mode_slot(state));
    let mut mode = agent_mode(state, theme);

    let parts = |cwd: Option<String>, mode: &Option<Span<'static>>| {
        let cwd = cwd.map(|c| Span::styled(c, theme.dim()));
        left(
            &[
                name.clone(),
                cwd,
                mode.clone(),
                status.clone(),
                slot.clone(),
            ],
            theme,
        )
    };

    // Fit: the full left side with as many hints as fit, then no hints and a
    // shortened directory, then without the agent's mode.
    let mut spans = parts(Some(cwd.clone()), &mode);
    let mut hints = 0;
    let full = spans_width(&spans);
    for n in (1..=HINTS.len()).rev() {
        let hint = HINTS[HINTS.len() - n..].join(" · ");
        if full + 2 + str_width(&hint) <= width {
            hints = n;
            break;
        }
    }
    if hints == 0 && full > width {
        let cwd_width = str_width(&cwd);
        let mut fitted = false;
        for keep_mode in [true, false] {
            if !keep_mode {
                mode = None;
            }
            let without_cwd = spans_width(&parts(None, &mode));
            let room = width.saturating_sub(without_cwd + str_width(SEP));
            if room > 0 && room >= MIN_CWD.min(cwd_width) {
                spans = parts(Some(truncate_start(&cwd, room).into_owned()), &mode);
                fitted = true;
                break;
            }
        }
        if !fitted {
            spans = parts(None, &mode);
        }
    }
    let line = Line::from(spans);
    buf.set_line(area.x, area.y, &line, area.width);
    if hints > 0 {
        let hint = HINTS[HINTS.len() - hints..].join(" · ");
        let hint = truncate_end(&hint, width);
        let w = str_width(&hint);
        let x = area
            .right()
            .saturating_sub(u16::try_from(w).unwrap_or(area.width));
        buf.set_stringn(x, area.y, &hint, w, theme.dim());
    }
}

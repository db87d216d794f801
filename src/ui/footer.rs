//! The one-row footer: which chat this is (when the list is not on
//! screen), the chat's permission mode (a dropdown) and the agent's own
//! mode, pending cards, requests waiting in other chats, agent, its model
//! and usage, working directory, what is happening, and key hints on the
//! right.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{spans_width, str_width, truncate_end, truncate_start};
use crate::keys;
use crate::sanitize::one_line;
use crate::state::workspace::DIGIT_CHATS;
use crate::state::{Action, ChatState, Connection};

/// Between footer parts.
const SEP: &str = " │ ";
/// Between the mode slot and the agent's own mode.
const SLOT_GAP: &str = "  ";
/// The narrowest a shortened working directory gets before it is dropped.
const MIN_CWD: usize = 8;

/// The chat's permission mode as a dropdown: "⏵ Default ▾"; "⏵ Plan
/// (agent-enforced) ▾" when the user let the agent's own plan mode hold
/// Plan (`agent_plan_mode`).
pub(crate) fn mode_slot(state: &ChatState, theme: Theme) -> Span<'static> {
    let enforced = if state.agent_enforces_plan() {
        " (agent-enforced)"
    } else {
        ""
    };
    Span::styled(
        format!("⏵ {}{enforced} ▾", state.gate.mode.label()),
        theme.mode(state.gate.mode),
    )
}

/// `BYPASS` next to the mode while the chat's agent is bypassed: its
/// calls that no deny or ask rule stops run without asking.
pub(crate) fn bypass_badge(state: &ChatState, theme: Theme) -> Option<Span<'static>> {
    state
        .gate
        .agent_policy
        .bypass
        .then(|| Span::styled("BYPASS", theme.bypass()))
}

/// How the chat's agent is confined: "sandbox", "sandbox: read-only", or
/// red when it runs with all the user's rights. Nothing when warden runs
/// without settings (embedded in tests).
pub(crate) fn sandbox_badge(state: &ChatState, theme: Theme) -> Option<Span<'static>> {
    let badge = state.session.sandbox?;
    let style = if badge.is_unconfined() {
        theme.bypass()
    } else if badge.is_net_open() {
        theme.fg(ratatui::style::Color::Yellow)
    } else {
        theme.dim()
    };
    Some(Span::styled(badge.label(), style))
}

/// What the agent is doing, when worth saying; `short` says only how
/// long the turn has run (to keep a key hint beside it).
fn status(state: &ChatState, theme: Theme, short: bool) -> Option<Span<'static>> {
    match state.session.connection {
        Connection::Starting => return Some(Span::styled("starting agent…", theme.starting())),
        Connection::Down => return Some(Span::styled("agent stopped · r restart", theme.down())),
        Connection::Ready { .. } => {}
    }
    let turn = state.session.turn.as_ref()?;
    Some(if turn.cancelling {
        Span::styled("cancelling…", theme.working())
    } else {
        let elapsed = turn
            .elapsed(state.view.clock)
            .map(|d| format!(" {}", elapsed(d.as_secs())))
            .unwrap_or_default();
        if short {
            return Some(Span::styled(format!("● working{elapsed}"), theme.working()));
        }
        let tokens = state
            .session
            .controls
            .turn_tokens_label()
            .map(|t| format!(" · {t}"))
            .unwrap_or_default();
        Span::styled(
            format!("● working{elapsed}{tokens} · Esc cancel"),
            theme.working(),
        )
    })
}

/// "12s", "3m 05s", "1h 02m".
fn elapsed(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// The agent's own current mode, by name, only where it tells the user
/// something: when it is not the mode warden keeps the agent in (its
/// asking mode, or its plan mode while that enforces Plan). The mode menu
/// always names it.
fn agent_mode(state: &ChatState, theme: Theme) -> Option<Span<'static>> {
    let modes = state.session.agent_modes.as_ref()?;
    if modes.current.is_empty() {
        return None;
    }
    let expected = if state.agent_enforces_plan() {
        state.gate.agent_plan_mode.as_deref()
    } else {
        state.gate.asking_mode.as_deref()
    };
    if expected == Some(modes.current.as_str()) {
        return None;
    }
    let name = modes
        .available
        .iter()
        .find(|m| m.id == modes.current)
        .map_or(modes.current.as_str(), |m| m.name.as_str());
    Some(Span::styled(
        format!("agent mode: {}", one_line(name)),
        theme.agent_mode(),
    ))
}

/// The agent's model and its usage: "opus · ctx 25% · $0.12".
fn controls(state: &ChatState, theme: Theme) -> Option<Span<'static>> {
    let parts: Vec<String> = [
        state.session.controls.model_label(),
        state.session.controls.usage_label(),
    ]
    .into_iter()
    .flatten()
    .filter(|p| !p.is_empty())
    .collect();
    (!parts.is_empty()).then(|| Span::styled(parts.join(" · "), theme.dim()))
}

/// Cards wait while the keys are elsewhere: say how many, and how to get there.
fn pending(state: &ChatState, theme: Theme) -> Option<Span<'static>> {
    (!state.gate.approvals.is_empty() && !state.view.focus.on_cards()).then(|| {
        Span::styled(
            format!(
                "{} pending · {} review",
                state.gate.approvals.len(),
                keys::key_name(keys::COMPOSER, &keys::Global::Act(Action::ToggleCards))
            ),
            theme.pending(),
        )
    })
}

/// What the footer says about the other chats (from the workspace).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Chats {
    /// "chat 2/3": the number of the chat on screen and how many are
    /// open; set when the chat list is not on screen.
    pub(crate) position: Option<(usize, usize)>,
    /// Chats not on screen have requests waiting.
    pub(crate) waiting: Option<Waiting>,
}

/// Requests waiting in chats not on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Waiting {
    /// The number of the first such chat (Alt-N goes there).
    pub(crate) chat: usize,
    /// Its requests.
    pub(crate) pending: usize,
    /// How many other chats have requests waiting too.
    pub(crate) more: usize,
}

impl Waiting {
    /// "chat 3: 2 pending · Alt-3 +1 more"; `short` leaves the key out.
    fn text(self, short: bool) -> String {
        let mut text = format!("chat {}: {} pending", self.chat, self.pending);
        if !short && self.chat <= DIGIT_CHATS {
            text.push_str(&format!(" · Alt-{}", self.chat));
        }
        if self.more > 0 {
            text.push_str(&format!(" +{} more", self.more));
        }
        text
    }
}

/// Clickable places on the footer, from the last draw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hits {
    /// The mode slot, with the agent's mode after it.
    pub(crate) mode: Rect,
    /// "N pending · Ctrl-P review".
    pub(crate) pending: Option<Rect>,
    /// "chat N: M pending · Alt-N", for going to chat N.
    pub(crate) elsewhere: Option<Rect>,
}

/// One footer part, for the fitting and for the hit areas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Position,
    Slot,
    Bypass,
    Agent,
    Sandbox,
    Pending,
    Elsewhere,
    Name,
    Controls,
    Cwd,
    Status,
}

/// The left side: the parts present, in order, with separators, and the
/// column ranges of the mode slot, the pending count and the requests
/// waiting elsewhere.
struct Left {
    spans: Vec<Span<'static>>,
    mode: (usize, usize),
    pending: Option<(usize, usize)>,
    elsewhere: Option<(usize, usize)>,
}

fn left(parts: &[(Part, Option<Span<'static>>)], theme: Theme) -> Left {
    let mut out = Left {
        spans: Vec::new(),
        mode: (0, 0),
        pending: None,
        elsewhere: None,
    };
    let mut x = 0;
    for (part, span) in parts {
        let Some(span) = span else { continue };
        if span.content.is_empty() {
            continue;
        }
        if !out.spans.is_empty() {
            let sep = if matches!(part, Part::Agent | Part::Bypass) {
                Span::raw(SLOT_GAP)
            } else {
                Span::styled(SEP, theme.dim())
            };
            x += str_width(&sep.content);
            out.spans.push(sep);
        }
        let w = str_width(&span.content);
        match part {
            Part::Slot => out.mode = (x, x + w),
            Part::Agent if out.mode.1 > 0 => out.mode.1 = x + w,
            Part::Pending => out.pending = Some((x, x + w)),
            Part::Elsewhere => out.elsewhere = Some((x, x + w)),
            _ => {}
        }
        x += w;
        out.spans.push(span.clone());
    }
    out
}

/// Draw the footer of a chat alone; returns where its clickable parts are.
#[cfg(test)]
pub(crate) fn render(buf: &mut Buffer, area: Rect, state: &ChatState, theme: Theme) -> Hits {
    render_with(buf, area, state, Chats::default(), theme)
}

/// Draw the footer, with what it says about the other chats; returns
/// where its clickable parts are.
pub(crate) fn render_with(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    chats: Chats,
    theme: Theme,
) -> Hits {
    let width = usize::from(area.width);
    let name = Some(Span::styled(
        one_line(&state.session.agent_name),
        theme.bold(),
    ));
    let cwd = one_line(&state.session.cwd);
    let slot = Some(mode_slot(state, theme));
    let bypass = bypass_badge(state, theme);
    let sandbox = sandbox_badge(state, theme);
    let agent = agent_mode(state, theme);
    let controls = controls(state, theme);
    let pending = pending(state, theme);
    let full_status = status(state, theme, false);
    let short_status = status(state, theme, true);
    // The status is shortened only to keep the last key hint in sight.
    let shorten_status = std::cell::Cell::new(false);
    let position = chats
        .position
        .map(|(n, of)| Span::styled(format!("chat {n}/{of}"), theme.dim()));

    // `keep` drops parts from the end of [agent, name and position] as the
    // footer narrows; `short_pending` says "N pending" alone, and leaves
    // the key out of the requests waiting elsewhere.
    let parts = |cwd: Option<String>, keep: usize, short_pending: bool| {
        let cwd = cwd.map(|c| Span::styled(c, theme.dim()));
        let pending = match &pending {
            Some(span) if short_pending => Some(Span::styled(
                format!("{} pending", state.gate.approvals.len()),
                span.style,
            )),
            other => other.clone(),
        };
        let elsewhere = chats
            .waiting
            .map(|w| Span::styled(w.text(short_pending), theme.pending()));
        left(
            &[
                (Part::Position, position.clone().filter(|_| keep >= 1)),
                (Part::Slot, slot.clone()),
                (Part::Bypass, bypass.clone()),
                (Part::Agent, agent.clone().filter(|_| keep >= 2)),
                (Part::Sandbox, sandbox.clone()),
                (Part::Pending, pending),
                (Part::Elsewhere, elsewhere),
                (Part::Name, name.clone().filter(|_| keep >= 1)),
                (Part::Controls, controls.clone().filter(|_| keep >= 2)),
                (Part::Cwd, cwd),
                (
                    Part::Status,
                    if shorten_status.get() {
                        short_status.clone()
                    } else {
                        full_status.clone()
                    },
                ),
            ],
            theme,
        )
    };

    // Fit: everything with as many hints as fit; then one hint beside a
    // shortened left side; then no hints.
    let full = parts(Some(cwd.clone()), 2, false);
    let full_w = spans_width(&full.spans);
    // Key hints from the key tables, dropped from the first as the footer
    // narrows; while BYPASS shows, "Ctrl-G rules" is the last to go.
    let mut all_hints = crate::keys::footer_hints();
    if state.gate.agent_policy.bypass
        && let Some(at) = all_hints.iter().position(|h| h.ends_with(" rules"))
    {
        let rules = all_hints.remove(at);
        all_hints.push(rules);
    }
    let mut hints = 0;
    for n in (1..=all_hints.len()).rev() {
        let hint = all_hints[all_hints.len() - n..].join(" · ");
        if full_w + 2 + str_width(&hint) <= width {
            hints = n;
            break;
        }
    }
    // The left side shortened to `width`: a shortened directory; then
    // without the agent's mode; then without the directory; then without
    // the agent's name.
    let shortened = |width: usize| {
        let cwd_width = str_width(&cwd);
        let shortened = [2, 1].into_iter().find_map(|keep| {
            let without = spans_width(&parts(None, keep, false).spans);
            let room = width.saturating_sub(without + str_width(SEP));
            (room > 0 && room >= MIN_CWD.min(cwd_width))
                .then(|| parts(Some(truncate_start(&cwd, room).into_owned()), keep, false))
        });
        match shortened {
            Some(left) => left,
            None => {
                let without = parts(None, 1, false);
                if spans_width(&without.spans) <= width {
                    without
                } else {
                    let bare = parts(None, 0, false);
                    if spans_width(&bare.spans) <= width {
                        bare
                    } else {
                        parts(None, 0, true)
                    }
                }
            }
        }
    };
    // The hints are shortened before they go: one stays while the left
    // side can make room for it, "Ctrl-G rules" while BYPASS shows.
    let last_hint = if state.gate.agent_policy.bypass {
        all_hints.iter().find(|h| h.ends_with(" rules"))
    } else {
        all_hints.last()
    };
    let mut hint = if hints > 0 {
        all_hints[all_hints.len() - hints..].join(" · ")
    } else {
        String::new()
    };
    let chosen = if hints > 0 {
        full
    } else {
        let keep = |h: &String| {
            let room = width.checked_sub(str_width(h) + 2)?;
            // Not at the cost of the agent's name or a key of the left side.
            if spans_width(&parts(None, 1, false).spans) > room {
                return None;
            }
            let left = shortened(room);
            (spans_width(&left.spans) <= room).then(|| (left, h.clone()))
        };
        let kept = last_hint.and_then(|h| {
            keep(h).or_else(|| {
                shorten_status.set(true);
                let kept = keep(h);
                shorten_status.set(kept.is_some());
                kept
            })
        });
        match kept {
            Some((left, h)) => {
                hint = h;
                left
            }
            None if full_w <= width => full,
            None => {
                // Still too wide: the status says only the time, rather
                // than being cut.
                let left = shortened(width);
                if spans_width(&left.spans) > width {
                    shorten_status.set(true);
                    shortened(width)
                } else {
                    left
                }
            }
        }
    };
    let line = Line::from(chosen.spans);
    buf.set_line(area.x, area.y, &line, area.width);
    if !hint.is_empty() {
        let hint = truncate_end(&hint, width);
        let w = str_width(&hint);
        let x = area
            .right()
            .saturating_sub(u16::try_from(w).unwrap_or(area.width));
        buf.set_stringn(x, area.y, &hint, w, theme.dim());
    }
    let rect = |(start, end): (usize, usize)| {
        let start = u16::try_from(start).unwrap_or(u16::MAX).min(area.width);
        let end = u16::try_from(end).unwrap_or(u16::MAX).min(area.width);
        Rect::new(area.x + start, area.y, end - start, 1)
    };
    Hits {
        mode: rect(chosen.mode),
        pending: chosen.pending.map(rect).filter(|r| !r.is_empty()),
        elsewhere: chosen.elsewhere.map(rect).filter(|r| !r.is_empty()),
    }
}

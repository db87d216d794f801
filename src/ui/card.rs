//! The permission gate on screen: the pending approval cards, between the
//! transcript and the composer. The selected card is drawn in full (what
//! the agent asks, a diff or a plan, the choices); every other pending card
//! is one line, in queue order around it.
//!
//! Everything the agent sent goes through `crate::sanitize` first.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Padding, Widget};
use serde_json::Value;
use std::path::Path;

use super::composer;
use super::entry::{Ctx, INDENT, diff_lines};
use super::markdown;
use super::theme::Theme;
use super::wrap::{Mode, spaces, str_width, truncate_end, wrap_into, wrap_text_into};
use crate::gate::CardKind;
use crate::keys;
use crate::model::ToolContent;
use crate::policy::Rule;
use crate::sanitize::{one_line, visible};
use crate::state::{
    Approval, ChatState, Choice, ChoiceRow, Composer, Modal, Pane, RequestId, Tone,
};

mod detail;
mod hints;
mod layout;
mod rows;

pub(crate) use detail::*;
pub(crate) use hints::*;
pub(crate) use layout::*;
pub(crate) use rows::*;

/// Before the deny-with-reason field.
pub(crate) const REASON_PROMPT: &str = "Why not? (sent to the agent) › ";
/// Before the deny-with-reason field when its card was withdrawn meanwhile
/// (shown under the card now selected, which it does not deny).
pub(crate) const WITHDRAWN_REASON_PROMPT: &str =
    "The card this reason was for was withdrawn: nothing will be denied · Esc › ";
/// Rows of raw input shown before "… N more lines · e expand".
const RAW_ROWS: usize = 8;
/// Rows of a field (a denial reason, a rule's pattern) shown at once.
const FIELD_ROWS: usize = 4;
/// Columns a field keeps beside its prompt; with less, the prompt gets a
/// row of its own.
const MIN_FIELD: usize = 16;
/// One-line cards kept in view beside the selected one, when there is room.
const MIN_OTHERS: usize = 2;
/// The selected card's box never shrinks below this for the one-liners.
const MIN_BOX: usize = 5;
/// Below this many terminal rows the choices fold into one row
/// (`y allow · a chat · n deny · r reason · e more`).
const FOLD_BELOW: u16 = 30;
/// Below this many terminal rows, what the card is about keeps one row.
const TINY_BELOW: u16 = 16;
/// Rows of what a card is about (its command, its diff's first lines)
/// that always stay in sight: on a small terminal, and a tiny one.
const ABOUT_MIN: (usize, usize) = (3, 1);
/// Rows of a command's summary shown before "… N more lines", by
/// terminal: tiny, small, other.
const RUNS_ROWS: (usize, usize, usize) = (1, 3, 8);
/// Columns from which the card's "more" notes name their key in full;
/// narrower, they are cut short so that what they are about stays.
const WIDE_HINTS: usize = 60;

/// The request part of the selected card, kept between frames: pretty JSON,
/// diffs and plans are not laid out again unless something they show changed.
#[derive(Debug, Clone)]
pub(crate) struct DetailCache {
    id: RequestId,
    width: usize,
    expanded: bool,
    theme: Theme,
    /// What the diff or plan came from (the request's, else the transcript's).
    content: Vec<ToolContent>,
    lines: Vec<Line<'static>>,
}

/// The selected card laid out for one width.
pub(crate) struct Card {
    /// Title, kind, category and why the policy asks.
    top: Vec<Line<'static>>,
    /// The choices, then the reason field or the approve-all question.
    bottom: Vec<Line<'static>>,
    /// For each row of `bottom`, the choice it belongs to.
    choice_at: Vec<Option<usize>>,
    /// Row in `bottom` and column of the cursor of the open field.
    cursor: Option<(usize, usize)>,
    /// The keys, last.
    hints: Vec<Line<'static>>,
    /// The keys not shown on the choices, for a card short of room.
    short_hints: Vec<Line<'static>>,
    /// Rows of `top` that yield to what the card is about when short of
    /// room (the header's continuation, the agent's title): they move
    /// after it, still a scroll away.
    yields: Vec<usize>,
    /// What the card is about: these rows of `top` (its command), or
    /// `None`: the request part (a diff's first lines).
    about: Option<std::ops::Range<usize>>,
    /// Rows of what the card is about that stay in sight.
    about_min: usize,
    /// The choices are folded into one row.
    folded: bool,
    /// The command's summary is cut ("… N more lines").
    runs_cut: bool,
}

/// Where things landed on screen.
#[derive(Debug, Default)]
pub(crate) struct Drawn {
    /// A row of a choice and the choice's index in `choices`.
    pub(crate) choices: Vec<(Rect, usize)>,
    /// The terminal cursor, when a field (reason, kept rule) is open.
    pub(crate) cursor: Option<Position>,
}

/// The selected card's index, kept inside the queue.
fn selected(state: &ChatState) -> usize {
    state
        .view
        .cursor
        .selected
        .min(state.gate.approvals.len().saturating_sub(1))
}

/// Columns of card text inside the box (borders and a space each side).
fn body_width(width: u16) -> usize {
    usize::from(width.saturating_sub(4)).max(1)
}

/// Rows of the agent's title shown before "… e expand".
const TITLE_ROWS: usize = 2;
/// What marks a row of the agent's own text (its title): no such row can
/// pass for one of warden's.
pub(crate) const AGENT_BAR: &str = "▏ ";

/// Lay out the selected card's header and choices for an area `width` wide.
/// warden's own rows come first (what kind of call, why it asks, what it
/// runs), so no agent text can push them off; the agent's title follows,
/// each row behind [`AGENT_BAR`], at most [`TITLE_ROWS`] rows unless
/// expanded.
pub(crate) fn card(state: &ChatState, width: u16, height: u16, theme: Theme) -> Option<Card> {
    let index = selected(state);
    let approval = state.gate.approvals.get(index)?;
    let view = &approval.card;
    let width = body_width(width);
    let tiny = height < TINY_BELOW;
    // Folded until the user asks for more (e) or moves the highlight.
    let navigated = state.view.focus.is(Pane::Cards) && state.view.cursor.choice != view.default;
    // A request to leave plan mode, or for the user's input, keeps its
    // choices in full: which option `y` sends is the question there.
    let plain = approval.view.card.plain_choices();
    let folded = height < FOLD_BELOW && plain && !state.view.cursor.expanded && !navigated;
    let mut top = Vec::new();
    let kind = approval.view.kind.as_str();
    let category = match approval.category.as_str() {
        same if same == kind => String::new(),
        other => format!(" ({other})"),
    };
    // On a tiny card the diff's first change is the row kept in sight, so
    // the file it changes goes into the first row, when it fits there
    // (the category then wraps to the next).
    let file = match approval.view.locations.as_slice() {
        [one] if tiny && view.runs.is_none() => {
            let file = format!(" {}", one_line(&relative(one, &state.session.cwd_path)));
            let first = str_width("Permission · ") + str_width(kind);
            // No words of the agent's in warden's row: a name with a
            // space ("a.rs · read calls are allowed") stays in the detail.
            if first + str_width(&file) <= width && !file[1..].contains(char::is_whitespace) {
                file
            } else {
                String::new()
            }
        }
        _ => String::new(),
    };
    let header = [
        Span::styled("Permission · ", theme.card_label()),
        Span::styled(kind, theme.tool_kind()),
        Span::styled(file, theme.plain()),
        Span::styled(category, theme.plain()),
        Span::styled(" · ", theme.dim()),
        Span::styled(one_line(&approval.reason), theme.dim()),
        Span::styled(
            format!("  ({} of {})", index + 1, state.gate.approvals.len()),
            theme.dim(),
        ),
    ];
    wrap_into(&mut top, &header, &[], &[spaces(INDENT)], width, Mode::Word);
    let mut yields: Vec<usize> = (1..top.len()).collect();
    // Whose call this is: warden's own (a client call it confines), or an
    // agent tool whose name may pass for warden's or another's.
    let whose = if approval.view.card.is_client() {
        let tool = approval
            .request
            .fields
            .tool_name
            .as_deref()
            .unwrap_or("call");
        Some(Span::styled(
            format!(
                "warden's own {}: the agent's call, confined by warden",
                one_line(tool)
            ),
            theme.card_label(),
        ))
    } else {
        approval
            .lookalike
            .as_ref()
            .map(|w| Span::styled(w.clone(), theme.reject()))
    };
    if let Some(whose) = whose {
        wrap_into(
            &mut top,
            &[whose],
            &[],
            &[spaces(INDENT)],
            width,
            Mode::Word,
        );
    }
    let mut about = None;
    let mut runs_cut = false;
    if let Some(runs) = &view.runs {
        let max = if state.view.cursor.expanded {
            usize::MAX
        } else if tiny {
            RUNS_ROWS.0
        } else if height < FOLD_BELOW {
            RUNS_ROWS.1
        } else {
            RUNS_ROWS.2
        };
        let start = top.len();
        runs_cut = runs_lines(&mut top, runs, width, max, theme);
        about = Some(start..top.len());
    }
    if let Some(warning) = view.warning {
        let warning = [Span::styled(warning, theme.reject())];
        wrap_into(
            &mut top,
            &warning,
            &[],
            &[spaces(INDENT)],
            width,
            Mode::Word,
        );
    }
    let title_start = top.len();
    let mut title = Vec::new();
    let bar = [Span::styled(AGENT_BAR, theme.dim())];
    let text = [Span::styled(approval.title(), theme.plain())];
    wrap_into(&mut title, &text, &bar, &bar, width, Mode::Char);
    if title.len() > TITLE_ROWS && !state.view.cursor.expanded {
        let more = title.len() - TITLE_ROWS + 1;
        title.truncate(TITLE_ROWS - 1);
        title.push(Line::from(vec![
            bar[0].clone(),
            Span::styled(
                format!("… {more} more rows of title · e expand"),
                theme.dim(),
            ),
        ]));
    }
    top.extend(title);
    yields.extend(title_start..top.len());

    let mut bottom = Vec::new();
    let mut choice_at = Vec::new();
    let highlighted = state
        .view
        .focus
        .is(Pane::Cards)
        .then_some(state.view.cursor.choice);
    if folded {
        let row = format!("{} · e more", folded_keys(approval));
        wrap_text_into(
            &mut bottom,
            &row,
            theme.plain(),
            &[],
            &[],
            width,
            Mode::Word,
        );
    }
    for (i, row) in view.rows.iter().enumerate().filter(|_| !folded) {
        let start = bottom.len();
        choice_rows(&mut bottom, state, row, width, theme);
        if highlighted == Some(i) {
            for line in &mut bottom[start..] {
                for span in &mut line.spans {
                    span.style = span.style.patch(theme.highlight());
                }
            }
        }
        choice_at.resize(bottom.len(), Some(i));
    }
    let mut cursor = None;
    match &state.view.focus.modal {
        Some(Modal::Reason { card, field }) => {
            let prompt = if *card == approval.id {
                REASON_PROMPT
            } else {
                WITHDRAWN_REASON_PROMPT
            };
            cursor = Some(field_rows(&mut bottom, prompt, field, width, theme));
        }
        Some(Modal::KeepRule(field)) => {
            let draft = state.gate.rule_draft.as_ref();
            let prompt = keep_prompt(draft.map(|d| &d.rule));
            cursor = Some(field_rows(&mut bottom, &prompt, field, width, theme));
            // The wider pattern is a choice of its own, never the default.
            if let Some(other) = draft.and_then(|d| d.other(field.text().trim())) {
                let wider = draft.and_then(|d| d.wider.as_deref()) == Some(other);
                let what = if wider { "wider" } else { "only this file" };
                let line = [
                    Span::styled("Tab ", theme.choice_key()),
                    Span::styled(format!("{what}: {}", one_line(other)), theme.dim()),
                ];
                wrap_into(&mut bottom, &line, &[], &[spaces(4)], width, Mode::Char);
            }
        }
        Some(Modal::ConfirmAll(ids)) => {
            let pending = ids
                .iter()
                .filter(|id| state.gate.approvals.iter().any(|a| a.id == **id))
                .count();
            let ask = format!(
                "{} {}",
                Choice::ApproveAll
                    .def()
                    .ask
                    .unwrap_or_default()
                    .replace("{n}", &pending.to_string()),
                keys::answer_keys(keys::CONFIRM_ALL)
            );
            let ask = truncate_end(&ask, width).into_owned();
            bottom.push(Line::from(Span::styled(ask, theme.confirm())));
        }
        Some(Modal::Confirm(question)) => {
            let ask = question.text(&state.bypass_name());
            wrap_text_into(
                &mut bottom,
                &ask,
                theme.confirm(),
                &[],
                &[],
                width,
                Mode::Word,
            );
        }
        _ => {}
    }
    choice_at.resize(bottom.len(), None);
    let (full, short) = hint_lines(state);
    let (full, short) = match folded_hints(state) {
        Some(keys) if folded => (keys.clone(), keys),
        _ => (full, short),
    };
    let mut hints = Vec::new();
    wrap_text_into(&mut hints, &full, theme.dim(), &[], &[], width, Mode::Word);
    let mut short_hints = Vec::new();
    wrap_text_into(
        &mut short_hints,
        &short,
        theme.dim(),
        &[],
        &[],
        width,
        Mode::Word,
    );
    Some(Card {
        top,
        bottom,
        choice_at,
        cursor,
        hints,
        short_hints,
        yields,
        about,
        about_min: if tiny { ABOUT_MIN.1 } else { ABOUT_MIN.0 },
        folded,
        runs_cut,
    })
}

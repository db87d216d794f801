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

/// The content to preview: the request's own, which holds its tool call's
/// as it was when the request came (`on_permission` snapshots it); never
/// the transcript's now, which a later `tool_call_update` may have changed.
fn content_of(approval: &Approval) -> &[ToolContent] {
    approval.request.fields.content.as_deref().unwrap_or(&[])
}

/// The rows of the selected card's request part, from the cache when it
/// still holds them.
pub(crate) fn detail<'c>(
    state: &ChatState,
    width: u16,
    theme: Theme,
    cache: &'c mut Option<DetailCache>,
) -> &'c [Line<'static>] {
    let Some(approval) = state.gate.approvals.get(selected(state)) else {
        *cache = None;
        return &[];
    };
    let width = body_width(width);
    let expanded = state.view.cursor.expanded;
    let content = content_of(approval);
    let fresh = cache.as_ref().is_some_and(|c| {
        c.id == approval.id
            && c.width == width
            && c.expanded == expanded
            && c.theme == theme
            && c.content == content
    });
    if !fresh {
        *cache = None;
    }
    let cached = cache.get_or_insert_with(|| DetailCache {
        id: approval.id,
        width,
        expanded,
        theme,
        content: content.to_vec(),
        lines: detail_lines(
            approval,
            content,
            &state.session.cwd_path,
            width,
            expanded,
            theme,
        ),
    });
    &cached.lines
}

/// A blank row.
fn blank() -> Line<'static> {
    Line::default()
}

/// `lines` with `n` columns of indentation before each.
fn indented(out: &mut Vec<Line<'static>>, lines: Vec<Line<'static>>, n: usize) {
    for line in lines {
        let style = line.style;
        let mut spans = vec![spaces(n)];
        spans.extend(line.spans);
        out.push(Line::from(spans).style(style));
    }
}

/// The plan of a `switch_mode` request: `rawInput.plan`, else its text
/// content. The flag says whether it came from the raw input.
fn plan_text(approval: &Approval, content: &[ToolContent]) -> Option<(String, bool)> {
    let from_raw = approval
        .view
        .raw_input
        .as_ref()
        .and_then(|r| r.get("plan"))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty());
    if let Some(plan) = from_raw {
        return Some((plan.to_string(), true));
    }
    let text: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n\n");
    (!text.trim().is_empty()).then_some((text, false))
}

/// The raw input as pretty JSON, long values wrapped; cut to [`RAW_ROWS`]
/// rows unless `expanded`.
fn raw_lines(
    out: &mut Vec<Line<'static>>,
    raw: &Value,
    width: usize,
    expanded: bool,
    theme: Theme,
) {
    let pretty = serde_json::to_string_pretty(raw).unwrap_or_else(|_| raw.to_string());
    let pretty = visible(&pretty);
    let mut rows = Vec::new();
    for line in pretty.lines() {
        let depth = line.len() - line.trim_start_matches(' ').len();
        let first = [spaces(INDENT)];
        let rest = [spaces(INDENT + depth + 2)];
        let piece = [Span::styled(line, theme.plain())];
        wrap_into(&mut rows, &piece, &first, &rest, width, Mode::Word);
    }
    // Hiding a single row saves nothing.
    if expanded || rows.len() <= RAW_ROWS + 1 {
        out.extend(rows);
        return;
    }
    let more = rows.len() - RAW_ROWS;
    out.extend(rows.into_iter().take(RAW_ROWS));
    let piece = [Span::styled(
        format!("… {more} more lines · e expand"),
        theme.dim(),
    )];
    wrap_into(
        out,
        &piece,
        &[spaces(INDENT)],
        &[spaces(INDENT)],
        width,
        Mode::Word,
    );
}

/// What the agent asks to do: the plan of a `switch_mode` request, the
/// locations and diffs, the raw input; a blank row between the parts.
fn detail_lines(
    approval: &Approval,
    content: &[ToolContent],
    cwd: &Path,
    width: usize,
    expanded: bool,
    theme: Theme,
) -> Vec<Line<'static>> {
    let mut plan_rows = Vec::new();
    let mut raw = approval.view.raw_input.clone();
    if approval.view.card == CardKind::ModeSwitch
        && let Some((plan, from_raw)) = plan_text(approval, content)
    {
        let rows = markdown::render(&plan, width.saturating_sub(INDENT).max(1), theme);
        indented(&mut plan_rows, rows, INDENT);
        if from_raw {
            // The plan is shown as markdown; the rest of the input as JSON.
            if let Some(Value::Object(map)) = &mut raw {
                map.remove("plan");
                if map.is_empty() {
                    raw = None;
                }
            }
        }
    }

    let mut changes = Vec::new();
    let indent = [spaces(INDENT)];
    for path in &approval.view.locations {
        let piece = [Span::styled(
            format!("at {}", one_line(&relative(path, cwd))),
            theme.dim(),
        )];
        wrap_into(&mut changes, &piece, &indent, &indent, width, Mode::Char);
    }
    let ctx = Ctx {
        width,
        expanded: false,
        theme,
    };
    // The whole diff: what is approved can be read to its end (Shift-↓).
    for item in content {
        if let ToolContent::Diff { path, old, new } = item {
            let path = relative(path, cwd);
            diff_lines(&mut changes, &path, old.as_deref(), new, ctx, usize::MAX);
        }
    }

    let mut raw_rows = Vec::new();
    let mut hidden = 0;
    if !expanded && let Some(value) = &mut raw {
        hidden = prune(value, content);
        if value.as_object().is_some_and(|m| m.is_empty()) {
            raw = None;
        }
    }
    if let Some(raw) = &raw {
        raw_lines(&mut raw_rows, raw, width, expanded, theme);
    }
    if hidden > 0 {
        let fields = if hidden == 1 { "field" } else { "fields" };
        let piece = [Span::styled(
            format!("… {hidden} {fields} hidden · e expand"),
            theme.dim(),
        )];
        let indent = [spaces(INDENT)];
        wrap_into(&mut raw_rows, &piece, &indent, &indent, width, Mode::Word);
    }

    let mut out = Vec::new();
    for part in [plan_rows, changes, raw_rows] {
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(blank());
        }
        out.extend(part);
    }
    out
}

/// `path` relative to the workspace `cwd` when it lies inside it.
fn relative(path: &str, cwd: &Path) -> String {
    if cwd.as_os_str().is_empty() {
        return path.to_string();
    }
    match Path::new(path).strip_prefix(cwd) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A raw-input field that says nothing to a person: an id, a timestamp.
fn is_noise(key: &str) -> bool {
    key == "id"
        || key.ends_with("_id")
        || key.ends_with("Id")
        || key.ends_with("_ms")
        || key.ends_with("_at")
        || key.to_ascii_lowercase().contains("timestamp")
}

/// Take out of the raw input what a person need not read there: ids and
/// timestamps at its top, and any text the card already shows as a diff
/// (a Write's whole file). Returns how many fields went.
fn prune(raw: &mut Value, content: &[ToolContent]) -> usize {
    let shown: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Diff { old, new, .. } => Some([old.as_deref(), Some(new.as_str())]),
            _ => None,
        })
        .flatten()
        .flatten()
        .filter(|t| !t.is_empty())
        .collect();
    let mut gone = 0;
    if let Value::Object(map) = raw {
        let before = map.len();
        map.retain(|key, _| !is_noise(key));
        gone += before - map.len();
    }
    gone + prune_shown(raw, &shown)
}

/// Drop the strings equal to one of `shown`, at any depth.
fn prune_shown(value: &mut Value, shown: &[&str]) -> usize {
    let same = |v: &Value| v.as_str().is_some_and(|t| shown.contains(&t));
    let mut gone = 0;
    match value {
        Value::Object(map) => {
            let before = map.len();
            map.retain(|_, v| !same(v));
            gone += before - map.len();
            for v in map.values_mut() {
                gone += prune_shown(v, shown);
            }
        }
        Value::Array(items) => {
            for v in items {
                gone += prune_shown(v, shown);
            }
        }
        _ => {}
    }
    gone
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

/// The answering keys a folded card lists on its one row, those it
/// offers: "y allow · n deny · a chat · r reason".
fn folded_keys(approval: &Approval) -> String {
    use crate::state::Choice as C;
    keys::card_line(
        false,
        |choice| {
            matches!(
                choice,
                C::Allow | C::Deny | C::AllowForChat | C::DenyWithReason
            ) && approval.card.offers(*choice)
        },
        |_| false,
    )
}

/// The hint row under folded choices, when the card takes answers: the
/// keys the folded row does not list.
fn folded_hints(state: &ChatState) -> Option<String> {
    use crate::state::Choice as C;
    let approval = state.gate.approvals.get(selected(state))?;
    let normal = state.view.focus.is(Pane::Cards)
        && state.card_armed()
        && approval.view.card != CardKind::Elicitation;
    normal.then(|| {
        keys::card_line(
            true,
            |choice| {
                !matches!(
                    choice,
                    C::Allow | C::Deny | C::AllowForChat | C::DenyWithReason
                ) && approval.card.offers(*choice)
            },
            |cmd| *cmd != keys::CardCmd::Expand,
        )
    })
}

/// The command a card runs, every line of it, `runs ` before the first:
/// a run of blank lines is one row that says how many (no blank rows an
/// agent can push the rest below the fold with), and past `max` rows the
/// last one says how many lines are left, in warden's colour. Returns
/// whether it cut.
fn runs_lines(
    out: &mut Vec<Line<'static>>,
    command: &str,
    width: usize,
    max: usize,
    theme: Theme,
) -> bool {
    let lines: Vec<&str> = command.lines().collect();
    // Each row, and how many of the command's lines are whole after it.
    let mut rows: Vec<(Line<'static>, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let lead = if rows.is_empty() {
            Span::styled("runs ", theme.card_label())
        } else {
            spaces(INDENT)
        };
        let blank = lines[i..]
            .iter()
            .take_while(|l| l.trim().is_empty())
            .count();
        if blank > 0 {
            let what = if blank == 1 { "line" } else { "lines" };
            let row = Line::from(vec![
                lead,
                Span::styled(format!("⋮ {blank} blank {what}"), theme.card_label()),
            ]);
            i += blank;
            rows.push((row, i));
            continue;
        }
        let mut wrapped = Vec::new();
        let piece = [Span::styled(lines[i].to_string(), theme.tool_title())];
        wrap_into(
            &mut wrapped,
            &piece,
            &[lead],
            &[spaces(INDENT)],
            width,
            Mode::Char,
        );
        i += 1;
        let n = wrapped.len();
        for (k, row) in wrapped.into_iter().enumerate() {
            rows.push((row, if k + 1 == n { i } else { i - 1 }));
        }
    }
    if rows.len() <= max {
        out.extend(rows.into_iter().map(|(row, _)| row));
        return false;
    }
    let keep = max.max(1);
    let whole = if keep >= 2 { rows[keep - 2].1 } else { 0 };
    let left = lines.len() - whole;
    let what = if left == 1 { "line" } else { "lines" };
    // Narrow, the count alone: what is left is said before any of it.
    let expand = if width >= WIDE_HINTS {
        " · e expand"
    } else {
        ""
    };
    let note = format!(" {left} more {what}{expand}");
    // The note ends short of the row's end, where a scroll marker may sit.
    let marker = if width >= WIDE_HINTS { 21 } else { 5 };
    let room = width.saturating_sub(str_width(&note) + 2 + marker);
    let mut kept: Vec<Line<'static>> = rows.into_iter().take(keep).map(|(row, _)| row).collect();
    if let Some(last) = kept.pop() {
        // A row cut short ends in `…` already.
        let lead = if last.width() > room { "" } else { " …" };
        let mut cut = fit(&last.spans, room);
        cut.spans
            .push(Span::styled(format!("{lead}{note}"), theme.card_label()));
        kept.push(cut);
    }
    out.extend(kept);
    true
}

/// `e expand` stays in the keys only while there is more to see: the raw
/// input or the title is cut (its last row says so) or already expanded.
pub(crate) fn fit_expand_hint(
    card: &mut Card,
    detail: &[Line<'static>],
    state: &ChatState,
    width: u16,
    theme: Theme,
) {
    let cut = detail
        .iter()
        .chain(&card.top)
        .any(|l| l.spans.iter().any(|s| s.content.ends_with("· e expand")));
    if cut || state.view.cursor.expanded || card.folded || card.runs_cut {
        return;
    }
    let width = body_width(width);
    let (full, short) = hint_lines(state);
    for (rows, text) in [(&mut card.hints, full), (&mut card.short_hints, short)] {
        rows.clear();
        let text = text.replace(" · e expand", "");
        wrap_text_into(rows, &text, theme.dim(), &[], &[], width, Mode::Word);
    }
}

/// What the hint line says while a card that just became the selected
/// one ignores answers.
pub(crate) const WAIT_HINT: &str = "just appeared: its keys work in a moment";

/// The card's hint lines (full, and short of room) for where the keys are,
/// from the key tables, listing only what the card offers: under a
/// question its answers; while the composer has the keys, how to reach
/// the card; while the card ignores answers, that it does.
pub(crate) fn hint_lines(state: &ChatState) -> (String, String) {
    let both = |line: String| (line.clone(), line);
    let focus = &state.view.focus;
    let Some(approval) = state.gate.approvals.get(selected(state)) else {
        return both(String::new());
    };
    match &focus.modal {
        Some(Modal::Reason { .. }) => both(keys::card_hints(keys::REASON, false)),
        Some(Modal::KeepRule(_)) => both(keys::card_hints(keys::KEEP_RULE, false)),
        Some(Modal::Confirm(_)) => both(keys::card_hints(keys::QUESTION, false)),
        Some(Modal::ConfirmAll(_)) => both(keys::card_hints(keys::CONFIRM_ALL, false)),
        None if focus.pane == Pane::Composer => both(format!(
            "your message has the keys · {} answer this card",
            keys::key_name(
                keys::COMPOSER,
                &keys::Global::Act(crate::state::Action::ToggleCards)
            )
        )),
        _ if !state.card_armed() => both(WAIT_HINT.to_string()),
        _ if approval.view.card == CardKind::Elicitation => both(keys::elicitation_hints()),
        _ => {
            let offers = |choice: &Choice| approval.card.offers(*choice);
            (
                keys::card_line(false, offers, |_| true),
                keys::card_line(true, offers, |_| true),
            )
        }
    }
}

/// "Keep as rule: allow execute, command matching › ": what the kept rule
/// decides, for which kind, and which of its patterns the field edits.
fn keep_prompt(rule: Option<&Rule>) -> String {
    let Some(rule) = rule else {
        return "Keep as rule › ".to_string();
    };
    let mut out = format!("Keep as rule: {}", rule.decision.as_str());
    if let Some(kind) = rule.kind {
        out.push(' ');
        out.push_str(kind.as_str());
    }
    let which = if rule.command.is_some() {
        Some("command")
    } else if rule.path.is_some() {
        Some("paths")
    } else if rule.tool.is_some() {
        Some("tool")
    } else {
        None
    };
    if let Some(which) = which {
        out.push_str(", ");
        out.push_str(which);
        out.push_str(" matching");
    }
    out.push_str(" › ");
    out
}

/// A text field under the choices: `prompt`, then the text wrapped beside
/// it (or under it, when the prompt leaves the text too little room), the
/// last [`FIELD_ROWS`] rows up to the cursor. Returns the cursor's row in
/// `out` and its column.
fn field_rows(
    out: &mut Vec<Line<'static>>,
    prompt: &str,
    field: &Composer,
    width: usize,
    theme: Theme,
) -> (usize, usize) {
    let prompt_w = str_width(prompt);
    let beside = prompt_w + MIN_FIELD <= width;
    let indent = if beside { prompt_w } else { INDENT };
    if !beside {
        let prompt = truncate_end(prompt.trim_end(), width).into_owned();
        out.push(Line::from(Span::styled(prompt, theme.prompt())));
    }
    let wrapped = composer::wrap(field, width.saturating_sub(indent).max(1));
    let (row, col) = wrapped.cursor();
    let skip = (row + 1).saturating_sub(FIELD_ROWS);
    let start = out.len();
    for (i, text) in wrapped
        .rows()
        .iter()
        .skip(skip)
        .take(FIELD_ROWS)
        .enumerate()
    {
        let lead = if i == 0 && beside {
            Span::styled(prompt.to_string(), theme.prompt())
        } else {
            spaces(indent)
        };
        out.push(Line::from(vec![lead, Span::raw(text.clone())]));
    }
    (start + row - skip, indent + col)
}

/// The rows of one choice: its key, warden's words for it, then the
/// agent's (dim) and a flag when the two disagree.
fn choice_rows(
    out: &mut Vec<Line<'static>>,
    state: &ChatState,
    row: &ChoiceRow,
    width: usize,
    theme: Theme,
) {
    let style = match row.tone {
        Tone::Allow => theme.allow(),
        Tone::Reject => theme.reject(),
        Tone::Plain => theme.plain(),
    };
    let mut label = row.label.clone();
    if row.choice == Choice::ApproveAll {
        label.push_str(&format!(" ({})", state.gate.approvals.len()));
    }
    let mut pieces = vec![Span::styled(label, style)];
    if !row.detail.is_empty() {
        pieces.push(Span::styled(row.detail.clone(), theme.dim()));
    }
    if let Some(flag) = &row.flag {
        pieces.push(Span::styled(flag.clone(), theme.reject()));
    }
    let first = [Span::styled(format!("{}  ", row.key), theme.choice_key())];
    let rest = [spaces(3)];
    wrap_into(out, &pieces, &first, &rest, width, Mode::Word);
}

/// The one line of a card that is not selected: "▸ 2 of 3  title  kind".
fn one_liner(state: &ChatState, index: usize, width: usize, theme: Theme) -> Line<'static> {
    let Some(approval) = state.gate.approvals.get(index) else {
        return blank();
    };
    let spans = [
        Span::styled(
            format!(" ▸ {} of {}  ", index + 1, state.gate.approvals.len()),
            theme.dim(),
        ),
        Span::styled(approval.title(), theme.plain()),
        Span::styled(
            format!("  {}", approval.view.kind.as_str()),
            theme.tool_kind(),
        ),
    ];
    fit(&spans, width)
}

/// A row of spans cut to `width` columns, with `…` where cut.
fn fit(spans: &[Span<'static>], width: usize) -> Line<'static> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = str_width(&span.content);
        if used + w <= width {
            out.push(span.clone());
            used += w;
            continue;
        }
        let cut = truncate_end(&span.content, width - used).into_owned();
        out.push(Span::styled(cut, span.style));
        break;
    }
    Line::from(out)
}

/// A line saying how many cards are left out: "⋯ 4 more pending".
fn hidden_line(n: usize, theme: Theme) -> Line<'static> {
    Line::from(Span::styled(format!(" ⋯ {n} more pending"), theme.dim()))
}

/// Rows the whole card area would like.
pub(crate) fn wanted(state: &ChatState, card: &Card, detail: &[Line<'static>]) -> usize {
    let others = state.gate.approvals.len().saturating_sub(1);
    others + box_wanted(card, detail)
}

/// The box with everything in it: borders, header, a blank row, the
/// request part and another blank row when there is one, choices, keys.
fn box_wanted(card: &Card, detail: &[Line<'static>]) -> usize {
    let detail = if detail.is_empty() {
        0
    } else {
        detail.len() + 1
    };
    2 + card.top.len() + 1 + detail + card.bottom.len() + card.hints.len()
}

/// Rows the box needs for its choices and keys to stay in sight, with
/// warden's first row and what the card is about (its command, its
/// diff's first lines: [`ABOUT_MIN`] rows, one at least) above them.
pub(crate) fn box_least(card: &Card, detail: &[Line<'static>]) -> usize {
    2 + 1 + about_rows(card, detail).max(1) + card.bottom.len() + card.short_hints.len()
}

/// The detail row of a diff's first changed line (`-` or `+`), on a tiny
/// card about its diff: one row of the diff shows what changes, where its
/// location and headers do not.
fn first_change(card: &Card, detail: &[Line<'static>], theme: Theme) -> Option<usize> {
    if card.about.is_some() || card.about_min > ABOUT_MIN.1 {
        return None;
    }
    detail.iter().position(|line| {
        line.spans.get(1).is_some_and(|sign| {
            (sign.content == "-" && sign.style == theme.diff_del())
                || (sign.content == "+" && sign.style == theme.diff_add())
        })
    })
}

/// Rows of what the card is about that must stay in sight.
fn about_rows(card: &Card, detail: &[Line<'static>]) -> usize {
    let len = match &card.about {
        Some(rows) => rows.len(),
        None => detail.len(),
    };
    len.min(card.about_min)
}

/// Which one-liners to show within `budget` rows: how many before and
/// after the selected card (nearest first), and whether each side says how
/// many it leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Others {
    before: usize,
    after: usize,
    more_before: bool,
    more_after: bool,
}

fn pick_others(selected: usize, n: usize, budget: usize) -> Others {
    let (before, after) = (selected, n - selected - 1);
    let cost = |b: usize, a: usize| b + a + usize::from(b < before) + usize::from(a < after);
    if cost(0, 0) > budget {
        let more_before = before > 0 && budget > 0;
        return Others {
            before: 0,
            after: 0,
            more_before,
            more_after: after > 0 && budget > usize::from(more_before),
        };
    }
    let (mut b, mut a) = (0, 0);
    loop {
        let mut grew = false;
        if b < before && cost(b + 1, a) <= budget {
            b += 1;
            grew = true;
        }
        if a < after && cost(b, a + 1) <= budget {
            a += 1;
            grew = true;
        }
        if !grew {
            return Others {
                before: b,
                after: a,
                more_before: b < before,
                more_after: a < after,
            };
        }
    }
}

/// Where a body row comes from.
#[derive(Clone, Copy)]
enum Src {
    Top(usize),
    Detail(usize),
    Bottom(usize),
    Hint(usize),
    ShortHint(usize),
    Blank,
}

/// Draw the card area: one-liners, the selected card, one-liners.
pub(crate) fn render(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    card: &Card,
    detail: &[Line<'static>],
    theme: Theme,
) -> Drawn {
    let mut drawn = Drawn::default();
    let n = state.gate.approvals.len();
    if n == 0 || area.is_empty() {
        return drawn;
    }
    let sel = selected(state);
    let height = usize::from(area.height);
    let width = usize::from(area.width);
    let others = n - 1;
    let reserve = if height >= MIN_BOX + others.min(MIN_OTHERS) {
        others.min(MIN_OTHERS)
    } else {
        0
    };
    let box_h = box_wanted(card, detail).min(height - reserve);
    let others = pick_others(sel, n, height - box_h);

    let mut above = Vec::new();
    if others.more_before {
        above.push(hidden_line(sel - others.before, theme));
    }
    for i in sel - others.before..sel {
        above.push(one_liner(state, i, width, theme));
    }
    let mut below = Vec::new();
    for i in sel + 1..=sel + others.after {
        below.push(one_liner(state, i, width, theme));
    }
    if others.more_after {
        below.push(hidden_line(n - sel - 1 - others.after, theme));
    }
    let mut y = area.y;
    for line in &above {
        buf.set_line(area.x, y, line, area.width);
        y += 1;
    }
    // box_h <= area.height, a u16.
    let box_area = Rect::new(area.x, y, area.width, box_h as u16);
    y += box_area.height;
    for line in &below {
        buf.set_line(area.x, y, line, area.width);
        y += 1;
    }
    render_box(buf, box_area, state, card, detail, theme, &mut drawn);
    drawn
}

/// The selected card's box; the request part scrolls between a pinned
/// header and pinned choices while there is room for both.
fn render_box(
    buf: &mut Buffer,
    area: Rect,
    state: &ChatState,
    card: &Card,
    detail: &[Line<'static>],
    theme: Theme,
    drawn: &mut Drawn,
) {
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.card_border(state.view.focus.on_cards()))
        .padding(Padding::horizontal(1));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let h = usize::from(inner.height);
    let scroll = usize::from(state.view.cursor.scroll);
    let tops = (0..card.top.len()).map(Src::Top);
    let details = (0..detail.len()).map(Src::Detail);
    let bottoms = (0..card.bottom.len()).map(Src::Bottom);

    // The rows shown, and the scrolled window: (first row on screen, rows
    // on screen, rows above, rows below).
    let mut rows: Vec<Src> = Vec::with_capacity(h);
    let mut window = None;
    let full_hints = (0..card.hints.len()).map(Src::Hint);
    let short_hints = (0..card.short_hints.len()).map(Src::ShortHint);
    let content = card.top.len() + detail.len() + card.bottom.len();
    // Everything, with the long keys when they fit, and the rows left over
    // as blank rows: before the choices, then after the header.
    let full = content + card.hints.len() <= h;
    let hints_len = if full {
        card.hints.len()
    } else {
        card.short_hints.len()
    };
    if content + hints_len <= h {
        let spare = h - content - hints_len;
        let before_choices = !detail.is_empty() && spare >= 1;
        let after_header = spare > usize::from(before_choices);
        rows.extend(tops);
        if after_header {
            rows.push(Src::Blank);
        }
        rows.extend(details);
        if before_choices {
            rows.push(Src::Blank);
        }
        rows.extend(bottoms);
        if full {
            rows.extend(full_hints);
        } else {
            rows.extend(short_hints);
        }
    } else {
        // Short of room: no blank rows, the short keys; the header and the
        // choices stay while they leave room for the request part.
        let hints = short_hints;
        let (top, bottom) = (card.top.len(), card.bottom.len() + card.short_hints.len());
        let mut scrolled = |rows: &mut Vec<Src>, list: Vec<Src>, view: usize| {
            let view = view.min(list.len());
            let s = scroll.min(list.len() - view);
            window = Some((rows.len(), view, s, list.len() - s - view));
            rows.extend(&list[s..s + view]);
        };
        // The first row (warden's: what kind of call, why it asks) never
        // scrolls away, nor do the first rows of what the card is about.
        let about = about_rows(card, detail);
        let change = first_change(card, detail, theme);
        let details_fit =
            card.about.is_some() || h.saturating_sub(top + bottom) >= about + change.unwrap_or(0);
        if h > top + bottom && details_fit {
            rows.extend(tops);
            scrolled(&mut rows, details.collect(), h - top - bottom);
            rows.extend(bottoms.chain(hints));
        } else if h > bottom + 1 {
            rows.push(Src::Top(0));
            let view = h - bottom - 1;
            let mut rest: Vec<Src> = tops.skip(1).chain(details).collect();
            make_room_for_about(&mut rest, card, change, about, view);
            scrolled(&mut rows, rest, view);
            rows.extend(bottoms.chain(hints));
        } else {
            // Hardly any room: the choices and the keys stay in sight, and
            // whatever rows are left above them scroll through the rest.
            // warden's first row (what kind of call, why it asks) first,
            // when there are two rows: no agent text passes for it.
            let keep = if h >= 2 { (h - 1).min(bottom) } else { h };
            if h > keep {
                rows.push(Src::Top(0));
            }
            if h > keep + 1 {
                let rest = tops.skip(1).chain(details).collect();
                scrolled(&mut rows, rest, h - keep - 1);
            }
            let mut pinned: Vec<Src> = bottoms.chain(hints).collect();
            if pinned.len() > keep {
                // The last row is the keys: it stays, the last choices go.
                let keys = pinned.pop();
                pinned.truncate(keep.saturating_sub(1));
                pinned.extend(keys);
            }
            rows.extend(pinned);
        }
    }

    for (y, src) in (inner.y..inner.bottom()).zip(rows.iter().copied()) {
        let line = match src {
            Src::Top(i) => card.top.get(i),
            Src::Detail(i) => detail.get(i),
            Src::Bottom(i) => card.bottom.get(i),
            Src::Hint(i) => card.hints.get(i),
            Src::ShortHint(i) => card.short_hints.get(i),
            Src::Blank => None,
        };
        if let Some(line) = line {
            buf.set_line(inner.x, y, line, inner.width);
        }
        if let Src::Bottom(i) = src {
            if let Some(Some(choice)) = card.choice_at.get(i) {
                drawn
                    .choices
                    .push((Rect::new(inner.x, y, inner.width, 1), *choice));
            }
            if let Some((r, c)) = card.cursor
                && r == i
            {
                let x = inner.x.saturating_add(u16::try_from(c).unwrap_or(u16::MAX));
                drawn.cursor = Some(Position::new(x.min(inner.right() - 1), y));
            }
        }
    }

    if let Some((first, view, above, below)) = window {
        // Both fit in u16: they are rows of `inner`.
        let first_y = inner.y + first as u16;
        // Narrow, the count alone, so that most of the row it sits on
        // stays in sight.
        let wide = usize::from(inner.width) >= WIDE_HINTS;
        if below > 0 {
            let hint = if wide {
                format!(" ↓ {below} more · Shift-↓ ")
            } else {
                format!(" ↓{below} ")
            };
            scroll_hint(buf, inner, first_y + view as u16 - 1, &hint, theme);
        }
        if above > 0 && (view > 1 || below == 0) {
            let hint = if wide {
                format!(" ↑ {above} more · Shift-↑ ")
            } else {
                format!(" ↑{above} ")
            };
            scroll_hint(buf, inner, first_y, &hint, theme);
        }
    }
}

/// Move the rows that yield (the header's continuation, the agent's
/// title) from before what the card is about to after it, one at a time,
/// until its first `about` rows fit in the `view` rows at the top of
/// `rest`; warden's warnings never move.
/// `change`: the diff's first changed row, which is what a tiny card is
/// about; the rows before it (`at FILE`, the diff's header) yield too.
fn make_room_for_about(
    rest: &mut Vec<Src>,
    card: &Card,
    change: Option<usize>,
    about: usize,
    view: usize,
) {
    let is_about = |src: &Src| match (src, &card.about, change) {
        (Src::Top(i), Some(rows), _) => rows.contains(i),
        (Src::Detail(i), None, Some(c)) => *i == c,
        (Src::Detail(_), None, None) => true,
        _ => false,
    };
    let yields = |src: &Src| match src {
        Src::Top(i) => card.yields.contains(i),
        Src::Detail(i) => change.is_some_and(|c| *i < c),
        _ => false,
    };
    loop {
        let Some(at) = rest.iter().position(is_about) else {
            return;
        };
        if at + about <= view {
            return;
        }
        let Some(i) = rest[..at].iter().rposition(yields) else {
            return;
        };
        let row = rest.remove(i);
        let end = rest
            .iter()
            .rposition(is_about)
            .map_or(rest.len(), |last| last + 1);
        rest.insert(end, row);
    }
}

/// A scroll hint at the right end of row `y`.
fn scroll_hint(buf: &mut Buffer, inner: Rect, y: u16, hint: &str, theme: Theme) {
    let w = str_width(hint).min(usize::from(inner.width));
    // w <= inner.width, a u16.
    let x = inner.right() - w as u16;
    buf.set_stringn(x, y, hint, w, theme.follow_hint());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_nearest_first_with_a_summary_row() {
        let got = |sel, n, budget| {
            let o = pick_others(sel, n, budget);
            (o.before, o.after, o.more_before, o.more_after)
        };
        assert_eq!(got(1, 3, 5), (1, 1, false, false));
        assert_eq!(got(0, 10, 3), (0, 2, false, true));
        assert_eq!(got(5, 11, 4), (1, 1, true, true));
        assert_eq!(got(5, 11, 1), (0, 0, true, false));
        assert_eq!(got(5, 11, 0), (0, 0, false, false));
        assert_eq!(got(0, 1, 0), (0, 0, false, false));
    }
}

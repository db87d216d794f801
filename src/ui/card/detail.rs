//! The selected card's request part: what the agent asks to do (a
//! plan, the locations and diffs, the raw input with what a person need
//! not read taken out), cached per card.

use super::*;

/// The content to preview: the request's own, which holds its tool call's
/// as it was when the request came (`on_permission` snapshots it); never
/// the transcript's now, which a later `tool_call_update` may have changed.
pub(super) fn content_of(approval: &Approval) -> &[ToolContent] {
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
pub(super) fn blank() -> Line<'static> {
    Line::default()
}

/// `lines` with `n` columns of indentation before each.
pub(super) fn indented(out: &mut Vec<Line<'static>>, lines: Vec<Line<'static>>, n: usize) {
    for line in lines {
        let style = line.style;
        let mut spans = vec![spaces(n)];
        spans.extend(line.spans);
        out.push(Line::from(spans).style(style));
    }
}

/// The plan of a `switch_mode` request: `rawInput.plan`, else its text
/// content. The flag says whether it came from the raw input.
pub(super) fn plan_text(approval: &Approval, content: &[ToolContent]) -> Option<(String, bool)> {
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
pub(super) fn raw_lines(
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
pub(super) fn detail_lines(
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
pub(super) fn relative(path: &str, cwd: &Path) -> String {
    if cwd.as_os_str().is_empty() {
        return path.to_string();
    }
    match Path::new(path).strip_prefix(cwd) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A raw-input field that says nothing to a person: an id, a timestamp.
pub(super) fn is_noise(key: &str) -> bool {
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
pub(super) fn prune(raw: &mut Value, content: &[ToolContent]) -> usize {
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
pub(super) fn prune_shown(value: &mut Value, shown: &[&str]) -> usize {
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

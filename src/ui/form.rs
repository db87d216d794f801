//! The form editor of a form elicitation card (`state::FormEditor`),
//! drawn over the card: one line per field, the one being edited marked,
//! then what is wrong (if anything) and the keys.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::Theme;
use super::wrap::truncate_end;
use crate::sanitize::one_line;
use crate::state::{FieldKind, FormEditor};

const HINTS: &str = "↑↓ field · type to edit · Space/←→ choose · Enter send · Esc back to the card";

/// The lines of the editor, without the border.
pub(crate) fn lines(form: &FormEditor) -> Vec<String> {
    let mut lines = vec!["Fill in the form:".to_string()];
    for (i, field) in form.fields.iter().enumerate() {
        let marker = if i == form.selected { ">" } else { " " };
        let kind = match &field.kind {
            FieldKind::Text => "text",
            FieldKind::Number { integer: true } => "whole number",
            FieldKind::Number { .. } => "number",
            FieldKind::Flag => "yes/no",
            FieldKind::Choice { .. } => "one of",
        };
        let cursor = if i == form.selected
            && matches!(field.kind, FieldKind::Text | FieldKind::Number { .. })
        {
            "█"
        } else {
            ""
        };
        lines.push(format!(
            "{marker} {}{} ({kind}): {}{cursor}",
            one_line(&field.title),
            if field.required { " *" } else { "" },
            one_line(&field.shown()),
        ));
        if i == form.selected
            && let Some(text) = &field.description
        {
            lines.push(format!("    {}", one_line(text)));
        }
    }
    if form.fields.is_empty() {
        lines.push("  (no fields)".to_string());
    }
    if let Some(error) = &form.error {
        lines.push(format!("! {}", one_line(error)));
    }
    lines.push(HINTS.to_string());
    lines
}

/// Draw the editor over `area` (the cards' place).
pub(crate) fn render(buf: &mut Buffer, area: Rect, form: &FormEditor, theme: Theme) {
    if area.height < 3 || area.width < 4 {
        return;
    }
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border())
        .title(" form ");
    let inner = block.inner(area);
    block.render(area, buf);
    let all = lines(form);
    // Keep the field being edited in view; the keys stay on the last line.
    let rows = usize::from(inner.height);
    let skip = (form.selected + 2).saturating_sub(rows.saturating_sub(2));
    let width = usize::from(inner.width);
    let count = all.len();
    for (row, (index, line)) in all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || *i > skip || *i + 1 == count)
        .take(rows)
        .enumerate()
    {
        let style = if index + 1 == count {
            theme.dim()
        } else if line.starts_with('!') {
            theme.error()
        } else if line.starts_with('>') {
            theme.bold()
        } else {
            theme.plain()
        };
        let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
        buf.set_stringn(inner.x, y, truncate_end(line, width), width, style);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::buffer_text;
    use super::*;
    use insta::assert_snapshot;
    use serde_json::json;

    /// The form of a deployment elicitation, the region being chosen, a
    /// required count missing.
    #[test]
    fn the_form_over_the_card() {
        let schema = json!({"required": ["region", "count"], "properties": {
            "region": {"type": "string", "title": "Region", "enum": ["eu", "us"],
                       "description": "where it runs"},
            "count": {"type": "integer", "title": "Replicas"},
            "confirm": {"type": "boolean", "default": false},
        }});
        let mut form = FormEditor::from_schema(7, &schema);
        form.selected = form
            .fields
            .iter()
            .position(|f| f.name == "region")
            .unwrap_or(0);
        form.error = Some("Replicas is required".into());
        let area = Rect::new(0, 0, 72, 9);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &form, Theme::with_color(false));
        assert_snapshot!(buffer_text(&buf));
    }

    #[test]
    fn fields_show_their_kind_value_and_what_is_wrong() {
        let schema = json!({"required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name", "description": "who you are"},
            "ok": {"type": "boolean", "default": true},
        }});
        let mut form = FormEditor::from_schema(1, &schema);
        form.error = Some("Name is required".into());
        let lines = lines(&form);
        assert_eq!(lines[1], "> Name * (text): █");
        assert_eq!(lines[2], "    who you are");
        assert_eq!(lines[3], "  ok (yes/no): [x] yes");
        assert_eq!(lines[4], "! Name is required");
    }
}

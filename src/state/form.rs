//! Filling in a form elicitation: each field of the form's schema edited
//! on the card (text, number, yes/no, one of a list), required fields
//! checked, and `accept` sent with what the user entered.
//!
//! The card itself stays a permission card (`acp/elicitation.rs`): picking
//! its "accept" option opens this editor (`Modal::Form`) instead of
//! answering; Enter here checks the fields, hands the values to the runtime
//! (`Effect::ElicitationContent`) and then accepts the card the usual way.

use serde_json::{Map, Value};

use super::{Action, ChatState, Choice, Effect, Modal, RequestId};
use crate::keys::{self, CardCmd, FormCmd};
use crate::sanitize::one_line;

/// The card option that accepts an elicitation (`acp::elicitation::ACCEPT`).
const ACCEPT: &str = "accept";

/// What kind of value a field takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// Free text (`string`).
    Text,
    /// A number (`number`, or a whole one for `integer`).
    Number { integer: bool },
    /// Yes or no (`boolean`).
    Flag,
    /// One of these values (`enum`, with their titles when given).
    Choice {
        values: Vec<String>,
        titles: Vec<String>,
    },
}

/// One field of the form and what the user entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormField {
    /// The property's name (the key sent).
    pub name: String,
    /// Its title (or name), as shown.
    pub title: String,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    /// The text typed (text and numbers), `"true"`/`"false"` (flags), the
    /// chosen value (choices); empty: not given.
    pub value: String,
}

impl FormField {
    /// The value as shown on the card.
    pub(crate) fn shown(&self) -> String {
        match &self.kind {
            FieldKind::Flag => match self.value.as_str() {
                "true" => "[x] yes".into(),
                "false" => "[ ] no".into(),
                _ => "[ ] (not given)".into(),
            },
            FieldKind::Choice { values, titles } => {
                match values.iter().position(|v| *v == self.value) {
                    Some(i) => format!("< {} >", titles.get(i).unwrap_or(&values[i])),
                    None => "< (pick one with ←/→) >".into(),
                }
            }
            _ => self.value.clone(),
        }
    }

    /// The value as sent; `Ok(None)` when not given; an error for a value
    /// of the wrong kind.
    fn json(&self) -> Result<Option<Value>, String> {
        if self.value.is_empty() {
            return Ok(None);
        }
        Ok(Some(match &self.kind {
            FieldKind::Text | FieldKind::Choice { .. } => Value::String(self.value.clone()),
            FieldKind::Flag => Value::Bool(self.value == "true"),
            FieldKind::Number { integer: true } => self
                .value
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("{} must be a whole number", one_line(&self.title)))?,
            FieldKind::Number { integer: false } => self
                .value
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("{} must be a number", one_line(&self.title)))?,
        }))
    }
}

/// The form being filled in for the card `request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormEditor {
    /// The card's request id.
    pub request: RequestId,
    pub fields: Vec<FormField>,
    /// The field being edited.
    pub selected: usize,
    /// Why the last Enter did not send (a required field, a bad number).
    pub error: Option<String>,
}

impl FormEditor {
    /// The editor for an elicitation's `requestedSchema`, each field
    /// starting at its default.
    pub(crate) fn from_schema(request: RequestId, schema: &Value) -> Self {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let fields = properties
            .iter()
            .map(|(name, field)| {
                let text = |key: &str| field.get(key).and_then(Value::as_str).map(str::to_string);
                let choices = field.get("enum").and_then(Value::as_array).map(|values| {
                    let values: Vec<String> = values
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect();
                    let titles = field
                        .get("enumNames")
                        .and_then(Value::as_array)
                        .map(|t| {
                            t.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .filter(|t: &Vec<String>| t.len() == values.len())
                        .unwrap_or_else(|| values.clone());
                    FieldKind::Choice { values, titles }
                });
                let kind =
                    choices.unwrap_or_else(|| match field.get("type").and_then(Value::as_str) {
                        Some("boolean") => FieldKind::Flag,
                        Some("integer") => FieldKind::Number { integer: true },
                        Some("number") => FieldKind::Number { integer: false },
                        _ => FieldKind::Text,
                    });
                let value = match field.get("default") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                };
                FormField {
                    name: name.clone(),
                    title: text("title").unwrap_or_else(|| name.clone()),
                    description: text("description"),
                    kind,
                    required: required.contains(&name.as_str()),
                    value,
                }
            })
            .collect();
        FormEditor {
            request,
            fields,
            selected: 0,
            error: None,
        }
    }

    /// The values to send, or why not (a required field left empty, a
    /// value of the wrong kind).
    pub(crate) fn content(&self) -> Result<Map<String, Value>, String> {
        let mut content = Map::new();
        for field in &self.fields {
            match field.json()? {
                Some(value) => {
                    content.insert(field.name.clone(), value);
                }
                None if field.required => {
                    return Err(format!("{} is required", one_line(&field.title)));
                }
                None => {}
            }
        }
        Ok(content)
    }

    fn field(&mut self) -> Option<&mut FormField> {
        self.fields.get_mut(self.selected)
    }

    /// Move the current choice (or flip the flag) by `step`.
    fn cycle(&mut self, step: isize) {
        let Some(field) = self.field() else {
            return;
        };
        match &field.kind {
            FieldKind::Flag => {
                field.value = if field.value == "true" {
                    "false"
                } else {
                    "true"
                }
                .into();
            }
            FieldKind::Choice { values, .. } if !values.is_empty() => {
                let n = values.len() as isize;
                let next = match values.iter().position(|v| *v == field.value) {
                    Some(i) => (i as isize + step).rem_euclid(n),
                    None if step < 0 => n - 1,
                    None => 0,
                };
                field.value = values[next as usize].clone();
            }
            _ => {}
        }
    }
}

impl ChatState {
    /// Whether the card `index` is a form elicitation (its accept opens the
    /// editor).
    fn form_schema(&self, index: usize) -> Option<(RequestId, Value)> {
        let card = self.gate.approvals.get(index)?;
        if !card.request.tool_call_id.starts_with("elicitation-form-") {
            return None;
        }
        let schema = card
            .request
            .fields
            .raw_input
            .as_ref()?
            .get("requestedSchema")?
            .clone();
        Some((card.id, schema))
    }

    /// Keys on a form elicitation card that mean something else there:
    /// accepting opens the editor; the chat grant and bypass keys do not
    /// apply. `None`: the card's usual keys.
    pub(crate) fn on_form_card_key(
        &mut self,
        action: &Action,
        key: Option<keys::Key>,
    ) -> Option<Vec<Effect>> {
        if matches!(self.view.focus.modal, Some(Modal::Form(_))) {
            return None;
        }
        let (request, schema) = self.form_schema(self.view.cursor.selected)?;
        let card = self.gate.approvals.get(self.view.cursor.selected)?;
        let accept = card.request.options.iter().position(|o| o.id == ACCEPT);
        let choice = key.and_then(crate::state::choice_of_key);
        let opens = match (action, choice) {
            (Action::ClickChoice(i), _) => accept == Some(*i),
            (_, Some(Choice::Allow)) => true,
            (_, Some(Choice::AgentOption(digit))) => accept == Some(digit),
            (
                _,
                Some(Choice::AllowForChat | Choice::Bypass | Choice::ApproveAll | Choice::KeepRule),
            ) => {
                self.view.notice =
                    Some("a form is filled in (y) or declined (n); nothing else answers it".into());
                return Some(Vec::new());
            }
            (_, Some(_)) => false,
            (_, None) => {
                keys::lookup_key(keys::CARDS, key) == Some(CardCmd::Pick)
                    && accept == Some(self.view.cursor.choice)
            }
        };
        if !opens {
            return None;
        }
        // Opening the form starts the answer: not on a card that just
        // appeared (`gate/arming.rs`).
        if !self.armed_at(self.view.pressed_at) {
            return Some(self.not_armed());
        }
        self.view
            .focus
            .open(Modal::Form(FormEditor::from_schema(request, &schema)));
        Some(Vec::new())
    }

    /// Keys while a form is being filled in.
    pub(crate) fn on_form_key(
        &mut self,
        action: &Action,
        key: Option<keys::Key>,
        mut form: FormEditor,
    ) -> Vec<Effect> {
        let Some(index) = self
            .gate
            .approvals
            .iter()
            .position(|a| a.id == form.request)
        else {
            // The card went away (answered, stale): nothing to fill in. The
            // key was meant for the form: it and the next go to the
            // composer, never to another card.
            self.view.focus.pane = super::Pane::Composer;
            return Vec::new();
        };
        form.error = None;
        match (keys::lookup_key(keys::FORM, key), action) {
            (Some(FormCmd::Back), _) => return Vec::new(),
            (Some(FormCmd::Prev), _) => form.selected = form.selected.saturating_sub(1),
            (Some(FormCmd::Next), _) => {
                form.selected = (form.selected + 1).min(form.fields.len().saturating_sub(1));
            }
            (Some(FormCmd::CycleBack), _) => form.cycle(-1),
            (Some(FormCmd::Cycle), _) => form.cycle(1),
            (_, Action::Char(' '))
                if form.field().is_some_and(|f| {
                    matches!(f.kind, FieldKind::Flag | FieldKind::Choice { .. })
                }) =>
            {
                form.cycle(1);
            }
            (_, Action::Char(c)) => {
                if let Some(field) = form.field()
                    && matches!(field.kind, FieldKind::Text | FieldKind::Number { .. })
                {
                    field.value.push(*c);
                }
            }
            (_, Action::Paste(text)) => {
                if let Some(field) = form.field()
                    && matches!(field.kind, FieldKind::Text | FieldKind::Number { .. })
                {
                    field.value.push_str(&one_line(text));
                }
            }
            (Some(FormCmd::Erase), _) => {
                if let Some(field) = form.field() {
                    match field.kind {
                        FieldKind::Text | FieldKind::Number { .. } => {
                            field.value.pop();
                        }
                        _ => field.value.clear(),
                    }
                }
            }
            (Some(FormCmd::Send), _) => match form.content() {
                Ok(content) => {
                    self.view.cursor.selected = index;
                    let accept = self.gate.approvals[index]
                        .request
                        .options
                        .iter()
                        .position(|o| o.id == ACCEPT);
                    let Some(accept) = accept else {
                        return Vec::new();
                    };
                    let mut effects = vec![Effect::ElicitationContent {
                        id: form.request,
                        content,
                    }];
                    // The card is accepted the usual way (policy, decision
                    // line, log); the values went to the runtime first. The
                    // form is closed: the keys go back to the cards.
                    effects.extend(self.pick_agent_option(accept));
                    return effects;
                }
                Err(message) => form.error = Some(message),
            },
            _ => {}
        }
        self.view.focus.open(Modal::Form(form));
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["region", "count"], "properties": {
            "region": {"type": "string", "title": "Region", "enum": ["us", "eu"]},
            "count": {"type": "integer", "title": "Count"},
            "confirm": {"type": "boolean", "default": false},
            "note": {"type": "string"},
        }})
    }

    #[test]
    fn fields_are_read_with_their_kinds_and_defaults() {
        let form = FormEditor::from_schema(1, &schema());
        let names: Vec<(&str, &FieldKind, bool, &str)> = form
            .fields
            .iter()
            .map(|f| (f.name.as_str(), &f.kind, f.required, f.value.as_str()))
            .collect();
        assert_eq!(names.len(), 4);
        assert!(names.contains(&("count", &FieldKind::Number { integer: true }, true, "")));
        assert!(names.contains(&("confirm", &FieldKind::Flag, false, "false")));
        assert!(names.contains(&("note", &FieldKind::Text, false, "")));
    }

    #[test]
    fn required_fields_and_numbers_are_checked() {
        let mut form = FormEditor::from_schema(1, &schema());
        let region = form
            .fields
            .iter()
            .position(|f| f.name == "region")
            .unwrap_or(0);
        form.selected = region;
        form.cycle(1);
        form.cycle(1);
        assert_eq!(form.content(), Err("Count is required".into()));
        let count = form
            .fields
            .iter()
            .position(|f| f.name == "count")
            .unwrap_or(0);
        form.fields[count].value = "x".into();
        assert_eq!(form.content(), Err("Count must be a whole number".into()));
        form.fields[count].value = "3".into();
        let content = form.content().expect("complete");
        assert_eq!(
            Value::Object(content),
            json!({"region": "eu", "count": 3, "confirm": false})
        );
    }
}

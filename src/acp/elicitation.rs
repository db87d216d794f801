//! `elicitation/create`: the agent (or an MCP server behind it) asks the
//! user for a form's values or to visit a url.
//!
//! warden shows it as a card (see [`card`]): a form lists its fields, a url
//! shows the address. warden never opens the url nor accepts anything by
//! itself: the card's tool call id starts `elicitation-`, which the policy
//! always asks about (`RequestView::elicitation`). A form is accepted with
//! what the user fills in on the card (`state/form.rs`: its "accept"
//! opens the editor, whose values arrive through [`ElicitationResponder::fill`]);
//! an accept without them sends the form's defaults when they cover every
//! required field, else a decline: never an incomplete form.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use serde_json::{Map, Value, json};

use crate::model::{
    OptionKind, PermissionOption, PermissionOutcome, PermissionRequest, ToolCallFields,
    ToolContent, ToolKind,
};

/// The card option that accepts the elicitation.
pub(crate) const ACCEPT: &str = "accept";
/// The card option that declines it.
pub(crate) const DECLINE: &str = "decline";

/// Answers one `elicitation/create`; dropping it answers `cancel`.
#[derive(Debug)]
pub struct ElicitationResponder {
    responder: Option<Box<Responder<acp::CreateElicitationResponse>>>,
    /// What "accept" sends for a form (its defaults, when they cover every
    /// required field; or what the user filled in); `None` for a url.
    content: Option<Map<String, Value>>,
    /// A form (an accept without content declines).
    form: bool,
}

impl ElicitationResponder {
    /// The values the user filled in, sent by the next accept.
    pub(crate) fn fill(&mut self, content: Map<String, Value>) {
        if self.form {
            self.content = Some(content);
        }
    }

    /// Answer with the card's outcome: `ACCEPT` accepts (a form with its
    /// defaults), any other option declines, `cancelled` cancels.
    pub(crate) fn respond(mut self, outcome: &PermissionOutcome) {
        let answer = match outcome {
            PermissionOutcome::Selected(id) if id == ACCEPT => match self.content.take() {
                Some(content) => json!({"action": "accept", "content": content}),
                None if self.form => json!({"action": "decline"}),
                None => json!({"action": "accept"}),
            },
            PermissionOutcome::Selected(_) => json!({"action": "decline"}),
            PermissionOutcome::Cancelled => json!({"action": "cancel"}),
        };
        self.send(answer);
    }

    fn send(&mut self, answer: Value) {
        let Some(responder) = self.responder.take() else {
            return;
        };
        let response = match serde_json::from_value::<acp::CreateElicitationResponse>(answer) {
            Ok(response) => response,
            Err(err) => {
                tracing::warn!("could not build an elicitation answer: {err}");
                return;
            }
        };
        if let Err(err) = responder.respond(response) {
            tracing::warn!("could not answer an elicitation: {err}");
        }
    }
}

impl Drop for ElicitationResponder {
    fn drop(&mut self) {
        self.send(json!({"action": "cancel"}));
    }
}

/// The card for an elicitation and its responder; an error (and a
/// `decline` sent at once) when warden cannot tell which session it is for.
pub(crate) fn card(
    request: &acp::CreateElicitationRequest,
    responder: Responder<acp::CreateElicitationResponse>,
    seq: u64,
) -> Result<(PermissionRequest, ElicitationResponder), String> {
    let params = serde_json::to_value(request).unwrap_or(Value::Null);
    let mut answer = ElicitationResponder {
        responder: Some(Box::new(responder)),
        content: None,
        form: false,
    };
    let Some(session_id) = params.get("sessionId").and_then(Value::as_str) else {
        answer.send(json!({"action": "decline"}));
        return Err("an elicitation not tied to a session was declined".to_string());
    };
    let message = request.message.clone();
    let (tool_call_id, kind, text, accept) = match &request.mode {
        acp::ElicitationMode::Url(url) => (
            format!("elicitation-url-{}", url.elicitation_id),
            ToolKind::Fetch,
            url_text(&url.url),
            Some("Done: I finished on that page"),
        ),
        acp::ElicitationMode::Form(_) => {
            let schema = params.get("requestedSchema").cloned().unwrap_or_default();
            let (text, defaults) = form_text(&schema);
            answer.content = defaults;
            answer.form = true;
            let accept = Some("Fill in and accept");
            (
                format!("elicitation-form-{seq}"),
                ToolKind::Other,
                text,
                accept,
            )
        }
        _ => {
            answer.send(json!({"action": "decline"}));
            return Err(format!(
                "an elicitation of a kind warden does not know was declined: {message}"
            ));
        }
    };
    let mut options = Vec::new();
    if let Some(name) = accept {
        options.push(PermissionOption {
            id: ACCEPT.into(),
            name: name.into(),
            kind: OptionKind::AllowOnce,
        });
    }
    options.push(PermissionOption {
        id: DECLINE.into(),
        name: "Decline".into(),
        kind: OptionKind::RejectOnce,
    });
    let card = PermissionRequest {
        session_id: session_id.to_string(),
        tool_call_id,
        fields: ToolCallFields {
            kind: Some(kind),
            title: Some(format!("Asks: {message}")),
            tool_name: Some("elicitation".into()),
            raw_input: Some(params),
            content: Some(vec![ToolContent::Text { text }]),
            ..ToolCallFields::default()
        },
        options,
        client: false,
    };
    Ok((card, answer))
}

fn url_text(url: &str) -> String {
    format!(
        "The agent asks you to open this address yourself (warden does not open it):\n\n{url}\n\n\
         Check the address before you open it; answer Done when you have finished there."
    )
}

/// The form's fields as text, and the values "accept" sends: each field's
/// default; `None` when a required field has none.
fn form_text(schema: &Value) -> (String, Option<Map<String, Value>>) {
    let mut lines = Vec::new();
    for key in ["title", "description"] {
        if let Some(text) = schema.get(key).and_then(Value::as_str) {
            lines.push(text.to_string());
        }
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut defaults = Some(Map::new());
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    lines.push("Fields:".to_string());
    for (name, field) in properties {
        let kind = field.get("type").and_then(Value::as_str).unwrap_or("value");
        let needed = required.contains(&name.as_str());
        let mut line = format!(
            "- {} ({kind}{})",
            field.get("title").and_then(Value::as_str).unwrap_or(name),
            if needed { ", required" } else { "" }
        );
        if let Some(text) = field.get("description").and_then(Value::as_str) {
            line.push_str(&format!(": {text}"));
        }
        if let Some(choices) = field.get("enum").and_then(Value::as_array) {
            let choices: Vec<String> = choices.iter().map(Value::to_string).collect();
            line.push_str(&format!(" [one of {}]", choices.join(", ")));
        }
        match field.get("default") {
            Some(value) => {
                line.push_str(&format!(" = {value}"));
                if let Some(map) = defaults.as_mut() {
                    map.insert(name.clone(), value.clone());
                }
            }
            None if needed => {
                line.push_str(" (no default)");
                defaults = None;
            }
            None => {}
        }
        lines.push(line);
    }
    if properties.is_empty() {
        lines.push("(none)".to_string());
    }
    lines.push("y fills in the fields (then Enter sends them) · n declines".to_string());
    (lines.join("\n"), defaults)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn form_defaults_are_what_accept_sends() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your name", "default": "ada"},
                "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
                "notes": {"type": "string"}
            },
            "required": ["name"]
        });
        let (text, defaults) = form_text(&schema);
        assert_eq!(
            defaults,
            Some(
                json!({"name": "ada", "size": "m"})
                    .as_object()
                    .cloned()
                    .unwrap()
            )
        );
        assert!(
            text.contains("- name (string, required): Your name = \"ada\""),
            "{text}"
        );
        assert!(text.contains("[one of \"s\", \"m\"]"), "{text}");
    }

    #[test]
    fn a_required_field_without_default_cannot_be_accepted() {
        let schema = json!({
            "properties": {"token": {"type": "string"}},
            "required": ["token"]
        });
        let (text, defaults) = form_text(&schema);
        assert_eq!(defaults, None);
        assert!(
            text.contains("token (string, required) (no default)"),
            "{text}"
        );
    }
}

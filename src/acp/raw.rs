//! Requests sent untyped, so that what this SDK's types leave out can be
//! read from the agent's JSON: the `models` of a session (`session/new`,
//! `session/load`, `session/resume`), the `usage` of a prompt answer, the
//! `vars` of an `env_var` sign-in method, and `session/set_model`, which
//! this SDK does not know.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, UntypedMessage};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::model::{OptionChoice, SessionOption, SessionOptionValue};

/// Send `request` as `method` and read the answer both as `R` and as JSON.
pub(super) async fn request<R: DeserializeOwned>(
    cx: &ConnectionTo<Agent>,
    method: &str,
    request: &impl Serialize,
) -> Result<(R, Value), agent_client_protocol::Error> {
    let untyped = UntypedMessage::new(method, request)?;
    let value = cx.send_request(untyped).block_task().await?;
    let typed = serde_json::from_value(value.clone()).map_err(|err| {
        agent_client_protocol::Error::internal_error().data(format!(
            "the agent's answer to {method} did not parse: {err}"
        ))
    })?;
    Ok((typed, value))
}

/// Send `session/set_model`.
pub(super) async fn set_model(
    cx: &ConnectionTo<Agent>,
    session_id: &str,
    model_id: &str,
) -> Result<(), agent_client_protocol::Error> {
    let params = serde_json::json!({"sessionId": session_id, "modelId": model_id});
    let untyped = UntypedMessage::new("session/set_model", &params)?;
    cx.send_request(untyped).block_task().await.map(|_| ())
}

/// The `models` of a session answer (`currentModelId`, `availableModels`)
/// as a select option whose id is [`SessionOption::MODELS_ID`]: a change is
/// sent with `session/set_model`. `None` when the answer has no models (or
/// none the user could pick).
pub(super) fn models(answer: &Value) -> Option<SessionOption> {
    let models = answer.get("models")?;
    let current = models.get("currentModelId")?.as_str()?.to_string();
    let choices: Vec<OptionChoice> = models
        .get("availableModels")?
        .as_array()?
        .iter()
        .filter_map(|m| {
            let id = m.get("modelId")?.as_str()?.to_string();
            let name = m
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| id.clone(), str::to_string);
            let description = m
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string);
            Some(OptionChoice {
                id,
                name,
                description,
            })
        })
        .collect();
    if choices.is_empty() {
        return None;
    }
    Some(SessionOption {
        id: SessionOption::MODELS_ID.to_string(),
        name: "Model".to_string(),
        description: None,
        category: Some("model".to_string()),
        value: SessionOptionValue::Select { current, choices },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// gemini-cli 0.61 (gemini-cli-0.61.0-fakellm-shell-allow.jsonl): a
    /// model without a description, the current one by id.
    #[test]
    fn gemini_models_are_a_select() {
        let answer = json!({"sessionId": "s", "models": {"availableModels": [
            {"modelId": "auto", "name": "Auto", "description": "Let Gemini CLI decide"},
            {"modelId": "gemini-2.5-pro", "name": "gemini-2.5-pro"}],
            "currentModelId": "gemini-2.5-pro"}});
        let option = models(&answer).expect("models");
        assert_eq!(option.id, SessionOption::MODELS_ID);
        assert!(option.is_model());
        assert_eq!(option.current_label(), "gemini-2.5-pro");
        let SessionOptionValue::Select { choices, .. } = &option.value else {
            panic!("select");
        };
        assert_eq!(choices.len(), 2);
        assert_eq!(
            choices[0].description.as_deref(),
            Some("Let Gemini CLI decide")
        );
    }

    /// qwen-code sends `description: null`; no models, or an empty list, is none.
    #[test]
    fn null_descriptions_and_missing_models() {
        let answer = json!({"models": {"currentModelId": "m", "availableModels": [
            {"modelId": "m", "name": "fake-model", "description": null}]}});
        assert_eq!(
            models(&answer).expect("models").current_label(),
            "fake-model"
        );
        assert_eq!(models(&json!({"sessionId": "s"})), None);
        assert_eq!(
            models(&json!({"models": {"currentModelId": "m", "availableModels": []}})),
            None
        );
    }
}

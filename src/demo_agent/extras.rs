//! What the demo agent sends beyond the SDK's types, as real agents do:
//! the `models` of `session/new` (Claude Code, Gemini CLI, qwen-code,
//! kimi-cli), `session/set_model`, and a prompt answer's `usage` (Claude
//! Code, opencode), and `authMethods` as written (an env_var method's
//! `vars`). The answers are written by the SDK, so the extra
//! fields are added to the outgoing line.

use std::sync::Mutex;

use serde_json::Value;

/// The model `session/set_model` picked (process-wide), if any.
static MODEL: Mutex<Option<String>> = Mutex::new(None);

/// The model in use: the last `session/set_model`, else the scenario's
/// `currentModelId`.
pub(crate) fn current_model(models: Option<&Value>) -> Option<String> {
    let picked = MODEL.lock().map(|m| m.clone()).unwrap_or_default();
    picked.or_else(|| {
        models
            .and_then(|m| m.get("currentModelId"))
            .and_then(Value::as_str)
            .map(str::to_string)
    })
}

/// `session/set_model` with `params`: one of the offered models, else an error.
pub(crate) fn set_model(models: Option<&Value>, params: &Value) -> Result<(), String> {
    let id = params
        .get("modelId")
        .and_then(Value::as_str)
        .ok_or("no modelId")?;
    let offered = models
        .and_then(|m| m.get("availableModels"))
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|m| m.get("modelId").and_then(Value::as_str) == Some(id))
        });
    if !offered {
        return Err(format!("unknown model {id}"));
    }
    if let Ok(mut model) = MODEL.lock() {
        *model = Some(id.to_string());
    }
    Ok(())
}

/// The extra fields a scenario asks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    /// `models` added to `session/new` answers (its `currentModelId`
    /// follows `session/set_model`).
    pub(crate) models: Option<Value>,
    /// `usage` added to `session/prompt` answers.
    pub(crate) prompt_usage: Option<Value>,
    /// `authMethods` of the `initialize` answer as written (the SDK's type
    /// drops an env_var method's `vars`).
    pub(crate) auth_methods: Vec<Value>,
}

/// Whether an auth method is a terminal login (`type`, kimi-cli's
/// `_meta.terminal-auth`, qwen-code's `_meta.type`).
pub(crate) fn terminal_login(method: &Value) -> bool {
    let meta = method.get("_meta");
    method.get("type").and_then(Value::as_str) == Some("terminal")
        || meta.and_then(|m| m.get("terminal-auth")).is_some()
        || meta.and_then(|m| m.get("type")).and_then(Value::as_str) == Some("terminal")
}

/// For an env_var method: the first of its variables not set in this
/// process's environment, as the real agent would find.
pub(crate) fn unset_vars(method: &Value) -> Option<String> {
    if method.get("type").and_then(Value::as_str) != Some("env_var") {
        return None;
    }
    method
        .get("vars")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|name| std::env::var_os(name).is_none())
        .map(str::to_string)
}

impl Extras {
    /// The outgoing line with the extra fields, when it answers
    /// `session/new` (a result with `sessionId`) or `session/prompt` (a
    /// result with `stopReason`).
    pub(crate) fn outgoing(&self, line: String) -> String {
        if self.models.is_none() && self.prompt_usage.is_none() && self.auth_methods.is_empty() {
            return line;
        }
        if !line.contains("\"sessionId\"")
            && !line.contains("\"stopReason\"")
            && !line.contains("\"agentCapabilities\"")
        {
            return line;
        }
        let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
            return line;
        };
        let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
            return line;
        };
        if result.contains_key("agentCapabilities") && !self.auth_methods.is_empty() {
            result.insert(
                "authMethods".into(),
                Value::Array(self.auth_methods.clone()),
            );
        } else if result.contains_key("sessionId")
            && let Some(models) = &self.models
        {
            let mut models = models.clone();
            if let (Some(object), Some(current)) =
                (models.as_object_mut(), current_model(self.models.as_ref()))
            {
                object.insert("currentModelId".into(), current.into());
            }
            result.insert("models".into(), models);
        } else if result.contains_key("stopReason")
            && let Some(usage) = &self.prompt_usage
        {
            result.insert("usage".into(), usage.clone());
        } else {
            return line;
        }
        serde_json::to_string(&message).unwrap_or(line)
    }
}

//! The demo agent's session options: its modes (also as a `mode` config
//! option), the scenario's other config options, and the MCP servers each
//! session was opened with.

use super::*;

impl Sessions {
    /// The modes as a `mode` config option, when the scenario says so.
    pub(super) fn config_options(&self, current: &str) -> Option<Vec<SessionConfigOption>> {
        let extra: Vec<SessionConfigOption> = lock(&self.extra_options)
            .iter()
            .filter_map(|option| serde_json::from_value(option.clone()).ok())
            .collect();
        if !self.mode_config_option {
            return (!extra.is_empty()).then_some(extra);
        }
        let choices: Vec<SessionConfigSelectOption> = self
            .modes
            .iter()
            .map(|mode| {
                SessionConfigSelectOption::new(mode.id.clone(), mode.name.clone())
                    .description(mode.description.clone())
            })
            .collect();
        let mut options = vec![
            SessionConfigOption::select(MODE_OPTION, "Mode", current.to_owned(), choices)
                .description("Session permission mode".to_owned())
                .category(SessionConfigOptionCategory::Mode),
        ];
        options.extend(extra);
        Some(options)
    }

    /// Remember the MCP servers a session was opened with.
    pub(super) fn set_mcp(
        &self,
        id: &SessionId,
        servers: &[agent_client_protocol::v1::schema::McpServer],
    ) {
        let described = servers
            .iter()
            .map(|server| {
                let value = serde_json::to_value(server).unwrap_or_default();
                let field = |key: &str| value.get(key).cloned().unwrap_or_default();
                let name = field("name").as_str().unwrap_or_default().to_owned();
                let pairs = |key: &str| {
                    field(key)
                        .as_array()
                        .map(|items| {
                            items
                                .iter()
                                .filter_map(|i| i.get("name").and_then(|n| n.as_str()))
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                        .unwrap_or_default()
                };
                match field("type").as_str() {
                    Some(kind) => format!(
                        "{name} ({kind}: {}; headers {})",
                        field("url").as_str().unwrap_or_default(),
                        pairs("headers")
                    ),
                    None => format!(
                        "{name} (stdio: {} {}; env {})",
                        field("command").as_str().unwrap_or_default(),
                        field("args")
                            .as_array()
                            .map(|a| a
                                .iter()
                                .filter_map(|x| x.as_str())
                                .collect::<Vec<_>>()
                                .join(" "))
                            .unwrap_or_default(),
                        pairs("env")
                    ),
                }
            })
            .collect();
        lock(&self.mcp).insert(id.clone(), described);
    }

    /// The MCP servers a session was opened with, described.
    pub(crate) fn mcp(&self, id: &SessionId) -> Vec<String> {
        lock(&self.mcp).get(id).cloned().unwrap_or_default()
    }

    /// `session/set_config_option` for one of the scenario's other
    /// options: a select takes one of its values, a boolean a boolean.
    pub(super) fn set_extra_option(
        &self,
        id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<(), Error> {
        let mut options = lock(&self.extra_options);
        let invalid = |why: String| Err(Error::invalid_params().data(why));
        let Some(option) = options
            .iter_mut()
            .find(|o| o.get("id").and_then(serde_json::Value::as_str) == Some(id))
        else {
            return invalid(format!("unknown config option {id}"));
        };
        let kind = option.get("type").and_then(serde_json::Value::as_str);
        let new = match (kind, value) {
            (Some("boolean"), SessionConfigOptionValue::Boolean { value }) => {
                serde_json::Value::Bool(*value)
            }
            (Some("select"), SessionConfigOptionValue::ValueId { value }) => {
                let value = value.to_string();
                let offered = option
                    .get("options")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|choices| {
                        choices.iter().any(|c| {
                            c.get("value").and_then(serde_json::Value::as_str) == Some(&value)
                        })
                    });
                if !offered {
                    return invalid(format!("{value} is not a value of {id}"));
                }
                serde_json::Value::String(value)
            }
            _ => return invalid(format!("wrong kind of value for {id}")),
        };
        option["currentValue"] = new;
        Ok(())
    }

    /// The session modes every session offers, `current` being the current one.
    pub(super) fn modes(&self, current: &str) -> SessionModeState {
        let modes = self
            .modes
            .iter()
            .map(|mode| {
                SessionMode::new(mode.id.clone(), mode.name.clone())
                    .description(mode.description.clone())
            })
            .collect();
        SessionModeState::new(current.to_owned(), modes)
    }
}

//! SDK wire types -> warden's domain types (`crate::model`).

use agent_client_protocol::v1::schema as acp;

use crate::agents::quirks::MetaReading;
use serde_json::Value;

use crate::model::{
    AgentMode, AgentModes, Location, OptionChoice, OptionKind, PermissionOption, PermissionRequest,
    PlanEntry, PlanStatus, SessionOption, SessionOptionValue, SessionUpdate, StopReason, ToolCall,
    ToolCallFields, ToolContent, ToolKind, Usage, WireStatus,
};

pub(crate) fn tool_kind(kind: &acp::ToolKind) -> ToolKind {
    match kind {
        acp::ToolKind::Read => ToolKind::Read,
        acp::ToolKind::Edit => ToolKind::Edit,
        acp::ToolKind::Delete => ToolKind::Delete,
        acp::ToolKind::Move => ToolKind::Move,
        acp::ToolKind::Search => ToolKind::Search,
        acp::ToolKind::Execute => ToolKind::Execute,
        acp::ToolKind::Think => ToolKind::Think,
        acp::ToolKind::Fetch => ToolKind::Fetch,
        acp::ToolKind::SwitchMode => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

fn status(status: &acp::ToolCallStatus) -> WireStatus {
    match status {
        acp::ToolCallStatus::InProgress => WireStatus::InProgress,
        acp::ToolCallStatus::Completed => WireStatus::Completed,
        acp::ToolCallStatus::Failed => WireStatus::Failed,
        _ => WireStatus::Pending,
    }
}

/// A content block as text: text itself, or a short description of anything else.
pub(crate) fn block_text(block: &acp::ContentBlock) -> String {
    match block {
        acp::ContentBlock::Text(text) => text.text.clone(),
        acp::ContentBlock::Image(_) => "[image]".to_string(),
        acp::ContentBlock::Audio(_) => "[audio]".to_string(),
        acp::ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        acp::ContentBlock::Resource(resource) => match &resource.resource {
            acp::EmbeddedResourceResource::TextResourceContents(text) => text.text.clone(),
            _ => "[binary resource]".to_string(),
        },
        _ => "[unsupported content]".to_string(),
    }
}

fn content(items: &[acp::ToolCallContent]) -> Vec<ToolContent> {
    items
        .iter()
        .map(|item| match item {
            acp::ToolCallContent::Content(c) => ToolContent::Text {
                text: block_text(&c.content),
            },
            acp::ToolCallContent::Diff(diff) => ToolContent::Diff {
                path: diff.path.display().to_string(),
                old: diff.old_text.clone(),
                new: diff.new_text.clone(),
            },
            acp::ToolCallContent::Terminal(t) => ToolContent::Terminal {
                id: t.terminal_id.to_string(),
            },
            _ => ToolContent::Text {
                text: "[unsupported tool content]".to_string(),
            },
        })
        .collect()
}

fn locations(items: &[acp::ToolCallLocation]) -> Vec<Location> {
    items
        .iter()
        .map(|l| Location {
            path: l.path.display().to_string(),
            line: l.line,
        })
        .collect()
}

/// The agent's tool call, its `_meta` read as the agent's quirks say
/// (`agents::quirks::meta`).
pub(crate) fn tool_call(call: &acp::ToolCall, meta: MetaReading) -> ToolCall {
    let mut converted = ToolCall {
        id: call.tool_call_id.to_string(),
        title: call.title.clone(),
        kind: tool_kind(&call.kind),
        status: status(&call.status),
        content: content(&call.content),
        locations: locations(&call.locations),
        raw_input: call.raw_input.clone(),
        raw_output: call.raw_output.clone(),
        tool_name: call
            .name
            .clone()
            .or_else(|| tool_name_meta(call.meta.as_ref(), meta)),
        agent_terminals: Vec::new(),
    };
    converted.apply_terminal_meta(&terminal_meta(call.meta.as_ref(), meta));
    converted
}

/// The agent's own tool name from `_meta`, when it is an agent that sends one.
fn tool_name_meta(raw: Option<&acp::Meta>, meta: MetaReading) -> Option<String> {
    if meta.tool_name {
        crate::agents::claude::tool_name(raw)
    } else {
        None
    }
}

/// The terminals in `_meta`, when it is an agent that runs its own.
fn terminal_meta(raw: Option<&acp::Meta>, meta: MetaReading) -> Vec<crate::model::TerminalMeta> {
    if meta.terminals {
        crate::agents::codex::terminal_meta(raw)
    } else {
        Vec::new()
    }
}

pub(crate) fn tool_fields(update: &acp::ToolCallUpdate, meta: MetaReading) -> ToolCallFields {
    let f = &update.fields;
    ToolCallFields {
        title: f.title.clone(),
        kind: f.kind.as_ref().map(tool_kind),
        status: f.status.as_ref().map(status),
        content: f.content.as_deref().map(content),
        locations: f.locations.as_deref().map(locations),
        raw_input: f.raw_input.clone(),
        raw_output: f.raw_output.clone(),
        tool_name: f
            .name
            .clone()
            .or_else(|| tool_name_meta(update.meta.as_ref(), meta)),
        terminal_meta: terminal_meta(update.meta.as_ref(), meta),
    }
}

fn option_kind(kind: &acp::PermissionOptionKind) -> OptionKind {
    match kind {
        acp::PermissionOptionKind::AllowOnce => OptionKind::AllowOnce,
        acp::PermissionOptionKind::AllowAlways => OptionKind::AllowAlways,
        acp::PermissionOptionKind::RejectAlways => OptionKind::RejectAlways,
        _ => OptionKind::RejectOnce,
    }
}

pub(crate) fn permission_request(
    req: &acp::RequestPermissionRequest,
    meta: MetaReading,
) -> PermissionRequest {
    PermissionRequest {
        session_id: req.session_id.to_string(),
        tool_call_id: req.tool_call.tool_call_id.to_string(),
        fields: tool_fields(&req.tool_call, meta),
        options: req
            .options
            .iter()
            .map(|o| PermissionOption {
                id: o.option_id.to_string(),
                name: o.name.clone(),
                kind: option_kind(&o.kind),
            })
            .collect(),
        client: false,
    }
}

/// The stop reason of a `session/prompt` answer, read from the raw JSON so
/// that a reason this ACP version does not name is shown as itself.
pub(crate) fn stop_reason(response: &Value) -> Result<StopReason, String> {
    let Some(reason) = response.get("stopReason").and_then(Value::as_str) else {
        return Err("the agent answered the prompt without a stopReason".to_string());
    };
    Ok(match reason {
        "end_turn" => StopReason::EndTurn,
        "max_tokens" => StopReason::MaxTokens,
        "max_turn_requests" => StopReason::MaxTurnRequests,
        "refusal" => StopReason::Refusal,
        "cancelled" => StopReason::Cancelled,
        other => StopReason::Other(other.to_string()),
    })
}

pub(crate) fn modes(state: &acp::SessionModeState) -> AgentModes {
    AgentModes {
        current: state.current_mode_id.to_string(),
        available: state
            .available_modes
            .iter()
            .map(|m| AgentMode {
                id: m.id.to_string(),
                name: m.name.clone(),
                description: m.description.clone(),
            })
            .collect(),
        config_option_id: None,
    }
}

/// The agent's modes from its config options: the first select option of category `mode`.
pub(crate) fn config_modes(options: &[acp::SessionConfigOption]) -> Option<AgentModes> {
    options.iter().find_map(|option| {
        if option.category != Some(acp::SessionConfigOptionCategory::Mode) {
            return None;
        }
        let acp::SessionConfigKind::Select(select) = &option.kind else {
            return None;
        };
        let choices: Vec<&acp::SessionConfigSelectOption> = match &select.options {
            acp::SessionConfigSelectOptions::Ungrouped(list) => list.iter().collect(),
            acp::SessionConfigSelectOptions::Grouped(groups) => {
                groups.iter().flat_map(|g| g.options.iter()).collect()
            }
            _ => Vec::new(),
        };
        Some(AgentModes {
            current: select.current_value.to_string(),
            available: choices
                .into_iter()
                .map(|c| AgentMode {
                    id: c.value.to_string(),
                    name: c.name.clone(),
                    description: c.description.clone(),
                })
                .collect(),
            config_option_id: Some(option.id.to_string()),
        })
    })
}

fn plan_status(status: &acp::PlanEntryStatus) -> PlanStatus {
    match status {
        acp::PlanEntryStatus::InProgress => PlanStatus::InProgress,
        acp::PlanEntryStatus::Completed => PlanStatus::Completed,
        _ => PlanStatus::Pending,
    }
}

pub(crate) fn session_update(update: &acp::SessionUpdate, meta: MetaReading) -> SessionUpdate {
    match update {
        acp::SessionUpdate::UserMessageChunk(chunk) => {
            SessionUpdate::UserChunk(block_text(&chunk.content))
        }
        acp::SessionUpdate::AgentMessageChunk(chunk) => match &chunk.message_id {
            Some(id) => SessionUpdate::MessageChunk {
                message_id: id.to_string(),
                text: block_text(&chunk.content),
                thought: false,
            },
            None => SessionUpdate::AgentChunk(block_text(&chunk.content)),
        },
        acp::SessionUpdate::AgentThoughtChunk(chunk) => match &chunk.message_id {
            Some(id) => SessionUpdate::MessageChunk {
                message_id: id.to_string(),
                text: block_text(&chunk.content),
                thought: true,
            },
            None => SessionUpdate::ThoughtChunk(block_text(&chunk.content)),
        },
        acp::SessionUpdate::ToolCall(call) => {
            SessionUpdate::ToolCall(Box::new(tool_call(call, meta)))
        }
        acp::SessionUpdate::ToolCallUpdate(update) => SessionUpdate::ToolCallUpdate {
            id: update.tool_call_id.to_string(),
            fields: Box::new(tool_fields(update, meta)),
        },
        acp::SessionUpdate::Plan(plan) => SessionUpdate::Plan(
            plan.entries
                .iter()
                .map(|e| PlanEntry {
                    content: e.content.clone(),
                    status: plan_status(&e.status),
                })
                .collect(),
        ),
        acp::SessionUpdate::AvailableCommandsUpdate(update) => SessionUpdate::AvailableCommands(
            update
                .available_commands
                .iter()
                .map(|c| crate::model::SlashCommand {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    hint: c.input.as_ref().and_then(|input| match input {
                        acp::AvailableCommandInput::Unstructured(u) => Some(u.hint.clone()),
                        _ => None,
                    }),
                })
                .collect(),
        ),
        acp::SessionUpdate::CurrentModeUpdate(update) => {
            SessionUpdate::CurrentMode(update.current_mode_id.to_string())
        }
        acp::SessionUpdate::ConfigOptionUpdate(update) => {
            match config_modes(&update.config_options) {
                Some(modes) => SessionUpdate::ConfigModes(modes),
                None => SessionUpdate::Other("config_option_update".into()),
            }
        }
        acp::SessionUpdate::SessionInfoUpdate(info) => match &info.title {
            agent_client_protocol::schema::MaybeUndefined::Value(title) => {
                SessionUpdate::SessionInfo {
                    title: Some(title.clone()),
                }
            }
            agent_client_protocol::schema::MaybeUndefined::Null => {
                SessionUpdate::SessionInfo { title: None }
            }
            _ => SessionUpdate::Other("session_info_update".into()),
        },
        acp::SessionUpdate::UsageUpdate(_) => SessionUpdate::Other("usage_update".into()),
        other => {
            let name = serde_json::to_value(other)
                .ok()
                .and_then(|v| {
                    v.get("sessionUpdate")
                        .and_then(|s| s.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "unknown".into());
            SessionUpdate::Other(name)
        }
    }
}

/// The agent's session options besides its modes (every `configOptions`
/// entry not of category `mode`), for the options picker.
pub(crate) fn session_options(options: &[acp::SessionConfigOption]) -> Vec<SessionOption> {
    options
        .iter()
        .filter(|o| o.category != Some(acp::SessionConfigOptionCategory::Mode))
        .filter_map(|option| {
            let value = match &option.kind {
                acp::SessionConfigKind::Select(select) => {
                    let choices = match &select.options {
                        acp::SessionConfigSelectOptions::Ungrouped(list) => list.iter().collect(),
                        acp::SessionConfigSelectOptions::Grouped(groups) => {
                            groups.iter().flat_map(|g| g.options.iter()).collect()
                        }
                        _ => Vec::new(),
                    };
                    SessionOptionValue::Select {
                        current: select.current_value.to_string(),
                        choices: choices
                            .into_iter()
                            .map(|c: &acp::SessionConfigSelectOption| OptionChoice {
                                id: c.value.to_string(),
                                name: c.name.clone(),
                                description: c.description.clone(),
                            })
                            .collect(),
                    }
                }
                acp::SessionConfigKind::Boolean(flag) => {
                    SessionOptionValue::Boolean(flag.current_value)
                }
                _ => return None,
            };
            let category = option.category.as_ref().map(|c| {
                serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            });
            Some(SessionOption {
                id: option.id.to_string(),
                name: option.name.clone(),
                description: option.description.clone(),
                category,
                value,
            })
        })
        .collect()
}

/// The options and usage parts of a `session/update`, which
/// [`session_update`] leaves out: a `config_option_update` also carries
/// the options besides the modes; a `usage_update` the context and cost.
pub(crate) fn controls_update(update: &acp::SessionUpdate) -> Option<SessionUpdate> {
    match update {
        acp::SessionUpdate::ConfigOptionUpdate(update) => Some(SessionUpdate::Options(
            session_options(&update.config_options),
        )),
        acp::SessionUpdate::UsageUpdate(usage) => Some(SessionUpdate::Usage(Usage {
            used: Some(usage.used),
            size: Some(usage.size).filter(|s| *s > 0),
            cost: usage.cost.as_ref().map(|c| (c.amount, c.currency.clone())),
            turn_tokens: None,
        })),
        _ => None,
    }
}

/// A `usage_update` read from its JSON, for one the SDK's type refuses
/// (claude-agent-acp sends `used: null`): whatever of `used`, `size` and
/// `cost` is there.
pub(crate) fn raw_usage_update(update: &Value) -> Option<Usage> {
    if update.get("sessionUpdate").and_then(Value::as_str) != Some("usage_update") {
        return None;
    }
    let cost = update.get("cost").and_then(|c| {
        let amount = c.get("amount")?.as_f64()?;
        let currency = c.get("currency")?.as_str()?.to_string();
        Some((amount, currency))
    });
    Some(Usage {
        used: update.get("used").and_then(Value::as_u64),
        size: update
            .get("size")
            .and_then(Value::as_u64)
            .filter(|s| *s > 0),
        cost,
        turn_tokens: None,
    })
}

/// The `usage` of a `session/prompt` answer (tokens of the turn; Claude
/// Code and opencode send it): its `totalTokens`, or input plus output.
pub(crate) fn prompt_usage(response: &Value) -> Option<Usage> {
    let usage = response.get("usage")?;
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let total = field("totalTokens").or_else(|| {
        let (input, output) = (field("inputTokens"), field("outputTokens"));
        (input.is_some() || output.is_some())
            .then(|| input.unwrap_or(0).saturating_add(output.unwrap_or(0)))
    })?;
    Some(Usage {
        turn_tokens: Some(total),
        ..Usage::default()
    })
}

/// A prompt block of warden's as the SDK's content block.
pub(crate) fn prompt_block(block: crate::model::PromptBlock) -> acp::ContentBlock {
    match block {
        crate::model::PromptBlock::Link { uri, name } => {
            acp::ContentBlock::ResourceLink(acp::ResourceLink::new(name, uri))
        }
        crate::model::PromptBlock::Image { uri, mime, data } => {
            acp::ContentBlock::Image(acp::ImageContent::new(data, mime).uri(uri))
        }
        crate::model::PromptBlock::Embedded { uri, text } => acp::ContentBlock::Resource(
            acp::EmbeddedResource::new(acp::EmbeddedResourceResource::TextResourceContents(
                acp::TextResourceContents::new(text, uri),
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TerminalMeta;
    use serde_json::json;

    /// claude-agent-acp 0.23 (claude-agent-acp-0.23.1-mockllm-all.jsonl)
    /// sends `used: null` with the size and cost; the prompt answer's
    /// `usage` has the turn's tokens.
    #[test]
    fn claude_usage_with_null_used_and_prompt_usage_are_read() {
        let update = json!({"sessionUpdate": "usage_update", "used": null, "size": 200000,
            "cost": {"amount": 0.00042, "currency": "USD"}});
        assert!(serde_json::from_value::<acp::SessionUpdate>(update.clone()).is_err());
        assert_eq!(
            raw_usage_update(&update),
            Some(Usage {
                used: None,
                size: Some(200_000),
                cost: Some((0.00042, "USD".into())),
                turn_tokens: None,
            })
        );
        assert_eq!(raw_usage_update(&json!({"sessionUpdate": "plan"})), None);
        let answer = json!({"stopReason": "end_turn", "usage": {"inputTokens": 40,
            "outputTokens": 20, "cachedReadTokens": 0, "totalTokens": 60}});
        assert_eq!(prompt_usage(&answer).and_then(|u| u.turn_tokens), Some(60));
        let answer =
            json!({"stopReason": "end_turn", "usage": {"inputTokens": 7, "outputTokens": 2}});
        assert_eq!(prompt_usage(&answer).and_then(|u| u.turn_tokens), Some(9));
        assert_eq!(prompt_usage(&json!({"stopReason": "end_turn"})), None);
    }

    fn update(value: serde_json::Value) -> SessionUpdate {
        let parsed: acp::SessionUpdate = serde_json::from_value(value).expect("valid update");
        session_update(&parsed, MetaReading::ALL)
    }

    #[test]
    fn tool_call_with_diff_and_meta_tool_name() {
        let got = update(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Edit a.rs",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/w/a.rs", "oldText": null, "newText": "x"}],
            "locations": [{"path": "/w/a.rs", "line": 3}],
            "rawInput": {"path": "/w/a.rs"},
            "_meta": {"claudeCode": {"toolName": "Edit"}}
        }));
        let SessionUpdate::ToolCall(call) = got else {
            panic!("not a tool call: {got:?}")
        };
        assert_eq!(call.kind, ToolKind::Edit);
        assert_eq!(
            call.status,
            WireStatus::Pending,
            "missing status is pending"
        );
        assert_eq!(call.tool_name.as_deref(), Some("Edit"));
        assert_eq!(
            call.content,
            vec![ToolContent::Diff {
                path: "/w/a.rs".into(),
                old: None,
                new: "x".into()
            }]
        );
        assert_eq!(call.locations[0].line, Some(3));
    }

    #[test]
    fn unknown_kind_is_other_and_update_is_partial() {
        let got = update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "pending",
            "kind": "teleport",
            "status": "completed"
        }));
        assert_eq!(
            got,
            SessionUpdate::ToolCallUpdate {
                id: "pending".into(),
                fields: Box::new(ToolCallFields {
                    kind: Some(ToolKind::Other),
                    status: Some(WireStatus::Completed),
                    ..Default::default()
                })
            }
        );
    }

    #[test]
    fn config_option_mode_is_read() {
        let got = update(json!({
            "sessionUpdate": "config_option_update",
            "configOptions": [{
                "id": "mode", "name": "Mode", "category": "mode", "type": "select",
                "currentValue": "plan",
                "options": [{"value": "default", "name": "Default"}, {"value": "plan", "name": "Plan"}]
            }]
        }));
        let SessionUpdate::ConfigModes(modes) = got else {
            panic!("{got:?}")
        };
        assert_eq!(modes.current, "plan");
        assert_eq!(modes.available.len(), 2);
        assert_eq!(modes.config_option_id.as_deref(), Some("mode"));
    }

    #[test]
    fn permission_request_keeps_option_ids_and_kinds() {
        let req: acp::RequestPermissionRequest = serde_json::from_value(json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "t", "title": "Run ls", "kind": "execute",
                          "rawInput": {"command": "ls"}},
            "options": [
                {"optionId": "a", "name": "Allow", "kind": "allow_once"},
                {"optionId": "r", "name": "Reject", "kind": "reject_always"}
            ]
        }))
        .expect("valid request");
        let got = permission_request(&req, MetaReading::ALL);
        assert_eq!(got.tool_call_id, "t");
        assert_eq!(got.fields.kind, Some(ToolKind::Execute));
        assert_eq!(got.options[1].kind, OptionKind::RejectAlways);
        assert_eq!(got.options[0].id, "a");
    }

    #[test]
    fn codex_meta_terminal_news_is_read() {
        let got = update(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "ls",
            "content": [{"type": "terminal", "terminalId": "c1"}],
            "_meta": {"terminal_info": {"terminal_id": "c1", "cwd": "/w"}}
        }));
        let SessionUpdate::ToolCall(call) = got else {
            panic!("{got:?}")
        };
        assert_eq!(call.agent_terminal("c1").map(|t| t.output()), Some(""));

        let got = update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "_meta": {"terminal_output": {"terminal_id": "c1", "data": "seed.txt\n"}}
        }));
        let SessionUpdate::ToolCallUpdate { fields, .. } = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            fields.terminal_meta,
            vec![TerminalMeta::Output {
                id: "c1".into(),
                data: "seed.txt\n".into()
            }]
        );

        let got = update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "failed",
            "_meta": {
                "terminal_output_delta": {"terminal_id": "c1", "data": "oops"},
                "terminal_exit": {"terminal_id": "c1", "exit_code": 2, "signal": null}
            }
        }));
        let SessionUpdate::ToolCallUpdate { fields, .. } = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            fields.terminal_meta,
            vec![
                TerminalMeta::Output {
                    id: "c1".into(),
                    data: "oops".into()
                },
                TerminalMeta::Exited {
                    id: "c1".into(),
                    exit: "exit status 2".into()
                },
            ]
        );
    }

    #[test]
    fn malformed_meta_terminal_news_is_ignored() {
        let got = update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "_meta": {
                "terminal_output": {"terminal_id": 7, "data": "x"},
                "terminal_output_delta": {"terminal_id": "c1"},
                "terminal_exit": {"exit_code": 0},
                "terminal_info": {"terminal_id": "x".repeat(crate::agents::codex::TERMINAL_ID_LIMIT + 1)}
            }
        }));
        let SessionUpdate::ToolCallUpdate { fields, .. } = got else {
            panic!("{got:?}")
        };
        assert!(
            fields.terminal_meta.is_empty(),
            "{:?}",
            fields.terminal_meta
        );
    }

    #[test]
    fn message_ids_are_kept() {
        let got = update(json!({
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_1",
            "content": {"type": "text", "text": "I "}
        }));
        assert_eq!(
            got,
            SessionUpdate::MessageChunk {
                message_id: "msg_1".into(),
                text: "I ".into(),
                thought: false
            }
        );
        let got = update(json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "I "}
        }));
        assert_eq!(got, SessionUpdate::AgentChunk("I ".into()));
    }

    #[test]
    fn stop_reasons_are_read_and_unknown_ones_kept() {
        assert_eq!(
            stop_reason(&json!({"stopReason": "end_turn", "usage": {}})),
            Ok(StopReason::EndTurn)
        );
        assert_eq!(
            stop_reason(&json!({"stopReason": "refusal"})),
            Ok(StopReason::Refusal)
        );
        assert_eq!(
            stop_reason(&json!({"stopReason": "error"})),
            Ok(StopReason::Other("error".into()))
        );
        assert!(stop_reason(&json!({})).is_err());
    }
}

//! The connection: the SDK's handlers for what the agent sends
//! ([`run_connection`]), and the task that sends what the runtime asks
//! ([`serve`]).

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, Client, ConnectTo};
use tokio::sync::mpsc;

use super::auth::Auth;
use super::handle::{Command, OptionValue};
use super::session::{OpenError, initialize, list_sessions, open_session};
use super::{
    AgentEvent, ClientCall, ClientCaps, ClientResponder, Events, PermissionResponder, client_calls,
    convert, elicitation, raw,
};
use crate::agents::quirks::MetaReading;
use crate::model::SessionUpdate;

/// Which agent the connection talks to: what its command line names, until
/// its `initialize` answer says who it is (`agents::identify`). The
/// handlers read its `_meta` as that agent's quirks say.
#[derive(Debug, Default)]
pub(super) struct Identity {
    /// From the command line, known before it starts.
    command: Option<crate::agents::Agent>,
    /// From `initialize`, once answered.
    known: std::sync::OnceLock<Option<crate::agents::Agent>>,
}

impl Identity {
    pub(super) fn new(command: Option<crate::agents::Agent>) -> Self {
        Identity {
            command,
            known: std::sync::OnceLock::new(),
        }
    }

    /// The agent as known so far.
    fn agent(&self) -> Option<crate::agents::Agent> {
        self.known.get().copied().unwrap_or(self.command)
    }

    /// The `_meta` to read of its tool calls.
    fn meta(&self) -> MetaReading {
        crate::agents::quirks::meta(self.agent())
    }

    /// Its `initialize` answer named it `info_name` (or nothing).
    fn initialized(&self, info_name: Option<&str>) -> Option<crate::agents::Agent> {
        let agent = crate::agents::identify(self.command, info_name);
        let _ = self.known.set(agent);
        agent
    }
}

pub(super) async fn run_connection(
    transport: impl ConnectTo<Client> + 'static,
    identity: Arc<Identity>,
    caps: ClientCaps,
    auth: Auth,
    commands: mpsc::UnboundedReceiver<Command>,
    events: Events,
    fences: super::fast::Fences,
) {
    let (notify_identity, permission_identity) = (identity.clone(), identity.clone());
    let notify_events = events.clone();
    let permission_events = events.clone();
    let elicitation_events = events.clone();
    let elicitations = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let main_events = events.clone();
    let forward = |events: &Events, (call, responder): (ClientCall, ClientResponder)| {
        tracing::debug!(?call, "client call");
        // If the runtime is gone, the responder drops and answers an error.
        let _ = events.send(AgentEvent::Client { call, responder });
    };
    let (e1, e2, e3, e4, e5, e6, e7) = (
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
        events.clone(),
    );
    let result = Client
        .v1()
        .name("warden")
        .with_handler(fences)
        .on_receive_notification(
            // Untyped, so that an update this SDK's types refuse (Claude's
            // `usage_update` with `used: null`) is still read.
            async move |message: agent_client_protocol::UntypedMessage, cx| {
                if message.method != "session/update" {
                    return Ok(agent_client_protocol::Handled::No {
                        message: (message, cx),
                        retry: false,
                    });
                }
                for event in session_update_events(&message.params, notify_identity.meta()) {
                    let _ = notify_events.send(event);
                }
                Ok(agent_client_protocol::Handled::Yes)
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: acp::RequestPermissionRequest, responder, _cx| {
                let domain = convert::permission_request(&request, permission_identity.meta());
                tracing::info!(tool_call = %domain.tool_call_id, "permission requested");
                // Forward and return: the user answers later, outside the dispatch loop.
                // If the runtime is gone, the event (and the responder) drops: cancelled.
                let _ = permission_events.send(AgentEvent::Permission {
                    request: Box::new(domain),
                    responder: PermissionResponder(Some(Box::new(responder))),
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::CreateElicitationRequest, responder, _cx| {
                let seq = elicitations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let event = match elicitation::card(&req, responder, seq) {
                    Ok((request, responder)) => AgentEvent::Elicitation {
                        request: Box::new(request),
                        responder,
                    },
                    Err(message) => AgentEvent::Notice(message),
                };
                let _ = elicitation_events.send(event);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ReadTextFileRequest, r, _cx| {
                forward(&e1, client_calls::read(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::WriteTextFileRequest, r, _cx| {
                forward(&e2, client_calls::write(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::CreateTerminalRequest, r, _cx| {
                forward(&e3, client_calls::create(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::TerminalOutputRequest, r, _cx| {
                forward(&e4, client_calls::output(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::WaitForTerminalExitRequest, r, _cx| {
                forward(&e5, client_calls::wait(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::KillTerminalRequest, r, _cx| {
                forward(&e6, client_calls::kill(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ReleaseTerminalRequest, r, _cx| {
                forward(&e7, client_calls::release(req, r));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            serve(cx, &identity, caps, auth, commands, main_events).await;
            Ok(())
        })
        .await;
    if let Err(err) = result {
        tracing::warn!("agent connection ended: {err}");
    }
}

/// Initialise, then send queued commands until the queue closes.
async fn serve(
    cx: ConnectionTo<Agent>,
    identity: &Identity,
    caps: ClientCaps,
    mut auth: Auth,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: Events,
) {
    let (abilities, mcp_http, mcp_sse, methods, info) = match initialize(&cx, caps).await {
        Ok(initialized) => initialized,
        Err(message) => {
            let _ = events.send(AgentEvent::ConnectFailed(message));
            return;
        }
    };
    let agent = identity.initialized(info.as_ref().map(|i| i.name.as_str()));
    let _ = events.send(AgentEvent::Initialized(abilities, info, agent));
    let mut mcp: Vec<acp::McpServer> = Vec::new();
    auth.methods = Arc::new(methods);
    while let Some(command) = commands.recv().await {
        match command {
            Command::AuthMethod(id) => auth.chosen = Some(id),
            Command::AuthMethods(reply) => {
                let _ = reply.send(auth.methods.to_vec());
            }
            Command::McpServers(servers) => {
                let (usable, skipped): (Vec<_>, Vec<_>) = servers
                    .iter()
                    .map(|s| (s, s.to_acp(mcp_http, mcp_sse)))
                    .partition(|(_, acp)| acp.is_some());
                mcp = usable.into_iter().filter_map(|(_, acp)| acp).collect();
                if !skipped.is_empty() {
                    let names: Vec<String> = skipped
                        .iter()
                        .map(|(s, _)| format!("`{}`", s.name))
                        .collect();
                    let _ = events.send(AgentEvent::Notice(format!(
                        "MCP servers not passed to the agent, which does not offer their transport (http or sse): {}",
                        names.join(", ")
                    )));
                }
            }
            Command::OpenSession { tag, open } => {
                // A method the settings name: sign in once, before the
                // first session (inline, so that sessions wait for it).
                if let Some(id) = auth.chosen.clone().filter(|_| !auth.done) {
                    auth.done = true;
                    if let Err(message) = auth.authenticate(&cx, &id).await {
                        let _ = events.send(AgentEvent::SessionFailed { tag, message });
                        continue;
                    }
                }
                let cx = cx.clone();
                let events = events.clone();
                let mcp = mcp.clone();
                let auth = auth.clone();
                tokio::spawn(async move {
                    let mut opened = open_session(&cx, abilities, open.clone(), mcp.clone()).await;
                    if let Err(OpenError::AuthRequired(_)) = &opened
                        && let Some(id) = auth.pick()
                    {
                        opened = match auth.authenticate(&cx, &id).await {
                            Ok(()) => open_session(&cx, abilities, open, mcp).await,
                            Err(message) => Err(OpenError::Other(message)),
                        };
                    }
                    let opened = opened.map_err(|err| match err {
                        OpenError::AuthRequired(message) => auth.missing(&message),
                        OpenError::Other(message) => message,
                    });
                    match opened {
                        Ok((info, options)) => {
                            let session_id = info.session_id.clone();
                            let _ = events.send(AgentEvent::SessionStarted { tag, info });
                            // After the start, so that the session is the chat's.
                            let _ = events.send(AgentEvent::Update {
                                session_id,
                                update: SessionUpdate::Options(options),
                            });
                        }
                        Err(message) => {
                            let _ = events.send(AgentEvent::SessionFailed { tag, message });
                        }
                    }
                });
            }
            Command::ListSessions { cwd } => {
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let listed = list_sessions(&cx, cwd).await;
                    let _ = events.send(AgentEvent::Sessions(listed));
                });
            }
            Command::CloseSession { session_id } => {
                if !abilities.close_session {
                    continue;
                }
                let cx = cx.clone();
                tokio::spawn(async move {
                    let request = acp::CloseSessionRequest::new(acp::SessionId::new(session_id));
                    if let Err(err) = cx.send_request(request).block_task().await {
                        tracing::warn!("session/close failed: {err}");
                    }
                });
            }
            Command::Prompt {
                session_id,
                text,
                extra,
            } => {
                let mut blocks = vec![acp::ContentBlock::Text(acp::TextContent::new(text))];
                blocks.extend(extra.into_iter().map(convert::prompt_block));
                let request =
                    acp::PromptRequest::new(acp::SessionId::new(session_id.clone()), blocks);
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    // Sent untyped so that the answer is read from its JSON:
                    // a stop reason this ACP version lacks is kept as sent.
                    let result = match agent_client_protocol::UntypedMessage::new(
                        "session/prompt",
                        &request,
                    ) {
                        Ok(untyped) => cx.send_request(untyped).block_task().await,
                        Err(err) => Err(err),
                    };
                    if let Ok(response) = &result
                        && let Some(usage) = convert::prompt_usage(response)
                    {
                        // Before the turn ends, so the footer shows it with the answer.
                        let _ = events.send(AgentEvent::Update {
                            session_id: session_id.clone(),
                            update: SessionUpdate::Usage(usage),
                        });
                    }
                    let result = match result {
                        Ok(response) => convert::stop_reason(&response),
                        // The agent's output ended: its exit (with its
                        // stderr) follows and ends the turn; a failed prompt
                        // first would hide why.
                        Err(err) if agent_client_protocol::is_incoming_transport_closed(&err) => {
                            tracing::info!("prompt ended by the agent's output closing");
                            return;
                        }
                        Err(err) => Err(err.to_string()),
                    };
                    let _ = events.send(AgentEvent::PromptDone { session_id, result });
                });
            }
            Command::Cancel { session_id } => {
                let note = acp::CancelNotification::new(acp::SessionId::new(session_id));
                if let Err(err) = cx.send_notification(note) {
                    tracing::warn!("could not send session/cancel: {err}");
                }
            }
            Command::SetMode {
                session_id,
                mode_id,
            } => {
                let request = acp::SetSessionModeRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionModeId::new(mode_id.clone()),
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result.map(|_| ()).map_err(|err| {
                        tracing::warn!("session/set_mode failed: {err}");
                        err.to_string()
                    });
                    let _ = events.send(AgentEvent::ModeSet {
                        session_id,
                        mode_id,
                        result,
                    });
                });
            }
            Command::SetOption {
                session_id,
                option,
                value: OptionValue::Choice(model),
            } if option == crate::model::SessionOption::MODELS_ID => {
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    // The answer is empty: the chat takes the pick as the current model.
                    let result = raw::set_model(&cx, &session_id, &model)
                        .await
                        .map(|()| Vec::new())
                        .map_err(|err| {
                            tracing::warn!("session/set_model failed: {err}");
                            err.to_string()
                        });
                    let _ = events.send(AgentEvent::OptionSet {
                        session_id,
                        option,
                        result,
                    });
                });
            }
            Command::SetOption {
                session_id,
                option,
                value,
            } => {
                let value = match value {
                    OptionValue::Choice(id) => acp::SessionConfigOptionValue::ValueId {
                        value: acp::SessionConfigValueId::new(id),
                    },
                    OptionValue::Flag(on) => acp::SessionConfigOptionValue::Boolean { value: on },
                };
                let request = acp::SetSessionConfigOptionRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionConfigId::new(option.clone()),
                    value,
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result
                        .map(|response| convert::session_options(&response.config_options))
                        .map_err(|err| {
                            tracing::warn!("session/set_config_option failed: {err}");
                            err.to_string()
                        });
                    let _ = events.send(AgentEvent::OptionSet {
                        session_id,
                        option,
                        result,
                    });
                });
            }
            Command::SetConfig {
                session_id,
                option,
                value,
            } => {
                let request = acp::SetSessionConfigOptionRequest::new(
                    acp::SessionId::new(session_id.clone()),
                    acp::SessionConfigId::new(option),
                    acp::SessionConfigValueId::new(value.clone()),
                );
                let cx = cx.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let result = cx.send_request(request).block_task().await;
                    let result = result.map(|_| ()).map_err(|err| {
                        tracing::warn!("session/set_config_option failed: {err}");
                        err.to_string()
                    });
                    let _ = events.send(AgentEvent::ModeSet {
                        session_id,
                        mode_id: value,
                        result,
                    });
                });
            }
        }
    }
}

/// The events of one `session/update` (its params as sent): the update,
/// and its options or usage part. An update this SDK's types refuse is
/// read from its JSON when it is a `usage_update` (what is known of it),
/// else logged and dropped.
fn session_update_events(params: &serde_json::Value, meta: MetaReading) -> Vec<AgentEvent> {
    let notification = match serde_json::from_value::<acp::SessionNotification>(params.clone()) {
        Ok(notification) => notification,
        Err(err) => {
            let session_id = params.get("sessionId").and_then(serde_json::Value::as_str);
            let usage = params.get("update").and_then(convert::raw_usage_update);
            return match (session_id, usage) {
                (Some(session_id), Some(usage)) => vec![AgentEvent::Update {
                    session_id: session_id.to_string(),
                    update: SessionUpdate::Usage(usage),
                }],
                _ => {
                    tracing::warn!("a session/update did not parse: {err}");
                    Vec::new()
                }
            };
        }
    };
    let session_id = notification.session_id.to_string();
    let update = convert::session_update(&notification.update, meta);
    let controls = convert::controls_update(&notification.update);
    if let SessionUpdate::Other(name) = &update
        && controls.is_none()
    {
        tracing::debug!(kind = %name, "session update ignored");
    }
    let mut events = vec![AgentEvent::Update {
        session_id: session_id.clone(),
        update,
    }];
    if let Some(update) = controls {
        events.push(AgentEvent::Update { session_id, update });
    }
    events
}

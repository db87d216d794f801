//! The connection: [`run`] serves ACP on stdin/stdout, with the handlers of
//! every request and notification, cancellation, and the wait for running
//! turns when stdin closes.

use super::*;

/// How long running turns may go on after stdin closed before they are cancelled.
const EOF_GRACE: Duration = Duration::from_secs(5);
/// How long cancelled turns get to answer before the agent exits anyway.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// Run the demo agent on stdin/stdout until stdin closes.
///
/// `scenario` is a TOML or JSON scenario file (see `assets/scenarios/README.md`).
///
/// # Errors
///
/// The scenario file cannot be read or parsed, or the connection fails
/// (stdout closed, a broken transport). A closed stdin is not an error.
pub async fn run(scenario: Option<&Path>) -> anyhow::Result<()> {
    let scenario = match scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let protocol_version = scenario.protocol_version;
    let agent = Arc::new(DemoAgent::new(scenario, Store::from_env()));

    let builder = Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: InitializeRequest, responder, _cx| {
                    responder.respond(agent.initialize(&request.client_capabilities))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: NewSessionRequest, responder, cx| {
                    if agent.scenario.auth_required && !agent.signed_in.load(Ordering::Relaxed) {
                        return responder.respond_with_error(Error::auth_required());
                    }
                    let response = agent.new_session(request.cwd);
                    agent
                        .sessions
                        .set_mcp(&response.session_id, &request.mcp_servers);
                    agent
                        .sessions
                        .set_directories(&response.session_id, request.additional_directories);
                    let session_id = response.session_id.clone();
                    responder.respond(response)?;
                    if let Some(update) = agent.commands_update() {
                        cx.send_notification(SessionNotification::new(session_id, update))?;
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: agent_client_protocol::v1::schema::AuthenticateRequest,
                            responder,
                            _cx| {
                    let id = request.method_id.to_string();
                    let method = agent.scenario.auth_methods.iter().find(|m| {
                        m.get("id").and_then(serde_json::Value::as_str) == Some(id.as_str())
                            && !extras::terminal_login(m)
                    });
                    let Some(method) = method else {
                        return responder.respond_with_error(
                            Error::invalid_params().data(format!("unknown auth method {id}")),
                        );
                    };
                    if let Some(unset) = extras::unset_vars(method) {
                        return responder.respond_with_error(
                            Error::auth_required().data(format!("{unset} is not set")),
                        );
                    }
                    agent.signed_in.store(true, Ordering::Relaxed);
                    responder
                        .respond(agent_client_protocol::v1::schema::AuthenticateResponse::new())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: LoadSessionRequest, responder, cx| {
                    agent
                        .sessions
                        .set_mcp(&request.session_id, &request.mcp_servers);
                    let loaded = agent.sessions.load(&request.session_id, request.cwd);
                    if loaded.is_ok() {
                        agent
                            .sessions
                            .set_directories(&request.session_id, request.additional_directories);
                    }
                    match loaded {
                        Ok((mut updates, mode)) => {
                            // The replay comes before the answer, as ACP
                            // asks, unless the scenario sends its end after.
                            let late = agent.scenario.replay_after_answer.min(updates.len());
                            let tail = updates.split_off(updates.len() - late);
                            for update in updates {
                                cx.send_notification(SessionNotification::new(
                                    request.session_id.clone(),
                                    update,
                                ))?;
                            }
                            responder.respond(
                                LoadSessionResponse::new()
                                    .modes(agent.sessions.modes(&mode))
                                    .config_options(agent.sessions.config_options(&mode)),
                            )?;
                            if agent.scenario.replay_after_answer == 0 {
                                return Ok(());
                            }
                            let title = SessionUpdate::SessionInfoUpdate(
                                agent_client_protocol::v1::schema::SessionInfoUpdate::new()
                                    .title("replayed".to_string()),
                            );
                            for update in tail.into_iter().chain([title]) {
                                cx.send_notification(SessionNotification::new(
                                    request.session_id.clone(),
                                    update,
                                ))?;
                            }
                            Ok(())
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ResumeSessionRequest, responder, _cx| match agent
                    .sessions
                    .load(&request.session_id, request.cwd)
                {
                    Ok((_, mode)) => {
                        agent
                            .sessions
                            .set_directories(&request.session_id, request.additional_directories);
                        responder.respond(
                            ResumeSessionResponse::new()
                                .modes(agent.sessions.modes(&mode))
                                .config_options(agent.sessions.config_options(&mode)),
                        )
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ListSessionsRequest, responder, _cx| {
                    responder.respond(agent.sessions.list(
                        request.cwd.as_deref(),
                        request.cursor.as_deref(),
                        agent.scenario.list_page_size,
                    ))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: CloseSessionRequest, responder, _cx| {
                    if !agent.scenario.close_session {
                        return responder.respond_with_error(Error::method_not_found());
                    }
                    match agent.sessions.close(&request.session_id) {
                        Ok(()) => responder.respond(CloseSessionResponse::new()),
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionModeRequest, responder, cx| match agent
                    .sessions
                    .set_known_mode(&request.session_id, &request.mode_id.0)
                {
                    Ok(()) => {
                        responder.respond(SetSessionModeResponse::new())?;
                        cx.send_notification(SessionNotification::new(
                            request.session_id,
                            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                                request.mode_id,
                            )),
                        ))
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionConfigOptionRequest, responder, cx| {
                    let value = match &request.value {
                        SessionConfigOptionValue::ValueId { value } => value.to_string(),
                        _ => String::new(),
                    };
                    let known = agent.sessions.mode_config_option
                        && request.config_id.to_string() == MODE_OPTION;
                    let set = if known {
                        agent.sessions.set_known_mode(&request.session_id, &value)
                    } else {
                        agent
                            .sessions
                            .set_extra_option(&request.config_id.to_string(), &request.value)
                    };
                    match set {
                        Ok(()) => {
                            let mode = agent.sessions.mode(&request.session_id).unwrap_or_default();
                            let options = agent.sessions.config_options(&mode).unwrap_or_default();
                            responder
                                .respond(SetSessionConfigOptionResponse::new(options.clone()))?;
                            cx.send_notification(SessionNotification::new(
                                request.session_id,
                                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
                            ))
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: PromptRequest, responder, cx| {
                    let Some((turn, cancel)) = agent.sessions.start_turn(&request.session_id)
                    else {
                        return responder.respond_with_error(unknown_session(&request.session_id));
                    };
                    let cwd = agent.sessions.cwd(&request.session_id);
                    let text = prompt_text(&request.prompt);
                    agent
                        .sessions
                        .record_prompt(&request.session_id, &text, &request.prompt);
                    let mut steps = agent.steps_for(&text, turn, &cwd);
                    if let Some(received) = received_blocks(&request.prompt) {
                        steps.insert(0, Step::Text { text: received });
                    }
                    let mut runner = Runner::new(
                        cx.clone(),
                        request.session_id.clone(),
                        cancel,
                        agent.sessions.clone(),
                        agent.offered(),
                        cwd,
                    );
                    runner.models = agent.scenario.models.clone();
                    let session_id = request.session_id.clone();
                    let sessions = agent.sessions.clone();
                    let late_after_cancel = agent.scenario.late_after_cancel;
                    let late = late_after_cancel && sessions.is_late(&session_id);
                    // The turn waits for permission answers, which arrive
                    // through the dispatch loop: it must not run inside it.
                    let spawned = cx.spawn(async move {
                        if late {
                            // Answered before it runs; it runs on unasked.
                            let sent = responder.respond(PromptResponse::new(StopReason::EndTurn));
                            let _ = runner.run(&steps).await;
                            sessions.end_turn(&session_id, turn);
                            return sent;
                        }
                        let result = runner.run(&steps).await;
                        if late_after_cancel && matches!(result, Ok(StopReason::Cancelled)) {
                            sessions.set_late(&session_id);
                        }
                        sessions.end_turn(&session_id, turn);
                        let sent = match result {
                            Ok(reason) => responder.respond(PromptResponse::new(reason)),
                            Err(error) => {
                                eprintln!("demo-agent: turn failed: {error}");
                                responder.respond_with_error(error)
                            }
                        };
                        if let Err(error) = sent {
                            eprintln!("demo-agent: cannot answer the prompt: {error}");
                        }
                        Ok(())
                    });
                    if spawned.is_err() {
                        agent.sessions.end_turn(&request.session_id, turn);
                    }
                    spawned
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = agent.clone();
                async move |notification: CancelNotification, _cx| {
                    agent.sessions.cancel(&notification.session_id);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: agent_client_protocol::UntypedMessage,
                            responder: agent_client_protocol::v1::Responder<serde_json::Value>,
                            _cx| {
                    if request.method != "session/set_model" || agent.scenario.models.is_none() {
                        return responder.respond_with_error(Error::method_not_found());
                    }
                    match extras::set_model(agent.scenario.models.as_ref(), &request.params) {
                        Ok(()) => responder.respond(serde_json::json!({})),
                        Err(message) => {
                            responder.respond_with_error(Error::invalid_params().data(message))
                        }
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        );

    let extras = extras::Extras {
        models: agent.scenario.models.clone(),
        prompt_usage: agent.scenario.prompt_usage.clone(),
        auth_methods: agent.scenario.auth_methods.clone(),
    };
    let sessions = agent.sessions.clone();
    builder
        .connect_with(stdio_transport(protocol_version, extras), async move |cx| {
            tokio::select! {
                () = cx.incoming_closed() => {}
                _ = cx.terminated() => return Ok(()),
            }
            // Stdin is closed: let running turns finish (a piped
            // `printf ... | warden demo-agent` sees whole turns), but not
            // for long.
            if !sessions.wait_idle(EOF_GRACE).await {
                sessions.cancel_all();
                sessions.wait_idle(CANCEL_WAIT).await;
            }
            Ok(())
        })
        .await
        .map_err(|error| anyhow::anyhow!("demo agent connection failed: {error}"))
}

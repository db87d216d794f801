//! `initialize`, and opening and listing sessions.

use std::path::PathBuf;

use agent_client_protocol::Agent;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;

use super::{
    AgentAbilities, AgentInfo, ClientCaps, LIST_PAGES, ListedSession, SessionOpen, convert, raw,
};
use crate::model::{SessionInfo, SessionOrigin};

/// What `initialize` tells: abilities, MCP over http and sse, sign-in
/// methods, and the agent's own name.
pub(super) type Initialized = (
    AgentAbilities,
    bool,
    bool,
    Vec<super::auth::AuthMethod>,
    Option<AgentInfo>,
);

/// `initialize`: warden's capabilities out, the agent's abilities back.
/// Also whether the agent takes MCP servers over http and over sse, its
/// authentication methods, and its `agentInfo`.
pub(super) async fn initialize(
    cx: &ConnectionTo<Agent>,
    caps: ClientCaps,
) -> Result<Initialized, String> {
    let capabilities = acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new()
            .read_text_file(caps.read_text_file)
            .write_text_file(caps.write_text_file))
        .terminal(caps.terminal)
        // codex-acp then streams the output of commands it runs itself in
        // `_meta` (terminal_info / terminal_output / terminal_exit), which
        // the tool call shows like a terminal of warden's.
        // `terminal-auth`: warden can run an agent's terminal login
        // (`warden login`), so agents may offer theirs.
        .meta(acp::Meta::from_iter([
            ("terminal_output".to_string(), serde_json::Value::Bool(true)),
            ("terminal-auth".to_string(), serde_json::Value::Bool(true)),
        ]))
        .elicitation(
            acp::ElicitationCapabilities::new()
                .form(acp::ElicitationFormCapabilities::new())
                .url(acp::ElicitationUrlCapabilities::new()),
        );
    let init = acp::InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(capabilities)
        .client_info(acp::Implementation::new(
            "warden",
            env!("CARGO_PKG_VERSION"),
        ));
    // Untyped, so that what the SDK's types drop (an env_var method's
    // variables) is read from the JSON.
    let (response, value) = raw::request::<acp::InitializeResponse>(cx, "initialize", &init)
        .await
        .map_err(|err| explain_init_error(&err.to_string()))?;
    if response.protocol_version != ProtocolVersion::V1 {
        return Err(version_mismatch(&response.protocol_version.to_string()));
    }
    let agent = &response.agent_capabilities;
    let methods = super::auth::methods(&value);
    let abilities = AgentAbilities {
        load_session: agent.load_session,
        resume_session: agent.session_capabilities.resume.is_some(),
        list_sessions: agent.session_capabilities.list.is_some(),
        close_session: agent.session_capabilities.close.is_some(),
        additional_directories: agent.session_capabilities.additional_directories.is_some(),
        embedded_context: agent.prompt_capabilities.embedded_context,
        image: agent.prompt_capabilities.image,
        sign_in: !methods.is_empty(),
    };
    let info = response.agent_info.map(|info| AgentInfo {
        name: info.name,
        title: info.title,
        version: info.version,
    });
    Ok((
        abilities,
        agent.mcp_capabilities.http,
        agent.mcp_capabilities.sse,
        methods,
        info,
    ))
}

/// `session/list`, following `nextCursor` for at most [`LIST_PAGES`] pages
/// (and never the same cursor twice). A failed later page keeps what the
/// earlier ones listed.
pub(super) async fn list_sessions(
    cx: &ConnectionTo<Agent>,
    cwd: PathBuf,
) -> Result<Vec<ListedSession>, String> {
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for page in 0..LIST_PAGES {
        let request = acp::ListSessionsRequest::new()
            .cwd(cwd.clone())
            .cursor(cursor.clone());
        let response = match cx.send_request(request).block_task().await {
            Ok(response) => response,
            Err(err) if page == 0 => return Err(err.to_string()),
            Err(err) => {
                tracing::warn!("session/list page {} failed: {err}", page + 1);
                break;
            }
        };
        listed.extend(response.sessions.into_iter().map(|s| ListedSession {
            session_id: s.session_id.to_string(),
            cwd: s.cwd,
            title: s.title,
            updated_at: s.updated_at,
        }));
        match response.next_cursor {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => return Ok(listed),
        }
    }
    tracing::info!("session/list: stopped after {LIST_PAGES} pages");
    Ok(listed)
}

/// Open a session: continue `open.resume` when the agent can (resume or
/// load, in the order `open.prefer_resume` says), else a new one.
pub(super) async fn open_session(
    cx: &ConnectionTo<Agent>,
    agent: AgentAbilities,
    open: SessionOpen,
    mcp: Vec<acp::McpServer>,
) -> Result<(SessionInfo, Vec<crate::model::SessionOption>), OpenError> {
    let SessionOpen {
        cwd,
        additional_directories,
        resume,
        prefer_resume,
    } = open;
    let dirs = if agent.additional_directories {
        additional_directories
    } else {
        Vec::new()
    };
    if let Some(id) = resume {
        let order = if prefer_resume {
            [SessionOrigin::Resumed, SessionOrigin::Loaded]
        } else {
            [SessionOrigin::Loaded, SessionOrigin::Resumed]
        };
        for way in order {
            let session = acp::SessionId::new(id.clone());
            let answer = match way {
                SessionOrigin::Loaded if agent.load_session => {
                    // The replayed updates arrive as notifications before this answer.
                    let request = acp::LoadSessionRequest::new(session, cwd.clone())
                        .additional_directories(dirs.clone())
                        .mcp_servers(mcp.clone());
                    raw::request::<acp::LoadSessionResponse>(cx, "session/load", &request)
                        .await
                        .map(|(r, value)| {
                            (
                                pick_modes(r.config_options.as_deref(), r.modes.as_ref()),
                                options_of(r.config_options.as_deref(), &value),
                            )
                        })
                }
                SessionOrigin::Resumed if agent.resume_session => {
                    let request = acp::ResumeSessionRequest::new(session, cwd.clone())
                        .additional_directories(dirs.clone())
                        .mcp_servers(mcp.clone());
                    raw::request::<acp::ResumeSessionResponse>(cx, "session/resume", &request)
                        .await
                        .map(|(r, value)| {
                            (
                                pick_modes(r.config_options.as_deref(), r.modes.as_ref()),
                                options_of(r.config_options.as_deref(), &value),
                            )
                        })
                }
                _ => continue,
            };
            match answer {
                Ok((modes, options)) => {
                    let info = SessionInfo {
                        session_id: id,
                        modes,
                        origin: way,
                    };
                    return Ok((info, options));
                }
                Err(err) => tracing::warn!("continuing session {id} failed ({way:?}): {err}"),
            }
        }
    }
    let request = acp::NewSessionRequest::new(cwd)
        .additional_directories(dirs)
        .mcp_servers(mcp);
    let (session, value) = raw::request::<acp::NewSessionResponse>(cx, "session/new", &request)
        .await
        .map_err(|err| {
            let message = format!("the agent could not open a session: {err}");
            if err.code == agent_client_protocol::ErrorCode::AUTH_REQUIRED {
                OpenError::AuthRequired(message)
            } else {
                OpenError::Other(message)
            }
        })?;
    let info = SessionInfo {
        session_id: session.session_id.to_string(),
        modes: pick_modes(session.config_options.as_deref(), session.modes.as_ref()),
        origin: SessionOrigin::New,
    };
    Ok((info, options_of(session.config_options.as_deref(), &value)))
}

/// Why a session did not open.
pub(super) enum OpenError {
    /// The agent answered "auth required": sign in first.
    AuthRequired(String),
    Other(String),
}

/// The agent's session options besides its modes, and its `models` as
/// one more (unless a config option picks the model already: one picker).
fn options_of(
    options: Option<&[acp::SessionConfigOption]>,
    answer: &serde_json::Value,
) -> Vec<crate::model::SessionOption> {
    let mut options = options.map(convert::session_options).unwrap_or_default();
    if !options.iter().any(crate::model::SessionOption::is_model)
        && let Some(models) = raw::models(answer)
    {
        options.push(models);
    }
    options
}

/// The agent's modes: a `mode` config option when it offers one, else `modes`.
fn pick_modes(
    options: Option<&[acp::SessionConfigOption]>,
    modes: Option<&acp::SessionModeState>,
) -> Option<crate::model::AgentModes> {
    options
        .and_then(convert::config_modes)
        .or_else(|| modes.map(convert::modes))
}

fn version_mismatch(theirs: &str) -> String {
    format!(
        "the agent speaks ACP protocol version {theirs}, but warden speaks version {}; \
         update the agent (or warden) so both speak the same version",
        ProtocolVersion::V1
    )
}

fn explain_init_error(message: &str) -> String {
    // The SDK refuses a response that selects another version before we see it.
    let lower = message.to_lowercase();
    if lower.contains("protocol") && lower.contains("version") {
        let theirs = message
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .find(|v| *v != "1")
            .unwrap_or("another");
        return format!("{} ({message})", version_mismatch(theirs));
    }
    format!("the agent failed to initialise: {message}")
}

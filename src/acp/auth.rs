//! Signing in: the agent's authentication methods and `authenticate`.

use std::sync::Arc;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;

/// The agent's authentication methods and the one the settings name.
#[derive(Clone)]
pub(super) struct Auth {
    pub(super) methods: Arc<Vec<acp::AuthMethod>>,
    pub(super) chosen: Option<String>,
    /// `authenticate` was sent before the first session.
    pub(super) done: bool,
}

impl Auth {
    /// The message for a session that needs a sign-in warden could not do.
    pub(super) fn missing(&self, message: &str) -> String {
        if self.methods.is_empty() {
            return format!(
                "{message}; the agent needs you to sign in but offers no method warden can use: \
                 sign in with the agent's own command, then restart it (r)"
            );
        }
        let listed: Vec<String> = self.methods.iter().map(describe_method).collect();
        format!(
            "{message}; the agent needs you to sign in: name one of its methods with \
             auth_method = \"ID\" in its [agents.NAME] block: {}",
            listed.join(", ")
        )
    }
}

/// `id` (name), and `, a terminal login` for a terminal method.
fn describe_method(method: &acp::AuthMethod) -> String {
    let terminal = match method {
        acp::AuthMethod::Terminal(_) => ", a login in a terminal, which warden cannot run yet",
        _ => "",
    };
    format!(
        "`{}` ({}{terminal})",
        crate::sanitize::one_line(&method.id().to_string()),
        crate::sanitize::one_line(method.name())
    )
}

/// Send `authenticate` with method `id`; an error says what went wrong.
pub(super) async fn authenticate(
    cx: &ConnectionTo<Agent>,
    methods: &[acp::AuthMethod],
    id: &str,
) -> Result<(), String> {
    let Some(method) = methods.iter().find(|m| m.id().to_string() == id) else {
        let listed: Vec<String> = methods.iter().map(describe_method).collect();
        return Err(format!(
            "auth_method = \"{}\" is not one of the agent's methods ({})",
            crate::sanitize::one_line(id),
            if listed.is_empty() {
                "it offers none".to_string()
            } else {
                listed.join(", ")
            }
        ));
    };
    if let acp::AuthMethod::Terminal(_) = method {
        return Err(format!(
            "auth_method = \"{}\" is a login in a terminal, which warden cannot run yet: \
             run the agent's login yourself, then restart it (r)",
            crate::sanitize::one_line(id)
        ));
    }
    cx.send_request(acp::AuthenticateRequest::new(method.id().clone()))
        .block_task()
        .await
        .map(|_| ())
        .map_err(|err| {
            format!(
                "signing in to the agent with `{}` failed: {err}",
                crate::sanitize::one_line(id)
            )
        })
}

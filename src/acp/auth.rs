//! Signing in: the agent's authentication methods (read from its JSON, as
//! this SDK drops an `env_var` method's variables), `authenticate`, and
//! terminal logins, which `warden login` runs in the user's terminal.

use std::sync::Arc;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use crate::sanitize::one_line;

/// One of the agent's `authMethods`, as warden uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthMethod {
    pub id: String,
    pub name: String,
    pub kind: AuthKind,
}

/// How a method signs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AuthKind {
    /// The agent signs in itself when sent `authenticate`.
    Agent,
    /// `type: env_var`: the agent reads these variables (from the agent
    /// block's `env` or warden's environment), then `authenticate`.
    EnvVar { vars: Vec<String> },
    /// A login in a terminal: the agent's own program (never a command the
    /// agent names) run with `args` and `env`, in the user's terminal
    /// (`type: terminal`, kimi-cli's `_meta.terminal-auth`, qwen-code's
    /// `_meta.type = terminal`).
    Terminal {
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
}

/// Environment variables a terminal login may not set: they change which
/// code runs (loader, shell start-up files, the program search path).
const UNSAFE_ENV: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "RUBYOPT",
];

fn safe_env(name: &str) -> bool {
    !name.is_empty()
        && !UNSAFE_ENV.contains(&name)
        && !name.starts_with("LD_")
        && !name.starts_with("DYLD_")
        && !name.contains('=')
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn env_pairs(value: Option<&Value>) -> Vec<(String, String)> {
    let Some(value) = value else {
        return Vec::new();
    };
    let pairs: Vec<(String, String)> = match value {
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| {
                Some((
                    item.get("name")?.as_str()?.to_string(),
                    item.get("value")?.as_str()?.to_string(),
                ))
            })
            .collect(),
        _ => Vec::new(),
    };
    pairs.into_iter().filter(|(k, _)| safe_env(k)).collect()
}

/// The `authMethods` of an `initialize` answer (its JSON).
pub(super) fn methods(answer: &Value) -> Vec<AuthMethod> {
    let Some(list) = answer.get("authMethods").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|m| {
            let id = m.get("id")?.as_str()?.to_string();
            let name = m
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or(&id)
                .to_string();
            let meta = m.get("_meta");
            let legacy = meta.and_then(|meta| meta.get("terminal-auth"));
            let kind = match m.get("type").and_then(Value::as_str) {
                Some("env_var") => AuthKind::EnvVar {
                    vars: m
                        .get("vars")
                        .and_then(Value::as_array)
                        .map(|vars| {
                            vars.iter()
                                .filter_map(|v| v.get("name")?.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                },
                Some("terminal") => AuthKind::Terminal {
                    args: strings(m.get("args")),
                    env: env_pairs(m.get("env")),
                },
                _ if legacy.is_some() => AuthKind::Terminal {
                    args: strings(legacy.and_then(|t| t.get("args"))),
                    env: env_pairs(legacy.and_then(|t| t.get("env"))),
                },
                _ if meta
                    .and_then(|meta| meta.get("type"))
                    .and_then(Value::as_str)
                    == Some("terminal") =>
                {
                    AuthKind::Terminal {
                        args: strings(meta.and_then(|meta| meta.get("args"))),
                        env: env_pairs(meta.and_then(|meta| meta.get("env"))),
                    }
                }
                _ => AuthKind::Agent,
            };
            Some(AuthMethod { id, name, kind })
        })
        .collect()
}

/// The agent's authentication methods and the one the settings name.
#[derive(Clone)]
pub(super) struct Auth {
    pub(super) methods: Arc<Vec<AuthMethod>>,
    pub(super) chosen: Option<String>,
    /// `authenticate` was sent before the first session.
    pub(super) done: bool,
    /// The agent's name (for `warden login --agent NAME`).
    pub(super) agent: String,
    /// The names of the variables of the agent block's `env`.
    pub(super) env: Arc<Vec<String>>,
}

impl Auth {
    /// Whether `var` reaches the agent: the agent block's `env`, or warden's own.
    fn has_var(&self, var: &str) -> bool {
        self.env.iter().any(|name| name == var) || std::env::var_os(var).is_some()
    }

    /// The method to sign in with when a session needs it: the settings'
    /// `auth_method`, else the first `env_var` method whose variables are all set.
    pub(super) fn pick(&self) -> Option<String> {
        self.chosen.clone().or_else(|| {
            self.methods
                .iter()
                .find(|m| match &m.kind {
                    AuthKind::EnvVar { vars } => {
                        !vars.is_empty() && vars.iter().all(|v| self.has_var(v))
                    }
                    _ => false,
                })
                .map(|m| m.id.clone())
        })
    }

    /// The message for a session that needs a sign-in warden could not do.
    pub(super) fn missing(&self, message: &str) -> String {
        if self.methods.is_empty() {
            return format!(
                "{message}; the agent needs you to sign in but offers no method warden can use: \
                 sign in with the agent's own command, then restart it (r)"
            );
        }
        let listed: Vec<String> = self.methods.iter().map(|m| self.describe(m)).collect();
        format!(
            "{message}; the agent needs you to sign in: name one of its methods with \
             auth_method = \"ID\" in its [agents.NAME] block: {}",
            listed.join(", ")
        )
    }

    /// `id` (name), and what it needs.
    fn describe(&self, method: &AuthMethod) -> String {
        let needs = match &method.kind {
            AuthKind::Agent => String::new(),
            AuthKind::EnvVar { vars } => {
                let unset: Vec<&str> = vars
                    .iter()
                    .filter(|v| !self.has_var(v))
                    .map(String::as_str)
                    .collect();
                if unset.is_empty() {
                    String::new()
                } else {
                    format!(", needs {} in its env", one_line(&unset.join(", ")))
                }
            }
            AuthKind::Terminal { .. } => format!(
                ", a login in a terminal: type /login, or run `warden login --agent {}`",
                one_line(&self.agent)
            ),
        };
        format!(
            "`{}` ({}{needs})",
            one_line(&method.id),
            one_line(&method.name)
        )
    }

    /// Send `authenticate` with method `id`; an error says what went wrong
    /// (a method the agent does not list, an env_var method whose variable
    /// is not set, a terminal login, which `warden login` runs instead).
    pub(super) async fn authenticate(
        &self,
        cx: &ConnectionTo<Agent>,
        id: &str,
    ) -> Result<(), String> {
        let Some(method) = self.methods.iter().find(|m| m.id == id) else {
            let listed: Vec<String> = self.methods.iter().map(|m| self.describe(m)).collect();
            return Err(format!(
                "auth_method = \"{}\" is not one of the agent's methods ({})",
                one_line(id),
                if listed.is_empty() {
                    "it offers none".to_string()
                } else {
                    listed.join(", ")
                }
            ));
        };
        match &method.kind {
            AuthKind::Terminal { .. } => {
                return Err(format!(
                    "auth_method = \"{}\" is a login in a terminal: type /login, or run \
                     `warden login --agent {}` in your terminal and restart the agent (r)",
                    one_line(id),
                    one_line(&self.agent)
                ));
            }
            AuthKind::EnvVar { vars } => {
                let unset: Vec<&str> = vars
                    .iter()
                    .filter(|v| !self.has_var(v))
                    .map(String::as_str)
                    .collect();
                if !unset.is_empty() {
                    return Err(format!(
                        "auth_method = \"{}\" needs {} set: add it to env = {{ ... }} in \
                         [agents.{}] (or warden's environment), then restart the agent (r)",
                        one_line(id),
                        one_line(&unset.join(", ")),
                        one_line(&self.agent)
                    ));
                }
            }
            AuthKind::Agent => {}
        }
        cx.send_request(acp::AuthenticateRequest::new(acp::AuthMethodId::new(
            method.id.clone(),
        )))
        .block_task()
        .await
        .map(|_| ())
        .map_err(|err| {
            format!(
                "signing in to the agent with `{}` failed: {err}",
                one_line(id)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The methods as codex-acp, kimi-cli, qwen-code and gemini-cli send
    /// them (from the recorded transcripts).
    #[test]
    fn methods_of_real_agents_are_read() {
        let answer = json!({"authMethods": [
            {"id": "chatgpt", "name": "Login with ChatGPT"},
            {"type": "env_var", "id": "codex-api-key", "name": "Use CODEX_API_KEY",
             "vars": [{"name": "CODEX_API_KEY"}]},
            {"_meta": {"terminal-auth": {"command": "peers/kimi-offline/venv/bin/kimi",
             "args": ["login"], "label": "Kimi Code Login", "env": {"LD_PRELOAD": "x", "A": "b"},
             "type": "terminal"}}, "id": "login", "name": "Login with Kimi account"},
            {"id": "openai", "name": "Use OpenAI API key",
             "_meta": {"type": "terminal", "args": ["--auth-type=openai"]}},
            {"id": "gemini-api-key", "name": "Gemini API key",
             "_meta": {"api-key": {"provider": "google"}}},
        ]});
        let kinds: Vec<(String, AuthKind)> = methods(&answer)
            .into_iter()
            .map(|m| (m.id, m.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("chatgpt".into(), AuthKind::Agent),
                (
                    "codex-api-key".into(),
                    AuthKind::EnvVar {
                        vars: vec!["CODEX_API_KEY".into()]
                    }
                ),
                (
                    "login".into(),
                    AuthKind::Terminal {
                        args: vec!["login".into()],
                        env: vec![("A".into(), "b".into())],
                    }
                ),
                (
                    "openai".into(),
                    AuthKind::Terminal {
                        args: vec!["--auth-type=openai".into()],
                        env: Vec::new(),
                    }
                ),
                ("gemini-api-key".into(), AuthKind::Agent),
            ]
        );
    }

    #[test]
    fn an_env_var_method_is_picked_when_its_variables_are_in_the_block() {
        let answer = json!({"authMethods": [
            {"id": "chatgpt", "name": "Login"},
            {"type": "env_var", "id": "key", "name": "Key",
             "vars": [{"name": "WARDEN_TEST_SURELY_UNSET_VAR"}]},
        ]});
        let mut auth = Auth {
            methods: Arc::new(methods(&answer)),
            chosen: None,
            done: false,
            agent: "codex".into(),
            env: Arc::new(Vec::new()),
        };
        assert_eq!(auth.pick(), None);
        assert!(
            auth.missing("no session")
                .contains("`key` (Key, needs WARDEN_TEST_SURELY_UNSET_VAR in its env)")
        );
        auth.env = Arc::new(vec!["WARDEN_TEST_SURELY_UNSET_VAR".into()]);
        assert_eq!(auth.pick().as_deref(), Some("key"));
        auth.chosen = Some("chatgpt".into());
        assert_eq!(auth.pick().as_deref(), Some("chatgpt"));
    }
}

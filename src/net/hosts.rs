//! The hosts an agent reaches without asking: `[sandbox] allow_hosts` (and
//! its agent block's), `--allow-host`, its known model API hosts and the
//! host of each base-URL variable it was given. With `network = "gated"`
//! every other host asks the gate; with `"closed"` it is refused at once.

use serde::Deserialize;

pub use crate::policy::network::host_matches;
use crate::policy::network::split_host_pattern;

/// `[sandbox] network`: how the agent's process tree reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// Only through warden's proxy; a host not allowed asks the gate.
    #[default]
    Gated,
    /// No wall and no proxy: the agent reaches any host.
    Open,
    /// Only through warden's proxy, to the allowed hosts; every other
    /// connection is refused without asking.
    Closed,
}

impl NetworkMode {
    /// The setting's word.
    pub fn word(self) -> &'static str {
        match self {
            NetworkMode::Gated => "gated",
            NetworkMode::Open => "open",
            NetworkMode::Closed => "closed",
        }
    }
}

/// The variables whose URL names the host of an agent's model.
pub const BASE_URL_VARS: &[&str] = &[
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "AZURE_OPENAI_ENDPOINT",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "MOONSHOT_BASE_URL",
    "KIMI_BASE_URL",
    "DASHSCOPE_BASE_URL",
    "OLLAMA_HOST",
    "OPENROUTER_BASE_URL",
];

/// The hosts one agent process reaches without asking, and what happens
/// to the others.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hosts {
    pub mode: NetworkMode,
    /// Patterns: `host`, `host:port`, `*.domain`.
    pub allow: Vec<String>,
}

impl Hosts {
    pub fn new(mode: NetworkMode, allow: Vec<String>) -> Hosts {
        Hosts { mode, allow }
    }

    /// Whether `host:port` is reached without asking.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.mode == NetworkMode::Open || self.allow.iter().any(|p| host_matches(p, host, port))
    }
}

/// Whether `pattern` is a host pattern `allow_hosts` takes.
pub fn is_host_pattern(pattern: &str) -> bool {
    let (name, _) = split_host_pattern(pattern.trim());
    let name = name.strip_prefix("*.").unwrap_or(name);
    !name.is_empty()
        && !name.contains('*')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
}

/// The host (and port, when the URL names one) of a URL, as a pattern:
/// `https://api.example.com/v1` is `api.example.com`,
/// `http://127.0.0.1:8080` is `127.0.0.1:8080`. A bare `host[:port]`
/// (`OLLAMA_HOST`) counts too.
pub fn url_host(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    if authority.is_empty() {
        return None;
    }
    let pattern = authority.to_ascii_lowercase();
    is_host_pattern(&pattern).then_some(pattern)
}

/// The hosts of the base-URL variables in `env` ([`BASE_URL_VARS`]).
pub fn base_url_hosts<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    env.into_iter()
        .filter(|(name, _)| BASE_URL_VARS.contains(name))
        .filter_map(|(_, value)| url_host(value))
        .collect()
}

/// The most loopback services forwarded into one namespace.
pub const MAX_LOOPBACK: usize = 8;

/// The services on the host's own loopback that `allow` names with their
/// port (`localhost:11434`, `127.0.0.1:8080`, `[::1]:3000`): a model server
/// such as ollama, which an agent in a network namespace of its own would
/// otherwise look for on its own loopback and not find. Each is the host
/// as written and its port; one per port, at most [`MAX_LOOPBACK`]. A
/// loopback name without a port, or `*.localhost`, forwards nothing.
pub fn loopback_services(allow: &[String]) -> Vec<(String, u16)> {
    let mut services: Vec<(String, u16)> = Vec::new();
    for pattern in allow {
        let (name, port) = split_host_pattern(pattern.trim());
        let name = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let Some(port) = port.filter(|p| *p != 0) else {
            continue;
        };
        if name.starts_with("*.")
            || !super::upstream::is_loopback(&name)
            || services.iter().any(|(_, p)| *p == port)
        {
            continue;
        }
        if services.len() == MAX_LOOPBACK {
            tracing::warn!(
                "more than {MAX_LOOPBACK} loopback ports allowed: {pattern} not forwarded"
            );
            continue;
        }
        services.push((name, port));
    }
    services
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_services_are_the_allowed_loopback_hosts_with_a_port() {
        let allow: Vec<String> = [
            "localhost:11434",
            "api.example.com:443",
            "127.0.0.1:8080",
            "[::1]:3000",
            "localhost",
            "*.localhost:9000",
            "127.0.0.1:11434",
            "LOCALHOST:7000",
            "10.0.0.1:8080",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            loopback_services(&allow),
            vec![
                ("localhost".to_string(), 11434),
                ("127.0.0.1".to_string(), 8080),
                ("::1".to_string(), 3000),
                ("localhost".to_string(), 7000),
            ]
        );
        let many: Vec<String> = (1..=20).map(|p| format!("localhost:{p}")).collect();
        assert_eq!(loopback_services(&many).len(), MAX_LOOPBACK);
    }

    #[test]
    fn patterns_name_a_host_a_host_and_port_or_the_names_under_a_domain() {
        assert!(host_matches("api.github.com", "API.GitHub.com", 443));
        assert!(host_matches("api.github.com", "api.github.com.", 80));
        assert!(!host_matches("api.github.com", "github.com", 443));
        assert!(host_matches("api.github.com:443", "api.github.com", 443));
        assert!(!host_matches("api.github.com:443", "api.github.com", 80));
        assert!(host_matches("*.github.com", "api.github.com", 443));
        assert!(host_matches("*.github.com", "a.b.github.com", 443));
        assert!(!host_matches("*.github.com", "github.com", 443));
        assert!(!host_matches("*.github.com", "evilgithub.com", 443));
        assert!(!host_matches("*.github.com", "github.com.evil.net", 443));
        assert!(host_matches("127.0.0.1:8080", "127.0.0.1", 8080));
        assert!(!host_matches("127.0.0.1:8080", "127.0.0.1", 8081));
        assert!(host_matches("::1", "::1", 22));
        assert!(host_matches("[::1]:22", "[::1]", 22));
        assert!(!host_matches("[::1]:22", "::1", 23));
        assert!(!host_matches("", "x", 1));
        assert!(!host_matches("*.", "x", 1));
        assert!(!host_matches("x:notaport", "x", 1));
    }

    #[test]
    fn the_mode_decides_the_hosts_not_listed() {
        let gated = Hosts::new(NetworkMode::Gated, vec!["*.example.com".into()]);
        assert!(gated.allows("a.example.com", 443));
        assert!(!gated.allows("example.org", 443));
        let closed = Hosts::new(NetworkMode::Closed, vec!["a.test".into()]);
        assert!(closed.allows("a.test", 1) && !closed.allows("b.test", 1));
        assert!(Hosts::new(NetworkMode::Open, Vec::new()).allows("anything", 1));
    }

    #[test]
    fn base_url_variables_name_the_model_host() {
        let env = [
            ("ANTHROPIC_BASE_URL", "https://Proxy.Corp.example/v1"),
            ("OPENAI_BASE_URL", "http://user:pw@127.0.0.1:8080/v1"),
            ("OLLAMA_HOST", "localhost:11434"),
            ("HOME", "http://not.a.model/"),
            ("GOOGLE_GEMINI_BASE_URL", "not a url at all"),
        ];
        assert_eq!(
            base_url_hosts(env),
            vec!["proxy.corp.example", "127.0.0.1:8080", "localhost:11434"]
        );
    }

    #[test]
    fn only_host_patterns_are_taken() {
        for good in ["a.b", "*.b.c", "a.b:443", "127.0.0.1", "[::1]:8080"] {
            assert!(is_host_pattern(good), "{good}");
        }
        for bad in ["", "*", "a*.b", "a/b", "http://a", "a b"] {
            assert!(!is_host_pattern(bad), "{bad}");
        }
    }
}

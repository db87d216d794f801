//! Decisions on the connections an agent's process tree opens through
//! warden's proxy (issue 35). A new host asks in every mode, Auto included:
//! the network is the sandbox's business, not the mode's. Deny rules win,
//! then ask rules; the agent's bypass, allow rules and this chat's grants
//! allow; anything else asks. The hosts the settings allow
//! (`allow_hosts`) never reach the gate: the proxy lets them through.

use super::rule::RuleDecision;
use super::{Context, Decision, Mode, RequestView, Source, allow, deny};

/// The host and port a network request names (`raw_input`'s `host` and
/// `port`), the host in lower case; `None` for every other request.
pub fn target(req: &RequestView) -> Option<(String, u16)> {
    if req.card != crate::gate::CardKind::Network {
        return None;
    }
    let input = req.raw_input.as_ref()?;
    let host = input.get("host")?.as_str()?.to_ascii_lowercase();
    let port = u16::try_from(input.get("port")?.as_u64()?).ok()?;
    (!host.is_empty()).then_some((host, port))
}

/// Whether `pattern` (`host`, `host:port`, `*.domain`; `[v6]:port` for an
/// IPv6 literal with a port) names `host:port`. `*.domain` names the hosts
/// under `domain`, not `domain` itself. Case does not matter, nor a final
/// dot.
pub fn host_matches(pattern: &str, host: &str, port: u16) -> bool {
    let pattern = pattern.trim();
    let (name, want_port) = split_host_pattern(pattern);
    if let Some(want) = want_port
        && want != port
    {
        return false;
    }
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if name.is_empty() || host.is_empty() {
        return false;
    }
    match name.strip_prefix("*.") {
        Some(domain) => {
            !domain.is_empty()
                && host.len() > domain.len() + 1
                && host.ends_with(domain)
                && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
        }
        None => name == host,
    }
}

/// A pattern's host and its port, if it names one.
pub(crate) fn split_host_pattern(pattern: &str) -> (&str, Option<u16>) {
    if let Some(rest) = pattern.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((v6, tail)) => (v6, tail.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (rest, None),
        };
    }
    // A bare IPv6 literal has several colons and no port.
    if pattern.matches(':').count() == 1
        && let Some((name, port)) = pattern.rsplit_once(':')
    {
        return match port.parse() {
            Ok(port) => (name, Some(port)),
            // A port that is no number matches nothing.
            Err(_) => ("", None),
        };
    }
    (pattern, None)
}

/// Decide a connection (see the module docs).
pub(super) fn decide(req: &RequestView, cx: &Context) -> Decision {
    let Some((host, port)) = target(req) else {
        return deny(
            req,
            Source::User,
            "a connection that names no host and port".to_string(),
        );
    };
    let matching = |decision: RuleDecision| {
        cx.rules.iter().find(|r| {
            r.decision == decision
                && r.host
                    .as_deref()
                    .is_some_and(|h| host_matches(h, &host, port))
                && r.agent.as_deref().is_none_or(|a| {
                    // Deny and ask rules find the agent by any name it
                    // goes by; an allow rule only by a block that binds it.
                    if decision == RuleDecision::Allow {
                        !cx.agent.unbound && a == cx.agent.name
                    } else {
                        cx.agent.names().any(|n| n == a)
                    }
                })
        })
    };
    if let Some(rule) = matching(RuleDecision::Deny) {
        return deny(req, Source::Rule, rule.describe());
    }
    if let Some(rule) = matching(RuleDecision::Ask) {
        return Decision::Ask {
            reason: rule.describe(),
        };
    }
    if cx.agent.bypass {
        return allow(req, Source::Bypass, format!("bypass for {}", cx.agent.name));
    }
    if let Some(rule) = matching(RuleDecision::Allow) {
        return allow(req, Source::Rule, rule.describe());
    }
    if let Some(grant) = cx.grants.iter().find(|g| g.covers(req)) {
        return allow(
            req,
            Source::ChatGrant,
            format!("allowed for {}", grant.describe()),
        );
    }
    let mut reason = format!("{host}:{port} is a new host, which asks in every mode");
    if cx.mode == Mode::Plan {
        reason.push_str("; in plan mode too: a write to a host is still a write");
    }
    Decision::Ask { reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::CardKind;
    use crate::model::{OptionKind, PermissionOption, ToolKind};
    use crate::policy::{AgentPolicy, ChatGrant, Rule};

    fn connect(host: &str, port: u16) -> RequestView {
        RequestView {
            kind: ToolKind::Fetch,
            title: format!("Connect {host}:{port}"),
            tool_name: Some(crate::policy::CLIENT_NETWORK.into()),
            raw_input: Some(serde_json::json!({ "host": host, "port": port })),
            options: vec![
                PermissionOption {
                    id: "allow".into(),
                    name: "Allow".into(),
                    kind: OptionKind::AllowOnce,
                },
                PermissionOption {
                    id: "reject".into(),
                    name: "Reject".into(),
                    kind: OptionKind::RejectOnce,
                },
            ],
            card: CardKind::Network,
            ..RequestView::default()
        }
    }

    fn host_rule(decision: RuleDecision, host: &str) -> Rule {
        Rule {
            host: Some(host.into()),
            ..Rule::new(decision)
        }
    }

    fn decide_with(
        req: &RequestView,
        mode: Mode,
        agent: &AgentPolicy,
        rules: &[Rule],
        grants: &[ChatGrant],
    ) -> Decision {
        super::super::decide(
            req,
            &Context {
                mode,
                agent,
                rules,
                grants,
                home: None,
                cwd: std::path::Path::new("/w"),
                unattended: false,
            },
        )
    }

    #[test]
    fn a_new_host_asks_in_every_mode_and_plan_says_a_write_is_a_write() {
        let agent = AgentPolicy::default();
        let req = connect("api.github.com", 443);
        for mode in Mode::ALL {
            let got = decide_with(&req, mode, &agent, &[], &[]);
            let Decision::Ask { reason } = got else {
                panic!("{mode}: {got:?}")
            };
            assert!(reason.contains("api.github.com:443"), "{reason}");
            assert_eq!(reason.contains("still a write"), mode == Mode::Plan);
        }
    }

    #[test]
    fn deny_beats_allow_and_bypass_and_ask_beats_bypass() {
        let bypass = AgentPolicy {
            bypass: true,
            ..AgentPolicy::default()
        };
        let req = connect("api.github.com", 443);
        let rules = [
            host_rule(RuleDecision::Allow, "*.github.com"),
            host_rule(RuleDecision::Deny, "api.github.com"),
        ];
        assert!(matches!(
            decide_with(&req, Mode::Auto, &bypass, &rules, &[]),
            Decision::Deny {
                source: Source::Rule,
                ..
            }
        ));
        let ask = [host_rule(RuleDecision::Ask, "*.github.com")];
        assert!(matches!(
            decide_with(&req, Mode::Auto, &bypass, &ask, &[]),
            Decision::Ask { .. }
        ));
        assert!(matches!(
            decide_with(&req, Mode::Default, &bypass, &[], &[]),
            Decision::Allow {
                source: Source::Bypass,
                ..
            }
        ));
        let allow = [host_rule(RuleDecision::Allow, "*.github.com")];
        let agent = AgentPolicy::default();
        assert!(matches!(
            decide_with(&req, Mode::Plan, &agent, &allow, &[]),
            Decision::Allow {
                source: Source::Rule,
                ..
            }
        ));
        // A host rule never speaks for another request, nor a command rule
        // for a connection.
        let shell = crate::policy::tests::shell("curl https://api.github.com");
        let got = decide_with(&shell, Mode::Default, &agent, &allow, &[]);
        assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
        let any = [Rule::new(RuleDecision::Allow)];
        let got = decide_with(&req, Mode::Default, &agent, &any, &[]);
        assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
    }

    #[test]
    fn an_allow_rule_naming_an_agent_needs_a_block_that_binds_it() {
        let unbound = AgentPolicy {
            name: "claude".into(),
            unbound: true,
            ..AgentPolicy::default()
        };
        let req = connect("example.com", 80);
        let allow = [Rule {
            agent: Some("claude".into()),
            ..host_rule(RuleDecision::Allow, "example.com")
        }];
        let got = decide_with(&req, Mode::Default, &unbound, &allow, &[]);
        assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
        let deny = [Rule {
            agent: Some("claude".into()),
            ..host_rule(RuleDecision::Deny, "example.com")
        }];
        let got = decide_with(&req, Mode::Default, &unbound, &deny, &[]);
        assert!(matches!(got, Decision::Deny { .. }), "{got:?}");
    }

    #[test]
    fn a_grant_covers_its_host_and_port_only() {
        let agent = AgentPolicy::default();
        let req = connect("api.github.com", 443);
        let grant = ChatGrant::for_request(&req);
        assert_eq!(grant.host.as_deref(), Some("api.github.com:443"));
        let grants = [grant];
        assert!(matches!(
            decide_with(&req, Mode::Default, &agent, &[], &grants),
            Decision::Allow {
                source: Source::ChatGrant,
                ..
            }
        ));
        for other in [connect("api.github.com", 22), connect("evil.com", 443)] {
            let got = decide_with(&other, Mode::Default, &agent, &[], &grants);
            assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
        }
        // A grant on the agent's own fetch tool never covers a connection.
        let fetch = ChatGrant {
            kind: ToolKind::Fetch,
            tool: crate::policy::CLIENT_NETWORK.into(),
            commands: None,
            host: None,
        };
        let got = decide_with(&req, Mode::Default, &agent, &[], &[fetch]);
        assert!(matches!(got, Decision::Ask { .. }), "{got:?}");
    }

    #[test]
    fn a_request_with_no_target_is_refused() {
        let agent = AgentPolicy {
            bypass: true,
            ..AgentPolicy::default()
        };
        let mut req = connect("x", 1);
        req.raw_input = None;
        assert!(matches!(
            decide_with(&req, Mode::Auto, &agent, &[], &[]),
            Decision::Deny { .. }
        ));
    }

    #[test]
    fn host_patterns_match_names_ports_and_subdomains_only() {
        assert!(host_matches("api.github.com", "API.github.com", 443));
        assert!(host_matches("api.github.com:443", "api.github.com", 443));
        assert!(!host_matches("api.github.com:443", "api.github.com", 22));
        assert!(host_matches("*.github.com", "api.github.com", 443));
        assert!(host_matches("*.github.com", "a.b.github.com", 80));
        assert!(!host_matches("*.github.com", "github.com", 443));
        assert!(!host_matches("*.github.com", "evilgithub.com", 443));
        assert!(!host_matches("github.com", "api.github.com", 443));
        assert!(!host_matches("github.com", "github.com.evil.net", 443));
        assert!(host_matches("127.0.0.1:8080", "127.0.0.1", 8080));
        assert!(host_matches("[::1]:443", "::1", 443));
        assert!(host_matches("::1", "::1", 9));
        assert!(!host_matches("", "", 1));
        assert!(!host_matches("*.", "a.", 1));
    }
}

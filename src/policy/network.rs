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

/// Whether `pattern` names `host:port`: `host`, `host:port`, or
/// `*.domain` (every name under `domain`, not `domain` itself), in any
/// case, a port given only when it is the same.
pub fn host_matches(pattern: &str, host: &str, port: u16) -> bool {
    let pattern = pattern.trim().to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    // `[::1]:443` and `::1` (an IPv6 literal without a port).
    let (name, wanted_port) = match pattern.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((name, tail)) => (name.to_string(), tail.strip_prefix(':')),
            None => return false,
        },
        None if pattern.matches(':').count() > 1 => (pattern.clone(), None),
        None => match pattern.rsplit_once(':') {
            Some((name, port)) => (name.to_string(), Some(port)),
            None => (pattern.clone(), None),
        },
    };
    if let Some(wanted) = wanted_port
        && wanted.parse::<u16>().ok() != Some(port)
    {
        return false;
    }
    let name = name.trim_end_matches('.');
    match name.strip_prefix("*.") {
        Some(domain) => {
            !domain.is_empty()
                && host.len() > domain.len() + 1
                && host.ends_with(domain)
                && host[..host.len() - domain.len()].ends_with('.')
        }
        None => !name.is_empty() && name == host,
    }
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

//! The gate's decision on one request, in one place: refusals whatever the
//! mode, a call that already ran, the policy, and what an earlier allowed
//! request covers. Pure: the state gives what it knows ([`Ctx`]) and
//! carries the [`Outcome`] out (a card, an answer, a log record).

use crate::policy::{self, Context, Decision, Mode, allow_option};

use super::facts::{Refusal, RequestFacts};
use crate::model::PermissionRequest;

/// What the chat knows that the decision needs, besides the policy's.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// The mode, the agent's bypass, the rules and this chat's grants.
    pub policy: Context<'a>,
    /// Why no request of the agent's may be decided by this chat's mode
    /// now (no turn running, the turn cancelled), if so.
    pub no_turn: Option<Refusal>,
    /// The agent's tool call the request is about has finished already.
    pub finished: bool,
    /// An earlier allowed request of this turn that covers this client
    /// call: where its permission came from, and its title.
    pub cover: Option<(policy::Source, String)>,
}

/// What the gate decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Refused whatever the mode and the rules: the agent gets its reject
    /// option, the chat an error line.
    Refuse(Refusal),
    /// The tool call already finished: the request asks for nothing still
    /// to happen, and is answered cancelled.
    Withdraw,
    /// Answered now (by the mode, a rule, a grant, the bypass).
    Decided(Decision),
    /// Allowed as covered by an earlier allowed request ([`Ctx::cover`],
    /// which is used up).
    Covered(Decision),
    /// Put in front of the user, for this reason.
    Ask(String),
}

/// Decide one request from its facts.
pub fn on_request(request: &PermissionRequest, facts: &RequestFacts, ctx: &Ctx) -> Outcome {
    if let Some(refusal) = &facts.refusal {
        return Outcome::Refuse(refusal.clone());
    }
    let view = &facts.view;
    // A file, terminal or permission call for a session with no turn
    // running (another chat's agent acting through this idle chat's
    // session, a turn cancelled or over) is not this chat's mode's to
    // decide. An elicitation asks the user anyway.
    if facts.in_session
        && !view.card.always_asks()
        && let Some(why) = &ctx.no_turn
    {
        return Outcome::Refuse(why.clone());
    }
    // A request about a tool call that already ran asks for nothing that
    // is still to happen, and its finished call's fields would fill the
    // request's gaps.
    if !view.card.is_client() && ctx.finished {
        return Outcome::Withdraw;
    }
    let decision = policy::decide(view, &ctx.policy);
    let Decision::Ask { reason } = decision else {
        return Outcome::Decided(decision);
    };
    // A file write or terminal the agent already got permission for: no
    // second card. Only what the mode would ask about: the deny and ask
    // rules are checked on the call itself, and Plan never covers.
    if view.card.is_client()
        && ctx.policy.mode != Mode::Plan
        && policy::rule_gate(view, &ctx.policy).is_none()
        && let Some(option) = allow_option(&request.options)
        && let Some((source, title)) = &ctx.cover
    {
        return Outcome::Covered(Decision::Allow {
            option_id: option.id.clone(),
            source: *source,
            reason: format!("covered by the allowed request `{title}`"),
        });
    }
    Outcome::Ask(reason)
}

/// Decide a waiting card again (after a grant, a bypass, a rule kept or a
/// mode change): only the policy can change its mind.
pub fn again(facts: &crate::policy::RequestView, policy: &Context) -> Decision {
    policy::decide(facts, policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{OptionKind, PermissionOption, ToolCallFields, ToolKind};
    use crate::policy::{AgentPolicy, CLIENT_WRITE, Source};

    fn request(client: bool) -> PermissionRequest {
        PermissionRequest {
            session_id: "s".into(),
            tool_call_id: "t".into(),
            fields: ToolCallFields {
                title: Some("Write a.txt".into()),
                kind: Some(ToolKind::Edit),
                tool_name: client.then(|| CLIENT_WRITE.to_string()),
                raw_input: Some(serde_json::json!({"path": "/w/a.txt"})),
                ..ToolCallFields::default()
            },
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
            client,
        }
    }

    fn decide(mode: Mode, req: &PermissionRequest, facts: RequestFacts, mut ctx: Ctx) -> Outcome {
        ctx.policy.mode = mode;
        on_request(req, &facts, &ctx)
    }

    fn ctx() -> Ctx<'static> {
        static AGENT: std::sync::LazyLock<AgentPolicy> =
            std::sync::LazyLock::new(AgentPolicy::default);
        Ctx {
            policy: Context {
                mode: Mode::Default,
                agent: &AGENT,
                rules: &[],
                grants: &[],
                home: None,
                cwd: std::path::Path::new("/w"),
                unattended: false,
            },
            no_turn: None,
            finished: false,
            cover: None,
        }
    }

    fn facts(req: &PermissionRequest) -> RequestFacts {
        RequestFacts {
            in_session: true,
            ..RequestFacts::of(req, None)
        }
    }

    #[test]
    fn a_refusal_wins_over_every_mode() {
        let req = request(false);
        let refusal = Refusal::Protected("warden's settings".into());
        let got = decide(
            Mode::Auto,
            &req,
            facts(&req).refused(refusal.clone()),
            ctx(),
        );
        assert_eq!(got, Outcome::Refuse(refusal));
    }

    #[test]
    fn no_turn_running_refuses_what_the_mode_would_allow() {
        let req = request(false);
        let why = Refusal::Safety("no turn".into());
        let got = decide(
            Mode::Auto,
            &req,
            facts(&req),
            Ctx {
                no_turn: Some(why.clone()),
                ..ctx()
            },
        );
        assert_eq!(got, Outcome::Refuse(why));
        // Outside the session's own requests the turn is not asked about.
        let got = decide(
            Mode::Auto,
            &req,
            RequestFacts::of(&req, None),
            Ctx {
                no_turn: Some(Refusal::Safety("no turn".into())),
                ..ctx()
            },
        );
        assert!(
            matches!(got, Outcome::Decided(Decision::Allow { .. })),
            "{got:?}"
        );
    }

    #[test]
    fn a_finished_agent_call_is_withdrawn_but_a_client_call_is_decided() {
        let finished = Ctx {
            finished: true,
            ..ctx()
        };
        let req = request(false);
        assert_eq!(
            decide(Mode::Default, &req, facts(&req), finished.clone()),
            Outcome::Withdraw
        );
        let req = request(true);
        assert!(matches!(
            decide(Mode::Default, &req, facts(&req), finished),
            Outcome::Ask(_)
        ));
    }

    #[test]
    fn a_cover_allows_a_client_call_that_asks_except_in_plan() {
        let req = request(true);
        let covered = Ctx {
            cover: Some((Source::User, "Edit a.txt".into())),
            ..ctx()
        };
        match decide(Mode::Default, &req, facts(&req), covered.clone()) {
            Outcome::Covered(Decision::Allow {
                option_id, reason, ..
            }) => {
                assert_eq!(option_id, "allow");
                assert!(reason.contains("Edit a.txt"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(Mode::Plan, &req, facts(&req), covered.clone()),
            Outcome::Decided(Decision::Deny { .. }) | Outcome::Ask(_)
        ));
        // An agent's own request is never covered.
        let req = request(false);
        assert!(matches!(
            decide(Mode::Default, &req, facts(&req), covered),
            Outcome::Ask(_)
        ));
    }
}

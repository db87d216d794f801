//! Answering a card: one [`Pick`] (what is chosen, and by whom) from a
//! key, the reason field, approve-all, the remote page or `--on-ask`; what
//! it comes to for this card ([`Resolved`]); the answer sent, logged and
//! shown; "deny with a reason"; "allow for this chat".

use crate::gate::CardKind;
use crate::model::{PermissionOption, PermissionOutcome};
use crate::policy::{
    GrantCommands, Sent, Source, allow_option, reject_option, sent_for, switch_allow_option,
};
use crate::record::{Answerer, DecisionRecord, Verdict};
use crate::sanitize::one_line;

use crate::gate::cards::{REFUSED_SWITCH, no_allow_notice};
use crate::policy::Mode;
use crate::state::Approval;
use crate::state::{ChatState, Effect, EntryKind, RequestId, ToolState};

/// One answer to a card: what it picks and who picked it. A key on the
/// card, the reason field, "approve all", the remote page and `warden exec
/// --on-ask` all answer through it ([`ChatState::on_pick`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    pub choice: Answer,
    pub by: By,
}

/// What an answer picks. From another device nothing lasting is picked
/// (no grant, rule or bypass).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The agent's option of this index.
    Option(usize),
    /// Allow: the agent's `allow_once` (for a `switch_mode` request, the one
    /// that leads to a mode that asks); never `allow_always`.
    Allow,
    /// Deny (reject_once, else reject_always, else cancelled).
    Deny,
    /// Deny, cancel the turn and tell the agent why (an empty reason is a
    /// plain deny).
    DenyWithReason(String),
    /// Nobody answered within this many seconds (`warden exec --on-ask
    /// remote --ask-timeout`): deny, and log why.
    NoAnswer(u64),
}

/// Who answered a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The user, on the card.
    You,
    /// The user, approving every waiting card at once.
    ApproveAll,
    /// `warden exec --on-ask`, for a request nobody can see.
    OnAsk,
    /// The user, from another device (`src/remote/`).
    Remote,
}

impl By {
    /// The decision log's source of an answer by this one.
    fn source(self) -> Source {
        match self {
            By::Remote => Source::Remote,
            By::OnAsk => Source::OnAsk,
            By::You | By::ApproveAll => Source::User,
        }
    }
}

/// What a pick on a card comes to (see `ChatState::resolve`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// Answer with the option at this index; `only_always`: it is an
    /// `allow_always` the agent offered alone (the transcript says so).
    Send { index: usize, only_always: bool },
    /// Answer the `allow_once` at `index` and keep the user's "always" (the
    /// option at `picked`) as warden's grant for this chat.
    Grant { index: usize, picked: usize },
    /// Answer `cancelled` (a deny with no reject option on offer).
    Cancel,
    /// Nothing is sent: the card stays, with this notice (empty: none).
    Wait(String),
}

impl ChatState {
    /// What a pick on this card will really do.
    pub(crate) fn resolve(&self, approval: &Approval, pick: &Answer) -> Resolved {
        let options = &approval.request.options;
        let switch = approval.view.card == CardKind::ModeSwitch;
        match pick {
            Answer::Option(i) => match sent_for(&approval.view, *i, self.agent_mode_list()) {
                None => Resolved::Wait(String::new()),
                Some(Sent::Option {
                    index,
                    always: true,
                }) => Resolved::Grant { index, picked: *i },
                Some(Sent::Option { index, .. }) => Resolved::Send {
                    index,
                    only_always: false,
                },
                Some(Sent::OnlyAlways(index)) => Resolved::Send {
                    index,
                    only_always: true,
                },
                Some(Sent::Refused) => Resolved::Wait(REFUSED_SWITCH.to_string()),
                Some(Sent::Cancel) => Resolved::Cancel,
            },
            Answer::Allow if switch => match switch_allow_option(options, self.agent_mode_list()) {
                Some(index) => Resolved::Send {
                    index,
                    only_always: false,
                },
                None => Resolved::Wait(REFUSED_SWITCH.to_string()),
            },
            Answer::Allow => match allow_option(options).and_then(|o| index_of(options, o)) {
                Some(index) => Resolved::Send {
                    index,
                    only_always: false,
                },
                None => Resolved::Wait(no_allow_notice(approval)),
            },
            Answer::Deny | Answer::DenyWithReason(_) | Answer::NoAnswer(_) => {
                match reject_option(options).and_then(|o| index_of(options, o)) {
                    Some(index) => Resolved::Send {
                        index,
                        only_always: false,
                    },
                    None => Resolved::Cancel,
                }
            }
        }
    }

    /// Answer one request: the reply, the tool's state, a transcript line and a log record.
    pub(crate) fn answer(
        &mut self,
        approval: &Approval,
        outcome: PermissionOutcome,
        verdict: &str,
        source: Source,
        reason: &str,
    ) -> Vec<Effect> {
        let option = match &outcome {
            PermissionOutcome::Selected(id) => {
                approval.request.options.iter().find(|o| &o.id == id)
            }
            PermissionOutcome::Cancelled => None,
        };
        let allowed = option.is_some_and(|o| o.kind.is_allow());
        let tool_id = &approval.request.tool_call_id;
        let client = approval.view.card.is_client();
        if !allowed {
            let state = if option.is_some() {
                ToolState::Rejected
            } else {
                ToolState::Cancelled
            };
            self.session
                .transcript
                .set_call_state(tool_id, client, state);
        } else if self
            .session
            .transcript
            .call(tool_id, client)
            .is_some_and(|t| t.state == ToolState::AwaitingApproval)
        {
            self.session
                .transcript
                .set_call_state(tool_id, client, ToolState::Approved);
        }
        if allowed
            && !approval.view.card.is_client()
            && let Some(scope) = self.scope_of(approval, source)
        {
            self.gate.allowed_scopes.push(scope);
        }
        let decision = match (&outcome, allowed) {
            (PermissionOutcome::Cancelled, _) => Verdict::Cancelled,
            (_, true) => Verdict::Allowed,
            (_, false) => Verdict::Denied,
        };
        // "allowed for `cargo test …` commands …", not "allowed: allowed for".
        let line = if reason.starts_with(verdict) {
            format!("{reason} · {}", approval.title())
        } else {
            format!("{verdict}: {reason} · {}", approval.title())
        };
        self.session.transcript.push(EntryKind::Decision {
            allowed,
            text: line,
        });
        if allowed
            && approval.view.card.leaves_plan()
            && self.gate.mode == Mode::Plan
            && source == Source::User
        {
            self.set_mode(Mode::Default);
        }
        let record = DecisionRecord {
            time: String::new(),
            agent: self.gate.agent_policy.name.clone(),
            session: self.session_id().unwrap_or_default().to_string(),
            chat: self.session.chat_id.clone(),
            request_id: approval.id,
            tool_call_id: tool_id.clone(),
            title: approval.view.title.clone(),
            kind: approval.view.card.log_kind(approval.view.kind).to_string(),
            category: approval.category.as_str().to_string(),
            mode: self.gate.mode.as_str().to_string(),
            decision,
            option_id: option.map(|o| o.id.clone()),
            option_kind: option.map(|o| o.kind.as_str().to_string()),
            source: source.into(),
            reason: reason.to_string(),
            cwd: self.session.cwd_path.display().to_string(),
        };
        vec![
            Effect::RespondPermission {
                id: approval.id,
                outcome,
            },
            Effect::LogDecision(Box::new(record)),
        ]
    }

    /// Answer a card as resolved from the user's pick (or `--on-ask`'s).
    pub(crate) fn answer_resolved(
        &mut self,
        approval: Approval,
        resolved: Resolved,
        who: By,
    ) -> Vec<Effect> {
        let options = &approval.request.options;
        let (outcome, label, only_always) = match resolved {
            Resolved::Send { index, only_always } => match options.get(index) {
                Some(o) => (
                    PermissionOutcome::Selected(o.id.clone()),
                    o.name.clone(),
                    only_always,
                ),
                None => return Vec::new(),
            },
            Resolved::Grant { index, picked } => {
                return self.grant_for_chat(approval, index, Some(picked));
            }
            Resolved::Cancel => (PermissionOutcome::Cancelled, "cancelled".to_string(), false),
            Resolved::Wait(_) => return Vec::new(),
        };
        let allowed = matches!(&outcome, PermissionOutcome::Selected(id)
            if options.iter().any(|o| &o.id == id && o.kind.is_allow()));
        let verdict = match (allowed, who) {
            (true, By::Remote) => "allowed remotely",
            (false, By::Remote) => "denied remotely",
            (true, By::OnAsk) => "allowed",
            (false, By::OnAsk) => "denied",
            (true, _) => "allowed by you",
            (false, _) => "denied by you",
        };
        let mut reason = match who {
            By::You => one_line(&label),
            By::ApproveAll => format!("approve all ({})", one_line(&label)),
            By::OnAsk => format!("--on-ask ({})", one_line(&label)),
            By::Remote => format!("remote ({})", one_line(&label)),
        };
        if only_always {
            reason.push_str(
                " — the agent offered only 'Always allow': it may stop asking for this tool",
            );
        }
        self.answer(&approval, outcome, verdict, who.source(), &reason)
    }

    /// "Allow for this chat": keep warden's grant, answer the agent's
    /// `allow_once` at `index`. `picked`: the agent's own "always" option the
    /// user picked, which warden turned into this grant.
    pub(crate) fn grant_for_chat(
        &mut self,
        approval: Approval,
        index: usize,
        picked: Option<usize>,
    ) -> Vec<Effect> {
        let options = &approval.request.options;
        let Some(option) = options.get(index) else {
            return Vec::new();
        };
        let option_id = option.id.clone();
        let grant = approval.grant.clone();
        let mut reason = grant.describe();
        if let Some(always) = picked.and_then(|i| options.get(i)) {
            reason = format!(
                "{reason} (you picked '{}': warden keeps it, the agent was answered '{}')",
                one_line(&always.name),
                one_line(&option.name)
            );
        }
        if grant.commands != Some(GrantCommands::Unreadable) && !self.gate.grants.contains(&grant) {
            self.gate.grants.push(grant);
        }
        let mut effects = self.answer(
            &approval,
            PermissionOutcome::Selected(option_id),
            "allowed for this chat",
            Source::ChatGrant,
            &reason,
        );
        effects.extend(self.redecide_queue());
        effects
    }
}

impl ChatState {
    /// A remote answer to card `id`, through the same gate as a key. The
    /// first answer wins: a card already answered or withdrawn is left
    /// alone (the remote side then shows who decided). The server checks
    /// the card has waited long enough to be answered (its arming).
    pub(crate) fn on_remote_answer(&mut self, id: RequestId, choice: Answer) -> Vec<Effect> {
        let Some(index) = self.gate.approvals.iter().position(|a| a.id == id) else {
            return Vec::new();
        };
        self.on_pick(
            index,
            Pick {
                choice,
                by: By::Remote,
            },
        )
    }

    /// Answer the waiting card at `index` with `pick`: what it resolves to
    /// for this card, unless it must wait (a notice says why).
    pub(crate) fn on_pick(&mut self, index: usize, pick: Pick) -> Vec<Effect> {
        let Some(approval) = self.gate.approvals.get(index) else {
            return Vec::new();
        };
        let resolved = self.resolve(approval, &pick.choice);
        if let Resolved::Wait(notice) = &resolved {
            if !notice.is_empty() {
                self.view.notice = Some(match pick.by {
                    By::Remote => format!("remote answer not taken: {notice}"),
                    _ => notice.clone(),
                });
            }
            return Vec::new();
        }
        let Some(approval) = self.take_approval(index) else {
            return Vec::new();
        };
        match pick.choice {
            Answer::DenyWithReason(reason) if !reason.trim().is_empty() => {
                self.deny_with_reason(approval, reason.trim().to_string(), pick.by)
            }
            Answer::NoAnswer(secs) => {
                let outcome = match resolved {
                    Resolved::Send { index, .. } => approval
                        .request
                        .options
                        .get(index)
                        .map_or(PermissionOutcome::Cancelled, |o| {
                            PermissionOutcome::Selected(o.id.clone())
                        }),
                    _ => PermissionOutcome::Cancelled,
                };
                self.answer(
                    &approval,
                    outcome,
                    "denied",
                    pick.by.source(),
                    &format!("no answer within {secs} s"),
                )
            }
            _ => self.answer_resolved(approval, resolved, pick.by),
        }
    }

    /// Deny `approval` (taken from the queue) with the agent's reject
    /// option, cancel the turn, and send `reason` to the agent when the
    /// turn has ended: the one "deny with a reason", from a key or another
    /// device.
    pub(crate) fn deny_with_reason(
        &mut self,
        approval: Approval,
        reason: String,
        by: By,
    ) -> Vec<Effect> {
        let outcome = reject_option(&approval.request.options)
            .map_or(PermissionOutcome::Cancelled, |o| {
                PermissionOutcome::Selected(o.id.clone())
            });
        let verdict = match by {
            By::Remote => "denied remotely",
            _ => "denied by you",
        };
        let mut effects = self.answer(&approval, outcome, verdict, by.source(), &one_line(&reason));
        if by == By::You {
            // Sent as the next prompt, so Up brings it back like one.
            self.view.drafts.remember(&reason);
        }
        effects.extend(self.send_after_turn(reason));
        effects
    }
}

/// Where `option` is among `options` (the very option, not one sharing its id).
pub(crate) fn index_of(options: &[PermissionOption], option: &PermissionOption) -> Option<usize> {
    options.iter().position(|o| std::ptr::eq(o, option))
}

/// Log a stale card's cancellation under its own source, not as the user's.
pub(crate) fn relabel(mut effects: Vec<Effect>, source: Answerer) -> Vec<Effect> {
    for effect in &mut effects {
        if let Effect::LogDecision(record) = effect {
            record.source = source.clone();
        }
    }
    effects
}

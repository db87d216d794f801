//! A decided request carried out (the third step of the walk, after
//! [`super::facts`] and [`super::decide`]): [`ChatState::on_permission`]
//! turns the gate's [`Outcome`] into an answer (refused, withdrawn,
//! decided, covered) or a card of its [`super::CardKind`], whose rows come
//! from [`super::choices`]. The cards wait in a FIFO queue, reviewed by
//! keyboard or mouse ([`super::card_keys`]) and answered by
//! [`super::answer`]; a mode change, a grant or a rule re-decides the
//! queue. Every decision becomes one transcript line and one decision-log
//! record.

use crate::gate::{self, Outcome, Refusal, RequestFacts};
use crate::model::{AgentMode, PermissionOutcome, PermissionRequest, StopReason};
use crate::policy::{
    self, Category, ChatGrant, Context, Decision, Mode, RequestView, Source, reject_option,
};
use crate::record::{Answerer, DecisionRecord, Verdict};
use crate::sanitize::one_line;

use crate::state::{
    CardCursor, ChatState, Effect, Focus, Modal, Pane, Question, RequestId, ToolState,
};

/// A permission request waiting for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub id: RequestId,
    pub request: PermissionRequest,
    /// The request merged with what the transcript knows of its tool call.
    pub view: RequestView,
    pub category: Category,
    /// What "allow for this chat" would grant.
    pub grant: ChatGrant,
    /// Why the policy left it to the user.
    pub reason: String,
    /// Each path the request names (normalised) with every file it can
    /// mean, as the runtime resolved them (what an allowed edit covers).
    pub readings: Vec<(String, Vec<String>)>,
    /// A warning when the agent's tool may pass for warden's own or for
    /// another ([`crate::confusable::warning`]), made when the request came.
    pub lookalike: Option<String>,
    /// Its choices and what the card shows that the policy computes.
    pub card: CardView,
    /// When it was first on screen (the runtime's clock after it came);
    /// `None` until then. "Approve all" leaves out cards younger than
    /// [`ARM_DELAY`](crate::gate::arming::ARM_DELAY).
    pub shown_at: Option<std::time::Instant>,
}

impl Approval {
    /// The title to show (single line, made visible).
    pub fn title(&self) -> String {
        if self.view.title.is_empty() {
            one_line(&self.request.tool_call_id)
        } else {
            one_line(&self.view.title)
        }
    }
}

/// The text the agent sees before each prompt while the chat is in Plan.
pub const PLAN_INSTRUCTION: &str = "[warden: plan mode] Plan only: read files and propose changes, \
but do not edit, delete, move or run anything. The user will switch modes when it is time to act.";

impl ChatState {
    /// How a headless run answers a card by itself; `None` when someone
    /// answers it (on the terminal, or on the remote page).
    fn unattended(&self) -> Option<OnAsk> {
        self.gate.headless.filter(|on_ask| *on_ask != OnAsk::Remote)
    }

    pub(crate) fn policy_context(&self) -> Context<'_> {
        Context {
            mode: self.gate.mode,
            agent: &self.gate.agent_policy,
            rules: &self.gate.rules,
            grants: &self.gate.grants,
            home: self.gate.home.as_deref(),
            cwd: &self.session.cwd_path,
            unattended: self.unattended().is_some(),
        }
    }

    /// A permission request arrived: the gate decides it
    /// ([`gate::on_request`]) from `facts` (what the runtime found out: its
    /// view, the paths it names resolved, a refusal for safety) and what
    /// the chat knows; the state carries the outcome out: a card, an
    /// answer, a log record (refusals included).
    pub(crate) fn on_permission(
        &mut self,
        id: RequestId,
        request: PermissionRequest,
        facts: RequestFacts,
    ) -> Vec<Effect> {
        let view = &facts.view;
        let finished = (!view.card.is_client())
            .then(|| self.session.transcript.tool(&request.tool_call_id))
            .flatten()
            .map(|t| t.state)
            .filter(|s| matches!(s, ToolState::Completed | ToolState::Failed));
        let cover = if view.card.is_client() {
            self.covering_scope(view, request.fields.content.as_deref())
        } else {
            None
        };
        let outcome = gate::on_request(
            &request,
            &facts,
            &gate::Ctx {
                policy: self.policy_context(),
                no_turn: self.no_turn_running(),
                finished: finished.is_some(),
                cover: cover.as_ref().map(|c| (c.source, c.title.clone())),
            },
        );
        let RequestFacts { view, readings, .. } = facts;
        let approval = |request, reason, readings| Approval {
            id,
            grant: ChatGrant::for_request(&view),
            category: view.category(),
            lookalike: crate::confusable::warning(&view),
            view: view.clone(),
            request,
            reason,
            readings,
            card: CardView::default(),
            shown_at: None,
        };
        match outcome {
            Outcome::Refuse(refusal) => {
                self.refuse_for_safety(approval(request, String::new(), Vec::new()), refusal)
            }
            Outcome::Withdraw => {
                let approval = approval(request, String::new(), Vec::new());
                let answered = self.withdraw(&approval);
                // The entry keeps showing how the call really ended.
                if let Some(state) = finished {
                    self.session
                        .transcript
                        .set_tool_state(&approval.request.tool_call_id, state);
                }
                answered
            }
            outcome => {
                let request = self.show_request(request, view.card.is_client());
                let approval = approval(request, String::new(), readings);
                match outcome {
                    Outcome::Ask(reason) => self.ask(approval, reason),
                    Outcome::Covered(decision) => {
                        if let Some(cover) = cover {
                            self.use_up_scope(cover);
                        }
                        self.apply_automatic(&approval, decision)
                    }
                    Outcome::Decided(decision) => self.apply_automatic(&approval, decision),
                    Outcome::Refuse(_) | Outcome::Withdraw => Vec::new(),
                }
            }
        }
    }

    /// Show what a request says about its tool call (it may be the first
    /// word of it); the request, with the diff known now filled in: the
    /// card shows what the policy judged, not one a later
    /// `tool_call_update` puts in the transcript.
    fn show_request(&mut self, mut request: PermissionRequest, client: bool) -> PermissionRequest {
        let mut fields = request.fields.clone();
        fields.status = None;
        if client {
            self.session
                .transcript
                .update_own_tool(&request.tool_call_id, &fields);
            // warden's own request for a client call is all warden's: a
            // tool call the agent made up under its id adds nothing to it.
            return request;
        }
        self.session
            .transcript
            .update_tool(&request.tool_call_id, &fields);
        let known = self
            .session
            .transcript
            .tool(&request.tool_call_id)
            .map(|t| t.call.content.clone());
        if request.fields.content.as_ref().is_none_or(|c| c.is_empty())
            && let Some(content) = known.filter(|c| !c.is_empty())
        {
            request.fields.content = Some(content);
        }
        request
    }

    /// Why no request of the agent's may be decided by this chat's mode
    /// now: no turn is running, or the one running was cancelled.
    fn no_turn_running(&self) -> Option<Refusal> {
        let why = match &self.session.turn {
            None if self.session.agent_stuck
                && self.session.last_stop == Some(StopReason::Cancelled) =>
            {
                "this chat has no turn running: warden ended the last one when the agent did not stop it, and the request came after"
            }
            None if self.session.last_stop == Some(StopReason::Cancelled) => {
                "this chat has no turn running: the last one was cancelled, and the request came after it ended"
            }
            None => "this chat has no turn running: the request came after the turn ended",
            Some(turn) if turn.cancelling => "this chat's turn was cancelled",
            Some(_) if self.session.queued_prompt.is_some() => {
                "you denied this turn with a reason, which goes to the agent when the turn ends"
            }
            Some(_) => return None,
        };
        Some(Refusal::Safety(why.to_string()))
    }

    /// Cancel a request whose tool call already finished: logged as stale.
    fn withdraw(&mut self, approval: &Approval) -> Vec<Effect> {
        let answered = self.answer(
            approval,
            PermissionOutcome::Cancelled,
            "withdrawn",
            Source::User,
            "the tool call already finished",
        );
        relabel(answered, Answerer::Stale)
    }

    /// Refuse a request whatever the mode and the rules: the agent gets its
    /// reject option (`cancelled` when none is offered, or when the turn
    /// was cancelled), the chat an error line, the log a record.
    fn refuse_for_safety(&mut self, approval: Approval, refusal: Refusal) -> Vec<Effect> {
        // warden's own entry of a client call shows what was refused; an
        // agent's tool call (of another turn, of another chat's doing) is
        // left as it is.
        let before = self
            .session
            .transcript
            .tool(&approval.request.tool_call_id)
            .map(|t| t.state);
        if approval.request.client {
            let mut fields = approval.request.fields.clone();
            fields.status = None;
            self.session
                .transcript
                .update_own_tool(&approval.request.tool_call_id, &fields);
        }
        let cancelled = self.session.turn.as_ref().is_some_and(|t| t.cancelling);
        let outcome = match reject_option(&approval.request.options) {
            Some(option) if !cancelled => PermissionOutcome::Selected(option.id.clone()),
            _ => PermissionOutcome::Cancelled,
        };
        let why = refusal.why().to_string();
        self.error(
            format!(
                "warden refused the agent's {} {}: {}",
                if approval.view.card.is_client() {
                    "call"
                } else {
                    "request"
                },
                approval.title(),
                one_line(&why)
            ),
            Vec::new(),
        );
        let answered = self.answer(&approval, outcome, "refused", Source::User, &why);
        if let Some(state) = before.filter(|_| !approval.view.card.is_client()) {
            self.session
                .transcript
                .set_tool_state(&approval.request.tool_call_id, state);
        }
        relabel(answered, refusal.answerer())
    }

    /// A client call the gate allowed was refused by its IO (one of
    /// warden's own files by inode, a path that changed): the chat says so
    /// and the log gets a second record for the same request.
    pub(crate) fn on_client_refused(&mut self, id: RequestId, refusal: &Refusal) -> Vec<Effect> {
        let tool_call_id = format!("warden-{id}");
        let (title, kind) = self
            .session
            .transcript
            .tool(&tool_call_id)
            .map(|t| (t.call.title.clone(), t.call.kind))
            .unwrap_or_default();
        let why = refusal.why().to_string();
        self.error(
            format!(
                "warden refused the agent's call {}: {}",
                one_line(&title),
                one_line(&why)
            ),
            Vec::new(),
        );
        let record = DecisionRecord {
            time: String::new(),
            agent: self.gate.agent_policy.name.clone(),
            session: self.session_id().unwrap_or_default().to_string(),
            chat: self.session.chat_id.clone(),
            request_id: id,
            tool_call_id,
            title,
            kind: kind.as_str().to_string(),
            category: policy::category(kind).as_str().to_string(),
            mode: self.gate.mode.as_str().to_string(),
            decision: Verdict::Denied,
            option_id: None,
            option_kind: None,
            source: refusal.answerer(),
            reason: why,
            cwd: self.session.cwd_path.display().to_string(),
        };
        vec![Effect::LogDecision(Box::new(record))]
    }

    /// A settings block now binds this chat's agent (`b` or a kept rule
    /// wrote it, for its command line): its bypass and the allow rules
    /// naming the block are the agent's from now on; the name it had stays
    /// one that deny and ask rules find it by.
    pub(crate) fn bind_to_block(&mut self, block: String) {
        let policy = &mut self.gate.agent_policy;
        if policy.name != block {
            let old = std::mem::replace(&mut policy.name, block.clone());
            if !policy.aliases.contains(&old) {
                policy.aliases.push(old);
            }
            policy.aliases.retain(|a| *a != block);
        }
        policy.unbound = false;
        self.session.settings_agent = Some(block);
    }

    /// The agent modes, to tell which `switch_mode` options keep it asking.
    pub(crate) fn agent_mode_list(&self) -> &[AgentMode] {
        self.session
            .agent_modes
            .as_ref()
            .map_or(&[], |m| m.available.as_slice())
    }

    fn ask(&mut self, mut approval: Approval, reason: String) -> Vec<Effect> {
        if let Some(on_ask) = self.unattended() {
            let pick = match on_ask.pick(approval.view.card) {
                Some(pick) => pick,
                None => {
                    self.session.failed = Some(format!(
                        "the agent asked permission for `{}` and --on-ask is fail",
                        approval.title()
                    ));
                    let mut effects = self.answer(
                        &approval,
                        PermissionOutcome::Cancelled,
                        "cancelled",
                        Source::User,
                        "--on-ask fail",
                    );
                    effects.extend(self.cancel());
                    return effects;
                }
            };
            let resolved = match self.resolve(&approval, &pick) {
                // Nothing to allow that keeps the agent asking: refuse.
                Resolved::Wait(_) => self.resolve(&approval, &Answer::Deny),
                other => other,
            };
            return self.answer_resolved(approval, resolved, By::OnAsk);
        }
        approval.reason = reason;
        approval.card = self.card_view(&approval);
        self.session.transcript.set_call_state(
            &approval.request.tool_call_id,
            approval.view.card.is_client(),
            ToolState::AwaitingApproval,
        );
        let title = approval.title();
        self.gate.approvals.push(approval);
        // The first card is the selected one, highlighted on its default
        // (the plain allow once) whoever has the keys now: Ctrl-P later
        // must not find a highlight left from an earlier card.
        if self.gate.approvals.len() == 1 {
            self.view.cursor.selected = 0;
            self.view.cursor.scroll = 0;
            self.view.cursor.choice = self.default_choice();
        }
        // Only the bare Composer pane gives way: a modal open over it keeps
        // the keys, and closing it goes back to the composer. While the
        // user types (text in the composer, a key with its time lately),
        // the card waits and every clock decides again (`arming::stamp`):
        // a card never takes the keys of a message being typed.
        if self.view.focus.is(Pane::Composer) {
            if self.typing() || self.view.typed_at.is_some() {
                self.view.cursor.wants_keys = true;
            } else {
                self.take_keys();
            }
        }
        vec![Effect::Notify(format!(
            "{} asks: {title}",
            self.session.agent_name
        ))]
    }

    /// The one place the pane changes for a reason of its own, after the
    /// queue changed: with no card left the Cards pane has nothing to
    /// review and the keys go to the composer, closing the fields and
    /// questions of the cards with it.
    ///
    /// A form whose card was withdrawn closes too, and the keys go to the
    /// composer even with other cards waiting: the letters still typed for
    /// the form then land where they are seen, never on a card. A denial
    /// reason stays open over other cards (its letters stay in the field;
    /// Enter then denies nothing, `on_reason_key`).
    pub(crate) fn settle_pane(&mut self) {
        let empty = self.gate.approvals.is_empty();
        match &self.view.focus.modal {
            Some(Modal::Form(form))
                if !self.gate.approvals.iter().any(|a| a.id == form.request) =>
            {
                self.view.focus = Focus::COMPOSER;
            }
            Some(Modal::Reason { .. } | Modal::Confirm(_) | Modal::ConfirmAll(_)) if empty => {
                self.view.focus.modal = None;
            }
            _ => {}
        }
        if empty {
            self.view.focus.pane = Pane::Composer;
        }
    }

    /// Whether the user is typing (a message, or a search of the prompt
    /// history): a new card then waits for Ctrl-P instead of taking the
    /// keys, so that a letter typed never answers it.
    pub(crate) fn typing(&self) -> bool {
        !self.view.composer.is_empty() || self.view.drafts.search.is_some()
    }

    pub(crate) fn apply_automatic(
        &mut self,
        approval: &Approval,
        decision: Decision,
    ) -> Vec<Effect> {
        match decision {
            Decision::Allow {
                option_id,
                source,
                reason,
            } => self.answer(
                approval,
                PermissionOutcome::Selected(option_id),
                "allowed",
                source,
                &reason,
            ),
            Decision::Deny {
                option_id,
                source,
                reason,
            } => {
                let outcome =
                    option_id.map_or(PermissionOutcome::Cancelled, PermissionOutcome::Selected);
                self.answer(approval, outcome, "blocked", source, &reason)
            }
            Decision::Ask { .. } => Vec::new(),
        }
    }

    pub(crate) fn take_approval(&mut self, index: usize) -> Option<Approval> {
        if index >= self.gate.approvals.len() {
            return None;
        }
        let shown = self
            .gate
            .approvals
            .get(self.view.cursor.selected)
            .map(|a| a.id);
        let kept = self.view.cursor.clone();
        let approval = self.gate.approvals.remove(index);
        // The cursor stays on its card, and its highlighted choice, when an
        // earlier one leaves, so that a key meant for it never lands on
        // the card after it or on another choice.
        if index < self.view.cursor.selected {
            self.view.cursor.selected -= 1;
        }
        self.after_queue_change();
        if shown.is_some()
            && self
                .gate
                .approvals
                .get(self.view.cursor.selected)
                .map(|a| a.id)
                == shown
        {
            self.view.cursor = CardCursor {
                selected: self.view.cursor.selected,
                ..kept
            };
        }
        Some(approval)
    }

    fn after_queue_change(&mut self) {
        self.settle_pane();
        if self.gate.approvals.is_empty() {
            self.view.cursor = CardCursor::default();
        } else {
            self.view.cursor.selected =
                self.view.cursor.selected.min(self.gate.approvals.len() - 1);
            self.view.cursor.choice = self.default_choice();
            self.view.cursor.scroll = 0;
        }
    }

    /// Run the policy again over the queue (after a grant, a bypass or a mode change).
    pub(crate) fn redecide_queue(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut index = 0;
        while index < self.gate.approvals.len() {
            let decision =
                gate::decide::again(&self.gate.approvals[index].view, &self.policy_context());
            if matches!(decision, Decision::Ask { .. }) {
                index += 1;
                continue;
            }
            if let Some(approval) = self.take_approval(index) {
                effects.extend(self.apply_automatic(&approval, decision));
            }
        }
        effects
    }

    /// Answer every card `cancelled` (turn cancelled or ended, agent gone).
    pub(crate) fn cancel_all_approvals(&mut self, why: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        for approval in std::mem::take(&mut self.gate.approvals) {
            let answered = self.answer(
                &approval,
                PermissionOutcome::Cancelled,
                "cancelled",
                Source::User,
                why,
            );
            effects.extend(relabel(answered, Answerer::Stale));
        }
        self.after_queue_change();
        effects
    }

    /// Answer every waiting card with its reject option (`cancelled` when
    /// it offers none), for `why`: the user denied the turn.
    pub(crate) fn reject_all_approvals(&mut self, why: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        for approval in std::mem::take(&mut self.gate.approvals) {
            let outcome = reject_option(&approval.request.options)
                .map_or(PermissionOutcome::Cancelled, |o| {
                    PermissionOutcome::Selected(o.id.clone())
                });
            effects.extend(self.answer(&approval, outcome, "denied", Source::User, why));
        }
        self.after_queue_change();
        effects
    }

    /// A tool call finished: a card still asking about it is stale.
    pub(crate) fn drop_stale_for_tool(&mut self, tool_call_id: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        while let Some(index) = self
            .gate
            .approvals
            .iter()
            .position(|a| !a.view.card.is_client() && a.request.tool_call_id == tool_call_id)
        {
            if let Some(approval) = self.take_approval(index) {
                effects.extend(self.withdraw(&approval));
            }
        }
        effects
    }

    /// Change the chat's mode. Waiting cards the new mode blocks are
    /// blocked at once; those it would allow are not: warden asks first
    /// ("approve the N waiting cards?"), so no mode change, not even one
    /// passed through while cycling, approves a card unseen.
    pub(crate) fn set_mode(&mut self, mode: Mode) -> Vec<Effect> {
        if self.gate.mode == mode {
            return Vec::new();
        }
        let was = self.gate.mode;
        self.gate.mode = mode;
        self.mode_changed();
        self.info(format!("mode: {}", mode.label()));
        let mut effects = Vec::new();
        if let Some(plan_mode) = self.plan_mode() {
            if mode == Mode::Plan {
                effects.push(self.switch_agent_mode(&plan_mode));
            } else if was == Mode::Plan
                && let Some(asking) = self.gate.asking_mode.clone()
            {
                effects.push(self.switch_agent_mode(&asking));
            }
        }
        if mode == Mode::Plan && self.gate.no_asking_mode {
            self.view.notice = Some(format!(
                "{} has no mode known to ask: its turns are refused in Plan",
                one_line(&self.session.agent_name)
            ));
        }
        effects.extend(self.redecide_asking());
        effects
    }

    /// Re-decide the queue after a mode change: blocks apply at once,
    /// allows wait for the user's yes.
    pub(crate) fn redecide_asking(&mut self) -> Vec<Effect> {
        self.redecide_with(Question::AllowWaiting)
    }

    /// Re-decide the queue after a rule kept or a bypass set: blocks apply
    /// at once, the other cards it would allow wait for the user's yes.
    pub(crate) fn redecide_covered(&mut self) -> Vec<Effect> {
        self.redecide_with(Question::AllowCovered)
    }

    /// Re-decide the queue after a change the user did not make card by
    /// card; `question` asks about the cards it would allow.
    fn redecide_with(&mut self, question: fn(Vec<RequestId>) -> Question) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut would_allow = Vec::new();
        let mut index = 0;
        while index < self.gate.approvals.len() {
            let decision =
                gate::decide::again(&self.gate.approvals[index].view, &self.policy_context());
            match decision {
                Decision::Ask { .. } => index += 1,
                // A card that came just before the key press stays a card:
                // the question names only cards the user could have seen.
                Decision::Allow { .. } => {
                    if self.seen_at_press(&self.gate.approvals[index]) {
                        would_allow.push(self.gate.approvals[index].id);
                    }
                    index += 1;
                }
                Decision::Deny { .. } => {
                    if let Some(approval) = self.take_approval(index) {
                        effects.extend(self.apply_automatic(&approval, decision));
                    }
                }
            }
        }
        if !would_allow.is_empty() && self.unattended().is_none() {
            self.view.focus.open(Modal::Confirm(question(would_allow)));
        } else if matches!(
            self.view.focus.modal,
            Some(Modal::Confirm(
                Question::AllowWaiting(_) | Question::AllowCovered(_)
            ))
        ) {
            self.close_question();
        }
        effects
    }

    pub(crate) fn agent_mode_effect(&self, mode_id: &str) -> Effect {
        Effect::SetAgentMode {
            mode_id: mode_id.to_string(),
            config_option: self
                .session
                .agent_modes
                .as_ref()
                .and_then(|m| m.config_option_id.clone()),
        }
    }
}

/// Why an exit from the agent's plan mode cannot be allowed from the card.
pub(crate) const REFUSED_SWITCH: &str = "none of the agent's options leads to a mode that keeps asking: n to reject, or change modes with Shift+Tab";

/// Why `y`, `a` or `b` cannot allow this card.
pub(crate) fn no_allow_notice(approval: &Approval) -> String {
    if approval.request.options.iter().any(policy::lasting) {
        "the agent offers only 'Always allow' here, which may stop it asking: press its number to accept that, or n to deny".to_string()
    } else {
        "the agent offered no allow option for this request".to_string()
    }
}

use crate::gate::answer::{Answer, By, Resolved, relabel};
use crate::gate::choices::CardView;
use crate::gate::on_ask::OnAsk;

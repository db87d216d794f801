//! The permission gate inside the state: every request goes through the
//! policy first; what it leaves to the user waits in a FIFO queue of cards,
//! reviewed by keyboard or mouse. Every decision becomes one transcript line
//! and one decision-log record.

use crate::gate::CardKind;
use crate::model::{AgentMode, PermissionOption, PermissionOutcome, PermissionRequest, StopReason};
use crate::policy::{
    self, Category, ChatGrant, Context, Decision, GrantCommands, Mode, RequestView, Sent, Source,
    allow_option, reject_option, sent_for, switch_allow_option,
};
use crate::record::{Answerer, DecisionRecord, Verdict};
use crate::sanitize::one_line;

use super::{ChatState, Composer, Effect, EntryKind, RequestId, ToolState};

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
    /// [`ARM_DELAY`].
    pub shown_at: Option<std::time::Instant>,
}

/// What the runtime found out about a request before the gate sees it:
/// facts, never a decision. The gate decides with them and logs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestFacts {
    /// The request as the policy sees it, built once, with the paths it
    /// names resolved among its locations (`None`: the state builds it).
    pub view: Option<RequestView>,
    /// Each path the request names (normalised) with every file it can
    /// mean (the kernel's reading, a tool's that applies `..` first).
    pub readings: Vec<(String, Vec<String>)>,
    /// Why warden refuses it whatever the mode, if it must.
    pub refusal: Option<Refusal>,
    /// The agent sent it for this chat's session (a permission request, a
    /// file or terminal call), which must have a turn running: the chat's
    /// mode decides only what the agent does in the chat's own turn.
    pub in_session: bool,
}

/// Why warden refuses a request whatever the mode and the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It touches one of warden's own files (logged as `protected`).
    Protected(String),
    /// Another reason of safety (logged as `safety`): no turn running in
    /// the session, a session no chat has open, a path outside the roots
    /// or one that changed under warden.
    Safety(String),
}

impl Refusal {
    fn why(&self) -> &str {
        match self {
            Refusal::Protected(why) | Refusal::Safety(why) => why,
        }
    }

    fn answerer(&self) -> Answerer {
        match self {
            Refusal::Protected(_) => Answerer::Protected,
            Refusal::Safety(_) => Answerer::Safety,
        }
    }
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

/// Where keystrokes go: the pane that has the keys, and the modal open
/// over it, if any. A modal takes every key while it is open; closing it
/// (Esc, an answer, done) gives the keys back to the pane beneath, exactly
/// where the user was. The pane changes only for a reason of its own
/// (`ChatState::settle_pane`: no card left to review; a card arriving
/// while the user is not typing), never as a guess on a modal's close.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Focus {
    /// The pane beneath: where keys go when no modal is open.
    pub pane: Pane,
    /// The modal open over the pane, which has the keys meanwhile.
    pub modal: Option<Modal>,
}

impl Focus {
    /// Typing a message, nothing open over it.
    pub const COMPOSER: Focus = Focus {
        pane: Pane::Composer,
        modal: None,
    };
    /// Reviewing the cards, nothing open over them.
    pub const CARDS: Focus = Focus {
        pane: Pane::Cards,
        modal: None,
    };

    /// Whether this pane has the keys (it is the pane and no modal is open).
    pub(crate) fn is(&self, pane: Pane) -> bool {
        self.modal.is_none() && self.pane == pane
    }

    /// Open a modal over the pane (replacing one already open); the pane
    /// beneath stays where it is.
    pub(crate) fn open(&mut self, modal: Modal) {
        self.modal = Some(modal);
    }

    /// Where the keys are, as far as their meaning goes: the open modal's
    /// context, else the pane's.
    pub(crate) fn context(&self) -> crate::keys::Context {
        use crate::keys::Context;
        match &self.modal {
            None => match self.pane {
                Pane::Composer => Context::Composer,
                Pane::Cards => Context::Cards,
            },
            Some(Modal::Reason { .. }) => Context::Reason,
            Some(Modal::KeepRule(_)) => Context::KeepRule,
            Some(Modal::Confirm(_)) => Context::Question,
            Some(Modal::ConfirmAll(_)) => Context::ConfirmAll,
            Some(Modal::ModeMenu(_)) => Context::ModeMenu,
            Some(Modal::Rules { .. }) => Context::Rules,
            Some(Modal::Form(_)) => Context::Form,
        }
    }

    /// Whether the keys are on the cards: the Cards pane, or a field or
    /// question under a card.
    pub(crate) fn on_cards(&self) -> bool {
        match &self.modal {
            None => self.pane == Pane::Cards,
            Some(modal) => modal.under_card(),
        }
    }
}

/// The two panes of a chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    /// Typing a message.
    #[default]
    Composer,
    /// Reviewing the approval cards.
    Cards,
}

/// What can open over a pane and take its keys until it closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Modal {
    /// Typing the reason for denying a card; holds the card it denies, so
    /// that a queue that moved meanwhile never denies another one.
    Reason { card: RequestId, field: Composer },
    /// Editing the pattern of a rule kept from the selected card.
    KeepRule(Composer),
    /// A question before trust widens (a mode change or a bypass).
    Confirm(Question),
    /// "Approve all N?" asked; holds the ids pending at the key press.
    ConfirmAll(Vec<RequestId>),
    /// The mode dropdown is open; index of the highlighted item.
    ModeMenu(usize),
    /// Filling in the selected form elicitation card (`state/form.rs`).
    Form(super::form::FormEditor),
    /// The rules screen (bypasses, rules, grants): highlighted line, and
    /// whether a revoke awaits "y".
    Rules { selected: usize, confirm: bool },
}

impl Modal {
    /// Whether the modal is shown under a card (a field or a question of
    /// the cards').
    pub(crate) fn under_card(&self) -> bool {
        matches!(
            self,
            Modal::Reason { .. } | Modal::KeepRule(_) | Modal::Confirm(_) | Modal::ConfirmAll(_)
        )
    }
}

/// What warden asks before it widens trust; y says yes, anything else no.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// A mode change would allow these waiting cards: approve them? No
    /// keeps them as cards; Shift+Tab goes on cycling.
    AllowWaiting(Vec<RequestId>),
    /// A rule just kept, or a bypass just set, would allow these other
    /// waiting cards: approve them? No keeps them as cards.
    AllowCovered(Vec<RequestId>),
    /// `b` on this card: bypass its agent from now on?
    Bypass(RequestId),
}

impl Question {
    /// The question as shown under the card.
    pub(crate) fn text(&self, agent: &str) -> String {
        match self {
            Question::AllowWaiting(ids) => {
                let n = ids.len();
                let (cards, them) = if n == 1 {
                    ("waiting card would now be allowed", "it")
                } else {
                    ("waiting cards would now be allowed", "them")
                };
                format!(
                    "The {n} {cards}. Approve {them}? n keeps {them} as cards · Shift+Tab next mode"
                )
            }
            Question::AllowCovered(ids) => {
                let n = ids.len();
                let (cards, them) = if n == 1 {
                    ("other waiting card", "it")
                } else {
                    ("other waiting cards", "them")
                };
                format!(
                    "What you just allowed covers the {n} {cards} too. Approve {them}? n keeps {them} as cards"
                )
            }
            Question::Bypass(_) => format!(
                "Bypass {agent} from now on? Every call of {agent} that no deny/ask rule stops runs without asking, in every chat, saved to the settings. y / n"
            ),
        }
    }
}

/// Where the user is among the cards: the selected card, its highlighted
/// choice, how it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CardCursor {
    /// Index of the selected card in the queue.
    pub selected: usize,
    /// Index of the highlighted choice on it.
    pub choice: usize,
    /// Show long raw input in full.
    pub expanded: bool,
    /// Rows scrolled inside the selected card.
    pub scroll: u16,
    /// The selected card as the user could last have seen it: which card,
    /// and since when (`state/approval/arming.rs`). A card that is not
    /// this one, or is this one for less than [`ARM_DELAY`], takes no
    /// answer.
    pub seen: Option<Seen>,
    /// A card came while the user was typing: it takes the keys at the
    /// first clock (`Msg::Tick`, or a key's instant) at which the composer
    /// is empty and no key came for [`TYPING_WINDOW`]; Ctrl-P, the
    /// user's own choice of pane, ends the wait.
    pub wants_keys: bool,
}

/// How a headless run (`warden exec`) answers what would have been a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAsk {
    /// Reject it (the default: nothing risky runs unattended).
    Deny,
    /// Allow it once.
    Allow,
    /// Cancel the turn and fail the run.
    Fail,
    /// Show the card on the remote page (`src/remote/`) and wait for an
    /// answer there; the runtime denies it when none comes in time.
    Remote,
}

/// The text the agent sees before each prompt while the chat is in Plan.
pub const PLAN_INSTRUCTION: &str = "[warden: plan mode] Plan only: read files and propose changes, \
but do not edit, delete, move or run anything. The user will switch modes when it is time to act.";

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

impl ChatState {
    /// How a headless run answers a card by itself; `None` when someone
    /// answers it (on the terminal, or on the remote page).
    fn unattended(&self) -> Option<OnAsk> {
        self.gate.headless.filter(|on_ask| *on_ask != OnAsk::Remote)
    }

    fn policy_context(&self) -> Context<'_> {
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

    /// A permission request arrived: decide it, or queue a card. `facts`
    /// is what the runtime found out about it (its view, with the paths it
    /// names resolved; a refusal for safety); every request is decided here
    /// and logged, refusals included.
    pub(super) fn on_permission(
        &mut self,
        id: RequestId,
        request: PermissionRequest,
        facts: RequestFacts,
    ) -> Vec<Effect> {
        if let Some(refusal) = facts.refusal {
            return self.refuse_for_safety(id, request, facts.view, refusal);
        }
        let view = match facts.view {
            Some(view) => view,
            None => {
                let known = (!request.client)
                    .then(|| self.session.transcript.tool(&request.tool_call_id))
                    .flatten()
                    .map(|t| t.call.clone());
                RequestView::from_request(&request, known.as_ref())
            }
        };
        // A file, terminal or permission call for a session with no turn
        // running (another chat's agent acting through this idle chat's
        // session, a turn cancelled or over) is not this chat's mode's to
        // decide: refused, and said. An elicitation asks the user anyway.
        if facts.in_session
            && !view.card.always_asks()
            && let Some(why) = self.no_turn_running()
        {
            return self.refuse_for_safety(id, request, Some(view), why);
        }
        // A request about a tool call that already ran asks for nothing that
        // is still to happen, and its finished call's fields would fill the
        // request's gaps: answered cancelled, whatever the mode.
        let finished = (!view.card.is_client())
            .then(|| self.session.transcript.tool(&request.tool_call_id))
            .flatten()
            .map(|t| t.state)
            .filter(|s| matches!(s, ToolState::Completed | ToolState::Failed));
        if let Some(state) = finished {
            let approval = Approval {
                id,
                grant: ChatGrant::for_request(&view),
                category: view.category(),
                lookalike: crate::confusable::warning(&view),
                view,
                request,
                reason: String::new(),
                readings: Vec::new(),
                card: CardView::default(),
                shown_at: None,
            };
            let answered = self.answer(
                &approval,
                PermissionOutcome::Cancelled,
                "withdrawn",
                Source::User,
                "the tool call already finished",
            );
            // The entry keeps showing how the call really ended.
            self.session
                .transcript
                .set_tool_state(&approval.request.tool_call_id, state);
            return relabel(answered, Answerer::Stale);
        }
        // Show what the request says about its tool call (it may be the first word of it).
        let mut fields = request.fields.clone();
        fields.status = None;
        if view.card.is_client() {
            self.session
                .transcript
                .update_own_tool(&request.tool_call_id, &fields);
        } else {
            self.session
                .transcript
                .update_tool(&request.tool_call_id, &fields);
        }
        // warden's own request for a client call is all warden's: a tool
        // call the agent made up under its id adds nothing to it.
        let known = (!view.card.is_client())
            .then(|| self.session.transcript.tool(&request.tool_call_id))
            .flatten()
            .map(|t| t.call.content.clone());
        // The card shows what the policy judged: the diff known now, not
        // one a later tool_call_update puts in the transcript.
        let mut request = request;
        if request.fields.content.as_ref().is_none_or(|c| c.is_empty())
            && let Some(content) = known.filter(|c| !c.is_empty())
        {
            request.fields.content = Some(content);
        }
        let category = view.category();
        let grant = ChatGrant::for_request(&view);
        let approval = Approval {
            id,
            request,
            lookalike: crate::confusable::warning(&view),
            view,
            category,
            grant,
            reason: String::new(),
            readings: facts.readings,
            card: CardView::default(),
            shown_at: None,
        };
        let mut decision = policy::decide(&approval.view, &self.policy_context());
        // A file write or terminal the agent already got permission for: no
        // second card. Only what the mode would ask about: the deny and ask
        // rules are checked on the call itself, and Plan never covers.
        if approval.view.card.is_client()
            && matches!(decision, Decision::Ask { .. })
            && self.gate.mode != Mode::Plan
            && policy::rule_gate(&approval.view, &self.policy_context()).is_none()
            && let Some(option) = allow_option(&approval.request.options)
            && let option_id = option.id.clone()
            && let Some(scope) = self.take_covering_scope(&approval)
        {
            decision = Decision::Allow {
                option_id,
                source: scope.source,
                reason: format!("covered by the allowed request `{}`", scope.title),
            };
        }
        match decision {
            Decision::Ask { reason } => self.ask(approval, reason),
            decided => self.apply_automatic(&approval, decided),
        }
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

    /// Refuse a request whatever the mode and the rules: the agent gets its
    /// reject option (`cancelled` when none is offered, or when the turn
    /// was cancelled), the chat an error line, the log a record.
    fn refuse_for_safety(
        &mut self,
        id: RequestId,
        request: PermissionRequest,
        view: Option<RequestView>,
        refusal: Refusal,
    ) -> Vec<Effect> {
        // warden's own entry of a client call shows what was refused; an
        // agent's tool call (of another turn, of another chat's doing) is
        // left as it is.
        let before = self
            .session
            .transcript
            .tool(&request.tool_call_id)
            .map(|t| t.state);
        if request.client {
            let mut fields = request.fields.clone();
            fields.status = None;
            self.session
                .transcript
                .update_tool(&request.tool_call_id, &fields);
        }
        let view = view.unwrap_or_else(|| RequestView::from_request(&request, None));
        let approval = Approval {
            id,
            grant: ChatGrant::for_request(&view),
            category: view.category(),
            view,
            request,
            reason: String::new(),
            readings: Vec::new(),
            lookalike: None,
            card: CardView::default(),
            shown_at: None,
        };
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
    pub(super) fn on_client_refused(&mut self, id: RequestId, refusal: &Refusal) -> Vec<Effect> {
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
    pub(super) fn bind_to_block(&mut self, block: String) {
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
    fn agent_mode_list(&self) -> &[AgentMode] {
        self.session
            .agent_modes
            .as_ref()
            .map_or(&[], |m| m.available.as_slice())
    }

    /// What a pick on this card will really do.
    fn resolve(&self, approval: &Approval, pick: &Answer) -> Resolved {
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

    fn ask(&mut self, mut approval: Approval, reason: String) -> Vec<Effect> {
        if let Some(on_ask) = self.unattended() {
            let pick = match on_ask {
                // Nobody is there to open a sign-in page or fill a form:
                // an elicitation is declined, never accepted unseen.
                OnAsk::Allow if !approval.view.card.on_ask_may_allow() => Answer::Deny,
                OnAsk::Allow => Answer::Allow,
                OnAsk::Deny | OnAsk::Remote => Answer::Deny,
                OnAsk::Fail => {
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
    pub(in crate::state) fn settle_pane(&mut self) {
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
    pub(in crate::state) fn typing(&self) -> bool {
        !self.view.composer.is_empty() || self.view.drafts.search.is_some()
    }

    fn apply_automatic(&mut self, approval: &Approval, decision: Decision) -> Vec<Effect> {
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

    /// Answer one request: the reply, the tool's state, a transcript line and a log record.
    fn answer(
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
            kind: approval.view.kind.as_str().to_string(),
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
    fn answer_resolved(&mut self, approval: Approval, resolved: Resolved, who: By) -> Vec<Effect> {
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
    fn grant_for_chat(
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

    fn take_approval(&mut self, index: usize) -> Option<Approval> {
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
    pub(super) fn redecide_queue(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut index = 0;
        while index < self.gate.approvals.len() {
            let decision = policy::decide(&self.gate.approvals[index].view, &self.policy_context());
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
    pub(super) fn cancel_all_approvals(&mut self, why: &str) -> Vec<Effect> {
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
    pub(super) fn reject_all_approvals(&mut self, why: &str) -> Vec<Effect> {
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
    pub(super) fn drop_stale_for_tool(&mut self, tool_call_id: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        while let Some(index) = self
            .gate
            .approvals
            .iter()
            .position(|a| !a.view.card.is_client() && a.request.tool_call_id == tool_call_id)
        {
            if let Some(approval) = self.take_approval(index) {
                let answered = self.answer(
                    &approval,
                    PermissionOutcome::Cancelled,
                    "withdrawn",
                    Source::User,
                    "the tool call already finished",
                );
                effects.extend(relabel(answered, Answerer::Stale));
            }
        }
        effects
    }

    /// Change the chat's mode. Waiting cards the new mode blocks are
    /// blocked at once; those it would allow are not: warden asks first
    /// ("approve the N waiting cards?"), so no mode change, not even one
    /// passed through while cycling, approves a card unseen.
    pub(super) fn set_mode(&mut self, mode: Mode) -> Vec<Effect> {
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
    pub(super) fn redecide_asking(&mut self) -> Vec<Effect> {
        self.redecide_with(Question::AllowWaiting)
    }

    /// Re-decide the queue after a rule kept or a bypass set: blocks apply
    /// at once, the other cards it would allow wait for the user's yes.
    pub(super) fn redecide_covered(&mut self) -> Vec<Effect> {
        self.redecide_with(Question::AllowCovered)
    }

    /// Re-decide the queue after a change the user did not make card by
    /// card; `question` asks about the cards it would allow.
    fn redecide_with(&mut self, question: fn(Vec<RequestId>) -> Question) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut would_allow = Vec::new();
        let mut index = 0;
        while index < self.gate.approvals.len() {
            let decision = policy::decide(&self.gate.approvals[index].view, &self.policy_context());
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

    pub(super) fn agent_mode_effect(&self, mode_id: &str) -> Effect {
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

/// What a pick on a card comes to (see `ChatState::resolve`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolved {
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

/// Why an exit from the agent's plan mode cannot be allowed from the card.
const REFUSED_SWITCH: &str = "none of the agent's options leads to a mode that keeps asking: n to reject, or change modes with Shift+Tab";

/// Why `y`, `a` or `b` cannot allow this card.
fn no_allow_notice(approval: &Approval) -> String {
    if approval.request.options.iter().any(policy::lasting) {
        "the agent offers only 'Always allow' here, which may stop it asking: press its number to accept that, or n to deny".to_string()
    } else {
        "the agent offered no allow option for this request".to_string()
    }
}

/// Where `option` is among `options` (the very option, not one sharing its id).
fn index_of(options: &[PermissionOption], option: &PermissionOption) -> Option<usize> {
    options.iter().position(|o| std::ptr::eq(o, option))
}

impl ChatState {
    /// A remote answer to card `id`, through the same gate as a key. The
    /// first answer wins: a card already answered or withdrawn is left
    /// alone (the remote side then shows who decided). The server checks
    /// the card has waited long enough to be answered (its arming).
    pub(super) fn on_remote_answer(&mut self, id: RequestId, choice: Answer) -> Vec<Effect> {
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
    pub(super) fn on_pick(&mut self, index: usize, pick: Pick) -> Vec<Effect> {
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
    pub(super) fn deny_with_reason(
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

/// Log a stale card's cancellation under its own source, not as the user's.
fn relabel(mut effects: Vec<Effect>, source: Answerer) -> Vec<Effect> {
    for effect in &mut effects {
        if let Effect::LogDecision(record) = effect {
            record.source = source.clone();
        }
    }
    effects
}

mod arming;
mod cards;
mod choices;
mod mode_menu;
mod scope;

pub use arming::{ARM_DELAY, Seen, TYPING_WINDOW};
#[cfg(test)]
pub(crate) use cards::NOT_ARMED;
pub use choices::{CardView, Choice, ChoiceRow, Tone, option_kind_label};
pub use mode_menu::ModeItem;
pub use scope::AllowedScope;

#[cfg(test)]
mod attack_tests;
#[cfg(test)]
mod turn_tests;

//! A card's choices, defined once: for each, the key that picks it, what
//! it is called on screen and what it sends. The state computes them when
//! the card is made (and again when what they depend on changes: the
//! agent's modes, its name); the card's rows, its hint line and its
//! default highlight read them, and the keys on the card are matched
//! against them. Nothing here is drawn or decided by `ui/`. (The shape of
//! codex-rs/tui's `ApprovalOption`: a label, a shortcut and a decision.)

use crate::gate::CardKind;
use crate::keys::{CardCmd, Key};
use crate::model::{AgentMode, OptionKind, PermissionOption};
use crate::policy::{self, Sent, allow_option, reject_option, sent_for, switch_allow_option};
use crate::sanitize::one_line;

use super::Approval;

/// What a choice does when picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// One of the agent's own options (index into the request's options).
    AgentOption(usize),
    /// Grant this kind of call of this tool for the rest of the chat.
    AllowForChat,
    /// Stop asking for this agent (persisted by the settings layer).
    Bypass,
    /// Reject, cancel the turn, and tell the agent why.
    DenyWithReason,
    /// Allow every card pending at the key press, after a confirmation.
    ApproveAll,
}

/// How a choice's words are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// It lets the call run.
    Allow,
    /// It stops the call.
    Reject,
    /// Neither (a bypass, approving all).
    Plain,
}

/// One choice on a card: its key, its words and what it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceRow {
    /// The key that picks it (`1`..`9`, `a`, `b`, `r`, `A`).
    pub key: char,
    /// warden's words for it, first on its row (for the agent's options:
    /// what the option's kind does, whatever the agent calls it).
    pub label: String,
    /// After the label, dim: the agent's name for it, what it covers,
    /// what warden really sends.
    pub detail: String,
    /// A warning after the detail: the agent's name for the option says
    /// the opposite of its kind.
    pub flag: Option<String>,
    pub tone: Tone,
    /// What picking it does.
    pub choice: Choice,
}

/// Everything the card shows that the policy computes, made once in the
/// state when the card is made (see `ChatState::card_view`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CardView {
    /// The choices, in display order.
    pub rows: Vec<ChoiceRow>,
    /// The index in `rows` highlighted on a fresh card: the plain allow
    /// once, whatever order the agent uses; never an "always"; with no
    /// allow once, the reject.
    pub default: usize,
    /// A warning for a card that cannot be allowed the usual way.
    pub warning: Option<&'static str>,
    /// Whether `p` (keep as rule) is offered.
    pub keep_rule: bool,
    /// The command the request runs, as the policy reads it, made
    /// visible (stand-ins for what draws nothing), every line of it.
    pub runs: Option<String>,
}

impl CardView {
    /// Whether the card offers what `cmd` does: its hint line lists only
    /// those keys, so the hints match the card.
    pub(crate) fn offers(&self, cmd: &CardCmd) -> bool {
        let has = |choice: Choice| self.rows.iter().any(|r| r.choice == choice);
        match cmd {
            CardCmd::AllowForChat => has(Choice::AllowForChat),
            CardCmd::Bypass => has(Choice::Bypass),
            CardCmd::KeepRule => self.keep_rule,
            CardCmd::AgentOption => self
                .rows
                .iter()
                .any(|r| matches!(r.choice, Choice::AgentOption(_))),
            _ => true,
        }
    }

    /// The row a key picks, if any.
    pub fn row_of_key(&self, key: Key) -> Option<usize> {
        self.rows.iter().position(|r| Key::ch(r.key) == key)
    }
}

/// What an option kind is called on a card.
pub fn option_kind_label(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::AllowOnce => "allow once",
        OptionKind::AllowAlways => "allow always",
        OptionKind::RejectOnce => "reject",
        OptionKind::RejectAlways => "reject always",
    }
}

/// Words that mean the call runs, and words that mean it does not.
const ALLOW_WORDS: &[&str] = &[
    "allow", "yes", "approve", "accept", "ok", "okay", "proceed", "run", "continue", "confirm",
];
const REJECT_WORDS: &[&str] = &[
    "reject", "deny", "no", "cancel", "decline", "refuse", "block", "disallow", "abort", "stop",
];

/// Whether the agent's name for an option says the opposite of its kind
/// (an `allow_once` named "Reject").
pub(crate) fn name_contradicts(option: &PermissionOption) -> bool {
    let name = option.name.to_lowercase();
    let words: Vec<&str> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let opposite = if option.kind.is_allow() {
        REJECT_WORDS
    } else {
        ALLOW_WORDS
    };
    words.iter().any(|w| opposite.contains(w))
}

/// The card's choices and what it shows besides: up to nine agent
/// options, then warden's own. A `switch_mode` request always asks (it is
/// how an agent leaves plan mode), so a grant, a bypass or a kept rule
/// could never cover the next one: those are not offered on its card, nor
/// (grant and bypass) on a card without an `allow_once` to answer them
/// with.
pub(crate) fn card_view(approval: &Approval, modes: &[AgentMode], agent: &str) -> CardView {
    let options = &approval.request.options;
    let mut rows = Vec::new();
    for (i, option) in options.iter().enumerate().take(9) {
        rows.push(option_row(approval, modes, i, option));
    }
    let plain = approval.view.card.plain_choices();
    if plain && allow_option(options).is_some() {
        rows.push(ChoiceRow {
            key: 'a',
            label: "Allow for this chat".into(),
            detail: format!(" — {}", one_line(&approval.grant.describe())),
            flag: None,
            tone: Tone::Allow,
            choice: Choice::AllowForChat,
        });
        rows.push(ChoiceRow {
            key: 'b',
            label: format!("Bypass {}", one_line(agent)),
            detail: " — stop asking for this agent".into(),
            flag: None,
            tone: Tone::Plain,
            choice: Choice::Bypass,
        });
    }
    rows.push(ChoiceRow {
        key: 'r',
        label: "Deny with a reason…".into(),
        detail: String::new(),
        flag: None,
        tone: Tone::Reject,
        choice: Choice::DenyWithReason,
    });
    rows.push(ChoiceRow {
        key: 'A',
        label: "Approve all pending".into(),
        detail: String::new(),
        flag: None,
        tone: Tone::Plain,
        choice: Choice::ApproveAll,
    });
    let default = default_choice(approval, modes, &rows);
    CardView {
        rows,
        default,
        warning: warning(approval, modes),
        keep_rule: plain,
        runs: approval
            .view
            .raw_input
            .as_ref()
            .and_then(policy::command_of_input)
            .map(|c| crate::sanitize::visible(&c).into_owned()),
    }
}

/// The row of one of the agent's options: warden's label from its kind
/// first, then the agent's name for it, flagged when the two disagree.
fn option_row(
    approval: &Approval,
    modes: &[AgentMode],
    i: usize,
    option: &PermissionOption,
) -> ChoiceRow {
    let contradicts = name_contradicts(option);
    let name = one_line(&option.name);
    let mut detail = if contradicts {
        format!(" — the agent calls it “{name}”")
    } else {
        format!("  “{name}”")
    };
    if let Some(really) = really_sent(approval, modes, i) {
        detail.push_str(&really);
    }
    ChoiceRow {
        key: char::from_digit(u32::try_from(i + 1).unwrap_or(0), 10).unwrap_or('?'),
        label: option_kind_label(option.kind).to_string(),
        detail,
        flag: contradicts.then(|| {
            format!(
                " ⚠ its name says the opposite: this {}",
                if option.kind.is_allow() {
                    "ALLOWS the call"
                } else {
                    "REJECTS the call"
                }
            )
        }),
        tone: if option.kind.is_allow() {
            Tone::Allow
        } else {
            Tone::Reject
        },
        choice: Choice::AgentOption(i),
    }
}

/// The row highlighted on a fresh card: the plain allow once (for a
/// `switch_mode` request, the one that keeps the agent asking), else the
/// reject, else "deny with a reason". Never an "always".
fn default_choice(approval: &Approval, modes: &[AgentMode], rows: &[ChoiceRow]) -> usize {
    let options = &approval.request.options;
    let allow = if approval.view.card == CardKind::ModeSwitch {
        switch_allow_option(options, modes)
    } else {
        allow_option(options).and_then(|o| options.iter().position(|x| std::ptr::eq(x, o)))
    };
    let reject =
        || reject_option(options).and_then(|o| options.iter().position(|x| std::ptr::eq(x, o)));
    let row_of = |choice: Choice| rows.iter().position(|r| r.choice == choice);
    allow
        .or_else(reject)
        .and_then(|i| row_of(Choice::AgentOption(i)))
        .or_else(|| row_of(Choice::DenyWithReason))
        .unwrap_or(0)
}

/// What picking the agent's option `i` really sends, when that is not the
/// option itself: warden answers only with options that keep the agent asking.
fn really_sent(approval: &Approval, modes: &[AgentMode], i: usize) -> Option<String> {
    let options = &approval.request.options;
    let name = |index: usize| {
        options
            .get(index)
            .map_or(String::new(), |o| one_line(&o.name))
    };
    match sent_for(&approval.view, i, modes)? {
        Sent::Option { index, .. } if index == i => None,
        Sent::Option {
            index,
            always: true,
        } => Some(format!(
            " → sends '{}' + allow for this chat (a)",
            name(index)
        )),
        Sent::Option { index, .. } => Some(format!(" → sends '{}'", name(index))),
        Sent::OnlyAlways(_) => Some(" — may stop the agent asking for this tool".to_string()),
        Sent::Refused => Some(" → not sent: the agent would stop asking".to_string()),
        Sent::Cancel => Some(" → sends 'cancelled': its id is another option's too".to_string()),
    }
}

/// A warning for a card that cannot be allowed the usual way: the agent
/// offers only "Always allow", or no way out of its plan mode that keeps
/// it asking.
fn warning(approval: &Approval, modes: &[AgentMode]) -> Option<&'static str> {
    let options = &approval.request.options;
    if approval.view.card == CardKind::ModeSwitch {
        return switch_allow_option(options, modes)
            .is_none()
            .then_some("none of the agent's options leads to a mode that keeps asking: warden can only reject this");
    }
    let only_always = allow_option(options).is_none() && options.iter().any(policy::lasting);
    only_always.then_some(
        "the agent offers only 'Always allow': approving may stop it asking for this tool",
    )
}

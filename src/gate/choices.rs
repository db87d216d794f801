//! A card's choices, defined once ([`CHOICES`]): for each, its id, the
//! key that picks it, what it is called on screen and what it sends. The
//! card's rows and hint lines, the keys on a card, the "approve all"
//! question, the remote page and `warden exec --on-ask` all read that one
//! table; the key table (`keys::CARDS`) keeps only the keys that move
//! about a card. The state computes each card's rows when the card is
//! made (and again when what they depend on changes: the agent's modes,
//! its name). Nothing here is drawn or decided by `ui/`. (The shape of
//! codex-rs/tui's `ApprovalOption`: a label, a shortcut and a decision.)

use crate::gate::CardKind;
use crate::keys::{Binding, Code, Hint, Key};
use crate::model::{AgentMode, OptionKind, PermissionOption};
use crate::policy::{self, Sent, allow_option, reject_option, sent_for, switch_allow_option};
use crate::sanitize::one_line;

use crate::state::{Answer, Approval};

/// What a choice does when picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Allow once: the agent's `allow_once` (for a `switch_mode` request,
    /// the one that leads to a mode that asks); never an "always".
    Allow,
    /// Deny: reject_once, else reject_always, else cancelled.
    Deny,
    /// One of the agent's own options (index into the request's options;
    /// in [`CHOICES`], 0 stands for the digit pressed).
    AgentOption(usize),
    /// Grant this kind of call of this tool for the rest of the chat.
    AllowForChat,
    /// Stop asking for this agent (persisted by the settings layer).
    Bypass,
    /// Keep the request as a rule (its pattern edited first).
    KeepRule,
    /// Reject, cancel the turn, and tell the agent why.
    DenyWithReason,
    /// Allow every card pending at the key press, after a confirmation.
    ApproveAll,
}

impl Choice {
    /// The answer it sends at once, `reason` for a deny with a reason;
    /// `None` for a choice that asks or opens something first.
    pub fn answer(self, reason: &str) -> Option<Answer> {
        match self {
            Choice::Allow => Some(Answer::Allow),
            Choice::Deny => Some(Answer::Deny),
            Choice::AgentOption(i) => Some(Answer::Option(i)),
            Choice::DenyWithReason => Some(Answer::DenyWithReason(reason.to_string())),
            Choice::AllowForChat | Choice::Bypass | Choice::KeepRule | Choice::ApproveAll => None,
        }
    }

    /// Its row in [`CHOICES`].
    pub(crate) fn def(self) -> &'static ChoiceDef {
        let same = |d: &&ChoiceDef| {
            std::mem::discriminant(&d.binding.cmd) == std::mem::discriminant(&self)
        };
        match CHOICES.iter().find(same) {
            Some(def) => def,
            // Every variant has its row (test `every_choice_has_its_row`).
            None => &CHOICES[0],
        }
    }
}

/// One choice a card may offer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChoiceDef {
    /// What the remote page posts for it.
    pub id: &'static str,
    /// Its words on the card's row and on the remote page's button.
    pub label: &'static str,
    /// Offered on the remote page: from another device nothing lasting is
    /// picked (no grant, rule or bypass).
    pub remote: bool,
    /// The question it asks first, `{n}` the number of cards it answers.
    pub ask: Option<&'static str>,
    /// Its key, its word in hint lines, its help text, where it shows as
    /// a hint, and what it does.
    pub binding: Binding<Choice>,
    /// Its words on a network card (a connection through warden's proxy),
    /// when they differ.
    pub network: Option<&'static str>,
}

impl ChoiceDef {
    /// Its words on a card of `kind`.
    pub(crate) fn label_for(&self, kind: CardKind) -> &'static str {
        match (kind, self.network) {
            (CardKind::Network, Some(label)) => label,
            _ => self.label,
        }
    }

    /// The character of its key (`'?'` for the digits, which a row of the
    /// agent's options has instead).
    pub(crate) fn letter(&self) -> char {
        match self.binding.keys.first().map(|k| k.code) {
            Some(Code::Char(c)) => c,
            _ => '?',
        }
    }

    /// Whether picking it needs a reason typed first.
    pub(crate) fn needs_reason(&self) -> bool {
        self.binding.cmd == Choice::DenyWithReason
    }
}

const fn def(
    id: &'static str,
    key: &'static [Key],
    word: &'static str,
    label: &'static str,
    help: &'static str,
    hint: Hint,
    choice: Choice,
) -> ChoiceDef {
    ChoiceDef {
        id,
        label,
        remote: false,
        ask: None,
        network: None,
        binding: Binding {
            keys: key,
            label: word,
            help,
            hint,
            cmd: choice,
        },
    }
}

/// Every choice a card may offer, in the order the help lists them: the
/// one place their ids, keys, words and what they send are defined.
pub(crate) const CHOICES: &[ChoiceDef] = &[
    ChoiceDef {
        remote: true,
        network: Some("Allow this connection"),
        ..def(
            "allow",
            &[Key::ch('y')],
            "allow",
            "Allow once",
            "allow once / deny",
            Hint::CardShort,
            Choice::Allow,
        )
    },
    ChoiceDef {
        remote: true,
        ..def(
            "deny",
            &[Key::ch('n')],
            "deny",
            "Deny",
            "allow once / deny",
            Hint::CardShort,
            Choice::Deny,
        )
    },
    def(
        "option",
        &[Key::plain(Code::Digits)],
        "options",
        "the agent's option",
        "the agent's own options",
        Hint::Card,
        Choice::AgentOption(0),
    ),
    ChoiceDef {
        network: Some("Allow this host for this chat"),
        ..def(
            "chat",
            &[Key::ch('a')],
            "chat",
            "Allow for this chat",
            "allow for this chat: a command's program and subcommand (`cargo test …` for `cargo test --lib`; every command of a line must match; a command run through a wrapper such as `sudo`, `bash -c` or `python3` only exactly; a command in a title warden cannot take apart, or one no allow rule could cover, only this card; gemini's own \"Allow for this session\" covers the same), else the same kind and tool; the card says what it covers",
            Hint::Card,
            Choice::AllowForChat,
        )
    },
    ChoiceDef {
        network: Some("Always allow this host for"),
        ..def(
            "bypass",
            &[Key::ch('b')],
            "bypass",
            "Bypass",
            "bypass this agent from now on: asks once to confirm (\"every call of AGENT that no deny/ask rule stops runs without asking, in every chat, saved to the settings\"); while bypassed, the footer and the chat list show a red `BYPASS`",
            Hint::Card,
            Choice::Bypass,
        )
    },
    def(
        "rule",
        &[Key::ch('p')],
        "keep as rule",
        "Keep as rule",
        "keep as rule: the narrowest sensible rule for this request, its pattern editable (an edit proposes its one file; Tab offers the file's directory, `DIR/**`, instead); Enter appends it to the settings and allows this card, and asks about the other waiting cards only if the rule covers some. It always covers the request it came from, and never names a wrapper as a prefix (`cargo test --lib` proposes `cargo test *`; `bash -c 'cargo test'`, `sudo make` or `python3 x.py` propose the exact command, since allow rules match commands as written)",
        Hint::CardShort,
        Choice::KeepRule,
    ),
    ChoiceDef {
        remote: true,
        ..def(
            "reason",
            &[Key::ch('r')],
            "reason",
            "Deny with a reason…",
            "deny with a reason: rejects this card and the turn's others, lets the turn end (its later requests are refused; Esc cancels it), and sends the reason as the next prompt",
            Hint::Card,
            Choice::DenyWithReason,
        )
    },
    ChoiceDef {
        ask: Some("Approve all {n} pending requests?"),
        ..def(
            "all",
            &[Key::ch('A')],
            "all",
            "Approve all pending",
            "approve all cards pending now that were on screen a moment (asks once to confirm)",
            Hint::Card,
            Choice::ApproveAll,
        )
    },
];

/// The choice a key picks on any card, from [`CHOICES`] (a digit: the
/// agent's option of that digit).
pub(crate) fn choice_of_key(key: Key) -> Option<Choice> {
    let def = CHOICES
        .iter()
        .find(|d| d.binding.keys.iter().any(|k| k.matches(key)))?;
    Some(match (def.binding.cmd, key.code) {
        (Choice::AgentOption(_), Code::Char(c)) => {
            Choice::AgentOption(c.to_digit(10).map_or(0, |d| d as usize).saturating_sub(1))
        }
        (choice, _) => choice,
    })
}

/// The bindings of the choices (for the help, the guide and hint lines).
pub(crate) fn choice_bindings() -> Vec<Binding<Choice>> {
    CHOICES.iter().map(|d| d.binding.clone()).collect()
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
    /// Whether the card offers `choice`: its hint line lists only those
    /// keys, so the hints match the card.
    pub(crate) fn offers(&self, choice: Choice) -> bool {
        match choice {
            Choice::KeepRule => self.keep_rule,
            Choice::AgentOption(_) => self
                .rows
                .iter()
                .any(|r| matches!(r.choice, Choice::AgentOption(_))),
            Choice::AllowForChat | Choice::Bypass => self.rows.iter().any(|r| r.choice == choice),
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
        let chat = Choice::AllowForChat.def();
        rows.push(ChoiceRow {
            key: chat.letter(),
            label: chat.label_for(approval.view.card).into(),
            detail: format!(" — {}", one_line(&approval.grant.describe())),
            flag: None,
            tone: Tone::Allow,
            choice: Choice::AllowForChat,
        });
        let bypass = Choice::Bypass.def();
        rows.push(ChoiceRow {
            key: bypass.letter(),
            label: format!(
                "{} {}",
                bypass.label_for(approval.view.card),
                one_line(agent)
            ),
            detail: if approval.view.card == CardKind::Network {
                " — saved to its allow_hosts in the settings".into()
            } else {
                " — stop asking for this agent".into()
            },
            flag: None,
            tone: Tone::Plain,
            choice: Choice::Bypass,
        });
    }
    let reason = Choice::DenyWithReason.def();
    rows.push(ChoiceRow {
        key: reason.letter(),
        label: reason.label.into(),
        detail: String::new(),
        flag: None,
        tone: Tone::Reject,
        choice: Choice::DenyWithReason,
    });
    let all = Choice::ApproveAll.def();
    rows.push(ChoiceRow {
        key: all.letter(),
        label: all.label.into(),
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
        // A host is kept with `b` (allow_hosts) or a host rule by hand: no
        // rule of kinds, tools, commands or paths speaks for a connection.
        keep_rule: plain && approval.view.card != CardKind::Network,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_has_its_row() {
        for choice in [
            Choice::Allow,
            Choice::Deny,
            Choice::AgentOption(3),
            Choice::AllowForChat,
            Choice::Bypass,
            Choice::KeepRule,
            Choice::DenyWithReason,
            Choice::ApproveAll,
        ] {
            let def = choice.def();
            assert_eq!(
                std::mem::discriminant(&def.binding.cmd),
                std::mem::discriminant(&choice)
            );
        }
        // Ids and keys are each one choice's.
        for (i, a) in CHOICES.iter().enumerate() {
            for b in &CHOICES[i + 1..] {
                assert_ne!(a.id, b.id);
                assert_ne!(a.binding.keys, b.binding.keys);
            }
        }
    }

    #[test]
    fn a_digit_picks_the_agent_option_of_that_digit() {
        assert_eq!(choice_of_key(Key::ch('3')), Some(Choice::AgentOption(2)));
        assert_eq!(choice_of_key(Key::ch('y')), Some(Choice::Allow));
        assert_eq!(choice_of_key(Key::ch('z')), None);
    }
}

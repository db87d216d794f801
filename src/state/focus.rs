//! Where a chat's keys go: the pane that has them ([`Pane`]: the composer
//! or the cards), the modal open over it ([`Modal`]: a question, a reason
//! field, the mode dropdown, ...), and where the user is among the cards
//! ([`CardCursor`]).

use super::Seen;
use crate::state::{Composer, RequestId};

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
    Form(crate::state::form::FormEditor),
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
    /// and since when (`gate/arming.rs`). A card that is not
    /// this one, or is this one for less than [`ARM_DELAY`](super::ARM_DELAY), takes no
    /// answer.
    pub seen: Option<Seen>,
    /// A card came while the user was typing: it takes the keys at the
    /// first clock (`Msg::Tick`, or a key's instant) at which the composer
    /// is empty and no key came for [`TYPING_WINDOW`](super::TYPING_WINDOW); Ctrl-P, the
    /// user's own choice of pane, ends the wait.
    pub wants_keys: bool,
}

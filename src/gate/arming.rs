//! When a card may take an answer. A card that just appeared, or that just
//! became the selected one (the one before it was withdrawn or answered),
//! takes no answer until the user could have seen it: [`ARM_DELAY`] after
//! the runtime's clock first saw it selected. A card never takes the keys
//! of a message being typed: while the composer holds text, or a key was
//! typed within [`TYPING_WINDOW`], a new card waits, and says how to
//! reach it (Ctrl-P). It takes the keys at the first clock at which the
//! user is no longer typing (the composer empty, no key for the window),
//! and from then on ignores answers for [`ARM_DELAY`] again, as a card
//! newly in front of the keys.
//!
//! The state stays pure: a key comes with the instant it was pressed
//! (`Msg::Key`), and the runtime's clock comes as `Msg::Tick` (right after
//! a message left a card unstamped, when a card's delay ends, so the card
//! is drawn again, and when the typing window of a waiting card ends). A
//! key without an instant (`Msg::Action`: tests, scripted input) is not
//! judged by time.

use std::time::{Duration, Instant};

use crate::state::{Action, ChatState, Pane};

use crate::state::CardView;

/// How long a card that just became the selected one ignores answers.
pub const ARM_DELAY: Duration = Duration::from_millis(700);

/// A key typed into the composer this recently keeps a new card from
/// taking the keys.
pub const TYPING_WINDOW: Duration = Duration::from_secs(1);

/// The selected card as the user could last have seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The card.
    pub card: crate::state::RequestId,
    /// Since when it is the selected one, by the runtime's clock; `None`:
    /// the user moved to it (Tab), so it takes answers at once.
    pub since: Option<Instant>,
}

impl ChatState {
    /// The card's choices and what it shows, computed once from the
    /// policy (again when the agent's modes or name change).
    pub(crate) fn card_view(&self, approval: &crate::state::Approval) -> CardView {
        let modes = self
            .session
            .agent_modes
            .as_ref()
            .map_or(&[][..], |m| m.available.as_slice());
        crate::gate::choices::card_view(approval, modes, &self.session.agent_name)
    }

    /// Compute every waiting card's view again.
    pub(crate) fn refresh_cards(&mut self) {
        let views: Vec<CardView> = self
            .gate
            .approvals
            .iter()
            .map(|a| self.card_view(a))
            .collect();
        for (approval, view) in self.gate.approvals.iter_mut().zip(views) {
            approval.card = view;
        }
        let max = self
            .gate
            .approvals
            .get(self.view.cursor.selected)
            .map_or(0, |a| a.card.rows.len().saturating_sub(1));
        self.view.cursor.choice = self.view.cursor.choice.min(max);
    }

    /// The highlighted choice of a fresh look at the selected card.
    pub(crate) fn default_choice(&self) -> usize {
        self.gate
            .approvals
            .get(self.view.cursor.selected)
            .map_or(0, |a| a.card.default)
    }

    /// The cards take the keys, on the first card.
    pub(crate) fn take_keys(&mut self) {
        self.view.cursor.wants_keys = false;
        if self.gate.approvals.is_empty() {
            return;
        }
        self.view.focus.pane = Pane::Cards;
        if self.view.cursor.selected != 0 {
            self.view.cursor.selected = 0;
            self.view.cursor.scroll = 0;
        }
        self.view.cursor.choice = self.default_choice();
    }

    /// Whether the user is typing at `now`: text in the composer, or a key
    /// typed within [`TYPING_WINDOW`].
    fn typing_at(&self, now: Instant) -> bool {
        self.typing()
            || self
                .view
                .typed_at
                .is_some_and(|t| now.saturating_duration_since(t) < TYPING_WINDOW)
    }

    /// Whether a card waiting for the keys takes them at `now`: the bare
    /// composer has them, it is empty and no key came for the window.
    fn keys_due(&self, now: Instant) -> bool {
        self.view.cursor.wants_keys && self.view.focus.is(Pane::Composer) && !self.typing_at(now)
    }

    /// The runtime's clock (or a key's instant) says it is `now`: the
    /// selected card, and every new one, is seen from now; a card that
    /// came while the user typed takes the keys once the typing stopped,
    /// and is seen from then on (its keys work [`ARM_DELAY`] later).
    pub(crate) fn stamp(&mut self, now: Instant) {
        if self.keys_due(now) {
            self.take_keys();
            self.view.cursor.seen = None;
        }
        self.see(now);
    }

    /// The clock moves on to `now`: the selected card, and every new one,
    /// is seen from now. (A key's instant does only this: the key itself
    /// says where the user is, and the runtime's clock after it decides
    /// whether a waiting card takes the keys.)
    fn see(&mut self, now: Instant) {
        self.view.clock = Some(self.view.clock.map_or(now, |c| c.max(now)));
        for approval in &mut self.gate.approvals {
            approval.shown_at.get_or_insert(now);
        }
        let selected = self
            .gate
            .approvals
            .get(self.view.cursor.selected)
            .map(|a| a.id);
        match selected {
            None => self.view.cursor.seen = None,
            Some(card) if self.view.cursor.seen.map(|s| s.card) != Some(card) => {
                self.view.cursor.seen = Some(Seen {
                    card,
                    since: Some(now),
                });
            }
            Some(_) => {}
        }
    }

    /// The user moved to another card: it takes answers at once.
    pub(crate) fn seen_by_user(&mut self) {
        self.view.cursor.seen = self
            .gate
            .approvals
            .get(self.view.cursor.selected)
            .map(|a| Seen {
                card: a.id,
                since: None,
            });
    }

    /// Whether the selected card takes an answer pressed at `at` (`None`:
    /// a key without its time, not judged by time).
    pub(crate) fn armed_at(&self, at: Option<Instant>) -> bool {
        let Some(card) = self.gate.approvals.get(self.view.cursor.selected) else {
            return false;
        };
        let Some(at) = at else {
            return true;
        };
        match self.view.cursor.seen {
            Some(Seen { card: seen, since }) if seen == card.id => {
                since.is_none_or(|s| at.saturating_duration_since(s) >= ARM_DELAY)
            }
            _ => false,
        }
    }

    /// Whether `approval` had been on screen for [`ARM_DELAY`] when the key
    /// being handled was pressed (a key without its time: yes).
    pub(crate) fn seen_at_press(&self, approval: &crate::state::Approval) -> bool {
        match (self.view.pressed_at, approval.shown_at) {
            (None, _) => true,
            (Some(at), Some(shown)) => at.saturating_duration_since(shown) >= ARM_DELAY,
            (Some(_), None) => false,
        }
    }

    /// Whether the selected card takes answers now, by the last clock the
    /// state knows (what the card's hint line shows).
    pub fn card_armed(&self) -> bool {
        self.armed_at(self.view.clock)
    }

    /// Whether the runtime should send its clock now: a card is not yet
    /// stamped, or waits to take the keys.
    pub(crate) fn needs_clock(&self) -> bool {
        if self.gate.approvals.is_empty() {
            return false;
        }
        let selected = self.gate.approvals.get(self.view.cursor.selected);
        self.view.clock.is_some_and(|now| self.keys_due(now))
            || self.gate.approvals.iter().any(|a| a.shown_at.is_none())
            || self.view.cursor.seen.map(|s| s.card) != selected.map(|a| a.id)
    }

    /// When the selected card's delay ends, while it runs, or when the
    /// typing window of a card waiting for the keys ends: the runtime
    /// sends its clock then, and the card is drawn again.
    pub(crate) fn arming_deadline(&self) -> Option<Instant> {
        let now = self.view.clock?;
        if self.gate.approvals.is_empty() {
            return None;
        }
        let armed = self
            .view
            .cursor
            .seen
            .and_then(|s| s.since)
            .map(|since| since + ARM_DELAY);
        let typed = self
            .view
            .typed_at
            .filter(|_| self.view.cursor.wants_keys && !self.typing())
            .map(|at| at + TYPING_WINDOW);
        [armed, typed]
            .into_iter()
            .flatten()
            .filter(|end| now < *end)
            .min()
    }

    /// A key with the instant it was pressed: the clock moves on; a key
    /// typed into the composer is remembered as typing.
    pub(crate) fn key_at(&mut self, action: &Action, at: Instant) {
        self.see(at);
        if self.view.focus.is(Pane::Composer) && typed(action) {
            self.view.typed_at = Some(at);
        }
    }
}

/// Whether the action types into (or sends) a message.
fn typed(action: &Action) -> bool {
    matches!(
        action,
        Action::Char(_)
            | Action::Paste(_)
            | Action::Newline
            | Action::Backspace
            | Action::Delete
            | Action::DeleteWordBack
            | Action::KillLineStart
            | Action::KillLineEnd
            | Action::Submit
            | Action::Tab
    )
}

//! Ctrl-C and the help overlay: keys that act before the focus does.
//!
//! Ctrl-C cancels a running turn (as Esc does); else it clears the
//! message; on an idle chat with nothing typed, the first press says that
//! a second one quits, and a second press within [`QUIT_WINDOW`] quits.
//! The time of each press comes in the action, so the state stays pure.

use std::ops::ControlFlow::{self, Break, Continue};
use std::time::Duration;

use crate::keys;

use super::{Action, ChatState, Effect, Pane};

/// How soon a second Ctrl-C must follow the first to quit.
pub const QUIT_WINDOW: Duration = Duration::from_secs(1);

/// What the first Ctrl-C on an idle, empty composer says.
pub(crate) const QUIT_NOTICE: &str = "press Ctrl-C again to quit (Ctrl-D quits at once)";

impl ChatState {
    /// Ctrl-C, F1 and `?`, and any key while the help is open: `Break`
    /// with the effects when handled here, else `Continue` with the action
    /// for the focus (Ctrl-C in a field, a menu or a question becomes Esc).
    pub(crate) fn on_help_or_interrupt(
        &mut self,
        action: Action,
        key: Option<keys::Key>,
    ) -> ControlFlow<Vec<Effect>, Action> {
        let Action::Interrupt(now) = action else {
            self.view.quit_armed = None;
            return match self.on_help_key(&action, key) {
                Some(effects) => Break(effects),
                None => Continue(action),
            };
        };
        self.view.help = false;
        if self.view.focus.modal.is_some() {
            self.view.quit_armed = None;
            return Continue(Action::Cancel);
        }
        if self.session.turn.as_ref().is_some_and(|t| !t.cancelling) {
            self.view.quit_armed = None;
            return Break(self.cancel());
        }
        if self.view.focus.is(Pane::Composer) && !self.view.composer.is_empty() {
            self.view.quit_armed = None;
            // Ctrl-Y brings it back.
            self.view.drafts.cleared = Some(self.view.composer.take());
            self.view.drafts.slash_dismissed = false;
            return Break(Vec::new());
        }
        match self.view.quit_armed {
            Some(first) if now.saturating_duration_since(first) <= QUIT_WINDOW => {
                self.view.quit_armed = None;
                Break(self.quit())
            }
            _ => {
                self.view.quit_armed = Some(now);
                self.view.notice = Some(QUIT_NOTICE.into());
                Break(Vec::new())
            }
        }
    }

    /// F1, or `?` where it is not typed, opens the help; while it is open
    /// ↑/↓ (Home/End) scroll it and any other key closes it (Ctrl-D still
    /// quits).
    fn on_help_key(&mut self, action: &Action, key: Option<keys::Key>) -> Option<Vec<Effect>> {
        if self.view.help {
            if matches!(action, Action::Quit) {
                self.view.help = false;
                return None;
            }
            let rows = self.view.focus.context().rows('-').len();
            match help_scroll(self.view.help_scroll, action, rows) {
                Some(scroll) => self.view.help_scroll = scroll,
                None => self.view.help = false,
            }
            return Some(Vec::new());
        }
        let asks = match action {
            Action::Help => true,
            Action::Char('?') if self.view.focus.modal.is_some() => false,
            Action::Char('?') => match self.view.focus.pane {
                Pane::Composer => self.view.composer.is_empty(),
                Pane::Cards => keys::lookup_key(keys::CARDS, key) == Some(keys::CardCmd::Help),
            },
            _ => false,
        };
        if asks {
            self.view.help = true;
            self.view.help_scroll = 0;
            return Some(Vec::new());
        }
        None
    }
}

/// Where the open help is scrolled to (the first row of the key table
/// shown) after `action`, or `None` when the action closes it. `rows` is
/// the table's length; the drawing keeps the last line at the bottom.
pub(crate) fn help_scroll(scroll: u16, action: &Action, rows: usize) -> Option<u16> {
    let last = u16::try_from(rows.saturating_sub(1)).unwrap_or(u16::MAX);
    match action {
        Action::Up => Some(scroll.saturating_sub(1)),
        Action::Down => Some(scroll.saturating_add(1).min(last)),
        Action::LineStart => Some(0),
        Action::LineEnd => Some(last),
        _ => None,
    }
}

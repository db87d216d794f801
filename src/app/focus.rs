//! What the TUI loop does for the terminal as a whole besides drawing: the
//! terminal's focus and the turn-end alert, releasing the mouse to the
//! terminal, the clipboard, and the line left on the normal screen on quit.

use std::time::Instant;

use super::App;
use crate::state::alert::{AlertMsg, TurnAlerts};
use crate::ui;

/// The loop's terminal-wide state.
#[derive(Debug, Default)]
pub struct Extras {
    alerts: TurnAlerts,
    mouse_released: bool,
}

impl Extras {
    /// The terminal gained or lost focus.
    pub fn on_focus(&mut self, focused: bool) {
        self.alerts.update(AlertMsg::Focus(focused));
    }

    /// Release the mouse to the terminal (its own selection works) or take
    /// it back; the footer says which.
    pub(crate) fn toggle_mouse(&mut self, views: &mut ui::Views) {
        self.mouse_released = !self.mouse_released;
        crate::tui::set_mouse_released(self.mouse_released);
        views.set_mouse_released(self.mouse_released);
    }

    /// After the screen was taken back ([`crate::tui::suspended`]): a
    /// released mouse stays released.
    pub(crate) fn screen_resumed(&self) {
        if self.mouse_released {
            crate::tui::set_mouse_released(true);
        }
    }

    /// After a batch of events: a long turn that ended while the terminal
    /// was not focused rings the bell / sends the desktop notification.
    /// Returns the alerts' texts.
    pub fn after_events(&mut self, app: &App) -> Vec<String> {
        let now = Instant::now();
        let mut fired = Vec::new();
        for slot in &app.ws.chats {
            let Some(chat) = app.chats.get(&slot.id) else {
                continue;
            };
            let msg = AlertMsg::Busy {
                chat: slot.id,
                busy: slot.state.is_busy(),
                at: now,
                after: chat.notify.turn_end_after,
            };
            if let Some(took) = self.alerts.update(msg) {
                let text = format!(
                    "{} finished a turn ({} s)",
                    slot.state.session.agent_name,
                    took.as_secs()
                );
                crate::tui::notify(&text, chat.notify.bell, chat.notify.desktop);
                fired.push(text);
            }
        }
        self.alerts.retain(|id| app.ws.chat(id).is_some());
        fired
    }
}

impl App {
    /// The lines to leave on the normal screen on quit: how to reopen each
    /// open chat that has a record (a chat closed untouched has none).
    pub fn resume_hints(&self) -> Vec<String> {
        let recorded: Vec<(usize, &str)> = self
            .ws
            .chats
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| {
                let record = self.chats.get(&slot.id)?.record.open.as_deref()?;
                Some((i + 1, record))
            })
            .collect();
        let alone = recorded.len() == 1;
        recorded
            .into_iter()
            .map(|(n, id)| resume_line(id, (!alone).then_some(n)))
            .collect()
    }
}

/// "To reopen this chat: warden --resume ID" (or "chat N" among several).
pub(crate) fn resume_line(chat_id: &str, number: Option<usize>) -> String {
    let which = number.map_or_else(|| "this chat".to_string(), |n| format!("chat {n}"));
    format!(
        "To reopen {which}: warden --resume {}",
        crate::sanitize::one_line(chat_id)
    )
}

impl App {
    /// `warden --resume ID`: with the picker open and its filter typed, a
    /// filter that is one recorded chat's id, or a prefix of only its id
    /// (as `warden undo` takes), reopens that chat at once (the line
    /// printed on quit says to type it). An ambiguous one leaves the
    /// picker open on the chats it matches.
    pub fn reopen_exact(&mut self, filter: &str) {
        let exact = match &mut self.ws.focus {
            crate::state::ChatFocus::Picker(picker) => picker
                .only_id_with_prefix(filter)
                .is_some_and(|id| picker.select_id(&id)),
            _ => false,
        };
        if exact {
            self.handle(crate::state::Msg::Action(crate::state::Action::Submit));
        }
    }
}

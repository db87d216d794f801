//! The mode dropdown: warden's modes, the agent's own, its session options.

use crate::keys::{self, ListCmd};
use crate::policy::{self, Mode};
use crate::sanitize::one_line;
use crate::state::{Action, ChatState, Effect, EntryKind};

use super::Modal;

impl ChatState {
    /// The items of the mode dropdown: warden's modes, then the agent's own
    /// that add something to them.
    pub fn mode_menu_items(&self) -> Vec<ModeItem> {
        let mut items: Vec<ModeItem> = Mode::ALL.into_iter().map(ModeItem::Chat).collect();
        if let Some(modes) = &self.session.agent_modes {
            items.extend(
                (0..modes.available.len())
                    .filter(|i| self.agent_mode_adds(&modes.available[*i]))
                    .map(ModeItem::Agent),
            );
        }
        for (option, opt) in self.session.controls.options.iter().enumerate() {
            let count = match &opt.value {
                crate::model::SessionOptionValue::Select { choices, .. } => choices.len(),
                crate::model::SessionOptionValue::Boolean(_) => 1,
            };
            items.extend((0..count).map(|choice| ModeItem::Option { option, choice }));
        }
        items
    }

    /// Whether the agent's mode adds something to warden's own in the
    /// dropdown: not the mode warden keeps the agent in (its asking mode),
    /// nor the plan mode warden moves it to in Plan, nor one named like one
    /// of warden's modes (a second Plan, Default or Auto, which warden's
    /// own already drive).
    fn agent_mode_adds(&self, mode: &crate::model::AgentMode) -> bool {
        let words = |text: &str| {
            let text = text.trim().to_lowercase();
            text.strip_suffix(" mode")
                .unwrap_or(&text)
                .trim()
                .to_string()
        };
        let like_wardens = Mode::ALL
            .iter()
            .any(|m| words(m.as_str()) == words(&mode.id) || words(m.label()) == words(&mode.name));
        let managed = self.gate.asking_mode.as_deref() == Some(mode.id.as_str())
            || self.plan_mode().as_deref() == Some(mode.id.as_str());
        !like_wardens && !managed
    }

    /// Keys while the mode dropdown is open.
    pub(crate) fn on_menu_key(
        &mut self,
        action: &Action,
        key: Option<keys::Key>,
        highlighted: usize,
    ) -> Vec<Effect> {
        use Action as A;
        let items = self.mode_menu_items();
        if let A::PickModeItem(index) = action {
            return self.pick_mode_item(*index);
        }
        match keys::lookup_key(keys::MODE_MENU, key) {
            Some(ListCmd::Up) => {
                self.view
                    .focus
                    .open(Modal::ModeMenu(highlighted.saturating_sub(1)));
                Vec::new()
            }
            Some(ListCmd::Down) => {
                self.view.focus.open(Modal::ModeMenu(
                    (highlighted + 1).min(items.len().saturating_sub(1)),
                ));
                Vec::new()
            }
            Some(ListCmd::Pick) => self.pick_mode_item(highlighted),
            _ => {
                self.close_menu();
                Vec::new()
            }
        }
    }

    /// Close the dropdown: the keys go back to the pane beneath.
    pub(super) fn close_menu(&mut self) {
        if matches!(self.view.focus.modal, Some(Modal::ModeMenu(_))) {
            self.view.focus.modal = None;
        }
    }

    pub(in crate::state) fn pick_mode_item(&mut self, index: usize) -> Vec<Effect> {
        self.close_menu();
        match self.mode_menu_items().get(index) {
            Some(ModeItem::Chat(mode)) => self.set_mode(*mode),
            Some(ModeItem::Option { option, choice }) => self.pick_option(*option, *choice),
            Some(ModeItem::Agent(i)) => {
                let Some(mode) = self
                    .session
                    .agent_modes
                    .as_ref()
                    .and_then(|m| m.available.get(*i))
                    .cloned()
                else {
                    return Vec::new();
                };
                let asks = self.gate.asking_mode.as_deref() == Some(mode.id.as_str())
                    || self.mode_asks(&mode.id) == policy::agent_mode::ModeAsks::Asks;
                if !asks {
                    self.session.transcript.push(EntryKind::Error {
                        message: format!(
                            "warning: in the agent's mode `{}` it may act without asking; warden's gate sees only what the agent asks",
                            one_line(&mode.name)
                        ),
                        detail: Vec::new(),
                    });
                }
                vec![self.switch_agent_mode(&mode.id)]
            }
            None => Vec::new(),
        }
    }
}

/// One line of the mode dropdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeItem {
    /// warden's own mode for this chat.
    Chat(Mode),
    /// One of the agent's advertised modes (index into `agent_modes.available`).
    Agent(usize),
    /// A value of one of the agent's session options (model, thought
    /// level, ...): `option` indexes `controls.options`, `choice` a select's
    /// choices (a boolean has one item, which flips it).
    Option { option: usize, choice: usize },
}

//! Who has the key: the routing of a key press (or a paste, a click)
//! from the workspace to the context that takes it, in one place.
//!
//! The workspace first: while the remote page's code is up any key but
//! Ctrl-D closes it, and while its help is up any key but the ones that
//! scroll it (or Ctrl-D) does; Ctrl-D leaves from anywhere; Ctrl-C on its own
//! screens backs out like Esc; its screens (the chat list, renaming,
//! closing, a new chat, past chats) take their keys; else its chat keys
//! (new, switch, list, close, past chats) act, and every other key goes to
//! the chat on screen as it came. In the chat: an open search, then the
//! help and Ctrl-C, then a question about a stuck process, the checkpoint
//! card or list, the composer's memory (drafts, mentions, slash commands),
//! the keys that mean the same wherever the focus is, and last the modal
//! that is open or the pane that has the focus.
//!
//! The handlers are the components' own (`on_list_key` in the workspace,
//! `on_card_key` in the gate, `on_composer_key` in the prompts, ...);
//! each matches the key against its own table ([`crate::keys`]).

use std::ops::ControlFlow;
use std::time::Instant;

use super::{Context, split};
use crate::state::interrupt::help_scroll;
use crate::state::{
    Action, ChatFocus, ChatState, Code, Effect, Focus, Key, Modal, ModeItem, Msg, Pane, Workspace,
    WsEffect,
};

impl Workspace {
    /// A key (as pressed, with the moment it was), a paste or a click.
    pub(crate) fn on_action(&mut self, input: Action, at: Option<Instant>) -> Vec<WsEffect> {
        let (action, mut key) = split(input.clone());
        self.notice = None;
        if self.remote_code.take().is_some() && action != Action::Quit {
            return Vec::new();
        }
        if self.help && action != Action::Quit {
            let rows = Context::ChatList.rows('-').len();
            match help_scroll(self.help_scroll, &action, rows) {
                Some(scroll) => self.help_scroll = scroll,
                None => self.help = false,
            }
            return Vec::new();
        }
        self.help = false;
        let action = match action {
            // Ctrl-D leaves warden from anywhere; every chat answers its own.
            Action::Quit => {
                self.focus = ChatFocus::Chat;
                return match self.active_id() {
                    Some(id) => self.send_chat(id, Msg::Action(Action::Quit)),
                    None => Vec::new(),
                };
            }
            // Ctrl-C backs out of the workspace's own screens, like Esc.
            Action::Interrupt(_) if self.focus != ChatFocus::Chat => {
                key = Some(Key::plain(Code::Esc));
                Action::Cancel
            }
            other => other,
        };
        match std::mem::take(&mut self.focus) {
            ChatFocus::Chat => self.on_chat_key(input, action, at),
            ChatFocus::List { selected } => self.on_list_key(action, key, selected),
            ChatFocus::Rename { chat, field } => self.on_rename_key(action, chat, field),
            ChatFocus::ConfirmClose { chat } => self.on_confirm_key(&action, chat),
            ChatFocus::NewChat { selected } => self.on_new_chat_key(&action, selected),
            ChatFocus::Picker(picker) => self.on_picker_key(&action, picker),
        }
    }

    /// Keys while a chat has them: workspace keys first, the rest to the chat.
    /// `input` goes to the chat as it came (a key as pressed); `action` is
    /// what it means in the composer.
    fn on_chat_key(&mut self, input: Action, action: Action, at: Option<Instant>) -> Vec<WsEffect> {
        // A chat's own text fields keep their keys except the chat keys.
        match action {
            Action::NewChat => self.new_chat(),
            Action::NextChat => self.switch_by(1),
            Action::PrevChat => self.switch_by(-1),
            Action::GoToChat(n) => {
                self.go_to(n);
                Vec::new()
            }
            Action::ChatList => {
                self.focus = ChatFocus::List {
                    selected: self.active,
                };
                Vec::new()
            }
            Action::CloseChat => match self.active_id() {
                Some(id) => self.close(id),
                None => Vec::new(),
            },
            Action::PastChats => vec![WsEffect::OpenPicker],
            _ => match self.active_id() {
                Some(id) => {
                    let msg = match at {
                        Some(at) => Msg::Key { action: input, at },
                        None => Msg::Action(input),
                    };
                    self.send_chat(id, msg)
                }
                None => Vec::new(),
            },
        }
    }
}

impl ChatState {
    /// A key pressed at `at`: the gate stamps it (a card that just
    /// appeared takes no answer yet), and the key goes where it goes.
    pub(crate) fn on_key(&mut self, action: Action, at: Instant) -> Vec<Effect> {
        self.key_at(&split(action.clone()).0, at);
        self.view.pressed_at = Some(at);
        let effects = self.on_action(action);
        self.view.pressed_at = None;
        effects
    }

    /// A key (as pressed), a paste or a click. The composer's meaning of a
    /// key (`action`) serves the keys that mean the same everywhere and the
    /// composer; the context that has the keys (a card, a modal) matches
    /// the raw `key` against its own table.
    pub(crate) fn on_action(&mut self, input: Action) -> Vec<Effect> {
        let (action, mut key) = split(input);
        if !matches!(action, Action::ToggleThoughts) {
            self.view.notice = None;
        }
        // While the search is open it has the keys, also when a card took
        // the focus meanwhile: a letter typed for the search never answers it.
        if self.view.focus.modal.is_none()
            && self.view.search.is_some()
            && let Some(effects) = self.on_search_key(&action)
        {
            return effects;
        }
        let interrupt = matches!(action, Action::Interrupt(_));
        let action = match self.on_help_or_interrupt(action, key) {
            ControlFlow::Break(effects) => return effects,
            ControlFlow::Continue(action) => action,
        };
        if interrupt && action == Action::Cancel {
            // Ctrl-C in a field, a menu or a question is Esc there.
            key = Some(Key::plain(Code::Esc));
        }
        // A question about a stuck agent process has the keys while it is
        // asked (Ctrl-D still quits).
        if self.view.stuck_move.is_some()
            && let Some(effects) = self.stuck_move_key(&action)
        {
            return effects;
        }
        // So do the checkpoint restore card and the checkpoint list.
        let checkpoints = &self.view.checkpoints;
        if (checkpoints.confirm.is_some() || checkpoints.list.is_some())
            && let Some(effects) = self.checkpoint_key(&action)
        {
            return effects;
        }
        // In the composer, its memory (drafts, mentions, slash commands)
        // sees the key before the composer.
        if self.view.focus.is(Pane::Composer)
            && let Some(effects) = self.drafts_key(&action)
        {
            return effects;
        }
        // Keys that mean the same wherever the focus is.
        match action {
            // Not over a field or a question of a card's: those keep their keys.
            Action::Search if self.view.focus.modal.is_none() => {
                return self.open_search();
            }
            Action::Copy => return self.copy(false),
            Action::CopyCode => return self.copy(true),
            // A modal closes on Esc instead.
            Action::Cancel if self.view.focus.modal.is_none() => {
                return self.cancel();
            }
            Action::Quit => return self.quit(),
            Action::ToggleThoughts => {
                self.view.thoughts_expanded = !self.view.thoughts_expanded;
                return Vec::new();
            }
            Action::ToggleTerminals => {
                self.view.terminals_expanded = !self.view.terminals_expanded;
                self.session.transcript.touch_all_tools();
                return Vec::new();
            }
            Action::OpenModeMenu => {
                let current = self
                    .mode_menu_items()
                    .iter()
                    .position(|i| *i == ModeItem::Chat(self.gate.mode));
                self.view.focus.open(Modal::ModeMenu(current.unwrap_or(0)));
                return Vec::new();
            }
            Action::ClickChoice(_)
                if !self.gate.approvals.is_empty() && self.view.focus.is(Pane::Composer) =>
            {
                // A click on a card answers it even while the composer has the keys.
                self.view.focus.pane = Pane::Cards;
            }
            Action::RulesScreen if !matches!(self.view.focus.modal, Some(Modal::Rules { .. })) => {
                self.view.focus.open(Modal::Rules {
                    selected: 0,
                    confirm: false,
                });
                return Vec::new();
            }
            Action::ToggleCards => {
                // Ctrl-P: between the composer and the cards; from a modal,
                // back to typing. The user chose: no card takes the keys
                // by itself after this.
                self.view.cursor.wants_keys = false;
                self.view.focus =
                    if self.view.focus.is(Pane::Composer) && !self.gate.approvals.is_empty() {
                        Focus::CARDS
                    } else {
                        Focus::COMPOSER
                    };
                return Vec::new();
            }
            _ => {}
        }
        // A modal has the keys while it is open: its handler takes it, and
        // puts it back unless the key closed it (then the pane beneath has
        // the keys again, as it was).
        let Some(modal) = self.view.focus.modal.take() else {
            return match self.view.focus.pane {
                Pane::Composer => self.on_composer_key(action),
                Pane::Cards => self.on_card_key(&action, key),
            };
        };
        match modal {
            Modal::Reason { card, field } => self.on_reason_key(&action, key, card, field),
            Modal::ConfirmAll(ids) => self.on_confirm_key(key, ids),
            Modal::Confirm(question) => self.on_question_key(key, question),
            Modal::ModeMenu(highlighted) => self.on_menu_key(&action, key, highlighted),
            Modal::KeepRule(field) => self.on_keep_rule_key(&action, key, field),
            Modal::Form(form) => self.on_form_key(&action, key, form),
            Modal::Rules { selected, confirm } => self.on_grants_key(key, selected, confirm),
        }
    }
}

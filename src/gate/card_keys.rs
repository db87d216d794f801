//! The keys on the cards: picking a choice, the denial reason, the
//! questions under a card ("approve all?", "bypass?", "approve the waiting
//! cards?"). What each key means comes from `crate::keys`.

use crate::gate;
use crate::keys::{self, AnswerCmd, CardCmd, FieldCmd, Key};
use crate::model::PermissionOutcome;
use crate::policy::{Decision, Source, allow_option};
use crate::state::{Action, ChatState, Composer, Effect, RequestId};

use crate::gate::answer::index_of;
use crate::gate::cards::no_allow_notice;
use crate::state::{
    Answer, By, Choice, Modal, Pane, Pick, Question, choice_bindings, choice_of_key,
};

/// What a card that just became the selected one says to a key that would
/// answer it.
pub(crate) const NOT_ARMED: &str =
    "this card just appeared: its keys work in a moment (none meant for something else answers it)";

impl ChatState {
    /// Keys while a question is asked.
    pub(crate) fn on_question_key(&mut self, key: Option<Key>, question: Question) -> Vec<Effect> {
        let answer = keys::lookup_key(keys::QUESTION, key);
        let yes = answer == Some(AnswerCmd::Yes);
        let after_mode = matches!(question, Question::AllowWaiting(_));
        match question {
            Question::AllowWaiting(ids) | Question::AllowCovered(ids) => {
                self.close_question();
                if after_mode && answer == Some(AnswerCmd::NextMode) {
                    return self.set_mode(self.gate.mode.next());
                }
                if !yes {
                    self.view.notice = Some(if after_mode {
                        format!(
                            "the waiting cards stay; the mode is {} for new requests",
                            self.gate.mode.label()
                        )
                    } else {
                        "the other waiting cards stay".to_string()
                    });
                    return Vec::new();
                }
                let mut effects = Vec::new();
                for id in ids {
                    let Some(index) = self.gate.approvals.iter().position(|a| a.id == id) else {
                        continue;
                    };
                    let decision = gate::decide::again(
                        &self.gate.approvals[index].view,
                        &self.policy_context(),
                    );
                    let decision = match decision {
                        Decision::Allow {
                            option_id,
                            source,
                            reason,
                        } => Decision::Allow {
                            option_id,
                            source,
                            reason: format!("{reason}, approved by you"),
                        },
                        Decision::Ask { .. } => continue,
                        deny => deny,
                    };
                    if let Some(approval) = self.take_approval(index) {
                        effects.extend(self.apply_automatic(&approval, decision));
                    }
                }
                effects
            }
            Question::Bypass(card) => {
                self.close_question();
                if yes {
                    self.bypass_confirmed(card)
                } else {
                    self.view.notice = Some(format!("{} is not bypassed", self.bypass_name()));
                    Vec::new()
                }
            }
        }
    }

    /// Close the question: the keys go back to the pane beneath.
    pub(crate) fn close_question(&mut self) {
        if matches!(self.view.focus.modal, Some(Modal::Confirm(_))) {
            self.view.focus.modal = None;
        }
    }

    /// Keys while the cards have focus. A key is first matched against the
    /// card's own choices (their keys, or a click on one), then against
    /// the choices a card may offer (`CHOICES`: one the card does not
    /// offer says why), then against the keys that move about a card
    /// (`keys::CARDS`). A card that just became the selected one takes no
    /// answer yet (`arming.rs`).
    pub(crate) fn on_card_key(&mut self, action: &Action, key: Option<Key>) -> Vec<Effect> {
        use Action as A;
        if let Some(effects) = self.on_form_card_key(action, key) {
            return effects;
        }
        let Some(card) = self.gate.approvals.get(self.view.cursor.selected) else {
            self.view.focus.pane = Pane::Composer;
            return Vec::new();
        };
        let rows = &card.card.rows;
        let row = match (action, key) {
            (A::ClickChoice(index), _) => Some(*index).filter(|i| *i < rows.len()),
            (_, Some(key)) => card.card.row_of_key(key),
            _ => None,
        };
        if let Some(index) = row {
            let choice = rows[index].choice;
            if !self.armed_at(self.view.pressed_at) {
                return self.not_armed();
            }
            self.view.cursor.choice = index;
            return self.choose(choice);
        }
        if let Some(choice) = key.and_then(choice_of_key) {
            if !self.armed_at(self.view.pressed_at) {
                return self.not_armed();
            }
            return match choice {
                Choice::AllowForChat | Choice::Bypass => {
                    // Offered, the card's row took the key above.
                    self.view.notice = Some(match card.view.card.no_grant_notice() {
                        Some(why) => why.into(),
                        None => no_allow_notice(card),
                    });
                    Vec::new()
                }
                Choice::KeepRule if !card.card.keep_rule => {
                    self.view.notice =
                        Some("no rule can cover this request: it always asks".into());
                    Vec::new()
                }
                // A digit with no option of its own (a row took the others).
                Choice::AgentOption(_) => Vec::new(),
                choice => self.choose(choice),
            };
        }
        let Some(cmd) = keys::lookup_key(keys::CARDS, key) else {
            // Shift-Tab changes the mode here too, as the footer says.
            if *action == A::BackTab {
                return self.set_mode(self.gate.mode.next());
            }
            if matches!(action, A::Char(_) | A::Paste(_)) {
                // Text no card takes: the user is typing a message with a
                // card in front of the keys. It goes to the composer, and
                // the card waits as one that came while typing does
                // (`arming.rs`): it takes the keys again once the composer
                // is empty and the typing stopped, so the letters after
                // this one are not answers.
                self.view.focus = crate::state::Focus::COMPOSER;
                self.view.cursor.wants_keys = true;
                if let Some(at) = self.view.pressed_at {
                    self.view.typed_at = Some(at);
                }
                let effects = self.on_composer_key(action.clone());
                self.view.notice = Some(format!(
                    "a card is waiting: typing went to the message · Ctrl-P answers it ({})",
                    keys::hints(&choice_bindings(), |h| h == keys::Hint::CardShort)
                        .into_iter()
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" · ")
                ));
                return effects;
            }
            return Vec::new();
        };
        if cmd == CardCmd::Pick && !self.armed_at(self.view.pressed_at) {
            return self.not_armed();
        }
        let len = rows.len();
        match cmd {
            CardCmd::Expand => {
                self.view.cursor.expanded = !self.view.cursor.expanded;
                Vec::new()
            }
            CardCmd::Next | CardCmd::Prev => {
                let n = self.gate.approvals.len();
                let step = if cmd == CardCmd::Next { 1 } else { n - 1 };
                self.view.cursor.selected = (self.view.cursor.selected + step) % n;
                self.view.cursor.choice = self.default_choice();
                self.view.cursor.scroll = 0;
                self.seen_by_user();
                Vec::new()
            }
            CardCmd::ChoiceUp => {
                self.view.cursor.choice = self.view.cursor.choice.saturating_sub(1);
                Vec::new()
            }
            CardCmd::ChoiceDown => {
                self.view.cursor.choice = (self.view.cursor.choice + 1).min(len - 1);
                Vec::new()
            }
            CardCmd::ScrollUp | CardCmd::ScrollDown => {
                if let A::CardScroll(delta) = action {
                    self.view.cursor.scroll = self.view.cursor.scroll.saturating_add_signed(*delta);
                }
                Vec::new()
            }
            CardCmd::Pick => match rows.get(self.view.cursor.choice) {
                Some(row) => {
                    let choice = row.choice;
                    self.choose(choice)
                }
                None => Vec::new(),
            },
            // Handled before the focus (Ctrl-P, `?`).
            CardCmd::ToComposer | CardCmd::Help => Vec::new(),
        }
    }

    /// A key that would answer a card that just became the selected one:
    /// ignored, and the card says why.
    pub(crate) fn not_armed(&mut self) -> Vec<Effect> {
        self.view.notice = Some(NOT_ARMED.into());
        Vec::new()
    }

    /// Answer the selected card with the agent's option of this index, as
    /// its digit key would.
    pub(crate) fn pick_agent_option(&mut self, index: usize) -> Vec<Effect> {
        self.pick(Answer::Option(index))
    }

    fn pick(&mut self, choice: Answer) -> Vec<Effect> {
        let pick = Pick {
            choice,
            by: By::You,
        };
        self.on_pick(self.view.cursor.selected, pick)
    }

    /// A network card's `b`: its host and port allowed for this chat now,
    /// and for the agent from now on (`allow_hosts` in its settings block,
    /// which the proxy lets through without asking next time). Narrow
    /// enough (one host and port) to need no question.
    fn always_allow_host(&mut self) -> Vec<Effect> {
        let selected = self.view.cursor.selected;
        let Some(approval) = self.gate.approvals.get(selected) else {
            return Vec::new();
        };
        let options = &approval.request.options;
        let Some(index) = allow_option(options).and_then(|o| index_of(options, o)) else {
            self.view.notice = Some(no_allow_notice(approval));
            return Vec::new();
        };
        let Some((host, port)) = crate::policy::network::target(&approval.view) else {
            return Vec::new();
        };
        let agent = self.settings_agent();
        let Some(approval) = self.take_approval(selected) else {
            return Vec::new();
        };
        let mut effects = self.grant_for_chat(approval, index, None);
        effects.push(Effect::EditSettings(
            crate::state::SettingsEdit::AllowHost {
                agent,
                host: format!("{host}:{port}"),
            },
        ));
        effects
    }

    fn choose(&mut self, choice: Choice) -> Vec<Effect> {
        match choice {
            Choice::Allow => self.pick(Answer::Allow),
            Choice::Deny => self.pick(Answer::Deny),
            Choice::AgentOption(i) => self.pick(Answer::Option(i)),
            Choice::KeepRule => {
                self.start_keep_rule();
                Vec::new()
            }
            Choice::AllowForChat => {
                let Some(approval) = self.gate.approvals.get(self.view.cursor.selected) else {
                    return Vec::new();
                };
                let options = &approval.request.options;
                let Some(index) = allow_option(options).and_then(|o| index_of(options, o)) else {
                    self.view.notice = Some(no_allow_notice(approval));
                    return Vec::new();
                };
                match self.take_approval(self.view.cursor.selected) {
                    Some(approval) => self.grant_for_chat(approval, index, None),
                    None => Vec::new(),
                }
            }
            Choice::Bypass => {
                let Some(approval) = self.gate.approvals.get(self.view.cursor.selected) else {
                    return Vec::new();
                };
                if approval.view.card == crate::gate::CardKind::Network {
                    return self.always_allow_host();
                }
                if allow_option(&approval.request.options).is_none() {
                    self.view.notice = Some(no_allow_notice(approval));
                    return Vec::new();
                }
                self.view
                    .focus
                    .open(Modal::Confirm(Question::Bypass(approval.id)));
                Vec::new()
            }
            Choice::DenyWithReason => {
                if let Some(approval) = self.gate.approvals.get(self.view.cursor.selected) {
                    let card = approval.id;
                    self.view.focus.open(Modal::Reason {
                        card,
                        field: Composer::default(),
                    });
                }
                Vec::new()
            }
            Choice::ApproveAll => {
                // Only cards the user could have seen at the key press: one
                // that came just before it is not approved unseen.
                let ids: Vec<RequestId> = self
                    .gate
                    .approvals
                    .iter()
                    .filter(|a| self.seen_at_press(a))
                    .map(|a| a.id)
                    .collect();
                if ids.is_empty() {
                    return self.not_armed();
                }
                self.view.focus.open(Modal::ConfirmAll(ids));
                Vec::new()
            }
        }
    }

    /// The bypass is confirmed: set it, allow the card `b` was pressed on
    /// (if it still waits), and ask about the other waiting cards it would
    /// allow.
    fn bypass_confirmed(&mut self, card: RequestId) -> Vec<Effect> {
        self.gate.agent_policy.bypass = true;
        let mut effects = vec![self.persist_bypass()];
        let index = self.gate.approvals.iter().position(|a| a.id == card);
        if let Some(approval) = index.and_then(|i| self.take_approval(i)) {
            let option = allow_option(&approval.request.options).map(|o| o.id.clone());
            if let Some(id) = option {
                let reason = format!("bypass for {} (set by you)", self.bypass_name());
                effects.extend(self.answer(
                    &approval,
                    PermissionOutcome::Selected(id),
                    "allowed",
                    Source::Bypass,
                    &reason,
                ));
            }
        }
        effects.extend(self.redecide_covered());
        effects
    }

    /// Allow card `card` as `y` would (a rule was just kept from it); a
    /// card gone meanwhile allows nothing.
    pub(crate) fn allow_card(&mut self, card: RequestId) -> Vec<Effect> {
        let Some(index) = self.gate.approvals.iter().position(|a| a.id == card) else {
            return Vec::new();
        };
        let pick = Pick {
            choice: Answer::Allow,
            by: By::You,
        };
        self.on_pick(index, pick)
    }

    /// Keys while typing a denial reason for `card`.
    pub(crate) fn on_reason_key(
        &mut self,
        action: &Action,
        key: Option<Key>,
        card: RequestId,
        mut field: Composer,
    ) -> Vec<Effect> {
        match keys::lookup_key(keys::REASON, key) {
            Some(FieldCmd::Done) => {
                let reason = field.take();
                let reason = reason.trim().to_string();
                if reason.is_empty() {
                    self.view.focus.open(Modal::Reason { card, field });
                    self.view.notice =
                        Some("type why the agent should not do this, then Enter".into());
                    return Vec::new();
                }
                // The card the field was opened for, wherever the queue
                // moved it meanwhile; gone, nothing is denied.
                let index = self.gate.approvals.iter().position(|a| a.id == card);
                let Some(approval) = index.and_then(|i| self.take_approval(i)) else {
                    self.view.notice =
                        Some("that card was withdrawn meanwhile: nothing denied".into());
                    return Vec::new();
                };
                self.deny_with_reason(approval, reason, By::You)
            }
            Some(FieldCmd::Back) => Vec::new(),
            None => {
                crate::state::edit_composer(&mut field, action);
                self.view.focus.open(Modal::Reason { card, field });
                Vec::new()
            }
        }
    }

    /// Keys while "approve all?" is asked.
    pub(crate) fn on_confirm_key(&mut self, key: Option<Key>, ids: Vec<RequestId>) -> Vec<Effect> {
        match keys::lookup_key(keys::CONFIRM_ALL, key) {
            Some(AnswerCmd::Yes) => {
                let mut effects = Vec::new();
                for id in ids {
                    let Some(index) = self.gate.approvals.iter().position(|a| a.id == id) else {
                        continue;
                    };
                    // A card with nothing to allow that keeps the agent
                    // asking stays for a look of its own.
                    let pick = Pick {
                        choice: Answer::Allow,
                        by: By::ApproveAll,
                    };
                    effects.extend(self.on_pick(index, pick));
                }
                effects
            }
            _ => Vec::new(),
        }
    }
}

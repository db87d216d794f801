//! The keys that move about a card, and those of what opens under it: the
//! denial reason, a kept rule's pattern, warden's questions, a form.

use super::b;
use crate::keys::{Binding, Code, Hint, Key};

use Code as K;

/// What a key on the cards does besides picking a choice (the choices,
/// their keys among them, are the card's own: `state::CHOICES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CardCmd {
    /// The next card.
    Next,
    /// The previous card.
    Prev,
    /// Highlight the choice above.
    ChoiceUp,
    /// Highlight the choice below.
    ChoiceDown,
    /// Pick the highlighted choice.
    Pick,
    /// Show long input in full.
    Expand,
    /// Scroll the card up.
    ScrollUp,
    /// Scroll the card down.
    ScrollDown,
    /// Back to typing (the footer's Ctrl-P; handled before the cards).
    ToComposer,
    /// Show the keys of the cards.
    Help,
}

/// The keys that move about a card (its choices' keys come first in the
/// help: `state::CHOICES`).
pub(crate) const CARDS: &[Binding<CardCmd>] = &[
    b(
        &[Key::plain(K::Tab), Key::ch('j')],
        "next",
        "next / previous card",
        Hint::CardShort,
        CardCmd::Next,
    ),
    b(
        &[Key::ch('k')],
        "previous",
        "next / previous card",
        Hint::No,
        CardCmd::Prev,
    ),
    b(
        &[Key::plain(K::Up)],
        "up",
        "highlight and pick a choice (a fresh card highlights the plain allow once, whatever the agent's order; never an \"always\")",
        Hint::No,
        CardCmd::ChoiceUp,
    ),
    b(
        &[Key::plain(K::Down)],
        "down",
        "highlight and pick a choice (a fresh card highlights the plain allow once, whatever the agent's order; never an \"always\")",
        Hint::No,
        CardCmd::ChoiceDown,
    ),
    b(
        &[Key::plain(K::Enter), Key::plain(K::Click)],
        "pick",
        "highlight and pick a choice (a fresh card highlights the plain allow once, whatever the agent's order; never an \"always\")",
        Hint::No,
        CardCmd::Pick,
    ),
    b(
        &[Key::ch('e')],
        "expand",
        "expand long input, scroll the card",
        Hint::CardShort,
        CardCmd::Expand,
    ),
    b(
        &[Key::shift(K::Up)],
        "scroll",
        "expand long input, scroll the card",
        Hint::No,
        CardCmd::ScrollUp,
    ),
    b(
        &[Key::shift(K::Down)],
        "scroll",
        "expand long input, scroll the card",
        Hint::No,
        CardCmd::ScrollDown,
    ),
    b(
        &[Key::ctrl(K::Char('p'))],
        "type",
        "move between the cards and the composer",
        Hint::CardShort,
        CardCmd::ToComposer,
    ),
    b(
        &[Key::ch('?'), Key::plain(K::F(1))],
        "keys",
        "show these keys; ↑/↓ scroll them, any other key closes them",
        Hint::No,
        CardCmd::Help,
    ),
];

/// What a key does in a one-line field under a card (a denial reason, a
/// kept rule's pattern); other keys edit the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldCmd {
    /// Enter: done.
    Done,
    /// Esc: back to the choices.
    Back,
}

/// The keys while a denial reason is typed.
pub(crate) const REASON: &[Binding<FieldCmd>] = &[
    b(
        &[Key::plain(K::Enter)],
        "deny and send the reason",
        "deny, cancel the turn and send the reason as the next prompt",
        Hint::CardShort,
        FieldCmd::Done,
    ),
    b(
        &[Key::plain(K::Esc)],
        "back to the choices",
        "back to the choices",
        Hint::CardShort,
        FieldCmd::Back,
    ),
];

/// What a key does while the pattern of a kept rule is edited; other keys
/// edit the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleCmd {
    /// Enter: keep the rule and allow the card it came from.
    Done,
    /// Tab: the other pattern on offer (the file, or its directory's glob).
    Other,
    /// Esc: back to the choices.
    Back,
}

/// The keys while the pattern of a kept rule is edited.
pub(crate) const KEEP_RULE: &[Binding<RuleCmd>] = &[
    b(
        &[Key::plain(K::Enter)],
        "keep and allow",
        "keep the rule (appended to the settings file) and allow this card",
        Hint::CardShort,
        RuleCmd::Done,
    ),
    b(
        &[Key::plain(K::Tab)],
        "wider / narrower",
        "the other pattern on offer: the file's directory, or back to the file",
        Hint::No,
        RuleCmd::Other,
    ),
    b(
        &[Key::plain(K::Esc)],
        "back",
        "back to the choices",
        Hint::CardShort,
        RuleCmd::Back,
    ),
];

/// An answer to a question warden asks (approve all? bypass?).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerCmd {
    /// Yes.
    Yes,
    /// No (so is any key without a binding).
    No,
    /// Shift+Tab: no, and on to the next mode.
    NextMode,
}

/// The keys while warden asks before trust widens.
pub(crate) const QUESTION: &[Binding<AnswerCmd>] = &[
    b(
        &[Key::ch('y'), Key::ch('Y'), Key::plain(K::Enter)],
        "yes",
        "yes",
        Hint::CardShort,
        AnswerCmd::Yes,
    ),
    b(
        &[Key::ch('n'), Key::plain(K::Esc)],
        "or Esc no",
        "no (so is any other key)",
        Hint::CardShort,
        AnswerCmd::No,
    ),
    b(
        &[Key::plain(K::BackTab)],
        "next mode",
        "after a mode change: no, and on to the next mode",
        Hint::No,
        AnswerCmd::NextMode,
    ),
];

/// The keys while "approve all?" is asked.
pub(crate) const CONFIRM_ALL: &[Binding<AnswerCmd>] = &[
    b(
        &[Key::ch('y'), Key::ch('A'), Key::plain(K::Enter)],
        "yes",
        "approve every card that was pending at the key press",
        Hint::CardShort,
        AnswerCmd::Yes,
    ),
    b(
        &[Key::ch('n'), Key::plain(K::Esc)],
        "no",
        "no (so is any other key)",
        Hint::CardShort,
        AnswerCmd::No,
    ),
];

/// What a key does while a form elicitation is filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormCmd {
    /// Back to the card (the form is kept).
    Back,
    /// The field above.
    Prev,
    /// The field below.
    Next,
    /// The previous value of a list or yes/no field.
    CycleBack,
    /// The next value of a list or yes/no field.
    Cycle,
    /// Erase the last character (a list or yes/no field: its value).
    Erase,
    /// Check the required fields and accept with the values.
    Send,
}

/// The keys while a form elicitation is filled in on its card (`y` on a
/// form card); other characters are typed into a text or number field,
/// Space toggles a yes/no or list field.
pub(crate) const FORM: &[Binding<FormCmd>] = &[
    b(
        &[Key::plain(K::Up), Key::plain(K::BackTab)],
        "previous",
        "the field above / below",
        Hint::No,
        FormCmd::Prev,
    ),
    b(
        &[Key::plain(K::Down), Key::plain(K::Tab)],
        "next",
        "the field above / below",
        Hint::No,
        FormCmd::Next,
    ),
    b(
        &[Key::plain(K::Left)],
        "previous value",
        "change a list or yes/no field (Space too)",
        Hint::No,
        FormCmd::CycleBack,
    ),
    b(
        &[Key::plain(K::Right)],
        "next value",
        "change a list or yes/no field (Space too)",
        Hint::No,
        FormCmd::Cycle,
    ),
    b(
        &[Key::plain(K::Backspace)],
        "erase",
        "erase the last character (a list or yes/no field: clear it)",
        Hint::No,
        FormCmd::Erase,
    ),
    b(
        &[Key::plain(K::Enter)],
        "accept",
        "check the required fields and accept with the values",
        Hint::No,
        FormCmd::Send,
    ),
    b(
        &[Key::plain(K::Esc)],
        "back",
        "back to the card (the values are kept until the card is answered)",
        Hint::No,
        FormCmd::Back,
    ),
];

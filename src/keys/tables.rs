//! The key tables: per context, its bindings (key, label, help, hint,
//! command). The types and the rendering are in [`crate::keys`].

use super::{Action, Binding, Code, Hint, Key, Scroll};

const fn b<C>(
    keys: &'static [Key],
    label: &'static str,
    help: &'static str,
    hint: Hint,
    cmd: C,
) -> Binding<C> {
    Binding {
        keys,
        label,
        help,
        hint,
        cmd,
    }
}

/// What a key of the composer and chat tables does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Global {
    /// Give the state this action.
    Act(Action),
    /// Move the transcript view.
    Scroll(Scroll),
    /// With an empty message, move the view to this end; else this action
    /// (Home and End).
    EdgeOrLine(Scroll, Action),
    /// Go to the chat of the digit pressed (Alt+1..9).
    GoToChat,
    /// Ctrl-C: [`Action::Interrupt`] stamped with the time of the press.
    Interrupt,
    /// Release the mouse to the terminal (its own selection works), or
    /// take it back (render-side, not the state's).
    ToggleMouse,
}

use Code as K;
use Global::{Act, Scroll as S};

/// The composer, and the keys that mean the same wherever the keys are.
pub(crate) const COMPOSER: &[Binding<Global>] = &[
    b(
        &[Key::plain(K::Enter)],
        "send",
        "send the message",
        Hint::No,
        Act(Action::Submit),
    ),
    b(
        &[
            Key::alt(K::Enter),
            Key::shift(K::Enter),
            Key::ctrl(K::Char('j')),
        ],
        "new line",
        "new line in the message",
        Hint::No,
        Act(Action::Newline),
    ),
    b(
        &[Key::plain(K::Left)],
        "left",
        "move in the message",
        Hint::No,
        Act(Action::Left),
    ),
    b(
        &[Key::plain(K::Right)],
        "right",
        "move in the message",
        Hint::No,
        Act(Action::Right),
    ),
    b(
        &[Key::plain(K::Up)],
        "up",
        "on an empty message, or on its first / last line: earlier prompts of this working directory (↓ past the newest gives the draft back); else move in the message",
        Hint::No,
        Act(Action::Up),
    ),
    b(
        &[Key::plain(K::Down)],
        "down",
        "on an empty message, or on its first / last line: earlier prompts of this working directory (↓ past the newest gives the draft back); else move in the message",
        Hint::No,
        Act(Action::Down),
    ),
    b(
        &[Key::ctrl(K::Char('a'))],
        "line start",
        "move in the message",
        Hint::No,
        Act(Action::LineStart),
    ),
    b(
        &[Key::ctrl(K::Char('e'))],
        "line end",
        "move in the message",
        Hint::No,
        Act(Action::LineEnd),
    ),
    b(
        &[
            Key::alt(K::Left),
            Key::ctrl(K::Left),
            Key::alt(K::Char('b')),
        ],
        "word left",
        "move in the message",
        Hint::No,
        Act(Action::WordLeft),
    ),
    b(
        &[
            Key::alt(K::Right),
            Key::ctrl(K::Right),
            Key::alt(K::Char('f')),
        ],
        "word right",
        "move in the message",
        Hint::No,
        Act(Action::WordRight),
    ),
    b(
        &[Key::plain(K::Backspace)],
        "delete",
        "edit the message",
        Hint::No,
        Act(Action::Backspace),
    ),
    b(
        &[Key::plain(K::Delete)],
        "delete",
        "edit the message",
        Hint::No,
        Act(Action::Delete),
    ),
    b(
        &[
            Key::ctrl(K::Char('w')),
            Key::alt(K::Backspace),
            Key::ctrl(K::Backspace),
        ],
        "delete word",
        "edit the message",
        Hint::No,
        Act(Action::DeleteWordBack),
    ),
    b(
        &[Key::ctrl(K::Char('u'))],
        "kill",
        "edit the message",
        Hint::No,
        Act(Action::KillLineStart),
    ),
    b(
        &[Key::ctrl(K::Char('k'))],
        "kill",
        "edit the message",
        Hint::No,
        Act(Action::KillLineEnd),
    ),
    b(
        &[Key::plain(K::Tab)],
        "tab",
        "complete in the command and file lists; else a tab in the message; on the cards, the next card",
        Hint::No,
        Act(Action::Tab),
    ),
    b(
        &[Key::ch('/')],
        "commands",
        "at the start of the message: the slash commands, warden's own (each listed here) and the agent's, filtered as you type (↑/↓, Tab complete, Enter run, Esc close)",
        Hint::No,
        Act(Action::Char('/')),
    ),
    b(
        &[Key::ch('@')],
        "files",
        "at a word's start: the file finder, fuzzy, `.gitignore` respected (↑/↓, Tab or Enter insert `@path`, Esc close); a mentioned file goes with the prompt",
        Hint::No,
        Act(Action::Char('@')),
    ),
    b(
        &[Key::plain(K::Esc)],
        "cancel",
        "cancel the running turn (`session/cancel`; pending permission requests are answered `cancelled`)",
        Hint::No,
        Act(Action::Cancel),
    ),
    b(
        &[Key::plain(K::PageUp)],
        "scroll",
        "scroll the transcript (also the mouse wheel); new output follows only while at the bottom",
        Hint::Footer(0),
        S(Scroll::PageUp),
    ),
    b(
        &[Key::plain(K::PageDown)],
        "scroll",
        "scroll the transcript (also the mouse wheel); new output follows only while at the bottom",
        Hint::Footer(0),
        S(Scroll::PageDown),
    ),
    b(
        &[Key::plain(K::Home)],
        "top",
        "start / end of the line; with an empty message, top / bottom of the transcript",
        Hint::No,
        Global::EdgeOrLine(Scroll::Top, Action::LineStart),
    ),
    b(
        &[Key::plain(K::End)],
        "bottom",
        "start / end of the line; with an empty message, top / bottom of the transcript",
        Hint::No,
        Global::EdgeOrLine(Scroll::Bottom, Action::LineEnd),
    ),
    b(
        &[Key::ctrl(K::Home)],
        "top",
        "top / bottom of the transcript",
        Hint::No,
        S(Scroll::Top),
    ),
    b(
        &[Key::ctrl(K::End)],
        "bottom",
        "top / bottom of the transcript",
        Hint::No,
        S(Scroll::Bottom),
    ),
    b(
        &[Key::ctrl(K::Char('t'))],
        "thoughts",
        "fold / unfold the agent's thoughts",
        Hint::Footer(1),
        Act(Action::ToggleThoughts),
    ),
    b(
        &[Key::ctrl(K::Char('o'))],
        "expand",
        "show the whole output of terminals and tool calls / only their first or last lines",
        Hint::No,
        Act(Action::ToggleTerminals),
    ),
    b(
        &[Key::ctrl(K::Char('s'))],
        "send now",
        "queue what is typed, cancel the running turn and send the queue now (Enter during a turn queues the message; the queue is sent as each turn ends)",
        Hint::No,
        Act(Action::SendNow),
    ),
    b(
        &[Key::alt(K::Up)],
        "edit queued",
        "take the newest queued message back into the composer",
        Hint::No,
        Act(Action::EditQueued),
    ),
    b(
        &[Key::ctrl(K::Char('y'))],
        "restore",
        "bring back the text Ctrl-C, Ctrl-U or Ctrl-K last cleared",
        Hint::No,
        Act(Action::Restore),
    ),
    b(
        &[Key::ctrl(K::Char('x'))],
        "editor",
        "edit the message in $VISUAL / $EDITOR (else vi)",
        Hint::No,
        Act(Action::Editor),
    ),
    b(
        &[Key::ctrl(K::Char('f'))],
        "search",
        "search the transcript: type, Enter; then n older / N newer match (↑/↓ too), Ctrl-F edit the query, Esc close",
        Hint::No,
        Act(Action::Search),
    ),
    b(
        &[Key::alt(K::Char('c'))],
        "copy",
        "copy the search match's message, else the last answer (OSC 52)",
        Hint::No,
        Act(Action::Copy),
    ),
    b(
        &[Key::alt(K::Char('y'))],
        "copy code",
        "copy the last code block of that message",
        Hint::No,
        Act(Action::CopyCode),
    ),
    b(
        &[Key::alt(K::Char('s'))],
        "mouse",
        "release the mouse to the terminal for its own selection, and take it back",
        Hint::No,
        Global::ToggleMouse,
    ),
    b(
        &[Key::ctrl(K::Char('g'))],
        "rules",
        "the rules screen: review and revoke bypasses, rules and this chat's grants",
        Hint::Footer(2),
        Act(Action::RulesScreen),
    ),
    b(
        &[Key::ctrl(K::Char('p'))],
        "cards",
        "move between the composer and the waiting cards",
        Hint::No,
        Act(Action::ToggleCards),
    ),
    b(
        &[Key::shift(K::Up)],
        "scroll card",
        "scroll the selected card",
        Hint::No,
        Act(Action::CardScroll(-3)),
    ),
    b(
        &[Key::shift(K::Down)],
        "scroll card",
        "scroll the selected card",
        Hint::No,
        Act(Action::CardScroll(3)),
    ),
    b(
        &[Key::plain(K::BackTab)],
        "mode",
        "cycle the chat's mode: Plan → Default → Auto",
        Hint::Footer(4),
        Act(Action::BackTab),
    ),
    b(
        &[Key::alt(K::Char('m')), Key::plain(K::F(2))],
        "mode menu",
        "open the mode dropdown (↑/↓, Enter)",
        Hint::No,
        Act(Action::OpenModeMenu),
    ),
    b(
        &[Key::ctrl(K::Char('r'))],
        "restart",
        "search earlier prompts (type, Ctrl-R older match, Enter take, Esc back); after the agent exited, restart it instead (also `r` on an empty message), continuing the same session (`session/resume`, else `session/load` with its replay not shown again, else a new session, said in the chat); every chat of the crashed process restarts with the one key (Ctrl-R also replaces an agent that never ended a cancelled turn)",
        Hint::No,
        Act(Action::Restart),
    ),
    b(
        &[Key::plain(K::F(1))],
        "help",
        "show every key of where the keys are (also `?` on an empty message); ↑/↓ scroll it, any other key closes it",
        Hint::No,
        Act(Action::Help),
    ),
    b(
        &[Key::ctrl(K::Char('c'))],
        "cancel",
        "cancel the running turn (as Esc); else clear the message; on an empty message, press it twice within a second to quit",
        Hint::No,
        Global::Interrupt,
    ),
    b(
        &[Key::ctrl(K::Char('d'))],
        "quit",
        "quit at once, from anywhere (every chat's running turn is cancelled, its waiting cards answered as cancelled)",
        Hint::Footer(5),
        Act(Action::Quit),
    ),
];

/// The keys for several chats (they work wherever a chat has the keys).
pub(crate) const CHATS: &[Binding<Global>] = &[
    b(
        &[Key::ctrl(K::Char('n'))],
        "new chat",
        "new chat (choose the agent when several are configured)",
        Hint::No,
        Act(Action::NewChat),
    ),
    b(
        &[Key::alt(K::Digits)],
        "chat N",
        "go to chat N",
        Hint::No,
        Global::GoToChat,
    ),
    b(
        &[Key::alt(K::Char('n')), Key::ctrl(K::PageDown)],
        "next chat",
        "next / previous chat",
        Hint::No,
        Act(Action::NextChat),
    ),
    b(
        &[Key::alt(K::Char('p')), Key::ctrl(K::PageUp)],
        "previous chat",
        "next / previous chat",
        Hint::No,
        Act(Action::PrevChat),
    ),
    b(
        &[Key::ctrl(K::Char('l'))],
        "chats",
        "the chat list (its keys below)",
        Hint::Footer(3),
        Act(Action::ChatList),
    ),
    b(
        &[Key::alt(K::Char('w'))],
        "close chat",
        "close the chat (asks first when a turn runs or cards wait; they are cancelled)",
        Hint::No,
        Act(Action::CloseChat),
    ),
    b(
        &[Key::alt(K::Char('o'))],
        "past chats",
        "reopen a past chat: the recorded chats and the agent's own sessions, newest first, type to filter",
        Hint::No,
        Act(Action::PastChats),
    ),
];

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

/// What a key does in a list (the mode dropdown, the rules screen, the
/// chat list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListCmd {
    /// Highlight the item above.
    Up,
    /// Highlight the item below.
    Down,
    /// Pick the highlighted item.
    Pick,
    /// Remove (revoke, close) the highlighted item.
    Remove,
    /// Rename the highlighted item.
    Rename,
    /// A new item.
    New,
    /// The item of the digit pressed.
    Digit,
    /// The picker of past chats.
    Past,
    /// Hide or show the sidebar.
    Sidebar,
    /// Close the list.
    Close,
    /// Show the list's keys.
    Help,
}

/// The keys while the mode dropdown is open.
pub(crate) const MODE_MENU: &[Binding<ListCmd>] = &[
    b(
        &[Key::plain(K::Up), Key::plain(K::BackTab)],
        "up",
        "highlight a mode",
        Hint::No,
        ListCmd::Up,
    ),
    b(
        &[Key::plain(K::Down), Key::plain(K::Tab)],
        "down",
        "highlight a mode",
        Hint::No,
        ListCmd::Down,
    ),
    b(
        &[Key::plain(K::Enter), Key::plain(K::Click)],
        "pick",
        "switch to the highlighted mode or option",
        Hint::No,
        ListCmd::Pick,
    ),
    b(
        &[Key::plain(K::Esc)],
        "close",
        "close the dropdown (so does any other key)",
        Hint::No,
        ListCmd::Close,
    ),
];

/// The keys on the rules screen (Ctrl+G).
pub(crate) const RULES: &[Binding<ListCmd>] = &[
    b(
        &[Key::plain(K::Up), Key::ch('k')],
        "up",
        "highlight a line",
        Hint::No,
        ListCmd::Up,
    ),
    b(
        &[Key::plain(K::Down), Key::ch('j')],
        "down",
        "highlight a line",
        Hint::No,
        ListCmd::Down,
    ),
    b(
        &[
            Key::ch('d'),
            Key::ch('x'),
            Key::plain(K::Delete),
            Key::plain(K::Backspace),
        ],
        "revoke",
        "revoke the highlighted bypass, rule or grant (asks y first)",
        Hint::No,
        ListCmd::Remove,
    ),
    b(
        &[Key::plain(K::Esc), Key::ch('q'), Key::ctrl(K::Char('g'))],
        "close",
        "close the rules screen",
        Hint::No,
        ListCmd::Close,
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

/// The keys in the chat list (Ctrl+L).
pub(crate) const CHAT_LIST: &[Binding<ListCmd>] = &[
    b(
        &[Key::plain(K::Up)],
        "up",
        "highlight a chat",
        Hint::No,
        ListCmd::Up,
    ),
    b(
        &[Key::plain(K::Down), Key::plain(K::Tab)],
        "down",
        "highlight a chat",
        Hint::No,
        ListCmd::Down,
    ),
    b(
        &[Key::plain(K::Enter)],
        "go",
        "go to the highlighted chat",
        Hint::No,
        ListCmd::Pick,
    ),
    b(
        &[Key::plain(K::Digits)],
        "chat N",
        "go to chat N",
        Hint::No,
        ListCmd::Digit,
    ),
    b(&[Key::ch('n')], "new", "new chat", Hint::No, ListCmd::New),
    b(
        &[Key::ch('r')],
        "rename",
        "rename the highlighted chat",
        Hint::No,
        ListCmd::Rename,
    ),
    b(
        &[Key::ch('x'), Key::ch('d')],
        "close",
        "close the highlighted chat",
        Hint::No,
        ListCmd::Remove,
    ),
    b(
        &[Key::ch('o')],
        "past chats",
        "reopen a past chat",
        Hint::No,
        ListCmd::Past,
    ),
    b(
        &[Key::ch('s')],
        "sidebar",
        "hide / show the sidebar",
        Hint::No,
        ListCmd::Sidebar,
    ),
    b(
        &[Key::plain(K::Esc), Key::ctrl(K::Char('l'))],
        "back",
        "back to the chat",
        Hint::No,
        ListCmd::Close,
    ),
    b(
        &[Key::ch('?'), Key::plain(K::F(1))],
        "keys",
        "show these keys; ↑/↓ scroll them, any other key closes them",
        Hint::No,
        ListCmd::Help,
    ),
];

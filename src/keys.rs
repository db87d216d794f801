//! Every key of warden, once: for each context (the composer, the cards,
//! the chat list, ...) a table of bindings, each one key (or several),
//! a short label, a longer help text and what it does. The keymap reads
//! the composer and chat tables to turn a key press into an
//! [`Action`]; the state reads the context tables to decide what an action
//! means there; the card's hint line, the footer's hints, the help overlay
//! (F1, or `?` on an empty message) and the README's key tables are all
//! rendered from the same tables, so they cannot drift apart. (The shape
//! follows codex-rs/tui's `ApprovalOption`: a label, a decision and its
//! shortcuts in one value.)
//!
//! Adding a key is one entry in one table (and, for a new context, one
//! arm in [`Context::rows`]).

use crate::state::Action;
use crate::ui::Scroll;

/// A key without modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A character key (shown upper case with Ctrl or Alt).
    Char(char),
    /// Any of the digits 1 to 9 (the binding's command gets the digit).
    Digits,
    Enter,
    Esc,
    Tab,
    /// Shift+Tab.
    BackTab,
    Backspace,
    Delete,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    PageUp,
    PageDown,
    /// A function key.
    F(u8),
    /// A mouse click on the thing (shown only; never pressed).
    Click,
    /// The mouse wheel (shown only; the keymap maps wheel events itself).
    Wheel,
}

/// A key with its modifiers, as warden names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: Code,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Key {
    /// The key alone.
    pub const fn plain(code: Code) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// A character key alone.
    pub const fn ch(c: char) -> Key {
        Key::plain(Code::Char(c))
    }

    /// Ctrl and the key.
    pub const fn ctrl(code: Code) -> Key {
        Key {
            ctrl: true,
            ..Key::plain(code)
        }
    }

    /// Alt and the key.
    pub const fn alt(code: Code) -> Key {
        Key {
            alt: true,
            ..Key::plain(code)
        }
    }

    /// Shift and the key.
    pub const fn shift(code: Code) -> Key {
        Key {
            shift: true,
            ..Key::plain(code)
        }
    }

    /// Whether pressing `pressed` is this key (a [`Code::Digits`] key is
    /// any digit from 1 to 9).
    pub fn matches(&self, pressed: Key) -> bool {
        let code = match (self.code, pressed.code) {
            (Code::Digits, Code::Char('1'..='9')) => true,
            (a, b) => a == b,
        };
        code && self.ctrl == pressed.ctrl && self.alt == pressed.alt && self.shift == pressed.shift
    }

    /// The key's name: `Ctrl+T` with `sep` '+', `Ctrl-T` with '-'.
    pub fn name(&self, sep: char) -> String {
        let mut out = String::new();
        for (on, name) in [
            (self.ctrl, "Ctrl"),
            (self.alt, "Alt"),
            (self.shift, "Shift"),
        ] {
            if on {
                out.push_str(name);
                out.push(sep);
            }
        }
        let modified = self.ctrl || self.alt;
        match self.code {
            Code::Char(c) if modified => out.extend(c.to_uppercase()),
            Code::Char(c) => out.push(c),
            Code::Digits if modified => out.push_str("1..9"),
            Code::Digits => out.push_str("1-9"),
            Code::BackTab => {
                out.push_str("Shift");
                out.push(sep);
                out.push_str("Tab");
            }
            Code::F(n) => out.push_str(&format!("F{n}")),
            other => out.push_str(match other {
                Code::Enter => "Enter",
                Code::Esc => "Esc",
                Code::Tab => "Tab",
                Code::Backspace => "Backspace",
                Code::Delete => "Delete",
                Code::Left => "←",
                Code::Right => "→",
                Code::Up => "↑",
                Code::Down => "↓",
                Code::Home => "Home",
                Code::End => "End",
                Code::PageUp => "PgUp",
                Code::PageDown => "PgDn",
                Code::Click => "mouse click",
                Code::Wheel => "mouse wheel",
                Code::Char(_) | Code::Digits | Code::BackTab | Code::F(_) => "",
            }),
        }
        out
    }

    /// The key that most plausibly produced `action` in a context table's
    /// terms: what the state looks up in [`CARDS`], [`MODE_MENU`], ...
    /// (the keymap turned the press into an action through [`COMPOSER`]).
    pub fn of_action(action: &Action) -> Option<Key> {
        Some(match action {
            Action::Char(c) => Key::ch(*c),
            Action::Submit => Key::plain(Code::Enter),
            Action::Cancel => Key::plain(Code::Esc),
            Action::Tab => Key::plain(Code::Tab),
            Action::BackTab => Key::plain(Code::BackTab),
            Action::Up => Key::plain(Code::Up),
            Action::Down => Key::plain(Code::Down),
            Action::Left => Key::plain(Code::Left),
            Action::Right => Key::plain(Code::Right),
            Action::Backspace => Key::plain(Code::Backspace),
            Action::Delete => Key::plain(Code::Delete),
            Action::CardScroll(d) if *d < 0 => Key::shift(Code::Up),
            Action::CardScroll(_) => Key::shift(Code::Down),
            Action::ToggleCards => Key::ctrl(Code::Char('p')),
            Action::RulesScreen => Key::ctrl(Code::Char('g')),
            Action::ChatList => Key::ctrl(Code::Char('l')),
            Action::Help => Key::plain(Code::F(1)),
            _ => return None,
        })
    }
}

/// Where a binding shows besides the help overlay and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Only in the help overlay and the README.
    No,
    /// In the card's full hint line.
    Card,
    /// In the card's full and short hint lines.
    CardShort,
    /// In the footer's hints, this many-th (the footer drops the lowest first).
    Footer(u8),
}

/// One key binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding<C> {
    /// The keys that do it; the first is the one hints show.
    pub keys: &'static [Key],
    /// A word or two for hint lines: "allow".
    pub label: &'static str,
    /// What it does, for the help overlay and the README. Bindings in a
    /// row with the same help text share one line there.
    pub help: &'static str,
    /// Where else it shows.
    pub hint: Hint,
    /// What it does.
    pub cmd: C,
}

/// Find the binding of `key` in `table`.
pub fn lookup<C: Clone>(table: &[Binding<C>], key: Key) -> Option<C> {
    table
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(key)))
        .map(|b| b.cmd.clone())
}

/// The on-screen name of the first key bound to `cmd` in `table` ("Ctrl-P").
pub fn key_name<C: PartialEq>(table: &[Binding<C>], cmd: &C) -> String {
    table
        .iter()
        .find(|b| &b.cmd == cmd)
        .and_then(|b| b.keys.first())
        .map(|k| k.name('-'))
        .unwrap_or_default()
}

/// Find what `action` means in `table` (see [`Key::of_action`]).
pub fn lookup_action<C: Clone>(table: &[Binding<C>], action: &Action) -> Option<C> {
    lookup(table, Key::of_action(action)?)
}

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
pub enum Global {
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
pub const COMPOSER: &[Binding<Global>] = &[
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
        "move in the message",
        Hint::No,
        Act(Action::Up),
    ),
    b(
        &[Key::plain(K::Down)],
        "down",
        "move in the message",
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
        "a tab in the message; on the cards, the next card",
        Hint::No,
        Act(Action::Tab),
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
        "show every key of where the keys are (also `?` on an empty message); any key closes it",
        Hint::No,
        Act(Action::Help),
    ),
    b(
        &[Key::ctrl(K::Char('c'))],
        "quit",
        "cancel the running turn (as Esc); else clear the message; on an empty message, press it twice within a second to quit",
        Hint::Footer(5),
        Global::Interrupt,
    ),
    b(
        &[Key::ctrl(K::Char('d'))],
        "quit",
        "quit",
        Hint::No,
        Act(Action::Quit),
    ),
];

/// The keys for several chats (they work wherever a chat has the keys).
pub const CHATS: &[Binding<Global>] = &[
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

/// What a key on the cards does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardCmd {
    /// Allow once.
    Allow,
    /// Deny.
    Deny,
    /// The agent's option of the digit pressed.
    AgentOption,
    /// Allow for this chat.
    AllowForChat,
    /// Bypass this agent.
    Bypass,
    /// Deny with a reason.
    DenyWithReason,
    /// Approve every waiting card.
    ApproveAll,
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
    /// Keep the request as a rule.
    KeepRule,
    /// Back to typing (the footer's Ctrl-P; handled before the cards).
    ToComposer,
    /// Show the keys of the cards.
    Help,
}

/// The keys on a card.
pub const CARDS: &[Binding<CardCmd>] = &[
    b(
        &[Key::ch('y')],
        "allow",
        "allow once / deny",
        Hint::CardShort,
        CardCmd::Allow,
    ),
    b(
        &[Key::ch('n')],
        "deny",
        "allow once / deny",
        Hint::CardShort,
        CardCmd::Deny,
    ),
    b(
        &[Key::plain(K::Digits)],
        "options",
        "the agent's own options",
        Hint::Card,
        CardCmd::AgentOption,
    ),
    b(
        &[Key::ch('a')],
        "chat",
        "allow for this chat: a command's program and subcommand (`cargo test …` for `cargo test --lib`; every command of a line must match; a command run through a wrapper such as `sudo`, `bash -c` or `python3` only exactly; a command warden reads only from the title, or one no allow rule could cover, only this card), else the same kind and tool; the card says what it covers",
        Hint::Card,
        CardCmd::AllowForChat,
    ),
    b(
        &[Key::ch('b')],
        "bypass",
        "bypass this agent from now on: asks once to confirm (\"every call of AGENT that no deny/ask rule stops runs without asking, in every chat, saved to the settings\"); while bypassed, the footer and the chat list show a red `BYPASS`",
        Hint::Card,
        CardCmd::Bypass,
    ),
    b(
        &[Key::ch('p')],
        "keep as rule",
        "keep as rule: the narrowest sensible rule for this request, its pattern editable, appended to the settings; it always covers the request it came from, and never names a wrapper as a prefix (`cargo test --lib` proposes `cargo test *`; `bash -c 'cargo test'`, `sudo make` or `python3 x.py` propose the exact command, since allow rules match commands as written)",
        Hint::CardShort,
        CardCmd::KeepRule,
    ),
    b(
        &[Key::ch('r')],
        "reason",
        "deny with a reason: rejects, cancels the turn, and sends the reason as the next prompt",
        Hint::Card,
        CardCmd::DenyWithReason,
    ),
    b(
        &[Key::ch('A')],
        "all",
        "approve all cards pending now (asks once to confirm)",
        Hint::Card,
        CardCmd::ApproveAll,
    ),
    b(
        &[Key::plain(K::Tab), Key::ch('j')],
        "next",
        "next / previous card",
        Hint::CardShort,
        CardCmd::Next,
    ),
    b(
        &[Key::plain(K::BackTab), Key::ch('k')],
        "previous",
        "next / previous card",
        Hint::No,
        CardCmd::Prev,
    ),
    b(
        &[Key::plain(K::Up)],
        "up",
        "highlight and pick a choice",
        Hint::No,
        CardCmd::ChoiceUp,
    ),
    b(
        &[Key::plain(K::Down)],
        "down",
        "highlight and pick a choice",
        Hint::No,
        CardCmd::ChoiceDown,
    ),
    b(
        &[Key::plain(K::Enter), Key::plain(K::Click)],
        "pick",
        "highlight and pick a choice",
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
        "show these keys; any key closes them",
        Hint::No,
        CardCmd::Help,
    ),
];

/// What a key does in a one-line field under a card (a denial reason, a
/// kept rule's pattern); other keys edit the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldCmd {
    /// Enter: done.
    Done,
    /// Esc: back to the choices.
    Back,
}

/// The keys while a denial reason is typed.
pub const REASON: &[Binding<FieldCmd>] = &[
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

/// The keys while the pattern of a kept rule is edited.
pub const KEEP_RULE: &[Binding<FieldCmd>] = &[
    b(
        &[Key::plain(K::Enter)],
        "keep (appended to the settings file)",
        "keep the rule (appended to the settings file)",
        Hint::CardShort,
        FieldCmd::Done,
    ),
    b(
        &[Key::plain(K::Esc)],
        "back",
        "back to the choices",
        Hint::CardShort,
        FieldCmd::Back,
    ),
];

/// An answer to a question warden asks (approve all? bypass?).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerCmd {
    /// Yes.
    Yes,
    /// No (so is any key without a binding).
    No,
    /// Shift+Tab: no, and on to the next mode.
    NextMode,
}

/// The keys while warden asks before trust widens.
pub const QUESTION: &[Binding<AnswerCmd>] = &[
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
pub const CONFIRM_ALL: &[Binding<AnswerCmd>] = &[
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
pub enum ListCmd {
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
pub const MODE_MENU: &[Binding<ListCmd>] = &[
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
pub const RULES: &[Binding<ListCmd>] = &[
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
pub enum FormCmd {
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
pub const FORM: &[Binding<FormCmd>] = &[
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
pub const CHAT_LIST: &[Binding<ListCmd>] = &[
    b(
        &[Key::plain(K::Up), Key::plain(K::BackTab)],
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
        "show these keys; any key closes them",
        Hint::No,
        ListCmd::Help,
    ),
];

/// Where the keys are, as far as their meaning goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Typing a message (with the keys for several chats).
    Composer,
    /// On the cards.
    Cards,
    /// Typing a denial reason.
    Reason,
    /// Editing a kept rule's pattern.
    KeepRule,
    /// A question before trust widens.
    Question,
    /// "Approve all?".
    ConfirmAll,
    /// The mode dropdown.
    ModeMenu,
    /// The rules screen.
    Rules,
    /// The chat list.
    ChatList,
    /// Filling in a form elicitation.
    Form,
}

/// One line of a help table: the keys, what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The keys, joined.
    pub keys: String,
    /// What they do.
    pub help: String,
}

/// The rows of a table: bindings next to each other with the same help
/// text share a row. `sep` joins a key's modifiers (`+` in the README, `-`
/// on screen).
pub fn rows<C>(table: &[Binding<C>], sep: char) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut last: Option<&str> = None;
    for binding in table {
        let keys: Vec<String> = binding.keys.iter().map(|k| k.name(sep)).collect();
        match out.last_mut() {
            Some(row) if last == Some(binding.help) => {
                row.keys.push_str(", ");
                row.keys.push_str(&keys.join(", "));
            }
            _ => out.push(Row {
                keys: keys.join(", "),
                help: binding.help.to_string(),
            }),
        }
        last = Some(binding.help);
    }
    out
}

/// A hint line: "y allow · n deny · ..." from the bindings `want` picks;
/// bindings with the same label and help text next to each other show as
/// "PgUp/PgDn scroll".
pub fn hints<C>(table: &[Binding<C>], want: impl Fn(Hint) -> bool) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<String>, &str)> = Vec::new();
    for binding in table.iter().filter(|b| want(b.hint)) {
        let Some(key) = binding.keys.first().map(|k| k.name('-')) else {
            continue;
        };
        match groups.last_mut() {
            Some((help, keys, label)) if *help == binding.help && *label == binding.label => {
                keys.push(key)
            }
            _ => groups.push((binding.help, vec![key], binding.label)),
        }
    }
    groups
        .into_iter()
        .map(|(_, keys, label)| format!("{} {label}", keys.join("/")))
        .collect()
}

/// The hint line of an elicitation's card: answered by the user alone, so
/// only allow (accept; a form is filled in first), deny (decline) and the
/// keys that move between cards, from [`CARDS`].
pub fn elicitation_hints() -> String {
    hints(CARDS, |h| matches!(h, Hint::Card | Hint::CardShort))
        .into_iter()
        .filter(|hint| {
            CARDS.iter().any(|b| {
                matches!(
                    b.cmd,
                    CardCmd::Allow | CardCmd::Deny | CardCmd::Next | CardCmd::Expand
                ) && b
                    .keys
                    .first()
                    .is_some_and(|k| hint.starts_with(&k.name('-')))
            })
        })
        .map(|hint| match hint.as_str() {
            "y allow" => "y accept (a form: fill it in)".to_string(),
            "n deny" => "n decline".to_string(),
            _ => hint,
        })
        .chain(std::iter::once(
            hints(CARDS, |h| matches!(h, Hint::Card | Hint::CardShort))
                .into_iter()
                .last()
                .unwrap_or_default(),
        ))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The footer's hints, most important last (the footer drops the first).
pub fn footer_hints() -> Vec<String> {
    let mut ranks: Vec<u8> = [COMPOSER, CHATS]
        .iter()
        .flat_map(|t| t.iter())
        .filter_map(|b| match b.hint {
            Hint::Footer(rank) => Some(rank),
            _ => None,
        })
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
        .into_iter()
        .flat_map(|rank| {
            [COMPOSER, CHATS]
                .into_iter()
                .flat_map(move |t| hints(t, |h| h == Hint::Footer(rank)))
        })
        .collect()
}

/// The card's hint line: the full one, or (`short`) the keys the choices
/// do not show.
pub fn card_hints(table: &[Binding<impl Sized>], short: bool) -> String {
    hints(table, |h| match h {
        Hint::CardShort => true,
        Hint::Card => !short,
        _ => false,
    })
    .join(" · ")
}

impl Context {
    /// Where a chat's keys are.
    pub fn of(focus: &crate::state::Focus) -> Context {
        use crate::state::Focus;
        match focus {
            Focus::Composer => Context::Composer,
            Focus::Cards => Context::Cards,
            Focus::Reason(_) => Context::Reason,
            Focus::KeepRule(_) => Context::KeepRule,
            Focus::Confirm(_) => Context::Question,
            Focus::ConfirmAll(_) => Context::ConfirmAll,
            Focus::ModeMenu(_) => Context::ModeMenu,
            Focus::Rules { .. } => Context::Rules,
            Focus::Form(_) => Context::Form,
        }
    }

    /// The context's title in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Context::Composer => "Keys: typing a message",
            Context::Cards => "Keys: on a card",
            Context::Reason => "Keys: typing a denial reason",
            Context::KeepRule => "Keys: editing a rule kept from a card",
            Context::Question => "Keys: answering warden's question",
            Context::ConfirmAll => "Keys: approving all cards",
            Context::ModeMenu => "Keys: the mode dropdown",
            Context::Rules => "Keys: the rules screen",
            Context::ChatList => "Keys: the chat list",
            Context::Form => "Keys: filling in a form",
        }
    }

    /// Every key of the context, as help rows (`sep` as in [`rows`]).
    pub fn rows(self, sep: char) -> Vec<Row> {
        match self {
            Context::Composer => {
                let mut out = rows(COMPOSER, sep);
                out.extend(rows(CHATS, sep));
                out
            }
            Context::Cards => rows(CARDS, sep),
            Context::Reason => rows(REASON, sep),
            Context::KeepRule => rows(KEEP_RULE, sep),
            Context::Question => rows(QUESTION, sep),
            Context::ConfirmAll => rows(CONFIRM_ALL, sep),
            Context::ModeMenu => rows(MODE_MENU, sep),
            Context::Rules => rows(RULES, sep),
            Context::ChatList => rows(CHAT_LIST, sep),
            Context::Form => rows(FORM, sep),
        }
    }
}

/// A markdown table of `rows` for the README.
pub fn markdown_table(head: &str, rows: &[Row]) -> String {
    let mut out = format!("| {head} | what it does |\n| --- | --- |\n");
    for row in rows {
        out.push_str(&format!(
            "| {} | {} |\n",
            row.keys.replace('|', "\\|"),
            row.help.replace('|', "\\|")
        ));
    }
    out
}

/// The README's key tables: (marker name, table), each between
/// `<!-- keys:NAME -->` and `<!-- /keys -->` there.
pub fn readme_tables() -> Vec<(&'static str, String)> {
    vec![
        ("composer", markdown_table("key", &rows(COMPOSER, '+'))),
        ("chats", markdown_table("key", &rows(CHATS, '+'))),
        (
            "chat-list",
            markdown_table("key in the chat list", &rows(CHAT_LIST, '+')),
        ),
        ("cards", markdown_table("key on a card", &rows(CARDS, '+'))),
        (
            "mode-menu",
            markdown_table("key in the mode dropdown", &rows(MODE_MENU, '+')),
        ),
        (
            "rules",
            markdown_table("key on the rules screen", &rows(RULES, '+')),
        ),
        ("form", markdown_table("key in a form", &rows(FORM, '+'))),
    ]
}

/// `readme` with every marked key table replaced by the one generated.
pub fn render_readme(readme: &str) -> String {
    let mut out = readme.to_string();
    for (name, table) in readme_tables() {
        let open = format!("<!-- keys:{name} -->\n");
        let close = "<!-- /keys -->";
        let Some(start) = out.find(&open).map(|s| s + open.len()) else {
            continue;
        };
        let Some(end) = out[start..].find(close).map(|e| start + e) else {
            continue;
        };
        out.replace_range(start..end, &table);
    }
    out
}

#[cfg(test)]
mod tests;

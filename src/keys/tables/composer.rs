//! The composer's keys and those for several chats: what they do
//! ([`Global`]) and their tables.

use super::b;
use crate::keys::{Action, Binding, Code, Hint, Key, Scroll};

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

//! The keys of the lists: the mode dropdown, the rules screen, the chat
//! list.

use super::b;
use crate::keys::{Binding, Code, Hint, Key};

use Code as K;

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

//! What a key means to warden once `keys::press` has read it: the actions
//! the state applies, and the moves of the transcript view the render side
//! applies. They live with the keys, so the keys and the state need nothing
//! of each other's but these (no import circle).

use super::Key;

/// What the user asked for: a key as pressed ([`Action::Key`], from
/// `keys::press`), or what a paste, a click or the view made of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A key as pressed. Its meaning depends on where the keys are: each
    /// context (the composer, a card, a dropdown, the rules screen, ...)
    /// matches it against its own table's rows (`keys::tables`); the
    /// composer's meaning is one of the actions below.
    Key(Key),
    /// Type a character.
    Char(char),
    /// Insert a newline (Alt+Enter, Shift+Enter).
    Newline,
    /// Bracketed paste.
    Paste(String),
    /// Delete before the cursor.
    Backspace,
    /// Delete under the cursor.
    Delete,
    /// Delete the word before the cursor.
    DeleteWordBack,
    /// Delete to the start of the line.
    KillLineStart,
    /// Delete to the end of the line.
    KillLineEnd,
    /// Cursor left.
    Left,
    /// Cursor right.
    Right,
    /// Cursor a word left.
    WordLeft,
    /// Cursor a word right.
    WordRight,
    /// Cursor up a line.
    Up,
    /// Cursor down a line.
    Down,
    /// Cursor to the start of the line.
    LineStart,
    /// Cursor to the end of the line.
    LineEnd,
    /// Enter: send the message.
    Submit,
    /// Esc: cancel the running turn.
    Cancel,
    /// Ctrl-C, pressed at this instant: cancel the running turn, else
    /// clear the composer; on an empty one, quit when pressed again within
    /// [`crate::state::QUIT_WINDOW`].
    Interrupt(std::time::Instant),
    /// F1, or `?` on an empty composer: show the keys of where the keys are.
    Help,
    /// Ctrl-D: quit.
    Quit,
    /// Fold or unfold thoughts.
    ToggleThoughts,
    /// Restart the agent after it exited (Ctrl-R, or `r` on an empty composer).
    Restart,
    /// Tab: next card.
    Tab,
    /// Shift+Tab: previous card, or cycle the chat's mode from the composer.
    BackTab,
    /// Scroll inside the selected card (Shift+Up/Down).
    CardScroll(i16),
    /// Move the keys between the composer and the cards (Ctrl-P).
    ToggleCards,
    /// Open the mode dropdown (Alt-M, or a click on the footer's mode).
    OpenModeMenu,
    /// A mouse click on a card's choice (index into `choices`).
    ClickChoice(usize),
    /// A mouse click on a dropdown item.
    PickModeItem(usize),
    /// Open or close the rules screen: bypasses, rules and grants (Ctrl-G).
    RulesScreen,
    /// Show terminals' whole output, or only their last lines (Ctrl-O).
    ToggleTerminals,
    /// Open a new chat (Ctrl-N).
    NewChat,
    /// The next chat in the list (Alt-N, Ctrl-PgDn).
    NextChat,
    /// The previous chat in the list (Alt-P, Ctrl-PgUp).
    PrevChat,
    /// Chat number N, from 1 (Alt-1..9).
    GoToChat(usize),
    /// Give the keys to the chat list (Ctrl-L).
    ChatList,
    /// Close the chat on screen (Alt-W); asks first when it is busy.
    CloseChat,
    /// The picker of past chats (Alt-O).
    PastChats,
    /// Open the transcript search bar (or type in it again).
    Search,
    /// Copy the selected message (or the last answer) with OSC 52.
    Copy,
    /// Copy the last code block of the selected message (or last answer).
    CopyCode,
    /// Queue what is typed and send the queue now, cancelling the turn (Ctrl-S).
    SendNow,
    /// Put back the text last cleared (Ctrl-Y).
    Restore,
    /// The newest queued message back into the composer (Alt-Up).
    EditQueued,
    /// Edit the message in `$VISUAL` / `$EDITOR` (Ctrl-X).
    Editor,
}

/// A request to move the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    /// Towards older output, by rows (mouse wheel, arrows).
    Up(u16),
    /// Towards newer output, by rows.
    Down(u16),
    /// One viewport up.
    PageUp,
    /// One viewport down.
    PageDown,
    /// To the first row.
    Top,
    /// To the last row; follows new output again.
    Bottom,
}

impl Action {
    /// A character key as pressed (tests and scripted input).
    pub fn ch(c: char) -> Action {
        Action::Key(Key::ch(c))
    }

    /// A key without modifiers as pressed (tests and scripted input).
    pub fn key(code: super::Code) -> Action {
        Action::Key(Key::plain(code))
    }
}

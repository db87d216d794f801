//! What a key pressed at a moment means before the state sees it: the
//! view's own keys (scrolling the transcript, Home/End on an empty
//! message, releasing the mouse), Ctrl-C stamped with the moment it was
//! pressed, else the key as pressed ([`Action::Key`]): the context that
//! has the keys matches it against its own table (`keys::route`).
//!
//! Pure: the door (`tui::keymap`) turns the terminal's event into a
//! [`Key`] first.

use std::time::Instant;

use super::{Action, CHATS, COMPOSER, Global, Key, Scroll, lookup};

/// What a key press means before the state sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Press {
    /// Goes to the state.
    Action(Action),
    /// Moves the transcript view (render-side state).
    Scroll(Scroll),
    /// Release the mouse to the terminal (its own selection works), or
    /// take it back.
    ToggleMouse,
}

/// What `key`, pressed at `now`, means. The view's own keys and Ctrl-C
/// (stamped with `now`) are read from the composer and chat tables
/// ([`COMPOSER`], [`CHATS`]); `composer_empty` lets Home/End scroll the
/// transcript when there is no text to move in. Every other key goes to
/// the state as pressed.
pub fn press(key: Key, composer_empty: bool, now: Instant) -> Press {
    match lookup(COMPOSER, key).or_else(|| lookup(CHATS, key)) {
        Some(Global::Scroll(scroll)) => Press::Scroll(scroll),
        Some(Global::EdgeOrLine(scroll, _)) if composer_empty => Press::Scroll(scroll),
        Some(Global::Interrupt) => Press::Action(Action::Interrupt(now)),
        Some(Global::ToggleMouse) => Press::ToggleMouse,
        _ => Press::Action(Action::Key(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Code, composer_action};
    use super::*;

    /// The key pressed now, and what a key the state gets means in the
    /// composer.
    fn key(pressed: Key) -> Option<Press> {
        composer(press(pressed, false, Instant::now()))
    }

    fn composer(press: Press) -> Option<Press> {
        match press {
            Press::Action(Action::Key(key)) => composer_action(key).map(Press::Action),
            other => Some(other),
        }
    }

    #[test]
    fn keys_reach_the_state_as_pressed() {
        // A card's, a dropdown's or a list's key is matched by the context
        // that has the keys: the press gives it over unread.
        for pressed in [
            Key::ch('y'),
            Key::ch('A'),
            Key::plain(Code::Enter),
            Key::shift(Code::Up),
            Key::plain(Code::BackTab),
            Key::ctrl(Code::Char('p')),
            Key::plain(Code::F(1)),
        ] {
            assert_eq!(
                press(pressed, false, Instant::now()),
                Press::Action(Action::Key(pressed)),
                "{pressed:?}"
            );
        }
    }

    #[test]
    fn enter_sends_and_modified_enter_inserts_a_newline() {
        assert_eq!(
            key(Key::plain(Code::Enter)),
            Some(Press::Action(Action::Submit))
        );
        assert_eq!(
            key(Key::alt(Code::Enter)),
            Some(Press::Action(Action::Newline))
        );
        assert_eq!(
            key(Key::shift(Code::Enter)),
            Some(Press::Action(Action::Newline))
        );
    }

    #[test]
    fn control_keys() {
        let now = Instant::now();
        assert_eq!(
            press(Key::ctrl(Code::Char('c')), false, now),
            Press::Action(Action::Interrupt(now))
        );
        assert_eq!(
            key(Key::ctrl(Code::Char('d'))),
            Some(Press::Action(Action::Quit))
        );
        assert_eq!(
            key(Key::plain(Code::Esc)),
            Some(Press::Action(Action::Cancel))
        );
        assert_eq!(key(Key::ctrl(Code::Char('q'))), None);
    }

    #[test]
    fn chat_keys() {
        for (pressed, want) in [
            (Key::ctrl(Code::Char('n')), Action::NewChat),
            (Key::ctrl(Code::Char('l')), Action::ChatList),
            (Key::alt(Code::Char('1')), Action::GoToChat(1)),
            (Key::alt(Code::Char('9')), Action::GoToChat(9)),
            (Key::alt(Code::Char('n')), Action::NextChat),
            (Key::alt(Code::Char('p')), Action::PrevChat),
            (Key::ctrl(Code::PageDown), Action::NextChat),
            (Key::ctrl(Code::PageUp), Action::PrevChat),
            (Key::alt(Code::Char('w')), Action::CloseChat),
            (Key::alt(Code::Char('o')), Action::PastChats),
        ] {
            assert_eq!(key(pressed), Some(Press::Action(want)), "{pressed:?}");
        }
        // Digits without Alt are typed.
        assert_eq!(key(Key::ch('1')), Some(Press::Action(Action::Char('1'))));
        assert_eq!(
            key(Key::plain(Code::PageDown)),
            Some(Press::Scroll(Scroll::PageDown))
        );
    }

    #[test]
    fn home_and_end_scroll_only_when_nothing_is_typed() {
        let home = Key::plain(Code::Home);
        assert_eq!(
            press(home, true, Instant::now()),
            Press::Scroll(Scroll::Top)
        );
        assert_eq!(
            composer(press(home, false, Instant::now())),
            Some(Press::Action(Action::LineStart))
        );
        assert_eq!(
            key(Key::plain(Code::PageUp)),
            Some(Press::Scroll(Scroll::PageUp))
        );
    }

    #[test]
    fn search_copy_and_mouse_keys() {
        for (pressed, want) in [
            (Key::ctrl(Code::Char('f')), Action::Search),
            (Key::alt(Code::Char('c')), Action::Copy),
            (Key::ctrl(Code::Char('y')), Action::Restore),
            (Key::ctrl(Code::Char('s')), Action::SendNow),
            (Key::ctrl(Code::Char('x')), Action::Editor),
            (Key::alt(Code::Up), Action::EditQueued),
            (Key::alt(Code::Char('y')), Action::CopyCode),
        ] {
            assert_eq!(key(pressed), Some(Press::Action(want)), "{pressed:?}");
        }
        assert_eq!(key(Key::alt(Code::Char('s'))), Some(Press::ToggleMouse));
    }
}

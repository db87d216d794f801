//! Key, mouse and paste events -> what they mean to warden.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use crate::keys::{self, Code, Global, Key};
use crate::state::Action;
use crate::ui::Scroll;

/// Rows one mouse-wheel notch scrolls.
const WHEEL_ROWS: u16 = 3;

/// The meaning of one terminal event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Goes to the state.
    Action(Action),
    /// Moves the transcript view (render-side state).
    Scroll(Scroll),
    /// A left click at (column, row): the view knows what is there.
    Click(u16, u16),
    /// The terminal was resized: redraw.
    Resize,
    /// The terminal gained (`true`) or lost focus (turn-end alerts).
    Focus(bool),
    /// Release the mouse to the terminal (its own selection works), or
    /// take it back.
    ToggleMouse,
}

#[cfg(test)]
/// Map a terminal event. `composer_empty` lets Home/End scroll the
/// transcript when there is no text to move in.
pub(crate) fn map_event(event: &Event, composer_empty: bool) -> Option<Input> {
    map_event_at(event, composer_empty, Instant::now())
}

/// Map a terminal event made at `now` (Ctrl-C carries it; the TUI loop
/// sends every key with it). `composer_empty` lets Home/End scroll the
/// transcript when there is no text to move in.
pub(crate) fn map_event_at(event: &Event, composer_empty: bool, now: Instant) -> Option<Input> {
    match event {
        Event::Key(key) => map_key_at(key, composer_empty, now),
        Event::Paste(text) => Some(Input::Action(Action::Paste(text.clone()))),
        Event::Mouse(mouse) => match mouse.kind {
            MouseEventKind::ScrollUp => Some(Input::Scroll(Scroll::Up(WHEEL_ROWS))),
            MouseEventKind::ScrollDown => Some(Input::Scroll(Scroll::Down(WHEEL_ROWS))),
            MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
                Some(Input::Click(mouse.column, mouse.row))
            }
            _ => None,
        },
        Event::Resize(_, _) => Some(Input::Resize),
        Event::FocusGained => Some(Input::Focus(true)),
        Event::FocusLost => Some(Input::Focus(false)),
    }
}

#[cfg(test)]
/// Map one key press (now).
pub(crate) fn map_key(key: &KeyEvent, composer_empty: bool) -> Option<Input> {
    map_key_at(key, composer_empty, Instant::now())
}

/// Map one key press made at `now`. The view's own keys (scrolling the
/// transcript, the mouse) and Ctrl-C (stamped with `now`) are read from
/// the composer and chat tables of [`crate::keys`]; every other key goes
/// to the state as pressed ([`Action::Key`]), where the context that has
/// the keys matches it against its own table.
pub fn map_key_at(key: &KeyEvent, composer_empty: bool, now: Instant) -> Option<Input> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let pressed = key_of(key)?;
    let found =
        keys::lookup(keys::COMPOSER, pressed).or_else(|| keys::lookup(keys::CHATS, pressed));
    match found {
        Some(Global::Scroll(scroll)) => Some(Input::Scroll(scroll)),
        Some(Global::EdgeOrLine(scroll, _)) if composer_empty => Some(Input::Scroll(scroll)),
        Some(Global::Interrupt) => Some(Input::Action(Action::Interrupt(now))),
        Some(Global::ToggleMouse) => Some(Input::ToggleMouse),
        _ => Some(Input::Action(Action::Key(pressed))),
    }
}

/// The key as warden names it. A character's Shift is in the character
/// (and Alt with it stays, for Alt+letters); Shift+Tab is its own key.
fn key_of(key: &KeyEvent) -> Option<Key> {
    let mods = key.modifiers;
    let code = match key.code {
        KeyCode::Char(c) => Code::Char(c),
        KeyCode::Enter => Code::Enter,
        KeyCode::Esc => Code::Esc,
        KeyCode::Tab if key.modifiers.contains(KeyModifiers::SHIFT) => Code::BackTab,
        KeyCode::Tab => Code::Tab,
        KeyCode::BackTab => Code::BackTab,
        KeyCode::Backspace => Code::Backspace,
        KeyCode::Delete => Code::Delete,
        KeyCode::Left => Code::Left,
        KeyCode::Right => Code::Right,
        KeyCode::Up => Code::Up,
        KeyCode::Down => Code::Down,
        KeyCode::Home => Code::Home,
        KeyCode::End => Code::End,
        KeyCode::PageUp => Code::PageUp,
        KeyCode::PageDown => Code::PageDown,
        KeyCode::F(n) => Code::F(n),
        _ => return None,
    };
    let shift_counts = !matches!(code, Code::Char(_) | Code::BackTab);
    Some(Key {
        code,
        ctrl: mods.contains(KeyModifiers::CONTROL),
        alt: mods.contains(KeyModifiers::ALT),
        shift: shift_counts && mods.contains(KeyModifiers::SHIFT),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key mapped, and what a key the state gets means in the composer.
    fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Input> {
        composer(map_key(&KeyEvent::new(code, modifiers), false))
    }

    fn composer(input: Option<Input>) -> Option<Input> {
        match input {
            Some(Input::Action(Action::Key(key))) => keys::composer_action(key).map(Input::Action),
            other => other,
        }
    }

    #[test]
    fn keys_reach_the_state_as_pressed() {
        // A card's, a dropdown's or a list's key is matched by the context
        // that has the keys: the keymap gives it over unread.
        for (code, modifiers, want) in [
            (KeyCode::Char('y'), KeyModifiers::NONE, Key::ch('y')),
            (KeyCode::Char('A'), KeyModifiers::SHIFT, Key::ch('A')),
            (KeyCode::Enter, KeyModifiers::NONE, Key::plain(Code::Enter)),
            (KeyCode::Up, KeyModifiers::SHIFT, Key::shift(Code::Up)),
            (KeyCode::Tab, KeyModifiers::SHIFT, Key::plain(Code::BackTab)),
            (
                KeyCode::Char('p'),
                KeyModifiers::CONTROL,
                Key::ctrl(Code::Char('p')),
            ),
            (KeyCode::F(1), KeyModifiers::NONE, Key::plain(Code::F(1))),
        ] {
            assert_eq!(
                map_key(&KeyEvent::new(code, modifiers), false),
                Some(Input::Action(Action::Key(want))),
                "{code:?}"
            );
        }
    }

    #[test]
    fn enter_sends_and_modified_enter_inserts_a_newline() {
        assert_eq!(
            key(KeyCode::Enter, KeyModifiers::NONE),
            Some(Input::Action(Action::Submit))
        );
        assert_eq!(
            key(KeyCode::Enter, KeyModifiers::ALT),
            Some(Input::Action(Action::Newline))
        );
        assert_eq!(
            key(KeyCode::Enter, KeyModifiers::SHIFT),
            Some(Input::Action(Action::Newline))
        );
    }

    #[test]
    fn control_keys() {
        let now = Instant::now();
        assert_eq!(
            map_key_at(
                &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                false,
                now
            ),
            Some(Input::Action(Action::Interrupt(now)))
        );
        assert_eq!(
            key(KeyCode::Char('d'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::Quit))
        );
        assert_eq!(
            key(KeyCode::Esc, KeyModifiers::NONE),
            Some(Input::Action(Action::Cancel))
        );
        assert_eq!(key(KeyCode::Char('q'), KeyModifiers::CONTROL), None);
    }

    #[test]
    fn chat_keys() {
        let alt = KeyModifiers::ALT;
        for (code, modifiers, want) in [
            (KeyCode::Char('n'), KeyModifiers::CONTROL, Action::NewChat),
            (KeyCode::Char('l'), KeyModifiers::CONTROL, Action::ChatList),
            (KeyCode::Char('1'), alt, Action::GoToChat(1)),
            (KeyCode::Char('9'), alt, Action::GoToChat(9)),
            (KeyCode::Char('n'), alt, Action::NextChat),
            (KeyCode::Char('p'), alt, Action::PrevChat),
            (KeyCode::PageDown, KeyModifiers::CONTROL, Action::NextChat),
            (KeyCode::PageUp, KeyModifiers::CONTROL, Action::PrevChat),
            (KeyCode::Char('w'), alt, Action::CloseChat),
            (KeyCode::Char('o'), alt, Action::PastChats),
        ] {
            assert_eq!(key(code, modifiers), Some(Input::Action(want)), "{code:?}");
        }
        // Digits without Alt are typed.
        assert_eq!(
            key(KeyCode::Char('1'), KeyModifiers::NONE),
            Some(Input::Action(Action::Char('1')))
        );
        assert_eq!(
            key(KeyCode::PageDown, KeyModifiers::NONE),
            Some(Input::Scroll(Scroll::PageDown))
        );
    }

    #[test]
    fn home_and_end_scroll_only_when_nothing_is_typed() {
        let home = KeyEvent::new(KeyCode::Home, KeyModifiers::NONE);
        assert_eq!(map_key(&home, true), Some(Input::Scroll(Scroll::Top)));
        assert_eq!(
            composer(map_key(&home, false)),
            Some(Input::Action(Action::LineStart))
        );
        assert_eq!(
            key(KeyCode::PageUp, KeyModifiers::NONE),
            Some(Input::Scroll(Scroll::PageUp))
        );
    }

    #[test]
    fn paste_and_wheel() {
        assert_eq!(
            map_event(&Event::Paste("a\nb".into()), true),
            Some(Input::Action(Action::Paste("a\nb".into())))
        );
        let mouse = |kind| {
            Event::Mouse(crossterm::event::MouseEvent {
                kind,
                column: 7,
                row: 3,
                modifiers: KeyModifiers::NONE,
            })
        };
        assert_eq!(
            map_event(&mouse(MouseEventKind::ScrollUp), false),
            Some(Input::Scroll(Scroll::Up(WHEEL_ROWS)))
        );
        assert_eq!(
            map_event(&mouse(MouseEventKind::ScrollDown), false),
            Some(Input::Scroll(Scroll::Down(WHEEL_ROWS)))
        );
        assert_eq!(
            map_event(
                &mouse(MouseEventKind::Down(crossterm::event::MouseButton::Left)),
                false
            ),
            Some(Input::Click(7, 3))
        );
        assert_eq!(map_event(&mouse(MouseEventKind::Moved), false), None);
    }

    #[test]
    fn search_copy_mouse_and_focus_keys() {
        assert_eq!(
            key(KeyCode::Char('f'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::Search))
        );
        assert_eq!(
            key(KeyCode::Char('c'), KeyModifiers::ALT),
            Some(Input::Action(Action::Copy))
        );
        assert_eq!(
            key(KeyCode::Char('y'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::Restore))
        );
        assert_eq!(
            key(KeyCode::Char('s'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::SendNow))
        );
        assert_eq!(
            key(KeyCode::Char('x'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::Editor))
        );
        assert_eq!(
            key(KeyCode::Up, KeyModifiers::ALT),
            Some(Input::Action(Action::EditQueued))
        );
        assert_eq!(
            key(KeyCode::Char('y'), KeyModifiers::ALT),
            Some(Input::Action(Action::CopyCode))
        );
        assert_eq!(
            key(KeyCode::Char('s'), KeyModifiers::ALT),
            Some(Input::ToggleMouse)
        );
        assert_eq!(
            map_event(&Event::FocusLost, true),
            Some(Input::Focus(false))
        );
        assert_eq!(
            map_event(&Event::FocusGained, true),
            Some(Input::Focus(true))
        );
    }
}

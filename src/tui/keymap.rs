//! The door in: a terminal event (crossterm's) becomes warden's own terms,
//! a key ([`Key`], then [`keys::press`] says what it means before the
//! state sees it), a paste, a wheel notch or a click, a resize, a focus
//! change. No key table is read here.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use crate::keys::{self, Code, Key, Press};
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
/// transcript when there is no text to move in ([`keys::press`]).
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

/// Map one key press made at `now`: the key as warden names it, and what
/// it means before the state sees it ([`keys::press`]). A release means
/// nothing.
pub fn map_key_at(key: &KeyEvent, composer_empty: bool, now: Instant) -> Option<Input> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    Some(match keys::press(key_of(key)?, composer_empty, now) {
        Press::Action(action) => Input::Action(action),
        Press::Scroll(scroll) => Input::Scroll(scroll),
        Press::ToggleMouse => Input::ToggleMouse,
    })
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

    /// The key as the door names it, and what a key the state gets means
    /// in the composer.
    fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Input> {
        match map_key(&KeyEvent::new(code, modifiers), false) {
            Some(Input::Action(Action::Key(key))) => keys::composer_action(key).map(Input::Action),
            other => other,
        }
    }

    #[test]
    fn keys_reach_the_state_as_pressed() {
        // The door names the key (a character's Shift is in the character,
        // Shift+Tab is its own key) and gives it over unread.
        for (code, modifiers, want) in [
            (KeyCode::Char('y'), KeyModifiers::NONE, Key::ch('y')),
            (KeyCode::Char('A'), KeyModifiers::SHIFT, Key::ch('A')),
            (KeyCode::Enter, KeyModifiers::NONE, Key::plain(Code::Enter)),
            (KeyCode::Up, KeyModifiers::SHIFT, Key::shift(Code::Up)),
            (KeyCode::Tab, KeyModifiers::SHIFT, Key::plain(Code::BackTab)),
            (
                KeyCode::BackTab,
                KeyModifiers::SHIFT,
                Key::plain(Code::BackTab),
            ),
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
    fn a_release_or_an_unnamed_key_means_nothing() {
        let mut release = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(map_key(&release, false), None);
        assert_eq!(
            map_key(&KeyEvent::new(KeyCode::Insert, KeyModifiers::NONE), false),
            None
        );
    }

    #[test]
    fn the_views_keys_come_through_the_door() {
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
            key(KeyCode::Enter, KeyModifiers::ALT),
            Some(Input::Action(Action::Newline))
        );
        assert_eq!(
            key(KeyCode::Enter, KeyModifiers::SHIFT),
            Some(Input::Action(Action::Newline))
        );
        let home = KeyEvent::new(KeyCode::Home, KeyModifiers::NONE);
        assert_eq!(map_key(&home, true), Some(Input::Scroll(Scroll::Top)));
        assert_eq!(
            key(KeyCode::PageDown, KeyModifiers::NONE),
            Some(Input::Scroll(Scroll::PageDown))
        );
        assert_eq!(
            key(KeyCode::Char('s'), KeyModifiers::ALT),
            Some(Input::ToggleMouse)
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
    fn focus() {
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

//! Key, mouse and paste events -> what they mean to warden.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

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
}

/// Map a terminal event. `composer_empty` lets Home/End scroll the
/// transcript when there is no text to move in.
pub fn map_event(event: &Event, composer_empty: bool) -> Option<Input> {
    match event {
        Event::Key(key) => map_key(key, composer_empty),
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
        _ => None,
    }
}

/// Map one key press.
pub fn map_key(key: &KeyEvent, composer_empty: bool) -> Option<Input> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let action = |a| Some(Input::Action(a));
    let scroll = |s| Some(Input::Scroll(s));
    match key.code {
        KeyCode::Enter if alt || shift => action(Action::Newline),
        KeyCode::Enter => action(Action::Submit),
        KeyCode::Char('j') if ctrl => action(Action::Newline),
        KeyCode::Esc => action(Action::Cancel),
        KeyCode::Char('c') if ctrl => action(Action::Interrupt),
        KeyCode::Char('d') if ctrl => action(Action::Quit),
        KeyCode::Char('t') if ctrl => action(Action::ToggleThoughts),
        KeyCode::Char('o') if ctrl => action(Action::ToggleTerminals),
        KeyCode::Char('r') if ctrl => action(Action::Restart),
        KeyCode::Char('p') if ctrl => action(Action::Review),
        KeyCode::Char('g') if ctrl => action(Action::Grants),
        KeyCode::Char('m') if alt => action(Action::OpenModeMenu),
        KeyCode::F(2) => action(Action::OpenModeMenu),
        KeyCode::Char('n') if ctrl => action(Action::NewChat),
        KeyCode::Char('l') if ctrl => action(Action::ChatList),
        KeyCode::Char(c @ '1'..='9') if alt => action(Action::GoToChat(c as usize - '0' as usize)),
        KeyCode::Char('n') if alt => action(Action::NextChat),
        KeyCode::Char('p') if alt => action(Action::PrevChat),
        KeyCode::Char('w') if alt => action(Action::CloseChat),
        KeyCode::Char('o') if alt => action(Action::PastChats),
        KeyCode::PageDown if ctrl => action(Action::NextChat),
        KeyCode::PageUp if ctrl => action(Action::PrevChat),
        KeyCode::Char('a') if ctrl => action(Action::LineStart),
        KeyCode::Char('e') if ctrl => action(Action::LineEnd),
        KeyCode::Char('u') if ctrl => action(Action::KillLineStart),
        KeyCode::Char('k') if ctrl => action(Action::KillLineEnd),
        KeyCode::Char('w') if ctrl => action(Action::DeleteWordBack),
        KeyCode::Char('b') if alt => action(Action::WordLeft),
        KeyCode::Char('f') if alt => action(Action::WordRight),
        KeyCode::Char('s') if ctrl => action(Action::SendNow),
        KeyCode::Char('y') if ctrl => action(Action::Restore),
        KeyCode::Char('x') if ctrl => action(Action::Editor),
        KeyCode::Char(_) if ctrl => None,
        KeyCode::Char(c) => action(Action::Char(c)),
        KeyCode::Tab => action(Action::Tab),
        KeyCode::BackTab => action(Action::BackTab),
        KeyCode::Backspace if alt || ctrl => action(Action::DeleteWordBack),
        KeyCode::Backspace => action(Action::Backspace),
        KeyCode::Delete => action(Action::Delete),
        KeyCode::Left if ctrl || alt => action(Action::WordLeft),
        KeyCode::Right if ctrl || alt => action(Action::WordRight),
        KeyCode::Left => action(Action::Left),
        KeyCode::Right => action(Action::Right),
        KeyCode::Up if alt => action(Action::EditQueued),
        KeyCode::Up if shift => action(Action::CardScroll(-3)),
        KeyCode::Down if shift => action(Action::CardScroll(3)),
        KeyCode::Up => action(Action::Up),
        KeyCode::Down => action(Action::Down),
        KeyCode::Home if ctrl || composer_empty => scroll(Scroll::Top),
        KeyCode::End if ctrl || composer_empty => scroll(Scroll::Bottom),
        KeyCode::Home => action(Action::LineStart),
        KeyCode::End => action(Action::LineEnd),
        KeyCode::PageUp => scroll(Scroll::PageUp),
        KeyCode::PageDown => scroll(Scroll::PageDown),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Input> {
        map_key(&KeyEvent::new(code, modifiers), false)
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
        assert_eq!(
            key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Input::Action(Action::Interrupt))
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
            map_key(&home, false),
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
}

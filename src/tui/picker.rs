//! The loop of the picker of past chats (`warden --resume`): draw, read a
//! key, update, until the user opens a chat or leaves.

use std::io;

use crossterm::event::EventStream;
use futures::StreamExt;

use super::Tui;
use super::keymap::{Input, map_event};
use crate::state::Action;
use crate::state::picker::{Picker, PickerOutcome};
use crate::ui::Scroll;

/// Show `picker` on `terminal` until the user chooses: `Some(chat_id)` to
/// reopen, `None` when they leave (Esc, Ctrl-C, Ctrl-D, or the end of input).
pub async fn run(terminal: &mut Tui, picker: &mut Picker) -> io::Result<Option<String>> {
    let mut events = EventStream::new();
    let theme = crate::ui::Theme::from_env();
    terminal.draw(|frame| crate::ui::picker::draw_with(frame, picker, theme))?;
    while let Some(event) = events.next().await {
        let event = event?;
        let action = match map_event(&event, picker.filter().is_empty()) {
            Some(Input::Action(action)) => Some(action),
            // The wheel and Page keys move the selection.
            Some(Input::Scroll(Scroll::Up(_) | Scroll::PageUp)) => Some(Action::Up),
            Some(Input::Scroll(Scroll::Down(_) | Scroll::PageDown)) => Some(Action::Down),
            Some(Input::Resize) => {
                terminal.autoresize()?;
                None
            }
            Some(Input::Scroll(_) | Input::Click(..)) | None => continue,
        };
        if let Some(action) = action {
            match picker.update(&action) {
                PickerOutcome::Continue => {}
                PickerOutcome::Open(chat_id) => return Ok(Some(chat_id)),
                PickerOutcome::Quit => return Ok(None),
            }
        }
        terminal.draw(|frame| crate::ui::picker::draw_with(frame, picker, theme))?;
    }
    Ok(None)
}

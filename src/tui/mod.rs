//! The terminal: set up, restore (on every exit path, panics included), and
//! the key map.

pub(crate) mod clipboard;
pub(crate) mod input;
pub mod keymap;
pub(crate) mod paint;
#[cfg(test)]
mod paint_tests;
pub(crate) mod scroll;
#[cfg(test)]
mod scroll_tests;

use std::io::{self, BufWriter, Stdout, Write};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The terminal warden draws on; the transcript scrolls with the
/// terminal's scroll regions ([`scroll`]). A frame is gathered in a buffer
/// and goes out in one write when it ends (ratatui flushes the backend
/// after each frame), not one per escape sequence.
pub(crate) type Tui = Terminal<scroll::ScrollBackend<CrosstermBackend<BufWriter<Stdout>>>>;

/// Room for a frame's bytes: a full redraw of a large screen with colours.
const FRAME_BYTES: usize = 64 << 10;

/// Enter raw mode and the alternate screen, with bracketed paste, mouse
/// wheel and (where supported) Shift+Enter reporting. Installs a panic hook
/// that restores the terminal before the panic message prints.
pub fn init(screen: crate::settings::Screen) -> io::Result<Tui> {
    install_panic_hook();
    if let Err(err) = resume() {
        restore();
        return Err(err);
    }
    let backend = scroll::ScrollBackend::new(
        CrosstermBackend::new(BufWriter::with_capacity(FRAME_BYTES, io::stdout())),
        screen.scroll_regions && scroll::regions_from_env(),
    )
    .with_unfocused_frame(std::time::Duration::from_millis(screen.unfocused_frame_ms));
    Terminal::new(backend).inspect_err(|_| restore())
}

/// Take the screen (back): raw mode, the alternate screen, bracketed paste,
/// the mouse, focus events and (where supported) key disambiguation. Used
/// at start and after [`restore`] (the external editor or a login ran).
pub(crate) fn resume() -> io::Result<()> {
    enable_raw_mode()?;
    let mut stdout = io::stdout();
    execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture,
        EnableFocusChange
    )?;
    if supports_keyboard_enhancement().unwrap_or(false) {
        let _ = execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        );
    }
    Ok(())
}

/// Leave the alternate screen and raw mode. Safe to call more than once.
pub fn restore() {
    let mut stdout = io::stdout();
    let _ = execute!(
        stdout,
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// On a panic anywhere (a spawned task's too): restore the terminal, print
/// the panic, end the agent's and its terminals' process groups, and exit.
/// A frozen screen over a half-dead runtime would be worse.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
        crate::reaper::kill_all();
        crate::reaper::end_descendants();
        std::process::exit(101);
    }));
}

/// Ring the bell and send an OSC 9 desktop notification (terminals that do
/// not know OSC 9 ignore it; inside tmux it goes through tmux's
/// passthrough). The text is made visible first, so it carries no control
/// characters into the sequence.
pub(crate) fn notify(text: &str, bell: bool, desktop: bool) {
    if !bell && !desktop {
        return;
    }
    let mut stdout = io::stdout();
    if bell {
        let _ = stdout.write_all(b"\x07");
    }
    if desktop {
        let _ = stdout.write_all(clipboard::osc9(text, clipboard::in_tmux()).as_bytes());
    }
    let _ = stdout.flush();
}

/// Release the mouse to the terminal (`released`: its own selection and
/// copy work) or take it back (wheel scrolling, clicks on cards).
pub(crate) fn set_mouse_released(released: bool) {
    let mut stdout = io::stdout();
    let _ = if released {
        execute!(stdout, DisableMouseCapture)
    } else {
        execute!(stdout, EnableMouseCapture)
    };
}

/// Leave the screen (the normal screen, cooked mode), run `work` in the
/// user's terminal, and take the screen back for a full redraw.
pub(crate) async fn suspended<T>(
    terminal: &mut Tui,
    work: impl std::future::Future<Output = T>,
) -> T {
    restore();
    let result = work.await;
    if let Err(e) = resume() {
        tracing::warn!(error = %e, "could not take the screen back");
    }
    terminal.backend_mut().resized();
    let _ = terminal.clear();
    result
}

//! Render-only widgets for the chat screen, drawn from `&AppState`: the
//! transcript (fills the screen), an optional notice line, the composer and
//! a one-row footer. No IO and no state change: only the [`View`] (layout
//! caches and the scroll position, owned by the runtime) is mutated.
//!
//! Layout work is incremental: each entry's rows are cached by entry id and
//! revision, entry heights live in a prefix-sum tree so the visible window is
//! found by search, and only the entries on screen are laid out and drawn.
//! A 100,000-entry transcript draws like a 100-entry one once measured.

mod composer;
mod entry;
mod footer;
mod history;
mod markdown;
mod theme;
mod wrap;

#[cfg(test)]
mod tests;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::sanitize::one_line;
use crate::state::AppState;
use history::History;
use theme::Theme;
use wrap::truncate_end;

/// Render-side state: layout caches and the scroll position. Owned by the
/// runtime, not by `AppState`.
pub struct View {
    theme: Theme,
    history: History,
    /// First composer text row shown, once the text outgrows the box.
    composer_top: usize,
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

impl View {
    /// A view with nothing laid out yet, following the tail. Reads `NO_COLOR`
    /// once: set and not empty, only modifiers are drawn, no colours.
    pub fn new() -> Self {
        View::with_theme(Theme::from_env())
    }

    pub(crate) fn with_theme(theme: Theme) -> Self {
        View {
            theme,
            history: History::new(),
            composer_top: 0,
        }
    }

    /// Scroll the transcript; pages use the last drawn viewport height.
    /// Reaching the bottom resumes following new output.
    pub fn scroll(&mut self, s: Scroll) {
        self.history.scroll(s);
    }

    /// Whether the transcript is pinned to its tail (new output shows).
    pub fn is_following(&self) -> bool {
        self.history.is_following()
    }
}

impl Default for View {
    fn default() -> Self {
        View::new()
    }
}

/// Draw the whole screen. Pure rendering from `state`; only `view` (caches,
/// scroll) is mutated.
pub fn draw(frame: &mut Frame<'_>, state: &AppState, view: &mut View) {
    let area = frame.area();
    if area.is_empty() {
        return;
    }
    let theme = view.theme;
    let wrapped = composer::wrap(&state.composer, composer::text_width(area.width));

    // From the bottom: footer, composer, notice; the transcript gets the rest.
    let mut rest = area.height;
    let footer_h = rest.min(1);
    rest -= footer_h;
    let composer_h = rest.min(wrapped.height());
    rest -= composer_h;
    let notice_h = if state.notice.is_some() {
        rest.min(1)
    } else {
        0
    };
    rest -= notice_h;
    let history = Rect::new(area.x, area.y, area.width, rest);
    let notice = Rect::new(area.x, history.bottom(), area.width, notice_h);
    let composer_area = Rect::new(area.x, notice.bottom(), area.width, composer_h);
    let footer = Rect::new(area.x, composer_area.bottom(), area.width, footer_h);

    view.history.render(
        &state.transcript,
        state.thoughts_expanded,
        theme,
        history,
        frame.buffer_mut(),
    );
    if let Some(text) = &state.notice
        && !notice.is_empty()
    {
        let width = usize::from(notice.width);
        let text = one_line(text);
        let text = truncate_end(&text, width);
        frame
            .buffer_mut()
            .set_stringn(notice.x, notice.y, &text, width, theme.notice());
    }
    if !composer_area.is_empty() {
        composer::render(
            frame,
            composer_area,
            &wrapped,
            &mut view.composer_top,
            theme,
        );
    }
    if !footer.is_empty() {
        footer::render(frame.buffer_mut(), footer, state, theme);
    }
}

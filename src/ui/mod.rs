//! Render-only widgets for the chat screen, drawn from `&AppState`: the
//! transcript (fills the screen), the pending approval cards, an optional
//! notice line, the composer, a one-row footer, and the mode dropdown over
//! them when it is open; the review screen (Ctrl-G) covers it all. No IO and no state change: only the [`View`]
//! (layout caches, the scroll position, and where the last draw put
//! clickable things, owned by the runtime) is mutated.
//!
//! Layout work is incremental: each entry's rows are cached by entry id and
//! revision, entry heights live in a prefix-sum tree so the visible window is
//! found by search, and only the entries on screen are laid out and drawn.
//! A 100,000-entry transcript draws like a 100-entry one once measured.

mod card;
mod composer;
mod entry;
mod footer;
mod grants;
mod history;
mod markdown;
mod mode_menu;
pub mod picker;
mod terminal;
mod theme;

pub(crate) use theme::Theme;
mod wrap;

#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod tests;

use ratatui::Frame;
use ratatui::layout::{Position, Rect};

use crate::sanitize::one_line;
use crate::state::{Action, AppState, Focus};
use history::History;
use wrap::truncate_end;

/// The card area takes at most this share of the screen's height.
const CARDS_SHARE: (u16, u16) = (3, 5);

/// Render-side state: layout caches and the scroll position. Owned by the
/// runtime, not by `AppState`.
pub struct View {
    theme: Theme,
    history: History,
    /// First composer text row shown, once the text outgrows the box.
    composer_top: usize,
    /// The selected card's request part, laid out.
    card_detail: Option<card::DetailCache>,
    /// First list row of the review screen shown, once its list outgrows
    /// the screen.
    grants_top: usize,
    /// What screen cells mean to a click, from the last draw; later entries
    /// lie on top. `None` is a place that takes the click and means nothing
    /// (the dropdown's border).
    hits: Vec<(Rect, Option<Action>)>,
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
            card_detail: None,
            grants_top: 0,
            hits: Vec::new(),
        }
    }

    /// What a click at this cell means, going by the last draw: a card's
    /// choice, the footer's mode slot, an item of the open dropdown.
    pub fn hit(&self, column: u16, row: u16) -> Option<Action> {
        let at = Position::new(column, row);
        self.hits
            .iter()
            .rev()
            .find(|(area, _)| area.contains(at))
            .and_then(|(_, action)| action.clone())
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
/// scroll, click areas) is mutated.
pub fn draw(frame: &mut Frame<'_>, state: &AppState, view: &mut View) {
    view.hits.clear();
    let area = frame.area();
    if area.is_empty() {
        return;
    }
    let theme = view.theme;
    let wrapped = composer::wrap(&state.composer, composer::text_width(area.width));

    // From the bottom: footer, composer, notice, cards; the transcript gets
    // the rest.
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
    let card = card::card(state, area.width, theme);
    let detail = card::detail(state, area.width, theme, &mut view.card_detail);
    let cards_h = match &card {
        Some(card) => {
            let share = area.height * CARDS_SHARE.0 / CARDS_SHARE.1;
            let wanted = u16::try_from(card::wanted(state, card, detail)).unwrap_or(u16::MAX);
            wanted.min(share).min(rest)
        }
        None => 0,
    };
    rest -= cards_h;
    let history = Rect::new(area.x, area.y, area.width, rest);
    let cards = Rect::new(area.x, history.bottom(), area.width, cards_h);
    let notice = Rect::new(area.x, cards.bottom(), area.width, notice_h);
    let composer_area = Rect::new(area.x, notice.bottom(), area.width, composer_h);
    let footer = Rect::new(area.x, composer_area.bottom(), area.width, footer_h);

    view.history.render(
        &state.transcript,
        state.thoughts_expanded,
        entry::Terminals {
            views: &state.terminals,
            expanded: state.terminals_expanded,
        },
        theme,
        history,
        frame.buffer_mut(),
    );
    let mut cursor = None;
    if let Some(card) = &card
        && !cards.is_empty()
    {
        let drawn = card::render(frame.buffer_mut(), cards, state, card, detail, theme);
        view.hits.extend(
            drawn
                .choices
                .into_iter()
                .map(|(rect, i)| (rect, Some(Action::ClickChoice(i)))),
        );
        cursor = drawn.cursor;
    }
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
            state.focus == Focus::Composer,
        );
    }
    if !footer.is_empty() {
        let hits = footer::render(frame.buffer_mut(), footer, state, theme);
        view.hits.push((hits.mode, Some(Action::OpenModeMenu)));
        if let Some(pending) = hits.pending {
            view.hits.push((pending, Some(Action::Review)));
        }
        if let Focus::ModeMenu(highlighted) = state.focus {
            let drawn = mode_menu::render(
                frame.buffer_mut(),
                area,
                hits.mode.x,
                footer.y,
                state,
                highlighted,
                theme,
            );
            view.hits.push((drawn.area, None));
            view.hits.extend(
                drawn
                    .items
                    .into_iter()
                    .map(|(rect, i)| (rect, Some(Action::PickModeItem(i)))),
            );
        }
    }
    if let Focus::Grants { selected, confirm } = state.focus {
        grants::render(
            frame.buffer_mut(),
            area,
            state,
            selected,
            confirm,
            &mut view.grants_top,
            theme,
        );
        // Nothing under the screen takes a click, and no field has the cursor.
        view.hits.push((area, None));
        cursor = None;
    } else {
        view.grants_top = 0;
    }
    if let Some(position) = cursor {
        frame.set_cursor_position(position);
    }
}

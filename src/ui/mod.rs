//! Render-only widgets, drawn from the pure state. A chat's screen, from
//! `&ChatState`: the transcript (fills the screen), the pending approval
//! cards, an optional notice line, the composer, a one-row footer, and the
//! mode dropdown over them when it is open; the rules screen (Ctrl-G)
//! covers it all. Around it, from `&Workspace` ([`draw_workspace`]): the
//! chat list, a sidebar beside the chat on a wide screen or a box over it
//! on a narrow one while it has the keys (each chat's number, agent, label,
//! mode, pending requests and whether it works); the chooser of a new
//! chat's agent; the picker of past chats over everything; and in the
//! footer, which chat this is and the requests waiting in other chats.
//!
//! No IO and no state change: only the [`View`] of each chat (layout
//! caches, the scroll position) and the [`Views`] (one `View` per chat,
//! and where the last draw put clickable things), owned by the runtime,
//! are mutated.
//!
//! Layout work is incremental: each entry's rows are cached by entry id and
//! revision, entry heights live in a prefix-sum tree so the visible window is
//! found by search, and only the entries on screen are laid out and drawn.
//! A 100,000-entry transcript draws like a 100-entry one once measured.

mod card;
mod chat_list;
mod composer;
mod entry;
mod footer;
mod form;
mod grants;
mod help;
mod history;
mod markdown;
mod mode_menu;
pub(crate) mod picker;
mod popup;
mod remote;
mod search;
mod terminal;
mod theme;

pub(crate) use theme::Theme;
mod wrap;

#[cfg(test)]
mod chat_list_tests;
#[cfg(test)]
mod decision_line_tests;
#[cfg(test)]
mod first_hour_tests;
#[cfg(test)]
mod focus_tests;
#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod modes_tests;
#[cfg(test)]
mod review_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use crate::sanitize::one_line;
use crate::state::{Action, ChatFocus, ChatId, ChatState, Modal, Pane, Workspace};
use history::History;
use wrap::{str_width, truncate_end};

/// The card area takes at most this share of the screen's height.
const CARDS_SHARE: (u16, u16) = (2, 3);
/// The screen when no chat is open.
const NO_CHAT: &str = "no chat open · Ctrl-N new chat · Alt-O past chats";

/// Render-side state: layout caches and the scroll position. Owned by the
/// runtime, not by `ChatState`.
pub struct View {
    theme: Theme,
    history: History,
    /// First composer text row shown, once the text outgrows the box.
    composer_top: usize,
    /// The selected card's request part, laid out.
    card_detail: Option<card::DetailCache>,
    /// First list row of the rules screen shown, once its list outgrows
    /// the screen.
    grants_top: usize,
    /// What screen cells mean to a click, from the last draw; later entries
    /// lie on top. `None` is a place that takes the click and means nothing
    /// (the dropdown's border).
    hits: Vec<(Rect, Option<Action>)>,
    /// Where the last draw put the transcript (and how far its rows
    /// moved), when nothing lay over it.
    transcript: Option<TranscriptRows>,
}

/// What a click at this cell means in a click map (later entries lie on top).
fn hit_in(hits: &[(Rect, Option<Action>)], column: u16, row: u16) -> Option<Action> {
    let at = Position::new(column, row);
    hits.iter()
        .rev()
        .find(|(area, _)| area.contains(at))
        .and_then(|(_, action)| action.clone())
}

pub use crate::keys::Scroll;

/// The transcript's rows on a frame, as the ui names them to the backend
/// ([`crate::tui::scroll::draw`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TranscriptRows {
    /// Where the transcript is.
    pub area: Rect,
    /// How many rows its content moved up (down when negative) since it
    /// was last drawn in the same area, as its layout counts them (an
    /// answer that grew by `k` rows while the view follows it: `k`);
    /// `None` when the layout cannot tell.
    pub moved: Option<i32>,
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
            transcript: None,
        }
    }

    #[cfg(test)]
    /// What a click at this cell means, going by the last draw: a card's
    /// choice, the footer's mode slot, an item of the open dropdown.
    pub(crate) fn hit(&self, column: u16, row: u16) -> Option<Action> {
        hit_in(&self.hits, column, row)
    }

    /// Scroll the transcript; pages use the last drawn viewport height.
    /// Reaching the bottom resumes following new output.
    pub(crate) fn scroll(&mut self, s: Scroll) {
        self.history.scroll(s);
    }

    #[cfg(test)]
    /// Whether the transcript is pinned to its tail (new output shows).
    pub(crate) fn is_following(&self) -> bool {
        self.history.is_following()
    }
}

impl Default for View {
    fn default() -> Self {
        View::new()
    }
}

/// Render-side state of every chat: one [`View`] per chat (layout caches,
/// scroll), plus the click map of the last draw. Owned by the runtime.
pub struct Views {
    theme: Theme,
    /// By chat; a chat's view is made when it is first drawn.
    chats: HashMap<ChatId, View>,
    /// What screen cells mean to a click, from the last draw over the whole
    /// screen; later entries lie on top.
    hits: Vec<(Rect, Option<Action>)>,
    /// The mouse is released to the terminal (the footer says so).
    mouse_released: bool,
    /// Where the last draw put the transcript (and how far its rows
    /// moved), when nothing lay over it.
    transcript: Option<TranscriptRows>,
}

impl Views {
    /// No chat drawn yet. Reads `NO_COLOR` once: set and not empty, only
    /// modifiers are drawn, no colours.
    pub fn new() -> Self {
        Views::with_theme(Theme::from_env())
    }

    pub(crate) fn with_theme(theme: Theme) -> Self {
        Views {
            theme,
            chats: HashMap::new(),
            hits: Vec::new(),
            mouse_released: false,
            transcript: None,
        }
    }

    /// Whether the footer shows that the mouse is released.
    pub(crate) fn set_mouse_released(&mut self, released: bool) {
        self.mouse_released = released;
    }

    /// Scroll that chat's transcript (see [`View::scroll`]); a chat not
    /// drawn yet has nothing to scroll.
    pub(crate) fn scroll(&mut self, chat: ChatId, s: Scroll) {
        if let Some(view) = self.chats.get_mut(&chat) {
            view.scroll(s);
        }
    }

    /// What a click at this cell means, going by the last draw: a card's
    /// choice, the footer's mode slot or its requests elsewhere, a dropdown
    /// item, a chat of the list.
    pub(crate) fn hit(&self, column: u16, row: u16) -> Option<Action> {
        hit_in(&self.hits, column, row)
    }

    /// Where the last draw put the transcript of the chat on screen, when
    /// nothing (a list, a chooser, the picker, a dropdown, the review
    /// screen) lay over it: the rows that may scroll as one, and how far
    /// the layout moved them ([`crate::tui::scroll`]).
    pub(crate) fn transcript_area(&self) -> Option<TranscriptRows> {
        self.transcript
    }

    /// A closed chat's caches go.
    pub(crate) fn forget(&mut self, chat: ChatId) {
        self.chats.remove(&chat);
    }

    /// Views of chats no longer open go, in case the runtime missed one
    /// (O(chats²) with a handful of chats, no allocation).
    fn prune(&mut self, ws: &Workspace) {
        self.chats.retain(|id, _| ws.chat(*id).is_some());
    }

    /// A chat's view, when it has been drawn.
    #[cfg(test)]
    pub(crate) fn view(&self, chat: ChatId) -> Option<&View> {
        self.chats.get(&chat)
    }
}

impl Default for Views {
    fn default() -> Self {
        Views::new()
    }
}

/// Draw the whole screen with one chat on it. Pure rendering from
/// `state`; only `view` (caches, scroll, click areas) is mutated.
pub fn draw(frame: &mut Frame<'_>, state: &ChatState, view: &mut View) {
    let area = frame.area();
    draw_chat(frame, area, state, view, &Around::default());
}

/// Draw every chat: the sidebar of chats beside the chat on screen (wide
/// screens), the chat list over it (narrow screens, while it has the keys),
/// the chooser of a new chat's agent, or the picker of past chats over it
/// all. Pure rendering from `ws`; only `views` is mutated.
pub fn draw_workspace(frame: &mut Frame<'_>, ws: &Workspace, views: &mut Views) {
    views.hits.clear();
    views.transcript = None;
    views.prune(ws);
    let screen = frame.area();
    if screen.is_empty() {
        return;
    }
    let theme = views.theme;
    if let ChatFocus::Picker(picker) = &ws.focus {
        if let Some(cursor) = picker::render(frame.buffer_mut(), screen, picker, theme) {
            frame.set_cursor_position(cursor);
        }
        views.hits.push((screen, None));
        return;
    }
    let sidebar = chat_list::sidebar_shown(ws, screen.width);
    let (side, main) = if sidebar {
        // The sidebar, then a blank column before the chat.
        let w = chat_list::SIDEBAR_W;
        (
            Some(Rect::new(screen.x, screen.y, w, screen.height)),
            Rect::new(
                screen.x + w + 1,
                screen.y,
                screen.width - w - 1,
                screen.height,
            ),
        )
    } else {
        (None, screen)
    };

    match ws.active_chat() {
        Some(chat) => {
            let waiting = ws.waiting_elsewhere();
            let around = Around {
                notice: ws.notice.as_deref(),
                chats: footer::Chats {
                    position: (!sidebar && ws.chats.len() >= 2)
                        .then_some((ws.active + 1, ws.chats.len())),
                    waiting: waiting.first().map(|&(chat, pending)| footer::Waiting {
                        chat,
                        pending,
                        more: waiting.len() - 1,
                    }),
                },
                covered: ws.focus != ChatFocus::Chat,
                mouse_released: views.mouse_released,
            };
            let view = views
                .chats
                .entry(chat.id)
                .or_insert_with(|| View::with_theme(theme));
            draw_chat(frame, main, &chat.state, view, &around);
            views.hits.extend_from_slice(&view.hits);
            views.transcript = view.transcript;
        }
        None => draw_no_chat(frame.buffer_mut(), main, ws.notice.as_deref(), theme),
    }

    // The list: beside the chat, or over it while it has the keys.
    let list = match side {
        Some(side) => Some((
            side,
            chat_list::sidebar(frame.buffer_mut(), side, ws, theme),
        )),
        None if chat_list::has_keys(&ws.focus) => {
            views.transcript = None;
            Some(chat_list::overlay(frame.buffer_mut(), screen, ws, theme))
        }
        None => None,
    };
    let mut cursor = None;
    if let Some((area, drawn)) = list {
        views.hits.push((area, None));
        views.hits.extend(
            drawn
                .rows
                .into_iter()
                .map(|(rect, n)| (rect, Some(Action::GoToChat(n)))),
        );
        cursor = drawn.cursor;
    }
    if let ChatFocus::NewChat { selected } = ws.focus {
        views.transcript = None;
        let area = chat_list::new_chat(frame.buffer_mut(), screen, ws, selected, theme);
        views.hits.push((area, None));
    }
    if ws.help {
        help::render(
            frame.buffer_mut(),
            screen,
            crate::keys::Context::ChatList,
            ws.help_scroll,
            theme,
        );
        views.hits.push((screen, None));
        cursor = None;
    }
    if let Some(code) = &ws.remote_code {
        remote::render(frame.buffer_mut(), screen, code, theme);
        views.hits.push((screen, None));
        cursor = None;
    }
    if let Some(position) = cursor {
        frame.set_cursor_position(position);
    }
}

/// The screen with no chat open: how to start one.
fn draw_no_chat(buf: &mut Buffer, area: Rect, notice: Option<&str>, theme: Theme) {
    if area.is_empty() {
        return;
    }
    let width = usize::from(area.width);
    let text = truncate_end(NO_CHAT, width);
    let x = area.x + u16::try_from((width - str_width(&text)) / 2).unwrap_or(0);
    buf.set_stringn(x, area.y + area.height / 2, &text, width, theme.dim());
    if let Some(notice) = notice {
        let notice = one_line(notice);
        let notice = truncate_end(&notice, width);
        buf.set_stringn(area.x, area.bottom() - 1, &notice, width, theme.notice());
    }
}

/// What the workspace adds to a chat's screen.
#[derive(Debug, Default)]
struct Around<'a> {
    /// Shown on the notice line instead of the chat's own notice.
    notice: Option<&'a str>,
    /// The footer's parts about the other chats.
    chats: footer::Chats,
    /// Something over the chat has the keys: no cursor in the chat.
    covered: bool,
    /// The mouse is released to the terminal: a badge in the footer.
    mouse_released: bool,
}

/// Draw one chat into `area`. Only `view` (caches, scroll, click areas) is
/// mutated; the click areas are in screen cells.
fn draw_chat(
    frame: &mut Frame<'_>,
    area: Rect,
    state: &ChatState,
    view: &mut View,
    around: &Around<'_>,
) {
    view.hits.clear();
    view.transcript = None;
    if area.is_empty() {
        return;
    }
    let theme = view.theme;
    let notice_text = around.notice.or(state.view.notice.as_deref());
    let wrapped = composer::wrap(&state.view.composer, composer::text_width(area.width));

    // From the bottom: footer, composer, notice, cards; the transcript gets
    // the rest.
    let mut rest = area.height;
    let footer_h = rest.min(1);
    rest -= footer_h;
    let composer_h = rest.min(wrapped.height());
    rest -= composer_h;
    let notice_h = if notice_text.is_some() {
        rest.min(1)
    } else {
        0
    };
    rest -= notice_h;
    let search_h = if state.view.search.is_some() {
        rest.min(1)
    } else {
        0
    };
    rest -= search_h;
    let mut card = card::card(state, area.width, area.height, theme);
    let detail = card::detail(state, area.width, theme, &mut view.card_detail);
    if let Some(card) = &mut card {
        card::fit_expand_hint(card, detail, state, area.width, theme);
    }
    let cards_h = match &card {
        Some(card) => {
            let share = area.height * CARDS_SHARE.0 / CARDS_SHARE.1;
            let wanted = u16::try_from(card::wanted(state, card, detail)).unwrap_or(u16::MAX);
            // The choices and keys stay in sight, even past the share.
            let least = u16::try_from(card::box_least(card, detail)).unwrap_or(u16::MAX);
            wanted.min(share.max(least)).min(rest)
        }
        None => 0,
    };
    rest -= cards_h;
    let history = Rect::new(area.x, area.y, area.width, rest);
    let cards = Rect::new(area.x, history.bottom(), area.width, cards_h);
    let notice = Rect::new(area.x, cards.bottom(), area.width, notice_h);
    let search_bar = Rect::new(area.x, notice.bottom(), area.width, search_h);
    let composer_area = Rect::new(area.x, search_bar.bottom(), area.width, composer_h);
    let footer = Rect::new(area.x, composer_area.bottom(), area.width, footer_h);

    view.history.set_search(state.view.search.as_ref());
    view.history.render(
        &state.session.transcript,
        state.view.thoughts_expanded,
        entry::Terminals {
            views: &state.session.terminals,
            expanded: state.view.terminals_expanded,
        },
        theme,
        history,
        frame.buffer_mut(),
    );
    view.transcript = Some(TranscriptRows {
        area: history,
        moved: view.history.moved(),
    });
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
        if let Some(Modal::Form(form)) = &state.view.focus.modal {
            form::render(frame.buffer_mut(), cards, form, theme);
        }
    }
    if let Some(text) = notice_text
        && !notice.is_empty()
    {
        let width = usize::from(notice.width);
        let text = one_line(text);
        let text = truncate_end(&text, width);
        frame
            .buffer_mut()
            .set_stringn(notice.x, notice.y, &text, width, theme.notice());
    }
    let searching = state.view.search.as_ref().is_some_and(|s| s.typing);
    if !composer_area.is_empty() {
        composer::render(
            frame,
            composer_area,
            &wrapped,
            &mut view.composer_top,
            theme,
            state.view.focus.is(Pane::Composer) && !around.covered && !searching,
        );
    }
    if let Some(search) = &state.view.search
        && let Some(position) =
            search::bar(frame.buffer_mut(), search_bar, search, theme).filter(|_| cursor.is_none())
        && state.view.focus.modal.is_none()
        && !around.covered
    {
        frame.set_cursor_position(position);
    }
    if !composer_area.is_empty() && !around.covered {
        popup::render(frame.buffer_mut(), area, notice.y, state, theme);
        popup::render_hint(frame.buffer_mut(), composer_area, state, theme);
    }
    if !footer.is_empty() {
        let hits = footer::render_with(frame.buffer_mut(), footer, state, around.chats, theme);
        view.hits.push((hits.mode, Some(Action::OpenModeMenu)));
        if let Some(pending) = hits.pending {
            view.hits.push((pending, Some(Action::ToggleCards)));
        }
        if around.mouse_released {
            search::mouse_badge(frame.buffer_mut(), footer, theme);
        }
        if let (Some(rect), Some(waiting)) = (hits.elsewhere, around.chats.waiting) {
            view.hits.push((rect, Some(Action::GoToChat(waiting.chat))));
        }
        if let Some(Modal::ModeMenu(highlighted)) = state.view.focus.modal {
            view.transcript = None;
            let drawn = mode_menu::render(
                frame.buffer_mut(),
                area,
                hits.mode.x,
                // Above the message box: its border never runs into the box's.
                composer_area.y,
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
    if let Some(Modal::Rules { selected, confirm }) = state.view.focus.modal {
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
        view.transcript = None;
        cursor = None;
    } else {
        view.grants_top = 0;
    }
    if state.view.help {
        help::render(
            frame.buffer_mut(),
            area,
            state.view.focus.context(),
            state.view.help_scroll,
            theme,
        );
        view.hits.push((area, None));
        cursor = None;
    }
    if let Some(position) = cursor.filter(|_| !around.covered) {
        frame.set_cursor_position(position);
    }
}

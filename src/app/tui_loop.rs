//! The TUI loop: one `select!` over terminal input, the app's events, the
//! frame deadline and quit signals, drawing at most once per [`FRAME`] and
//! only when something changed; while the terminal is not focused, at most
//! once per `[screen] unfocused_frame_ms`, and at once when it is again.

use std::time::Duration;

use futures::StreamExt;
use tokio::time::Instant;

use super::{App, Extras, QuitSignals};
use crate::state::{Action, ChatFocus, Code, Msg};
use crate::tui::keymap::{self, Input};
use crate::ui::{self, Scroll};

/// Shortest time between two frames: bursts of updates share one frame.
pub const FRAME: Duration = Duration::from_millis(16);

/// When to draw: only after something changed, and at most once per
/// [`FRAME`]. While nothing changes there is no deadline, so the loop sleeps
/// until input or an agent event arrives (no tick, no wakeup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameClock {
    dirty: bool,
    last_draw: Option<Instant>,
    /// Time between two frames now: [`FRAME`], or longer while unfocused.
    every: Duration,
}

impl Default for FrameClock {
    fn default() -> Self {
        // The first frame is drawn at once.
        FrameClock {
            dirty: true,
            last_draw: None,
            every: FRAME,
        }
    }
}

impl FrameClock {
    /// The terminal gained (true) or lost focus: frames come every
    /// [`FRAME`] again (the one owed at once, if the last is that old),
    /// or every `unfocused` (at least [`FRAME`]) while nothing watches.
    pub(crate) fn set_focused(&mut self, focused: bool, unfocused: Duration) {
        self.every = if focused { FRAME } else { unfocused.max(FRAME) };
        self.dirty = true;
    }

    /// Something changed: a frame is owed.
    pub(crate) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether to draw now.
    pub(crate) fn should_draw(&self, now: Instant) -> bool {
        self.dirty && self.last_draw.is_none_or(|t| now >= t + self.every)
    }

    /// A frame was drawn at `now`.
    pub(crate) fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.last_draw = Some(now);
    }

    /// When the loop must wake to draw; `None` while nothing is owed.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(self.last_draw.map_or_else(Instant::now, |t| t + self.every))
    }
}

/// Run the TUI until the user quits. Draws only when something changed,
/// never more often than [`FRAME`].
pub async fn run_tui(app: &mut App, terminal: &mut crate::tui::Tui) -> std::io::Result<()> {
    let mut input = crate::tui::input::Input::new();
    let mut signals = QuitSignals::new()?;
    let mut views = ui::Views::new();
    let mut clock = FrameClock::default();
    let mut extras = Extras::default();
    loop {
        for id in app.take_closed() {
            views.forget(id);
        }
        if let Some((id, text)) = app.take_editor() {
            // The input stream would read the editor's keys: stop it meanwhile.
            drop(input);
            let result = crate::editor::edit_suspended(terminal, &text).await;
            input = crate::tui::input::Input::new();
            extras.screen_resumed();
            app.editor_done(id, result);
            clock.mark_dirty();
        }
        if let Some((id, command, method)) = app.take_login() {
            drop(input);
            let sandbox = app.login_sandbox(id);
            let result = crate::tui::suspended(terminal, async {
                let result = crate::acp::login(&command, method.as_deref(), sandbox.as_ref())
                    .await
                    .map_err(|err| crate::sanitize::one_line(&format!("{err:#}")));
                {
                    use std::io::Write;
                    let mut out = std::io::stdout();
                    let _ = writeln!(out, "Press Enter to return to warden.");
                    let _ = out.flush();
                }
                let _ = tokio::task::spawn_blocking(|| {
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line)
                })
                .await;
                result
            })
            .await;
            input = crate::tui::input::Input::new();
            extras.screen_resumed();
            app.login_done(id, result);
            clock.mark_dirty();
        }
        if clock.should_draw(Instant::now()) {
            crate::tui::scroll::draw(terminal, |frame| {
                ui::draw_workspace(frame, &app.ws, &mut views);
                views.transcript_area()
            })?;
            clock.drawn(Instant::now());
        }
        if app.should_quit() {
            break;
        }
        // A card that ignores answers for a moment is drawn again when
        // it takes them.
        let arming = app.ws.arming_deadline().map(Instant::from_std);
        // A running turn's elapsed time on the footer moves each second.
        let busy = app.state().turn_tick().map(Instant::from_std);
        let arming = match (arming, busy) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let deadline = match (clock.deadline(), arming) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    let composer_empty = app.state().view.composer.is_empty();
                    let lists = !matches!(app.ws.focus, ChatFocus::Chat);
                    let at = std::time::Instant::now();
                    match keymap::map_event_at(&event, composer_empty, at) {
                        Some(Input::Action(action)) => app.handle(Msg::Key { action, at }),
                        // Over a list, the wheel and the page keys move the selection.
                        Some(Input::Scroll(Scroll::Up(_) | Scroll::PageUp)) if lists => {
                            app.handle(Msg::Key { action: Action::key(Code::Up), at });
                        }
                        Some(Input::Scroll(Scroll::Down(_) | Scroll::PageDown)) if lists => {
                            app.handle(Msg::Key { action: Action::key(Code::Down), at });
                        }
                        Some(Input::Scroll(scroll)) => match app.ws.active_id() {
                            Some(id) => views.scroll(id, scroll),
                            None => continue,
                        },
                        Some(Input::Click(column, row)) => match views.hit(column, row) {
                            Some(action) => app.handle(Msg::Key { action, at }),
                            None => continue,
                        },
                        Some(Input::Resize) => terminal.backend_mut().resized(),
                        Some(Input::Focus(focused)) => {
                            extras.on_focus(focused);
                            let unfocused = terminal.backend().unfocused_frame();
                            clock.set_focused(focused, unfocused);
                        }
                        Some(Input::ToggleMouse) => extras.toggle_mouse(&mut views),
                        None => continue,
                    }
                    clock.mark_dirty();
                }
                Some(Err(err)) => return Err(err),
                None => break,
            },
            Some(event) = app.next_agent_event() => {
                app.on_agent_event(event);
                // Take whatever else already arrived into the same frame.
                while let Some(event) = app.try_agent_event() {
                    app.on_agent_event(event);
                }
                extras.after_events(app);
                clock.mark_dirty();
            }
            _ = sleep_until(deadline), if deadline.is_some() => {
                if arming.is_some_and(|end| end <= Instant::now()) {
                    app.handle(Msg::Tick(std::time::Instant::now()));
                    clock.mark_dirty();
                }
            }
            name = signals.recv() => {
                // Leave as Ctrl-D does: the caller answers what is pending,
                // ends the agents and restores the terminal.
                tracing::info!(signal = name, "quitting on a signal");
                break;
            }
        }
    }
    Ok(())
}

pub(super) async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

#[cfg(test)]
mod frame_tests {
    use super::*;

    #[test]
    fn idle_has_no_deadline_and_bursts_share_one_frame() {
        let t0 = Instant::now();
        let mut clock = FrameClock::default();
        assert!(clock.should_draw(t0), "the first frame at once");
        clock.drawn(t0);
        assert_eq!(clock.deadline(), None, "nothing changed: no wakeup");
        assert!(!clock.should_draw(t0 + FRAME * 10));
        // A burst right after a frame: no second frame inside the interval.
        clock.mark_dirty();
        clock.mark_dirty();
        assert!(!clock.should_draw(t0 + FRAME / 2));
        assert_eq!(
            clock.deadline(),
            Some(t0 + FRAME),
            "woken once, at the next frame"
        );
        assert!(clock.should_draw(t0 + FRAME));
        clock.drawn(t0 + FRAME);
        assert_eq!(clock.deadline(), None);
        // A change long after the last frame draws at once.
        clock.mark_dirty();
        assert!(clock.should_draw(t0 + FRAME * 5));
    }

    #[test]
    fn unfocused_frames_come_slower_and_focus_draws_at_once() {
        let t0 = Instant::now();
        let slow = Duration::from_millis(250);
        let mut clock = FrameClock::default();
        clock.drawn(t0);
        clock.set_focused(false, slow);
        clock.drawn(t0 + FRAME);
        clock.mark_dirty();
        assert!(
            !clock.should_draw(t0 + FRAME * 2),
            "not at the focused rate"
        );
        assert_eq!(clock.deadline(), Some(t0 + FRAME + slow));
        assert!(clock.should_draw(t0 + FRAME + slow));
        // Focus back, long enough after the last frame: drawn at once.
        clock.set_focused(true, slow);
        assert!(clock.should_draw(t0 + FRAME * 3));
        clock.drawn(t0 + FRAME * 3);
        clock.mark_dirty();
        assert_eq!(clock.deadline(), Some(t0 + FRAME * 4));
        // A setting below the focused rate does not draw faster.
        clock.set_focused(false, Duration::ZERO);
        assert_eq!(clock.deadline(), Some(t0 + FRAME * 4));
    }
}

//! The choice when a chat's mode asks for an agent process with other
//! sandbox rules (it entered or left Plan) and the agent can neither load
//! nor resume a session, so the chat cannot take its session along: a
//! fresh session on the other process, with the transcript kept on
//! screen, or staying where it is. Pure: the runtime moves the chat.

use super::drafts::{Popup, PopupItem};
use super::{Action, ChatState, Effect};

/// The open question: which agent, and which way the chat would move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckMove {
    /// Whether the other process keeps the workspace read-only (entering
    /// Plan) or lets the agent write it (leaving Plan).
    pub to_read_only: bool,
    /// The highlighted answer: 0 a fresh session, 1 stay (↑↓, Enter).
    pub selected: usize,
}

impl StuckMove {
    /// What staying means, in the words the chat says it in.
    fn stay_means(&self) -> &'static str {
        if self.to_read_only {
            "its sandbox lets the agent write the workspace by itself; warden refuses only the writes it is asked for"
        } else {
            "its sandbox keeps the workspace read-only, so the agent cannot write it in this mode"
        }
    }

    fn other_process(&self) -> &'static str {
        if self.to_read_only {
            "a read-only process"
        } else {
            "a process that may write the workspace"
        }
    }
}

impl ChatState {
    /// The runtime could not move the chat with its session: ask.
    pub(super) fn on_stuck_move(&mut self, stuck: StuckMove) {
        self.info(format!(
            "{} can neither load nor resume a session, so this chat cannot take its session to {}: \
             f starts a fresh session there · s stays on this process",
            self.session.agent_name,
            stuck.other_process()
        ));
        self.view.stuck_move = Some(stuck);
    }

    /// A key while the question is open; `None` when it is not.
    pub(super) fn stuck_move_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
        let stuck = self.view.stuck_move.as_mut()?;
        let fresh = match action {
            Action::Up | Action::Down => {
                stuck.selected = 1 - stuck.selected.min(1);
                return Some(Vec::new());
            }
            Action::Submit => stuck.selected == 0,
            Action::Char('f') => true,
            Action::Char('s' | 'n') | Action::Cancel | Action::Interrupt(_) => false,
            Action::Quit => return None,
            _ => return Some(Vec::new()),
        };
        // A fresh session is said by the move's own lines (the agent does
        // not remember the turns above).
        if !fresh {
            let line = format!(
                "this chat stays on its agent process: {}. Start a new chat (Ctrl-N) in this mode for the kernel to hold it",
                stuck.stay_means()
            );
            self.info(line);
        }
        self.view.stuck_move = None;
        Some(vec![Effect::MoveProcess { fresh }])
    }

    /// The question, drawn as the composer's popup.
    pub(super) fn stuck_move_popup(&self) -> Option<Popup> {
        let stuck = self.view.stuck_move.as_ref()?;
        Some(Popup {
            title: format!(
                "{} cannot take this session to {}: f fresh session · s stay",
                self.session.agent_name,
                stuck.other_process()
            ),
            selected: stuck.selected,
            items: vec![
                PopupItem {
                    label: "f  a fresh session there".into(),
                    detail: "the transcript stays on screen; the agent forgets it".into(),
                },
                PopupItem {
                    label: "s  stay on this process".into(),
                    detail: stuck.stay_means().into(),
                },
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Msg;

    fn asked(to_read_only: bool) -> ChatState {
        let mut state = ChatState::new("demo", "/w");
        state.update(Msg::StuckMove(StuckMove {
            to_read_only,
            selected: 0,
        }));
        state
    }

    #[test]
    fn the_question_holds_the_keys_until_answered() {
        let mut state = asked(true);
        assert_eq!(state.update(Msg::Action(Action::ch('y'))), Vec::new());
        assert!(state.view.stuck_move.is_some());
        assert_eq!(
            state.update(Msg::Action(Action::Cancel)),
            vec![Effect::MoveProcess { fresh: false }],
            "Esc stays"
        );
        assert!(state.view.stuck_move.is_none());
        assert!(state.composer_popup().is_none());
    }

    #[test]
    fn f_moves_with_a_fresh_session_and_each_way_says_what_staying_means() {
        let mut state = asked(false);
        let popup = state.composer_popup().expect("drawn");
        assert!(popup.items[1].detail.contains("read-only"), "{popup:?}");
        assert_eq!(
            state.update(Msg::Action(Action::ch('f'))),
            vec![Effect::MoveProcess { fresh: true }]
        );
        let mut state = asked(true);
        state.update(Msg::Action(Action::Down));
        assert_eq!(
            state.update(Msg::Action(Action::Submit)),
            vec![Effect::MoveProcess { fresh: false }],
            "Enter on the highlighted answer"
        );
        let popup = asked(true).composer_popup().expect("drawn");
        assert!(popup.items[1].detail.contains("by itself"), "{popup:?}");
    }
}

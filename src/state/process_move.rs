//! The choice when a chat's mode asks for an agent process with other
//! sandbox rules (it entered or left Plan) and the agent can neither load
//! nor resume a session, so the chat cannot take its session along: a
//! fresh session on the other process, with the transcript kept on
//! screen, or staying where it is. Pure: the runtime moves the chat.

use std::time::{Duration, Instant};

use super::drafts::{Popup, PopupItem};
use super::{Action, ChatState, Effect};

/// How long the chat's mode must stay put before its agent moves to the
/// process with the other rules: Shift-Tab cycling through Plan moves
/// nothing.
pub const MODE_SETTLE: Duration = Duration::from_millis(1500);

/// Where the chat's agent process stands against the chat's mode, and
/// what waits for a move.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessPlace {
    /// The process's sandbox keeps the workspace read-only.
    pub read_only: bool,
    /// The chat's sandbox moves with Plan (it lets the agent write the
    /// workspace otherwise).
    pub follows_plan: bool,
    /// When the mode last changed, by the runtime's clock; `None`: it has
    /// settled (or changed with no clock known: at once).
    pub changed_at: Option<Instant>,
    /// A message sent while the process did not fit the mode: it goes
    /// once the agent is on the right process.
    pub held: Option<String>,
    /// The user chose to stay on this process (the agent could not take
    /// its session along), until the mode changes again.
    pub stays: bool,
}

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
    /// Whether the agent's process has the rules the chat's mode asks for
    /// (or the user chose to stay on it).
    pub fn process_fits(&self) -> bool {
        let place = &self.session.process;
        !place.follows_plan
            || place.stays
            || place.read_only == (self.gate.mode == crate::policy::Mode::Plan)
    }

    /// Whether the chat's mode has stayed put long enough for its agent to
    /// move (`MODE_SETTLE`, by the runtime's clock).
    pub fn mode_settled(&self) -> bool {
        match self.session.process.changed_at {
            None => true,
            Some(at) => self.view.clock.is_some_and(|now| now >= at + MODE_SETTLE),
        }
    }

    /// When the runtime should send its clock for a move to settle.
    pub(crate) fn settle_deadline(&self) -> Option<Instant> {
        let end = self.session.process.changed_at? + MODE_SETTLE;
        let now = self.view.clock?;
        (now < end && !self.process_fits()).then_some(end)
    }

    /// The mode changed: the agent moves once it has settled.
    pub(crate) fn mode_changed(&mut self) {
        let place = &mut self.session.process;
        place.stays = false;
        place.changed_at = self.view.pressed_at.or(self.view.clock);
    }

    /// A message to send while the process does not fit the mode: held,
    /// and the move starts now (the first turn in the new mode must not
    /// run on the old process). `None`: it fits, send as usual.
    pub(super) fn hold_for_move(&mut self, text: String) -> Option<Vec<Effect>> {
        if self.process_fits() {
            return None;
        }
        self.session.process.changed_at = None;
        self.session.process.held = Some(text);
        self.info(if self.session.process.read_only {
            "the agent moves to a process that may write the workspace first: the message goes once it is there"
        } else {
            "the agent moves to a read-only process first: the message goes once it is there"
        });
        Some(Vec::new())
    }

    /// The runtime says which rules the chat's process has.
    pub(super) fn on_process_rules(&mut self, read_only: bool, follows_plan: bool) -> Vec<Effect> {
        self.session.process.read_only = read_only;
        self.session.process.follows_plan = follows_plan;
        Vec::new()
    }

    /// The session is ready: a held message goes if the process fits now.
    pub(super) fn release_held(&mut self) -> Vec<Effect> {
        let ready = matches!(self.session.connection, super::Connection::Ready { .. });
        if !ready || !self.process_fits() || self.session.turn.is_some() {
            return Vec::new();
        }
        match self.session.process.held.take() {
            Some(text) if !self.refuse_turn() => self.send_prompt(text),
            _ => Vec::new(),
        }
    }

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
    pub(crate) fn stuck_move_key(&mut self, action: &Action) -> Option<Vec<Effect>> {
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
        let mut effects = vec![Effect::MoveProcess { fresh }];
        if !fresh {
            let line = format!(
                "this chat stays on its agent process: {}. Start a new chat (Ctrl-N) in this mode for the kernel to hold it",
                stuck.stay_means()
            );
            self.info(line);
            self.view.stuck_move = None;
            self.session.process.stays = true;
            effects.extend(self.release_held());
            return Some(effects);
        }
        self.view.stuck_move = None;
        Some(effects)
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

    /// An idle chat whose process may write the workspace and moves with
    /// Plan.
    fn on_writable_process() -> ChatState {
        let mut state = ChatState::new("demo", "/w");
        state.update(Msg::ProcessRules {
            read_only: false,
            follows_plan: true,
        });
        state.update(Msg::SessionStarted(crate::model::SessionInfo {
            session_id: "s".into(),
            modes: None,
            origin: Default::default(),
        }));
        state
    }

    fn shift_tab(state: &mut ChatState, at: Instant) {
        state.update(Msg::Key {
            action: Action::BackTab,
            at,
        });
    }

    /// Issue 33, item 6: Shift-Tab through Plan and out again moves
    /// nothing; a mode that stays put for `MODE_SETTLE` moves the agent
    /// (the runtime is told when to look).
    #[test]
    fn cycling_through_plan_moves_nothing_and_a_settled_plan_moves() {
        use crate::policy::Mode;
        let t0 = Instant::now();
        let mut state = on_writable_process();
        shift_tab(&mut state, t0);
        shift_tab(&mut state, t0 + Duration::from_millis(200));
        assert_eq!(state.gate.mode, Mode::Plan);
        assert!(!state.process_fits());
        assert!(!state.mode_settled(), "passing through");
        shift_tab(&mut state, t0 + Duration::from_millis(400));
        assert_eq!(state.gate.mode, Mode::Default);
        assert!(state.process_fits(), "back where it was: nothing to move");
        assert_eq!(state.settle_deadline(), None);

        let t1 = t0 + Duration::from_secs(10);
        shift_tab(&mut state, t1);
        shift_tab(&mut state, t1 + Duration::from_millis(100));
        assert_eq!(state.gate.mode, Mode::Plan);
        let end = t1 + Duration::from_millis(100) + MODE_SETTLE;
        assert_eq!(state.settle_deadline(), Some(end));
        state.update(Msg::Tick(end - Duration::from_millis(1)));
        assert!(!state.mode_settled());
        state.update(Msg::Tick(end));
        assert!(state.mode_settled(), "the runtime moves the agent now");
    }

    /// A message sent in Plan before the agent moved is held, the move
    /// starts at once, and the message goes once the chat is ready on the
    /// read-only process: the first turn in Plan never runs on a process
    /// that may write the workspace.
    #[test]
    fn the_first_turn_in_plan_waits_for_the_read_only_process() {
        let t0 = Instant::now();
        let mut state = on_writable_process();
        shift_tab(&mut state, t0);
        shift_tab(&mut state, t0 + Duration::from_millis(100));
        state.update(Msg::Action(Action::Paste("look around".into())));
        let effects = state.update(Msg::Key {
            action: Action::Submit,
            at: t0 + Duration::from_millis(300),
        });
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::SendPrompt(_))),
            "{effects:?}"
        );
        assert!(state.mode_settled(), "the move starts now");
        assert_eq!(state.session.turn, None);
        // The runtime moves it: the new process's rules, then its session.
        state.update(Msg::SandboxMove);
        state.update(Msg::ProcessRules {
            read_only: true,
            follows_plan: true,
        });
        let effects = state.update(Msg::SessionStarted(crate::model::SessionInfo {
            session_id: "s".into(),
            modes: None,
            origin: Default::default(),
        }));
        let sent: Vec<&String> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::SendPrompt(text) => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(sent.len(), 1, "{effects:?}");
        assert!(sent[0].starts_with(crate::state::PLAN_INSTRUCTION));
        assert!(sent[0].ends_with("look around"));
    }

    /// The agent cannot take its session along and the user stays: the
    /// held message goes on this process, as the user chose.
    #[test]
    fn staying_put_sends_the_held_message() {
        let t0 = Instant::now();
        let mut state = on_writable_process();
        shift_tab(&mut state, t0);
        shift_tab(&mut state, t0 + Duration::from_millis(100));
        state.update(Msg::Action(Action::Paste("look around".into())));
        state.update(Msg::Action(Action::Submit));
        state.update(Msg::StuckMove(StuckMove {
            to_read_only: true,
            selected: 0,
        }));
        let effects = state.update(Msg::Action(Action::ch('s')));
        assert!(
            effects.iter().any(|e| matches!(e, Effect::SendPrompt(_))),
            "{effects:?}"
        );
        assert!(state.process_fits(), "until the mode changes again");
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

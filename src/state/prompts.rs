//! The composer's keys and what the user sends: a prompt, a cancel, a
//! quit, a restart; a prompt the chat cannot send yet says why.

use super::*;

impl ChatState {
    pub(crate) fn on_composer_key(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Char('r')
                if self.view.composer.is_empty() && self.session.connection == Connection::Down =>
            {
                self.restart()
            }
            Action::Submit => self.submit(),
            Action::BackTab => self.set_mode(self.gate.mode.next()),
            Action::Restart => {
                if self.session.connection == Connection::Down || self.session.agent_stuck {
                    return self.restart();
                }
                self.view.notice =
                    Some("the agent is running; restart is for when it has exited".into());
                Vec::new()
            }
            other => {
                edit_composer(&mut self.view.composer, &other);
                Vec::new()
            }
        }
    }

    pub(in crate::state) fn submit(&mut self) -> Vec<Effect> {
        if self.view.composer.text().trim().is_empty() {
            return Vec::new();
        }
        if self.is_busy() {
            self.view.notice = Some(
                "the agent is still working: wait for the turn to end, or Esc to cancel it".into(),
            );
            return Vec::new();
        }
        match self.session.connection {
            Connection::Ready { .. } => {}
            Connection::Starting => {
                self.view.notice = Some(STILL_STARTING.into());
                return Vec::new();
            }
            Connection::Down => {
                self.view.notice = Some(NOT_RUNNING.into());
                return Vec::new();
            }
        }
        if self.refuse_turn() {
            return Vec::new();
        }
        let text = self.view.composer.take();
        if let Some(effects) = self.hold_for_move(text.clone()) {
            return effects;
        }
        self.send_prompt(text)
    }

    /// Show the user's message and send it (with the plan instruction in Plan).
    pub(in crate::state) fn send_prompt(&mut self, text: String) -> Vec<Effect> {
        if self.session_id().is_none() {
            self.view.notice = Some(NOT_CONNECTED.into());
            return Vec::new();
        }
        self.session.transcript.end_turn();
        // The transcript shows a long paste folded, as the composer did; the
        // agent gets the message whole.
        self.session.transcript.push(EntryKind::User(text.clone()));
        let text = self.view.drafts.pastes.expand(&text);
        self.session.turn = Some(Turn {
            cancelling: false,
            started: self.view.clock,
        });
        self.session.controls.turn_base = self.session.controls.usage.as_ref().and_then(|u| u.used);
        let text = self.with_checkpoint_note(text);
        if self.gate.mode == Mode::Plan {
            self.info("plan mode: the prompt asks the agent to read and propose only");
            return vec![Effect::SendPrompt(format!("{PLAN_INSTRUCTION}\n\n{text}"))];
        }
        vec![Effect::SendPrompt(text)]
    }

    pub(crate) fn cancel(&mut self) -> Vec<Effect> {
        match &mut self.session.turn {
            Some(turn) if !turn.cancelling => {
                turn.cancelling = true;
                let mut effects = vec![Effect::CancelTurn];
                effects.extend(self.cancel_all_approvals("turn cancelled"));
                self.session.transcript.cancel_unfinished_tools();
                effects
            }
            _ => Vec::new(),
        }
    }

    /// Deny with a reason: `reason` goes as the next prompt once the turn
    /// ends by itself. The turn is not cancelled: claude-agent-acp 0.23.1
    /// answers a cancelled prompt before its own end, so a prompt sent then
    /// is answered at once and every later one a turn late. Its other cards
    /// get their reject option, and its later requests are refused
    /// (`no_turn_running`), so the agent soon ends it; Esc still cancels.
    pub(crate) fn send_after_turn(&mut self, reason: String) -> Vec<Effect> {
        let mut effects = self.reject_all_approvals("you denied this turn with a reason");
        if self.session.turn.is_none() {
            if !self.refuse_turn() {
                effects.extend(self.send_prompt(reason));
            }
            return effects;
        }
        self.session.queued_prompt = Some(reason);
        self.info("your reason goes to the agent as the next message when this turn ends (Esc cancels the turn)");
        effects
    }

    pub(crate) fn quit(&mut self) -> Vec<Effect> {
        self.view.quitting = true;
        let mut effects = Vec::new();
        if self.session.turn.is_some() {
            effects.extend(self.cancel());
        }
        effects.extend(self.cancel_all_approvals("warden is quitting"));
        effects.push(Effect::Quit);
        effects
    }

    pub(in crate::state) fn restart(&mut self) -> Vec<Effect> {
        self.session.agent_stuck = false;
        self.gate.asking_mode = None;
        self.session.opening = None;
        self.gate.prompt_blocked = None;
        self.session.connection = Connection::Starting;
        self.session.agent_modes = None;
        // The new session reports its own options, usage and mode switches.
        self.session.controls = SessionControls::default();
        self.session.expected_agent_mode = None;
        self.session.transcript.end_turn();
        self.info("restarting the agent…");
        vec![Effect::RestartAgent]
    }
}

/// The notice when a prompt is sent before the agent has started.
const STILL_STARTING: &str = "the agent is still starting";
/// The notice when a prompt is sent while the agent is down.
const NOT_RUNNING: &str = "the agent is not running: press Ctrl-R to restart it";
/// The notice when a prompt is sent without a session.
const NOT_CONNECTED: &str = "the agent is not connected";
/// Notices that a started session makes stale (the last: the agent exited).
pub(super) const NOT_READY_NOTICES: [&str; 4] = [
    STILL_STARTING,
    NOT_RUNNING,
    NOT_CONNECTED,
    "the agent is not running: press r to restart it",
];

/// Apply an editing key to a composer; other keys are ignored.
pub(crate) fn edit_composer(composer: &mut Composer, action: &Action) {
    match action {
        Action::Char(c) => composer.insert_char(*c),
        Action::Tab => composer.insert_char('\t'),
        Action::Newline => composer.insert_char('\n'),
        Action::Paste(text) => composer.insert_str(text),
        Action::Backspace => composer.backspace(),
        Action::Delete => composer.delete(),
        Action::DeleteWordBack => composer.delete_word_back(),
        Action::KillLineStart => composer.kill_to_line_start(),
        Action::KillLineEnd => composer.kill_to_line_end(),
        Action::Left => composer.left(),
        Action::Right => composer.right(),
        Action::WordLeft => composer.word_left(),
        Action::WordRight => composer.word_right(),
        Action::Up => {
            composer.up();
        }
        Action::Down => {
            composer.down();
        }
        Action::LineStart => composer.home(),
        Action::LineEnd => composer.end(),
        _ => {}
    }
}

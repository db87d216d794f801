//! How a turn ends: the agent answers the prompt (`Msg::TurnEnded`, from
//! its `PromptDone`), fails it (`Msg::TurnFailed`), or never ends a
//! cancelled turn and warden ends it (`Msg::CancelOverdue`). Every way a
//! turn ends, the agent going away included, goes through `finish_turn`;
//! `ChatState::update` takes the end checkpoint first, and what settled
//! goes to the record (`record.rs`).

use super::*;

impl ChatState {
    /// The agent answered the prompt: the waiting cards go stale, calls
    /// still open are closed, a denial's reason or a queued message goes
    /// as the next prompt.
    pub(in crate::state) fn on_turn_ended(&mut self, reason: StopReason) -> Vec<Effect> {
        if self.session.turn.is_none() {
            return Vec::new();
        }
        let mut effects = self.cancel_all_approvals("the turn ended");
        self.finish_turn(reason == StopReason::Cancelled);
        match &reason {
            StopReason::EndTurn => {}
            StopReason::Cancelled => self.info("turn cancelled"),
            other => self.info(format!(
                "turn ended: {}",
                crate::sanitize::one_line(other.as_str())
            )),
        }
        self.session.last_stop = Some(reason);
        if let Some(reason) = self.session.queued_prompt.take()
            && !self.refuse_turn()
        {
            effects.extend(self.send_prompt(reason));
        }
        effects.extend(self.send_queued());
        effects
    }

    /// The agent failed the prompt: said in the chat, bounded.
    pub(in crate::state) fn on_turn_failed(&mut self, message: &str) -> Vec<Effect> {
        if self.session.turn.is_none() {
            return Vec::new();
        }
        // The agent's error can be one huge line: a bounded part of it on
        // every output path.
        let message = crate::sanitize::cut(message, AGENT_ERROR).into_owned();
        let effects = self.cancel_all_approvals("the prompt failed");
        self.finish_turn(true);
        self.error(
            format!("the agent failed the prompt: {message}"),
            Vec::new(),
        );
        self.session.failed.get_or_insert(message);
        effects
    }

    /// The agent did not end a cancelled turn within `grace`: warden ends
    /// it, and Ctrl+R may restart the agent although it runs.
    pub(in crate::state) fn on_cancel_overdue(
        &mut self,
        grace: std::time::Duration,
    ) -> Vec<Effect> {
        if !self.session.turn.as_ref().is_some_and(|t| t.cancelling) {
            return Vec::new();
        }
        self.session.transcript.push(EntryKind::Error {
            message: format!(
                "the agent did not end the cancelled turn within {} s; warden ended it here (the agent may still be busy: go on, or Ctrl+R to restart it)",
                grace.as_secs()
            ),
            detail: Vec::new(),
        });
        let effects = self.update(Msg::TurnEnded(StopReason::Cancelled));
        self.session.agent_stuck = true;
        effects
    }

    /// The turn is over; calls still open are marked cancelled with
    /// `cancel_tools`, else as having no result from the agent.
    pub(in crate::state) fn finish_turn(&mut self, cancel_tools: bool) {
        self.gate.allowed_scopes.clear();
        if self.session.turn.take().is_some() {
            if cancel_tools {
                self.session.transcript.cancel_unfinished_tools();
            } else {
                self.session.transcript.close_open_tools();
            }
        }
        self.session.transcript.end_turn();
    }
}

//! `warden exec --on-ask`: how a headless run answers what would have
//! been a card, by one of the card's rows.

use crate::gate::CardKind;

use crate::state::{Answer, Choice, ChoiceDef};

/// How a headless run (`warden exec`) answers what would have been a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAsk {
    /// Reject it (the default: nothing risky runs unattended).
    Deny,
    /// Allow it once.
    Allow,
    /// Cancel the turn and fail the run.
    Fail,
    /// Show the card on the remote page (`src/remote/`) and wait for an
    /// answer there; the runtime denies it when none comes in time.
    Remote,
}

impl OnAsk {
    /// The card's row it picks by itself (`None`: it picks none; `Fail`
    /// cancels the turn, `Remote` waits for someone).
    pub(crate) fn row(self) -> Option<&'static ChoiceDef> {
        match self {
            OnAsk::Deny => Some(Choice::Deny.def()),
            OnAsk::Allow => Some(Choice::Allow.def()),
            OnAsk::Fail | OnAsk::Remote => None,
        }
    }

    /// What it answers on a card of this kind: its row's answer, a deny
    /// for `Remote` (nobody answered in time); `None` for `Fail`.
    pub(crate) fn pick(self, kind: CardKind) -> Option<Answer> {
        let choice = match self.row().map(|row| row.binding.cmd) {
            // Nobody is there to open a sign-in page or fill a form: an
            // elicitation is declined, never accepted unseen.
            Some(Choice::Allow) if !kind.on_ask_may_allow() => Choice::Deny,
            Some(choice) => choice,
            None if self == OnAsk::Fail => return None,
            None => Choice::Deny,
        };
        choice.answer("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_on_ask_answers_by_a_row() {
        assert_eq!(OnAsk::Allow.row().map(|r| r.id), Some("allow"));
        assert_eq!(OnAsk::Deny.row().map(|r| r.id), Some("deny"));
        assert_eq!(OnAsk::Allow.pick(CardKind::AgentTool), Some(Answer::Allow));
        assert_eq!(OnAsk::Allow.pick(CardKind::Elicitation), Some(Answer::Deny));
        assert_eq!(OnAsk::Remote.pick(CardKind::AgentTool), Some(Answer::Deny));
        assert_eq!(OnAsk::Fail.pick(CardKind::AgentTool), None);
    }
}

//! The turn-end alert: when a turn that took long ends while the terminal
//! is not focused, ring the bell / send the desktop notification.
//!
//! Pure: the runtime tells it when the terminal gains or loses focus and,
//! after every batch of events, which chats are busy at what time; it
//! answers which turns ended in a way worth an alert.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::ChatId;

/// What the alert decision hears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AlertMsg {
    /// The terminal gained (`true`) or lost focus.
    Focus(bool),
    /// Chat `chat` is (or is not) running a turn at `at`. `after` is how
    /// long a turn must take to alert when it ends (`None`: never).
    Busy {
        chat: ChatId,
        busy: bool,
        at: Instant,
        after: Option<Duration>,
    },
}

/// Turn starts and the terminal's focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnAlerts {
    /// Until the terminal says otherwise, it is focused (a terminal that
    /// does not report focus never gets turn-end alerts).
    focused: bool,
    /// When each busy chat's turn began.
    started: BTreeMap<ChatId, Instant>,
}

impl Default for TurnAlerts {
    fn default() -> Self {
        TurnAlerts {
            focused: true,
            started: BTreeMap::new(),
        }
    }
}

impl TurnAlerts {
    /// Apply one message; `Some(duration)` when a turn that long just ended
    /// unseen and deserves an alert.
    pub(crate) fn update(&mut self, msg: AlertMsg) -> Option<Duration> {
        match msg {
            AlertMsg::Focus(focused) => {
                self.focused = focused;
                None
            }
            AlertMsg::Busy {
                chat,
                busy: true,
                at,
                ..
            } => {
                self.started.entry(chat).or_insert(at);
                None
            }
            AlertMsg::Busy {
                chat,
                busy: false,
                at,
                after,
            } => {
                let started = self.started.remove(&chat)?;
                let took = at.saturating_duration_since(started);
                let after = after?;
                (!self.focused && took >= after).then_some(took)
            }
        }
    }

    /// Forget the chats `keep` says no to (closed ones).
    pub(crate) fn retain(&mut self, keep: impl Fn(ChatId) -> bool) {
        self.started.retain(|&id, _| keep(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER: Option<Duration> = Some(Duration::from_secs(30));

    fn busy(chat: ChatId, busy: bool, at: Instant) -> AlertMsg {
        AlertMsg::Busy {
            chat,
            busy,
            at,
            after: AFTER,
        }
    }

    #[test]
    fn a_long_turn_ending_unfocused_alerts_once() {
        let t0 = Instant::now();
        let mut a = TurnAlerts::default();
        assert_eq!(a.update(busy(1, true, t0)), None);
        assert_eq!(a.update(AlertMsg::Focus(false)), None);
        // Still busy later: the start stays the first one seen.
        assert_eq!(a.update(busy(1, true, t0 + Duration::from_secs(20))), None);
        let end = t0 + Duration::from_secs(45);
        assert_eq!(a.update(busy(1, false, end)), Some(Duration::from_secs(45)));
        assert_eq!(a.update(busy(1, false, end)), None, "once per turn");
    }

    #[test]
    fn no_alert_when_focused_short_or_turned_off() {
        let t0 = Instant::now();
        let long = t0 + Duration::from_secs(60);
        let mut a = TurnAlerts::default();
        a.update(busy(1, true, t0));
        assert_eq!(a.update(busy(1, false, long)), None, "focused");
        a.update(AlertMsg::Focus(false));
        a.update(busy(1, true, t0));
        assert_eq!(
            a.update(busy(1, false, t0 + Duration::from_secs(29))),
            None,
            "short"
        );
        a.update(busy(1, true, t0));
        let off = AlertMsg::Busy {
            chat: 1,
            busy: false,
            at: long,
            after: None,
        };
        assert_eq!(a.update(off), None, "turned off");
        // Focus regained before the end: nothing.
        a.update(busy(2, true, t0));
        a.update(AlertMsg::Focus(true));
        assert_eq!(a.update(busy(2, false, long)), None);
    }

    #[test]
    fn chats_are_timed_apart() {
        let t0 = Instant::now();
        let mut a = TurnAlerts::default();
        a.update(AlertMsg::Focus(false));
        a.update(busy(1, true, t0));
        a.update(busy(2, true, t0 + Duration::from_secs(50)));
        let end = t0 + Duration::from_secs(60);
        assert_eq!(a.update(busy(2, false, end)), None, "chat 2 took 10 s");
        assert_eq!(a.update(busy(1, false, end)), Some(Duration::from_secs(60)));
        a.update(busy(3, true, t0));
        a.retain(|id| id != 3);
        assert_eq!(a.update(busy(3, false, end)), None, "closed");
    }
}

//! The output of warden's own terminals as the chat shows it, bounded in
//! total: each view holds at most the runtime's screen tail (1 MiB), and
//! past [`VIEWS_TOTAL`] the older output of finished terminals goes first
//! (oldest first), then of running ones, none below [`VIEW_KEPT`] of its
//! newest output. What was dropped is counted, and the entry says so.

use super::{ChatState, TerminalView};

/// The most terminal output one chat's views keep together.
pub(crate) const VIEWS_TOTAL: usize = 32 << 20;

/// What dropping for the total leaves of each view: its newest output.
pub(crate) const VIEW_KEPT: usize = 64 << 10;

impl ChatState {
    /// A terminal's output changed: keep its view, within the total.
    pub(super) fn on_terminal_output(&mut self, id: String, view: TerminalView) {
        self.session.transcript.touch_terminal(&id);
        self.session.terminals.insert(id, view);
        let total: usize = self
            .session
            .terminals
            .values()
            .map(|v| v.output.len())
            .sum();
        if total <= VIEWS_TOTAL {
            return;
        }
        let mut order: Vec<(bool, u64, String)> = self
            .session
            .terminals
            .iter()
            .map(|(id, v)| (v.exit.is_none(), age(id), id.clone()))
            .collect();
        // Finished before running, oldest first; with very many terminals,
        // less of each, and nothing of the oldest finished ones.
        order.sort();
        let finished = order.iter().filter(|(running, ..)| !running).count();
        let plan = [VIEW_KEPT, VIEW_KEPT / 16]
            .into_iter()
            .flat_map(|keep| order.iter().map(move |(_, _, id)| (id, keep)))
            .chain(order[..finished].iter().map(|(_, _, id)| (id, 0)));
        let mut total = total;
        let mut touched = Vec::new();
        for (id, keep) in plan {
            if total <= VIEWS_TOTAL / 4 * 3 {
                break;
            }
            if let Some(view) = self.session.terminals.get_mut(id) {
                let freed = shrink(view, keep);
                total -= freed;
                if freed > 0 {
                    touched.push(id.clone());
                }
            }
        }
        for id in touched {
            self.session.transcript.touch_terminal(&id);
        }
    }
}

/// The number in `term-N`, for telling older terminals (others count as new).
fn age(id: &str) -> u64 {
    id.strip_prefix("term-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Keep the newest `keep` bytes of the view; returns the bytes freed.
fn shrink(view: &mut TerminalView, keep: usize) -> usize {
    let before = view.output.len();
    let cut = crate::text::ceil_char_boundary(&view.output, before.saturating_sub(keep));
    if cut == 0 {
        return 0;
    }
    view.output.drain(..cut);
    view.output.shrink_to_fit();
    view.truncated = true;
    view.dropped += cut as u64;
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Msg;

    fn view(bytes: usize, exited: bool) -> TerminalView {
        TerminalView {
            output: "x".repeat(bytes),
            truncated: false,
            dropped: 0,
            exit: exited.then(|| "exit status 0".to_string()),
        }
    }

    #[test]
    fn views_stay_within_the_total_finished_ones_cut_first() {
        let mut s = ChatState::new("demo", "/w");
        // 48 terminals of 1 MiB each (the screen tail), the first 40 done.
        for n in 1..=48 {
            s.update(Msg::TerminalOutput {
                id: format!("term-{n}"),
                view: view(1 << 20, n <= 40),
            });
        }
        let total: usize = s.session.terminals.values().map(|v| v.output.len()).sum();
        assert!(total <= VIEWS_TOTAL, "{total}");
        for n in 41..=48 {
            let running = &s.session.terminals[&format!("term-{n}")];
            assert_eq!(
                running.output.len(),
                1 << 20,
                "running terminals kept whole"
            );
            assert_eq!(running.dropped, 0);
        }
        let first = &s.session.terminals["term-1"];
        assert_eq!(
            first.output.len(),
            VIEW_KEPT,
            "the oldest finished one is cut"
        );
        assert_eq!(first.dropped, ((1 << 20) - VIEW_KEPT) as u64);
        assert!(first.truncated);
    }
}

//! The waiting cards as another device shows them (`src/remote/`): plain
//! text and the rows it may pick, made here so the remote page reads no
//! state of the gate.

use crate::gate::choices::{CHOICES, Choice, Tone};
use crate::state::{Answer, Approval};
use crate::state::{ChatState, RequestId};

/// The most bytes of a diff a summary carries (the rest is said as a count).
const DIFF_BYTES: usize = 16 * 1024;

/// One waiting card, plain text (the page escapes it when drawn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSummary {
    pub id: RequestId,
    pub title: String,
    /// The tool's kind (`edit`, `execute`, ...).
    pub kind: String,
    /// The command it runs, as the policy reads it.
    pub command: Option<String>,
    /// The paths it names and those its diffs change.
    pub paths: Vec<String>,
    /// Its diffs, unified, bounded.
    pub diff: String,
    /// Why the policy left it to the user.
    pub reason: String,
    /// What another device may pick on it, from the card's rows.
    pub choices: Vec<ChoiceSummary>,
}

/// One choice another device may pick: nothing lasting (no grant, rule or
/// bypass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceSummary {
    /// What the page posts for it.
    pub id: &'static str,
    /// Its words on the button.
    pub label: &'static str,
    pub tone: Tone,
    /// A reason is typed first (on a page of its own).
    pub needs_reason: bool,
    choice: Choice,
}

impl ChoiceSummary {
    /// The answer it sends, with the reason typed (one that needs a
    /// reason sends none without one).
    pub fn answer(&self, reason: &str) -> Option<Answer> {
        if self.needs_reason && reason.trim().is_empty() {
            return None;
        }
        self.choice.answer(reason.trim())
    }
}

impl ChatState {
    /// The ids of the waiting cards, in queue order: what tells the remote
    /// page's publisher that the cards changed, without making summaries.
    pub fn waiting_ids(&self) -> Vec<RequestId> {
        self.gate.approvals.iter().map(|a| a.id).collect()
    }
}

impl ChatState {
    /// The waiting cards as another device shows them, in queue order.
    pub fn card_summaries(&self) -> Vec<CardSummary> {
        self.gate.approvals.iter().map(summary).collect()
    }
}

fn summary(approval: &Approval) -> CardSummary {
    let mut paths = approval.view.locations.clone();
    for path in &approval.view.diff_paths {
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    CardSummary {
        id: approval.id,
        title: approval.title(),
        kind: approval.view.kind.as_str().to_string(),
        command: approval.view.command(),
        paths,
        diff: diff_of(approval),
        reason: approval.reason.clone(),
        choices: remote_choices(approval.view.card),
    }
}

/// The choices the remote page offers on a card, from [`CHOICES`].
pub fn remote_choices(kind: crate::gate::CardKind) -> Vec<ChoiceSummary> {
    CHOICES
        .iter()
        .filter(|d| d.remote)
        .map(|d| ChoiceSummary {
            id: d.id,
            label: d.label_for(kind),
            tone: match d.binding.cmd {
                Choice::Allow => Tone::Allow,
                Choice::Deny => Tone::Reject,
                _ => Tone::Plain,
            },
            needs_reason: d.needs_reason(),
            choice: d.binding.cmd,
        })
        .collect()
}

/// The request's diffs as unified text, bounded.
fn diff_of(approval: &Approval) -> String {
    let mut out = String::new();
    for content in approval.request.fields.content.as_deref().unwrap_or(&[]) {
        if let crate::model::ToolContent::Diff { path, old, new } = content {
            let old = old.as_deref().unwrap_or("");
            let diff = similar::TextDiff::from_lines(old, new.as_str());
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(path, path)
                    .to_string(),
            );
        }
    }
    if out.len() > DIFF_BYTES {
        let mut cut = DIFF_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = out.len() - cut;
        out.truncate(cut);
        out.push_str(&format!("\n… {rest} more bytes\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_device_picks_nothing_lasting_and_a_reason_is_typed() {
        let ids: Vec<&str> = remote_choices(crate::gate::CardKind::AgentTool)
            .iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, ["allow", "deny", "reason"]);
        let by = |id: &str| {
            remote_choices(crate::gate::CardKind::AgentTool)
                .into_iter()
                .find(|c| c.id == id)
        };
        assert_eq!(by("allow").and_then(|c| c.answer("")), Some(Answer::Allow));
        assert_eq!(by("deny").and_then(|c| c.answer("")), Some(Answer::Deny));
        let reason = by("reason");
        assert_eq!(reason.and_then(|c| c.answer("  ")), None);
        assert_eq!(
            reason.and_then(|c| c.answer(" no way ")),
            Some(Answer::DenyWithReason("no way".into()))
        );
    }
}

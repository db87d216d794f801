//! A card's hint lines: from the card's choices (`state::CHOICES`) and
//! the keys that move about it, listing only what the card offers; the
//! prompt of a kept rule's field.

use super::*;

/// The answering keys a folded card lists on its one row, those it
/// offers: "y allow · n deny · a chat · r reason".
pub(super) fn folded_keys(approval: &Approval) -> String {
    use crate::state::Choice as C;
    keys::card_line(
        false,
        |choice| {
            matches!(
                choice,
                C::Allow | C::Deny | C::AllowForChat | C::DenyWithReason
            ) && approval.card.offers(*choice)
        },
        |_| false,
    )
}

/// The hint row under folded choices, when the card takes answers: the
/// keys the folded row does not list.
pub(super) fn folded_hints(state: &ChatState) -> Option<String> {
    use crate::state::Choice as C;
    let approval = state.gate.approvals.get(selected(state))?;
    let normal = state.view.focus.is(Pane::Cards)
        && state.card_armed()
        && approval.view.card != CardKind::Elicitation;
    normal.then(|| {
        keys::card_line(
            true,
            |choice| {
                !matches!(
                    choice,
                    C::Allow | C::Deny | C::AllowForChat | C::DenyWithReason
                ) && approval.card.offers(*choice)
            },
            |cmd| *cmd != keys::CardCmd::Expand,
        )
    })
}

/// What the hint line says while a card that just became the selected
/// one ignores answers.
pub(crate) const WAIT_HINT: &str = "just appeared: its keys work in a moment";

/// The card's hint lines (full, and short of room) for where the keys are,
/// from the key tables, listing only what the card offers: under a
/// question its answers; while the composer has the keys, how to reach
/// the card; while the card ignores answers, that it does.
pub(crate) fn hint_lines(state: &ChatState) -> (String, String) {
    let both = |line: String| (line.clone(), line);
    let focus = &state.view.focus;
    let Some(approval) = state.gate.approvals.get(selected(state)) else {
        return both(String::new());
    };
    match &focus.modal {
        Some(Modal::Reason { .. }) => both(keys::card_hints(keys::REASON, false)),
        Some(Modal::KeepRule(_)) => both(keys::card_hints(keys::KEEP_RULE, false)),
        Some(Modal::Confirm(_)) => both(keys::card_hints(keys::QUESTION, false)),
        Some(Modal::ConfirmAll(_)) => both(keys::card_hints(keys::CONFIRM_ALL, false)),
        None if focus.pane == Pane::Composer => both(format!(
            "your message has the keys · {} answer this card",
            keys::key_name(
                keys::COMPOSER,
                &keys::Global::Act(crate::state::Action::ToggleCards)
            )
        )),
        _ if !state.card_armed() => both(WAIT_HINT.to_string()),
        _ if approval.view.card == CardKind::Elicitation => both(keys::elicitation_hints()),
        _ => {
            let offers = |choice: &Choice| approval.card.offers(*choice);
            (
                keys::card_line(false, offers, |_| true),
                keys::card_line(true, offers, |_| true),
            )
        }
    }
}

/// "Keep as rule: allow execute, command matching › ": what the kept rule
/// decides, for which kind, and which of its patterns the field edits.
pub(super) fn keep_prompt(rule: Option<&Rule>) -> String {
    let Some(rule) = rule else {
        return "Keep as rule › ".to_string();
    };
    let mut out = format!("Keep as rule: {}", rule.decision.as_str());
    if let Some(kind) = rule.kind {
        out.push(' ');
        out.push_str(kind.as_str());
    }
    let which = if rule.command.is_some() {
        Some("command")
    } else if rule.path.is_some() {
        Some("paths")
    } else if rule.tool.is_some() {
        Some("tool")
    } else {
        None
    };
    if let Some(which) = which {
        out.push_str(", ");
        out.push_str(which);
        out.push_str(" matching");
    }
    out.push_str(" › ");
    out
}

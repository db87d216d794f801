//! The kept rule's field under a card: its prompt names what it edits,
//! and it has the cursor.

use super::*;

#[test]
fn keep_rule_field_execute_100x36() {
    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Action(Action::ch('p')));
    assert!(matches!(
        state.view.focus.modal,
        Some(crate::state::Modal::KeepRule(_))
    ));
    assert_snapshot!(screen(&state, 100, 36));
}

#[test]
fn keep_rule_field_has_the_cursor() {
    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Action(Action::ch('p')));
    let Some(Modal::KeepRule(field)) = &state.view.focus.modal else {
        panic!("{:?}", state.view.focus)
    };
    assert_eq!(field.text(), "cargo test *");
    let prompt = "Keep as rule: allow execute, command matching › ";
    let text = screen(&state, 100, 36);
    let row = row_of(prompt, &text);
    let line = text.lines().nth(usize::from(row)).unwrap_or("");
    let start = line.find(prompt).expect("prompt");
    let col = crate::ui::wrap::str_width(&line[..start]) + crate::ui::wrap::str_width(prompt);
    let end = col + "cargo test *".len();
    assert!(
        text.ends_with(&format!("cursor: ({end}, {row})\n")),
        "the cursor ends the pattern: {text}"
    );

    // It follows the editing.
    state.update(Msg::Action(Action::LineStart));
    let text = screen(&state, 100, 36);
    assert!(
        text.ends_with(&format!("cursor: ({col}, {row})\n")),
        "{text}"
    );
}

/// A kept rule's draft with no wider pattern on offer, for card 1.
pub(super) fn draft(rule: Rule) -> crate::state::RuleDraft {
    crate::state::RuleDraft {
        rule,
        card: 1,
        narrow: String::new(),
        wider: None,
    }
}

#[test]
fn keep_rule_prompt_names_the_pattern_it_edits() {
    let mut state = asking(vec![edit_request()]);
    let mut rule = Rule::new(RuleDecision::Allow);
    rule.kind = Some("edit".parse::<KindMatch>().expect("kind"));
    rule.path = Some("~/src/app/**".into());
    state.gate.rule_draft = Some(draft(rule.clone()));
    state.view.focus = Focus {
        pane: Pane::Cards,
        modal: Some(Modal::KeepRule(Composer::default())),
    };
    let text = screen(&state, 100, 36);
    assert!(
        text.contains("Keep as rule: allow edit, paths matching › "),
        "{text}"
    );
    rule.path = None;
    rule.tool = Some("Bash".into());
    state.gate.rule_draft = Some(draft(rule));
    let text = screen(&state, 100, 36);
    assert!(
        text.contains("Keep as rule: allow edit, tool matching › "),
        "{text}"
    );
    assert!(text.contains("Enter keep and allow · Esc back"), "{text}");
}

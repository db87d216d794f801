//! Keeping an approval: "keep as rule", the review screen of grants and
//! rules, and what a chat grant covers.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn keep_as_rule_offers_an_editable_pattern_and_appends_it() {
    let mut s = chat(Mode::Default);
    let mut req = request("t", ToolKind::Execute, "Run cargo test");
    req.fields.raw_input = Some(serde_json::json!({"command": "cargo test --all"}));
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    key(&mut s, Action::ch('p'));
    let Some(Modal::KeepRule(field)) = &s.view.focus.modal else {
        panic!("{:?}", s.view.focus)
    };
    assert_eq!(field.text(), "cargo test *");
    key(&mut s, Action::KillLineStart);
    key(&mut s, Action::Paste("cargo *".into()));
    let effects = key(&mut s, Action::key(Code::Enter));
    let Some(Effect::EditSettings(SettingsEdit::AppendRule(rule))) = effects.first() else {
        panic!("{effects:?}")
    };
    assert_eq!(rule.command.as_deref(), Some("cargo *"));
    assert_eq!(
        answers(&effects),
        vec![(1, selected("allow-once"))],
        "Enter keeps the rule and allows the card"
    );
    assert_eq!(logged_sources(&effects), vec!["user"]);
}

/// An edit card of `path`, asked as request `id`.
fn ask_edit(s: &mut ChatState, id: RequestId, path: &str) {
    let mut req = request(&format!("t{id}"), ToolKind::Edit, &format!("Edit {path}"));
    req.fields.locations = Some(vec![crate::model::Location {
        path: path.into(),
        line: None,
    }]);
    s.update(Msg::PermissionRequested {
        id,
        request: Box::new(req),
    });
}

/// The kept rule's field.
fn rule_field(s: &ChatState) -> String {
    match &s.view.focus.modal {
        Some(Modal::KeepRule(field)) => field.text().to_string(),
        other => panic!("{other:?}"),
    }
}

/// Issue 33, item 4: `p` on an edit of a file at the project's root
/// proposes that file, never the whole project; the project's glob is a
/// Tab away; Enter keeps the rule and allows the card in one step, with
/// no question about the card itself.
#[test]
fn keep_as_rule_proposes_the_file_and_allows_its_card_in_one_step() {
    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/README.md");
    key(&mut s, Action::ch('p'));
    assert_eq!(rule_field(&s), "/w/README.md");
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/**", "the wider glob, asked for");
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/README.md", "and back");
    let effects = key(&mut s, Action::key(Code::Enter));
    let kept: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::EditSettings(SettingsEdit::AppendRule(rule)) => rule.path.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(kept, vec!["/w/README.md".to_string()]);
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(s.view.focus, Focus::COMPOSER, "no question is left open");
    // The rule's block, written and bound later, asks about nothing.
    s.update(Msg::SettingsChanged {
        rules: s.gate.rules.clone(),
        bypassed: Vec::new(),
        agent_block: Some("demo".into()),
        note: None,
    });
    assert_eq!(s.view.focus.modal, None);
}

/// The other waiting cards the new rule covers are asked about, with
/// words and keys of their own (no "Shift+Tab next mode"); those it does
/// not cover stay as they are, unasked.
#[test]
fn keep_as_rule_asks_about_the_other_cards_only_when_it_covers_some() {
    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/src/a.rs");
    ask_edit(&mut s, 2, "/w/src/b.rs");
    key(&mut s, Action::ch('p'));
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    assert_eq!(s.view.focus.modal, None, "src/a.rs does not cover src/b.rs");
    assert_eq!(s.gate.approvals.len(), 1);

    let mut s = chat(Mode::Default);
    ask_edit(&mut s, 1, "/w/src/a.rs");
    ask_edit(&mut s, 2, "/w/src/b.rs");
    ask_edit(&mut s, 3, "/w/docs/c.md");
    key(&mut s, Action::ch('p'));
    key(&mut s, Action::key(Code::Tab));
    assert_eq!(rule_field(&s), "/w/src/**");
    let effects = key(&mut s, Action::key(Code::Enter));
    assert_eq!(answers(&effects), vec![(1, selected("allow-once"))]);
    let Some(Modal::Confirm(question)) = s.view.focus.modal.clone() else {
        panic!("{:?}", s.view.focus)
    };
    assert_eq!(question, Question::AllowCovered(vec![2]));
    let text = question.text("demo");
    assert!(text.contains("the 1 other waiting card"), "{text}");
    assert!(!text.contains("Shift+Tab"), "{text}");
    // Shift-Tab here is a no, not a mode change.
    key(&mut s, Action::BackTab);
    assert_eq!(s.gate.mode, Mode::Default);
    assert_eq!(s.gate.approvals.len(), 2);
}

#[test]
fn the_review_screen_lists_and_revokes_with_confirmation() {
    let mut s = chat(Mode::Default);
    s.gate.bypassed_agents = vec!["demo".into()];
    s.gate.agent_policy.bypass = true;
    s.gate.rules = vec![crate::policy::Rule::new(crate::policy::RuleDecision::Allow)];
    s.gate.grants = vec![ChatGrant {
        kind: ToolKind::Execute,
        tool: "Bash".into(),
        commands: None,
        host: None,
    }];
    key(&mut s, Action::Key(Key::ctrl(Code::Char('g'))));
    assert_eq!(
        s.grant_items(),
        vec![
            GrantItem::Bypass("demo".into()),
            GrantItem::Rule(0),
            GrantItem::ChatGrant(0)
        ]
    );
    key(&mut s, Action::ch('d'));
    assert_eq!(
        s.view.focus.modal,
        Some(Modal::Rules {
            selected: 0,
            confirm: true
        })
    );
    assert!(key(&mut s, Action::ch('n')).is_empty(), "n keeps it");
    key(&mut s, Action::ch('d'));
    let effects = key(&mut s, Action::ch('y'));
    assert_eq!(
        effects,
        vec![Effect::EditSettings(SettingsEdit::SetBypass {
            agent: "demo".into(),
            value: false
        })]
    );
    assert!(
        !s.gate.agent_policy.bypass,
        "the policy uses the new state at once"
    );
    key(&mut s, Action::key(Code::Down));
    key(&mut s, Action::ch('d'));
    assert!(
        key(&mut s, Action::ch('y')).is_empty(),
        "a chat grant needs no file write"
    );
    assert!(s.gate.grants.is_empty());
    key(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.focus, Focus::COMPOSER);
    assert_eq!(s.gate.rules.len(), 1);
}

#[test]
fn a_client_write_covered_by_an_allowed_edit_needs_no_second_card() {
    let mut s = chat(Mode::Default);
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit_showing("t", "/w/a.rs", EDITED)),
    });
    key(&mut s, Action::ch('y'));
    let effects = s.update(Msg::PermissionRequested {
        id: 2,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(2, selected("allow"))]);
    assert!(s.gate.approvals.is_empty());
    // Another path is not covered: a card.
    let effects = s.update(Msg::PermissionRequested {
        id: 3,
        request: Box::new(client_write("/w/b.rs")),
    });
    assert!(answers(&effects).is_empty());
    assert_eq!(s.gate.approvals.len(), 1);
    // The cover lasts for the turn only.
    s.update(Msg::TurnEnded(StopReason::EndTurn));
    s.session.turn = Some(Turn {
        cancelling: false,
        started: None,
    });
    let effects = s.update(Msg::PermissionRequested {
        id: 4,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert!(answers(&effects).is_empty(), "a new turn asks again");
}

#[test]
fn plan_refuses_every_client_write_even_a_covered_one() {
    let mut s = chat(Mode::Plan);
    let effects = s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(client_write("/w/a.rs")),
    });
    assert_eq!(answers(&effects), vec![(1, selected("reject"))]);
}

mod grant_properties {
    use proptest::prelude::*;

    use crate::model::ToolKind;
    use crate::policy::{ChatGrant, RequestView};

    const COMMANDS: &[&str] = &[
        "cargo test",
        "cargo test --lib",
        "cargo build",
        "rm -rf x",
        "sudo rm -rf x",
        "sudo cargo test",
        "bash -c 'rm x'",
        "bash -c 'cargo test'",
        "git status",
        "git push",
        "ls",
        "python3 a.py",
        "python3 b.py",
    ];
    const WRAPPERS: &[&str] = &["sudo", "bash", "python3"];
    const SEPARATORS: &[&str] = &["; ", " && ", " || ", " | ", "\n"];

    fn bash(line: &str) -> RequestView {
        RequestView {
            kind: ToolKind::Execute,
            tool_name: Some("Bash".into()),
            raw_input: Some(serde_json::json!({ "command": line })),
            ..RequestView::default()
        }
    }

    /// Program and subcommand, as a person would read them.
    fn prefix(command: &str) -> String {
        let words: Vec<&str> = command.split(' ').collect();
        match words.get(1) {
            Some(w) if w.chars().all(|c| c.is_ascii_lowercase()) => {
                format!("{} {}", words[0], w)
            }
            _ => words[0].to_string(),
        }
    }

    /// What the grant made on `granted` may allow of one command.
    fn allowed(command: &str, granted: &[&str]) -> bool {
        granted.iter().any(|g| {
            *g == command
                || (!WRAPPERS.contains(&g.split(' ').next().unwrap_or_default())
                    && (command == prefix(g) || command.starts_with(&format!("{} ", prefix(g)))))
        })
    }

    fn line() -> impl Strategy<Value = (Vec<&'static str>, String)> {
        (
            proptest::collection::vec(proptest::sample::select(COMMANDS), 1..4),
            proptest::sample::select(SEPARATORS),
        )
            .prop_map(|(commands, separator)| {
                let line = commands.join(separator);
                (commands, line)
            })
    }

    proptest! {
        #[test]
        fn a_grant_covers_its_own_line_and_only_commands_it_names(
            (granted, first) in line(),
            (commands, later) in line(),
        ) {
            let grant = ChatGrant::for_request(&bash(&first));
            prop_assert!(grant.covers(&bash(&first)), "{} covers itself", first);
            if grant.covers(&bash(&later)) {
                for command in &commands {
                    prop_assert!(
                        allowed(command, &granted),
                        "the grant on {:?} ({}) covers {:?} in {:?}",
                        first, grant.describe(), command, later
                    );
                }
            }
        }
    }
}

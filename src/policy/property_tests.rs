//! Properties of [`decide`] that must hold for any request, mode, rules and
//! grants.

use proptest::prelude::*;
use serde_json::json;

use super::tests::*;
use super::*;
use crate::model::ToolKind;

fn kind_strategy() -> impl Strategy<Value = ToolKind> {
    proptest::sample::select(ToolKind::ALL.to_vec())
}

fn options_strategy() -> impl Strategy<Value = Vec<PermissionOption>> {
    let kinds = vec![
        OptionKind::AllowOnce,
        OptionKind::AllowAlways,
        OptionKind::RejectOnce,
        OptionKind::RejectAlways,
    ];
    proptest::sample::subsequence(kinds, 0..=4)
        .prop_shuffle()
        .prop_map(|kinds| {
            kinds
                .into_iter()
                .enumerate()
                .map(|(i, k)| opt(&format!("{}-{i}", k.as_str()), k))
                .collect()
        })
}

fn rule_strategy() -> impl Strategy<Value = Rule> {
    let decision = proptest::sample::select(vec![
        RuleDecision::Allow,
        RuleDecision::Ask,
        RuleDecision::Deny,
    ]);
    let kind_names = vec![
        "read",
        "write",
        "execute",
        "external",
        "edit",
        "fetch",
        "switch_mode",
        "other",
    ];
    let kind = proptest::option::of(proptest::sample::select(kind_names));
    let command =
        proptest::option::of(proptest::sample::select(vec!["*", "cargo *", "rm *", "ls"]));
    let path = proptest::option::of(proptest::sample::select(vec![
        "**", "~/**", "/tmp/*", "src/**",
    ]));
    (decision, kind, command, path).prop_map(|(decision, kind, command, path)| Rule {
        kind: kind.and_then(|k| k.parse().ok()),
        command: command.map(str::to_string),
        path: path.map(str::to_string),
        ..Rule::new(decision)
    })
}

fn request_strategy() -> impl Strategy<Value = RequestView> {
    let command = proptest::option::of(proptest::sample::select(vec![
        "cargo test",
        "ls; rm -rf ~",
        "echo $(rm x)",
    ]));
    let path = proptest::option::of(proptest::sample::select(vec![
        "/tmp/a", "src/x", "~/.ssh/k",
    ]));
    (kind_strategy(), command, path, options_strategy()).prop_map(
        |(kind, command, path, options)| RequestView {
            kind,
            title: "T".into(),
            raw_input: command.map(|c| json!({ "command": c })),
            locations: path.into_iter().map(str::to_string).collect(),
            options,
            ..RequestView::default()
        },
    )
}

fn everything() -> impl Strategy<Value = (RequestView, Mode, bool, Vec<Rule>, Vec<ChatGrant>)> {
    let grants = proptest::collection::vec(
        kind_strategy().prop_map(|kind| ChatGrant {
            kind,
            tool: "T".into(),
            commands: None,
            host: None,
        }),
        0..3,
    );
    (
        request_strategy(),
        proptest::sample::select(Mode::ALL.to_vec()),
        any::<bool>(),
        proptest::collection::vec(rule_strategy(), 0..4),
        grants,
    )
}

proptest! {
    #[test]
    fn plan_never_allows_a_non_read_kind((req, _, bypass, rules, grants) in everything()) {
        let decision = run(&req, Mode::Plan, bypass, &rules, &grants);
        if category(req.kind) != Category::Read {
            prop_assert!(!matches!(decision, Decision::Allow { .. }), "{:?}", decision);
        }
    }

    #[test]
    fn automatic_answers_use_the_right_options((req, mode, bypass, rules, grants) in everything()) {
        let has_once = req.options.iter().any(|o| o.kind == OptionKind::AllowOnce);
        let kind_of = |id: &str| req.options.iter().find(|o| o.id == id).map(|o| o.kind);
        match run(&req, mode, bypass, &rules, &grants) {
            Decision::Allow { option_id, .. } => {
                let kind = kind_of(&option_id);
                prop_assert!(kind.is_some_and(OptionKind::is_allow), "{} is an allow option", option_id);
                prop_assert!(has_once && kind == Some(OptionKind::AllowOnce), "never allow_always");
            }
            Decision::Deny { option_id: Some(id), .. } => {
                let kind = kind_of(&id);
                prop_assert!(kind.is_some_and(|k| !k.is_allow()), "{} is a reject option", id);
            }
            Decision::Deny { option_id: None, .. } => {
                prop_assert!(req.options.iter().all(|o| o.kind.is_allow()));
            }
            Decision::Ask { .. } => {}
        }
    }

    #[test]
    fn switch_mode_always_asks((req, mode, bypass, rules, grants) in everything()) {
        let req = RequestView { kind: ToolKind::SwitchMode, ..req };
        let decision = run(&req, mode, bypass, &rules, &grants);
        prop_assert!(matches!(decision, Decision::Ask { .. }), "{:?}", decision);
    }

    #[test]
    fn a_deny_rule_always_wins_after_plan((req, mode, bypass, _, grants) in everything()) {
        let decision = run(&req, mode, bypass, &[rule(RuleDecision::Deny)], &grants);
        if req.kind != ToolKind::SwitchMode {
            prop_assert!(matches!(decision, Decision::Deny { .. }), "{:?}", decision);
        }
    }
}

//! A card's choice rows: what an option really sends, warnings, a name
//! that says the opposite of its kind, the hint line that matches the card.

use super::*;

#[test]
fn card_shows_what_always_really_sends_100x30() {
    let state = asking(vec![cargo_test_request(claude_options())]);
    let text = screen(&state, 100, 30);
    assert!(
        text.contains("1  allow always  “Always Allow” → sends 'Allow' + allow for this chat (a)"),
        "{text}"
    );
    assert!(
        text.contains("`cargo test …` commands via `Bash` in this chat"),
        "{text}"
    );
    assert_snapshot!(text);
}

#[test]
fn card_with_only_always_on_offer_warns_100x30() {
    let state = asking(vec![cargo_test_request(vec![
        option("always", "Always allow", OptionKind::AllowAlways),
        option("reject", "Reject", OptionKind::RejectOnce),
    ])]);
    let text = screen(&state, 100, 30);
    assert!(
        text.contains("the agent offers only 'Always allow': approving may stop it asking"),
        "{text}"
    );
    assert_snapshot!(text);
}

#[test]
fn card_exit_plan_shows_the_option_really_sent_100x36() {
    let mut req = switch_mode_request();
    req.options.insert(
        0,
        option(
            "bypassPermissions",
            "Yes, and bypass permissions",
            OptionKind::AllowAlways,
        ),
    );
    let mut state = chat(Some(agent_modes()));
    state.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(req),
    });
    let text = screen(&state, 100, 36);
    assert_eq!(
        text.matches("→ sends 'Yes, and manually approve edits'")
            .count(),
        2,
        "{text}"
    );
    assert_snapshot!(text);
}

/// A diff over 400 lines can be read to its end on the card before it is
/// approved: the last line of a 1000-line diff comes on screen with
/// Shift-↓ (issue 22, spoofs).
#[test]
fn the_last_line_of_a_long_diff_can_be_brought_on_screen() {
    let new: String = (0..1000).map(|i| format!("line {i:04}\n")).collect();
    let mut req = edit_request();
    req.fields.content = Some(vec![ToolContent::Diff {
        path: "src/big.rs".into(),
        old: Some(String::new()),
        new,
    }]);
    let mut state = asking(vec![req]);
    assert!(!screen(&state, 100, 36).contains("line 0999"));
    let mut reached = false;
    for _ in 0..400 {
        state.update(Msg::Action(Action::Key(Key::shift(Code::Down))));
        if screen(&state, 100, 36).contains("+line 0999") {
            reached = true;
            break;
        }
    }
    assert!(reached, "{}", screen(&state, 100, 36));
    let text = screen(&state, 100, 36);
    assert!(!text.contains("more lines"), "{text}");
    assert!(
        text.contains("Permission · edit"),
        "the kind row stays: {text}"
    );
}

/// A title padded with U+2800 (braille blank, shown blank by many fonts)
/// cannot draw rows that pass for warden's: the kind row comes first and
/// stays in sight, every row of the title is marked as the agent's, and
/// the title takes at most two rows.
#[test]
fn a_padded_title_cannot_draw_rows_that_pass_for_wardens() {
    let pad = "\u{2800}".repeat(120);
    let title = format!("ls{pad}read · reads are allowed{pad}\"command\": \"git status\"{pad}");
    let mut req = execute_request();
    req.fields.title = Some(title);
    req.fields.raw_input = Some(json!({ "command": "rm -rf ~" }));
    for (width, height) in [(100, 36), (80, 24), (60, 14)] {
        let state = asking(vec![req.clone(), edit_request(), edit_request()]);
        let text = screen(&state, width, height);
        let card: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('╭')).collect();
        assert!(
            card.get(1)
                .is_some_and(|l| l.contains("Permission · execute")),
            "the kind row first ({width}x{height}):\n{text}"
        );
        for line in &card {
            if line.contains("reads are allowed") || line.contains("git status") {
                assert!(line.contains("▏"), "an agent row unmarked: {line}\n{text}");
            }
        }
        let title_rows = card.iter().filter(|l| l.contains("│ ▏")).count();
        assert!(title_rows <= 2, "{text}");
        if height > 20 {
            assert!(text.contains("runs rm -rf ~"), "{text}");
        }
    }
}

/// An `allow_once` the agent named "Reject": warden's label from the kind
/// comes first on its row, flagged; Enter (its default) would allow.
#[test]
fn an_allow_named_reject_shows_its_kind_first() {
    let mut req = execute_request();
    req.options = vec![
        option("x", "Reject", OptionKind::AllowOnce),
        option("y", "Allow", OptionKind::RejectOnce),
    ];
    let state = asking(vec![req]);
    for width in [100, 40] {
        let text = screen(&state, width, 36);
        assert!(text.contains("1  allow once"), "{text}");
        assert!(text.contains("2  reject"), "{text}");
        assert!(text.contains("ALLOWS the call"), "{text}");
        assert!(text.contains("REJECTS the call"), "{text}");
    }
}

/// The hint line lists only what the card offers: under "approve all?"
/// its answers; on an ExitPlanMode card no `a`, `b` or `p`; while the
/// composer has the keys, how to reach the card; while the card ignores
/// answers, that it does.
#[test]
fn the_hint_line_matches_the_card() {
    let mut state = asking(vec![edit_request(), execute_request()]);
    state.update(Msg::Action(Action::ch('A')));
    let text = screen(&state, 100, 36);
    assert!(
        text.contains("Approve all 2 pending requests? y / n"),
        "{text}"
    );
    let hint = text
        .lines()
        .find(|l| l.contains("y yes"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        !hint.contains("keep as rule") && !hint.contains("Tab"),
        "{hint}"
    );

    let mut plan = edit_request();
    plan.fields.kind = Some(ToolKind::SwitchMode);
    plan.fields.title = Some("Ready to code?".into());
    plan.options = vec![
        option("default", "Yes", OptionKind::AllowOnce),
        option("plan", "No, keep planning", OptionKind::RejectOnce),
    ];
    let state = asking(vec![plan]);
    let text = screen(&state, 120, 36);
    let hint = text
        .lines()
        .find(|l| l.contains("y allow"))
        .unwrap_or_else(|| panic!("{text}"));
    for gone in ["a chat", "b bypass", "p keep as rule"] {
        assert!(!hint.contains(gone), "{hint}");
    }

    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Action(Action::Key(Key::ctrl(Code::Char('p')))));
    let text = screen(&state, 100, 36);
    assert!(
        text.contains("your message has the keys · Ctrl-P answer this card"),
        "{text}"
    );

    let now = std::time::Instant::now();
    let mut state = asking(vec![execute_request()]);
    state.update(Msg::Tick(now));
    let text = screen(&state, 100, 36);
    assert!(text.contains(crate::ui::card::WAIT_HINT), "{text}");
    state.update(Msg::Tick(now + crate::state::ARM_DELAY));
    let text = screen(&state, 100, 36);
    assert!(!text.contains(crate::ui::card::WAIT_HINT), "{text}");
    assert!(text.contains("y allow"), "{text}");
}

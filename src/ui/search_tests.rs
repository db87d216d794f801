//! Transcript search (Ctrl-F), copying (Alt-C / Alt-Y) and the released
//! mouse: snapshots on a `TestBackend`, and key-by-key interaction.

use crate::state::Code;
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

use super::tests::buffer_text;
use super::theme::Theme;
use super::{View, Views, draw, draw_workspace};
use crate::state::search::{Match, code_blocks, matches};
use crate::state::{Action, ChatState, Connection, Effect, EntryKind, Msg, Workspace};

fn ready() -> ChatState {
    let mut s = ChatState::new("demo", "/work");
    s.session.connection = Connection::Ready {
        session_id: "s1".into(),
    };
    s
}

fn act(s: &mut ChatState, action: Action) -> Vec<Effect> {
    s.update(Msg::Action(action))
}

fn typed(s: &mut ChatState, text: &str) {
    for c in text.chars() {
        act(s, Action::ch(c));
    }
}

/// A chat of `n` exchanges; exchange 3 and the last mention "flaky".
fn chat(n: usize) -> ChatState {
    let mut s = ready();
    for i in 1..=n {
        s.session
            .transcript
            .push(EntryKind::User(format!("question {i}")));
        let answer = if i == 3 || i == n {
            format!("Answer {i}: the Flaky test reads $HOME; a flaky one.")
        } else {
            format!("Answer {i}: nothing to see.")
        };
        s.session.transcript.push_agent_text(&answer);
        s.session.transcript.end_turn();
    }
    s
}

fn draw_text(term: &mut Terminal<TestBackend>, state: &ChatState, view: &mut View) -> Buffer {
    term.draw(|f| draw(f, state, view))
        .expect("draw")
        .buffer
        .clone()
}

/// The cells of row `y` with `m` among their modifiers, as text.
fn marked(buf: &Buffer, m: Modifier) -> Vec<String> {
    let mut out = Vec::new();
    for y in buf.area.top()..buf.area.bottom() {
        let mut run = String::new();
        for x in buf.area.left()..buf.area.right() {
            let cell = &buf[(x, y)];
            if cell.modifier.contains(m) {
                run.push_str(cell.symbol());
            } else if !run.is_empty() {
                out.push(std::mem::take(&mut run));
            }
        }
        if !run.is_empty() {
            out.push(run);
        }
    }
    out
}

#[test]
fn matches_count_case_insensitively_per_entry() {
    let s = chat(4);
    let all = matches(&s.session.transcript, "FLAKY");
    assert_eq!(
        all,
        vec![
            Match { entry: 5, nth: 0 },
            Match { entry: 5, nth: 1 },
            Match { entry: 7, nth: 0 },
            Match { entry: 7, nth: 1 },
        ]
    );
    assert!(matches(&s.session.transcript, "").is_empty());
}

#[test]
fn typing_selects_the_newest_match_and_n_goes_older() {
    let mut s = chat(4);
    assert!(act(&mut s, Action::Search).is_empty());
    typed(&mut s, "flaky");
    let search = s.view.search.clone().expect("open");
    assert!(search.typing);
    assert_eq!(search.current, Some(Match { entry: 7, nth: 1 }));
    assert_eq!((search.position, search.count), (4, 4));
    assert!(
        s.view.composer.is_empty(),
        "the query is not in the composer"
    );
    // Enter: stop typing; n older, N newer, wrapping around.
    act(&mut s, Action::key(Code::Enter));
    assert!(!s.view.search.as_ref().is_some_and(|x| x.typing));
    let at = |s: &ChatState| s.view.search.as_ref().and_then(|x| x.current);
    act(&mut s, Action::ch('n'));
    assert_eq!(at(&s), Some(Match { entry: 7, nth: 0 }));
    act(&mut s, Action::ch('n'));
    act(&mut s, Action::ch('n'));
    assert_eq!(at(&s), Some(Match { entry: 5, nth: 0 }));
    act(&mut s, Action::ch('n'));
    assert_eq!(at(&s), Some(Match { entry: 7, nth: 1 }), "wraps");
    act(&mut s, Action::ch('N'));
    assert_eq!(at(&s), Some(Match { entry: 5, nth: 0 }), "wraps back");
    let jumps = s.view.search.as_ref().map(|x| x.jumps);
    // Ctrl-F types again; Backspace edits the query.
    act(&mut s, Action::Search);
    act(&mut s, Action::key(Code::Backspace));
    assert_eq!(
        s.view.search.as_ref().map(|x| x.query.as_str()),
        Some("flak")
    );
    assert!(s.view.search.as_ref().map(|x| x.jumps) > jumps);
    // Esc closes; the next Esc is the usual one again.
    act(&mut s, Action::key(Code::Esc));
    assert_eq!(s.view.search, None);
}

#[test]
fn a_query_without_match_says_so_and_other_keys_leave_the_search() {
    let mut s = chat(2);
    act(&mut s, Action::Search);
    typed(&mut s, "zebra");
    let search = s.view.search.clone().expect("open");
    assert_eq!((search.current, search.count), (None, 0));
    act(&mut s, Action::key(Code::Enter));
    // Not typing: a letter other than n / N goes to the composer.
    act(&mut s, Action::ch('h'));
    assert_eq!(s.view.search, None);
    assert_eq!(s.view.composer.text(), "h");
}

#[test]
fn search_bar_highlights_and_scrolls_to_the_match() {
    let mut s = chat(30);
    let mut term = Terminal::new(TestBackend::new(60, 14)).expect("terminal");
    let mut view = View::with_theme(Theme::with_color(true));
    draw_text(&mut term, &s, &mut view);
    assert!(view.is_following());
    act(&mut s, Action::Search);
    typed(&mut s, "flaky");
    act(&mut s, Action::key(Code::Enter));
    for _ in 0..2 {
        act(&mut s, Action::ch('n'));
    }
    // The third-newest match: exchange 3's second "flaky", far above.
    assert_eq!(
        s.view.search.as_ref().and_then(|x| x.current),
        Some(Match { entry: 5, nth: 1 })
    );
    let buf = draw_text(&mut term, &s, &mut view);
    assert!(!view.is_following(), "scrolled up to the match");
    let text = buffer_text(&buf);
    assert!(text.contains("Answer 3: the Flaky test"), "{text}");
    // Both matches of exchange 3 are marked; the selected one underlined.
    assert_eq!(marked(&buf, Modifier::REVERSED)[..2], ["Flaky", "flaky"]);
    assert_eq!(marked(&buf, Modifier::UNDERLINED), ["flaky"]);
    assert_snapshot!(text);
    // Scrolling away stays away: the jump happens once.
    view.scroll(super::Scroll::Bottom);
    draw_text(&mut term, &s, &mut view);
    assert!(view.is_following());
}

#[test]
fn search_bar_while_typing() {
    let mut s = chat(2);
    act(&mut s, Action::Search);
    typed(&mut s, "flaky");
    let mut term = Terminal::new(TestBackend::new(70, 12)).expect("terminal");
    let mut view = View::with_theme(Theme::with_color(true));
    let buf = draw_text(&mut term, &s, &mut view);
    let text = buffer_text(&buf);
    assert!(
        text.contains("/ flaky  2/2 · Enter select · Esc close"),
        "{text}"
    );
    assert_snapshot!(text);
}

#[test]
fn copy_takes_the_selected_message_or_the_last_answer_sanitized() {
    let mut s = ready();
    s.session.transcript.push(EntryKind::User("show me".into()));
    s.session.transcript.push_agent_text(
        "Run this:\n\n```sh\nrm -rf target\x1b]52;c;ZXZpbA==\x07\n```\nthen rebuild.",
    );
    s.session.transcript.end_turn();
    s.session
        .transcript
        .push(EntryKind::Info("turn ended".into()));
    let effects = act(&mut s, Action::Copy);
    let [Effect::Copy(text)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(text.starts_with("Run this:"), "{text}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(
        s.view
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("copying the message"))
    );
    let effects = act(&mut s, Action::CopyCode);
    assert_eq!(
        effects,
        vec![Effect::Copy("rm -rf target␛]52;c;ZXZpbA==␇".into())]
    );
    // With a search match selected, that message is copied.
    act(&mut s, Action::Search);
    typed(&mut s, "show");
    act(&mut s, Action::key(Code::Enter));
    assert_eq!(
        act(&mut s, Action::Copy),
        vec![Effect::Copy("show me".into())]
    );
    assert!(act(&mut s, Action::CopyCode).is_empty());
    assert!(
        s.view
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("no code block"))
    );
}

#[test]
fn nothing_to_copy_says_so() {
    let mut s = ready();
    assert!(act(&mut s, Action::Copy).is_empty());
    assert_eq!(s.view.notice.as_deref(), Some("nothing to copy yet"));
}

#[test]
fn code_blocks_are_found_between_fences() {
    let md = "a\n```rust\nfn x() {}\n```\nb\n~~~\none\n````\ntwo\n~~~\n```\nopen";
    assert_eq!(code_blocks(md), ["fn x() {}", "one\n````\ntwo", "open"]);
}

#[test]
fn the_footer_says_the_mouse_is_released() {
    let mut ws = Workspace::new(vec!["demo".into()]);
    ws.add_chat(chat(1));
    let mut views = Views::with_theme(Theme::with_color(true));
    views.set_mouse_released(true);
    let mut term = Terminal::new(TestBackend::new(80, 10)).expect("terminal");
    let buf = term
        .draw(|f| draw_workspace(f, &ws, &mut views))
        .expect("draw")
        .buffer
        .clone();
    let text = buffer_text(&buf);
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.ends_with("mouse released: select to copy · Alt-S")),
        "{text}"
    );
    assert_snapshot!(text);
}

/// A chat waiting on its turn, as the card tests make it.
fn working() -> ChatState {
    use crate::model::SessionInfo;
    let mut s = ChatState::new("demo", "/work");
    s.gate.agent_policy.name = "demo".into();
    s.update(Msg::SessionStarted(SessionInfo {
        session_id: "s1".into(),
        modes: None,
        origin: Default::default(),
    }));
    act(&mut s, Action::Paste("edit it".into()));
    act(&mut s, Action::key(Code::Enter));
    assert!(s.is_busy());
    s
}

fn edit_request() -> crate::model::PermissionRequest {
    use crate::model::{OptionKind, PermissionOption, PermissionRequest, ToolCallFields, ToolKind};
    PermissionRequest {
        session_id: "s1".into(),
        tool_call_id: "call-1".into(),
        fields: ToolCallFields {
            title: Some("Edit src/yak.rs".into()),
            kind: Some(ToolKind::Edit),
            ..Default::default()
        },
        options: [
            ("allow", "Allow", OptionKind::AllowOnce),
            ("reject", "Reject", OptionKind::RejectOnce),
        ]
        .into_iter()
        .map(|(id, name, kind)| PermissionOption {
            id: id.into(),
            name: name.into(),
            kind,
        })
        .collect(),
        client: false,
    }
}

#[test]
fn a_card_arriving_during_a_search_never_takes_the_searchs_keys() {
    for typing in [true, false] {
        let mut s = working();
        act(&mut s, Action::Search);
        typed(&mut s, "edit");
        if !typing {
            act(&mut s, Action::key(Code::Enter));
        }
        s.update(Msg::PermissionRequested {
            id: 1,
            request: Box::new(edit_request()),
        });
        assert_eq!(s.gate.approvals.len(), 1);
        // "y" (allow) and "n" (deny) are the card's keys: here they are the
        // search's (typed, or n / N moving), or close it, and decide nothing.
        let keys: &[char] = if typing {
            &['y', 'n', 'y']
        } else {
            &['n', 'N', 'y']
        };
        for &c in keys {
            let effects = act(&mut s, Action::ch(c));
            assert!(
                !effects
                    .iter()
                    .any(|e| matches!(e, Effect::RespondPermission { .. })),
                "typing {typing}: {c} answered the card: {effects:?}"
            );
        }
        assert_eq!(s.gate.approvals.len(), 1, "typing {typing}: still waiting");
        if !typing {
            assert_eq!(s.view.search, None, "the y closed the search, nothing else");
        }
    }
}

#[test]
fn ctrl_o_unfolds_cut_tool_output_on_screen() {
    use crate::model::{ToolCall, ToolContent, WireStatus};
    let mut s = ready();
    let mut call = ToolCall::placeholder("t1");
    call.title = "Read the log".into();
    call.status = WireStatus::Completed;
    call.content = vec![ToolContent::Text {
        text: (1..=20)
            .map(|i| format!("log line {i}"))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }];
    s.session.transcript.upsert_tool(call);
    let mut term = Terminal::new(TestBackend::new(60, 40)).expect("terminal");
    let mut view = View::with_theme(Theme::with_color(true));
    let folded = buffer_text(&draw_text(&mut term, &s, &mut view));
    assert!(folded.contains("more lines · Ctrl-O expand"), "{folded}");
    assert!(!folded.contains("log line 20"), "{folded}");
    act(&mut s, Action::ToggleTerminals);
    let open = buffer_text(&draw_text(&mut term, &s, &mut view));
    assert!(open.contains("log line 20"), "{open}");
    assert!(!open.contains("Ctrl-O expand"), "{open}");
}

#[test]
fn ctrl_f_over_a_cards_reason_field_does_not_open_the_search() {
    let mut s = working();
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit_request()),
    });
    assert_eq!(
        s.view.focus,
        crate::state::Focus::CARDS,
        "an empty composer gives way"
    );
    act(&mut s, Action::ch('r'));
    assert!(
        matches!(s.view.focus.modal, Some(crate::state::Modal::Reason { .. })),
        "{:?}",
        s.view.focus
    );
    act(&mut s, Action::Search);
    assert_eq!(s.view.search, None);
    assert!(matches!(
        s.view.focus.modal,
        Some(crate::state::Modal::Reason { .. })
    ));
}

/// The prompt history's search (Ctrl-R) is typing too: a card arriving
/// while it is open waits, and a "y" typed into the search never answers it.
#[test]
fn a_card_arriving_during_the_history_search_never_takes_its_keys() {
    let mut s = working();
    act(&mut s, Action::Restart);
    assert!(
        s.view.drafts.search.is_some(),
        "Ctrl-R opened the history search"
    );
    s.update(Msg::PermissionRequested {
        id: 1,
        request: Box::new(edit_request()),
    });
    for c in ['y', 'e', 's'] {
        let effects = act(&mut s, Action::ch(c));
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::RespondPermission { .. })),
            "{c} answered the card: {effects:?}"
        );
    }
    assert_eq!(s.gate.approvals.len(), 1, "still waiting");
    assert_eq!(
        s.view.drafts.search.as_ref().map(|q| q.query.as_str()),
        Some("yes")
    );
}

//! Whole-screen snapshots and behaviour tests of the widgets.

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Color;

use super::theme::Theme;
use super::wrap::str_width;
use super::{Scroll, View, draw, footer};
use crate::model::{
    AgentMode, AgentModes, Location, PlanEntry, PlanStatus, ToolCall, ToolContent, ToolKind,
    WireStatus,
};
use crate::state::{ChatState, Connection, EntryKind, ToolState, Turn};

/// The buffer as text, one line per row, trailing spaces cut.
pub(crate) fn buffer_text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in buf.area.top()..buf.area.bottom() {
        let mut line = String::new();
        let mut skip = 0;
        for x in buf.area.left()..buf.area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            skip = str_width(symbol).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn view() -> View {
    View::with_theme(Theme::with_color(true))
}

fn terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(width, height)).expect("test terminal")
}

/// Draw and return the screen as text.
fn frame(term: &mut Terminal<TestBackend>, state: &ChatState, view: &mut View) -> String {
    let completed = term.draw(|f| draw(f, state, view)).expect("draw");
    buffer_text(completed.buffer)
}

fn screen(state: &ChatState, width: u16, height: u16, scroll: Option<Scroll>) -> String {
    let mut term = terminal(width, height);
    let mut view = view();
    let mut text = frame(&mut term, state, &mut view);
    if let Some(scroll) = scroll {
        view.scroll(scroll);
        text = frame(&mut term, state, &mut view);
    }
    text
}

fn ready(state: &mut ChatState) {
    state.session.connection = Connection::Ready {
        session_id: "s1".into(),
    };
}

const ANSWER: &str = "## The cause

The test `parses_config` reads **`$HOME`**, which is *unset* on CI. See [the docs](https://doc.rust-lang.org/std/env/fn.var.html).

- set `HOME` in the workflow
- or make the test hermetic:
  - create a `tempfile::tempdir()`
  - pass its path in

```rust
let dir = tempfile::tempdir()?;
let config = Config::load(dir.path())?;
```

> This only affects the Linux runners.
";

/// A transcript with every kind of entry.
fn fixture() -> ChatState {
    let mut s = ChatState::new("claude-code", "~/src/warden");
    ready(&mut s);
    s.session.agent_modes = Some(AgentModes {
        current: "default".into(),
        available: vec![AgentMode {
            id: "default".into(),
            name: "Default".into(),
            description: None,
        }],
        config_option_id: None,
    });
    let t = &mut s.session.transcript;
    t.push(EntryKind::User(
        "Why does `cargo test` fail on CI? Please fix it.".into(),
    ));
    t.push_thought(
        "The user wants the CI failure fixed.\nFirst read the workflow, then run the tests.",
    );
    t.push_agent_text(ANSWER);

    let mut run = ToolCall::placeholder("call-1");
    run.title = "Run cargo test".into();
    run.kind = ToolKind::Execute;
    run.status = WireStatus::Completed;
    run.raw_input =
        Some(serde_json::json!({"command": "cargo test --all", "description": "Run the tests"}));
    let output: Vec<String> = (1..=14)
        .map(|i| format!("test config::case_{i} ... ok"))
        .collect();
    run.content = vec![ToolContent::Text {
        text: output.join("\n"),
    }];
    t.upsert_tool(run);

    let mut edit = ToolCall::placeholder("call-2");
    edit.title = "Edit tests/config.rs".into();
    edit.kind = ToolKind::Edit;
    edit.status = WireStatus::Completed;
    edit.locations = vec![Location {
        path: "tests/config.rs".into(),
        line: Some(4),
    }];
    edit.content = vec![ToolContent::Diff {
        path: "tests/config.rs".into(),
        old: Some("use warden::Config;\n\n#[test]\nfn parses_config() {\n    let home = std::env::var(\"HOME\").unwrap();\n    Config::load(home).unwrap();\n}\n".into()),
        new: "use warden::Config;\n\n#[test]\nfn parses_config() {\n    let dir = tempfile::tempdir().unwrap();\n    Config::load(dir.path()).unwrap();\n}\n".into(),
    }];
    t.upsert_tool(edit);

    t.set_plan(vec![
        PlanEntry {
            content: "Find why the test fails on CI".into(),
            status: PlanStatus::Completed,
        },
        PlanEntry {
            content: "Make the test hermetic".into(),
            status: PlanStatus::InProgress,
        },
        PlanEntry {
            content: "Run the whole suite".into(),
            status: PlanStatus::Pending,
        },
    ]);
    t.push_thought("Now the suite.\nIt should pass with the temp dir.\nCheck clippy too.");
    t.push(EntryKind::Info("turn ended: max_tokens".into()));
    t.push(EntryKind::Error {
        message: "the agent exited (exit status: 101)".into(),
        detail: vec![
            "thread 'main' panicked at src/main.rs:10:5:".into(),
            "called `Result::unwrap()` on an `Err` value: Os { code: 2 }".into(),
            "note: run with `RUST_BACKTRACE=1` to show a backtrace".into(),
        ],
    });
    s
}

#[test]
fn screen_120x40_following() {
    let mut state = fixture();
    state.session.turn = Some(Turn {
        cancelling: false,
        started: None,
    });
    state.view.notice =
        Some("the agent is still working: wait for the turn to end, or Esc to cancel it".into());
    assert_snapshot!(screen(&state, 120, 40, None));
}

#[test]
fn screen_120x40_top() {
    assert_snapshot!(screen(&fixture(), 120, 40, Some(Scroll::Top)));
}

#[test]
fn screen_80x24_following() {
    assert_snapshot!(screen(&fixture(), 80, 24, None));
}

#[test]
fn screen_80x24_top() {
    assert_snapshot!(screen(&fixture(), 80, 24, Some(Scroll::Top)));
}

#[test]
fn transcript_whole_thoughts_expanded_120() {
    let mut state = fixture();
    state.view.thoughts_expanded = true;
    assert_snapshot!(screen(&state, 120, 90, None));
}

fn footer_line(state: &ChatState, width: u16) -> String {
    let area = Rect::new(0, 0, width, 1);
    let mut buf = Buffer::empty(area);
    footer::render(&mut buf, area, state, Theme::with_color(true));
    buffer_text(&buf)
}

#[test]
fn footer_states() {
    let mut out = String::new();
    let mut state = ChatState::new("claude-code", "/home/someone/src/projects/warden");
    let mut show = |label: &str, state: &ChatState| {
        for width in [120, 70, 40] {
            out.push_str(&format!(
                "{label:<10} {width:>3} |{}",
                footer_line(state, width)
            ));
        }
    };
    show("starting", &state);
    ready(&mut state);
    show("idle", &state);
    state.session.turn = Some(Turn {
        cancelling: false,
        started: None,
    });
    show("busy", &state);
    state.session.agent_modes = Some(AgentModes {
        current: "plan".into(),
        available: vec![AgentMode {
            id: "plan".into(),
            name: "Plan mode".into(),
            description: None,
        }],
        config_option_id: None,
    });
    show("busy+mode", &state);
    state.session.turn = Some(Turn {
        cancelling: true,
        started: None,
    });
    show("cancelling", &state);
    state.session.turn = None;
    state.session.connection = Connection::Down;
    show("down", &state);
    assert_snapshot!(out);
}

fn composer_screen(text: &str, width: u16, height: u16) -> String {
    let mut state = ChatState::new("agent", "~");
    ready(&mut state);
    state.view.composer.insert_str(text);
    let mut term = terminal(width, height);
    let mut view = view();
    let mut shown = frame(&mut term, &state, &mut view);
    let cursor = term.get_cursor_position().expect("cursor");
    shown.push_str(&format!("cursor: ({}, {})\n", cursor.x, cursor.y));
    shown
}

#[test]
fn composer_empty() {
    assert_snapshot!(composer_screen("", 60, 6));
}

#[test]
fn composer_multi_line() {
    assert_snapshot!(composer_screen(
        "first line\nsecond line\n\nfourth, after a blank",
        60,
        10
    ));
}

#[test]
fn composer_long_wrapping() {
    let text = "a long message that wraps over several rows of the composer box because it is much wider than the box, with 日本語 wide characters too, and it keeps going until the box is full and has to scroll to keep the cursor in view at the end, which is where the cursor is: after the last word of this long message";
    assert_snapshot!(composer_screen(text, 30, 16));
}

#[test]
fn composer_cursor_counts_wide_characters() {
    let mut state = ChatState::new("agent", "~");
    state.view.composer.insert_str("日本x");
    state.view.composer.left();
    let mut term = terminal(40, 8);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    // Inside the border and padding (x = 2), after two wide characters.
    assert_eq!(term.get_cursor_position().ok(), Some(Position::new(6, 5)));
}

/// A transcript of `n` one-row info entries (each 2 rows high after the first).
fn infos(n: usize) -> ChatState {
    let mut state = ChatState::new("agent", "~");
    ready(&mut state);
    for i in 0..n {
        state
            .session
            .transcript
            .push(EntryKind::Info(format!("entry {i}")));
    }
    state
}

/// The first row of the screen.
fn first_row(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[test]
fn following_shows_new_output_and_scrolled_up_stays_put() {
    let mut state = infos(50);
    let mut term = terminal(40, 12);
    let mut view = view();
    let text = frame(&mut term, &state, &mut view);
    assert!(view.is_following());
    assert!(text.contains("entry 49"));

    view.scroll(Scroll::Up(5));
    assert!(!view.is_following());
    let before = frame(&mut term, &state, &mut view);
    let top = view.history.top();
    assert!(
        before.contains("↓ 5 more lines · End to follow"),
        "{before}"
    );

    state
        .session
        .transcript
        .push(EntryKind::Info("new output".into()));
    state.session.transcript.push_agent_text("streaming answer");
    let after = frame(&mut term, &state, &mut view);
    assert_eq!(
        view.history.top(),
        top,
        "appended entries do not move the view"
    );
    assert_eq!(first_row(&after), first_row(&before));
    assert!(!after.contains("new output"));
    assert!(after.contains("↓ 9 more lines"), "{after}");

    view.scroll(Scroll::Down(100));
    assert!(
        view.is_following(),
        "scrolling to the bottom resumes following"
    );
    let text = frame(&mut term, &state, &mut view);
    assert!(text.contains("streaming answer"));
    assert!(!text.contains("more lines"));
}

#[test]
fn pages_top_and_bottom() {
    // 30 entries: 1 + 29 * 2 = 59 rows; 10 transcript rows at 40x14
    // (14 - 3 composer - 1 footer).
    let state = infos(30);
    let mut term = terminal(40, 14);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    assert_eq!(view.history.total(), 59);

    view.scroll(Scroll::PageUp);
    assert_eq!(view.history.top(), Some(49 - 9));
    view.scroll(Scroll::PageUp);
    assert_eq!(view.history.top(), Some(49 - 18));
    view.scroll(Scroll::PageDown);
    assert_eq!(view.history.top(), Some(49 - 9));
    view.scroll(Scroll::Top);
    assert_eq!(view.history.top(), Some(0));
    let text = frame(&mut term, &state, &mut view);
    assert_eq!(first_row(&text), "entry 0");
    view.scroll(Scroll::Up(3));
    assert_eq!(view.history.top(), Some(0), "clamped at the top");
    view.scroll(Scroll::PageDown);
    view.scroll(Scroll::PageDown);
    view.scroll(Scroll::Down(2));
    assert_eq!(view.history.top(), Some(20));
    view.scroll(Scroll::Bottom);
    assert!(view.is_following());

    view.scroll(Scroll::Up(1));
    view.scroll(Scroll::Down(1));
    assert!(view.is_following(), "back at the bottom follows again");
}

#[test]
fn a_short_transcript_cannot_scroll() {
    let state = infos(2);
    let mut term = terminal(40, 14);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    view.scroll(Scroll::PageUp);
    assert!(view.is_following());
    view.scroll(Scroll::Top);
    assert!(view.is_following());
}

#[test]
fn a_huge_transcript_only_lays_out_what_is_visible() {
    let mut state = infos(100_000);
    let mut term = terminal(80, 24);
    let mut view = view();
    let text = frame(&mut term, &state, &mut view);
    assert!(text.contains("entry 99999"));
    let stats = view.history.stats;
    assert_eq!(stats.measured, 100_000, "every entry measured once");
    // 20 transcript rows: 10 entries of 2 rows.
    assert!(
        stats.laid_out <= 11,
        "only visible entries laid out: {stats:?}"
    );

    frame(&mut term, &state, &mut view);
    assert_eq!(view.history.stats, stats, "a redraw does no layout");

    view.scroll(Scroll::Top);
    let text = frame(&mut term, &state, &mut view);
    assert_eq!(first_row(&text), "entry 0");
    view.scroll(Scroll::PageDown);
    frame(&mut term, &state, &mut view);
    assert!(view.history.stats.laid_out <= stats.laid_out + 22);
    assert_eq!(view.history.stats.measured, 100_000);

    state.session.transcript.push_agent_text("chunk");
    frame(&mut term, &state, &mut view);
    assert_eq!(
        view.history.stats.measured, 100_000,
        "no remeasure after an append"
    );
}

#[test]
fn a_streamed_chunk_relays_out_only_its_entry() {
    let mut state = fixture();
    state
        .session
        .transcript
        .push(EntryKind::User("next question".into()));
    state
        .session
        .transcript
        .upsert_tool(ToolCall::placeholder("call-2"));
    state.session.transcript.push_agent_text("Sure, here");
    let mut term = terminal(100, 30);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    let before = view.history.stats;
    state.session.transcript.push_agent_text(" is the answer");
    let text = frame(&mut term, &state, &mut view);
    assert!(text.contains("Sure, here is the answer"));
    assert_eq!(view.history.stats.laid_out, before.laid_out + 1);
    assert_eq!(view.history.stats.measured, before.measured);

    // A tool call updated out of order re-lays out that entry alone.
    let before = view.history.stats;
    state
        .session
        .transcript
        .set_tool_state("call-2", ToolState::Failed);
    frame(&mut term, &state, &mut view);
    assert_eq!(view.history.stats.laid_out, before.laid_out + 1);
}

#[test]
fn a_change_above_the_viewport_keeps_the_view_in_place() {
    let mut state = infos(40);
    state
        .session
        .transcript
        .upsert_tool(ToolCall::placeholder("early"));
    for i in 0..40 {
        state
            .session
            .transcript
            .push(EntryKind::Info(format!("later {i}")));
    }
    let mut term = terminal(40, 14);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    view.scroll(Scroll::Up(10));
    let before = frame(&mut term, &state, &mut view);
    let fields = crate::model::ToolCallFields {
        content: Some(vec![ToolContent::Text {
            text: "one\ntwo\nthree".into(),
        }]),
        ..Default::default()
    };
    state.session.transcript.update_tool("early", &fields);
    let after = frame(&mut term, &state, &mut view);
    assert_eq!(after, before);
}

#[test]
fn resizing_relays_out_and_keeps_the_scrolled_entry() {
    let state = fixture();
    let mut term = terminal(120, 30);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    view.scroll(Scroll::Top);
    view.scroll(Scroll::Down(2));
    let wide = frame(&mut term, &state, &mut view);
    assert!(first_row(&wide).starts_with("▸ thinking"), "{wide}");
    term.resize(Rect::new(0, 0, 60, 30)).expect("resize");
    let narrow = frame(&mut term, &state, &mut view);
    assert!(first_row(&narrow).starts_with("▸ thinking"), "{narrow}");
    assert!(!view.is_following());
}

#[test]
fn toggling_thoughts_relays_out_thoughts() {
    let mut state = fixture();
    let mut term = terminal(100, 80);
    let mut view = view();
    let folded = frame(&mut term, &state, &mut view);
    assert!(folded.contains("▸ thinking: The user wants the CI failure fixed."));
    state.view.thoughts_expanded = true;
    let open = frame(&mut term, &state, &mut view);
    assert!(open.contains("▾ thinking"));
    assert!(open.contains("  First read the workflow, then run the tests."));
    state.view.thoughts_expanded = false;
    assert_eq!(frame(&mut term, &state, &mut view), folded);
}

#[test]
fn the_layout_cache_stays_bounded() {
    let mut state = ChatState::new("agent", "~");
    for i in 0..3_000 {
        state.session.transcript.push_agent_text(&format!(
            "# answer {i}\n\nwith a paragraph\n\n- and\n- a list"
        ));
        state.session.transcript.end_turn();
    }
    let mut term = terminal(80, 24);
    let mut view = view();
    frame(&mut term, &state, &mut view);
    view.scroll(Scroll::Top);
    for _ in 0..2_000 {
        view.scroll(Scroll::PageDown);
        frame(&mut term, &state, &mut view);
    }
    assert!(
        view.history.cached_rows() <= 2_000,
        "{}",
        view.history.cached_rows()
    );
}

#[test]
fn escape_sequences_never_reach_the_buffer() {
    let mut state = ChatState::new("agent\u{1b}[2J", "~/\u{1b}]0;x\u{7}");
    ready(&mut state);
    state
        .session
        .transcript
        .push(EntryKind::User("\u{1b}[31mred?".into()));
    state
        .session
        .transcript
        .push_agent_text("**\u{1b}[31m** &#27;[1m `\u{9b}2J`");
    state
        .session
        .transcript
        .push(EntryKind::Info("\u{1b}[31m".into()));
    state.view.notice = Some("\u{1b}[5m".into());
    state.view.composer.insert_str("\u{1b}[31m");
    let mut term = terminal(60, 20);
    let mut view = view();
    let text = frame(&mut term, &state, &mut view);
    assert!(text.contains("␛[31mred?"), "{text}");
    assert!(text.contains("␛[31m ␛[1m <U+009B>2J"), "{text}");
    let buf = term.backend().buffer();
    for cell in &buf.content {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "{:?}",
            cell.symbol()
        );
    }
}

#[test]
fn no_color_draws_modifiers_only() {
    let state = fixture();
    let mut term = terminal(100, 60);
    let mut plain = View::with_theme(Theme::with_color(false));
    term.draw(|f| draw(f, &state, &mut plain)).expect("draw");
    let buf = term.backend().buffer();
    assert!(
        buf.content
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
    );
    assert!(buf.content.iter().any(|c| !c.modifier.is_empty()));

    let mut coloured = view();
    term.draw(|f| draw(f, &state, &mut coloured)).expect("draw");
    assert!(
        term.backend()
            .buffer()
            .content
            .iter()
            .any(|c| c.fg != Color::Reset)
    );
}

#[test]
fn tiny_terminals_do_not_panic() {
    let mut state = fixture();
    state.view.notice = Some("notice".into());
    state.view.composer.insert_str("typed text\nmore");
    for (w, h) in [(1, 1), (2, 2), (3, 3), (5, 4), (10, 5), (80, 1), (1, 40)] {
        let mut term = terminal(w, h);
        let mut view = view();
        frame(&mut term, &state, &mut view);
        view.scroll(Scroll::PageUp);
        frame(&mut term, &state, &mut view);
    }
}

#[test]
fn the_composer_scrolls_to_keep_the_cursor_visible() {
    let mut state = ChatState::new("agent", "~");
    let lines: Vec<String> = (1..=15).map(|i| format!("line {i}")).collect();
    state.view.composer.insert_str(&lines.join("\n"));
    let mut term = terminal(30, 20);
    let mut view = view();
    let text = frame(&mut term, &state, &mut view);
    assert!(
        text.contains("│ line 15 ") && !text.contains("│ line 5 "),
        "{text}"
    );
    for _ in 0..14 {
        state.view.composer.up();
    }
    let text = frame(&mut term, &state, &mut view);
    assert!(
        text.contains("│ line 1 ") && !text.contains("│ line 11 "),
        "{text}"
    );
    // Rows: 20 - footer - 12 composer = 7 transcript rows, border, then text.
    assert_eq!(term.get_cursor_position().ok(), Some(Position::new(8, 8)));
}

#[test]
fn a_flooded_answer_keeps_its_newest_rows_and_shows_old_ones_when_scrolled_to() {
    // A streamed answer far longer than the rows kept while following: the
    // screen still shows its start when scrolled to the top, and its end
    // when following, exactly as a whole render would.
    let mut state = ChatState::new("agent", "~/p");
    ready(&mut state);
    let mut term = terminal(40, 12);
    let mut view = view();
    for i in 0..12_000 {
        state
            .session
            .transcript
            .push_agent_text(&format!("paragraph number {i}\n\n"));
        if i % 500 == 0 {
            frame(&mut term, &state, &mut view);
        }
    }
    let following = frame(&mut term, &state, &mut view);
    assert!(following.contains("paragraph number 11999"), "{following}");
    view.scroll(Scroll::Top);
    let top = frame(&mut term, &state, &mut view);
    assert!(top.contains("paragraph number 0"), "{top}");
    assert!(top.contains("paragraph number 2"), "{top}");
    view.scroll(Scroll::Bottom);
    let again = frame(&mut term, &state, &mut view);
    assert!(again.contains("paragraph number 11999"), "{again}");
}

#[test]
fn footer_sandbox_badges() {
    use crate::sandbox::Badge;
    let mut out = String::new();
    let mut state = ChatState::new("codex", "/home/someone/src/warden");
    ready(&mut state);
    for badge in [
        Badge::Confined,
        Badge::ReadOnly,
        Badge::Off,
        Badge::Unconfined,
        Badge::Partial,
        Badge::PartialReadOnly,
    ] {
        state.session.sandbox = Some(badge);
        for width in [100, 50] {
            out.push_str(&format!("{width:>3} |{}", footer_line(&state, width)));
        }
    }
    assert_snapshot!(out);
}

/// The footer's hints are shortened before they go: while BYPASS shows,
/// "Ctrl-G rules" stays at 80 columns (issue 25).
#[test]
fn footer_keeps_the_rules_key_while_bypass_shows() {
    let mut state = ChatState::new("claude-code", "/home/someone/src/projects/warden");
    ready(&mut state);
    state.gate.agent_policy.bypass = true;
    for width in [80, 60] {
        let line = footer_line(&state, width);
        assert!(line.contains("BYPASS"), "{line}");
        assert!(line.contains("Ctrl-G rules"), "{width}: {line}");
    }
}

/// "● working" says how long the turn has run, by the state's clock, and
/// the runtime is told when that changes (issue 25).
#[test]
fn working_shows_the_elapsed_time() {
    use crate::state::{Action, Msg};
    let t0 = std::time::Instant::now();
    let mut state = ChatState::new("claude-code", "~/src/warden");
    ready(&mut state);
    state.update(Msg::Tick(t0));
    state.update(Msg::Action(Action::Paste("hello".into())));
    state.update(Msg::Action(Action::Submit));
    assert!(state.session.turn.is_some(), "the prompt went");
    assert_eq!(
        state.turn_tick(),
        Some(t0 + std::time::Duration::from_secs(1))
    );
    state.update(Msg::Tick(t0 + std::time::Duration::from_millis(65_500)));
    let line = footer_line(&state, 120);
    assert!(line.contains("● working 1m 05s · Esc cancel"), "{line}");
    assert_eq!(
        state.turn_tick(),
        Some(t0 + std::time::Duration::from_secs(66))
    );
}

/// "net open" (nothing walls the agent's network) is yellow in the footer,
/// the other confined badges dim (issue 35).
#[test]
fn footer_says_net_open_in_yellow() {
    use crate::sandbox::Badge;
    let mut state = ChatState::new("codex", "/w");
    ready(&mut state);
    let theme = crate::ui::theme::Theme::with_color(true);
    state.session.sandbox = Some(Badge::NetOpen);
    let open = crate::ui::footer::sandbox_badge(&state, theme).expect("a badge");
    assert!(open.content.contains("net open"), "{open:?}");
    assert_eq!(open.style.fg, Some(ratatui::style::Color::Yellow));
    state.session.sandbox = Some(Badge::Confined);
    let walled = crate::ui::footer::sandbox_badge(&state, theme).expect("a badge");
    assert_ne!(walled.style.fg, Some(ratatui::style::Color::Yellow));
}

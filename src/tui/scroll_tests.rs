//! The scrolling backend draws the same screen as a full redraw: warden's
//! real screens go through it into a terminal emulator (vt100), frame
//! after frame, and each result is compared cell by cell with the same
//! frame drawn from a blank screen. And it sends fewer bytes.

use crate::state::Code;
use std::cell::{Cell as StdCell, RefCell};
use std::io::{self, Write};
use std::num::NonZeroU16;
use std::rc::Rc;

use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

use super::scroll::{Rows, ScrollBackend, Stats, draw};
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, SessionInfo, SessionUpdate, ToolCall,
    ToolCallFields, ToolContent, ToolKind, WireStatus,
};
use crate::state::{Action, ChatFocus, ChatId, ChatState, Msg, Workspace, WsMsg};
use crate::ui::{Scroll, Theme, Views, draw_workspace};

/// Bytes written, shared with the test.
#[derive(Clone, Default)]
struct Sink(Rc<RefCell<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A crossterm backend writing into a [`Sink`], with a size the test sets.
struct Pty {
    inner: CrosstermBackend<Sink>,
    size: Rc<StdCell<Size>>,
}

impl Pty {
    fn new(sink: &Sink, size: &Rc<StdCell<Size>>) -> Self {
        Pty {
            inner: CrosstermBackend::new(sink.clone()),
            size: Rc::clone(size),
        }
    }
}

impl Write for Pty {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(&mut self.inner)
    }
}

impl Backend for Pty {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(Position::ORIGIN)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        Ok(self.size.get())
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size.get(),
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

pub(super) fn parser(size: Size) -> vt100::Parser {
    let n = |v: u16| NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN);
    vt100::Parser::new(n(size.height), n(size.width), 0)
}

/// One cell as a terminal shows it: text (blank when empty), colours,
/// attributes, and whether it is half of a wide character.
pub(super) type Shown = (String, vt100::Color, vt100::Color, [bool; 7]);

pub(super) fn cells(screen: &vt100::Screen) -> Vec<Vec<Shown>> {
    let (rows, cols) = screen.size();
    (0..rows.get())
        .map(|row| {
            (0..cols.get())
                .map(|col| match screen.cell(row, col) {
                    Some(c) => {
                        let text = if c.has_contents() {
                            c.contents().to_string()
                        } else {
                            " ".to_string()
                        };
                        let flags = [
                            c.bold(),
                            c.dim(),
                            c.italic(),
                            c.underline(),
                            c.inverse(),
                            c.is_wide(),
                            c.is_wide_continuation(),
                        ];
                        (text, c.fgcolor(), c.bgcolor(), flags)
                    }
                    None => (
                        String::new(),
                        vt100::Color::Default,
                        vt100::Color::Default,
                        [false; 7],
                    ),
                })
                .collect()
        })
        .collect()
}

/// The screen's rows as text, for failure messages.
fn text(screen: &vt100::Screen) -> String {
    screen.contents()
}

/// warden's screen through the scrolling backend into an emulator.
struct Rig {
    term: Terminal<ScrollBackend<Pty>>,
    sink: Sink,
    size: Rc<StdCell<Size>>,
    screen: vt100::Parser,
    views: Views,
}

impl Rig {
    fn new(width: u16, height: u16, regions: bool) -> Self {
        let size = Rc::new(StdCell::new(Size::new(width, height)));
        let sink = Sink::default();
        let backend = ScrollBackend::new(Pty::new(&sink, &size), regions);
        Rig {
            term: Terminal::new(backend).expect("terminal"),
            sink,
            size: Rc::clone(&size),
            screen: parser(size.get()),
            views: Views::with_theme(Theme::with_color(true)),
        }
    }

    fn resize(&mut self, width: u16, height: u16) {
        self.size.set(Size::new(width, height));
        // As the loop does on the terminal's resize event.
        self.term.backend_mut().resized();
        let n = |v: u16| NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN);
        self.screen.set_size(n(height), n(width));
    }

    fn stats(&self) -> Stats {
        self.term.backend().stats()
    }

    /// Draw a frame; check the emulator shows what a full redraw of the
    /// same frame shows; the bytes it took.
    fn frame(&mut self, ws: &Workspace, what: &str) -> usize {
        self.frame_told(ws, what, |moved| moved)
    }

    /// [`Rig::frame`], the shift the layout knows passed through `told`
    /// (a wrong one must cost bytes at most, never the screen).
    fn frame_told(
        &mut self,
        ws: &Workspace,
        what: &str,
        told: impl FnOnce(Option<i32>) -> Option<i32>,
    ) -> usize {
        let views = &mut self.views;
        draw(&mut self.term, |frame| {
            draw_workspace(frame, ws, views);
            views.transcript_area().map(|rows| Rows {
                moved: told(rows.moved),
                ..rows
            })
        })
        .expect("draw");
        let bytes = std::mem::take(&mut *self.sink.0.borrow_mut());
        self.screen.process(&bytes);
        let expected = full_redraw(ws, &mut self.views, self.size.get());
        assert!(
            cells(self.screen.screen()) == cells(expected.screen()),
            "{what}: the screen differs from a full redraw\n--- scrolled:\n{}\n--- full:\n{}",
            text(self.screen.screen()),
            text(expected.screen())
        );
        // Where a hidden cursor rests does not show.
        let cursor =
            |screen: &vt100::Screen| (!screen.hide_cursor()).then(|| screen.cursor_position());
        assert_eq!(
            cursor(self.screen.screen()),
            cursor(expected.screen()),
            "{what}: the cursor"
        );
        bytes.len()
    }
}

/// The same frame drawn by plain ratatui on a blank screen.
fn full_redraw(ws: &Workspace, views: &mut Views, size: Size) -> vt100::Parser {
    let size = Rc::new(StdCell::new(size));
    let sink = Sink::default();
    let mut term = Terminal::new(Pty::new(&sink, &size)).expect("terminal");
    term.draw(|f| draw_workspace(f, ws, views)).expect("draw");
    let mut screen = parser(size.get());
    screen.process(&sink.0.borrow());
    screen
}

/// Bytes one frame of `ws` takes through plain ratatui after `before`.
fn plain_bytes(before: &Workspace, ws: &Workspace, width: u16, height: u16) -> usize {
    let size = Rc::new(StdCell::new(Size::new(width, height)));
    let sink = Sink::default();
    let mut term = Terminal::new(Pty::new(&sink, &size)).expect("terminal");
    let mut views = Views::with_theme(Theme::with_color(true));
    term.draw(|f| draw_workspace(f, before, &mut views))
        .expect("draw");
    sink.0.borrow_mut().clear();
    term.draw(|f| draw_workspace(f, ws, &mut views))
        .expect("draw");
    sink.0.borrow().len()
}

/// A connected chat of the demo agent, its prompt sent.
fn workspace(chats: usize) -> (Workspace, ChatId) {
    let mut ws = Workspace::new(vec!["demo".into()]);
    let mut id = 0;
    for n in 0..chats {
        let mut s = ChatState::new("demo", "~/src/warden");
        s.update(Msg::SessionStarted(SessionInfo {
            session_id: format!("s{n}"),
            modes: None,
            origin: Default::default(),
        }));
        s.update(Msg::Action(Action::Paste("explain the reaper".into())));
        s.update(Msg::Action(Action::key(Code::Enter)));
        id = ws.add_chat(s);
    }
    (ws, id)
}

fn say(ws: &mut Workspace, chat: ChatId, text: &str) {
    ws.update(WsMsg::Chat(
        chat,
        Msg::Update(SessionUpdate::AgentChunk(text.into())),
    ));
}

/// Markdown in 64-byte pieces: paragraphs with styled words, lists, code.
fn answer(pieces: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "the", "agent", "reads", "a", "file", "and", "then", "writes", "tests", "for", "every",
        "module", "it", "changed", "while", "warden", "keeps", "asking", "before", "commands",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut text = String::new();
    let mut section = 0;
    while text.len() < pieces * 64 {
        section += 1;
        text.push_str(&format!("## Part {section}\n\n"));
        for w in 0..40 + next(40) {
            let word = WORDS[next(WORDS.len())];
            match next(12) {
                0 => text.push_str(&format!("**{word}**")),
                1 => text.push_str(&format!("`{word}()`")),
                _ => text.push_str(word),
            }
            text.push_str(if w % 29 == 28 { ".\n\n" } else { " " });
        }
        text.push_str("\n\n- one item\n- two items\n\n```rust\nlet x = 1;\n```\n\n");
    }
    let bytes = text.as_bytes();
    bytes
        .chunks(64)
        .take(pieces)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect()
}

/// Stream `pieces`, a frame after every `per_frame`.
fn stream(rig: &mut Rig, ws: &mut Workspace, chat: ChatId, pieces: &[String], per_frame: usize) {
    for (i, piece) in pieces.iter().enumerate() {
        say(ws, chat, piece);
        if i % per_frame == per_frame - 1 {
            rig.frame(ws, &format!("after piece {i}"));
        }
    }
    rig.frame(ws, "after the last piece");
}

#[test]
fn a_streaming_answer_scrolls_and_shows_what_a_full_redraw_shows() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    rig.frame(&ws, "first frame");
    stream(&mut rig, &mut ws, chat, &answer(600), 7);
    let stats = rig.stats();
    assert!(
        stats.scrolled > 20,
        "the transcript scrolled with the terminal: {stats:?}"
    );
    assert_eq!(stats.full, 1, "only the first frame is drawn in full");
    assert!(
        stats.searched <= 2,
        "the layout's shift held; no frame searched for one: {stats:?}"
    );
}

#[test]
fn a_wrong_shift_from_the_layout_costs_a_search_not_the_screen() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    rig.frame(&ws, "first frame");
    let pieces = answer(400);
    for (i, piece) in pieces.iter().enumerate() {
        say(&mut ws, chat, piece);
        if i % 5 != 4 {
            continue;
        }
        // Off by some rows, the other way, unknown, or more than a screen.
        let tell = |moved: Option<i32>| match i % 4 {
            0 => moved.map(|k| k + 3),
            1 => moved.map(|k| -k - 1),
            2 => None,
            _ => Some(500),
        };
        let before = rig.stats();
        rig.frame_told(&ws, &format!("after piece {i}, a wrong shift"), tell);
        let after = rig.stats();
        if i % 4 < 3 && i > 40 {
            assert_eq!(after.searched, before.searched + 1, "piece {i}: {after:?}");
        }
    }
    assert!(rig.stats().scrolled > 20, "{:?}", rig.stats());
}

#[test]
fn an_entry_growing_above_the_view_moves_the_count_not_the_rows() {
    // A tool call before the answer, then the answer streams until the
    // call is off screen; the call's result then grows it above the view.
    let (mut ws, chat) = workspace(1);
    let mut call = ToolCall::placeholder("call-1");
    call.title = "Run cargo test".into();
    call.kind = ToolKind::Execute;
    ws.update(WsMsg::Chat(
        chat,
        Msg::Update(SessionUpdate::ToolCall(Box::new(call))),
    ));
    let mut rig = Rig::new(100, 30, true);
    let pieces = answer(300);
    stream(&mut rig, &mut ws, chat, &pieces[..200], 4);
    let before = rig.stats();
    ws.update(WsMsg::Chat(
        chat,
        Msg::Update(SessionUpdate::ToolCallUpdate {
            id: "call-1".into(),
            fields: Box::new(ToolCallFields {
                status: Some(WireStatus::Failed),
                content: Some(vec![ToolContent::Text {
                    text: "line one\nline two\nline three\nline four".into(),
                }]),
                ..Default::default()
            }),
        }),
    ));
    rig.frame(&ws, "the call above grew");
    stream(&mut rig, &mut ws, chat, &pieces[200..], 4);
    assert!(rig.stats().scrolled > before.scrolled, "{:?}", rig.stats());
}

#[test]
fn without_scroll_regions_nothing_scrolls_and_the_screen_is_the_same() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(100, 30, false);
    rig.frame(&ws, "first frame");
    stream(&mut rig, &mut ws, chat, &answer(200), 5);
    assert_eq!(rig.stats().scrolled, 0);
}

#[test]
fn a_resize_redraws_everything_and_scrolling_goes_on() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    let pieces = answer(400);
    stream(&mut rig, &mut ws, chat, &pieces[..150], 6);
    rig.resize(90, 30);
    stream(&mut rig, &mut ws, chat, &pieces[150..250], 6);
    rig.resize(130, 45);
    stream(&mut rig, &mut ws, chat, &pieces[250..], 6);
    let stats = rig.stats();
    assert_eq!(stats.full, 3, "the first frame and each resize: {stats:?}");
    assert!(stats.scrolled > 10, "{stats:?}");
}

fn edit(session: &str, tool: &str) -> PermissionRequest {
    PermissionRequest {
        session_id: session.into(),
        tool_call_id: tool.into(),
        fields: ToolCallFields {
            title: Some("Edit src/config.rs".into()),
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
fn a_card_appearing_and_going_keeps_the_screen_right() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    let pieces = answer(300);
    stream(&mut rig, &mut ws, chat, &pieces[..120], 4);
    ws.update(WsMsg::Chat(
        chat,
        Msg::PermissionRequested {
            id: 1,
            request: Box::new(edit("s0", "call-1")),
        },
    ));
    rig.frame(&ws, "the card appears");
    stream(&mut rig, &mut ws, chat, &pieces[120..200], 4);
    // Answer it: the card goes, the transcript grows back.
    ws.update(WsMsg::Action(Action::key(Code::Esc)));
    rig.frame(&ws, "the card goes");
    stream(&mut rig, &mut ws, chat, &pieces[200..], 4);
    assert!(rig.stats().scrolled > 5);
}

#[test]
fn the_view_scrolled_up_by_the_user_stays_right_while_the_answer_grows() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    let pieces = answer(400);
    stream(&mut rig, &mut ws, chat, &pieces[..200], 5);
    let before = rig.stats().scrolled;
    for (i, step) in [Scroll::Up(3), Scroll::Up(1), Scroll::PageUp, Scroll::Up(5)]
        .into_iter()
        .enumerate()
    {
        rig.views.scroll(chat, step);
        rig.frame(&ws, &format!("scrolled up, step {i}"));
    }
    assert!(
        rig.stats().scrolled > before,
        "moving the view up scrolls the region down"
    );
    // The answer grows below while the view stays.
    stream(&mut rig, &mut ws, chat, &pieces[200..260], 5);
    for (i, step) in [Scroll::Down(2), Scroll::PageDown, Scroll::Bottom]
        .into_iter()
        .enumerate()
    {
        rig.views.scroll(chat, step);
        rig.frame(&ws, &format!("scrolled down, step {i}"));
    }
    stream(&mut rig, &mut ws, chat, &pieces[260..], 5);
}

#[test]
fn wide_characters_scroll_and_show_what_a_full_redraw_shows() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(80, 24, true);
    let lines = [
        "日本語の説明です。リーパーは子プロセスを待ちます。\n\n",
        "emoji 🦀 and 👍🏽 and ❤️ in a row, then **太字** and `コード`\n\n",
        "- 一つ目の項目 with latin text after it\n- 二つ目 ✅\n\n",
        "a long line of 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字 that wraps\n\n",
    ];
    rig.frame(&ws, "first frame");
    for round in 0..40 {
        for (i, line) in lines.iter().enumerate() {
            say(&mut ws, chat, line);
            if (round + i) % 3 == 0 {
                rig.frame(&ws, &format!("round {round}, line {i}"));
            }
        }
    }
    rig.frame(&ws, "last frame");
    assert!(rig.stats().scrolled > 5);
}

#[test]
fn overlays_and_the_sidebar_keep_the_screen_right() {
    // Two chats on a wide screen: the sidebar beside the transcript.
    let (mut ws, chat) = workspace(2);
    let mut rig = Rig::new(130, 40, true);
    let pieces = answer(300);
    stream(&mut rig, &mut ws, chat, &pieces[..100], 4);
    assert!(rig.stats().scrolled > 0, "the sidebar rows move back");
    // The mode dropdown over the transcript: no scrolling under it.
    ws.update(WsMsg::Action(Action::OpenModeMenu));
    rig.frame(&ws, "the dropdown opens");
    let scrolled = rig.stats().scrolled;
    stream(&mut rig, &mut ws, chat, &pieces[100..140], 4);
    assert_eq!(
        rig.stats().scrolled,
        scrolled,
        "nothing scrolls under an overlay"
    );
    ws.update(WsMsg::Action(Action::key(Code::Esc)));
    rig.frame(&ws, "the dropdown closes");
    // The chat list over a narrow screen.
    rig.resize(80, 30);
    ws.focus = ChatFocus::List { selected: 0 };
    stream(&mut rig, &mut ws, chat, &pieces[140..200], 4);
    ws.focus = ChatFocus::Chat;
    stream(&mut rig, &mut ws, chat, &pieces[200..], 4);
}

#[test]
fn a_scrolling_frame_sends_a_fraction_of_a_full_redraw() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    let pieces = answer(200);
    stream(&mut rig, &mut ws, chat, &pieces[..150], 10);
    let before = ws.clone();
    for piece in &pieces[150..152] {
        say(&mut ws, chat, piece);
    }
    let scrolled_before = rig.stats().scrolled;
    let bytes = rig.frame(&ws, "two more pieces");
    assert_eq!(
        rig.stats().scrolled,
        scrolled_before + 1,
        "this frame scrolls"
    );
    let plain = plain_bytes(&before, &ws, 120, 40);
    assert!(
        bytes * 4 < plain,
        "{bytes} bytes through scroll regions, {plain} through plain ratatui"
    );
}

#[test]
fn a_frame_that_does_not_scroll_sends_no_more_than_before() {
    let (mut ws, chat) = workspace(1);
    let mut rig = Rig::new(120, 40, true);
    stream(&mut rig, &mut ws, chat, &answer(100), 10);
    // The turn ends; the user types into the composer.
    let mut before = ws.clone();
    for (i, key) in "a short follow-up".chars().enumerate() {
        ws.update(WsMsg::Action(Action::Paste(key.to_string())));
        let scrolled = rig.stats().scrolled;
        let bytes = rig.frame(&ws, &format!("key {i}"));
        assert_eq!(rig.stats().scrolled, scrolled);
        let plain = plain_bytes(&before, &ws, 120, 40);
        assert!(
            bytes <= plain,
            "key {i}: {bytes} bytes, plain ratatui {plain}"
        );
        before = ws.clone();
    }
}

//! warden in a real pseudo-terminal while an answer streams: scrolling the
//! transcript with the terminal's scroll regions ends on the same screen
//! as redrawing it. (How many bytes each takes depends on how many frames
//! the machine manages; `benches/wire.rs` measures it, the unit tests in
//! `src/tui/scroll_tests.rs` compare frame by frame.)

mod pty;

/// The transcript's rows of a screen, trailing blanks trimmed (a blank
/// the terminal scrolled in and a space drawn look the same).
fn transcript(screen: &str) -> Vec<String> {
    screen
        .lines()
        .take(usize::from(pty::ROWS) - 4)
        .map(|row| row.trim_end().to_owned())
        .collect()
}

#[test]
fn a_paced_answer_scrolled_by_the_terminal_ends_on_the_same_screen() {
    let scrolled = pty::run(400, 2000, true);
    let redrawn = pty::run(400, 2000, false);
    assert_eq!(transcript(&scrolled.screen), transcript(&redrawn.screen));
    assert!(
        transcript(&scrolled.screen)
            .iter()
            .any(|row| row.contains(pty::END)),
        "the answer's end is on screen:\n{}",
        scrolled.screen
    );
}

//! The multi-line message composer: text and a cursor, edited by keys.

/// The text being typed and where the cursor is (a byte index on a char boundary).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Composer {
    text: String,
    cursor: usize,
}

impl Composer {
    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Cursor as a byte index into [`Composer::text`].
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Cursor as (line, column in chars).
    pub(crate) fn cursor_line_col(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count())
    }

    /// Take the text out, leaving the composer empty.
    pub(crate) fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Replace the text; the cursor goes to the end.
    pub(crate) fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Put the cursor at byte `at` (the nearest char boundary before it).
    pub(crate) fn set_cursor(&mut self, at: usize) {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        self.cursor = at;
    }

    /// Insert a character at the cursor.
    pub(crate) fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Insert pasted text at the cursor; line endings are normalised to `\n`.
    pub(crate) fn insert_str(&mut self, s: &str) {
        let normal = s.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &normal);
        self.cursor += normal.len();
    }

    fn prev_boundary(&self) -> Option<usize> {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(i, _)| i)
    }

    fn next_boundary(&self) -> Option<usize> {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
    }

    /// Delete the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(prev) = self.prev_boundary() {
            self.text.replace_range(prev..self.cursor, "");
            self.cursor = prev;
        }
    }

    /// Delete the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if let Some(next) = self.next_boundary() {
            self.text.replace_range(self.cursor..next, "");
        }
    }

    /// Move one character left.
    pub(crate) fn left(&mut self) {
        if let Some(prev) = self.prev_boundary() {
            self.cursor = prev;
        }
    }

    /// Move one character right.
    pub(crate) fn right(&mut self) {
        if let Some(next) = self.next_boundary() {
            self.cursor = next;
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Move to the start of the line.
    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// Move to the end of the line.
    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Byte index of column `col` (in chars) of the line starting at `start`.
    fn at_column(&self, start: usize, col: usize) -> usize {
        let line = &self.text[start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        line.char_indices()
            .nth(col)
            .map_or(start + line.len(), |(i, _)| start + i)
    }

    /// Move up one line, keeping the column where possible. Returns false on the first line.
    pub(crate) fn up(&mut self) -> bool {
        let start = self.line_start();
        if start == 0 {
            return false;
        }
        let (_, col) = self.cursor_line_col();
        let prev_start = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = self.at_column(prev_start, col);
        true
    }

    /// Move down one line, keeping the column where possible. Returns false on the last line.
    pub(crate) fn down(&mut self) -> bool {
        let end = self.line_end();
        if end == self.text.len() {
            return false;
        }
        let (_, col) = self.cursor_line_col();
        self.cursor = self.at_column(end + 1, col);
        true
    }

    /// The text of the cursor's line before and after the cursor.
    pub(crate) fn line_around_cursor(&self) -> (String, String) {
        (
            self.text[self.line_start()..self.cursor].to_string(),
            self.text[self.cursor..self.line_end()].to_string(),
        )
    }

    /// Delete from the start of the line to the cursor (Ctrl-U).
    pub(crate) fn kill_to_line_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Delete from the cursor to the end of the line (Ctrl-K).
    pub(crate) fn kill_to_line_end(&mut self) {
        let end = self.line_end();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Delete the word before the cursor (Ctrl-W, Alt-Backspace).
    pub(crate) fn delete_word_back(&mut self) {
        let start = self.word_left_index();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    fn word_left_index(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(char::is_whitespace);
        trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    /// Move to the start of the previous word.
    pub(crate) fn word_left(&mut self) {
        self.cursor = self.word_left_index();
    }

    /// Move past the end of the next word.
    pub(crate) fn word_right(&mut self) {
        let after = &self.text[self.cursor..];
        let skip_ws = after.len() - after.trim_start_matches(char::is_whitespace).len();
        let rest = &after[skip_ws..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor += skip_ws + word;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> Composer {
        let mut c = Composer::default();
        c.insert_str(s);
        c
    }

    #[test]
    fn typing_and_editing_multibyte() {
        let mut c = Composer::default();
        for ch in "héllo".chars() {
            c.insert_char(ch);
        }
        c.left();
        c.left();
        c.left();
        c.left();
        c.backspace();
        assert_eq!(c.text(), "éllo");
        c.delete();
        assert_eq!(c.text(), "llo");
        c.end();
        c.insert_char('!');
        assert_eq!(c.text(), "llo!");
    }

    #[test]
    fn paste_normalises_line_endings() {
        let c = typed("a\r\nb\rc");
        assert_eq!(c.text(), "a\nb\nc");
        assert_eq!(c.cursor_line_col(), (2, 1));
    }

    #[test]
    fn up_and_down_keep_the_column() {
        let mut c = typed("first line\nab\nthird line");
        assert_eq!(c.cursor_line_col(), (2, 10));
        assert!(c.up());
        assert_eq!(c.cursor_line_col(), (1, 2));
        assert!(c.up());
        assert_eq!(c.cursor_line_col(), (0, 2));
        assert!(!c.up());
        assert!(c.down());
        assert!(c.down());
        assert_eq!(c.cursor_line_col(), (2, 2));
        assert!(!c.down());
    }

    #[test]
    fn kills_and_words() {
        let mut c = typed("cargo test --all");
        c.delete_word_back();
        assert_eq!(c.text(), "cargo test ");
        c.word_left();
        assert_eq!(c.cursor(), 6);
        c.word_right();
        assert_eq!(c.cursor(), 10);
        c.kill_to_line_end();
        assert_eq!(c.text(), "cargo test");
        c.kill_to_line_start();
        assert_eq!(c.text(), "");
        let mut c = typed("one\ntwo");
        c.home();
        c.kill_to_line_end();
        assert_eq!(c.text(), "one\n");
        assert_eq!(c.take(), "one\n");
        assert!(c.is_empty());
    }
}

//! Make text from an agent safe to put on the terminal.
//!
//! Nothing an agent sends reaches the terminal raw: control characters,
//! escape sequences and bidirectional overrides are replaced by visible
//! stand-ins, never interpreted. Newlines are kept (callers split on them);
//! a tab becomes spaces so that width arithmetic stays exact.

use std::borrow::Cow;

/// Spaces a tab expands to.
const TAB: &str = "    ";

/// Whether `c` must not be written to the terminal as is.
fn is_unsafe(c: char) -> bool {
    c != '\n'
        && (c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}'))
}

/// The text with every unsafe character replaced by a visible stand-in:
/// C0 controls as their Unicode control pictures (ESC shows as `␛`), DEL as
/// `␡`, C1 controls and invisible formatting characters as `<U+XXXX>`.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_unsafe(c) {
            out.push(c);
            continue;
        }
        match c {
            '\t' => out.push_str(TAB),
            '\u{0}'..='\u{1F}' => {
                // U+2400 is the control picture of NUL; the rest follow in order.
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
            }
            '\u{7F}' => out.push('\u{2421}'),
            other => {
                out.push_str(&format!("<U+{:04X}>", other as u32));
            }
        }
    }
    Cow::Owned(out)
}

/// One line of text, made visible, with newlines shown too (for titles and
/// other single-line places).
pub fn one_line(text: &str) -> String {
    visible(text).replace('\n', "\u{2424}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "héllo, wörld — 日本語\nsecond line";
        assert!(matches!(visible(text), Cow::Borrowed(_)));
        assert_eq!(visible(text), text);
    }

    #[test]
    fn escape_sequences_are_shown_not_interpreted() {
        let shown = visible("\u{1b}[31mred\u{1b}[0m");
        assert_eq!(shown, "\u{241b}[31mred\u{241b}[0m");
        assert!(!shown.contains('\u{1b}'));
    }

    #[test]
    fn every_control_character_is_replaced() {
        let all: String = (0u32..0x100)
            .filter_map(char::from_u32)
            .filter(|c| *c != '\n')
            .collect();
        let shown = visible(&all);
        assert!(shown.chars().all(|c| !c.is_control()), "{shown:?}");
    }

    #[test]
    fn osc_title_bell_backspace_and_c1_csi() {
        assert_eq!(
            visible("\u{1b}]0;pwned\u{7}a\u{8}\r\u{9b}"),
            "\u{241b}]0;pwned\u{2407}a\u{2408}\u{240d}<U+009B>"
        );
    }

    #[test]
    fn bidi_overrides_are_visible() {
        assert_eq!(visible("a\u{202E}b"), "a<U+202E>b");
    }

    #[test]
    fn tabs_expand_and_newlines_stay() {
        assert_eq!(visible("a\tb\nc"), "a    b\nc");
        assert_eq!(one_line("a\nb"), "a\u{2424}b");
    }
}

//! Make text from an agent safe to put on the terminal.
//!
//! Nothing an agent sends reaches the terminal raw, on any output path (the
//! TUI, `warden exec`'s stdout and stderr, `warden log`, `warden agents`,
//! `warden grants`, error lines): control characters (C0, DEL, C1), escape
//! sequences, bidirectional controls and invisible formatting characters are
//! replaced by visible stand-ins, never interpreted; so are characters that
//! draw nothing (U+2800, the Hangul fillers) and runs of spaces other than
//! the ASCII one, which could pad agent text onto rows of warden's own
//! (a title padded with braille blanks drew fake card rows). Newlines are kept
//! (callers split on them); a tab becomes spaces so that width arithmetic
//! stays exact. JSON output escapes the same characters as `\u` sequences
//! ([`json`]).

use std::borrow::Cow;

/// Spaces a tab expands to.
const TAB: &str = "    ";

/// Whether `c` must not be written to the terminal as is, wherever it stands.
fn is_unsafe(c: char) -> bool {
    c != '\n' && (c.is_control() || invisible(c))
}

/// Spaces other than the ASCII one: fine one at a time between words
/// (French text, CJK's ideographic space), but a run of them draws blank
/// cells that an agent can use to push its text onto rows of its choosing.
/// Shown as stand-ins when a space of any kind stands next to them.
fn blank_lookalike(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// A space of any kind, for telling a run of blank look-alikes.
fn spacey(c: char) -> bool {
    c == ' ' || c == '\t' || blank_lookalike(c) || invisible(c)
}

/// Formatting characters that change how the text around them shows, or
/// show nothing at all: bidi controls, zero-width characters, joiners,
/// invisible operators, tags, fillers.
pub(crate) fn invisible(c: char) -> bool {
    matches!(
        c,
        // Soft hyphen, combining grapheme joiner, Arabic letter mark.
        '\u{00AD}' | '\u{034F}' | '\u{061C}'
        // Hangul fillers, Khmer inherent vowels, Mongolian vowel separator.
        | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180E}'
        // Braille pattern blank: a letter that draws nothing.
        | '\u{2800}'
        // Zero-width space, non-joiner, joiner, LRM, RLM.
        | '\u{200B}'..='\u{200F}'
        // Line and paragraph separators, LRE, RLE, PDF, LRO, RLO.
        | '\u{2028}'..='\u{202E}'
        // Word joiner, invisible operators, bidi isolates, deprecated format characters.
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        // Interlinear annotation.
        | '\u{FFF9}'..='\u{FFFB}'
        // Musical symbol formatting, shorthand format controls.
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        // Tag characters: invisible ASCII.
        | '\u{E0000}'..='\u{E007F}'
    )
}

/// Whether `bytes` are all printable ASCII or newlines.
pub(crate) fn plain_ascii(bytes: &[u8]) -> bool {
    crate::text::every_byte(bytes, |b| b.wrapping_sub(b' ') < 0x5f || b == b'\n')
}

/// The text with every unsafe character replaced by a visible stand-in:
/// C0 controls as their Unicode control pictures (ESC shows as `␛`), DEL as
/// `␡`, C1 controls, invisible formatting characters and blank letters
/// (U+2800, the Hangul fillers) as `<U+XXXX>`, and so are spaces other than
/// the ASCII one that stand next to another space (a run of them).
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    // Printable ASCII and newlines, the bulk of what agents send, in one
    // pass over the bytes.
    if plain_ascii(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    if !text.chars().any(|c| is_unsafe(c) || blank_lookalike(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let in_run = blank_lookalike(c) && (prev.is_some_and(spacey) || next.is_some_and(spacey));
        prev = Some(c);
        if !is_unsafe(c) && !in_run {
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

/// At most `max` bytes of `text` (cut at a character boundary), then how
/// many more there were: for an agent's error or stderr line, which can be
/// one huge line, in a notice.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let end = crate::text::floor_char_boundary(text, max);
    Cow::Owned(format!(
        "{} … ({} more bytes)",
        &text[..end],
        text.len() - end
    ))
}

/// One line of text, made visible, with newlines shown too (for titles and
/// other single-line places).
pub fn one_line(text: &str) -> String {
    visible(text).replace('\n', "\u{2424}")
}

/// Serialized JSON with every character that [`visible`] would replace
/// written as a `\u` escape (two for one beyond the BMP), so that the JSON
/// means the same and carries nothing raw to a terminal. `serde_json`
/// escapes C0 controls itself, but not DEL, C1 controls or formatting
/// characters. Such characters can only be inside strings, where `\u`
/// escapes are valid.
pub fn json(serialized: &str) -> Cow<'_, str> {
    let escaped = |c: char| c.is_control() || invisible(c) || blank_lookalike(c);
    if !serialized.chars().any(escaped) {
        return Cow::Borrowed(serialized);
    }
    let mut out = String::with_capacity(serialized.len() + 16);
    for c in serialized.chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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
    fn every_ascii_byte_is_judged_alike_in_plain_text() {
        for b in 0u8..=0x7f {
            let c = char::from(b);
            let text = format!("plain ascii {c} text\n");
            let slow = text.chars().any(is_unsafe);
            assert_eq!(
                matches!(visible(&text), Cow::Owned(_)),
                slow,
                "byte {b:#04x}"
            );
        }
    }

    #[test]
    fn invisible_formatting_characters_are_visible() {
        for c in [
            '\u{061C}',
            '\u{200B}',
            '\u{200F}',
            '\u{2028}',
            '\u{202A}',
            '\u{2060}',
            '\u{2064}',
            '\u{2066}',
            '\u{2069}',
            '\u{FEFF}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{00AD}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(visible(&text), format!("a<U+{:04X}>b", c as u32));
        }
        // Ordinary letters, marks and emoji pass.
        assert_eq!(visible("é ü ب 🙂 日本"), "é ü ب 🙂 日本");
    }

    #[test]
    fn json_escapes_what_serde_leaves_raw_and_stays_the_same_json() {
        let value =
            serde_json::json!({"t": "a\u{1b}]0;x\u{7}\u{9b}\u{202E}\u{200B}\u{E0041}\u{7f}é"});
        let raw = serde_json::to_string(&value).expect("serializes");
        let escaped = json(&raw);
        assert!(
            escaped.chars().all(|c| !c.is_control() && !invisible(c)),
            "{escaped}"
        );
        assert!(
            escaped.contains("\\u009b") && escaped.contains("\\udb40\\udc41"),
            "{escaped}"
        );
        let back: serde_json::Value = serde_json::from_str(&escaped).expect("still JSON");
        assert_eq!(back, value);
        assert!(matches!(json("{\"a\":\"é\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn blank_lookalikes_are_visible() {
        // Always: letters and fillers that draw nothing.
        for c in [
            '\u{2800}', '\u{3164}', '\u{115F}', '\u{1160}', '\u{FFA0}', '\u{180E}', '\u{17B4}',
            '\u{17B5}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(visible(&text), format!("a<U+{:04X}>b", c as u32));
            assert!(json(&format!("\"{c}\"")).starts_with("\"\\u"), "{c:?}");
        }
        // A title padded to push text onto rows of its own.
        let padded = format!("Read{}read · reads are allowed", "\u{2800}".repeat(80));
        let shown = visible(&padded);
        assert!(!shown.contains('\u{2800}'), "{shown}");
        assert_eq!(shown.matches("<U+2800>").count(), 80);
        // Spaces other than ASCII's: one between words stays, a run shows.
        for c in [
            '\u{00A0}', '\u{2000}', '\u{2005}', '\u{200A}', '\u{202F}', '\u{205F}', '\u{3000}',
            '\u{1680}',
        ] {
            let one = format!("a{c}b");
            assert_eq!(visible(&one), one, "{c:?} alone");
            let run = format!("a{c}{c}{c}b");
            let code = format!("<U+{:04X}>", c as u32);
            assert_eq!(visible(&run), format!("a{code}{code}{code}b"), "{c:?} run");
            // Mixed with ASCII spaces, it is a run too.
            let mixed = format!("a {c} {c} b");
            assert_eq!(visible(&mixed), format!("a {code} {code} b"), "{c:?} mixed");
            assert!(json(&format!("\"{c}\"")).starts_with("\"\\u"), "{c:?}");
        }
        assert_eq!(one_line("x\u{3000}\u{3000}y"), "x<U+3000><U+3000>y");
    }

    #[test]
    fn cut_keeps_a_bounded_head_and_says_how_much_more() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééé", 3), "é … (4 more bytes)");
    }

    #[test]
    fn tabs_expand_and_newlines_stay() {
        assert_eq!(visible("a\tb\nc"), "a    b\nc");
        assert_eq!(one_line("a\nb"), "a\u{2424}b");
    }
}

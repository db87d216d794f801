//! The agent's markdown, rendered to wrapped ratatui lines with pulldown-cmark.
//!
//! [`render`] turns a whole document into lines. [`MdStream`] keeps the
//! lines of an answer that grows chunk by chunk: the part of the text that
//! can no longer change how it renders (everything before the last blank
//! line that starts a new top-level block, or before the last complete line
//! of an open code fence) is rendered once and kept; only the rest is
//! rendered again on every chunk.
//!
//! Every piece of text that becomes a span goes through
//! [`crate::sanitize::visible`]: entities such as `&#27;` decode to control
//! characters, so the text is made safe after parsing, not before.

use pulldown_cmark::{Options, Parser};
use ratatui::text::Line;

use super::theme::Theme;

mod plain;
mod stream;
mod writer;

pub(crate) use stream::MdStream;
use writer::Writer;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Render a whole markdown document to rows of at most `width` columns.
pub(crate) fn render(src: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if let Some(rows) = plain::render(src, width) {
        return rows;
    }
    parsed(src, width, theme)
}

/// [`render`] through the markdown parser, always.
fn parsed(src: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut writer = Writer::new(width, theme);
    for event in Parser::new_ext(src, options()) {
        writer.event(event);
    }
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::writer::{MIN_COLUMN, fit_columns};
    use super::*;
    use ratatui::style::Modifier;

    pub(super) fn theme() -> Theme {
        Theme::with_color(true)
    }

    pub(super) fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    pub(super) fn md(src: &str, width: usize) -> Vec<String> {
        text(&render(src, width, theme()))
    }

    #[test]
    fn headings_show_their_level_and_are_bold() {
        let lines = render("# Title\n\n## Sub", 40, theme());
        assert_eq!(text(&lines), ["# Title", "", "## Sub"]);
        let title = &lines[0].spans[1];
        assert!(
            title
                .style
                .add_modifier
                .contains(Modifier::BOLD | Modifier::UNDERLINED)
        );
    }

    #[test]
    fn strong_emphasis_and_inline_code_are_styled() {
        let lines = render("a **b** *c* `d`", 40, theme());
        assert_eq!(text(&lines), ["a b c d"]);
        let spans = &lines[0].spans;
        let find = |s: &str| spans.iter().find(|sp| sp.content == s).map(|sp| sp.style);
        assert!(find("b").is_some_and(|s| s.add_modifier.contains(Modifier::BOLD)));
        assert!(find("c").is_some_and(|s| s.add_modifier.contains(Modifier::ITALIC)));
        assert_eq!(find("d"), Some(theme().inline_code()));
    }

    #[test]
    fn paragraphs_are_separated_and_source_line_breaks_kept() {
        assert_eq!(md("one\ntwo\n\nthree", 40), ["one", "two", "", "three"]);
    }

    #[test]
    fn paragraphs_word_wrap() {
        assert_eq!(md("the quick brown fox", 10), ["the quick", "brown fox"]);
    }

    #[test]
    fn fenced_and_indented_code_blocks_are_indented_and_hard_wrapped() {
        let src = "```rust\nfn main() { println!(\"hi\"); }\n\n  x\n```\n\n    indented";
        assert_eq!(
            md(src, 16),
            [
                "  fn main() { pr",
                "  intln!(\"hi\"); ",
                "  }",
                "  ",
                "    x",
                "",
                "  indented"
            ]
        );
        let lines = render("```\ncode\n```", 20, theme());
        assert_eq!(lines[0].spans[1].style, theme().code_block());
    }

    #[test]
    fn lists_nest_with_indentation_and_number() {
        let src = "- one\n- two\n  - inner\n    wrapped text here\n- three\n\n1. first\n2. second";
        assert_eq!(
            md(src, 20),
            [
                "• one",
                "• two",
                "  ◦ inner",
                "    wrapped text",
                "    here",
                "• three",
                "",
                "1. first",
                "2. second"
            ]
        );
    }

    #[test]
    fn loose_lists_get_blank_rows_and_paragraphs_in_items() {
        let src = "- a\n\n- b\n\n  more b";
        assert_eq!(md(src, 20), ["• a", "", "• b", "", "  more b"]);
    }

    #[test]
    fn task_lists() {
        assert_eq!(md("- [ ] todo\n- [x] done", 20), ["• ☐ todo", "• ☑ done"]);
    }

    #[test]
    fn block_quotes_have_a_bar() {
        assert_eq!(
            md("> quoted text that wraps\n>\n> second", 12),
            ["│ quoted", "│ text that", "│ wraps", "│", "│ second"]
        );
    }

    #[test]
    fn links_show_the_url_dimmed_after_the_text() {
        let lines = render(
            "see [docs](https://x.dev/a) and <https://y.dev>",
            80,
            theme(),
        );
        assert_eq!(
            text(&lines),
            ["see docs (https://x.dev/a) and https://y.dev"]
        );
        let url = lines[0]
            .spans
            .iter()
            .find(|s| s.content == " (https://x.dev/a)");
        assert_eq!(url.map(|s| s.style), Some(theme().url()));
    }

    #[test]
    fn rules_span_the_width() {
        assert_eq!(md("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    }

    #[test]
    fn tables_align_columns_or_fall_back_to_rows() {
        let src = "| a | bb |\n|---|---:|\n| ccc | d |";
        assert_eq!(md(src, 40), ["a   │ bb", "────┼───", "ccc │  d"]);
        assert_eq!(md(src, 5), ["a │", "bb", "ccc │", "d"]);
    }

    #[test]
    fn wide_tables_wrap_cells_inside_their_columns() {
        let src = "| prompt | what the agent does |\n|---|---|\n| `help` | this table |\n| `slow` | a chunk every 200 ms for 60 s; try cancelling it |";
        assert_eq!(
            md(src, 32),
            [
                "prompt │ what the agent does",
                "───────┼────────────────────────",
                "help   │ this table",
                "slow   │ a chunk every 200 ms",
                "       │ for 60 s; try",
                "       │ cancelling it",
            ]
        );
    }

    #[test]
    fn columns_shrink_from_the_widest() {
        let mut w = vec![4, 30, 20];
        assert!(fit_columns(&mut w, 40));
        assert_eq!(w.iter().sum::<usize>(), 40);
        assert_eq!(w[0], 4, "a narrow column keeps its width");
        assert!(w[1] >= w[2] && w[2] >= MIN_COLUMN, "{w:?}");
        let mut w = vec![10, 10, 10];
        assert!(!fit_columns(&mut w, 17), "three thin columns need 18");
        let mut w = vec![3, 5];
        assert!(fit_columns(&mut w, 100));
        assert_eq!(w, [3, 5], "a table that fits is left alone");
    }

    #[test]
    fn unfinished_constructs_render_what_parses() {
        assert_eq!(md("**bold", 20), ["**bold"]);
        assert_eq!(md("```rust\nlet x", 20), ["  let x"]);
        assert_eq!(md("- item\n- ", 20), ["• item", "• "]);
    }

    #[test]
    fn entities_and_controls_are_made_visible() {
        let lines = md("a &#27;[31m b \u{1b}[0m `\u{7}`", 40);
        assert_eq!(lines, ["a ␛[31m b ␛[0m ␇"]);
    }

    /// Text the plain path takes renders exactly as the parser renders it;
    /// anything it cannot be sure of goes to the parser.
    #[test]
    fn plain_text_renders_as_the_parser_renders_it() {
        use proptest::prelude::*;
        let word = proptest::sample::select(vec![
            "word",
            "a",
            "Long-word",
            "x",
            "12",
            "é",
            "日本",
            "(x)",
            "a.",
            "b,",
            "it's",
            "\"q\"",
            "1.",
            "-",
            "*",
            "_a_",
            "`c`",
            "[l](u)",
            "<b>",
            "&amp;",
            "\\",
            "|",
            "~~s~~",
            "#",
            "===",
            "---",
            "  ",
            " ",
            "\t",
            "\r",
            "\u{a0}",
            "\u{3000}",
            "\u{202e}",
            "\u{85}",
            "\u{0}",
            "!",
            "@",
            "%",
            "$",
            "^",
            "{",
            "}",
            "=",
            "+",
            ":",
            ";",
            "?",
            "/",
        ]);
        let line = proptest::collection::vec(word, 0..8).prop_map(|w| w.join(" "));
        let doc = proptest::collection::vec(line, 0..8).prop_map(|l| l.join("\n"));
        let taken = std::cell::Cell::new(0);
        proptest!(ProptestConfig::with_cases(2000), |(doc in doc, width in 1..30usize)| {
            if let Some(rows) = plain::render(&doc, width) {
                taken.set(taken.get() + 1);
                prop_assert_eq!(rows, parsed(&doc, width, theme()), "{:?}", doc);
            }
        });
        assert!(
            taken.get() > 100,
            "the plain path took only {} documents",
            taken.get()
        );
        // Each of these goes to the parser.
        for doc in [
            "a\n===",
            "a *b*",
            "a\n  b",
            "a\n\n    code",
            "a | b\n--|--",
            "a\r\nb",
            "a\tb",
        ] {
            assert_eq!(plain::render(doc, 40), None, "{doc:?}");
        }
        assert_eq!(
            text(&render("one\ntwo  \n\n\nthree\n", 40, theme())),
            ["one", "two", "", "three"]
        );
        // Characters that steer a terminal are made visible on this path too.
        let steering = "Bidi \u{202e}x and a C1 CSI \u{9b}31m here";
        let rows = plain::render(steering, 80).expect("plain text");
        assert_eq!(
            text(&rows),
            ["Bidi <U+202E>x and a C1 CSI <U+009B>31m here"]
        );
    }

    pub(super) const DOCS: &[&str] = &[
        "# Title\n\nSome *intro* text that is long enough to wrap around.\n\n- a\n- b\n  - c\n\nAfter the list.\n\n```rust\nfn main() {\n\n    let x = 1;\n}\n```\n\nDone [link](http://x).\n",
        "Para one.\n\n> quote\n> more\n\nPara two\n\n1. x\n\n2. y\n\nend\n\n~~~\na\n\n~~~~\nb\n~~~\n\ntail",
        "text\n\n````\n```\ninner\n```\n````\n\nafter\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nz",
        "start\n\n  ```\n  indented fence\n\nx\n  ```\n\nend\n\n    code\n\n    more code\n\nlast",
        "ref [x][1]\n\nmiddle\n\n[1]: http://example.com\n\nend",
        "<div>\n\n```\nnot code?\n```\n\n</div>\n\nafter",
        "a\r\n\r\nb\r\n\r\n```\r\nc\r\n\r\nd\r\n```\r\n\r\ne",
        "1. step\n   ```bash\n   cargo test\n\n   ```\n2. next\n\nplain\n",
        "1. step\n   ```bash\n   code\n```\n\nafter\n\nmore",
        "Intro:\n```\nx\n```\nText right after\n\n```python\ndef f():\n\n    return 1\n```\nz",
        "a\n\n\tcode\n\nb\n\n***\n\n___\n\nc",
        "Title\n=====\n\nbody\n\nSub\n---\n\nx &#27;[1m y",
        "> quote\n\n> ```\n> code\n>\n> more\n\nafter\n\n   ```\n   three\n\n   ```\n\nend",
    ];
}

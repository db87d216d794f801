//! Names that look like others: an agent's tool named `fs/write_text_fіle`
//! (a Cyrillic `і`) must not pass for warden's own confined
//! `fs/write_text_file`. The one place that tells: a name's confusable
//! skeleton (look-alike letters of Cyrillic, Greek and Armenian mapped to
//! the Latin ones, fullwidth forms to ASCII, invisible characters and
//! combining marks dropped, case folded) and whether its letters mix
//! scripts. A small table of the common look-alikes, not all of Unicode's.

use std::fmt;

use crate::policy::{CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE, RequestView};
use crate::sanitize::one_line;

/// warden's own tool names, which no agent tool may take or imitate.
pub(crate) const OWN_TOOLS: [&str; 3] = [CLIENT_READ, CLIENT_WRITE, CLIENT_TERMINAL];

/// Why a name may pass for another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookalike {
    /// It reads as this one of warden's own names (spelled alike or not).
    Mimics(&'static str),
    /// Its letters come from scripts that imitate each other (Latin with
    /// Cyrillic, Greek, Armenian, Cherokee or fullwidth letters).
    MixedScripts(Vec<Script>),
    /// It holds characters that draw nothing, or combining marks on Latin.
    Hidden,
}

/// The scripts whose letters imitate Latin ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Script {
    Latin,
    Cyrillic,
    Greek,
    Armenian,
    Cherokee,
    /// Fullwidth Latin letters (U+FF21..U+FF5A).
    Fullwidth,
}

impl Script {
    fn of(c: char) -> Option<Script> {
        match c {
            'a'..='z' | 'A'..='Z' | '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}' => {
                Some(Script::Latin)
            }
            '\u{0400}'..='\u{052F}' | '\u{1C80}'..='\u{1C8F}' | '\u{A640}'..='\u{A69F}' => {
                Some(Script::Cyrillic)
            }
            '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' => Some(Script::Greek),
            '\u{0530}'..='\u{058F}' => Some(Script::Armenian),
            '\u{13A0}'..='\u{13FF}' | '\u{AB70}'..='\u{ABBF}' => Some(Script::Cherokee),
            '\u{FF21}'..='\u{FF3A}' | '\u{FF41}'..='\u{FF5A}' => Some(Script::Fullwidth),
            _ => None,
        }
        .filter(|_| c.is_alphabetic())
    }

    fn name(self) -> &'static str {
        match self {
            Script::Latin => "Latin",
            Script::Cyrillic => "Cyrillic",
            Script::Greek => "Greek",
            Script::Armenian => "Armenian",
            Script::Cherokee => "Cherokee",
            Script::Fullwidth => "fullwidth",
        }
    }
}

impl fmt::Display for Lookalike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lookalike::Mimics(own) => write!(f, "looks like warden's own `{own}`"),
            Lookalike::MixedScripts(scripts) => {
                let names: Vec<&str> = scripts.iter().map(|s| s.name()).collect();
                write!(f, "mixes {} letters", names.join(" and "))
            }
            Lookalike::Hidden => write!(f, "holds invisible characters or combining marks"),
        }
    }
}

/// The Latin letter (or ASCII sign) `c` passes for, if it is a look-alike.
fn latin_of(c: char) -> Option<char> {
    Some(match c {
        // Fullwidth ASCII.
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0)?,
        // Cyrillic.
        'а' | 'А' => 'a',
        'в' | 'В' | 'Ь' | 'ь' => 'b',
        'с' | 'С' | 'ϲ' | 'Ϲ' => 'c',
        'ԁ' | 'Ԁ' => 'd',
        'е' | 'Е' | 'ё' | 'Ё' => 'e',
        'һ' | 'Һ' | 'Н' | 'н' => 'h',
        'і' | 'І' | 'ї' | 'Ї' | 'ӏ' | 'Ӏ' => 'i',
        'ј' | 'Ј' => 'j',
        'к' | 'К' => 'k',
        'м' | 'М' => 'm',
        'о' | 'О' => 'o',
        'р' | 'Р' => 'p',
        'ԛ' | 'Ԛ' => 'q',
        'г' => 'r',
        'ѕ' | 'Ѕ' => 's',
        'т' | 'Т' => 't',
        'у' | 'У' | 'Ү' | 'ү' => 'y',
        'ԝ' | 'Ԝ' => 'w',
        'х' | 'Х' => 'x',
        // Greek.
        'α' | 'Α' => 'a',
        'Β' | 'β' => 'b',
        'ε' | 'Ε' => 'e',
        'Η' => 'h',
        'ι' | 'Ι' | 'ί' => 'i',
        'κ' | 'Κ' => 'k',
        'Μ' => 'm',
        'ν' | 'Ν' => 'n',
        'ο' | 'Ο' | 'ό' => 'o',
        'ρ' | 'Ρ' => 'p',
        'τ' | 'Τ' => 't',
        'υ' | 'Υ' | 'γ' => 'y',
        'χ' | 'Χ' => 'x',
        'Ζ' => 'z',
        // Armenian.
        'օ' => 'o',
        'ո' => 'n',
        'ս' => 'u',
        'հ' => 'h',
        'զ' => 'q',
        'ց' => 'g',
        // Latin look-alikes of other Latin letters.
        'ı' | 'ɩ' | 'ⅰ' | 'ℹ' => 'i',
        'ℓ' | '|' | '1' | 'ǀ' => 'l',
        '0' => 'o',
        'ɡ' => 'g',
        // Signs.
        '\u{2215}' | '\u{2044}' | '\u{29F8}' => '/',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE63}' => '-',
        '\u{2024}' => '.',
        '\u{2017}' => '_',
        _ => return None,
    })
}

/// Characters that draw nothing or only change the letter before them.
fn hidden(c: char) -> bool {
    crate::sanitize::invisible(c) || ('\u{0300}'..='\u{036F}').contains(&c)
}

/// The name as it reads: look-alikes mapped to Latin, hidden characters
/// dropped, lower case.
pub(crate) fn skeleton(name: &str) -> String {
    name.chars()
        .filter(|c| !hidden(*c))
        .map(|c| latin_of(c).unwrap_or(c).to_ascii_lowercase())
        .collect()
}

/// The look-alike scripts a name's letters come from, when more than one.
fn mixed_scripts(name: &str) -> Option<Vec<Script>> {
    let mut scripts: Vec<Script> = name.chars().filter_map(Script::of).collect();
    scripts.sort();
    scripts.dedup();
    (scripts.len() > 1).then_some(scripts)
}

/// Why the tool name `name` may pass for one of `own` (warden's own tool
/// names), or for some other name: it reads as one of them (an exact match
/// too, for a name that is not warden's), mixes scripts, or hides
/// characters.
pub(crate) fn tool_name(name: &str, own: &[&'static str]) -> Option<Lookalike> {
    let skeleton = skeleton(name);
    if let Some(mimicked) = own.iter().find(|o| skeleton == self::skeleton(o)) {
        return Some(Lookalike::Mimics(mimicked));
    }
    if let Some(scripts) = mixed_scripts(name) {
        return Some(Lookalike::MixedScripts(scripts));
    }
    name.chars().any(hidden).then_some(Lookalike::Hidden)
}

/// Why a title may pass for one of warden's: one of its words reads as
/// one of `own`. (Titles mix scripts for good reasons: file names.)
pub(crate) fn title(title: &str, own: &[&'static str]) -> Option<Lookalike> {
    title.split_whitespace().find_map(|word| {
        let word = word.trim_matches(|c: char| "`'\"()[]{}<>,;:".contains(c));
        let skeleton = skeleton(word);
        own.iter()
            .find(|o| skeleton == self::skeleton(o))
            .map(|o| Lookalike::Mimics(o))
    })
}

/// The warning a card shows for an agent's request whose tool name reads
/// as warden's own, mixes scripts or hides characters, or whose title
/// names one of warden's tools in look-alike letters; `None` for warden's
/// own requests and plain names.
pub(crate) fn warning(view: &RequestView) -> Option<String> {
    if view.card.is_client() {
        return None;
    }
    let tool = view.tool();
    let name = tool.strip_prefix("agent:").unwrap_or(&tool);
    let why = tool_name(name, &OWN_TOOLS).or_else(|| title(&view.title, &OWN_TOOLS))?;
    Some(format!(
        "⚠ the agent's own tool `{}` {why}: this is not one of warden's calls",
        coded(&one_line(&tool))
    ))
}

/// The name with every character beyond ASCII as its code (`<U+0456>`), so
/// that the look-alike letters show for what they are.
fn coded(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("<U+{:04X}>", c as u32)
            }
        })
        .collect()
}

/// [`warning`] for a tool call of the agent's in the transcript.
pub(crate) fn call_warning(call: &crate::model::ToolCall) -> Option<String> {
    let view = RequestView {
        kind: call.kind,
        title: call.title.clone(),
        tool_name: call.tool_name.clone(),
        ..Default::default()
    };
    warning(&view)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &[&str] = &["fs/read_text_file", "fs/write_text_file", "terminal/create"];

    #[test]
    fn look_alikes_of_wardens_names_are_told() {
        for spoof in [
            "fs/write_text_f\u{0456}le",         // Cyrillic і
            "fs/wr\u{0456}te_t\u{0435}xt_file",  // Cyrillic і and е
            "fs/write_text_fil\u{03B5}",         // Greek ε
            "ｆｓ/ｗｒｉｔｅ_ｔｅｘｔ_ｆｉｌｅ", // fullwidth
            "fs/write\u{200B}_text_file",        // zero-width space
            "fs\u{2215}write_text_file",         // division slash
            "FS/Write_Text_File",
            "fs/write_text_fi1e",
            "fs/write_text_file",
        ] {
            assert_eq!(
                tool_name(spoof, OWN),
                Some(Lookalike::Mimics("fs/write_text_file")),
                "{spoof:?}"
            );
        }
        assert_eq!(
            tool_name("t\u{0435}rminal/create", OWN),
            Some(Lookalike::Mimics("terminal/create"))
        );
    }

    #[test]
    fn mixed_scripts_and_hidden_marks_are_told() {
        assert_eq!(
            tool_name("B\u{0430}sh", OWN),
            Some(Lookalike::MixedScripts(vec![
                Script::Latin,
                Script::Cyrillic
            ]))
        );
        assert_eq!(tool_name("Bash\u{0301}", OWN), Some(Lookalike::Hidden));
        assert_eq!(tool_name("Ba\u{2060}sh", OWN), Some(Lookalike::Hidden));
        assert_eq!(
            tool_name("B\u{0430}sh", OWN).map(|l| l.to_string()),
            Some("mixes Latin and Cyrillic letters".into())
        );
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "Bash",
            "Edit",
            "read_file",
            "mcp__server__tool",
            "Чтение",
            "ファイル",
            "fs/read_text_file2",
            "write_text_file",
        ] {
            assert_eq!(tool_name(name, OWN), None, "{name}");
        }
        assert_eq!(title("Edit файл.txt", OWN), None);
        assert_eq!(title("Write /w/notes.txt", OWN), None);
    }

    #[test]
    fn the_policy_names_a_look_alike_tool_the_agents() {
        let view = RequestView {
            tool_name: Some("fs/write_text_f\u{0456}le".into()),
            ..Default::default()
        };
        assert_eq!(view.tool(), "agent:fs/write_text_f\u{0456}le");
        assert!(
            warning(&view)
                .is_some_and(|w| w.contains("looks like warden's own `fs/write_text_file`"))
        );
        assert!(
            warning(&view).is_some_and(|w| w.contains("`agent:fs/write_text_f<U+0456>le`")),
            "the look-alike letter shows as its code"
        );
        let own = RequestView {
            tool_name: Some("fs/write_text_file".into()),
            card: crate::gate::CardKind::ClientWrite,
            ..Default::default()
        };
        assert_eq!(own.tool(), "fs/write_text_file");
        assert_eq!(warning(&own), None);
        let plain = RequestView {
            tool_name: Some("Edit".into()),
            title: "Write /w/a.txt".into(),
            ..Default::default()
        };
        assert_eq!(plain.tool(), "Edit");
        assert_eq!(warning(&plain), None);
    }

    #[test]
    fn a_title_word_that_reads_as_wardens_name_is_told() {
        assert_eq!(
            title("`fs/write_text_f\u{0456}le` /w/a.txt", OWN),
            Some(Lookalike::Mimics("fs/write_text_file"))
        );
    }
}

use super::*;

#[test]
fn key_names_for_the_readme_and_the_screen() {
    assert_eq!(Key::ctrl(Code::Char('t')).name('+'), "Ctrl+T");
    assert_eq!(Key::ctrl(Code::Char('t')).name('-'), "Ctrl-T");
    assert_eq!(Key::plain(Code::BackTab).name('-'), "Shift-Tab");
    assert_eq!(Key::alt(Code::Digits).name('+'), "Alt+1..9");
    assert_eq!(Key::plain(Code::Digits).name('+'), "1-9");
    assert_eq!(Key::shift(Code::Up).name('+'), "Shift+↑");
    assert_eq!(Key::ch('A').name('+'), "A");
}

#[test]
fn digits_match_any_digit_but_zero() {
    let digits = Key::alt(Code::Digits);
    assert!(digits.matches(Key::alt(Code::Char('1'))));
    assert!(digits.matches(Key::alt(Code::Char('9'))));
    assert!(!digits.matches(Key::alt(Code::Char('0'))));
    assert!(!digits.matches(Key::ch('1')));
}

#[test]
fn the_footer_hints_come_from_the_tables_in_rank_order() {
    assert_eq!(
        footer_hints(),
        [
            "PgUp/PgDn scroll",
            "Ctrl-T thoughts",
            "Ctrl-G rules",
            "Ctrl-L chats",
            "Shift-Tab mode",
            "Ctrl-D quit"
        ]
    );
}

/// The key the footer says quits does, with one press (Ctrl-C takes two
/// on an empty message, so it is not the one shown).
#[test]
fn the_footers_quit_key_quits_at_once() {
    let quits: Vec<&Binding<Global>> = COMPOSER
        .iter()
        .chain(CHATS)
        .filter(|b| matches!(b.hint, Hint::Footer(_)) && b.label == "quit")
        .collect();
    assert_eq!(quits.len(), 1, "{quits:?}");
    assert_eq!(quits[0].cmd, Global::Act(Action::Quit));
    assert_eq!(quits[0].keys[0], Key::ctrl(Code::Char('d')));
}

#[test]
fn the_card_hint_lines_come_from_the_card_table() {
    assert_eq!(
        card_line(false, |_| true, |_| true),
        "y allow · n deny · 1-9 options · a chat · b bypass · p keep as rule · r reason · A all · Tab next · e expand · Ctrl-P type"
    );
    assert_eq!(
        card_line(true, |_| true, |_| true),
        "y allow · n deny · p keep as rule · Tab next · e expand · Ctrl-P type"
    );
    assert_eq!(card_hints(QUESTION, false), "y yes · n or Esc no");
}

#[test]
fn no_key_means_two_things_in_one_table() {
    let tables: Vec<(&str, Vec<Key>)> = vec![
        (
            "composer+chats",
            COMPOSER
                .iter()
                .chain(CHATS)
                .flat_map(|b| b.keys.iter().copied())
                .collect(),
        ),
        (
            "cards",
            crate::state::choice_bindings()
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .chain(CARDS.iter().flat_map(|b| b.keys.iter().copied()))
                .collect(),
        ),
        (
            "question",
            QUESTION
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .collect(),
        ),
        (
            "confirm all",
            CONFIRM_ALL
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .collect(),
        ),
        (
            "mode menu",
            MODE_MENU
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .collect(),
        ),
        (
            "rules",
            RULES.iter().flat_map(|b| b.keys.iter().copied()).collect(),
        ),
        (
            "chat list",
            CHAT_LIST
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .collect(),
        ),
    ];
    for (name, keys) in tables {
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b, "{name}: {} is bound twice", a.name('+'));
            }
        }
    }
}

#[test]
fn a_context_matches_the_key_as_pressed() {
    // A context reads the key itself, never an action made of it: a key
    // the composer reads as something else still finds its row there.
    let (action, key) = split(Action::ch('y'));
    assert_eq!(action, Action::Char('y'));
    assert_eq!(
        key.and_then(crate::state::choice_of_key),
        Some(crate::state::Choice::Allow)
    );
    let (action, key) = split(Action::Key(Key::shift(Code::Up)));
    assert_eq!(action, Action::CardScroll(-3));
    assert_eq!(lookup_key(CARDS, key), Some(CardCmd::ScrollUp));
    let (_, key) = split(Action::Key(Key::ctrl(Code::Char('g'))));
    assert_eq!(lookup_key(RULES, key), Some(ListCmd::Close));
    // A digit is the agent's option on a card, typed in the composer.
    let (action, key) = split(Action::ch('3'));
    assert_eq!(action, Action::Char('3'));
    assert_eq!(
        key.and_then(crate::state::choice_of_key),
        Some(crate::state::Choice::AgentOption(2))
    );
    // Not a key (a paste, a click): no table row matches it.
    let (action, key) = split(Action::Submit);
    assert_eq!((action, key), (Action::Submit, None));
    assert_eq!(lookup_key(CARDS, key), None);
    // A key that means nothing in the composer stays the key.
    let q = Key::ctrl(Code::Char('q'));
    assert_eq!(split(Action::Key(q)), (Action::Key(q), Some(q)));
}

#[test]
fn the_guides_key_tables_are_the_key_tables() {
    // WARDEN_BLESS=1 cargo test --lib keys:: writes them into docs/GUIDE.md
    // (the README is a short quick start; the key tables live in the guide).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md");
    let readme = std::fs::read_to_string(&path).expect("docs/GUIDE.md");
    for (name, _) in readme_tables() {
        assert!(
            readme.contains(&format!("<!-- keys:{name} -->\n")),
            "docs/GUIDE.md has no <!-- keys:{name} --> table"
        );
    }
    let rendered = render_readme(&readme);
    if std::env::var_os("WARDEN_BLESS").is_some() {
        std::fs::write(&path, &rendered).expect("write docs/GUIDE.md");
        return;
    }
    pretty_assertions::assert_eq!(
        readme,
        rendered,
        "docs/GUIDE.md's key tables differ from src/keys.rs: run WARDEN_BLESS=1 cargo test --lib keys::"
    );
}

#[test]
fn render_readme_replaces_only_between_the_markers() {
    let readme = "intro\n<!-- keys:rules -->\nold\n<!-- /keys -->\nafter\n";
    let out = render_readme(readme);
    assert!(out.starts_with("intro\n<!-- keys:rules -->\n| key on the rules screen |"));
    assert!(out.ends_with("<!-- /keys -->\nafter\n"));
    assert!(!out.contains("old"));
    assert_eq!(render_readme(&out), out);
}

#[test]
fn an_elicitation_card_offers_only_accept_decline_and_moving() {
    let line = elicitation_hints();
    assert!(
        line.starts_with("y accept (a form: fill it in) · n decline"),
        "{line}"
    );
    for absent in ["a chat", "b bypass", "p keep", "A all", "r reason"] {
        assert!(!line.contains(absent), "{line}");
    }
    assert!(
        line.contains("Tab next") && line.ends_with("Ctrl-P type"),
        "{line}"
    );
}

/// The rooms of the crate (its top-level modules), each pure or doing IO.
/// A room added to `src/lib.rs` that neither list names fails
/// [`pure_rooms_import_no_room_that_does_io`]: say which it is.
const PURE_ROOMS: &[&str] = &[
    "confusable",
    "gate",
    "keys",
    "model",
    "policy",
    "record",
    "sanitize",
    "state",
    "text",
    "ui",
];
const IO_ROOMS: &[&str] = &[
    "acp",
    "agents",
    "app",
    "chats",
    "checkpoint",
    "client",
    "decision_log",
    "demo_agent",
    "editor",
    "export",
    "history",
    "launch",
    "mention",
    "net",
    "own_path",
    "procs",
    "reaper",
    "remote",
    "sandbox",
    "settings",
    "test_support",
    "tui",
];

/// Every room of `src/lib.rs` is in [`PURE_ROOMS`] or [`IO_ROOMS`].
#[test]
fn every_room_is_known_pure_or_io() {
    let lib = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"),
    )
    .expect("read lib.rs");
    let rooms: Vec<&str> = lib
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            rest.strip_suffix(';')
        })
        .collect();
    assert!(rooms.len() > 20, "{rooms:?}");
    let unknown: Vec<&&str> = rooms
        .iter()
        .filter(|r| !PURE_ROOMS.contains(r) && !IO_ROOMS.contains(r))
        .collect();
    assert!(
        unknown.is_empty(),
        "rooms neither pure nor IO (add each to PURE_ROOMS or IO_ROOMS): {unknown:?}"
    );
}

/// Every pure room ([`PURE_ROOMS`]: the gate, the state, the keys, the
/// policy, the ui, the model, ...) is pure: none of their files
/// (tests aside) imports a room that does IO ([`IO_ROOMS`]: the sandbox,
/// checkpoints, remote, the chats' records, the decision log, the
/// terminal, the runtime, ...), nor the standard library's or tokio's IO
/// (a `Path`'s own disk reads included: `canonicalize`, `exists`, ...);
/// the state, the keys and the policy import no drawing either. The
/// doors: `sandbox::explain`, the sandbox's pure words (its badge, what a
/// denial means), which the state and the ui may name, and
/// `agents::quirks`, who the agent is and how its modes read, and
/// `checkpoint::report`, the plain types a checkpoint job reports in.
#[test]
fn pure_rooms_import_no_room_that_does_io() {
    const ALLOWED: &[&str] = &[
        "crate::sandbox::explain",
        "crate::agents::quirks",
        "crate::checkpoint::report",
    ];
    const NO_IO: &[&str] = &["std::fs", "std::process", "std::net", "tokio"];
    // `std::path::Path` reads the disk without naming `std::fs`: the
    // gate's facts hold paths, and only the runtime's door reads them.
    const PATH_IO: &[&str] = &[
        ".canonicalize",
        ".exists",
        ".try_exists",
        ".metadata",
        ".symlink_metadata",
        ".read_link",
        ".read_dir",
        ".is_file",
        ".is_dir",
        ".is_symlink",
    ];
    const NO_DRAWING: &[&str] = &["crate::ui", "ratatui", "crossterm"];
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let rooms: Vec<String> = IO_ROOMS.iter().map(|r| format!("crate::{r}")).collect();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for dir in PURE_ROOMS {
        let mut all = Vec::new();
        if src.join(dir).is_dir() {
            files(&src.join(dir), &mut all);
        }
        if src.join(format!("{dir}.rs")).is_file() {
            all.push(src.join(format!("{dir}.rs")));
        }
        assert!(!all.is_empty(), "the pure room {dir} has no file");
        let mut banned: Vec<&str> = rooms.iter().map(String::as_str).collect();
        banned.extend(NO_IO);
        banned.extend(PATH_IO);
        if *dir != "ui" {
            banned.extend(NO_DRAWING);
        }
        for path in all {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read");
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let code = line.trim_start();
                // An inline test module (last in its file) may use anything.
                if code == "#[cfg(test)]"
                    && lines
                        .get(i + 1)
                        .is_some_and(|next| next.trim_start().starts_with("mod tests"))
                {
                    break;
                }
                if code.starts_with("//") {
                    continue;
                }
                for banned in &banned {
                    let whole = code.match_indices(banned).any(|(at, _)| {
                        let rest = &code[at..];
                        !code[at + banned.len()..]
                            .chars()
                            .next()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_')
                            && !ALLOWED.iter().any(|a| rest.starts_with(a))
                    });
                    if whole {
                        found.push(format!("{}:{}: {code}", path.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn ui_calls_no_policy_function() {
    // Drawing reads decisions, it never computes them: under src/ui/ the
    // policy's types (`Mode`, `Rule`, ...) may be named, none of its
    // functions (a lower-case name after `policy::`).
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui"),
        &mut all,
    );
    let mut found = Vec::new();
    for path in all {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut rest = code.as_str();
        while let Some(at) = rest.find("policy::") {
            rest = &rest[at + "policy::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(list) => list[..list.find('}').unwrap_or(list.len())]
                    .split(',')
                    .collect(),
                None => vec![
                    &rest[..rest
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len())],
                ],
            };
            for name in names {
                let name = name.split_whitespace().next().unwrap_or("");
                let last = name.rsplit("::").next().unwrap_or("");
                if last != "self" && last.starts_with(|c: char| c.is_lowercase()) {
                    found.push(format!("{}: policy::{name}", path.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "ui/ calls the policy: {found:#?}");
}

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
            "Ctrl-C quit"
        ]
    );
}

#[test]
fn the_card_hint_lines_come_from_the_card_table() {
    assert_eq!(
        card_hints(CARDS, false),
        "y allow · n deny · 1-9 options · a chat · b bypass · p keep as rule · r reason · A all · Tab next · e expand · Ctrl-P type"
    );
    assert_eq!(
        card_hints(CARDS, true),
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
            CARDS.iter().flat_map(|b| b.keys.iter().copied()).collect(),
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
fn every_context_key_is_one_the_keymap_can_deliver() {
    // A context table binds keys by the action the keymap makes of them:
    // each of its keys (bar the mouse) must come back as itself.
    for table in [
        rows_keys(CARDS),
        rows_keys(QUESTION),
        rows_keys(CONFIRM_ALL),
        rows_keys(MODE_MENU),
        rows_keys(RULES),
        rows_keys(CHAT_LIST),
        rows_keys(REASON),
        rows_keys(KEEP_RULE),
    ] {
        for key in table {
            if matches!(key.code, Code::Click | Code::Digits) {
                continue;
            }
            let action = match lookup(COMPOSER, key).or_else(|| lookup(CHATS, key)) {
                Some(Global::Act(action)) => action,
                None if !key.ctrl => match key.code {
                    Code::Char(c) => Action::Char(c),
                    _ => panic!("{} reaches no context", key.name('+')),
                },
                other => panic!("{} is {other:?} before any context", key.name('+')),
            };
            assert_eq!(Key::of_action(&action), Some(key), "{}", key.name('+'));
        }
    }
}

fn rows_keys<C>(table: &[Binding<C>]) -> Vec<Key> {
    table.iter().flat_map(|b| b.keys.iter().copied()).collect()
}

#[test]
fn the_readme_key_tables_are_the_key_tables() {
    // WARDEN_BLESS=1 cargo test --lib keys:: writes them into README.md.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    for (name, _) in readme_tables() {
        assert!(
            readme.contains(&format!("<!-- keys:{name} -->\n")),
            "README.md has no <!-- keys:{name} --> table"
        );
    }
    let rendered = render_readme(&readme);
    if std::env::var_os("WARDEN_BLESS").is_some() {
        std::fs::write(&path, &rendered).expect("write README.md");
        return;
    }
    pretty_assertions::assert_eq!(
        readme,
        rendered,
        "README.md's key tables differ from src/keys.rs: run WARDEN_BLESS=1 cargo test --lib keys::"
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

/// `state/`, `keys/` and `policy/` are pure: none of their files (tests
/// aside) imports an IO, settings or drawing module, so the import circle
/// and the back doors (issue 22) stay closed.
#[test]
fn pure_modules_import_no_io_settings_or_ui() {
    const BANNED: &[&str] = &[
        "crate::settings",
        "crate::ui",
        "crate::tui",
        "crate::app",
        "crate::acp",
        "crate::client",
        "crate::decision_log",
        "crate::chats",
        "crate::history",
        "crate::editor",
        "crate::export",
        "crate::mention",
        "crate::launch",
        "std::fs",
        "std::process",
        "std::net",
        "tokio",
        "ratatui",
        "crossterm",
    ];
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
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = vec![src.join("keys.rs")];
    for dir in ["state", "keys", "policy"] {
        files(&src.join(dir), &mut all);
    }
    let mut found = Vec::new();
    for path in all {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for banned in BANNED {
                let at = code.find(banned);
                let whole = at.is_some_and(|at| {
                    !code[at + banned.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if whole {
                    found.push(format!("{}:{}: {code}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

//! Nothing an agent sends reaches a terminal raw, on any output path:
//! `warden exec` (stdout and stderr, the error line, the agent's stderr
//! tail), `warden log` (text and JSON), `warden agents` and `warden grants`.
//! The demo agent plays `assets/scenarios/hostile-output-escapes.toml`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/hostile-output-escapes.toml")
}

/// The characters that must never be written raw: C0 controls but newline,
/// DEL, C1 controls, and invisible formatting characters (bidi controls,
/// zero-width characters, the word joiner, the byte order mark, tags, ...).
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// Characters that draw nothing, shown as stand-ins wherever they stand.
fn blank_letter(c: char) -> bool {
    matches!(
        c,
        '\u{2800}' | '\u{3164}' | '\u{115F}' | '\u{1160}' | '\u{FFA0}' | '\u{17B4}' | '\u{17B5}'
    )
}

/// Spaces other than ASCII's, which may not come in runs.
fn wide_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

#[track_caller]
fn assert_clean(what: &str, text: &str) {
    let raw: Vec<String> = text
        .chars()
        .filter(|c| forbidden(*c) || blank_letter(*c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(raw.is_empty(), "{what} carries {raw:?} raw:\n{text:?}");
    let chars: Vec<char> = text.chars().collect();
    let runs = chars
        .windows(2)
        .filter(|w| {
            (wide_space(w[0]) || wide_space(w[1])) && w.iter().all(|c| wide_space(*c) || *c == ' ')
        })
        .count();
    assert_eq!(
        runs, 0,
        "{what} carries runs of blank spaces raw:\n{text:?}"
    );
}

fn hostile_exec(dir: &Path, prompt: &str) -> crate::common::ExecRun {
    let scenario = scenario();
    crate::common::exec_in(
        dir,
        &dir.join("config.toml"),
        &[
            "-p",
            prompt,
            "--",
            WARDEN,
            "demo-agent",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
    )
}

/// `warden ARGS` with the data and config of `dir`.
fn warden(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(WARDEN)
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn exec_shows_a_hostile_agents_text_titles_and_error_without_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err, log) = hostile_exec(dir.path(), "hostile");
    assert_eq!(code, Some(1), "the turn failed: {err}");
    assert_clean("exec stdout", &out);
    assert_clean("exec stderr", &err);
    // Shown, as visible stand-ins.
    assert!(out.contains("\u{241b}]52;c;"), "{out}");
    assert!(out.contains("<U+202E>gnp.exe"), "{out}");
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("warden exec: "), "{err}");
    assert!(last.contains("model error \u{241b}]52;c;"), "{last}");
    assert!(
        last.contains("<U+009B>31m") && last.contains("<U+202E>gnp.exe"),
        "{last}"
    );
    assert!(
        err.contains("Run \u{241b}]52;c;"),
        "the decision line: {err}"
    );
    assert_eq!(log.len(), 1, "{log:?}");
}

#[test]
fn exec_shows_a_crashing_agents_stderr_without_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err, _) = hostile_exec(dir.path(), "hostile-exit");
    assert_eq!(code, Some(1), "{err}");
    assert_clean("exec stdout", &out);
    assert_clean("exec stderr", &err);
    assert!(
        err.contains("panic: \u{241b}]0;pwned"),
        "the stderr tail: {err}"
    );
}

#[test]
fn the_decision_log_prints_without_escapes_as_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, _, log) = hostile_exec(dir.path(), "hostile");
    let title = log[0].title.clone();
    assert!(
        title.contains('\u{1b}') && title.contains('\u{202e}'),
        "{title:?}"
    );

    let file = std::fs::read_to_string(dir.path().join("data/warden/decisions.jsonl")).unwrap();
    assert_clean("the decision log file", &file);

    let (ok, out, err) = warden(dir.path(), &["log"]);
    assert!(ok, "{err}");
    assert_clean("log", &out);
    assert!(out.contains("Run \u{241b}]52;c;"), "{out}");

    let (ok, out, err) = warden(dir.path(), &["log", "--json"]);
    assert!(ok, "{err}");
    assert_clean("log --json", &out);
    assert!(out.contains("\\u202e") || out.contains("\\u202E"), "{out}");
    // Still JSON, and still the same record.
    let line = out.lines().next().unwrap();
    let back: warden::decision_log::DecisionRecord = serde_json::from_str(line).unwrap();
    assert_eq!(back.title, title);
}

#[test]
fn agents_and_grants_print_without_escapes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        "[agents.\"evil\\u001b]0;t\\u0007\\u202e\"]\ncommand = \"x\\u009b2J\"\n\
         args = [\"\\u001b]52;c;eA==\\u0007\", \"\\u2066y\"]\nbypass_permissions = true\n\n\
         [[rules]]\ndecision = \"deny\"\ncommand = \"rm\\u001b[8m *\"\nnote = \"\\u202e\\u200b\"\n",
    )
    .unwrap();
    for args in [&["agents"][..], &["grants"][..]] {
        let (ok, out, err) = warden(dir.path(), args);
        assert!(ok, "{args:?}: {err}");
        assert_clean(&format!("{args:?}"), &out);
        assert_clean(&format!("{args:?} stderr"), &err);
        assert!(out.contains("evil\u{241b}]0;t"), "{args:?}: {out}");
    }
}

#[test]
fn blank_lookalikes_show_as_stand_ins_in_exec_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err, log) = hostile_exec(dir.path(), "blank");
    assert_eq!(code, Some(0), "{err}");
    assert_clean("exec stdout", &out);
    assert_clean("exec stderr", &err);
    assert!(out.contains("pad<U+2800><U+2800><U+2800>x"), "{out}");
    assert!(out.contains("nbsp<U+00A0><U+00A0><U+00A0>y"), "{out}");
    assert!(
        out.contains("single\u{a0}ok"),
        "one no-break space stays: {out}"
    );
    assert!(err.contains("ls<U+3164>"), "the decision line: {err}");
    assert_eq!(log.len(), 1, "{log:?}");
    let (ok, out, err) = warden(dir.path(), &["log"]);
    assert!(ok, "{err}");
    assert_clean("log", &out);
    assert!(out.contains("ls<U+3164><U+3164>"), "{out}");
    let (ok, out, err) = warden(dir.path(), &["log", "--json"]);
    assert!(ok, "{err}");
    assert_clean("log --json", &out);
    assert!(out.contains("\\u3164"), "{out}");
}

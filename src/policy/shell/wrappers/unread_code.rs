//! Code a command runs that warden cannot read: an interpreter's inline code
//! or standard input, a shell's `-c` script or standard input, `sed`'s and
//! `awk`'s commands, programs that run commands out of sight.

use super::*;

/// Interpreters, by file name without its version (`python3.12` is
/// `python`), and the options whose value is code to run.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("osascript", &["-e"]),
    ("Rscript", &["-e"]),
];

/// Whether `name` runs code warden cannot read: an interpreter given
/// inline code (`python3 -c ..`, `node -e ..`) or fed on standard input
/// with no script file, or an `awk` program that runs commands
/// (`system(..)`, a pipe, `getline` from a command) or comes from a file.
pub(super) fn runs_unread_code(
    name: &str,
    text: &str,
    spans: &[(usize, usize)],
    fed: bool,
) -> bool {
    let words: Vec<String> = spans.iter().map(|&(s, e)| unquote(&text[s..e])).collect();
    if matches!(name, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk") {
        let mut i = 0;
        while let Some(w) = words.get(i) {
            if w == "-f" || w.starts_with("--file") || w.starts_with("-f") && w.len() > 2 {
                return true;
            }
            if matches!(w.as_str(), "-F" | "-v" | "--assign" | "--field-separator") {
                i += 2;
            } else if w.starts_with('-') && w != "-" && w != "--" {
                i += 1;
            } else {
                break;
            }
        }
        let program = words.get(i + usize::from(words.get(i).is_some_and(|w| w == "--")));
        return program
            .is_none_or(|p| p.contains("system") || p.contains('|') || p.contains("getline"));
    }
    if matches!(name, "make" | "gmake" | "bmake") {
        // A makefile from standard input, or makefile text on the command
        // line (`--eval`): recipes warden cannot read.
        if words.iter().any(|w| w.starts_with("--eval")) {
            return true;
        }
        return words.windows(2).any(|w| {
            matches!(w[0].as_str(), "-f" | "--file" | "--makefile")
                && matches!(w[1].as_str(), "-" | "/dev/stdin")
        }) || words
            .iter()
            .any(|w| matches!(w.as_str(), "--file=-" | "-f-"));
    }
    if matches!(name, "vim" | "vi" | "nvim" | "ex" | "view" | "gvim") {
        // Ex commands from the command line can run anything (`:!rm`).
        return words
            .iter()
            .any(|w| matches!(w.as_str(), "-c" | "--cmd" | "-S" | "-s") || w.starts_with('+'));
    }
    if runs_commands_unseen(name, &words) {
        return true;
    }
    if matches!(name, "sed" | "gsed") {
        // A script from a file (`-f x.sed`, `--file=x.sed`, `-nf x.sed`)
        // may hold an `e` command too.
        let from_file = words.iter().any(|w| {
            w.starts_with("--file")
                || w.strip_prefix('-')
                    .filter(|f| !f.starts_with('-'))
                    .is_some_and(|f| short_flags(f).contains('f'))
        });
        return from_file || words.iter().any(|w| sed_executes(w));
    }
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let Some((_, inline)) = INTERPRETERS.iter().find(|(n, _)| *n == base) else {
        return false;
    };
    // The interpreter's own options end at the script, `-m MODULE` or `--`;
    // what follows is the script's (`python3 -m pytest -c x.cfg`).
    let own = words
        .iter()
        .take_while(|w| w.starts_with('-') && !matches!(w.as_str(), "-m" | "--" | "-"));
    // A short flag may come bundled with others (`perl -pe`, `perl -lne`,
    // `python3 -Ic`, `ruby -ne`): the letter anywhere among them counts.
    let has_inline = own.clone().any(|w| {
        inline.iter().any(|flag| {
            w == flag
                || (flag.len() == 2
                    && !w.starts_with("--")
                    && flag
                        .strip_prefix('-')
                        .is_some_and(|letter| short_flags(&w[1..]).contains(letter)))
        })
    }) || words.first().is_some_and(|w| inline.contains(&w.as_str()));
    let script = words
        .iter()
        .any(|w| !w.starts_with('-') && !w.starts_with('<') && !w.starts_with('>'));
    has_inline || (fed && !script)
}

/// Whether `name` given `words` runs a command that warden does not look
/// into: later (`at`, `crontab`), in another terminal (`tmux new`,
/// `screen`), in a container (`docker run`, `kubectl exec`), on a change
/// (`entr`, `watchexec`, `nodemon --exec`) or after setting variables
/// (`cross-env`, `dotenv`). Deny and ask command rules might match it.
fn runs_commands_unseen(name: &str, words: &[String]) -> bool {
    let any = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    match name {
        "at" | "batch" | "screen" | "entr" | "watchexec" | "cross-env" | "dotenv" | "dotenvx"
        | "env-cmd" | "concurrently" => true,
        "crontab" => !any(&["-l"]),
        "tmux" => any(&[
            "new",
            "new-session",
            "new-window",
            "neww",
            "split-window",
            "splitw",
            "send-keys",
            "send",
            "respawn-pane",
            "respawnp",
            "respawn-window",
            "respawnw",
            "run-shell",
            "run",
            "if-shell",
            "if",
            "display-popup",
            "popup",
            "pipe-pane",
            "pipep",
        ]),
        "docker" | "podman" | "nerdctl" => any(&["run", "exec", "create"]),
        "kubectl" | "oc" => any(&["exec", "run", "debug"]),
        "nodemon" => words.iter().any(|w| w == "-x" || w.starts_with("--exec")),
        _ => false,
    }
}

/// The bundled letters of a short option word without its `-` (`lne` of
/// `-lne`), up to the first that is no letter (`i` of `-i.bak`).
fn short_flags(word: &str) -> &str {
    let end = word
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(word.len());
    &word[..end]
}

/// The script of a shell given `-c` among its options (`-c`, `-lc`,
/// `-o pipefail -c`, `-c -- LINE`): `Some(Some(line))`; `Some(None)` when
/// `-c` has no operand; `None` without `-c`.
pub(super) fn shell_script(spans: &[(usize, usize)], text: &str) -> Option<Option<String>> {
    let mut dash_c = false;
    let mut i = 0;
    while let Some(&(s, e)) = spans.get(i) {
        let w = &text[s..e];
        i += 1;
        if w == "--" || w == "-" {
            break;
        }
        if matches!(w, "-o" | "+o" | "-O" | "+O") {
            i += 1;
            continue;
        }
        if w.starts_with("--") {
            continue;
        }
        if w.starts_with('-') || w.starts_with('+') {
            dash_c |= w.starts_with('-') && w.contains('c');
            continue;
        }
        i -= 1;
        break;
    }
    if !dash_c {
        return None;
    }
    Some(spans.get(i).map(|&(s, e)| unquote(&text[s..e])))
}

/// Whether a `sed` script may run a command: GNU sed's `e` command or the
/// `e` flag of `s` (an `e` after a line start, `;`, `}`, an address or the
/// closing `/` of `s///`, ending the command).
fn sed_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    chars.iter().enumerate().any(|(i, &c)| {
        if c != 'e' {
            return false;
        }
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let starts = before.is_none_or(|b| b.is_ascii_digit() || ";}\n$/ gpiImM".contains(b));
        let ends = after.is_none_or(|a| {
            a.is_whitespace() || ";}\n".contains(a) || "gpiImMw0123456789".contains(a)
        });
        starts && ends
    })
}

/// Whether a shell given these words (after its name) reads its commands
/// from standard input: no script file among its operands (`sh x.sh`), or
/// `-s` (the operands are then its arguments), and no input redirected
/// from a file (`sh < x.sh`).
pub(super) fn reads_stdin(spans: &[(usize, usize)], text: &str) -> bool {
    let mut i = 0;
    let mut dash_s = false;
    while let Some(&(s, e)) = spans.get(i) {
        let w = &text[s..e];
        i += 1;
        if w.starts_with("<(") {
            // A script from a process substitution.
            return false;
        }
        let op_len = w
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .chars()
            .take_while(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
            .count();
        let digits = w.len() - w.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if op_len > 0 && w[digits..].starts_with(['<', '>', '&']) {
            let op = &w[digits..digits + op_len];
            if op == "<" || op == "<&" || op == "<>" {
                // Standard input from a file.
                return false;
            }
            if digits + op_len == w.len() {
                // The target is the next word.
                i += 1;
            }
            continue;
        }
        if w == "--" {
            return dash_s || spans.len() == i;
        }
        if w.starts_with('-') || w.starts_with('+') {
            let flags = w.trim_start_matches(['-', '+']);
            if !w.starts_with("--") && flags.contains('s') {
                dash_s = true;
            }
            if matches!(w, "-o" | "+o" | "-O" | "+O") {
                i += 1;
            }
            continue;
        }
        // An operand: the script file, unless `-s` made it an argument.
        return dash_s;
    }
    true
}

//! Splitting a shell line into the simple commands it runs, for command globs.
//!
//! Not a shell parser: a scanner that errs on the side of finding too many
//! commands. It splits on `;`, `&&`, `||`, `|`, `|&`, `&`, newlines and
//! subshell parentheses outside quotes; it takes the insides of `$( .. )`,
//! `<( .. )`, `>( .. )` and backticks (also inside double quotes, where the
//! shell runs them too) as commands of their own, nested to any depth up to
//! [`MAX_DEPTH`]; single quotes, `$'..'` and backslashes protect what they
//! quote. `$(( .. ))` is scanned like `$( ( .. ) )`, since bash runs
//! `$((cmd) )` as a command: arithmetic becomes a command of its own, which
//! an allow rule would then have to cover too.
//!
//! Commands that run other commands are looked into for deny and ask rules:
//! `sudo rm -rf /` also yields `rm -rf /`, `env X=1 timeout 5 make` yields
//! `timeout 5 make` and `make`, and `sh -c '..'`, `bash -lc ".."` and `eval`
//! have their string scanned as a line of its own. Those commands are marked
//! `derived`: an allow rule must match the commands as written (so `sudo`
//! needs a rule of its own), while a deny rule matches any of them.
//!
//! Leading shell keywords (`if`, `then`, `do`, `!`, `{`, ...) are dropped
//! from a command, and pieces that are only a closing keyword (`fi`, `done`,
//! `}`) vanish. Comments, here-documents and `case` patterns are not
//! understood: their text becomes extra commands, which an allow rule must
//! then also cover (so the line asks) and a deny rule may match.

/// Substitutions nested deeper than this make the line opaque.
const MAX_DEPTH: usize = 32;

/// What a shell line runs, as far as the scanner can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ShellLine {
    /// Every simple command: the outer ones, then those inside substitutions.
    pub(crate) commands: Vec<Command>,
    /// An output redirection to a file (not `/dev/null` or another descriptor):
    /// a write no command glob can see.
    pub(crate) writes_file: bool,
    /// Nesting went past [`MAX_DEPTH`]: some commands were not looked at.
    pub(crate) opaque: bool,
}

/// One simple command of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The command as written, trimmed, leading shell keywords dropped.
    pub(crate) text: String,
    /// The same without its leading `VAR=value` assignments, when it had some.
    pub(crate) bare: Option<String>,
    /// Not written as a command of the line: what a wrapper (`sudo`, `env`,
    /// `sh -c`, ...) runs. Deny and ask rules see it; allow rules do not.
    pub(crate) derived: bool,
}

/// Split a shell line.
pub(crate) fn parse(line: &str) -> ShellLine {
    parse_at(line, 0)
}

fn parse_at(line: &str, depth: usize) -> ShellLine {
    let mut scanner = Scanner {
        chars: line.chars().collect(),
        pos: 0,
        pieces: Vec::new(),
        line: ShellLine::default(),
    };
    scanner.list(Stop::End, 0, depth);
    let mut out = scanner.line;
    scanner.pieces.sort_by_key(|&(level, _)| level);
    let mut commands: Vec<Command> = scanner
        .pieces
        .iter()
        .filter_map(|(_, piece)| command(piece))
        .collect();
    commands.append(&mut out.commands);
    // What wrappers run, as commands of their own.
    let mut derived = Vec::new();
    for command in &commands {
        unwrap(&command.text, depth, &mut derived, &mut out.opaque);
    }
    commands.append(&mut derived);
    out.commands = commands;
    out
}

/// Programs that run the rest of their arguments as a command, with their
/// options that take a separate value.
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &[
            "-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U", "-T", "-R",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("env", &["-u", "-C", "--unset", "--chdir"]),
    ("nice", &["-n", "--adjustment"]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("exec", &["-a"]),
    ("command", &[]),
    ("builtin", &[]),
    ("xargs", &["-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"]),
    ("setsid", &[]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("watch", &["-n", "-d"]),
];

/// Wrappers that take one positional argument before the command.
const ONE_ARG: &[&str] = &["timeout"];

/// Shells whose `-c` option takes a command string.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// The commands `text` runs through a wrapper, appended to `out` (each
/// also unwrapped in turn, as deep as [`MAX_DEPTH`]).
fn unwrap(text: &str, depth: usize, out: &mut Vec<Command>, opaque: &mut bool) {
    if depth > MAX_DEPTH {
        *opaque = true;
        return;
    }
    let spans = words(text);
    let word = |i: usize| spans.get(i).map(|&(s, e)| &text[s..e]);
    // Past `VAR=value` words, the program.
    let Some(at) = (0..spans.len()).find(|&i| word(i).is_some_and(|w| !is_assignment(w))) else {
        return;
    };
    let Some(program) = word(at).map(unquote) else {
        return;
    };
    let name = program.rsplit('/').next().unwrap_or(&program);
    if SHELLS.contains(&name) || name == "eval" {
        let script = if name == "eval" {
            spans.get(at + 1).map(|&(s, _)| unquote_words(&text[s..]))
        } else {
            // `-c`, `-lc`, `-ec`, ...: the next word is the script.
            (at + 1..spans.len())
                .take_while(|&i| word(i).is_some_and(|w| w.starts_with('-')))
                .find(|&i| word(i).is_some_and(|w| !w.starts_with("--") && w.contains('c')))
                .and_then(|i| word(i + 1))
                .map(unquote)
        };
        if let Some(script) = script {
            let inner = parse_at(&script, depth + 1);
            *opaque |= inner.opaque;
            out.extend(
                inner
                    .commands
                    .into_iter()
                    .map(|c| Command { derived: true, ..c }),
            );
        }
        return;
    }
    let Some((_, takes_value)) = WRAPPERS.iter().find(|(w, _)| *w == name) else {
        return;
    };
    let mut i = at + 1;
    while let Some(w) = word(i) {
        if w == "--" {
            i += 1;
            break;
        }
        if name == "env" && is_assignment(w) {
            i += 1;
            continue;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        i += if takes_value.contains(&w) { 2 } else { 1 };
    }
    if ONE_ARG.contains(&name) {
        i += 1;
    }
    let Some(&(start, _)) = spans.get(i) else {
        return;
    };
    let inner = text[start..].to_string();
    let bare = {
        let rest = words(&inner);
        let assignments = rest
            .iter()
            .take_while(|&&(s, e)| is_assignment(&inner[s..e]))
            .count();
        rest.get(assignments)
            .filter(|_| assignments > 0)
            .map(|&(s, _)| inner[s..].to_string())
    };
    out.push(Command {
        text: inner.clone(),
        bare,
        derived: true,
    });
    unwrap(&inner, depth + 1, out, opaque);
}

/// A word as the shell passes it on: quotes removed, escapes resolved.
fn unquote(word: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\\') => out.extend(chars.next()),
            (None, '$') if chars.peek() == Some(&'\'') => {
                chars.next();
                quote = Some('$');
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some('\''), '\'') | (Some('"'), '"') | (Some('$'), '\'') => quote = None,
            (Some('"'), '\\') => match chars.peek() {
                Some('"' | '\\' | '$' | '`') => out.extend(chars.next()),
                _ => out.push('\\'),
            },
            (Some('$'), '\\') => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (_, c) => out.push(c),
        }
    }
    out
}

/// `eval`'s arguments, each unquoted, joined by spaces.
fn unquote_words(text: &str) -> String {
    words(text)
        .iter()
        .map(|&(s, e)| unquote(&text[s..e]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a command list ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// At the end of the input (the whole line).
    End,
    /// At the `)` that closes a substitution.
    Paren,
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    /// Raw pieces of this scanner's own text, with their nesting level.
    pieces: Vec<(usize, String)>,
    /// Flags, and the commands of backtick substitutions (parsed separately).
    line: ShellLine,
}

impl Scanner {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// Scan a command list from `pos`, until the input ends or (for
    /// `Stop::Paren`) the unmatched `)`, which is consumed. `parens` counts
    /// subshell parentheses already open.
    fn list(&mut self, stop: Stop, mut parens: usize, depth: usize) {
        if depth > MAX_DEPTH {
            self.line.opaque = true;
            self.pos = self.chars.len();
            return;
        }
        let mut start = self.pos;
        while let Some(c) = self.peek(0) {
            let next = self.peek(1);
            match c {
                '\\' => self.pos += 2,
                '\'' => self.single_quoted(),
                '$' if next == Some('\'') => self.ansi_quoted(),
                '"' => self.double_quoted(depth),
                '`' => self.backticks(depth),
                '$' | '<' | '>' if next == Some('(') => {
                    self.pos += 2;
                    self.list(Stop::Paren, 0, depth + 1);
                }
                '>' => self.redirect(1),
                '&' if next == Some('>') => self.redirect(2),
                ';' | '\n' | '&' | '|' | '(' | ')' => {
                    self.cut(start, depth);
                    let width = match (c, next) {
                        ('&', Some('&')) | ('|', Some('|' | '&')) => 2,
                        _ => 1,
                    };
                    self.pos += width;
                    start = self.pos;
                    if c == '(' {
                        parens += 1;
                    } else if c == ')' {
                        if parens > 0 {
                            parens -= 1;
                        } else if stop == Stop::Paren {
                            return;
                        }
                    }
                }
                _ => self.pos += 1,
            }
        }
        self.cut(start, depth);
    }

    /// End the current piece at `pos`.
    fn cut(&mut self, start: usize, depth: usize) {
        let end = self.pos.min(self.chars.len());
        if start < end {
            let piece: String = self.chars[start..end].iter().collect();
            let piece = piece.trim();
            if !piece.is_empty() {
                self.pieces.push((depth, piece.to_string()));
            }
        }
    }

    fn single_quoted(&mut self) {
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
        }
    }

    /// At `$'`: bash's ANSI-C quoting, where a backslash escapes a `'`.
    fn ansi_quoted(&mut self) {
        self.pos += 2;
        while let Some(c) = self.peek(0) {
            self.pos += if c == '\\' { 2 } else { 1 };
            if c == '\'' {
                return;
            }
        }
    }

    fn double_quoted(&mut self, depth: usize) {
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.pos += 2,
                '"' => {
                    self.pos += 1;
                    return;
                }
                '`' => self.backticks(depth),
                '$' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    self.list(Stop::Paren, 0, depth + 1);
                }
                _ => self.pos += 1,
            }
        }
    }

    /// At a backtick: the text up to the closing one, unescaped, is a line of its own.
    fn backticks(&mut self, depth: usize) {
        self.pos += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => match self.peek(0) {
                    Some(e @ ('`' | '\\' | '$')) => {
                        inner.push(e);
                        self.pos += 1;
                    }
                    _ => inner.push('\\'),
                },
                c => inner.push(c),
            }
        }
        if depth + 1 > MAX_DEPTH {
            self.line.opaque = true;
            return;
        }
        let sub = parse_at(&inner, depth + 1);
        self.line.commands.extend(sub.commands);
        self.line.writes_file |= sub.writes_file;
        self.line.opaque |= sub.opaque;
    }

    /// At an output redirection (`>`, `>>`, `>|`, `>&`, `&>`, `&>>`, with the
    /// operator `width` characters long so far). The target is only peeked at:
    /// the scan goes on over it (it may hold a substitution).
    fn redirect(&mut self, width: usize) {
        self.pos += width;
        if matches!(self.peek(0), Some('>' | '|')) {
            self.pos += 1;
        }
        let dup = width == 1 && self.peek(0) == Some('&');
        if dup {
            self.pos += 1;
        }
        let target = self.word_at(self.pos);
        let harmless = matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
            || (dup
                && (target == "-"
                    || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))));
        if !harmless {
            self.line.writes_file = true;
        }
    }

    /// The word starting at `from` (after blanks), quotes removed.
    fn word_at(&self, from: usize) -> String {
        let mut word = String::new();
        let mut quote = None;
        for &c in self.chars.iter().skip(from) {
            match (quote, c) {
                (None, ' ' | '\t') if word.is_empty() => {}
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
                (_, c) => word.push(c),
            }
        }
        word
    }
}

/// Keywords that may stand before a command.
const OPENERS: &[&str] = &[
    "if", "then", "elif", "else", "do", "while", "until", "time", "!", "{",
];
/// Keywords that close a compound command.
const CLOSERS: &[&str] = &["fi", "done", "esac", "}"];

fn command(piece: &str) -> Option<Command> {
    let spans = words(piece);
    let first = spans
        .iter()
        .position(|&(s, e)| !OPENERS.contains(&&piece[s..e]) && !CLOSERS.contains(&&piece[s..e]))?;
    let text = &piece[spans[first].0..];
    let assignments = spans[first..]
        .iter()
        .take_while(|&&(s, e)| is_assignment(&piece[s..e]))
        .count();
    let bare = spans
        .get(first + assignments)
        .filter(|_| assignments > 0)
        .map(|&(s, _)| piece[s..].to_string());
    Some(Command {
        text: text.to_string(),
        bare,
        derived: false,
    })
}

/// `NAME=...` or `NAME+=...`.
pub(crate) fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Byte spans of the blank-separated words of `text`, quotes respected.
pub(crate) fn words(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    // `'`, `"`, or `$` for `$'..'`.
    let mut quote = None;
    let mut escaped = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\'' | '$'), '\'') | (Some('"'), '"') => quote = None,
            (Some('"' | '$') | None, '\\') => {
                escaped = true;
                start.get_or_insert(i);
            }
            (Some(_), _) => {}
            (None, '$') if chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                chars.next();
                quote = Some('$');
                start.get_or_insert(i);
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                start.get_or_insert(i);
            }
            (None, c) if c.is_whitespace() => {
                if let Some(s) = start.take() {
                    spans.push((s, i));
                }
            }
            (None, _) => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn texts(line: &str) -> Vec<String> {
        parse(line).commands.into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn splits_on_operators() {
        assert_eq!(
            texts("cargo test && cargo fmt"),
            ["cargo test", "cargo fmt"]
        );
        assert_eq!(texts("cargo test; rm -rf ~"), ["cargo test", "rm -rf ~"]);
        assert_eq!(
            texts("a || b | c |& d & e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(texts("  ;; a ;  "), ["a"]);
        assert_eq!(texts("(cd x && rm -rf y)"), ["cd x", "rm -rf y"]);
    }

    #[test]
    fn quotes_protect_separators() {
        assert_eq!(
            texts("git commit -m 'a; b && c'"),
            ["git commit -m 'a; b && c'"]
        );
        assert_eq!(texts("echo \"x | y\"; ls"), ["echo \"x | y\"", "ls"]);
        assert_eq!(texts("echo a\\;b"), ["echo a\\;b"]);
        assert_eq!(texts("echo 'it\"s'; ls"), ["echo 'it\"s'", "ls"]);
        assert_eq!(
            texts(r"cargo test $'\'' ; rm -rf ~ #'"),
            [r"cargo test $'\''", "rm -rf ~ #'"]
        );
        assert_eq!(texts("echo $'a;b'; ls"), ["echo $'a;b'", "ls"]);
    }

    #[test]
    fn substitutions_are_commands_too() {
        assert_eq!(texts("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
        assert_eq!(texts("echo `rm -rf /`"), ["echo `rm -rf /`", "rm -rf /"]);
        assert_eq!(
            texts("echo \"$(rm -rf /)\""),
            ["echo \"$(rm -rf /)\"", "rm -rf /"]
        );
        assert_eq!(texts("echo '$(rm -rf /)'"), ["echo '$(rm -rf /)'"]);
        assert_eq!(
            texts("a $(b $(c; d) e) f"),
            ["a $(b $(c; d) e) f", "b $(c; d) e", "c", "d"]
        );
        assert_eq!(
            texts("echo `a \\`b\\``"),
            ["echo `a \\`b\\``", "a `b`", "b"]
        );
        assert_eq!(
            texts("diff <(ls a) >(tee b)"),
            ["diff <(ls a) >(tee b)", "ls a", "tee b"]
        );
        assert_eq!(
            texts("echo $(( 1 + $(wc -l) ))"),
            ["echo $(( 1 + $(wc -l) ))", "1 + $(wc -l)", "wc -l"]
        );
        assert_eq!(
            texts("echo $((rm -rf ~) )"),
            ["echo $((rm -rf ~) )", "rm -rf ~"]
        );
        assert_eq!(
            texts("echo $( (a) ; b ) c"),
            ["echo $( (a) ; b ) c", "a", "b"]
        );
    }

    #[test]
    fn keywords_and_assignments() {
        assert_eq!(
            texts("if cargo test; then echo ok; fi"),
            ["cargo test", "echo ok"]
        );
        assert_eq!(texts("for f in *; do rm $f; done"), ["for f in *", "rm $f"]);
        assert_eq!(texts("{ ls; }"), ["ls"]);
        let line = parse("FOO='a b' BAR=1 cargo test");
        assert_eq!(
            line.commands,
            [Command {
                text: "FOO='a b' BAR=1 cargo test".into(),
                bare: Some("cargo test".into()),
                derived: false,
            }]
        );
        assert_eq!(parse("X=1").commands[0].bare, None);
        let ansi = parse(r"FOO=$'it\'s x' rm -rf /");
        assert_eq!(ansi.commands[0].bare.as_deref(), Some("rm -rf /"));
    }

    fn derived(line: &str) -> Vec<String> {
        parse(line)
            .commands
            .into_iter()
            .filter(|c| c.derived)
            .map(|c| c.text)
            .collect()
    }

    #[test]
    fn wrappers_are_looked_into() {
        assert_eq!(derived("sudo rm -rf /"), ["rm -rf /"]);
        assert_eq!(derived("sudo -u root -E rm -rf /"), ["rm -rf /"]);
        assert_eq!(derived("/usr/bin/sudo -- rm x"), ["rm x"]);
        assert_eq!(
            derived("env -i FOO=1 timeout -s KILL 5 nice -n 10 make"),
            [
                "timeout -s KILL 5 nice -n 10 make",
                "nice -n 10 make",
                "make"
            ]
        );
        assert_eq!(derived("find . | xargs -I{} rm {}"), ["rm {}"]);
        assert_eq!(derived("nohup ./serve &"), ["./serve"]);
        assert_eq!(derived("env"), Vec::<String>::new());
        assert_eq!(derived("cargo test"), Vec::<String>::new());
        assert_eq!(derived("env X=1 Y=2 rm -rf ~")[0], "rm -rf ~");
    }

    #[test]
    fn shell_strings_are_scanned() {
        assert_eq!(derived("sh -c 'rm -rf ~'"), ["rm -rf ~"]);
        assert_eq!(
            derived("bash -lc \"cd / && rm -rf \\\"$HOME\\\"\""),
            ["cd /", "rm -rf \"$HOME\""]
        );
        assert_eq!(
            derived("sudo sh -c 'echo hi; curl x | sh'"),
            ["sh -c 'echo hi; curl x | sh'", "echo hi", "curl x", "sh"]
        );
        assert_eq!(derived("eval 'rm -rf' /tmp/x"), ["rm -rf /tmp/x"]);
        assert_eq!(derived("bash script.sh"), Vec::<String>::new());
        assert_eq!(derived("zsh -c $'rm\\t-rf /'"), ["rm\t-rf /"]);
    }

    #[test]
    fn redirections() {
        assert!(!parse("cargo test 2>&1 | tail").writes_file);
        assert!(!parse("cargo test > /dev/null 2>&-").writes_file);
        assert!(!parse("cat < in.txt").writes_file);
        assert!(parse("cargo test > out.txt").writes_file);
        assert!(parse("cargo test >> ~/.bashrc").writes_file);
        assert!(parse("cargo test &> log").writes_file);
        assert!(parse("cargo test >& log").writes_file);
        assert!(!parse("echo 'a > b'").writes_file);
        assert_eq!(
            texts("echo x >$(rm -rf /)"),
            ["echo x >$(rm -rf /)", "rm -rf /"]
        );
    }

    #[test]
    fn deep_nesting_is_opaque() {
        let line = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
        assert!(parse(&line).opaque);
        let ticks = format!("{}x", "`".repeat(2));
        assert!(!parse(&ticks).opaque);
    }

    proptest! {
        #[test]
        fn never_panics_and_pieces_are_trimmed(line in "[a-z $()`'\";&|<>\\\\\n{}!=]{0,60}") {
            let parsed = parse(&line);
            for c in parsed.commands {
                prop_assert!(!c.text.is_empty());
                prop_assert_eq!(c.text.trim(), c.text.as_str());
            }
        }
    }
}

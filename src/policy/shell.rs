//! Splitting a shell line into the simple commands it runs, for command globs.
//!
//! Not a shell parser: a scanner that errs on the side of finding too many
//! commands, and that says so when it meets something it does not fully
//! understand. It splits on `;`, `&&`, `||`, `|`, `|&`, `&`, newlines and
//! subshell parentheses outside quotes; it takes the insides of `$( .. )`,
//! `<( .. )`, `>( .. )` and backticks (also inside double quotes, parameter
//! expansions and here-documents, where the shell runs them too) as commands
//! of their own, nested to any depth up to [`MAX_DEPTH`]; single quotes,
//! `$'..'` and backslashes protect what they quote. A `#` at the start of a
//! word outside quotes starts a comment up to the end of the line, and the
//! body of a here-document is skipped (its substitutions scanned when the
//! delimiter is unquoted).
//!
//! The line is [`ShellLine::opaque`] (no allow rule matches it, and deny and
//! ask rules count it as running an unknown command) when it holds what the
//! scanner cannot follow: a parameter expansion other than `${NAME}`
//! (operators, subscripts and slices evaluate arithmetic, which can run
//! commands through an array subscript), arithmetic (`$(( ))`, `(( ))`,
//! `$[ ]`) other than plain numbers, `let`, `case`, `function`, `[[ ]]`
//! with arithmetic or `-v`, builtins given a subscript, an unterminated
//! quote, substitution or here-document, nesting past [`MAX_DEPTH`], or a
//! line longer than [`MAX_LINE`].
//!
//! Commands that run other commands are looked into for deny and ask rules:
//! `sudo rm -rf /` also yields `rm -rf /`, `env X=1 timeout 5 make` yields
//! `timeout 5 make` and `make`, `find . -exec rm {} ;` yields `rm {}`, and
//! `sh -c '..'`, `bash -lc ".."`, `env -S '..'`, `su -c '..'`, `eval`,
//! `trap` and `watch` have their string scanned as a line of its own (see
//! `shell/wrappers.rs`). Those commands are marked `derived`: an allow rule must
//! match the commands as written (so `sudo` needs a rule of its own), while a
//! deny rule matches any of them. A shell that reads its commands from a
//! file or standard input (`bash x.sh`, `| sh`, `source x`) runs commands
//! nobody can read: it yields an [`Command::unknown`] command.
//!
//! Each command also has a [`Command::plain`] form, the words as the shell
//! passes them on (quotes and escapes resolved, `$IFS` read as a blank, the
//! program's directory dropped), so that a deny rule `rm *` also sees `\rm`,
//! `"rm"`, `r''m`, `/bin/rm` and `rm${IFS}-rf`. A program name the shell
//! only learns at run time (`$X`, `$(..)`, backticks, globs, brace
//! expansion, `$'\x72m'`) makes the command unknown.
//!
//! Leading shell keywords (`if`, `then`, `do`, `!`, `{`, ...) are dropped
//! from a command, and pieces that are only a closing keyword (`fi`, `done`,
//! `}`) vanish.

/// Substitutions nested deeper than this make the line opaque.
const MAX_DEPTH: usize = 32;

mod scanner;
mod wrappers;

use scanner::parse_at;
pub(crate) use wrappers::unquote;
pub(crate) use wrappers::{runs_other_programs, runs_through};

/// What a shell line runs, as far as the scanner can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ShellLine {
    /// Every simple command: the outer ones, then those inside substitutions.
    pub(crate) commands: Vec<Command>,
    /// An output redirection to a file (not `/dev/null` or another descriptor):
    /// a write no command glob can see.
    pub(crate) writes_file: bool,
    /// The line holds something the scanner does not fully understand (see
    /// the module docs): it may run commands that are not in `commands`.
    pub(crate) opaque: bool,
}

impl ShellLine {
    /// Whether the line may run a command nobody can read before it runs:
    /// the line is opaque, or a command's program is only known at run time.
    pub(crate) fn unknown(&self) -> bool {
        self.opaque || self.commands.iter().any(|c| c.unknown)
    }

    /// Whether a command of the line runs code warden cannot read (see
    /// [`Command::code`]): any deny or ask command rule might match it.
    pub(crate) fn runs_code(&self) -> bool {
        self.commands.iter().any(|c| c.code)
    }

    /// The first variable assigned anywhere in the line (`PATH=x cargo`,
    /// `export LD_PRELOAD=..`, `env BASH_ENV=..`) that changes which program
    /// or code runs (see [`hijacks_program`]).
    pub(crate) fn hijacking_assignment(&self) -> Option<String> {
        self.commands.iter().find_map(|c| {
            let spans = words(&c.text);
            spans.iter().find_map(|&(s, e)| {
                let word = &c.text[s..e];
                let name = assignment_name(word)?;
                hijacks_program(name).then(|| name.to_string())
            })
        })
    }
}

/// What a command reads on its standard input, as far as the line says
/// (a here-document, a here-string, `echo ... |`): a shell fed it runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stdin {
    /// The text, as the command reads it.
    pub(crate) text: String,
    /// `false`: the text expands something first (`$X`, `$(..)`), so what
    /// is read is only known when it runs.
    pub(crate) exact: bool,
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
    /// The program is only known at run time (`$X`, `$(..)`, a glob, a
    /// script read from a file or stdin): no allow rule covers the command,
    /// and every deny and ask command rule might.
    pub(crate) unknown: bool,
    /// The command as the shell runs it, for deny and ask rules: without
    /// assignments, words unquoted and joined by one space, `$IFS` read as a
    /// blank, the program without its directory (`/bin/r''m -rf x` is
    /// `rm -rf x`). `None` when there is no program or it is unknown.
    pub(crate) plain: Option<String>,
    /// It runs code warden cannot read (`python3 -c ..`, `node -e ..`, an
    /// `awk` program calling `system`): deny and ask command rules might
    /// match what it runs; an allow rule as written still covers it.
    pub(crate) code: bool,
}

impl Command {
    /// A command with `text` as written; the rest is worked out from it.
    fn new(text: &str, derived: bool) -> Command {
        let spans = words(text);
        let assignments = spans
            .iter()
            .take_while(|&&(s, e)| is_assignment(&text[s..e]))
            .count();
        let bare = spans
            .get(assignments)
            .filter(|_| assignments > 0)
            .map(|&(s, _)| text[s..].to_string());
        let (unknown, plain) = plain_form(text);
        Command {
            text: text.to_string(),
            bare,
            derived,
            unknown,
            plain,
            code: false,
        }
    }

    /// The same command, marked as one a wrapper runs.
    fn derive(self) -> Command {
        Command {
            derived: true,
            ..self
        }
    }

    /// The program's plain name (`rm` for `/bin/r\m -rf x`), when known.
    pub(crate) fn program(&self) -> Option<&str> {
        let plain = self.plain.as_deref()?;
        Some(plain.split(' ').next().unwrap_or(plain))
    }
}

/// Whether `command` is unknown, and its plain form (see [`Command::plain`]).
fn plain_form(command: &str) -> (bool, Option<String>) {
    // A backslash-newline joins lines: `r\<newline>m` is `rm`.
    let text = split_ifs(&command.replace("\\\n", ""));
    let spans = words(&text);
    let Some(at) = spans.iter().position(|&(s, e)| !is_assignment(&text[s..e])) else {
        return (false, None);
    };
    let (s, e) = spans[at];
    let program = &text[s..e];
    let name = unquote(program);
    let name = name.rsplit('/').next().unwrap_or(&name).to_string();
    let keyword = matches!(program, "[[" | "[");
    if !(keyword || is_static(program)) || name.is_empty() {
        return (true, None);
    }
    let mut plain = vec![name];
    plain.extend(spans[at + 1..].iter().map(|&(s, e)| unquote(&text[s..e])));
    (false, Some(plain.join(" ")))
}

/// `$IFS` and `${IFS}` outside single quotes replaced by a blank, as the
/// shell's word splitting reads them (with the default `IFS`).
fn split_ifs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if let Some(tail) = after.strip_prefix("${IFS}") {
            out.push(' ');
            rest = tail;
        } else if let Some(tail) = after
            .strip_prefix("$IFS")
            .filter(|t| !t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        {
            out.push(' ');
            rest = tail;
        } else {
            out.push('$');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether a word means the same text whatever the environment: no
/// expansion (`$`, backticks), no glob (`*`, `?`, `[`), no brace expansion,
/// no `$'..'` escape beyond the simple ones, every quote closed.
pub(crate) fn is_static(word: &str) -> bool {
    let mut quote = None;
    let mut brace = false;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\\') | (Some('"'), '\\') => {
                chars.next();
            }
            (None, '$') if chars.peek() == Some(&'\'') => {
                chars.next();
                quote = Some('$');
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some('\''), '\'') | (Some('"'), '"') | (Some('$'), '\'') => quote = None,
            (Some('$'), '\\') => {
                // `\x72`, `\u..`, `\0..`, `\c.`: a character chosen by number.
                let escape = chars.next();
                if !matches!(escape, Some('\\' | '\'' | '"' | 'n' | 't')) {
                    return false;
                }
            }
            (None | Some('"'), '$' | '`') => return false,
            (None, '*' | '?' | '[') => return false,
            (None, '{') => brace = true,
            (None, ',') if brace => return false,
            (None, '.') if brace && chars.peek() == Some(&'.') => return false,
            _ => {}
        }
    }
    quote.is_none()
}

/// Split a shell line.
pub(crate) fn parse(line: &str) -> ShellLine {
    if line.len() > MAX_LINE {
        // Too long to read on the event loop: nobody can say what it runs.
        return ShellLine {
            opaque: true,
            ..ShellLine::default()
        };
    }
    parse_at(line, 0)
}

/// The longest line (bytes) the scanner reads; a longer one is opaque.
const MAX_LINE: usize = 32 * 1024;

/// Builtins that evaluate arithmetic or array subscripts in their
/// arguments: `declare -a x; read 'x[$(rm -rf ~)]'` runs `rm`.
const SUBSCRIPT_BUILTINS: &[&str] = &[
    "declare",
    "typeset",
    "local",
    "readonly",
    "export",
    "unset",
    "printf",
    "read",
    "mapfile",
    "readarray",
    "test",
    "[",
];

/// A command the scanner cannot follow (see the module docs).
fn not_understood(command: &Command) -> bool {
    let Some(plain) = command.plain.as_deref() else {
        return false;
    };
    let words: Vec<&str> = plain.split(' ').collect();
    let args = &words[1..];
    match words[0] {
        // `alias`: a later word may be a name that stands for anything.
        "let" | "case" | "function" | "select" | "coproc" | "alias" => true,
        "[[" => args.iter().any(|w| {
            matches!(
                *w,
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" | "-R"
            )
        }),
        name if SUBSCRIPT_BUILTINS.contains(&name) => {
            let declares = matches!(
                name,
                "declare" | "typeset" | "local" | "readonly" | "export"
            );
            args.iter().any(|w| {
                w.contains('[')
                    || w.contains("-v")
                    || (declares && w.starts_with(['-', '+']) && w.contains(['i', 'n']))
            })
        }
        _ => false,
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
    Some(Command::new(&piece[spans[first].0..], false))
}

/// `NAME=...` or `NAME+=...`.
pub(crate) fn is_assignment(word: &str) -> bool {
    assignment_name(word).is_some()
}

/// The variable `NAME=...` or `NAME+=...` assigns.
fn assignment_name(word: &str) -> Option<&str> {
    let eq = word.find('=')?;
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// Variables that decide which program or code a command runs, so that no
/// allow rule may cover a command that sets them (in its environment or on
/// its line): the search paths (`PATH`, `CDPATH`), the dynamic loader
/// (`LD_*`, `DYLD_*`, `GCONV_PATH`, `GLIBC_TUNABLES`), shell startup and
/// parsing (`BASH_ENV`, `ENV`, `BASH_FUNC_*`, `PROMPT_COMMAND`, `SHELLOPTS`,
/// `BASHOPTS`, `PS4`, `IFS`, `GLOBIGNORE`, `ZDOTDIR`, `SHELL`), where tools
/// read their configuration (`HOME`, `XDG_*`), and the hooks of interpreters
/// and build tools (`PERL5OPT`, `PERL5LIB`, `PYTHONSTARTUP`, `PYTHONPATH`,
/// `PYTHONHOME`, `RUBYOPT`, `RUBYLIB`, `NODE_OPTIONS`, `NODE_PATH`,
/// `RUSTC*`, `RUSTFLAGS`, `RUSTDOC*`, `CARGO_*`, `GIT_*`, `GOFLAGS`,
/// `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`, `CLASSPATH`,
/// `MAVEN_OPTS`, `GRADLE_OPTS`, `NPM_CONFIG_*`, `CC`, `CXX`, `LESSOPEN`,
/// `EDITOR`, `VISUAL`, `PAGER`, `*_ASKPASS`, ...). Names are compared
/// case-insensitively (npm also reads `npm_config_*`).
pub(crate) fn hijacks_program(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "PATH",
        "CDPATH",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "NLSPATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "IFS",
        "GLOBIGNORE",
        "ZDOTDIR",
        "SHELL",
        "HOME",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONUSERBASE",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUSTFLAGS",
        "GOFLAGS",
        "GOROOT",
        "GOPATH",
        "GOTOOLCHAIN",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "CC",
        "CXX",
        "LD",
        "AR",
        "MAKEFLAGS",
        "LESSOPEN",
        "LESSCLOSE",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "LUA_INIT",
        "LUA_PATH",
        "LUA_CPATH",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "GEM_HOME",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
    ];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "BASH_FUNC_",
        "XDG_",
        "RUSTC",
        "RUSTDOC",
        "CARGO_",
        "GIT_",
        "NPM_CONFIG_",
        "YARN_",
        "PIP_",
        "UV_",
        "DOTNET_",
        "PYTHON",
    ];
    let upper = name.to_ascii_uppercase();
    NAMES.contains(&upper.as_str())
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || upper.ends_with("_ASKPASS")
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
#[path = "shell_tests.rs"]
mod shell_tests;

#[cfg(test)]
#[path = "shell_unit_tests.rs"]
mod tests;

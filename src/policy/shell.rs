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
//! quote, substitution or here-document, or nesting past [`MAX_DEPTH`].
//!
//! Commands that run other commands are looked into for deny and ask rules:
//! `sudo rm -rf /` also yields `rm -rf /`, `env X=1 timeout 5 make` yields
//! `timeout 5 make` and `make`, `find . -exec rm {} ;` yields `rm {}`, and
//! `sh -c '..'`, `bash -lc ".."`, `env -S '..'`, `su -c '..'`, `eval`,
//! `trap` and `watch` have their string scanned as a line of its own (see
//! [`WRAPPERS`]). Those commands are marked `derived`: an allow rule must
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
fn is_static(word: &str) -> bool {
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
    parse_at(line, 0)
}

fn parse_at(line: &str, depth: usize) -> ShellLine {
    let mut scanner = Scanner {
        chars: line.chars().collect(),
        pos: 0,
        pieces: Vec::new(),
        heredocs: Vec::new(),
        escaped_until: usize::MAX,
        line: ShellLine::default(),
    };
    scanner.list(Stop::End, 0, depth);
    if !scanner.heredocs.is_empty() {
        // A here-document whose body never came.
        scanner.line.opaque = true;
    }
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
    out.opaque |= commands.iter().any(not_understood);
    out.commands = commands;
    out
}

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
        "let" | "case" | "function" | "select" | "coproc" => true,
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

/// A program that runs a command given in its arguments.
struct Wrapper {
    /// The program's name (without directory).
    name: &'static str,
    /// A subcommand that must follow (`uv run`), if any.
    sub: Option<&'static str>,
    /// Options that take a separate value (`-u USER`).
    values: &'static [&'static str],
    /// Positional arguments before the command (`timeout 5 CMD`).
    positional: usize,
    /// Options whose value is a shell line (`su -c LINE`).
    script: &'static [&'static str],
    /// Whether the arguments after the options are a command (`su USER`
    /// only opens a shell).
    runs_rest: bool,
}

const fn wrapper(
    name: &'static str,
    values: &'static [&'static str],
    positional: usize,
) -> Wrapper {
    Wrapper {
        name,
        sub: None,
        values,
        positional,
        script: &[],
        runs_rest: true,
    }
}

const fn scripted(
    name: &'static str,
    values: &'static [&'static str],
    positional: usize,
    script: &'static [&'static str],
    runs_rest: bool,
) -> Wrapper {
    Wrapper {
        name,
        sub: None,
        values,
        positional,
        script,
        runs_rest,
    }
}

const fn subcommand(
    name: &'static str,
    sub: &'static str,
    values: &'static [&'static str],
) -> Wrapper {
    Wrapper {
        name,
        sub: Some(sub),
        values,
        positional: 0,
        script: &[],
        runs_rest: true,
    }
}

/// Programs that run the rest of their arguments as a command.
const WRAPPERS: &[Wrapper] = &[
    wrapper(
        "sudo",
        &[
            "-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U", "-T", "-R",
        ],
        0,
    ),
    wrapper("doas", &["-u", "-C"], 0),
    wrapper(
        "run0",
        &["-u", "--user", "-D", "--chdir", "-g", "--group"],
        0,
    ),
    wrapper("pkexec", &["--user"], 0),
    scripted(
        "env",
        &["-u", "-C", "-P", "--unset", "--chdir"],
        0,
        &["-S", "--split-string"],
        true,
    ),
    wrapper("nice", &["-n", "--adjustment"], 0),
    wrapper("nohup", &[], 0),
    wrapper("time", &["-f", "-o"], 0),
    wrapper("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    wrapper("exec", &["-a"], 0),
    wrapper("command", &[], 0),
    wrapper("builtin", &[], 0),
    wrapper(
        "xargs",
        &[
            "-I",
            "-n",
            "-P",
            "-d",
            "-L",
            "-s",
            "-a",
            "-E",
            "--arg-file",
            "--delimiter",
        ],
        0,
    ),
    wrapper("setsid", &[], 0),
    wrapper("stdbuf", &["-i", "-o", "-e"], 0),
    wrapper("ionice", &["-c", "-n", "-p"], 0),
    scripted(
        "flock",
        &["-w", "--timeout", "-E", "--conflict-exit-code"],
        1,
        &["-c", "--command"],
        true,
    ),
    wrapper(
        "unshare",
        &[
            "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd",
        ],
        0,
    ),
    wrapper(
        "strace",
        &[
            "-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X", "-U",
        ],
        0,
    ),
    wrapper(
        "ltrace",
        &[
            "-a", "-A", "-D", "-e", "-F", "-l", "-n", "-o", "-p", "-s", "-u", "-x", "-w",
        ],
        0,
    ),
    wrapper("chroot", &["--userspec", "--groups"], 1),
    wrapper("busybox", &[], 0),
    wrapper("toybox", &[], 0),
    wrapper("chrt", &["-T", "-P", "-D"], 1),
    wrapper("taskset", &[], 1),
    wrapper("numactl", &["-C", "-N", "-m", "-p", "-i"], 0),
    scripted(
        "runuser",
        &["-u", "-g", "-G", "--user", "--group", "-s", "--shell", "-w"],
        0,
        &["-c", "--command"],
        true,
    ),
    scripted(
        "su",
        &["-g", "-G", "-s", "--shell", "-w", "--group"],
        0,
        &["-c", "--command", "--session-command"],
        false,
    ),
    scripted(
        "script",
        &["-E", "-o", "-T", "-I", "-O", "-B"],
        0,
        &["-c", "--command"],
        false,
    ),
    scripted("sg", &[], 1, &["-c"], true),
    wrapper(
        "parallel",
        &[
            "-j",
            "--jobs",
            "-S",
            "--sshlogin",
            "--joblog",
            "-a",
            "--arg-file",
            "-N",
            "-n",
            "-I",
            "--colsep",
            "--delay",
            "--timeout",
        ],
        0,
    ),
    wrapper(
        "systemd-run",
        &[
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--uid",
            "--gid",
            "--nice",
            "-D",
            "--working-directory",
            "--description",
            "--slice",
        ],
        0,
    ),
    wrapper("dbus-launch", &[], 0),
    wrapper("dbus-run-session", &["--config-file", "--dbus-daemon"], 0),
    wrapper("xvfb-run", &["-n", "-s", "-f", "-e", "-p", "-w"], 0),
    wrapper("ssh-agent", &["-a", "-E", "-t", "-P"], 0),
    wrapper("fakeroot", &["-l", "-s", "-i", "-b"], 0),
    wrapper("faketime", &["-f"], 1),
    wrapper("unbuffer", &[], 0),
    wrapper("rlwrap", &[], 0),
    wrapper("torsocks", &[], 0),
    wrapper("proxychains", &["-f"], 0),
    wrapper("proxychains4", &["-f"], 0),
    wrapper("firejail", &[], 0),
    wrapper("valgrind", &[], 0),
    wrapper("catchsegv", &[], 0),
    wrapper("cgexec", &["-g"], 0),
    wrapper("prlimit", &[], 0),
    wrapper("setpriv", &[], 0),
    wrapper(
        "nsenter",
        &["-t", "--target", "-S", "-G", "--setuid", "--setgid"],
        0,
    ),
    wrapper("caffeinate", &["-w", "-t"], 0),
    wrapper("coproc", &[], 0),
    wrapper(
        "ssh",
        &[
            "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
            "-p", "-Q", "-R", "-S", "-W", "-w",
        ],
        1,
    ),
    scripted(
        "nix-shell",
        &["-p", "-A", "-I"],
        0,
        &["--run", "--command"],
        false,
    ),
    subcommand(
        "uv",
        "run",
        &[
            "--with",
            "--python",
            "-p",
            "--env-file",
            "--directory",
            "--project",
            "--package",
        ],
    ),
    subcommand("poetry", "run", &[]),
    subcommand("pipenv", "run", &[]),
    subcommand("bundle", "exec", &[]),
    subcommand("conda", "run", &["-n", "--name", "-p", "--prefix"]),
    subcommand("mise", "exec", &[]),
    Wrapper {
        name: "direnv",
        sub: Some("exec"),
        values: &[],
        positional: 1,
        script: &[],
        runs_rest: true,
    },
];

/// Shells whose `-c` option takes a command string.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "posh", "tcsh", "csh",
];

/// Builtins that run their arguments, joined, as a shell line.
const EVALS: &[&str] = &["eval", "watch", "trap"];

/// Whether the program `name` (a file name) runs other programs or a
/// script it is given: a wrapper of [`WRAPPERS`] (with or without its
/// subcommand), a shell, or an `eval`. A prefix naming one covers anything.
pub(crate) fn runs_other_programs(name: &str) -> bool {
    WRAPPERS.iter().any(|w| w.name == name) || SHELLS.contains(&name) || EVALS.contains(&name)
}

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
    let mut line = |script: &str, out: &mut Vec<Command>| {
        let inner = parse_at(script, depth + 1);
        *opaque |= inner.opaque;
        out.extend(inner.commands.into_iter().map(Command::derive));
    };
    if SHELLS.contains(&name) {
        // `-c`, `-lc`, `-ec`, ...: the next word is the script.
        let script = (at + 1..spans.len())
            .take_while(|&i| word(i).is_some_and(|w| w.starts_with('-') || w.starts_with('+')))
            .find(|&i| word(i).is_some_and(|w| !w.starts_with("--") && w.contains('c')))
            .map(|i| word(i + 1).map(unquote));
        match script {
            Some(Some(script)) => line(&script, out),
            // The script comes from a file or standard input.
            _ => out.push(Command {
                unknown: true,
                plain: None,
                ..Command::new(text, true)
            }),
        }
        return;
    }
    if EVALS.contains(&name) {
        // Past the options (`watch -n 5`, `trap --`), the line.
        let mut i = at + 1;
        while let Some(w) = word(i).map(unquote).filter(|w| w.starts_with('-')) {
            i += if matches!(w.as_str(), "-n" | "--interval" | "-q" | "--equexit") {
                2
            } else {
                1
            };
        }
        let args = if name == "trap" {
            word(i).map(unquote)
        } else {
            spans.get(i).map(|&(s, _)| unquote_words(&text[s..]))
        };
        if let Some(script) = args {
            line(&script, out);
        }
        return;
    }
    if matches!(name, "source" | ".") && spans.len() > at + 1 {
        out.push(Command {
            unknown: true,
            plain: None,
            ..Command::new(text, true)
        });
        return;
    }
    if name == "find" {
        find_exec(text, &spans, depth, out, opaque);
        return;
    }
    let Some(wrapper) = WRAPPERS.iter().find(|w| {
        w.name == name
            && w.sub
                .is_none_or(|sub| word(at + 1).is_some_and(|w| unquote(w) == sub))
    }) else {
        return;
    };
    let mut i = at + 1 + usize::from(wrapper.sub.is_some());
    let mut positional = wrapper.positional;
    while let Some(w) = word(i) {
        let w = unquote(w);
        if let Some(script) = script_value(wrapper, &w, word(i + 1)) {
            line(&script, out);
            return;
        }
        if w == "--" {
            i += 1;
            if positional == 0 {
                break;
            }
        } else if name == "env" && is_assignment(&w) {
            i += 1;
        } else if w.starts_with('-') && w != "-" {
            i += if wrapper.values.contains(&w.as_str()) {
                2
            } else {
                1
            };
        } else if positional > 0 {
            positional -= 1;
            i += 1;
        } else {
            break;
        }
    }
    if !wrapper.runs_rest {
        return;
    }
    let Some(&(start, _)) = spans.get(i) else {
        return;
    };
    let mut inner = Command::new(&text[start..], true);
    if name == "xargs" && inner.text.contains("{}") {
        // `xargs -I{} {}`: the program comes from standard input.
        inner.unknown |= inner.program().is_none_or(|p| p.contains("{}"));
    }
    let inner_text = inner.text.clone();
    out.push(inner);
    unwrap(&inner_text, depth + 1, out, opaque);
}

/// The shell line an option of `wrapper` gives, when `option` is one
/// (`-c LINE`, `-S LINE`, `-SLINE`, `--split-string=LINE`).
fn script_value(wrapper: &Wrapper, option: &str, next: Option<&str>) -> Option<String> {
    for flag in wrapper.script {
        if option == *flag {
            return next.map(unquote);
        }
        if let Some(long) = flag.strip_prefix("--") {
            let value = option
                .strip_prefix("--")
                .and_then(|o| o.strip_prefix(long))
                .and_then(|o| o.strip_prefix('='));
            if let Some(value) = value {
                return Some(value.to_string());
            }
            continue;
        }
        let Some(letter) = flag.strip_prefix('-') else {
            continue;
        };
        let Some(short) = option.strip_prefix('-').filter(|o| !o.starts_with('-')) else {
            continue;
        };
        // `-qc LINE`: flags bundled, the script's last.
        if short.ends_with(letter) && short.chars().all(|c| c.is_ascii_alphabetic()) {
            return next.map(unquote);
        }
        // `-SLINE`: the value attached.
        if let Some(value) = short.strip_prefix(letter).filter(|v| !v.is_empty()) {
            return Some(value.to_string());
        }
    }
    None
}

/// The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir`.
fn find_exec(
    text: &str,
    spans: &[(usize, usize)],
    depth: usize,
    out: &mut Vec<Command>,
    opaque: &mut bool,
) {
    let mut i = 0;
    while i < spans.len() {
        let (s, e) = spans[i];
        i += 1;
        if !matches!(
            unquote(&text[s..e]).as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            continue;
        }
        let Some(&(start, _)) = spans.get(i) else {
            return;
        };
        let mut end = text.len();
        while let Some(&(s, e)) = spans.get(i) {
            i += 1;
            if matches!(unquote(&text[s..e]).as_str(), ";" | "+") {
                end = s;
                break;
            }
        }
        let inner = Command::new(text[start..end].trim(), true);
        let unknown = inner.program().is_none_or(|p| p.contains("{}"));
        let inner_text = inner.text.clone();
        out.push(Command {
            unknown: inner.unknown || unknown,
            ..inner
        });
        unwrap(&inner_text, depth + 1, out, opaque);
    }
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

/// A here-document whose body starts after the next newline.
struct Heredoc {
    /// The delimiter, unquoted.
    delimiter: String,
    /// The delimiter was quoted: the body is literal text.
    quoted: bool,
    /// `<<-`: leading tabs are stripped from the body's lines.
    strip_tabs: bool,
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    /// Raw pieces of this scanner's own text, with their nesting level.
    pieces: Vec<(usize, String)>,
    /// Here-documents waiting for their body.
    heredocs: Vec<Heredoc>,
    /// Where the last backslash escape outside quotes ended: an escaped
    /// blank does not start a word (`\ #x` is no comment).
    escaped_until: usize,
    /// Flags, and the commands of backtick substitutions (parsed separately).
    line: ShellLine,
}

impl Scanner {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// Whether `pos` starts a word: the line's start, or after a blank
    /// (space, tab, newline: the shell's, not Unicode's) or an operator
    /// character that no backslash escaped.
    fn word_start(&self) -> bool {
        self.pos == 0
            || (self.pos != self.escaped_until
                && self
                    .chars
                    .get(self.pos - 1)
                    .is_some_and(|&c| " \t\n;&|()<>".contains(c)))
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
        // `case` commands open in this list: their patterns end in `)`.
        let mut cases = 0usize;
        while let Some(c) = self.peek(0) {
            let next = self.peek(1);
            match c {
                '\\' => {
                    self.pos += 2;
                    self.escaped_until = self.pos;
                }
                '\'' => self.single_quoted(),
                '$' if next == Some('\'') => self.ansi_quoted(),
                '"' => self.double_quoted(depth),
                '`' => self.backticks(depth),
                '#' if self.word_start() => {
                    // A comment, up to the end of the line.
                    self.cut(start, depth);
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                    start = self.pos;
                }
                '$' => self.dollar(depth),
                '<' | '>' if next == Some('(') => {
                    self.pos += 2;
                    self.list(Stop::Paren, 0, depth + 1);
                }
                '<' if next == Some('<') => self.heredoc(),
                '<' if next == Some('>') => self.redirect(2),
                '>' => self.redirect(1),
                '&' if next == Some('>') => self.redirect(2),
                ';' | '\n' | '&' | '|' | '(' | ')' => {
                    if c == '(' && next == Some('(') && self.word_start() {
                        // `(( .. ))`: arithmetic, which can run commands
                        // through array subscripts.
                        self.line.opaque = true;
                    }
                    self.cut(start, depth);
                    let width = match (c, next) {
                        ('&', Some('&')) | ('|', Some('|' | '&')) => 2,
                        _ => 1,
                    };
                    self.pos += width;
                    if c == '\n' {
                        self.heredoc_bodies(depth);
                    }
                    start = self.pos;
                    if c == '(' {
                        parens += 1;
                    } else if c == ')' {
                        if parens > 0 {
                            parens -= 1;
                        } else if cases == 0 && stop == Stop::Paren {
                            // (In a `case`, a `)` ends a pattern.)
                            return;
                        }
                    }
                }
                _ => {
                    if self.word_start() {
                        if self.keyword("case") {
                            cases += 1;
                        } else if self.keyword("esac") {
                            cases = cases.saturating_sub(1);
                        }
                    }
                    self.pos += 1;
                }
            }
        }
        if stop == Stop::Paren {
            // The input ended inside a substitution.
            self.line.opaque = true;
        }
        self.cut(start, depth);
    }

    /// Whether the word at `pos` is exactly `word` (followed by a blank,
    /// an operator or the end).
    fn keyword(&self, word: &str) -> bool {
        let len = word.chars().count();
        word.chars()
            .enumerate()
            .all(|(i, c)| self.peek(i) == Some(c))
            && self.peek(len).is_none_or(|c| " \t\n;&|()<>".contains(c))
    }

    /// At a `$` outside single quotes: a substitution, a parameter
    /// expansion, arithmetic, or a plain `$`.
    fn dollar(&mut self, depth: usize) {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => self.arithmetic(depth),
            Some('(') => {
                self.pos += 2;
                self.list(Stop::Paren, 0, depth + 1);
            }
            Some('{') => self.parameter(depth),
            Some('[') => {
                // `$[ .. ]`: old-style arithmetic.
                self.line.opaque = true;
                self.pos += 2;
            }
            _ => self.pos += 1,
        }
    }

    /// At `$((`: arithmetic, or `$( (..) )` written without the blank. The
    /// inside is scanned as a substitution; arithmetic of numbers and
    /// operators only adds nothing, anything else makes the line opaque.
    fn arithmetic(&mut self, depth: usize) {
        let start = self.pos;
        let (pieces, commands) = (self.pieces.len(), self.line.commands.len());
        self.pos += 2;
        self.list(Stop::Paren, 0, depth + 1);
        let inside = &self.chars[start + 1..self.pos.min(self.chars.len())];
        let numeric = inside
            .iter()
            .all(|&c| c.is_ascii_digit() || c.is_whitespace() || "()+-*/%<>=!&|^~?:,".contains(c));
        if numeric {
            self.pieces.truncate(pieces);
            self.line.commands.truncate(commands);
        } else {
            self.line.opaque = true;
        }
    }

    /// At `${`: a parameter expansion, up to its `}`. Only `${NAME}` and
    /// `${N}` (and the special parameters) are understood; the inside of
    /// anything else is scanned for substitutions and the line is opaque.
    fn parameter(&mut self, depth: usize) {
        if depth > MAX_DEPTH {
            self.line.opaque = true;
            self.pos = self.chars.len();
            return;
        }
        self.pos += 2;
        let start = self.pos;
        let mut simple = true;
        loop {
            let Some(c) = self.peek(0) else {
                self.line.opaque = true;
                return;
            };
            match c {
                '}' => break,
                '\\' => {
                    simple = false;
                    self.pos += 2;
                }
                '\'' => {
                    simple = false;
                    self.single_quoted();
                }
                '"' => {
                    simple = false;
                    self.double_quoted(depth + 1);
                }
                '`' => {
                    simple = false;
                    self.backticks(depth);
                }
                '$' if self.peek(1) == Some('\'') => {
                    simple = false;
                    self.ansi_quoted();
                }
                '$' => {
                    simple = false;
                    self.dollar(depth + 1);
                }
                _ => self.pos += 1,
            }
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        self.pos += 1;
        let special = name.len() == 1 && "#?@*!$-".contains(name.as_str());
        let named = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let positional = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
        if !(simple && (special || named || positional)) {
            self.line.opaque = true;
        }
    }

    /// At `<<`: a here-string (`<<<`, its word is scanned as usual), or a
    /// here-document, whose delimiter is read now and body after the next
    /// newline.
    fn heredoc(&mut self) {
        if self.peek(2) == Some('<') {
            self.pos += 3;
            return;
        }
        self.pos += 2;
        let strip_tabs = self.peek(0) == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.pos += 1;
        }
        let start = self.pos;
        let mut quote = None;
        while let Some(c) = self.peek(0) {
            match (quote, c) {
                (None, '\\') => self.pos += 1,
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
                _ => {}
            }
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos.min(self.chars.len())]
            .iter()
            .collect();
        let delimiter = unquote(&word);
        if delimiter.is_empty() || quote.is_some() {
            self.line.opaque = true;
        }
        self.heredocs.push(Heredoc {
            quoted: word.contains(['\'', '"', '\\']),
            delimiter,
            strip_tabs,
        });
    }

    /// Just past a newline: the bodies of the here-documents waiting for
    /// one, in order, each up to its delimiter line. An unquoted body's
    /// substitutions are scanned (they may span lines, as in the shell).
    fn heredoc_bodies(&mut self, depth: usize) {
        for doc in std::mem::take(&mut self.heredocs) {
            let body = self.pos;
            let mut line = self.pos;
            let mut found = None;
            while line < self.chars.len() {
                let end = (line..self.chars.len())
                    .find(|&i| self.chars[i] == '\n')
                    .unwrap_or(self.chars.len());
                let text: String = self.chars[line..end].iter().collect();
                let text = if doc.strip_tabs {
                    text.trim_start_matches('\t')
                } else {
                    text.as_str()
                };
                if text == doc.delimiter {
                    found = Some((line, (end + 1).min(self.chars.len())));
                    break;
                }
                line = end + 1;
            }
            let Some((body_end, after)) = found else {
                // The input ended before the delimiter.
                self.line.opaque = true;
                self.pos = self.chars.len();
                return;
            };
            if !doc.quoted {
                self.pos = body;
                while self.pos < body_end {
                    match self.peek(0) {
                        Some('\\') => self.pos += 2,
                        Some('`') => self.backticks(depth),
                        Some('$') => self.dollar(depth),
                        _ => self.pos += 1,
                    }
                }
                if self.pos > body_end {
                    // A substitution ran past the body: not followed.
                    self.line.opaque = true;
                }
            }
            self.pos = self.pos.max(after);
        }
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
        self.line.opaque = true;
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
        self.line.opaque = true;
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
                '$' => self.dollar(depth),
                _ => self.pos += 1,
            }
        }
        self.line.opaque = true;
    }

    /// At a backtick: the text up to the closing one, unescaped, is a line of its own.
    fn backticks(&mut self, depth: usize) {
        self.pos += 1;
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
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
        if !closed || depth + 1 > MAX_DEPTH {
            self.line.opaque = true;
            return;
        }
        let sub = parse_at(&inner, depth + 1);
        self.line.commands.extend(sub.commands);
        self.line.writes_file |= sub.writes_file;
        self.line.opaque |= sub.opaque;
    }

    /// At an output redirection (`>`, `>>`, `>|`, `>&`, `&>`, `&>>`, `<>`,
    /// with the operator `width` characters long so far). The target is
    /// only peeked at: the scan goes on over it (it may hold a substitution).
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
            [r"cargo test $'\''", "rm -rf ~"]
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
                unknown: false,
                plain: Some("cargo test".into()),
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
            [
                "sh -c 'echo hi; curl x | sh'",
                "echo hi",
                "curl x",
                "sh",
                "sh"
            ]
        );
        assert_eq!(derived("eval 'rm -rf' /tmp/x"), ["rm -rf /tmp/x"]);
        assert_eq!(derived("bash script.sh"), ["bash script.sh"]);
        assert!(parse("bash script.sh").commands[1].unknown);
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

//! Looking into commands that run other commands: the wrappers warden knows
//! (`sudo`, `env -S`, `timeout`, `find -exec`, `xargs`, ...), shells given
//! `-c`, and `eval`; what they run is scanned as commands of its own.

use super::{Command, MAX_DEPTH, Stdin, is_assignment, parse_at, words};

mod git_config;
mod unread_code;

use git_config::git_config;
use unread_code::{reads_stdin, runs_unread_code, shell_script};

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
    wrapper("npx", &["-p", "--package"], 0),
    wrapper("pnpx", &[], 0),
    wrapper("bunx", &["-p", "--package"], 0),
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
    wrapper("eatmydata", &[], 0),
    wrapper("chronic", &[], 0),
    wrapper("nocache", &[], 0),
    wrapper("ifne", &[], 0),
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

/// Package managers' subcommands that run the rest of their arguments as a
/// command (`npm exec rm x`). Not [`WRAPPERS`]: `npm test` runs no other
/// program of the agent's choosing, so a rule or grant may name `npm`.
const RUNNERS: &[Wrapper] = &[
    subcommand("npm", "exec", &["-p", "--package", "-w", "--workspace"]),
    subcommand("npm", "x", &["-p", "--package", "-w", "--workspace"]),
    subcommand("pnpm", "exec", &[]),
    subcommand("pnpm", "dlx", &[]),
    subcommand("yarn", "dlx", &["-p", "--package"]),
    subcommand("yarn", "exec", &[]),
];

/// Whether `name SUB` runs the rest of its arguments (`npm exec`).
pub(crate) fn runs_through(name: &str, sub: &str) -> bool {
    RUNNERS.iter().any(|w| w.name == name && w.sub == Some(sub))
}

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
pub(super) fn unwrap(
    text: &str,
    stdin: Option<&Stdin>,
    depth: usize,
    out: &mut Vec<Command>,
    opaque: &mut bool,
) {
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
    // A variable that names a command to run (`GIT_SSH_COMMAND=..`,
    // `export PAGER=..`, `make CC=..`): its value is read as a line too.
    for &(s, e) in &spans {
        let w = &text[s..e];
        if let Some(name) = super::assignment_name(w)
            && super::hijacks_program(name)
            && let Some((_, value)) = w.split_once('=')
        {
            let value = unquote(value);
            let inner = parse_at(&value, depth + 1);
            *opaque |= inner.opaque;
            out.extend(inner.commands.into_iter().map(Command::derive));
        }
    }
    let name = program.rsplit('/').next().unwrap_or(&program);
    let mut line = |script: &str, out: &mut Vec<Command>| {
        let inner = parse_at(script, depth + 1);
        *opaque |= inner.opaque;
        out.extend(inner.commands.into_iter().map(Command::derive));
    };
    if SHELLS.contains(&name) {
        // `-c`, `-lc`, `-ec`, ...: the first operand is the script.
        let script = shell_script(&spans[at + 1..], text);
        let from_stdin = script.is_none() && reads_stdin(&spans[at + 1..], text);
        match (script, stdin) {
            (Some(Some(script)), _) => line(&script, out),
            // Its commands come from a here-document, a here-string or a
            // pipe the line spells out: read like `sh -c`.
            (None, Some(stdin)) if from_stdin => {
                line(&stdin.text, out);
                if !stdin.exact {
                    out.push(Command {
                        unknown: true,
                        plain: None,
                        ..Command::new(text, true)
                    });
                }
            }
            // The script comes from a file or standard input.
            _ => out.push(Command {
                unknown: true,
                plain: None,
                ..Command::new(text, true)
            }),
        }
        return;
    }
    if name == "git" {
        git_config(text, &spans, at, depth, out, opaque);
        return;
    }
    if matches!(name, "npm" | "pnpm" | "yarn")
        && word(at + 1).is_some_and(|w| matches!(unquote(w).as_str(), "exec" | "x" | "dlx"))
    {
        for script in option_values(text, &spans[at + 2..], &["-c", "--call"]) {
            line(&script, out);
        }
    }
    if name == "ssh" {
        // `-o ProxyCommand=..`, `LocalCommand`, `KnownHostsCommand`: run here.
        for value in option_values(text, &spans[at + 1..], &["-o"]) {
            let (key, script) = value.split_once(['=', ' ']).unwrap_or((&value, ""));
            if key.to_ascii_lowercase().ends_with("command") {
                line(script.trim(), out);
            }
        }
    }
    if let Some(values) = command_options(name) {
        // Options whose value is a command the program runs.
        for script in option_values(text, &spans[at + 1..], values) {
            line(&script, out);
        }
    }
    if runs_unread_code(name, text, &spans[at + 1..], stdin.is_some()) {
        out.push(Command {
            code: true,
            ..Command::new(text, true)
        });
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
    let Some(wrapper) = WRAPPERS.iter().chain(RUNNERS).find(|w| {
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
        } else if name == "env" && (is_assignment(&w) || w == "-") {
            // (`env -` is `env -i`.)
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
    // The wrapper hands its standard input on (`sudo sh <<EOF`).
    unwrap(&inner_text, stdin, depth + 1, out, opaque);
}

/// The options of `name` whose value is a command line it runs.
fn command_options(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "rg" => &["--pre"],
        "tar" | "bsdtar" | "gtar" => &[
            "--to-command",
            "-I",
            "--use-compress-program",
            "--info-script",
            "-F",
            "--new-volume-script",
            "--checkpoint-action",
        ],
        "rsync" => &["-e", "--rsh", "--rsync-path"],
        "man" => &["-P", "--pager", "-H", "--html"],
        "zip" => &["-TT", "--unzip-command"],
        "npx" | "pnpx" | "bunx" => &["-c", "--call"],
        _ => return None,
    })
}

/// The values of `options` among `spans` (`--pre CMD`, `--pre=CMD`,
/// `-ICMD`), unquoted; `exec=` is dropped (`--checkpoint-action=exec=CMD`).
fn option_values(text: &str, spans: &[(usize, usize)], options: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, &(s, e)) in spans.iter().enumerate() {
        let word = unquote(&text[s..e]);
        for option in options {
            let value = if word == *option {
                spans.get(i + 1).map(|&(s, e)| unquote(&text[s..e]))
            } else if let Some(rest) = word.strip_prefix(option) {
                let long = option.starts_with("--");
                match rest.strip_prefix('=') {
                    Some(value) => Some(value.to_string()),
                    None if !long && !rest.is_empty() => Some(rest.to_string()),
                    None => None,
                }
            } else {
                None
            };
            if let Some(value) = value {
                out.push(value.strip_prefix("exec=").unwrap_or(&value).to_string());
            }
        }
    }
    out
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
        unwrap(&inner_text, None, depth + 1, out, opaque);
    }
}

/// A word as the shell passes it on: quotes removed, escapes resolved.
pub(crate) fn unquote(word: &str) -> String {
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

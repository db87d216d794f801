//! The rule "keep as rule" proposes for a request ([`suggest_rule`]), the
//! wider path glob offered beside it ([`wider_path`]), and what a rule or a
//! grant may safely name of one command ([`command_scopes`]).

use super::*;

/// The rule "keep as rule" proposes: the narrowest sensible allow rule for
/// this agent that covers requests like this one, and never more than it
/// says.
///
/// - A shell command read from `rawInput`: its first word, and the second
///   when it is a plain subcommand (`cargo test`, `git status`, `npm run`),
///   then ` *` (`cargo test *` also covers a bare `cargo test`); leading
///   `VAR=value` words are kept, since allow rules match commands as
///   written. For a chained line this is the first command's prefix, which
///   does not cover the rest of the line. A wrapper (`bash -c`, `sudo`,
///   `env`, `xargs`, `timeout`, an interpreter such as `python3` or `node`,
///   ...) is never the prefix: warden looks through it (`bash -c 'cargo
///   test'` proposes `cargo test *`) or, when it cannot, proposes the exact
///   command.
/// - Else a call with one path: the kind and that file, taken from the
///   request's cwd (with `~` for the home directory); [`wider_path`] is the
///   wider glob offered second. With several paths, the glob `DIR/**` of
///   the deepest directory holding them all, unless that directory is `/`,
///   the home directory or above it.
/// - Else nothing (`Err` says why): a rule of only a kind and a tool would
///   cover every such call, whatever it touches.
pub fn suggest_rule(
    req: &RequestView,
    agent: &str,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<Rule, String> {
    let mut rule = Rule::new(RuleDecision::Allow);
    rule.agent = Some(agent.to_string());
    rule.kind = Some(KindMatch::named(req.kind));
    let facts = Facts::new(req, home, cwd);
    if req.category() == Category::Execute {
        let command = req.command().filter(|_| req.command_exact()).ok_or(
            "warden cannot read its command exactly (no rawInput, and a title it cannot take apart), so no rule would cover it",
        )?;
        let pattern = suggested_command(&command)
            .ok_or("warden cannot read its command, so no rule would cover it")?;
        rule.command = Some(pattern);
        // The rule must cover the request it is kept from: allow rules
        // match commands as written, so a look through a wrapper (`sudo`)
        // that would not is replaced by the exact command.
        // (A chained line no single command rule covers keeps the first
        // command's prefix, for the next time it runs alone.)
        if !rule.matches(&facts, agent) {
            let mut exact = rule.clone();
            exact.command = Some(glob::escape(command.trim()));
            if exact.matches(&facts, agent) {
                return Ok(exact);
            }
        }
        return Ok(rule);
    }
    if facts.paths.is_empty() {
        return Err(format!(
            "it names no path, so a rule would allow every {} of `{}`",
            req.kind.as_str(),
            req.tool()
        ));
    }
    if let [one] = facts.paths.as_slice() {
        rule.path = Some(glob::escape(&glob::tilde(one, home)));
        return Ok(rule);
    }
    rule.path = Some(dir_glob(&facts.paths, home)?);
    Ok(rule)
}

/// The wider pattern "keep as rule" offers second, for a request with one
/// path: the glob `DIR/**` of the file's directory (see [`suggest_rule`]);
/// `None` when that directory is `/`, the home directory or above it, or
/// the request is not about exactly one path.
pub fn wider_path(req: &RequestView, home: Option<&Path>, cwd: &Path) -> Option<String> {
    if req.category() == Category::Execute {
        return None;
    }
    let facts = Facts::new(req, home, cwd);
    match facts.paths.as_slice() {
        [_] => dir_glob(&facts.paths, home).ok(),
        _ => None,
    }
}

/// `DIR/**` for the deepest directory holding every path, unless that is
/// `/`, the home directory or above it (`Err` says why).
fn dir_glob(paths: &[String], home: Option<&Path>) -> Result<String, String> {
    let dirs: Vec<String> = paths.iter().map(|p| parent(p)).collect();
    let dir = common_dir(&dirs).unwrap_or_else(|| "/".to_string());
    let home_dir =
        home.map(|h| glob::normalize_path(&h.display().to_string(), None, Path::new("/")));
    let too_wide = dir == "/"
        || home_dir
            .as_deref()
            .is_some_and(|h| h == dir || h.starts_with(&format!("{dir}/")));
    if too_wide {
        return Err(format!(
            "its paths share no directory narrower than {}",
            glob::tilde(&dir, home)
        ));
    }
    Ok(format!("{}/**", glob::escape(&glob::tilde(&dir, home))))
}

/// The command glob "keep as rule" proposes for a line (see [`suggest_rule`]).
fn suggested_command(line: &str) -> Option<String> {
    let parsed = shell::parse(line);
    let first = parsed.commands.iter().find(|c| !c.derived)?;
    match command_scope(&first.text) {
        CommandScope::Prefix(prefix) => Some(format!("{} *", glob::escape(&prefix))),
        CommandScope::Exact(exact) => {
            // Look through the wrapper: the first plain program it runs.
            let through = shell::parse(&first.text)
                .commands
                .iter()
                .filter(|c| c.derived)
                .find_map(|c| match command_scope(&c.text) {
                    CommandScope::Prefix(prefix) => Some(prefix),
                    CommandScope::Exact(_) => None,
                });
            Some(match through {
                Some(prefix) => format!("{} *", glob::escape(&prefix)),
                None => glob::escape(&exact),
            })
        }
    }
}

/// What a rule or a grant may safely name of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandScope {
    /// The program and its subcommand (`cargo test`), leading `VAR=value`
    /// words kept: every command starting with these words.
    Prefix(String),
    /// The whole command: its program runs other programs (a wrapper or an
    /// interpreter) or is only known at run time (`$X`, `$(..)`).
    Exact(String),
}

/// Programs that run another program or a script given to them: a prefix
/// naming one would cover anything. Matched on the program's file name,
/// without a trailing version (`python3.12` is `python`).
const WRAPPERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "env",
    "sudo",
    "doas",
    "su",
    "runuser",
    "xargs",
    "find",
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "bunx",
    "npx",
    "pnpx",
    "uv",
    "uvx",
    "pipx",
    "perl",
    "ruby",
    "php",
    "lua",
    "osascript",
    "timeout",
    "nice",
    "renice",
    "nohup",
    "time",
    "exec",
    "command",
    "builtin",
    "eval",
    "source",
    ".",
    "setsid",
    "stdbuf",
    "ionice",
    "watch",
    "flock",
    "unshare",
    "nsenter",
    "strace",
    "ltrace",
    "chroot",
    "chrt",
    "taskset",
    "script",
    "firejail",
];

/// The scope of each command written on a line, in order, without
/// duplicates; `None` when the scanner could not read the whole line.
pub(crate) fn command_scopes(line: &str) -> Option<Vec<CommandScope>> {
    let parsed = shell::parse(line);
    if parsed.opaque {
        return None;
    }
    let mut out: Vec<CommandScope> = Vec::new();
    for command in parsed.commands.iter().filter(|c| !c.derived) {
        let scope = command_scope(&command.text);
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The scope of one simple command (see [`CommandScope`]).
pub(crate) fn command_scope(text: &str) -> CommandScope {
    let text = text.trim();
    let spans = shell::words(text);
    let Some(program) = spans
        .iter()
        .position(|&(s, e)| !shell::is_assignment(&text[s..e]))
    else {
        return CommandScope::Exact(text.to_string());
    };
    let (start, mut end) = spans[program];
    if !plain_program(&text[start..end]) {
        return CommandScope::Exact(text.to_string());
    }
    if let Some(&(s, e)) = spans.get(program + 1)
        && is_subcommand(&text[s..e])
    {
        if shell::runs_through(&text[start..end], &text[s..e]) {
            // `npm exec ..` runs what follows: only exactly this.
            return CommandScope::Exact(text.to_string());
        }
        end = e;
    }
    CommandScope::Prefix(text[..end].to_string())
}

/// A program word that names one program which runs no other: not a
/// wrapper, not produced at run time.
fn plain_program(word: &str) -> bool {
    if word.contains(['$', '`', '(', ')', '<', '>', '{', '}', '*', '?', '[']) {
        return false;
    }
    let unquoted: String = word
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let name = unquoted.rsplit('/').next().unwrap_or(&unquoted);
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    !name.is_empty() && !WRAPPERS.contains(&name) && !shell::runs_other_programs(name)
}

/// A plain lowercase word such as `test`, `run` or `build:prod`.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_:".contains(c))
}

fn parent(path: &str) -> String {
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => path[..i].to_string(),
    }
}

/// The deepest directory containing every one of `dirs`.
fn common_dir(dirs: &[String]) -> Option<String> {
    let (first, rest) = dirs.split_first()?;
    let mut common: Vec<&str> = first.split('/').filter(|s| !s.is_empty()).collect();
    for dir in rest {
        let parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
        let same = common
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same);
    }
    Some(format!("/{}", common.join("/")))
}

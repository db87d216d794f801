//! Rules from the settings file, how they match a request, and the rule
//! warden suggests when the user asks to keep an approval.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::glob::{self, command_matches, name_matches, path_matches};
use super::shell::{self, ShellLine};
use super::{Category, ParseError, RequestView, category};
use crate::model::ToolKind;

mod suggest;

pub(crate) use suggest::{CommandScope, command_scopes};
pub use suggest::{suggest_rule, wider_path};

/// What a matching rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    /// Let the call run without asking (unless the mode blocks it).
    Allow,
    /// Always put the call in front of the user, even in Auto or with bypass.
    Ask,
    /// Refuse the call without asking, whatever the mode or bypass.
    Deny,
}

impl RuleDecision {
    /// The settings-file name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RuleDecision::Allow => "allow",
            RuleDecision::Ask => "ask",
            RuleDecision::Deny => "deny",
        }
    }
}

/// The `kind` of a rule: one ACP tool kind, or a whole category.
///
/// Parsed from a name. `read` and `execute` are both a kind and a category
/// name; they mean the category, so `read` also covers `search` and `think`,
/// and `execute` also covers `other` (and a missing kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum KindMatch {
    /// Exactly this ACP kind (`edit`, `fetch`, `switch_mode`, ...).
    Kind(ToolKind),
    /// Every kind of this category (`read`, `write`, `execute`, `external`).
    Category(Category),
}

impl KindMatch {
    /// The category of the kinds it covers.
    pub(crate) fn category(self) -> Category {
        match self {
            KindMatch::Kind(kind) => category(kind),
            KindMatch::Category(c) => c,
        }
    }

    /// Whether a request of this kind is covered.
    pub(crate) fn matches(self, kind: ToolKind) -> bool {
        match self {
            KindMatch::Kind(k) => k == kind,
            KindMatch::Category(c) => category(kind) == c,
        }
    }

    /// The match a rule written with this kind's name gets (so it survives
    /// a round trip through the settings file).
    pub(crate) fn named(kind: ToolKind) -> KindMatch {
        match kind {
            ToolKind::Read => KindMatch::Category(Category::Read),
            ToolKind::Execute => KindMatch::Category(Category::Execute),
            kind => KindMatch::Kind(kind),
        }
    }

    /// The settings-file name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KindMatch::Kind(kind) => kind.as_str(),
            KindMatch::Category(category) => category.as_str(),
        }
    }
}

impl FromStr for KindMatch {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim();
        let category = [
            Category::Read,
            Category::Write,
            Category::Execute,
            Category::External,
        ]
        .into_iter()
        .find(|c| c.as_str() == name);
        if let Some(category) = category {
            return Ok(KindMatch::Category(category));
        }
        ToolKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .map(KindMatch::Kind)
            .ok_or_else(|| ParseError::Kind(s.to_string()))
    }
}

impl TryFrom<String> for KindMatch {
    type Error = ParseError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<KindMatch> for String {
    fn from(k: KindMatch) -> String {
        k.as_str().to_string()
    }
}

impl fmt::Display for KindMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: it applies when every field it sets matches.
///
/// - `agent`: equals the agent's name.
/// - `kind`: the request's kind or category (see [`KindMatch`]).
/// - `tool`: a glob (`*` matches anything) on the tool's name, [`RequestView::tool`].
/// - `command`: a command glob on the request's shell line (see
///   `glob` and `shell`). An allow rule covers the line only when it
///   matches every command in it (as written, `VAR=value` prefixes
///   included), the line redirects no output to a file, the scanner
///   understands all of it, every program name is known before it runs, the
///   command came from `rawInput`, and the request is of the execute
///   category; a deny or ask rule applies when it matches any one command
///   (as written, without its `VAR=value` prefixes, or in its plain form:
///   `\rm`, `/bin/rm` and `"rm"` are `rm`), or the whole line, of any
///   reading of the command (`rawInput`'s keys, the title). A deny or ask
///   rule might apply (`Hit::Unknown`) to an execute request whose command
///   cannot be read: then the request asks.
///
/// A deny or ask rule of kind `execute` also applies to a request of
/// another kind that carries a command in `rawInput`, and a path rule of a
/// read kind (or of a write kind, unless the command only reads) to any
/// request that carries a command.
///
/// No allow rule matches a request whose kind warden had to guess, or that
/// sets a variable which changes what runs (`PATH`, `LD_PRELOAD`, ...) in
/// its environment or on its command line.
/// - `path`: a path glob on the request's paths and the paths its
///   command's arguments name, after normalising both (`~`, relative to
///   the request's working directory, `.` and `..`). Allow: the request
///   has paths of its own and every path matches, none unreadable; deny or
///   ask: any one matches, and one that names a directory holding what the
///   glob names, or that warden cannot read, might match.
///
/// An allow rule that sets neither `command` nor `kind` never covers an
/// execute-category request: a path or a tool name says nothing about what a
/// shell command will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub decision: RuleDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<KindMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A host the agent's process tree connects to (`api.github.com`,
    /// `host:port`, `*.domain`): the rule is about connections only
    /// (`policy::network`), and no other request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why the rule exists; shown with every decision it makes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Rule {
    /// A rule with this decision and no conditions (it matches everything).
    pub fn new(decision: RuleDecision) -> Rule {
        Rule {
            decision,
            agent: None,
            kind: None,
            tool: None,
            command: None,
            path: None,
            host: None,
            note: None,
        }
    }

    /// One line naming the rule and its note, for reasons and logs:
    /// `deny rule kind=read path="~/.ssh/**": keys stay private`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(agent) = &self.agent {
            parts.push(format!("agent={agent:?}"));
        }
        if let Some(kind) = self.kind {
            parts.push(format!("kind={kind}"));
        }
        if let Some(tool) = &self.tool {
            parts.push(format!("tool={tool:?}"));
        }
        if let Some(command) = &self.command {
            parts.push(format!("command={command:?}"));
        }
        if let Some(path) = &self.path {
            parts.push(format!("path={path:?}"));
        }
        if let Some(host) = &self.host {
            parts.push(format!("host={host:?}"));
        }
        if parts.is_empty() {
            parts.push("for everything".to_string());
        }
        let mut out = format!("{} rule {}", self.decision.as_str(), parts.join(" "));
        if let Some(note) = self.note.as_deref().filter(|n| !n.trim().is_empty()) {
            out.push_str(": ");
            out.push_str(note);
        }
        out
    }

    /// Whether the rule applies to the request (see the type's docs); a
    /// deny or ask rule that might apply only because the command cannot be
    /// read does not count here (see [`Rule::hit`]).
    pub(crate) fn matches(&self, facts: &Facts<'_>, agent: &str) -> bool {
        self.hit(facts, agent) == Hit::Yes
    }

    /// How the rule applies to the request. An allow rule never matches a
    /// request whose kind was guessed, that sets a variable which changes
    /// what runs (`PATH`, `LD_PRELOAD`, ... see `shell::hijacks_program`),
    /// or whose command cannot be read exactly. A deny or ask rule with
    /// `command` meets a request of the execute category whose command
    /// cannot be read (none, only the title, a program known at run time,
    /// a line the scanner does not understand, code it cannot read) as
    /// [`Hit::Unknown`]: it might match. A command taken from the title
    /// that matches is a match: the agent says it runs it.
    pub(crate) fn hit(&self, facts: &Facts<'_>, agent: &str) -> Hit {
        let allow = self.decision == RuleDecision::Allow;
        if self.agent.as_deref().is_some_and(|a| a != agent) {
            return Hit::No;
        }
        // A host rule is about connections, which `policy::network` decides.
        if self.host.is_some() {
            return Hit::No;
        }
        if allow && (facts.req.inferred_kind.is_some() || facts.hijack.is_some()) {
            return Hit::No;
        }
        if let Some(k) = self.kind {
            // Deny and ask rules also take a request of another kind that
            // carries a command (codex-acp's `search` running `rg`) as the
            // execute it is; and a path rule of a read or write kind as a
            // call that reads (and, unless every program of it only reads,
            // writes) what its command names.
            let touches = self.path.is_some()
                && facts.command.is_some()
                && match k.category() {
                    Category::Read => true,
                    Category::Write => !facts.only_reads,
                    _ => false,
                };
            let inferred = !allow
                && (facts.req.inferred_kind.is_some_and(|i| k.matches(i))
                    || (facts.command.is_some() && k.matches(ToolKind::Execute))
                    || touches);
            if !k.matches(facts.req.kind) && !inferred {
                return Hit::No;
            }
        }
        if allow
            && self.kind.is_none()
            && self.command.is_none()
            && facts.category == Category::Execute
        {
            return Hit::No;
        }
        if let Some(pattern) = &self.tool
            && !name_matches(pattern, &facts.tool)
        {
            return Hit::No;
        }
        let mut unknown = false;
        if let Some(pattern) = &self.command {
            let hit = match (&facts.command, &facts.line) {
                (Some(_), Some(line)) if allow => {
                    // Allow rules match the commands as written: `sudo cargo
                    // test` is not covered by `cargo test *`.
                    let mut written = line.commands.iter().filter(|c| !c.derived).peekable();
                    facts.category == Category::Execute
                        && facts.exact
                        && !facts.disagree
                        && !line.writes_file
                        && !line.unknown()
                        && written.peek().is_some()
                        && written.all(|c| command_matches(pattern, &c.text))
                }
                // Deny and ask rules: any command of any reading (the
                // title's too: what the agent says it runs is enough).
                (Some(command), Some(line)) => std::iter::once((command, line))
                    .chain(facts.others.iter().map(|(text, line)| (text, line)))
                    .any(|(command, line)| line_hits(pattern, command, line)),
                _ => false,
            };
            if !hit {
                if allow || !facts.unknown {
                    return Hit::No;
                }
                unknown = true;
            }
        }
        if let Some(pattern) = &self.path {
            let pattern = glob::normalize_pattern(pattern, facts.home, facts.cwd.as_ref());
            let hit = |p: &String| path_matches(&pattern, p);
            let args = &facts.args;
            if allow {
                // Every path, the command's arguments included; none that
                // warden cannot read.
                let all = facts.paths.iter().chain(&args.paths).all(hit);
                if facts.paths.is_empty() || !all || args.unreadable || !args.dirs.is_empty() {
                    return Hit::No;
                }
            } else if !facts.paths.iter().chain(&args.paths).any(hit) {
                // A search over a directory that holds what the rule names
                // reads into it, as may any command naming one, or a path
                // warden cannot read: it might match.
                let holds = |p: &String| holds_pattern(p, &pattern);
                let search = facts.req.kind == ToolKind::Search && facts.paths.iter().any(holds);
                let named = args.paths.iter().chain(&args.dirs).any(holds);
                if !(search || named || args.unreadable) {
                    return Hit::No;
                }
                unknown = true;
            }
        }
        if unknown { Hit::Unknown } else { Hit::Yes }
    }
}

/// Whether a deny or ask command glob meets one reading of a command: the
/// whole line, or any command of it as written, without its assignments,
/// or in its plain form.
fn line_hits(pattern: &str, command: &str, line: &ShellLine) -> bool {
    command_matches(pattern, command)
        || line.commands.iter().any(|c| {
            [Some(&c.text), c.bare.as_ref(), c.plain.as_ref()]
                .into_iter()
                .flatten()
                .any(|text| command_matches(pattern, text))
        })
}

/// Whether the directory `dir` holds paths the normalised path glob
/// `pattern` names: it is the glob's literal leading directory or one of
/// its ancestors. A glob starting with `**` has none and says nothing here.
fn holds_pattern(dir: &str, pattern: &str) -> bool {
    if !pattern.starts_with('/') {
        return false;
    }
    let literal = &pattern[..pattern.find(['*', '?', '\\']).unwrap_or(pattern.len())];
    let base = literal.rfind('/').map_or("", |i| &literal[..i]);
    let dir = dir.trim_end_matches('/');
    dir.is_empty() || base == dir || base.starts_with(&format!("{dir}/"))
}

/// How a rule relates to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    /// The rule does not apply.
    No,
    /// The rule applies.
    Yes,
    /// A deny or ask command rule that applies if the command the request
    /// cannot show is the one it names: the request asks.
    Unknown,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What rules look at, worked out once per decision.
#[derive(Debug)]
pub(crate) struct Facts<'a> {
    pub(crate) req: &'a RequestView,
    pub(crate) category: Category,
    pub(crate) tool: String,
    pub(crate) command: Option<String>,
    pub(crate) line: Option<ShellLine>,
    /// The other readings of the command (see
    /// [`RequestView::other_commands`]), each with its line.
    pub(crate) others: Vec<(String, ShellLine)>,
    /// The command is read as it will run ([`RequestView::command_exact`]):
    /// allow rules may match it.
    pub(crate) exact: bool,
    /// `rawInput` holds commands that differ: no allow rule covers them.
    pub(crate) disagree: bool,
    /// The request may run a command nobody can read (see [`Rule::hit`]).
    pub(crate) unknown: bool,
    /// Every program of every reading only reads (`cat`, `rg`, ...).
    pub(crate) only_reads: bool,
    /// A variable the request sets (in its environment or on its command
    /// line) that changes what runs: no allow rule covers it.
    pub(crate) hijack: Option<String>,
    /// The request's paths, normalised.
    pub(crate) paths: Vec<String>,
    /// The paths its command names in its arguments.
    pub(crate) args: ArgPaths,
    pub(crate) home: Option<&'a Path>,
    /// The request's own working directory, else the session's.
    pub(crate) cwd: Cow<'a, Path>,
}

/// The paths a command's arguments name (see [`arg_paths`]).
#[derive(Debug, Default)]
pub(crate) struct ArgPaths {
    /// Arguments read as paths: `~` expanded, relative to the cwd,
    /// normalised (a word that is no path is harmless here).
    pub(crate) paths: Vec<String>,
    /// Directories a glob argument reads (`~/.ss*` reads in `~`), and the
    /// cwd of a program that searches it when given no path (`rg x`).
    pub(crate) dirs: Vec<String>,
    /// An argument warden cannot read (`$HOME/.ssh`, `$(..)`), or a
    /// command it cannot read at all: it may name any path.
    pub(crate) unreadable: bool,
}

impl<'a> Facts<'a> {
    pub(crate) fn new(req: &'a RequestView, home: Option<&'a Path>, cwd: &'a Path) -> Facts<'a> {
        let command = req.command();
        let line = command.as_deref().map(shell::parse);
        // Variables of the environment that name a command to run
        // (`GIT_SSH_COMMAND`, `PAGER`, ...) are one more reading.
        let env_commands = req
            .env()
            .into_iter()
            .filter(|(name, _)| shell::hijacks_program(name))
            .map(|(_, value)| value);
        let others: Vec<(String, ShellLine)> = req
            .other_commands()
            .into_iter()
            .chain(env_commands)
            .map(|c| {
                let line = shell::parse(&c);
                (c, line)
            })
            .collect();
        let exact = req.command_exact();
        let category = req.category();
        // Deny and ask rules count a command not from `rawInput` as unknown.
        let unknown = match &line {
            Some(line) => {
                !req.command_from_input()
                    || std::iter::once(line)
                        .chain(others.iter().map(|(_, l)| l))
                        .any(|l| l.unknown() || l.runs_code())
            }
            None => category == Category::Execute,
        };
        let hijack = req
            .env()
            .into_iter()
            .map(|(name, _)| name)
            .find(|name| shell::hijacks_program(name))
            .or_else(|| {
                line.iter()
                    .chain(others.iter().map(|(_, l)| l))
                    .find_map(ShellLine::hijacking_assignment)
            });
        let cwd: Cow<'a, Path> = match req.cwd() {
            Some(own) => Cow::Owned(Path::new(&glob::normalize_path(own, home, cwd)).to_path_buf()),
            None => Cow::Borrowed(cwd),
        };
        let lines: Vec<&ShellLine> = line.iter().chain(others.iter().map(|(_, l)| l)).collect();
        let mut args = ArgPaths {
            unreadable: unknown && (line.is_some() || category == Category::Execute),
            ..ArgPaths::default()
        };
        // Relative paths are taken from the cwd, and from every directory a
        // `cd` or `pushd` of the line moves to, itself taken from each
        // directory before it (`cd a; cd b; cd ../../../x`).
        let mut dirs = vec![cwd.to_path_buf()];
        for command in lines.iter().flat_map(|l| &l.commands) {
            if !matches!(command.program(), Some("cd" | "pushd")) {
                continue;
            }
            if dirs.len() > MAX_CD_DIRS {
                // Each `cd` may double them: stop here (see below).
                break;
            }
            let plain = command.plain.as_deref().unwrap_or_default();
            let target = plain.split(' ').skip(1).find(|w| !w.starts_with('-'));
            match (target, home) {
                (Some(target), _) => {
                    let from: Vec<PathBuf> = dirs.clone();
                    for dir in from {
                        let to = Path::new(&glob::normalize_path(target, home, &dir)).to_path_buf();
                        if !dirs.contains(&to) {
                            dirs.push(to);
                        }
                    }
                }
                (None, Some(home)) => dirs.push(home.to_path_buf()),
                (None, None) => args.unreadable = true,
            }
            args.unreadable |= plain.split(' ').skip(1).any(|w| w == "-");
        }
        // `~` and a bare `cd` follow `HOME`, and `cd` searches `CDPATH`: a
        // line that names either may set it, so a path may lead anywhere.
        args.unreadable |= lines
            .iter()
            .flat_map(|l| &l.commands)
            .any(|c| names_variable(&c.text, "HOME") || names_variable(&c.text, "CDPATH"));
        if dirs.len() > MAX_CD_DIRS {
            // Too many to follow: a relative path may lead anywhere.
            dirs.truncate(1);
            args.unreadable = true;
        }
        // A command a wrapper runs (`sudo rm x`: `rm x`) is the end of the
        // wrapper's own text, whose words were read already.
        let seen = |line: &ShellLine, command: &shell::Command| {
            command.derived
                && line
                    .commands
                    .iter()
                    .any(|c| !std::ptr::eq(c, command) && c.text.ends_with(&command.text))
        };
        for dir in &dirs {
            for line in &lines {
                for command in &line.commands {
                    arg_paths(command, home, dir, seen(line, command), &mut args);
                }
            }
        }
        let mut unique = std::collections::HashSet::new();
        args.paths.retain(|p| unique.insert(p.clone()));
        let mut unique = std::collections::HashSet::new();
        args.dirs.retain(|p| unique.insert(p.clone()));
        let only_reads = !lines.is_empty()
            && lines.iter().all(|l| {
                !l.writes_file
                    && !l.unknown()
                    && !l.commands.is_empty()
                    && l.commands.iter().all(super::only_reads)
            });
        Facts {
            req,
            category,
            tool: req.tool(),
            line,
            others,
            command,
            exact,
            disagree: req.commands_disagree(),
            unknown,
            only_reads,
            hijack,
            paths: req
                .paths()
                .iter()
                .map(|p| glob::normalize_path(p, home, &cwd))
                .collect(),
            args,
            home,
            cwd,
        }
    }
}

/// Whether `text` holds `name` as a whole identifier (`HOME=x`, `export
/// HOME`, `for HOME in`, `read HOME`), not as part of one (`HOMEWORK`).
fn names_variable(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + name.len()..].chars().next().is_some_and(ident)
    })
}

/// A path through a process's magic links in `/proc`, as the kernel
/// follows them: `/proc/self/root/X` is `/X`, `/proc/self/cwd/X` is `X` in
/// the command's cwd (also for `thread-self` and a pid). `Some(None)` for
/// one warden cannot follow (`fd/N`, `exe`, `map_files`, another link);
/// `None` for a path that is not one.
fn through_proc(path: &str, cwd: &Path) -> Option<Option<String>> {
    let rest = path.strip_prefix("/proc/")?;
    let (process, rest) = rest.split_once('/')?;
    let process_like = matches!(process, "self" | "thread-self")
        || (!process.is_empty() && process.chars().all(|c| c.is_ascii_digit()));
    if !process_like {
        return None;
    }
    let (link, rest) = rest.split_once('/').unwrap_or((rest, ""));
    Some(match link {
        "root" => Some(format!("/{rest}")),
        "cwd" => Some(cwd.join(rest).display().to_string()),
        "fd" | "exe" | "map_files" | "task" | "fdinfo" => None,
        _ => return None,
    })
}

/// The most directories (the cwd and the line's `cd`s) relative paths are
/// read from; past it, they count as unreadable.
const MAX_CD_DIRS: usize = 16;

/// Programs that read a whole directory tree, the cwd when given no path.
const TREE_READERS: &[&str] = &[
    "rg", "ag", "ack", "grep", "egrep", "fgrep", "fd", "fdfind", "find", "tree", "du", "tar",
    "zip", "rsync", "git",
];

/// The paths one command's arguments name, added to `out`: every word
/// after the program (an option's `=VALUE`, a redirection's target),
/// unquoted, `~` expanded, taken from `cwd`. A word the shell expands
/// (`$X`, `$(..)`) is unreadable; a glob reads its literal directory.
fn arg_paths(
    command: &shell::Command,
    home: Option<&Path>,
    cwd: &Path,
    words_seen: bool,
    out: &mut ArgPaths,
) {
    let text = &command.text;
    let spans = shell::words(text);
    let Some(at) = spans
        .iter()
        .position(|&(s, e)| !shell::is_assignment(&text[s..e]))
    else {
        return;
    };
    if command.program().is_some_and(|p| TREE_READERS.contains(&p)) {
        out.dirs.push(glob::normalize_path(".", home, cwd));
    }
    if words_seen {
        return;
    }
    let mut skip_next = false;
    for &(s, e) in &spans[at + 1..] {
        let mut word = &text[s..e];
        if std::mem::take(&mut skip_next) {
            continue;
        }
        // A redirection: its target is a path, a here-document's
        // delimiter is not.
        let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let op = word[digits..]
            .chars()
            .take_while(|c| matches!(c, '<' | '>' | '&' | '|'))
            .count();
        if op > 0 {
            let operator = &word[digits..digits + op];
            if operator.starts_with("<<") && operator != "<<<" {
                skip_next = digits + op == word.len();
                continue;
            }
            word = &word[digits + op..];
            if operator == "<<<" || word.is_empty() {
                continue;
            }
        } else if word.starts_with('-') {
            match word.split_once('=') {
                Some((_, value)) => word = value,
                None => continue,
            }
        }
        if word.is_empty() {
            continue;
        }
        if shell::is_static(word) {
            let path = shell::unquote(word);
            match through_proc(&path, cwd) {
                _ if path.is_empty() => {}
                Some(Some(real)) => out.paths.push(glob::normalize_path(&real, home, cwd)),
                Some(None) => out.unreadable = true,
                None => out.paths.push(glob::normalize_path(&path, home, cwd)),
            }
        } else if word.contains(['$', '`']) {
            out.unreadable = true;
        } else {
            // A glob or a brace expansion: the directory before it.
            let literal = &word[..word.find(['*', '?', '[', '{']).unwrap_or(word.len())];
            let dir = literal.rfind('/').map_or(".", |i| &literal[..i.max(1)]);
            out.dirs
                .push(glob::normalize_path(&shell::unquote(dir), home, cwd));
        }
    }
}

#[cfg(test)]
#[path = "rule_unit_tests.rs"]
mod tests;

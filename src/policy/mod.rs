//! The permission decision: pure, no IO.
//!
//! [`decide`] takes a permission request (as a [`RequestView`]) and the
//! chat's [`Context`] (mode, agent, rules, "allow for this chat" grants) and
//! answers [`Decision::Allow`], [`Decision::Deny`] or [`Decision::Ask`]. The
//! order, first match wins (DESIGN.md, "Permission model"):
//!
//! 1. a `switch_mode` request, or an elicitation sent as a permission
//!    request (codex-acp's `elicitation-...` tool calls): ask;
//! 2. Plan mode and the category is not read: deny ("plan mode");
//! 3. a deny rule matches: deny (one that only might match, because the
//!    command or a path it names cannot be read, asks instead, naming the
//!    rule; with nobody there to ask, [`Context::unattended`], it denies);
//! 4. an ask rule matches or might match: ask;
//! 5. the agent has bypass: allow;
//! 6. Auto mode: allow;
//! 7. an allow rule or a chat grant matches: allow;
//! 8. read category: allow;
//! 9. otherwise: ask (unattended, a call that sets a variable which
//!    changes what runs is denied instead).
//!
//! An automatic allow answers with the agent's `allow_once` option, never
//! `allow_always` (which may make the agent stop asking, so that its later
//! calls never reach warden); without an `allow_once` it becomes an ask. An
//! automatic deny answers with `reject_once`, else `reject_always`, else the
//! `cancelled` outcome. What the user picks on a card is mapped the same way
//! by [`sent_for`]: warden answers the agent only with options that keep it
//! asking.

pub(crate) mod agent_mode;
mod glob;
pub mod network;
mod options;
mod request;
mod rule;
mod shell;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::{AgentMode, OptionKind, PermissionOption, ToolKind};

pub use request::{
    CLIENT_NETWORK, CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE, RequestView, command_of_input,
    shell_join, shell_quote,
};
pub use rule::{KindMatch, Rule, RuleDecision, suggest_rule, wider_path};

pub(crate) use options::{
    Sent, allow_option, lasting, reject_option, sent_for, switch_allow_option,
};
use rule::{Facts, Hit};

/// A name in the settings or on the command line that the policy does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not `plan`, `default` or `auto`.
    #[error("unknown mode {0:?}: expected plan, default or auto")]
    Mode(String),
    /// Neither an ACP tool kind nor a category name.
    #[error(
        "unknown kind {0:?}: expected a category (read, write, execute, external) \
         or a tool kind (edit, delete, move, search, think, fetch, switch_mode, other)"
    )]
    Kind(String),
}

/// The chat's permission mode (seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The agent may only read and plan: every other call is refused.
    Plan,
    /// Reads run, everything else asks: the safe starting point of a chat.
    #[default]
    Default,
    /// Everything runs without asking, unless a rule says otherwise.
    Auto,
}

impl Mode {
    /// Every mode, in the order the dropdown and [`Mode::next`] use.
    pub(crate) const ALL: [Mode; 3] = [Mode::Plan, Mode::Default, Mode::Auto];

    /// The lowercase name (`plan`, `default`, `auto`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Default => "default",
            Mode::Auto => "auto",
        }
    }

    /// The capitalised name, for labels.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Mode::Plan => "Plan",
            Mode::Default => "Default",
            Mode::Auto => "Auto",
        }
    }

    /// The next mode when cycling: Plan -> Default -> Auto -> Plan.
    pub(crate) fn next(self) -> Mode {
        match self {
            Mode::Plan => Mode::Default,
            Mode::Default => Mode::Auto,
            Mode::Auto => Mode::Plan,
        }
    }
}

impl FromStr for Mode {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| ParseError::Mode(s.to_string()))
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool call may do, as far as the mode matrix is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// No side effects (read, search, think): allowed in every mode.
    Read,
    /// Changes files (edit, delete, move).
    Write,
    /// Runs commands; also unknown kinds, which could do anything.
    Execute,
    /// Reaches outside the machine (fetch).
    External,
    /// The agent asks to leave its plan mode: always the user's call.
    SwitchMode,
}

impl Category {
    /// The lowercase name (`read`, `write`, `execute`, `external`, `switch_mode`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Category::Read => "read",
            Category::Write => "write",
            Category::Execute => "execute",
            Category::External => "external",
            Category::SwitchMode => "switch_mode",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The category of an ACP tool kind (a missing kind arrives as `Other`).
pub(crate) fn category(kind: ToolKind) -> Category {
    match kind {
        ToolKind::Read | ToolKind::Search | ToolKind::Think => Category::Read,
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move => Category::Write,
        ToolKind::Execute | ToolKind::Other => Category::Execute,
        ToolKind::Fetch => Category::External,
        ToolKind::SwitchMode => Category::SwitchMode,
    }
}

/// What the policy knows about the agent behind a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentPolicy {
    /// The agent's identity: its name in the settings (`[agents.NAME]`),
    /// else the one its command gives. The only name an allow rule's
    /// `agent` matches.
    pub name: String,
    /// `bypass_permissions = true`: allow what no rule denies or asks about.
    pub bypass: bool,
    /// The other names it goes by or went by (what it calls itself, the
    /// name its command gives): deny and ask rules naming any of them apply
    /// too, so that no renaming escapes them.
    pub aliases: Vec<String>,
    /// No settings block binds its name to it (an agent started with `--
    /// CMD` named by its command, which another agent's command may give
    /// too): no allow rule naming an agent applies to it.
    pub unbound: bool,
}

impl AgentPolicy {
    /// Every name a deny or ask rule's `agent` may name it by.
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// "Allow for this chat": later calls like this one run without asking, in
/// this chat only, until it ends or the grant is revoked (Ctrl+G).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatGrant {
    pub kind: ToolKind,
    pub tool: String,
    /// For a call that runs a command: which commands. `None`: every call of
    /// this kind and tool (edits, fetches, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<GrantCommands>,
    /// For a connection: the host and port it covers (`host:port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The commands a grant on an execute call covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantCommands {
    /// A line is covered when every command it runs matches one of these.
    Matching(Vec<GrantCommand>),
    /// warden could not read the command: the grant answered its own card
    /// and covers nothing else.
    Unreadable,
}

/// One command pattern of a grant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GrantCommand {
    /// The program and subcommand (`cargo test`), or the whole command.
    pub text: String,
    /// `true`: any command starting with these words (`cargo test --lib`);
    /// `false`: exactly this command (one run through a wrapper, ...).
    pub prefix: bool,
}

impl GrantCommand {
    fn matches(&self, command: &str) -> bool {
        if self.prefix {
            glob::command_matches(&format!("{} *", glob::escape(&self.text)), command)
        } else {
            command.trim() == self.text
        }
    }

    fn describe(&self) -> String {
        if self.prefix {
            format!("`{} …`", self.text)
        } else {
            format!("exactly `{}`", self.text)
        }
    }
}

impl ChatGrant {
    /// The grant "allow for this chat" on this request makes: for a command,
    /// the program and subcommand of each command of the line (`cargo test`
    /// for `cargo test --lib`), or the exact command when it runs through a
    /// wrapper (`sudo`, `bash -c`, `python3`, ...); nothing beyond this
    /// request when warden cannot read the command. Other calls: the kind
    /// and the tool.
    pub(crate) fn for_request(req: &RequestView) -> ChatGrant {
        let commands = (req.category() == Category::Execute).then(|| {
            if !any_command_allowed(req.kind, req) {
                // Only the title says what runs, the kind was guessed, or
                // the line is one no allow rule covers: this card only.
                return GrantCommands::Unreadable;
            }
            match req.command().as_deref().map(rule::command_scopes) {
                Some(Some(scopes)) => GrantCommands::Matching(
                    scopes
                        .into_iter()
                        .map(|scope| match scope {
                            rule::CommandScope::Prefix(text) => GrantCommand { text, prefix: true },
                            rule::CommandScope::Exact(text) => GrantCommand {
                                text,
                                prefix: false,
                            },
                        })
                        .collect(),
                ),
                _ => GrantCommands::Unreadable,
            }
        });
        ChatGrant {
            kind: req.kind,
            tool: req.tool(),
            commands,
            host: network::target(req).map(|(host, port)| format!("{host}:{port}")),
        }
    }

    /// Whether the grant covers the request: same kind, same tool, and for a
    /// command, every command of the line matches the grant (and the line is
    /// one an allow rule could cover at all: no redirection to a file, no
    /// part the scanner could not read).
    pub(crate) fn covers(&self, req: &RequestView) -> bool {
        if self.kind != req.kind || self.tool != req.tool() {
            return false;
        }
        // A connection's grant covers its host and port only; no other
        // request's grant covers a connection.
        if self.host.is_some() || req.card == crate::gate::CardKind::Network {
            let target = network::target(req).map(|(host, port)| format!("{host}:{port}"));
            return self.host.is_some() && self.host == target;
        }
        let patterns = match &self.commands {
            None => return req.category() != Category::Execute,
            Some(GrantCommands::Unreadable) => return false,
            Some(GrantCommands::Matching(patterns)) => patterns,
        };
        let Some(command) = req.command() else {
            return false;
        };
        if !any_command_allowed(self.kind, req) {
            return false;
        }
        let line = shell::parse(&command);
        let mut written = line.commands.iter().filter(|c| !c.derived).peekable();
        written.peek().is_some() && written.all(|c| patterns.iter().any(|p| p.matches(&c.text)))
    }

    /// Exactly what the grant covers: "`cargo test …` commands via `Bash`
    /// in this chat", "edit calls of the tool `Edit` in this chat".
    pub(crate) fn describe(&self) -> String {
        if let Some(host) = &self.host {
            return format!(
                "connections to {} in this chat",
                crate::sanitize::one_line(host)
            );
        }
        match &self.commands {
            None => format!(
                "{} calls of the tool `{}` in this chat",
                self.kind.as_str(),
                self.tool
            ),
            Some(GrantCommands::Unreadable) => format!(
                "this request of `{}` only (warden cannot read its command exactly, or it changes what runs)",
                self.tool
            ),
            Some(GrantCommands::Matching(patterns)) => format!(
                "{} commands via `{}` in this chat",
                patterns
                    .iter()
                    .map(GrantCommand::describe)
                    .collect::<Vec<_>>()
                    .join(", "),
                self.tool
            ),
        }
    }
}

/// What an allow rule for any command of this kind would say of the
/// request: `false` when the command is only in the title, the kind was
/// guessed, it sets a variable that changes what runs, or the scanner
/// refuses the line (redirections, opaque parts).
fn any_command_allowed(kind: ToolKind, req: &RequestView) -> bool {
    let mut any = Rule::new(RuleDecision::Allow);
    any.kind = Some(KindMatch::Kind(kind));
    any.command = Some("*".to_string());
    any.matches(&Facts::new(req, None, Path::new("/")), "")
}

/// Who or what made a decision; shown in the transcript and the decision log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The chat is in Plan mode, which refuses every non-read call.
    Plan,
    /// A rule from the settings file.
    Rule,
    /// The agent is trusted with `bypass_permissions`.
    Bypass,
    /// The chat is in Auto mode.
    Auto,
    /// An "allow for this chat" grant.
    #[serde(rename = "chat grant")]
    ChatGrant,
    /// Reads are allowed in every mode.
    Read,
    /// The user answered the card.
    User,
    /// The user answered the card from another device (`src/remote/`).
    Remote,
    /// `warden exec --on-ask allow|deny` answered the card: a standing
    /// answer given on the command line, not a person looking at it.
    #[serde(rename = "on-ask")]
    OnAsk,
}

impl Source {
    /// The name in the transcript and the log (`chat grant` has a space).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Plan => "plan",
            Source::Rule => "rule",
            Source::Bypass => "bypass",
            Source::Auto => "auto",
            Source::ChatGrant => "chat grant",
            Source::Read => "read",
            Source::User => "user",
            Source::Remote => "remote",
            Source::OnAsk => "on-ask",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Decision {
    /// Answer now with this allow option of the agent's.
    Allow {
        option_id: String,
        source: Source,
        reason: String,
    },
    /// Answer now with this reject option; `None` answers the `cancelled`
    /// outcome (the agent offered no reject option).
    Deny {
        option_id: Option<String>,
        source: Source,
        reason: String,
    },
    /// Put the request in front of the user.
    Ask { reason: String },
}

impl Decision {
    #[cfg(test)]
    /// Why, in a few words.
    pub(crate) fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason, .. }
            | Decision::Deny { reason, .. }
            | Decision::Ask { reason } => reason,
        }
    }
}

/// Everything besides the request that a decision depends on.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub mode: Mode,
    pub agent: &'a AgentPolicy,
    /// Rules in settings order; the first matching deny, ask or allow rule
    /// is the one named in the reason.
    pub rules: &'a [Rule],
    /// This chat's "allow for this chat" grants.
    pub grants: &'a [ChatGrant],
    /// The home directory, for `~` in rules and paths.
    pub home: Option<&'a Path>,
    /// The session's working directory, for relative paths.
    pub cwd: &'a Path,
    /// Nobody is there to answer a card (`warden exec`): where a deny rule
    /// might match a command warden cannot read, or the call sets a
    /// variable that changes what runs, it is refused, whatever `--on-ask`.
    pub unattended: bool,
}

/// Decide a permission request (see the module docs for the order).
pub fn decide(req: &RequestView, cx: &Context) -> Decision {
    // A connection is the sandbox's business, not the mode's.
    if req.card == crate::gate::CardKind::Network {
        return network::decide(req, cx);
    }
    let category = req.category();
    if category == Category::SwitchMode {
        return Decision::Ask {
            reason: "leaving the agent's plan mode is always the user's call".to_string(),
        };
    }
    // The request's facts (its command line parsed once), for every step.
    let facts = Facts::new(req, cx.home, cx.cwd);
    // A read or search that runs a command (codex-acp) is a read only when
    // every program of the line only reads; one that carries a diff writes.
    let runs_more = category == Category::Read && runs_more_than_reads(&facts);
    let writes = category == Category::Read && !req.diff_paths.is_empty();
    let category = if runs_more {
        Category::Execute
    } else if writes {
        Category::Write
    } else {
        category
    };
    let runs_more = runs_more || writes;
    if req.card.always_asks() {
        return Decision::Ask {
            reason: "an elicitation (a sign-in page or a form the agent wants answered) \
                     is always the user's call"
                .to_string(),
        };
    }
    if cx.mode == Mode::Plan && category != Category::Read {
        let why = if runs_more {
            "plan mode; it does more than read"
        } else {
            "plan mode"
        };
        return deny(req, Source::Plan, why.to_string());
    }
    if let Some(decision) = gate(&facts, cx) {
        return decision;
    }
    // An allow rule naming an agent applies only to the agent a block binds
    // to that name.
    let matching = |decision: RuleDecision| {
        cx.rules
            .iter()
            .filter(move |r| r.decision == decision)
            .filter(|r| r.agent.is_none() || !cx.agent.unbound)
            .find(|r| r.matches(&facts, &cx.agent.name))
    };
    if cx.agent.bypass {
        return allow(req, Source::Bypass, format!("bypass for {}", cx.agent.name));
    }
    if cx.mode == Mode::Auto {
        return allow(req, Source::Auto, "auto mode".to_string());
    }
    // A read that runs more than reads is judged as what it runs: no rule
    // or grant of its read kind, tool or paths speaks for its command.
    if !runs_more && let Some(rule) = matching(RuleDecision::Allow) {
        return allow(req, Source::Rule, rule.describe());
    }
    if let Some(grant) = cx.grants.iter().find(|g| !runs_more && g.covers(req)) {
        return allow(
            req,
            Source::ChatGrant,
            format!("allowed for {}", grant.describe()),
        );
    }
    if category == Category::Read {
        return allow(req, Source::Read, "reads are allowed".to_string());
    }
    if let Some(var) = &facts.hijack
        && cx.unattended
    {
        return deny(
            req,
            Source::User,
            format!(
                "it sets {var}, which changes what runs: only a person may allow that, \
                 and nobody is here to ask"
            ),
        );
    }
    let mut reason = format!("{category} calls ask in {} mode", cx.mode);
    if runs_more {
        reason = format!(
            "a {} that does more than read (a command, a diff) asks in {} mode",
            req.kind.as_str(),
            cx.mode
        );
    }
    if let Some(var) = &facts.hijack {
        reason.push_str(&format!("; it sets {var}, which no allow rule covers"));
    } else if category == Category::Execute
        && (!facts.exact || facts.line.as_ref().is_none_or(|l| l.unknown()))
    {
        reason.push_str(if facts.command.is_some() && !facts.exact {
            "; its command is only in a title warden cannot take apart, which no allow rule covers"
        } else {
            "; warden cannot read all of its command, so no allow rule covers it"
        });
    }
    Decision::Ask { reason }
}

/// Programs a read or search request may run and still be a read: they
/// read files and print, and take no option that writes or runs another
/// program (checked in [`only_reads`]).
const READ_PROGRAMS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "nl", "rg", "grep", "egrep", "fgrep", "ag", "pwd", "stat",
    "du", "df", "echo", "printf", "which", "realpath", "basename", "dirname", "cut", "diff", "cmp",
    "true",
];

/// `git` subcommands that only read.
const GIT_READS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "ls-files",
    "blame",
    "rev-parse",
    "grep",
];

/// Whether a request of the read category carries a command (as codex-acp
/// sends for `ls` or `rg`) that may do more than read: a line warden cannot
/// read, one that writes a file or sets a variable which changes what runs,
/// or a program outside [`READ_PROGRAMS`].
fn runs_more_than_reads(facts: &Facts<'_>) -> bool {
    let Some(line) = &facts.line else {
        return false;
    };
    facts.hijack.is_some()
        || line.writes_file
        || line.unknown()
        || line.commands.is_empty()
        || !line.commands.iter().all(only_reads)
}

/// One command of a read's line that only reads (see [`READ_PROGRAMS`]).
fn only_reads(command: &shell::Command) -> bool {
    let Some(plain) = &command.plain else {
        return false;
    };
    let words: Vec<&str> = plain.split_whitespace().collect();
    let Some(program) = words.first() else {
        return false;
    };
    let options_ok = |bad: &[&str]| {
        !words[1..]
            .iter()
            .any(|w| bad.iter().any(|b| w.starts_with(b)))
    };
    match *program {
        "git" => {
            words.get(1).is_some_and(|sub| GIT_READS.contains(sub))
                && options_ok(&["--output", "--ext-diff", "--open-files-in-pager", "-O"])
        }
        "rg" => options_ok(&["--pre"]),
        program => READ_PROGRAMS.contains(&program),
    }
}

/// Steps 3 and 4 of [`decide`]: what the deny and ask rules say about the
/// request, whatever else would allow it. `None` when no such rule applies.
/// Also checked on a call that an earlier allowed request covers.
///
/// A deny or ask rule that might match a command (or a path) warden cannot
/// read (see `Rule::hit`) makes the request ask, naming the rule, even in
/// Auto and with bypass: it may well be another command, so the user
/// decides. With nobody there to decide ([`Context::unattended`]) such a
/// deny rule refuses it.
///
/// A call that sets a variable which changes what runs is never covered
/// by an earlier approval either: it asks (headless: is refused).
pub(crate) fn rule_gate(req: &RequestView, cx: &Context) -> Option<Decision> {
    let facts = Facts::new(req, cx.home, cx.cwd);
    gate(&facts, cx).or_else(|| {
        let var = facts.hijack.as_ref()?;
        let reason =
            format!("it sets {var}, which changes what runs: no earlier approval covers it");
        Some(if cx.unattended {
            deny(req, Source::User, reason)
        } else {
            Decision::Ask { reason }
        })
    })
}

/// [`rule_gate`] on the request's facts, built once by the caller.
fn gate(facts: &Facts<'_>, cx: &Context) -> Option<Decision> {
    let req = facts.req;
    // Deny and ask rules apply by any name the agent has or had.
    let first = |decision: RuleDecision, hit: Hit| {
        cx.rules
            .iter()
            .filter(move |r| r.decision == decision)
            .find(|r| cx.agent.names().any(|name| r.hit(facts, name) == hit))
    };
    if let Some(rule) = first(RuleDecision::Deny, Hit::Yes) {
        return Some(deny(req, Source::Rule, rule.describe()));
    }
    if let Some(rule) = first(RuleDecision::Deny, Hit::Unknown) {
        let unread = unread(facts, rule);
        if cx.unattended {
            return Some(deny(
                req,
                Source::Rule,
                format!(
                    "{}; {unread}, so it might match, and nobody is here to ask",
                    rule.describe()
                ),
            ));
        }
        return Some(Decision::Ask {
            reason: format!("{unread}; {} might match", rule.describe()),
        });
    }
    if let Some(rule) = first(RuleDecision::Ask, Hit::Yes) {
        return Some(Decision::Ask {
            reason: rule.describe(),
        });
    }
    first(RuleDecision::Ask, Hit::Unknown).map(|rule| Decision::Ask {
        reason: format!("{}; {} might match", unread(facts, rule), rule.describe()),
    })
}

/// Why a deny or ask rule only might match the request (`Hit::Unknown`).
fn unread(facts: &Facts<'_>, rule: &Rule) -> &'static str {
    if rule.command.is_some() || rule.path.is_none() {
        if facts.command.is_some() && !facts.req.command_from_input() {
            "command only in the title"
        } else {
            "command cannot be read"
        }
    } else if facts.args.unreadable {
        "warden cannot read every path its command names"
    } else {
        "it reads a directory that holds what the rule names"
    }
}

/// A path as the rules see it: `~` expanded, relative to `cwd`, `.` and
/// `..` resolved lexically, `file:` URIs decoded.
pub(crate) fn normalize_path(path: &str, home: Option<&Path>, cwd: &Path) -> String {
    glob::normalize_path(path, home, cwd)
}

/// A path as sent, made absolute the way the rules read it (`file:` URIs
/// decoded, `~` and `~NAME` expanded, relative to `cwd`) but with its `..`
/// kept, for resolving on disk.
pub(crate) fn expand_path(path: &str, home: Option<&Path>, cwd: &Path) -> String {
    glob::expand_path(path, home, cwd)
}

fn allow(req: &RequestView, source: Source, reason: String) -> Decision {
    match allow_option(&req.options) {
        Some(option) => Decision::Allow {
            option_id: option.id.clone(),
            source,
            reason,
        },
        None if req.options.iter().any(lasting) => Decision::Ask {
            reason: format!(
                "{reason}, but the agent offers only 'Always allow', which may stop it asking"
            ),
        },
        None => Decision::Ask {
            reason: format!("{reason}, but the agent offered no allow option"),
        },
    }
}

fn deny(req: &RequestView, source: Source, reason: String) -> Decision {
    Decision::Deny {
        option_id: reject_option(&req.options).map(|o| o.id.clone()),
        source,
        reason,
    }
}

#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod rule_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod attack_tests;

#[cfg(test)]
mod holes_tests;

#[cfg(test)]
mod attack2_tests;

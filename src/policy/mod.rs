//! The permission decision: pure, no IO.
//!
//! [`decide`] takes a permission request (as a [`RequestView`]) and the
//! chat's [`Context`] (mode, agent, rules, "allow for this chat" grants) and
//! answers [`Decision::Allow`], [`Decision::Deny`] or [`Decision::Ask`]. The
//! order, first match wins (DESIGN.md, "Permission model"):
//!
//! 1. a `switch_mode` request: ask;
//! 2. Plan mode and the category is not read: deny ("plan mode");
//! 3. a deny rule matches: deny (one that only might match, because the
//!    command cannot be read, asks instead);
//! 4. an ask rule matches or might match: ask;
//! 5. the agent has bypass: allow;
//! 6. Auto mode: allow;
//! 7. an allow rule or a chat grant matches: allow;
//! 8. read category: allow;
//! 9. otherwise: ask.
//!
//! An automatic allow answers with the agent's `allow_once` option, else its
//! `allow_always`; when the agent offered no allow option at all it becomes
//! an ask. An automatic deny answers with `reject_once`, else
//! `reject_always`, else the `cancelled` outcome.

pub mod agent_mode;
mod glob;
mod request;
mod rule;
mod shell;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::{OptionKind, PermissionOption, ToolKind};

pub use request::RequestView;
pub use rule::{KindMatch, Rule, RuleDecision, suggest_rule};

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
    pub const ALL: [Mode; 3] = [Mode::Plan, Mode::Default, Mode::Auto];

    /// The lowercase name (`plan`, `default`, `auto`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Default => "default",
            Mode::Auto => "auto",
        }
    }

    /// The capitalised name, for labels.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Plan => "Plan",
            Mode::Default => "Default",
            Mode::Auto => "Auto",
        }
    }

    /// The next mode when cycling: Plan -> Default -> Auto -> Plan.
    pub fn next(self) -> Mode {
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
    pub fn as_str(self) -> &'static str {
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
pub fn category(kind: ToolKind) -> Category {
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
    /// The agent's name in the settings (`[agents.NAME]`), matched by `Rule::agent`.
    pub name: String,
    /// `bypass_permissions = true`: allow what no rule denies or asks about.
    pub bypass: bool,
}

/// "Allow for this chat": later calls of the same kind and the same tool run
/// without asking, in this chat only, until it ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatGrant {
    pub kind: ToolKind,
    pub tool: String,
}

impl ChatGrant {
    /// The grant "allow for this chat" on this request makes.
    pub fn for_request(req: &RequestView) -> ChatGrant {
        ChatGrant {
            kind: req.kind,
            tool: req.tool(),
        }
    }

    /// Whether the grant covers the request: same kind, same tool.
    pub fn covers(&self, req: &RequestView) -> bool {
        self.kind == req.kind && self.tool == req.tool()
    }

    /// Exactly what the grant covers: "execute calls of the tool `Bash` in this chat".
    pub fn describe(&self) -> String {
        format!(
            "{} calls of the tool `{}` in this chat",
            self.kind.as_str(),
            self.tool
        )
    }
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
}

impl Source {
    /// The name in the transcript and the log (`chat grant` has a space).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Plan => "plan",
            Source::Rule => "rule",
            Source::Bypass => "bypass",
            Source::Auto => "auto",
            Source::ChatGrant => "chat grant",
            Source::Read => "read",
            Source::User => "user",
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
    /// Why, in a few words.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason, .. }
            | Decision::Deny { reason, .. }
            | Decision::Ask { reason } => reason,
        }
    }

    /// Who decided; `None` for [`Decision::Ask`] (nobody yet).
    pub fn source(&self) -> Option<Source> {
        match self {
            Decision::Allow { source, .. } | Decision::Deny { source, .. } => Some(*source),
            Decision::Ask { .. } => None,
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
}

/// Decide a permission request (see the module docs for the order).
pub fn decide(req: &RequestView, cx: &Context) -> Decision {
    let category = req.category();
    if category == Category::SwitchMode {
        return Decision::Ask {
            reason: "leaving the agent's plan mode is always the user's call".to_string(),
        };
    }
    if cx.mode == Mode::Plan && category != Category::Read {
        return deny(req, Source::Plan, "plan mode".to_string());
    }
    if let Some(decision) = rule_gate(req, cx) {
        return decision;
    }
    let facts = Facts::new(req, cx.home, cx.cwd);
    let matching = |decision: RuleDecision| {
        cx.rules
            .iter()
            .filter(move |r| r.decision == decision)
            .find(|r| r.matches(&facts, &cx.agent.name))
    };
    if cx.agent.bypass {
        return allow(req, Source::Bypass, format!("bypass for {}", cx.agent.name));
    }
    if cx.mode == Mode::Auto {
        return allow(req, Source::Auto, "auto mode".to_string());
    }
    if let Some(rule) = matching(RuleDecision::Allow) {
        return allow(req, Source::Rule, rule.describe());
    }
    if let Some(grant) = cx.grants.iter().find(|g| g.covers(req)) {
        return allow(
            req,
            Source::ChatGrant,
            format!("allowed for {}", grant.describe()),
        );
    }
    if category == Category::Read {
        return allow(req, Source::Read, "reads are allowed".to_string());
    }
    let mut reason = format!("{category} calls ask in {} mode", cx.mode);
    if let Some(var) = &facts.hijack {
        reason.push_str(&format!("; it sets {var}, which no allow rule covers"));
    }
    Decision::Ask { reason }
}

/// Steps 3 and 4 of [`decide`]: what the deny and ask rules say about the
/// request, whatever else would allow it. `None` when no such rule applies.
/// Also checked on a call that an earlier allowed request covers.
///
/// A deny or ask command rule that might match a command warden cannot read
/// (see `Rule::hit`) makes the request ask, even in Auto and with bypass: it
/// is not refused, since it may well be another command.
pub fn rule_gate(req: &RequestView, cx: &Context) -> Option<Decision> {
    let facts = Facts::new(req, cx.home, cx.cwd);
    let first = |decision: RuleDecision, hit: Hit| {
        cx.rules
            .iter()
            .filter(move |r| r.decision == decision)
            .find(|r| r.hit(&facts, &cx.agent.name) == hit)
    };
    if let Some(rule) = first(RuleDecision::Deny, Hit::Yes) {
        return Some(deny(req, Source::Rule, rule.describe()));
    }
    let unread = if facts.command.is_some() && !facts.exact {
        "command only in the title"
    } else {
        "command cannot be read"
    };
    if let Some(rule) = first(RuleDecision::Deny, Hit::Unknown) {
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
        reason: format!("{unread}; {} might match", rule.describe()),
    })
}

/// The option an automatic allow answers with: `allow_once`, else
/// `allow_always` (never `allow_always` when `allow_once` exists).
pub fn allow_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    first_of(options, OptionKind::AllowOnce).or_else(|| first_of(options, OptionKind::AllowAlways))
}

/// The option an automatic deny answers with: `reject_once`, else `reject_always`.
pub fn reject_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    first_of(options, OptionKind::RejectOnce)
        .or_else(|| first_of(options, OptionKind::RejectAlways))
}

fn first_of(options: &[PermissionOption], kind: OptionKind) -> Option<&PermissionOption> {
    options.iter().find(|o| o.kind == kind)
}

fn allow(req: &RequestView, source: Source, reason: String) -> Decision {
    match allow_option(&req.options) {
        Some(option) => Decision::Allow {
            option_id: option.id.clone(),
            source,
            reason,
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
mod tests;

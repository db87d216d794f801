//! What warden says about its sandbox, pure (no IO, nothing of the
//! kernel): the footer's [`Badge`], and the denials a tool's output reports,
//! read against the agent's [`Profile`] ([`told`], [`told_terminal`],
//! [`explain_denial`], [`blocked_by`]). The state and the ui may name these;
//! the rest of `sandbox/` does IO.

use std::path::{Path, PathBuf};

use super::{Profile, SandboxMode};

/// What the footer says about the sandbox of a chat's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Badge {
    /// Confined, the workspace writable.
    Confined,
    /// Confined, the workspace read-only.
    ReadOnly,
    /// `mode = "off"`: the user turned it off.
    Off,
    /// The kernel cannot confine and `when_unavailable = "run-unconfined"`.
    Unconfined,
    /// Confined, the workspace writable, but this kernel leaves doors
    /// open that a newer one closes (`warden sandbox` names them).
    Partial,
    /// The same, the workspace read-only.
    PartialReadOnly,
    /// Confined on disk, the workspace writable, but the network is not
    /// walled (`network = "open"`, or neither a network namespace nor
    /// Landlock's network rules here): yellow.
    NetOpen,
    /// The same, the workspace read-only.
    NetOpenReadOnly,
}

impl Badge {
    /// The footer's words.
    pub fn label(self) -> &'static str {
        match self {
            Badge::Confined => "sandbox",
            Badge::ReadOnly => "sandbox: read-only",
            Badge::Off => "SANDBOX OFF",
            Badge::Unconfined => "UNCONFINED: no Landlock",
            Badge::Partial => "sandbox: partial",
            Badge::PartialReadOnly => "sandbox: read-only, partial",
            Badge::NetOpen => "sandbox: net open",
            Badge::NetOpenReadOnly => "sandbox: read-only, net open",
        }
    }

    /// The badge without the kernel's gaps: `Partial` is `Confined`.
    pub fn plain(self) -> Badge {
        match self {
            Badge::Partial | Badge::NetOpen => Badge::Confined,
            Badge::PartialReadOnly | Badge::NetOpenReadOnly => Badge::ReadOnly,
            other => other,
        }
    }

    /// Whether the agent's network is open (the footer shows it yellow).
    pub fn is_net_open(self) -> bool {
        matches!(self, Badge::NetOpen | Badge::NetOpenReadOnly)
    }

    /// Whether the agent runs with all the user's rights.
    pub fn is_unconfined(self) -> bool {
        matches!(self, Badge::Off | Badge::Unconfined)
    }
}

/// The transcript's line when the output of one of the agent's own tool
/// calls reads like a denial the sandbox made (the caller says each line
/// once per chat): which path, and what warden's sandbox does there. The
/// text is the agent's, so the line offers no setting to widen the
/// sandbox (see [`reported_line`]); warden's own terminals get that advice
/// ([`told_terminal`]).
pub fn told(profile: &Profile, update: &crate::model::SessionUpdate) -> Option<String> {
    use crate::model::{SessionUpdate, TerminalMeta, ToolContent};
    let (content, raw, meta): (&[ToolContent], _, &[TerminalMeta]) = match update {
        SessionUpdate::ToolCall(call) => (&call.content, call.raw_output.as_ref(), &[]),
        SessionUpdate::ToolCallUpdate { fields, .. } => (
            fields.content.as_deref().unwrap_or_default(),
            fields.raw_output.as_ref(),
            &fields.terminal_meta,
        ),
        _ => return None,
    };
    let texts = content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .chain(meta.iter().filter_map(|m| match m {
            TerminalMeta::Output { data, .. } => Some(data.as_str()),
            _ => None,
        }));
    for text in texts {
        if let Some(line) = reported_line(profile, text) {
            return Some(line);
        }
    }
    let raw = raw?.to_string().replace("\\n", "\n");
    reported_line(profile, &raw)
}

/// The line for the output of one of warden's own terminals once it
/// exited: a process warden ran under the chat's sandbox, denied a path
/// the profile keeps out of reach; which setting would allow it.
pub fn told_terminal(profile: &Profile, output: &str) -> Option<String> {
    denial_line(profile, output)
}

/// Whether a transcript line is one [`told`] or [`told_terminal`] made
/// (`warden exec` prints these on stderr: a headless run is told too).
pub fn is_told(line: &str) -> bool {
    [
        "the sandbox blocked ",
        "the sandbox may have blocked ",
        "the agent's own sandbox ",
        "the agent reports a denial of ",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

/// A denial in the output of warden's own terminal: the path, and the
/// setting that allows it.
fn denial_line(profile: &Profile, text: &str) -> Option<String> {
    let (path, setting) = explain_denial(profile, text)?;
    let hidden = profile.hidden.iter().any(|h| path.starts_with(h));
    Some(format!(
        "{} {}: {setting}",
        if hidden {
            "the sandbox blocked"
        } else {
            "the sandbox may have blocked"
        },
        path.display()
    ))
}

/// A denial the agent's own text reports: what warden's sandbox does with
/// the path it names, when the profile really keeps that path out of
/// reach; never a setting to change (the words are the agent's, and could
/// be written to talk the user into widening the sandbox).
pub(super) fn reported_line(profile: &Profile, text: &str) -> Option<String> {
    if profile.mode == SandboxMode::Off {
        return None;
    }
    // An agent's own sandbox (codex's bubblewrap) that cannot start in
    // warden's: its file says how that reads.
    if let Some(line) = crate::agents::quirks::own_sandbox_failed(text) {
        return Some(line.to_string());
    }
    let (path, _) = explain_denial(profile, text)?;
    Some(format!(
        "the agent reports a denial of {}: warden's sandbox {}",
        path.display(),
        keeps(profile, &path)
    ))
}

/// What warden's sandbox does with `path`, which `profile` keeps out of
/// the agent's reach, in plain words.
fn keeps(profile: &Profile, path: &Path) -> &'static str {
    if profile.hidden.iter().any(|h| path.starts_with(h)) {
        return "hides it from the agent (a secret or warden's own file)";
    }
    if profile.workspace.iter().any(|w| path.starts_with(w)) {
        return "keeps the workspace read-only for this agent (the chat is in Plan, or the \
                sandbox mode is read-only)";
    }
    "keeps it read-only for the agent: it is outside the workspace"
}

/// How a sandbox denial shows in a tool's output: the path it names, when
/// the output reads like a permission denial ("Permission denied",
/// "EACCES", "Read-only file system", "Operation not permitted") of a path
/// the profile keeps out of reach. Returns the path and the setting that
/// would allow it.
pub fn explain_denial(profile: &Profile, output: &str) -> Option<(PathBuf, String)> {
    const SIGNS: &[&str] = &[
        "Permission denied",
        "EACCES",
        "Read-only file system",
        "EROFS",
        "Operation not permitted",
        "EPERM",
    ];
    for line in output.lines() {
        if !SIGNS.iter().any(|s| line.contains(s)) {
            continue;
        }
        // The path nearest the denial is the one denied: a shell names
        // itself first (`/bin/sh: 1: cannot create /x: Permission denied`).
        for word in line
            .split(|c: char| c.is_whitespace() || "'\"`:,()".contains(c))
            .rev()
        {
            if !word.starts_with('/') && !word.starts_with("~/") {
                continue;
            }
            let path = PathBuf::from(word.trim_end_matches(['.', ';']));
            if let Some(setting) = blocked_by(profile, &path) {
                return Some((path, setting));
            }
        }
    }
    None
}

/// The setting that would let the agent at `path`, when the profile keeps
/// it out of reach (none: the sandbox allows writing there).
pub fn blocked_by(profile: &Profile, path: &Path) -> Option<String> {
    if profile.mode == SandboxMode::Off {
        return None;
    }
    let agent = &profile.agent;
    if profile.hidden.iter().any(|h| path.starts_with(h)) {
        return Some(format!(
            "it is hidden from agents (a secret or warden's own file); nothing but \
             `mode = \"off\"` in [agents.{agent}.sandbox] reaches it"
        ));
    }
    if profile.read_only.iter().any(|r| path.starts_with(r)) {
        return Some(format!(
            "it is the agent's own config that makes it run programs later (hooks, MCP \
             servers): read-only to it under warden; edit it yourself, or set \
             `mode = \"off\"` in [agents.{agent}.sandbox]"
        ));
    }
    let in_workspace = profile.workspace.iter().any(|w| path.starts_with(w));
    if in_workspace && profile.mode == SandboxMode::ReadOnly {
        return Some(format!(
            "the workspace is read-only for this chat's agent: leave Plan, or, when \
             `mode = \"read-only\"` is set in [sandbox] or [agents.{agent}.sandbox], set it to \
             \"workspace-write\""
        ));
    }
    if in_workspace || profile.writable.iter().any(|w| path.starts_with(w)) {
        return None;
    }
    Some(format!(
        "it is outside the workspace; add it to `sandbox.writable` in [agents.{agent}] \
         (or `roots`)"
    ))
}

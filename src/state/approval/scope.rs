//! What an allowed request covers later in its turn: the file write or
//! terminal the agent then asks the client for.

use crate::model::ToolKind;
use crate::policy::{self, Category, RequestView, Source};

use super::Approval;
use crate::state::ChatState;

impl ChatState {
    /// The earlier allowed request of this turn that covers a client call,
    /// if any: an allowed edit of exactly the paths it writes, or an allowed
    /// command that the terminal runs (after unwrapping `sh -c` and argv
    /// forms), in the same directory, with no environment of its own.
    pub(super) fn covering_scope(&self, view: &RequestView) -> Option<usize> {
        let wanted = self.covers_of(view)?;
        self.gate
            .allowed_scopes
            .iter()
            .position(|scope| match (&scope.covers, &wanted) {
                (Covers::Paths(allowed), Covers::Paths(written)) => {
                    written.iter().all(|p| allowed.contains(p))
                }
                (a @ Covers::Command { .. }, b @ Covers::Command { .. }) => a == b,
                _ => false,
            })
    }

    /// What coverage compares of a request: an edit's paths (normalised), a
    /// command's line (unwrapped from `sh -c`) and directory. Nothing for
    /// other kinds, an edit without paths, a command warden cannot read, or
    /// one that sets an environment of its own.
    pub(super) fn covers_of(&self, view: &RequestView) -> Option<Covers> {
        match view.category() {
            Category::Write if view.kind == ToolKind::Edit => {
                let paths = self.normalized_paths(view);
                (!paths.is_empty()).then_some(Covers::Paths(paths))
            }
            Category::Execute => {
                let env = view.raw_input.as_ref().and_then(|i| i.get("env"));
                let sets_env = env
                    .is_some_and(|e| !(e.is_null() || e.as_object().is_some_and(|o| o.is_empty())));
                if sets_env {
                    return None;
                }
                Some(Covers::Command {
                    line: unwrap_shell(&view.command()?),
                    cwd: self.request_cwd(view),
                })
            }
            _ => None,
        }
    }

    /// The request's paths as the rules see them.
    pub(super) fn normalized_paths(&self, view: &RequestView) -> Vec<String> {
        let mut out: Vec<String> = view
            .paths()
            .iter()
            .map(|p| policy::normalize_path(p, self.gate.home.as_deref(), &self.session.cwd_path))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Where a command runs: its `cwd` (or `workdir`), else the session's.
    pub(super) fn request_cwd(&self, view: &RequestView) -> String {
        let given = view.raw_input.as_ref().and_then(|i| {
            ["cwd", "workdir"]
                .iter()
                .find_map(|k| i.get(*k).and_then(|v| v.as_str()))
        });
        let cwd = self.session.cwd_path.to_string_lossy();
        policy::normalize_path(
            given.unwrap_or(&cwd),
            self.gate.home.as_deref(),
            &self.session.cwd_path,
        )
    }

    /// What an allowed request of the agent's may cover later in the turn:
    /// an edit its paths, a command its line. A read, a search, a fetch, a
    /// mode switch or a command warden cannot read covers nothing.
    pub(super) fn scope_of(&self, approval: &Approval, source: Source) -> Option<AllowedScope> {
        Some(AllowedScope {
            source,
            title: approval.title(),
            covers: self.covers_of(&approval.view)?,
        })
    }
}

/// What an allowed permission request of the agent's may cover: the file
/// write or terminal the agent then asks the client for, once, in the same
/// turn (kimi asks `Shell: touch x`, then creates the terminal `touch x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedScope {
    /// Who allowed the covering request (the covered call is logged so too).
    pub source: Source,
    pub title: String,
    pub covers: Covers,
}

/// The call an [`AllowedScope`] covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covers {
    /// An edit: a write of exactly these paths (normalised).
    Paths(Vec<String>),
    /// A command: a terminal running this line (unwrapped from `sh -c`) in
    /// this directory (normalised).
    Command { line: String, cwd: String },
}

/// The command a line runs, looked through `sh -c 'SCRIPT'` (and `bash
/// -lc`, `/bin/zsh -c`, ...) when the script is one quoted word:
/// `/bin/sh -lc 'echo a && echo b'` is `echo a && echo b`.
pub(crate) fn unwrap_shell(line: &str) -> String {
    let mut line = line.trim().to_string();
    for _ in 0..4 {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(script) = shell_script(&line, &words) else {
            break;
        };
        line = script.trim().to_string();
    }
    line
}

/// The script of `SHELL -c 'SCRIPT'` when `line` is exactly that.
fn shell_script(line: &str, words: &[&str]) -> Option<String> {
    let [shell, flag, ..] = words else {
        return None;
    };
    let name = shell.rsplit('/').next().unwrap_or(shell);
    let is_shell = matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh");
    let is_c = flag.len() >= 2
        && flag.starts_with('-')
        && flag.ends_with('c')
        && flag[1..].chars().all(|c| c.is_ascii_lowercase());
    if !(is_shell && is_c) {
        return None;
    }
    let rest = line
        .trim_start()
        .strip_prefix(shell)?
        .trim_start()
        .strip_prefix(flag)?
        .trim();
    // One single-quoted word ('\'' inside), or one double-quoted word with
    // nothing the shell would expand.
    if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        let unquoted = inner.replace("'\\''", "");
        return (!unquoted.contains('\'')).then(|| inner.replace("'\\''", "'"));
    }
    if let Some(inner) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return (!inner.contains(['"', '$', '`', '\\'])).then(|| inner.to_string());
    }
    None
}

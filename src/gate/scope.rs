//! What an allowed request covers later in its turn: the file write or
//! terminal the agent then asks the client for.

use crate::model::{ToolContent, ToolKind};
use crate::policy::{self, Category, RequestView, Source};

use crate::state::Approval;
use crate::state::ChatState;

impl ChatState {
    /// The earlier allowed request of this turn that covers a client call,
    /// if any: an allowed edit whose card showed exactly the text the write
    /// puts in that file, or an allowed command that the terminal runs
    /// (after unwrapping `sh -c` and argv forms), in the same directory,
    /// with no environment of its own. Only found here: the gate decides,
    /// and [`Self::use_up_scope`] then uses it up.
    pub(crate) fn covering_scope(
        &self,
        view: &RequestView,
        content: Option<&[ToolContent]>,
    ) -> Option<CoverAt> {
        let wanted = self.covers_with(view, content, &[])?;
        let scopes = &self.gate.allowed_scopes;
        let (index, entry) = match wanted {
            Covers::Writes(written) => {
                // warden's write: one file, one text.
                let [(paths, text)] = written.as_slice() else {
                    return None;
                };
                scopes.iter().enumerate().find_map(|(i, scope)| {
                    let Covers::Writes(shown) = &scope.covers else {
                        return None;
                    };
                    shown
                        .iter()
                        .position(|(meant, new)| {
                            new == text && paths.iter().any(|p| meant.contains(p))
                        })
                        .map(|entry| (i, Some(entry)))
                })?
            }
            command @ Covers::Command { .. } => (
                scopes.iter().position(|scope| scope.covers == command)?,
                None,
            ),
        };
        let scope = &scopes[index];
        Some(CoverAt {
            index,
            entry,
            source: scope.source,
            title: scope.title.clone(),
        })
    }

    /// Use up what covered a call: one write per file the card showed, one
    /// terminal per command.
    pub(crate) fn use_up_scope(&mut self, at: CoverAt) {
        let scopes = &mut self.gate.allowed_scopes;
        if at.index >= scopes.len() {
            return;
        }
        let mut scope = scopes.remove(at.index);
        if let (Covers::Writes(shown), Some(entry)) = (&mut scope.covers, at.entry)
            && entry < shown.len()
        {
            shown.remove(entry);
            if !shown.is_empty() {
                // The files it showed but not yet written stay covered.
                scopes.insert(at.index, scope);
            }
        }
    }

    /// What coverage compares of a request: an edit's files, each with
    /// every path it can mean (the runtime's `readings`) and the new text
    /// its card shows for it (`content`); a command's line (unwrapped from
    /// `sh -c`) and directory. Nothing for other kinds, an edit that shows
    /// no new text, a command warden cannot read, or one that sets an
    /// environment of its own.
    fn covers_with(
        &self,
        view: &RequestView,
        content: Option<&[ToolContent]>,
        readings: &[(String, Vec<String>)],
    ) -> Option<Covers> {
        match view.category() {
            Category::Write if view.kind == ToolKind::Edit => {
                let home = self.gate.home.as_deref();
                let cwd = &self.session.cwd_path;
                let writes: Vec<(Vec<String>, String)> = content
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|c| match c {
                        ToolContent::Diff { path, new, .. } => {
                            let normalized = policy::normalize_path(path, home, cwd);
                            let mut meant = vec![normalized.clone()];
                            for (sent, also) in readings {
                                if policy::normalize_path(sent, home, cwd) == normalized {
                                    meant.extend(also.iter().cloned());
                                }
                            }
                            meant.sort();
                            meant.dedup();
                            Some((meant, new.clone()))
                        }
                        _ => None,
                    })
                    .collect();
                (!writes.is_empty()).then_some(Covers::Writes(writes))
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

    /// Where a command runs: its `cwd` (or `workdir`), else the session's.
    pub(crate) fn request_cwd(&self, view: &RequestView) -> String {
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
    pub(crate) fn scope_of(&self, approval: &Approval, source: Source) -> Option<AllowedScope> {
        Some(AllowedScope {
            source,
            title: approval.title(),
            covers: self.covers_with(
                &approval.view,
                approval.request.fields.content.as_deref(),
                &approval.readings,
            )?,
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

/// Where the scope that covers a call is, found before the gate decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverAt {
    index: usize,
    /// The file among those an edit's card showed.
    entry: Option<usize>,
    pub source: Source,
    pub title: String,
}

/// The call an [`AllowedScope`] covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covers {
    /// An edit: for each file its card showed, a write of exactly the new
    /// text shown, to one of the paths it can mean (normalised, resolved).
    Writes(Vec<(Vec<String>, String)>),
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

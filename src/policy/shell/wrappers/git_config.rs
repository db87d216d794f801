//! The settings git is given on its command line (`git -c NAME=VALUE`,
//! `git config NAME VALUE`): a value may be a command git runs, so each is
//! read as a line of its own.

use super::*;

/// `git -c NAME=VALUE ...`: a value may be a command git runs
/// (`core.pager`, `core.sshCommand`, `alias.x=!cmd`, `diff.external`,
/// `credential.helper`, ...), so every value is also read as a line of its
/// own; `core.hooksPath`, `include.path`, `--exec-path` and
/// `--config-env` run what warden cannot read.
pub(super) fn git_config(
    text: &str,
    spans: &[(usize, usize)],
    at: usize,
    depth: usize,
    out: &mut Vec<Command>,
    opaque: &mut bool,
) {
    let word = |i: usize| spans.get(i).map(|&(s, e)| unquote(&text[s..e]));
    let unknown = |out: &mut Vec<Command>| {
        out.push(Command {
            unknown: true,
            plain: None,
            ..Command::new(text, true)
        })
    };
    let mut i = at + 1;
    while let Some(w) = word(i) {
        i += 1;
        if !w.starts_with('-') {
            if w == "config" {
                git_config_write(text, spans, i, depth, out, opaque);
            }
            // Subcommands that run a command of the agent's choosing.
            let rest: Vec<String> = (i..spans.len()).filter_map(word).collect();
            let runs = match w.as_str() {
                "submodule" => rest.iter().any(|r| r == "foreach"),
                "bisect" => rest.iter().any(|r| r == "run"),
                "filter-branch" => true,
                "rebase" => rest
                    .iter()
                    .any(|r| r.starts_with("-x") || r.starts_with("--exec")),
                _ => false,
            };
            if runs {
                unknown(out);
            }
            return;
        }
        if w.starts_with("--exec-path") || w.starts_with("--config-env") {
            return unknown(out);
        }
        let setting = if w == "-c" {
            i += 1;
            word(i - 1)
        } else if let Some(value) = w.strip_prefix("-c").filter(|v| !v.is_empty()) {
            Some(value.to_string())
        } else {
            if matches!(
                w.as_str(),
                "-C" | "--git-dir" | "--work-tree" | "--namespace"
            ) {
                i += 1;
            }
            continue;
        };
        let Some(setting) = setting else {
            return;
        };
        let (name, value) = setting.split_once('=').unwrap_or((&setting, ""));
        let name = name.to_ascii_lowercase();
        if name == "core.hookspath" || name.starts_with("include") || name == "core.worktree" {
            return unknown(out);
        }
        let script = value.strip_prefix('!').unwrap_or(value);
        let inner = parse_at(script, depth + 1);
        *opaque |= inner.opaque;
        out.extend(inner.commands.into_iter().map(Command::derive));
    }
}

/// `git config [set] NAME VALUE` (words from `at`): the value is stored for
/// later, where a command git runs may read it (`alias.x '!cmd'`,
/// `core.pager`, ...), so it is read as a line of its own, as
/// [`git_config()`] reads `-c NAME=VALUE`; a setting that runs what warden
/// cannot read (`core.hooksPath`, `include.path`) is unknown.
fn git_config_write(
    text: &str,
    spans: &[(usize, usize)],
    at: usize,
    depth: usize,
    out: &mut Vec<Command>,
    opaque: &mut bool,
) {
    let mut operands = Vec::new();
    let mut i = at;
    while let Some(&(s, e)) = spans.get(i) {
        let w = unquote(&text[s..e]);
        i += 1;
        if matches!(
            w.as_str(),
            "-f" | "--file" | "--blob" | "--type" | "--default"
        ) {
            i += 1;
        } else if !w.starts_with('-') {
            operands.push(w);
        }
    }
    if operands.first().is_some_and(|w| w == "set") {
        operands.remove(0);
    }
    let [name, value, ..] = operands.as_slice() else {
        return;
    };
    let name = name.to_ascii_lowercase();
    if name == "core.hookspath" || name.starts_with("include") || name == "core.worktree" {
        out.push(Command {
            unknown: true,
            plain: None,
            ..Command::new(text, true)
        });
        return;
    }
    let script = value.strip_prefix('!').unwrap_or(value);
    let inner = parse_at(script, depth + 1);
    *opaque |= inner.opaque;
    out.extend(inner.commands.into_iter().map(Command::derive));
}

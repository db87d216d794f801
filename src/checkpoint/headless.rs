//! `warden checkpoints [CHAT]` and `warden undo [CHAT]`: the same stores
//! and the same plan and restore as the TUI's, without a screen.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::report::summary;
use super::store::{self, Store};
use super::worker::{Runner, Workspace, step_label};
use super::{CheckpointOptions, Keep};
use super::{Report, Resolution};

/// The stores of the workspace whose first root is `cwd`: (dir, roots).
fn stores_of(base: &Path, cwd: &Path) -> Vec<(PathBuf, Vec<PathBuf>)> {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("roots")) else {
            continue;
        };
        let roots: Vec<PathBuf> = text.lines().map(PathBuf::from).collect();
        if roots.first() == Some(&cwd) {
            out.push((entry.path(), roots));
        }
    }
    out.sort();
    out
}

/// The chats with checkpoints in a store, the newest step's last.
fn chats(store: &Store) -> Result<Vec<String>, super::CheckpointError> {
    let mut chats: Vec<(u64, String)> = Vec::new();
    for point in store.points()? {
        match chats.iter_mut().find(|(_, c)| *c == point.chat) {
            Some(entry) => entry.0 = entry.0.max(point.step),
            None => chats.push((point.step, point.chat)),
        }
    }
    chats.sort();
    Ok(chats.into_iter().map(|(_, c)| c).collect())
}

fn pick(chats: &[String], want: Option<&str>) -> Option<String> {
    match want {
        Some(want) => chats.iter().find(|c| c.starts_with(want)).cloned(),
        None => chats.last().cloned(),
    }
}

/// Bytes as "812 KB", "3.4 MB".
fn size(bytes: u64) -> String {
    if bytes < 1_048_576 {
        format!("{} KB", bytes.div_ceil(1024))
    } else {
        format!("{:.1} MB", bytes as f64 / 1_048_576.0)
    }
}

fn when(secs: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let ago = now.saturating_sub(secs);
    match ago {
        0..60 => format!("{ago} s ago"),
        60..3600 => format!("{} min ago", ago / 60),
        3600..86_400 => format!("{} h ago", ago / 3600),
        _ => format!("{} d ago", ago / 86_400),
    }
}

/// The text `warden checkpoints [CHAT]` prints for the workspace `cwd`.
pub fn list(options: &CheckpointOptions, cwd: &Path, want: Option<&str>) -> anyhow::Result<String> {
    let mut out = String::new();
    let stores = stores_of(&options.dir, cwd);
    if stores.is_empty() {
        return Ok(format!("no checkpoints of {}\n", cwd.display()));
    }
    for (dir, roots) in stores {
        let store = Store::open(&options.dir, &roots, &options.own)?;
        let points = store.points()?;
        let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        out.push_str(&format!(
            "workspace {} · {} checkpoints · {} on disk ({})\n",
            shown.join(" + "),
            points.len(),
            size(store::disk_use(&dir)),
            dir.display()
        ));
        let chats = chats(&store)?;
        let selected: Vec<String> = match want {
            Some(_) => pick(&chats, want).into_iter().collect(),
            None => chats,
        };
        for chat in selected {
            out.push_str(&format!("  chat {chat}\n"));
            let steps = store.steps(&chat)?;
            for (i, step) in steps.iter().enumerate() {
                // A running warden may prune this step between the refs
                // read above and its diff: it is gone, not an error.
                let Ok(files) = store.diff(&step.before.commit, &step.after.commit) else {
                    continue;
                };
                let names: Vec<&str> = files.iter().take(6).map(|f| f.path.as_str()).collect();
                out.push_str(&format!(
                    "    {:>4}  {:<12} {}  ·  {}{}\n",
                    step.before.step,
                    when(step.after.time),
                    crate::sanitize::one_line(&step_label(&steps, i)),
                    summary(&files),
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", crate::sanitize::one_line(&names.join(", ")))
                    }
                ));
            }
        }
    }
    Ok(out)
}

/// `warden undo [CHAT]`: put the workspace `cwd` back to before the chat's
/// last step. Asks on a terminal unless `yes`; files changed since the
/// turn need `resolution`. What happened, as text.
pub fn undo(
    options: &CheckpointOptions,
    cwd: &Path,
    want: Option<&str>,
    yes: bool,
    resolution: Option<Resolution>,
) -> anyhow::Result<String> {
    let Some((_, roots)) = stores_of(&options.dir, cwd).into_iter().next() else {
        anyhow::bail!("no checkpoints of {}", cwd.display());
    };
    let store = Store::open(&options.dir, &roots, &options.own)?;
    let Some(chat) = pick(&chats(&store)?, want) else {
        anyhow::bail!("no chat with checkpoints matches");
    };
    drop(store);
    let ws = Workspace {
        base: options.dir.clone(),
        roots,
        chat,
        limits: options.limits,
        keep: Keep::Last(usize::MAX),
        tell_agent: false,
        own: options.own.clone(),
        writable: options.writable.clone(),
    };
    let mut runner = Runner::default();
    let plan = match runner.plan(&ws, super::worker::Target::Undo)? {
        Report::Plan(plan) => plan,
        Report::Nothing(why) => return Ok(format!("{why}\n")),
        other => anyhow::bail!("{other:?}"),
    };
    let mut text = format!("restore {} to {}:\n", summary(&plan.files), plan.label);
    for file in &plan.files {
        let mark = if plan.conflicts.contains(&file.repo_path) {
            "  (changed since the turn)"
        } else {
            ""
        };
        text.push_str(&format!(
            "  {:?} {}{mark}\n",
            file.change,
            crate::sanitize::one_line(&file.path)
        ));
    }
    let pick = match (plan.conflicts.is_empty(), resolution) {
        (true, _) => Resolution::Overwrite,
        (false, Some(resolution)) => resolution,
        (false, None) => {
            text.push_str(
                "files were changed since the turn: say --keep-both, --skip or --overwrite\n",
            );
            return Ok(text);
        }
    };
    if !yes {
        if !std::io::stdin().is_terminal() {
            text.push_str("nothing restored: --yes restores without asking\n");
            return Ok(text);
        }
        let mut stderr = std::io::stderr();
        let _ = write!(stderr, "{text}restore? [y/N] ");
        let _ = stderr.flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !answer.trim().eq_ignore_ascii_case("y") {
            return Ok("nothing restored\n".into());
        }
        text.clear();
    }
    match runner.restore(&ws, &plan, pick)? {
        Report::Restored {
            label,
            changed,
            kept,
            both,
            ..
        } => {
            let noun = if changed.len() == 1 { "file" } else { "files" };
            text.push_str(&format!(
                "restored {} {noun} to {label}{}{} (warden undo again undoes this)\n",
                changed.len(),
                if kept.is_empty() {
                    String::new()
                } else {
                    format!("; left as they were: {}", kept.join(", "))
                },
                if both.is_empty() {
                    String::new()
                } else {
                    format!("; the checkpoint's copies: {}", both.join(", "))
                },
            ));
            Ok(text)
        }
        Report::Failed(why) | Report::Nothing(why) => anyhow::bail!(why),
        other => anyhow::bail!("{other:?}"),
    }
}

//! A chat as Markdown: `warden export [CHAT] [-o FILE]` and `/export [FILE]`
//! (whose file the runtime writes on its disk writer, `app/disk.rs`).
//!
//! Everything the agent (or the user) wrote goes through
//! [`crate::sanitize::visible`]: the export carries no raw control
//! characters or escape sequences, so `cat chat.md` is as safe as the TUI.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::chats::{ChatStore, LoadedChat, RecordedEntry};
use crate::model::{PlanStatus, ToolContent};
use crate::sanitize::{one_line, visible};
use crate::state::EntryKind;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no chat records in {0}")]
    NoChats(String),
    #[error("no chat matches `{0}`")]
    NoMatch(String),
    #[error("could not read the chat: {0}")]
    Read(String),
    #[error("could not write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("`{0}` is not a plain file name in the working directory")]
    BadName(String),
}

/// A fence long enough for `text`: one backtick more than its longest run.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Text of the chat's (the user's or the agent's) as Markdown that cannot
/// make headings of the export's own levels (`# title`, `## You`,
/// `## Agent`): outside code fences, an ATX heading goes two levels down
/// and a setext underline is escaped.
fn demoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<(char, usize)> = None;
    let mut paragraph = false;
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let run = |c: char| body.chars().take_while(|&x| x == c).count();
        let shown = if indent > 3 {
            line.to_string()
        } else if let Some((c, n)) = fence {
            if run(c) >= n && body.trim_end_matches(c).trim().is_empty() {
                fence = None;
            }
            line.to_string()
        } else if run('`') >= 3 || run('~') >= 3 {
            let c = if run('`') >= 3 { '`' } else { '~' };
            fence = Some((c, run(c)));
            line.to_string()
        } else if (1..=6).contains(&run('#'))
            && body[run('#')..]
                .chars()
                .next()
                .is_none_or(|c| c == ' ' || c == '\t')
        {
            let level = (run('#') + 2).min(6);
            format!(
                "{}{}{}",
                &line[..indent],
                "#".repeat(level),
                &body[run('#')..]
            )
        } else if paragraph
            && !body.trim().is_empty()
            && (body.trim_end().chars().all(|c| c == '=')
                || body.trim_end().chars().all(|c| c == '-'))
        {
            format!("{}\\{body}", &line[..indent])
        } else {
            line.to_string()
        };
        paragraph = fence.is_none() && !line.trim().is_empty();
        out.push_str(&shown);
        out.push('\n');
    }
    out
}

fn quoted(out: &mut String, text: &str) {
    for line in demoted(&visible(text)).lines() {
        let _ = writeln!(out, "> {line}");
    }
    out.push('\n');
}

fn code_block(out: &mut String, info: &str, body: &str) {
    let body = visible(body);
    let f = fence(&body);
    let _ = writeln!(out, "{f}{info}\n{}\n{f}\n", body.trim_end());
}

fn tool_content(out: &mut String, content: &ToolContent) {
    match content {
        ToolContent::Text { text } => code_block(out, "", text),
        ToolContent::Diff { path, old, new } => {
            let old = old.as_deref().unwrap_or_default();
            let diff = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .header(path, path)
                .to_string();
            code_block(out, "diff", &diff);
        }
        ToolContent::Terminal { id } => {
            let _ = writeln!(out, "*terminal {}*\n", one_line(id));
        }
    }
}

/// The transcript as Markdown, under a title line.
pub(crate) fn markdown(title: &str, entries: &[EntryKind]) -> String {
    let mut out = format!("# {}\n\n", one_line(title));
    for entry in entries {
        match entry {
            EntryKind::User(text) => {
                out.push_str("## You\n\n");
                let _ = writeln!(out, "{}\n", demoted(&visible(text)).trim_end());
            }
            EntryKind::Agent(text) => {
                out.push_str("## Agent\n\n");
                let _ = writeln!(out, "{}\n", demoted(&visible(text)).trim_end());
            }
            EntryKind::Thought(text) => {
                out.push_str("*Thinking:*\n\n");
                quoted(&mut out, text);
            }
            EntryKind::Tool(tool) => {
                let _ = writeln!(
                    out,
                    "**Tool** `{}` ({}): {}\n",
                    tool.call.kind.as_str(),
                    tool.state.label(),
                    one_line(&tool.call.title)
                );
                for content in &tool.call.content {
                    tool_content(&mut out, content);
                }
            }
            EntryKind::Plan(entries) => {
                out.push_str("**Plan**\n\n");
                for e in entries {
                    let mark = match e.status {
                        PlanStatus::Completed => "x",
                        PlanStatus::InProgress => "~",
                        PlanStatus::Pending => " ",
                    };
                    let _ = writeln!(out, "- [{mark}] {}", one_line(&e.content));
                }
                out.push('\n');
            }
            EntryKind::Info(text) => {
                let _ = writeln!(out, "*{}*\n", one_line(text));
            }
            EntryKind::Decision { allowed, text } => {
                let word = if *allowed { "allowed" } else { "denied" };
                let _ = writeln!(out, "*{word}: {}*\n", one_line(text));
            }
            EntryKind::Error { message, detail } => {
                let _ = writeln!(out, "**Error:** {}\n", one_line(message));
                for line in detail {
                    let _ = writeln!(out, "    {}", one_line(line));
                }
                if !detail.is_empty() {
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// A recorded chat as Markdown.
pub(crate) fn loaded_markdown(chat: &LoadedChat) -> String {
    let title = chat
        .display_title()
        .unwrap_or_else(|| chat.header.agent.clone());
    let entries: Vec<EntryKind> = chat.entries.iter().map(RecordedEntry::to_kind).collect();
    markdown(&title, &entries)
}

/// `warden export [CHAT]`: the chat whose id, title or name matches
/// `query` best (the newest such), or the newest chat.
pub(crate) fn export_recorded(
    store: &ChatStore,
    query: Option<&str>,
) -> Result<String, ExportError> {
    let summaries = store.list();
    if summaries.is_empty() {
        return Err(ExportError::NoChats(store.dir().display().to_string()));
    }
    let picked = match query {
        Some(q) => summaries
            .iter()
            .find(|s| s.chat_id == q)
            .or_else(|| crate::chats::filter(&summaries, q).into_iter().next()),
        None => summaries.first(),
    };
    let Some(summary) = picked else {
        return Err(ExportError::NoMatch(query.unwrap_or_default().to_string()));
    };
    let chat = store
        .load(&summary.chat_id)
        .map_err(|e| ExportError::Read(e.to_string()))?;
    Ok(loaded_markdown(&chat))
}

/// Where `/export [FILE]` writes in `cwd`: the name given (a plain file
/// name, no directories), else `warden-chat-<chat id>.md`.
pub(crate) fn target(
    cwd: &Path,
    name: Option<&str>,
    chat_id: &str,
) -> Result<PathBuf, ExportError> {
    let name = match name {
        Some(name) => name.to_string(),
        None => {
            let id: String = chat_id
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(40)
                .collect();
            if id.is_empty() {
                "warden-chat.md".to_string()
            } else {
                format!("warden-chat-{id}.md")
            }
        }
    };
    let plain = Path::new(&name)
        .file_name()
        .is_some_and(|f| f == std::ffi::OsStr::new(&name));
    if !plain || name.starts_with('.') {
        return Err(ExportError::BadName(name));
    }
    Ok(cwd.join(name))
}

/// Write `text` to `path` (a new file, or replacing one the user named).
pub(crate) fn write(path: &Path, text: &str) -> Result<(), ExportError> {
    std::fs::write(path, text).map_err(|source| ExportError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// `warden export [CHAT] [-o FILE]`: the chat as Markdown on stdout, or in
/// FILE.
pub fn run_cli(chat: Option<&str>, out: Option<&Path>) -> Result<(), ExportError> {
    let dir =
        ChatStore::default_dir().ok_or_else(|| ExportError::NoChats("(no data dir)".into()))?;
    let text = export_recorded(&ChatStore::new(dir), chat)?;
    match out {
        Some(path) => write(path, &text),
        None => {
            use std::io::Write as _;
            std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|source| ExportError::Write {
                    path: "stdout".into(),
                    source,
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_text_cannot_forge_the_exports_own_headings() {
        let agent = "Done.\n\n## You\n\nplease delete the repo\n\nYou\n---\n\n# Agent\n\n```sh\n## a comment\n```\n\n    ## indented code\n";
        let md = markdown("chat", &[EntryKind::Agent(agent.into())]);
        let headings: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("# ") || l.starts_with("## "))
            .collect();
        // The last is inside the code fence: code, not a heading.
        assert_eq!(headings, vec!["# chat", "## Agent", "## a comment"], "{md}");
        assert!(md.contains("#### You"), "{md}");
        assert!(md.contains("\\---"), "{md}");
        assert!(md.contains("### Agent"), "{md}");
        assert!(md.contains("```sh\n## a comment\n```"), "code stays: {md}");
        assert!(md.contains("    ## indented code"), "{md}");
        // A thought's quote too.
        let md = markdown("chat", &[EntryKind::Thought("## You\nyes".into())]);
        assert!(md.contains("> #### You"), "{md}");
    }
}

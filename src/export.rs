//! A chat as Markdown: `warden export [CHAT] [-o FILE]` and `/export [FILE]`
//! (whose file the runtime writes on its disk writer, `app/disk.rs`).
//!
//! The export is the conversation as a reader wants it: one heading per
//! message (`## You`, `## Agent`, however many chunks, thoughts and tool
//! calls the agent's answer came in), the decisions worded as sentences,
//! and none of warden's own status lines (key hints, "new chat with …").
//!
//! `/export` with no name writes `<title>-<chat id>.md` (the id that
//! `warden --resume` takes) into the `exports` folder beside the chat
//! records, never into the user's repository unasked; a name the user gives
//! is a plain file in the working directory.
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
    #[error("warden has no data folder to export into: name a file, `/export FILE`")]
    NoFolder,
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

/// Who wrote the message an entry belongs to, for its heading.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Speaker {
    You,
    Agent,
}

/// The heading of `who`'s message, unless the last one was theirs.
fn heading(out: &mut String, speaker: &mut Option<Speaker>, who: Speaker) {
    if *speaker != Some(who) {
        *speaker = Some(who);
        out.push_str(match who {
            Speaker::You => "## You\n\n",
            Speaker::Agent => "## Agent\n\n",
        });
    }
}

/// A decision line (`"{verdict}: {reason} · {title}"`, or
/// `"{reason} · {title}"` when the reason starts with the verdict) as a
/// sentence: "You allowed: touch x (Allow)".
fn decision(allowed: bool, text: &str) -> String {
    const VERDICTS: [(&str, &str); 8] = [
        ("allowed by you", "You allowed"),
        ("denied by you", "You denied"),
        ("allowed remotely", "Allowed from the remote page"),
        ("denied remotely", "Denied from the remote page"),
        ("allowed", "warden allowed"),
        ("denied", "warden denied"),
        ("blocked", "warden blocked"),
        ("cancelled", "Cancelled"),
    ];
    let text = one_line(text);
    let (who, rest) = VERDICTS
        .iter()
        .find_map(|(verdict, who)| {
            text.strip_prefix(verdict)
                .and_then(|r| r.strip_prefix(": "))
                .map(|rest| (*who, rest.to_string()))
        })
        .unwrap_or_else(|| {
            let who = if allowed { "Allowed" } else { "Denied" };
            (who, text.clone())
        });
    match rest.rsplit_once(" · ") {
        Some((reason, title)) => format!("**{who}:** {title} ({reason})"),
        None => format!("**{who}:** {rest}"),
    }
}

/// The transcript as Markdown, under a title line.
pub(crate) fn markdown(title: &str, entries: &[EntryKind]) -> String {
    let mut out = format!("# {}\n\n", one_line(title));
    let mut speaker: Option<Speaker> = None;
    for entry in entries {
        match entry {
            EntryKind::User(text) => {
                // Each prompt is a message of its own.
                speaker = None;
                heading(&mut out, &mut speaker, Speaker::You);
                let _ = writeln!(out, "{}\n", demoted(&visible(text)).trim_end());
            }
            EntryKind::Agent(text) => {
                heading(&mut out, &mut speaker, Speaker::Agent);
                let _ = writeln!(out, "{}\n", demoted(&visible(text)).trim_end());
            }
            EntryKind::Thought(text) => {
                heading(&mut out, &mut speaker, Speaker::Agent);
                out.push_str("*Thinking:*\n\n");
                quoted(&mut out, text);
            }
            EntryKind::Tool(tool) => {
                heading(&mut out, &mut speaker, Speaker::Agent);
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
                heading(&mut out, &mut speaker, Speaker::Agent);
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
            // warden's own status lines (key hints, "new chat with …") are
            // the screen's, not the conversation's.
            EntryKind::Info(_) => {}
            EntryKind::Decision { allowed, text } => {
                let _ = writeln!(out, "{}\n", decision(*allowed, text));
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

/// The folder `/export` writes into when no name is given: `exports`
/// beside the chat records (`~/.local/share/warden/exports` on Linux).
pub(crate) fn exports_dir(chats_dir: &Path) -> PathBuf {
    chats_dir.with_file_name("exports")
}

/// The file name of a chat's export: its title as a slug, then the id
/// `warden --resume` takes (none before the chat is recorded).
pub(crate) fn file_name(title: &str, record_id: Option<&str>) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= 48 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "chat" } else { slug };
    let id: String = record_id
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    if id.is_empty() {
        format!("{slug}.md")
    } else {
        format!("{slug}-{id}.md")
    }
}

/// Where `/export [FILE]` writes: the name given (a plain file name, no
/// directories) in `cwd`; else [`file_name`] in [`exports_dir`], so that an
/// export never lands in the user's repository unasked.
pub(crate) fn target(
    cwd: &Path,
    name: Option<&str>,
    chats_dir: Option<&Path>,
    title: &str,
    record_id: Option<&str>,
) -> Result<PathBuf, ExportError> {
    let Some(name) = name else {
        let dir = chats_dir.ok_or(ExportError::NoFolder)?;
        return Ok(exports_dir(dir).join(file_name(title, record_id)));
    };
    let plain = Path::new(name)
        .file_name()
        .is_some_and(|f| f == std::ffi::OsStr::new(name));
    if !plain || name.starts_with('.') {
        return Err(ExportError::BadName(name.to_string()));
    }
    Ok(cwd.join(name))
}

/// Write `text` to `path` (a new file, or replacing one the user named, or
/// this chat's earlier export), making the exports folder if need be.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), ExportError> {
    let failed = |source| ExportError::Write {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    std::fs::write(path, text).map_err(failed)
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

    #[test]
    fn one_heading_per_message_no_status_lines_and_decisions_as_sentences() {
        let entries = [
            EntryKind::Info("new chat with demo in ~/w · Alt-1..9 switch · Ctrl-L chats".into()),
            EntryKind::User("fix it".into()),
            EntryKind::Thought("look first".into()),
            EntryKind::Agent("Looking.".into()),
            EntryKind::Decision {
                allowed: true,
                text: "allowed by you: Allow · Edit src/lib.rs".into(),
            },
            EntryKind::Agent("Fixed.".into()),
            EntryKind::Decision {
                allowed: false,
                text: "blocked: plan mode · Run rm -rf x".into(),
            },
            EntryKind::Decision {
                allowed: true,
                text: "allowed for edit calls in this chat · Edit a.rs".into(),
            },
            EntryKind::Decision {
                allowed: false,
                text: "cancelled: turn cancelled · Edit b.rs".into(),
            },
            EntryKind::User("thanks".into()),
            EntryKind::Agent("You're welcome.".into()),
        ];
        let md = markdown("Fix the bug", &entries);
        let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headings,
            vec!["# Fix the bug", "## You", "## Agent", "## You", "## Agent"],
            "{md}"
        );
        assert!(
            !md.contains("Alt-1") && !md.contains("new chat with"),
            "{md}"
        );
        assert!(
            md.contains("**You allowed:** Edit src/lib.rs (Allow)"),
            "{md}"
        );
        assert!(
            md.contains("**warden blocked:** Run rm -rf x (plan mode)"),
            "{md}"
        );
        assert!(
            md.contains("**Allowed:** Edit a.rs (allowed for edit calls in this chat)"),
            "{md}"
        );
        assert!(
            md.contains("**Cancelled:** Edit b.rs (turn cancelled)"),
            "{md}"
        );
        assert!(!md.contains("allowed: allowed"), "{md}");
    }

    #[test]
    fn the_default_file_is_named_by_title_and_resume_id_in_the_exports_folder() {
        assert_eq!(
            file_name("Fix the *parser*: ../../etc", Some("2f1c-9a")),
            "fix-the-parser-etc-2f1c-9a.md"
        );
        assert_eq!(file_name("日本語", None), "chat.md");
        assert_eq!(file_name("x", Some("../../a/b")), "x-ab.md");
        let chats = Path::new("/data/warden/chats");
        let at = target(Path::new("/repo"), None, Some(chats), "Fix it", Some("id1")).unwrap();
        assert_eq!(at, Path::new("/data/warden/exports/fix-it-id1.md"));
        let named = target(Path::new("/repo"), Some("c.md"), Some(chats), "t", None).unwrap();
        assert_eq!(
            named,
            Path::new("/repo/c.md"),
            "a name the user gives: here"
        );
        assert!(matches!(
            target(Path::new("/repo"), None, None, "t", None),
            Err(ExportError::NoFolder)
        ));
        assert!(target(Path::new("/repo"), Some("../x.md"), None, "t", None).is_err());
    }
}

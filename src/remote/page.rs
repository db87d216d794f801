//! The page: server-rendered HTML, phone-sized, one small script (live
//! updates from `/events`; without it a reload link does). Everything the
//! agent wrote (titles, commands, paths, diffs, reasons) goes through
//! [`escape`]; the server's CSP allows no script but the page's own.

use std::fmt::Write;

use super::Snapshot;
use crate::policy::Mode;
use crate::state::{ChoiceSummary, Tone};

/// `&`, `<`, `>`, `"` and `'` as entities, and control characters (but
/// newlines and tabs) as `?`: text, never markup.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

const HEAD: &str = "<!doctype html><html><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<meta name=\"referrer\" content=\"no-referrer\">";

const STYLE: &str = "<style>body{font-family:sans-serif;margin:0.5em;max-width:40em}\
.card{border:1px solid #888;border-radius:6px;padding:0.5em;margin:0.5em 0}\
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:0.3em;max-height:20em;overflow:auto}\
button{font-size:1.1em;padding:0.4em 0.8em;margin:0.2em}\
.who{color:#333;font-size:0.9em;margin-bottom:0.2em}.agent{font-weight:bold}\
.allow{background:#cfc}.deny{background:#fcc}.muted{color:#666}\
input[type=text]{width:95%;font-size:1.1em}\
h1{font-size:1.4em;margin:0.2em 0}h1 a{font-size:0.6em;font-weight:normal;color:#666;float:right}\
h2{font-size:1.1em;margin:0.6em 0 0.2em}.add{color:#060}.del{color:#a00}\
button[disabled]{color:#000;font-weight:bold;border:2px solid #333;background:#ddd}</style>";

/// The page's script, allowed by the CSP's nonce: each event from
/// `/events` is the cards again, put in place of the old ones.
const SCRIPT: &str = "var live=document.getElementById('live');\
var es=new EventSource('/events');\
es.onopen=function(){live.textContent='live';};\
es.onerror=function(){live.textContent='offline: reload';};\
es.onmessage=function(e){document.getElementById('cards').innerHTML=e.data;};";

/// The page of waiting cards; `csrf` goes in every form, `nonce` lets its
/// script run.
pub fn cards(snapshot: &Snapshot, csrf: &str, arming: std::time::Duration, nonce: &str) -> String {
    let mut out = String::new();
    out.push_str(HEAD);
    out.push_str("<title>warden</title>");
    out.push_str(STYLE);
    out.push_str(
        "</head><body><h1>warden <a id=\"live\" href=\"/\">reload</a></h1><main id=\"cards\">",
    );
    out.push_str(&fragment(snapshot, csrf, arming));
    let _ = write!(
        out,
        "</main><p class=\"muted\">Grants, rules and bypass are decided in the terminal only.</p>\
<script nonce=\"{}\">{SCRIPT}</script></body></html>",
        escape(nonce)
    );
    out
}

/// What changes on the page: the waiting cards, each chat's mode, the last
/// decisions (who decided).
pub fn fragment(snapshot: &Snapshot, csrf: &str, arming: std::time::Duration) -> String {
    let mut out = String::new();
    let waiting: usize = snapshot.chats.iter().map(|c| c.cards.len()).sum();
    if waiting == 0 {
        out.push_str("<p id=\"none\">No card waits.</p>");
    }
    for chat in &snapshot.chats {
        let _ = write!(
            out,
            "<h2>{}</h2><form method=\"post\" action=\"/mode\">{}\
<input type=\"hidden\" name=\"chat\" value=\"{}\">mode: ",
            escape(&chat.label),
            csrf_field(csrf),
            chat.chat
        );
        for mode in Mode::ALL {
            let current = if mode == chat.mode { " disabled" } else { "" };
            let _ = write!(
                out,
                "<button name=\"mode\" value=\"{}\"{current}>{}</button>",
                mode.as_str(),
                mode.label()
            );
        }
        out.push_str("</form>");
        for shown in &chat.cards {
            let card = &shown.summary;
            let _ = write!(
                out,
                "<div class=\"card\" id=\"card-{}-{}\">\
<div class=\"who\"><span class=\"agent\">{}</span> in <code class=\"project\">{}</code></div>\
<b>{}</b> <span class=\"muted\">({})</span>",
                chat.chat,
                card.id,
                escape(&chat.agent),
                escape(&chat.project),
                escape(&card.title),
                escape(&card.kind)
            );
            if let Some(command) = &card.command {
                let _ = write!(out, "<pre>$ {}</pre>", escape(command));
            }
            for path in &card.paths {
                let _ = write!(out, "<div>path: <code>{}</code></div>", escape(path));
            }
            if !card.diff.is_empty() {
                out.push_str("<pre>");
                for line in card.diff.lines() {
                    let class = match line.as_bytes().first() {
                        Some(b'+') if !line.starts_with("+++") => "add",
                        Some(b'-') if !line.starts_with("---") => "del",
                        _ => "",
                    };
                    let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(line));
                }
                out.push_str("</pre>");
            }
            if !card.reason.is_empty() {
                let _ = write!(
                    out,
                    "<div class=\"muted\">asks because: {}</div>",
                    escape(&card.reason)
                );
            }
            if shown.since.elapsed() < arming {
                out.push_str(
                    "<div class=\"muted\">just arrived: look at it first (answers take in a second)</div>",
                );
            }
            let _ = write!(
                out,
                "<form method=\"post\" action=\"/answer\">{}\
<input type=\"hidden\" name=\"chat\" value=\"{}\"><input type=\"hidden\" name=\"card\" value=\"{}\">",
                csrf_field(csrf),
                chat.chat,
                card.id,
            );
            for choice in card.choices.iter().filter(|c| !c.needs_reason) {
                let _ = write!(
                    out,
                    "<button{} name=\"pick\" value=\"{}\">{}</button>",
                    class_of(choice.tone),
                    escape(choice.id),
                    escape(choice.label)
                );
            }
            out.push_str("</form>");
            for choice in card.choices.iter().filter(|c| c.needs_reason) {
                let _ = write!(
                    out,
                    "<form method=\"get\" action=\"/reason\"><input type=\"hidden\" name=\"chat\" value=\"{}\">\
<input type=\"hidden\" name=\"card\" value=\"{}\"><button>{}</button></form>",
                    chat.chat,
                    card.id,
                    escape(choice.label)
                );
            }
            out.push_str("</div>");
        }
    }
    if !snapshot.decided.is_empty() {
        out.push_str("<h3>Decided</h3><ul>");
        for line in snapshot.decided.iter().rev() {
            let _ = write!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul>");
    }
    out
}

/// The form to deny card `card` of `chat` with a reason: `found`, the
/// card's title and its choice that takes a reason (no refresh: the typed
/// reason stays).
pub fn reason(chat: u64, card: u64, found: Option<(&str, &ChoiceSummary)>, csrf: &str) -> String {
    let mut out = String::new();
    out.push_str(HEAD);
    out.push_str("<title>warden: deny with a reason</title>");
    out.push_str(STYLE);
    out.push_str("</head><body>");
    match found {
        Some((title, choice)) => {
            let _ = write!(
                out,
                "<p>Deny <b>{}</b> and tell the agent why:</p>\
<form method=\"post\" action=\"/answer\">{}\
<input type=\"hidden\" name=\"chat\" value=\"{chat}\"><input type=\"hidden\" name=\"card\" value=\"{card}\">\
<input type=\"hidden\" name=\"pick\" value=\"{}\"><input type=\"text\" name=\"reason\" autofocus>\
<button class=\"deny\">{}</button></form>",
                escape(title),
                csrf_field(csrf),
                escape(choice.id),
                escape(choice.label.trim_end_matches('…'))
            );
        }
        None => out.push_str("<p>That card no longer waits.</p>"),
    }
    out.push_str("<p><a href=\"/\">back</a></p></body></html>");
    out
}

/// A button's class for a choice's tone.
fn class_of(tone: Tone) -> &'static str {
    match tone {
        Tone::Allow => " class=\"allow\"",
        Tone::Reject => " class=\"deny\"",
        Tone::Plain => "",
    }
}

/// A short page saying what happened (and a link back).
pub fn message(text: &str) -> String {
    format!(
        "{HEAD}<title>warden</title>{STYLE}</head><body><p id=\"message\">{}</p><p><a href=\"/\">back</a></p></body></html>",
        escape(text)
    )
}

fn csrf_field(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        escape(csrf)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::{CardView, ChatCards};

    /// An edit card of the agent's own, just arrived.
    fn plain_card(id: u64) -> CardView {
        CardView {
            summary: crate::state::CardSummary {
                id,
                title: "t".into(),
                kind: "edit".into(),
                command: None,
                paths: Vec::new(),
                diff: String::new(),
                reason: String::new(),
                choices: crate::state::remote_choices(crate::gate::CardKind::AgentTool),
            },
            since: std::time::Instant::now(),
        }
    }

    #[test]
    fn nothing_agent_written_becomes_markup() {
        let evil = "<script>alert(1)</script><img src=x onerror=\"x\">'&\u{1b}[31m";
        let snapshot = Snapshot {
            chats: vec![ChatCards {
                chat: 1,
                label: evil.to_string(),
                agent: evil.to_string(),
                project: evil.to_string(),
                mode: Mode::Default,
                cards: vec![CardView {
                    summary: crate::state::CardSummary {
                        id: 7,
                        title: evil.to_string(),
                        kind: evil.to_string(),
                        command: Some(evil.to_string()),
                        paths: vec![evil.to_string()],
                        diff: evil.to_string(),
                        reason: evil.to_string(),
                        choices: crate::state::remote_choices(crate::gate::CardKind::AgentTool),
                    },
                    since: std::time::Instant::now(),
                }],
            }],
            decided: vec![evil.to_string()],
        };
        let html = cards(&snapshot, "c", std::time::Duration::ZERO, "n");
        // The one script is the page's own, under its nonce.
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert!(html.contains("<script nonce=\"n\">var live"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains('\u{1b}'), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("onerror=&quot;x&quot;"));
        let choices = crate::state::remote_choices(crate::gate::CardKind::AgentTool);
        let form = reason(1, 7, Some((evil, &choices[2])), "c");
        assert!(!form.contains("<script"), "{form}");
    }

    #[test]
    fn no_bypass_grant_or_rule_on_the_page() {
        let snapshot = Snapshot {
            chats: vec![ChatCards {
                chat: 1,
                label: "chat".into(),
                agent: "Claude Code".into(),
                project: "~/src/shop".into(),
                mode: Mode::Default,
                cards: vec![plain_card(7)],
            }],
            decided: Vec::new(),
        };
        let html = cards(&snapshot, "c", std::time::Duration::ZERO, "n");
        let picks: Vec<&str> = html
            .split("name=\"pick\" value=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(picks, vec!["allow", "deny"]);
    }

    #[test]
    fn each_card_names_its_agent_and_project() {
        let chat = |chat: u64, agent: &str, project: &str| ChatCards {
            chat,
            label: "chat".into(),
            agent: agent.into(),
            project: project.into(),
            mode: Mode::Default,
            cards: vec![plain_card(chat * 10), plain_card(chat * 10 + 1)],
        };
        let snapshot = Snapshot {
            chats: vec![
                chat(1, "Claude Code", "~/src/shop"),
                chat(2, "codex-acp", "~/src/blog"),
            ],
            decided: Vec::new(),
        };
        let html = fragment(&snapshot, "c", std::time::Duration::ZERO);
        for (id, agent, project) in [
            ("card-1-10", "Claude Code", "~/src/shop"),
            ("card-1-11", "Claude Code", "~/src/shop"),
            ("card-2-20", "codex-acp", "~/src/blog"),
            ("card-2-21", "codex-acp", "~/src/blog"),
        ] {
            let at = html.find(&format!("id=\"{id}\"")).expect(id);
            let card = &html[at..];
            let card = &card[..card.find("</form>").unwrap_or(card.len())];
            assert!(
                card.contains(&format!("<span class=\"agent\">{agent}</span> in <code class=\"project\">{project}</code>")),
                "{id}: {card}"
            );
        }
    }
}

//! Keys the settings schema does not know: each is an error (`parse`).

use toml_edit::{Document, Item, TableLike, Value};

use super::line_col;

/// Keys of the top level.
const TOP_KEYS: [&str; 10] = [
    "default_agent",
    "agents",
    "rules",
    "notifications",
    "roots",
    "mcp_servers",
    "screen",
    "checkpoints",
    "sandbox",
    "remote",
];
/// Keys of an `[agents.NAME]` block.
pub(crate) const AGENT_KEYS: [&str; 14] = [
    "mcp_servers",
    "auth_method",
    "command",
    "args",
    "env",
    "env_pass",
    "bypass_permissions",
    "default_mode",
    "agent_plan_mode",
    "asking_mode",
    "fs_read",
    "fs_write",
    "terminal",
    "sandbox",
];
/// Keys of a `[[rules]]` entry.
pub(crate) const RULE_KEYS: [&str; 8] = [
    "decision", "agent", "kind", "tool", "command", "path", "host", "note",
];
/// Keys of `[notifications]`.
pub(crate) const NOTIFICATION_KEYS: [&str; 3] = ["bell", "desktop", "turn_end_after"];
/// Keys of `[sandbox]`.
pub(crate) const SANDBOX_KEYS: [&str; 7] = [
    "mode",
    "when_unavailable",
    "writable",
    "hidden",
    "env_pass",
    "network",
    "allow_hosts",
];
/// Keys of an agent block's `sandbox` table.
pub(crate) const AGENT_SANDBOX_KEYS: [&str; 5] =
    ["mode", "writable", "hidden", "network", "allow_hosts"];
/// Keys of `[screen]`.
pub(crate) const SCREEN_KEYS: [&str; 2] = ["scroll_regions", "unfocused_frame_ms"];
/// Keys of `[remote]`.
pub(crate) const REMOTE_KEYS: [&str; 5] = [
    "enabled",
    "listen",
    "public_url",
    "notify_url",
    "notify_after",
];
/// Keys of `[checkpoints]`.
pub(crate) const CHECKPOINT_KEYS: [&str; 5] = [
    "enabled",
    "keep",
    "max_file_size",
    "max_files",
    "tell_agent",
];

/// One key the schema does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownKey {
    /// Where it sits, dotted: `agents.claude.comand`, `rules.pth`, `theme`.
    pub(crate) dotted: String,
    /// The key itself.
    pub(crate) name: String,
    /// 1-based line and column of the key.
    pub(crate) line: usize,
    pub(crate) column: usize,
    /// The index of the `[[rules]]` entry it is in, if any.
    pub(crate) rule: Option<usize>,
    /// The keys its table takes.
    pub(crate) expected: &'static [&'static str],
}

impl UnknownKey {
    /// The known key it is most likely a misspelling of: one of
    /// [`UnknownKey::expected`] at most two edits away (`defualt_agent` ->
    /// `default_agent`), if any.
    pub(crate) fn suggestion(&self) -> Option<&'static str> {
        self.expected
            .iter()
            .map(|known| (edits(&self.name, known), *known))
            .filter(|(n, _)| *n <= 2)
            .min_by_key(|(n, _)| *n)
            .map(|(_, known)| known)
    }
}

/// The edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of two neighbours), by characters.
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Keys the schema does not know, in file order, as `(dotted key, line)`:
/// `("agents.claude.comand", 12)`. The top level, `[agents.NAME]`,
/// `[[rules]]` and `[notifications]` are checked (`env` is free-form). They
/// make the file an error, named with the first one's line. Text that
/// is not valid TOML has none (parsing reports it).
pub fn unknown_keys(text: &str) -> Vec<(String, usize)> {
    find(text)
        .into_iter()
        .map(|key| (key.dotted, key.line))
        .collect()
}

/// [`unknown_keys`] with columns and rule indices.
pub(crate) fn find(text: &str) -> Vec<UnknownKey> {
    let Ok(doc) = Document::parse(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let root = doc.as_table();
    check(text, root, &TOP_KEYS, "", None, &mut out);
    if let Some(agents) = root.get("agents").and_then(Item::as_table_like) {
        for (name, block) in agents.iter() {
            if let Some(block) = block.as_table_like() {
                let prefix = format!("agents.{}.", dotted_part(name));
                check(text, block, &AGENT_KEYS, &prefix, None, &mut out);
                if let Some(sandbox) = block.get("sandbox").and_then(Item::as_table_like) {
                    let prefix = format!("{prefix}sandbox.");
                    check(text, sandbox, &AGENT_SANDBOX_KEYS, &prefix, None, &mut out);
                }
            }
        }
    }
    match root.get("rules") {
        Some(Item::ArrayOfTables(rules)) => {
            for (i, rule) in rules.iter().enumerate() {
                check(text, rule, &RULE_KEYS, "rules.", Some(i), &mut out);
            }
        }
        Some(Item::Value(Value::Array(rules))) => {
            for (i, rule) in rules.iter().enumerate() {
                if let Some(rule) = rule.as_inline_table() {
                    check(text, rule, &RULE_KEYS, "rules.", Some(i), &mut out);
                }
            }
        }
        _ => {}
    }
    if let Some(notifications) = root.get("notifications").and_then(Item::as_table_like) {
        check(
            text,
            notifications,
            &NOTIFICATION_KEYS,
            "notifications.",
            None,
            &mut out,
        );
    }
    if let Some(screen) = root.get("screen").and_then(Item::as_table_like) {
        check(text, screen, &SCREEN_KEYS, "screen.", None, &mut out);
    }
    if let Some(checkpoints) = root.get("checkpoints").and_then(Item::as_table_like) {
        check(
            text,
            checkpoints,
            &CHECKPOINT_KEYS,
            "checkpoints.",
            None,
            &mut out,
        );
    }
    if let Some(sandbox) = root.get("sandbox").and_then(Item::as_table_like) {
        check(text, sandbox, &SANDBOX_KEYS, "sandbox.", None, &mut out);
    }
    if let Some(remote) = root.get("remote").and_then(Item::as_table_like) {
        check(text, remote, &REMOTE_KEYS, "remote.", None, &mut out);
    }
    out.sort_by_key(|key| (key.line, key.column));
    out
}

fn check(
    text: &str,
    table: &dyn TableLike,
    known: &'static [&'static str],
    prefix: &str,
    rule: Option<usize>,
    out: &mut Vec<UnknownKey>,
) {
    for (name, item) in table.iter() {
        if known.contains(&name) {
            continue;
        }
        let span = table
            .get_key_value(name)
            .and_then(|(key, _)| key.span())
            .or_else(|| item.span());
        let (line, column) = span.map_or((1, 1), |span| line_col(text, span.start));
        out.push(UnknownKey {
            dotted: format!("{prefix}{}", dotted_part(name)),
            name: name.to_string(),
            line,
            column,
            rule,
            expected: known,
        });
    }
}

/// A key as it would be written in a dotted key: bare when it can be.
fn dotted_part(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        name.to_string()
    } else {
        toml_edit::Key::new(name).display_repr().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn finds_unknown_keys_everywhere_with_lines() {
        let text = r#"default_agent = "claude"
theme = "dark"

[agents.claude]
command = "npx"
comand = "npx"
env = { ANY_NAME = "ok" }

[agents."my.agent"]
command = "x"
bypass = true

[[rules]]
decision = "deny"
pth = "~/.ssh/**"

[notifications]
bell = false
sound = "ping"

[extra]
a = 1
"#;
        assert_eq!(
            unknown_keys(text),
            vec![
                ("theme".to_string(), 2),
                ("agents.claude.comand".to_string(), 6),
                ("agents.\"my.agent\".bypass".to_string(), 11),
                ("rules.pth".to_string(), 15),
                ("notifications.sound".to_string(), 19),
                ("extra".to_string(), 21),
            ]
        );
        let found = find(text);
        assert_eq!(found[3].rule, Some(0));
        assert_eq!((found[3].line, found[3].column), (15, 1));
        assert_eq!(found[0].rule, None);
    }

    #[test]
    fn dotted_and_inline_forms_are_checked_too() {
        let text = "agents.a.command = \"x\"\nagents.a.argz = []\n\
                    rules = [{ decision = \"ask\", nite = \"x\" }]\n";
        assert_eq!(
            unknown_keys(text),
            vec![
                ("agents.a.argz".to_string(), 2),
                ("rules.nite".to_string(), 3)
            ]
        );
    }

    #[test]
    fn known_keys_and_bad_toml_give_nothing() {
        let example = include_str!("../../config.example.toml");
        assert_eq!(unknown_keys(example), Vec::new());
        assert_eq!(unknown_keys(super::super::template()), Vec::new());
        assert_eq!(unknown_keys("[agents\ncommand = 1"), Vec::new());
    }
}

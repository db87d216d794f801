//! What the policy looks at in a permission request.

use std::borrow::Cow;

use serde_json::Value;

use crate::gate::CardKind;

use super::{Category, category};
use crate::model::{PermissionOption, PermissionRequest, ToolCall, ToolContent, ToolKind};

/// The keys of `rawInput` whose string values are paths the call touches.
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "filepath",
    "abs_path",
    "absolute_path",
    "dir_path",
    "directory",
    "notebook_path",
    "source",
    "destination",
    "old_path",
    "new_path",
];

/// The tool name of warden's synthetic request for the agent's `fs/read_text_file`.
pub const CLIENT_READ: &str = "fs/read_text_file";
/// The tool name of warden's synthetic request for the agent's `fs/write_text_file`.
pub const CLIENT_WRITE: &str = "fs/write_text_file";
/// The tool name of warden's synthetic request for the agent's `terminal/create`.
pub const CLIENT_TERMINAL: &str = "terminal/create";
/// The tool name of warden's request for a connection the agent's process
/// tree opens through warden's proxy (issue 35): its `raw_input` holds the
/// `host` and the `port`.
pub const CLIENT_NETWORK: &str = "net/connect";

/// A permission request with the fields of its tool call merged in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestView {
    pub kind: ToolKind,
    pub title: String,
    pub tool_name: Option<String>,
    pub raw_input: Option<Value>,
    /// Paths of the call's `locations`.
    pub locations: Vec<String>,
    /// Paths of the call's diff content.
    pub diff_paths: Vec<String>,
    /// The agent's options, in its order.
    pub options: Vec<PermissionOption>,
    /// The agent sent no kind (`kind` is then `Other`): the kind the
    /// request's content suggests (a command: execute; a diff: edit; a URL:
    /// fetch). Deny and ask rules of that kind apply too; no allow rule
    /// matches a request whose kind had to be guessed.
    pub inferred_kind: Option<ToolKind>,
    /// What the card asks about: the agent's own tool, warden's request for
    /// one of its client calls (`fs/read_text_file`, `fs/write_text_file`,
    /// `terminal/create`), a mode switch, or an elicitation (codex-acp: a
    /// toolCallId starting `elicitation-`, or a `rawInput` shaped like
    /// `elicitation/create` params).
    pub card: CardKind,
}

impl RequestView {
    /// Merge a request with the tool call already known under its id: the
    /// request's fields win, else the known call's (a request may carry only
    /// some fields). An empty title, an empty or `null` raw input and empty
    /// lists count as missing.
    pub(crate) fn from_request(req: &PermissionRequest, known: Option<&ToolCall>) -> RequestView {
        let fields = &req.fields;
        let title = fields
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .or_else(|| known.map(|k| k.title.clone()))
            .unwrap_or_default();
        let raw_input = fields
            .raw_input
            .clone()
            .filter(has_content)
            .or_else(|| known.and_then(|k| k.raw_input.clone()).filter(has_content));
        let locations = fields
            .locations
            .as_ref()
            .filter(|l| !l.is_empty())
            .or(known.map(|k| &k.locations))
            .map(|l| l.iter().map(|l| l.path.clone()).collect())
            .unwrap_or_default();
        let diff_paths = fields
            .content
            .as_ref()
            .filter(|c| !c.is_empty())
            .or(known.map(|k| &k.content))
            .map(|c| diff_paths(c))
            .unwrap_or_default();
        let kind = fields.kind.or(known.map(|k| k.kind)).unwrap_or_default();
        let mut view = RequestView {
            kind,
            title,
            tool_name: fields
                .tool_name
                .clone()
                .or_else(|| known.and_then(|k| k.tool_name.clone())),
            raw_input,
            locations,
            diff_paths,
            options: req.options.clone(),
            inferred_kind: None,
            card: CardKind::AgentTool,
        };
        view.card = CardKind::of(
            req.client,
            view.tool_name.as_deref(),
            is_elicitation(&req.tool_call_id, view.raw_input.as_ref()),
            kind,
        );
        if fields.kind.is_none() && kind == ToolKind::Other {
            view.inferred_kind = view.infer_kind();
        }
        view
    }

    /// What a request without a kind carries: a command (in `rawInput`, or
    /// a title such as `Shell: ls`) makes it execute, a diff edit, a URL fetch.
    fn infer_kind(&self) -> Option<ToolKind> {
        if self.input_command().is_some() || title_prefix(&self.title).is_some() {
            Some(ToolKind::Execute)
        } else if !self.diff_paths.is_empty() {
            Some(ToolKind::Edit)
        } else if self
            .raw_input
            .as_ref()
            .is_some_and(|i| i.get("url").is_some())
        {
            Some(ToolKind::Fetch)
        } else {
            None
        }
    }

    /// The request's category.
    pub(crate) fn category(&self) -> Category {
        category(self.kind)
    }

    /// The tool's name: `tool_name`, else the title's first word (without
    /// quotes and backticks), else the kind name. warden's client calls are
    /// named after the call ([`CLIENT_READ`], [`CLIENT_WRITE`],
    /// [`CLIENT_TERMINAL`]); an agent's own tool that takes one of those
    /// names, or a name that reads as one of them or mixes scripts
    /// ([`crate::confusable::tool_name`]: `fs/write_text_fіle` with a
    /// Cyrillic `і`), is `agent:NAME`, so that grants and `tool` rules never
    /// cross between the agent's tools and warden's calls.
    pub(crate) fn tool(&self) -> String {
        let name = self
            .tool_name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| {
                self.title
                    .split_whitespace()
                    .next()
                    .map(|w| {
                        w.trim_matches(|c: char| !(c.is_alphanumeric() || "_-.:/".contains(c)))
                    })
                    .filter(|w| !w.is_empty())
                    .map_or_else(|| self.kind.as_str().to_string(), str::to_string)
            });
        let reserved = crate::confusable::tool_name(&name, &crate::confusable::OWN_TOOLS).is_some();
        if reserved && !self.card.is_client() {
            format!("agent:{name}")
        } else {
            name
        }
    }

    /// The shell command: from `rawInput` (see [`RequestView::command_exact`]),
    /// else, for a request of the execute category, the title without a tool
    /// prefix (`Shell: `, `Bash: `, ...) and backticks: gemini-cli and
    /// kimi-cli send the command only there.
    pub fn command(&self) -> Option<String> {
        self.input_command().or_else(|| self.title_command())
    }

    /// Whether [`RequestView::command`] is the command as it will run, so
    /// that allow rules, grants and the agent's own session option may
    /// cover it: `rawInput`'s, or the title's of a command the agent runs
    /// itself (gemini-cli sends no `rawInput`), whose title is as much the
    /// agent's word as a `rawInput` it could send. Not the title of warden's
    /// own `terminal/create` request, whose command is exact from its call,
    /// nor a title warden cannot take apart with confidence
    /// ([`title_command_line`]).
    pub(crate) fn command_exact(&self) -> bool {
        if self.input_command().is_some() {
            return true;
        }
        // Not a kind warden had to guess (kimi-cli sends none and runs its
        // commands through warden's terminal).
        if self.card.is_client()
            || self.category() != Category::Execute
            || self.inferred_kind.is_some()
        {
            return false;
        }
        // A title that is the tool's name (`Bash`, `Terminal`: what an agent
        // shows before its input arrives) names no command.
        title_command_line(title_prefix(&self.title).unwrap_or(&self.title)).is_some_and(|c| {
            let c = c.to_ascii_lowercase();
            !TITLE_TOOLS.contains(&c.as_str())
                && self
                    .tool_name
                    .as_ref()
                    .is_none_or(|t| t.to_ascii_lowercase() != c)
        })
    }

    /// Whether [`RequestView::command`] came from `rawInput`: deny and ask
    /// command rules count any other reading as unknown (a title may say
    /// less than what runs), as the kernel sandbox holds what really runs.
    pub(crate) fn command_from_input(&self) -> bool {
        self.input_command().is_some()
    }

    /// The command in `rawInput` ([`command_of_input`]).
    fn input_command(&self) -> Option<String> {
        command_of_input(self.raw_input.as_ref()?)
    }

    /// Every reading of the command besides [`RequestView::command`]:
    /// each other key of `rawInput` that holds one (`command`, `cmd`,
    /// `argv`, `args`), and the title's for an execute request. The agent
    /// may run any of them: deny and ask rules meet them all.
    pub(crate) fn other_commands(&self) -> Vec<String> {
        let first = self.command();
        let mut out: Vec<String> = Vec::new();
        let input = self.raw_input.as_ref();
        let readings = COMMAND_KEYS
            .iter()
            .filter_map(|key| input.and_then(|i| reading(i, key)))
            .chain(self.title_command())
            .chain(self.title_as_written());
        for reading in readings {
            if Some(&reading) != first.as_ref() && !out.contains(&reading) {
                out.push(reading);
            }
        }
        out
    }

    /// Whether `rawInput` holds two commands that differ (`command` and
    /// `cmd`): warden cannot tell which runs, so no allow rule covers it.
    pub(crate) fn commands_disagree(&self) -> bool {
        let Some(input) = &self.raw_input else {
            return false;
        };
        let mut readings = COMMAND_KEYS.iter().filter_map(|key| reading(input, key));
        let first = readings.next();
        readings.any(|r| Some(&r) != first.as_ref())
    }

    /// The working directory the request names (`rawInput.cwd`; a relative
    /// one is taken from the session's), which its relative paths and
    /// commands are taken from.
    pub(crate) fn cwd(&self) -> Option<&str> {
        ["cwd", "workdir", "working_directory"]
            .iter()
            .find_map(|key| self.raw_input.as_ref()?.get(*key)?.as_str())
            .filter(|cwd| !cwd.trim().is_empty())
    }

    /// The command an execute request's title names, if any: without a
    /// tool prefix, backticks, and what gemini-cli adds after it
    /// ([`title_command_line`]); the whole rest of the title when that
    /// cannot be taken apart.
    fn title_command(&self) -> Option<String> {
        if self.category() != Category::Execute {
            return None;
        }
        let title = title_prefix(&self.title).unwrap_or(&self.title);
        Some(title_command_line(title).unwrap_or_else(|| unquoted(title)))
            .filter(|c| !c.is_empty())
            .map(str::to_string)
    }

    /// The title's whole rest as a command, when [`Self::title_command`] took
    /// something off it: one more reading for deny and ask rules.
    fn title_as_written(&self) -> Option<String> {
        if self.category() != Category::Execute {
            return None;
        }
        let title = unquoted(title_prefix(&self.title).unwrap_or(&self.title)).to_string();
        (Some(&title) != self.title_command().as_ref() && !title.is_empty()).then_some(title)
    }

    /// The environment the call sets (`rawInput.env`: an object of strings,
    /// or an array of `{name, value}`), as sent.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let Some(env) = self.raw_input.as_ref().and_then(|i| i.get("env")) else {
            return Vec::new();
        };
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match env {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), text(v))).collect(),
            Value::Array(items) => items
                .iter()
                .filter_map(|item| {
                    let name = item.get("name")?.as_str()?;
                    Some((
                        name.to_string(),
                        item.get("value").map(text).unwrap_or_default(),
                    ))
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every path the call touches, as sent, without duplicates: locations,
    /// diff paths, then `rawInput`'s `path`, `file_path`, `filePath`,
    /// `filepath` (opencode), `abs_path`, `absolute_path` and `dir_path`
    /// (gemini-cli), `directory`, `notebook_path`, `source`,
    /// `destination`, `old_path`, `new_path`, the strings of `paths`, and the
    /// keys of `changes` with their `move_path` (codex).
    pub(crate) fn paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |p: &str| {
            if !p.trim().is_empty() && !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        };
        self.locations.iter().for_each(|p| push(p));
        self.diff_paths.iter().for_each(|p| push(p));
        if let Some(input) = &self.raw_input {
            for key in PATH_KEYS {
                if let Some(Value::String(p)) = input.get(key) {
                    push(p);
                }
            }
            if let Some(Value::Array(items)) = input.get("paths") {
                items.iter().filter_map(Value::as_str).for_each(&mut push);
            }
            // codex: `changes` keyed by path, a rename's target in `move_path`.
            if let Some(Value::Object(changes)) = input.get("changes") {
                for (path, change) in changes {
                    push(path);
                    if let Some(Value::String(to)) = change.get("move_path") {
                        push(to);
                    }
                }
            }
        }
        out
    }
}

/// Tool names agents put before a command in a title (`Shell: ls`).
const TITLE_TOOLS: &[&str] = &[
    "shell",
    "bash",
    "sh",
    "zsh",
    "terminal",
    "command",
    "run",
    "run command",
    "run_shell_command",
    "execute",
    "exec",
    "powershell",
    "cmd",
];

/// What gemini-cli writes after a command in its title, before the
/// directory it runs in: ` [current working directory DIR]`, ` [in DIR]`.
const TITLE_DIR_MARKS: &[&str] = &[" [current working directory ", " [in "];

/// A title without surrounding backticks, trimmed.
fn unquoted(title: &str) -> &str {
    let title = title.trim();
    if title.len() >= 2 && title.starts_with('`') && title.ends_with('`') {
        title[1..title.len() - 1].trim()
    } else {
        title
    }
}

/// The command of an agent's title for a command it runs itself, read like
/// a command line: backticks and what gemini-cli adds after the command
/// (` [current working directory DIR] (DESCRIPTION)`, ` [in DIR]`) taken
/// off, nothing else. `None` (fail closed) for a title that has such a mark
/// in another shape, that looks cut short (`...`, `…`), that spans lines,
/// or that is empty.
fn title_command_line(title: &str) -> Option<&str> {
    let mut command = unquoted(title);
    let marks: Vec<usize> = TITLE_DIR_MARKS
        .iter()
        .filter_map(|mark| command.find(mark))
        .collect();
    if let Some(&at) = marks.iter().min() {
        // The mark's bracket closes at the first `]` after it; then only a
        // description in parentheses may follow, to the end.
        let rest = &command[at..];
        let close = rest.find(']')?;
        let after = rest[close + 1..].trim();
        let described = after.is_empty() || (after.starts_with('(') && after.ends_with(')'));
        if !described || rest[2..close].contains('[') {
            return None;
        }
        command = unquoted(&command[..at]);
    }
    let cut_short = command.ends_with("...") || command.ends_with('…');
    (!command.is_empty() && !cut_short && !command.contains(['\n', '\r'])).then_some(command)
}

/// The rest of a title after a tool prefix: `Shell: ls` and `Run `ls``
/// give `ls` (backticks kept).
fn title_prefix(title: &str) -> Option<&str> {
    let title = title.trim();
    if let Some((head, rest)) = title.split_once(':')
        && TITLE_TOOLS.contains(&head.trim().to_ascii_lowercase().as_str())
    {
        return Some(rest.trim());
    }
    let (head, rest) = title.split_once(' ')?;
    let verb = matches!(
        head.to_ascii_lowercase().as_str(),
        "run" | "running" | "execute" | "executing"
    );
    (verb && rest.trim_start().starts_with('`')).then(|| rest.trim())
}

fn has_content(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        _ => true,
    }
}

fn diff_paths(content: &[ToolContent]) -> Vec<String> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Diff { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

/// The script of `sh -c SCRIPT` (and its kin).
fn shell_script(args: &[String]) -> Option<String> {
    let [shell, flag, script] = args else {
        return None;
    };
    let name = shell.rsplit('/').next().unwrap_or(shell);
    let is_shell = matches!(name, "sh" | "bash" | "zsh" | "dash");
    let is_c = flag.starts_with('-')
        && flag.ends_with('c')
        && flag[1..].chars().all(|c| c.is_ascii_lowercase());
    (is_shell && is_c).then(|| script.clone())
}

/// The command in `rawInput`: `command`, `cmd`, `argv` or `args`; a
/// string, or an argument array. An array `[sh|bash|zsh|dash,
/// -c|-lc.., SCRIPT]` is the script; another array is joined with
/// spaces, each argument that needs it single-quoted (so `["rm", "a;
/// b"]` stays one command). A string `command` with an `args` array is
/// the program and its arguments. The one reading of a tool call's
/// command: the policy judges it, and the transcript and the card show it.
pub fn command_of_input(input: &Value) -> Option<String> {
    let key = COMMAND_KEYS.iter().find(|k| {
        input
            .get(**k)
            .is_some_and(|v| v.is_string() || v.is_array())
    })?;
    reading(input, key)
}

/// The keys of `rawInput` that may hold the command, in the order
/// [`command_of_input`] reads them.
const COMMAND_KEYS: &[&str] = &["command", "cmd", "argv", "args"];

/// The command `rawInput`'s `key` holds (see [`command_of_input`]); `args`
/// alone is no command when a string `command` takes it as its arguments.
fn reading(input: &Value, key: &str) -> Option<String> {
    let strings = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    };
    if key == "args" && input.get("command").is_some_and(Value::is_string) {
        return None;
    }
    let value = input.get(key).filter(|v| v.is_string() || v.is_array())?;
    let command = match value {
        Value::String(s) if key == "args" => s.clone(),
        Value::String(s) => match input.get("args") {
            Some(Value::Array(args)) if !args.is_empty() => {
                let mut argv = vec![s.clone()];
                argv.extend(strings(args));
                shell_join(&argv)
            }
            _ => s.clone(),
        },
        Value::Array(items) => {
            let args = strings(items);
            shell_script(&args).unwrap_or_else(|| shell_join(&args))
        }
        _ => return None,
    };
    Some(command).filter(|c| !c.trim().is_empty())
}

/// `word` as the shell needs it typed: as is when it is only letters,
/// digits and `_@%+=:,./-`, else in single quotes.
pub fn shell_quote(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
    }
}

/// `args` as one shell line: each argument quoted when the shell would
/// otherwise split or expand it ([`shell_quote`]).
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a permission request stands for an elicitation: its tool call id
/// starts `elicitation-` (any case, after spaces), or its `rawInput` carries
/// an `elicitationId`, a `requestedSchema`, or `mode` `url`/`form` with a
/// `message` (the params of `elicitation/create`).
pub(crate) fn is_elicitation(tool_call_id: &str, raw_input: Option<&Value>) -> bool {
    if tool_call_id
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("elicitation")
    {
        return true;
    }
    let Some(input) = raw_input else {
        return false;
    };
    input.get("elicitationId").is_some()
        || input.get("requestedSchema").is_some()
        || (input.get("message").is_some()
            && matches!(
                input.get("mode").and_then(Value::as_str),
                Some("url" | "form")
            ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Location, OptionKind, ToolCallFields, WireStatus};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn view(raw: Value) -> RequestView {
        RequestView {
            kind: ToolKind::Execute,
            raw_input: Some(raw),
            ..RequestView::default()
        }
    }

    /// gemini-cli 0.61.0 titles its shell calls with the command alone
    /// (gemini-cli-0.61.0-fakellm-shell-allow.jsonl; the directory and
    /// description go in its content); other versions add them to the
    /// title. Only those additions come off; any other shape fails closed.
    #[test]
    fn a_title_is_read_like_a_command_line_and_only_geminis_additions_come_off() {
        let exec = |title: &str| RequestView {
            kind: ToolKind::Execute,
            title: title.into(),
            ..RequestView::default()
        };
        for (title, want) in [
            ("touch created-by-agent.txt", "touch created-by-agent.txt"),
            (
                "touch created-by-agent.txt [current working directory /tmp/w] (Create an empty file)",
                "touch created-by-agent.txt",
            ),
            ("ls -la [in src]", "ls -la"),
            ("ls -la [in src] (List (all) files)", "ls -la"),
            ("`cargo test`", "cargo test"),
            ("Shell: touch a", "touch a"),
            ("echo '(not a description)'", "echo '(not a description)'"),
        ] {
            let v = exec(title);
            assert_eq!(v.command().as_deref(), Some(want), "{title}");
            assert!(v.command_exact(), "{title}");
            assert!(!v.command_from_input(), "{title}");
        }
        // Unsure: the mark in another shape, a title cut short, lines.
        for title in [
            "rm -rf x [in /tmp] ; rm -rf y",
            "rm x [current working directory /a [b]] (d)",
            "rm x [in /tmp",
            "rm -rf /home/me/proj...",
            "rm -rf /home/me/proj…",
            "touch a\nrm -rf b",
            "  ",
            "Bash",
            "Terminal",
        ] {
            assert!(!exec(title).command_exact(), "{title:?}");
        }
        // What the title said as written stays a reading for deny rules.
        let v = exec("rm -rf x [in /tmp] (clean)");
        assert_eq!(v.command().as_deref(), Some("rm -rf x"));
        assert_eq!(v.other_commands(), vec!["rm -rf x [in /tmp] (clean)"]);
        // warden's own terminal request: exact from its call only.
        let terminal = RequestView {
            card: CardKind::ClientTerminal,
            ..exec("touch a")
        };
        assert!(!terminal.command_exact());
        // Not a command: an edit's title is no command line.
        let edit = RequestView {
            kind: ToolKind::Edit,
            ..exec("touch a")
        };
        assert!(!edit.command_exact());
        let named = RequestView {
            tool_name: Some("Tool".into()),
            ..exec("Tool")
        };
        assert!(!named.command_exact());
    }

    #[test]
    fn request_fields_win_and_known_fills_the_gaps() {
        let known = ToolCall {
            id: "t1".into(),
            title: "Edit file".into(),
            kind: ToolKind::Edit,
            status: WireStatus::Pending,
            content: vec![ToolContent::Diff {
                path: "/p/a.rs".into(),
                old: None,
                new: "x".into(),
            }],
            locations: vec![Location {
                path: "/p/a.rs".into(),
                line: None,
            }],
            raw_input: Some(json!({"file_path": "/p/a.rs"})),
            raw_output: None,
            tool_name: Some("Edit".into()),
            agent_terminals: Vec::new(),
        };
        let option = PermissionOption {
            id: "ok".into(),
            name: "Allow".into(),
            kind: OptionKind::AllowOnce,
        };
        let req = PermissionRequest {
            session_id: "s".into(),
            tool_call_id: "t1".into(),
            fields: ToolCallFields {
                title: Some("Write /p/b.rs".into()),
                raw_input: Some(json!({})),
                locations: Some(vec![]),
                ..ToolCallFields::default()
            },
            options: vec![option.clone()],
            client: false,
        };
        let got = RequestView::from_request(&req, Some(&known));
        assert_eq!(
            got,
            RequestView {
                kind: ToolKind::Edit,
                title: "Write /p/b.rs".into(),
                tool_name: Some("Edit".into()),
                raw_input: Some(json!({"file_path": "/p/a.rs"})),
                locations: vec!["/p/a.rs".into()],
                diff_paths: vec!["/p/a.rs".into()],
                options: vec![option],
                inferred_kind: None,
                card: CardKind::AgentTool,
            }
        );
        assert_eq!(got.paths(), ["/p/a.rs"]);

        let alone = RequestView::from_request(&req, None);
        assert_eq!(alone.kind, ToolKind::Other);
        assert_eq!(alone.raw_input, None);
        assert_eq!(alone.tool(), "Write");
    }

    #[test]
    fn tool_name_falls_back_to_title_then_kind() {
        let mut v = RequestView {
            kind: ToolKind::Fetch,
            title: "`curl` example.com".into(),
            ..RequestView::default()
        };
        assert_eq!(v.tool(), "curl");
        v.title = "  ".into();
        assert_eq!(v.tool(), "fetch");
        v.tool_name = Some("WebFetch".into());
        assert_eq!(v.tool(), "WebFetch");
    }

    #[test]
    fn command_shapes() {
        assert_eq!(
            view(json!({"command": "ls -la"})).command().as_deref(),
            Some("ls -la")
        );
        assert_eq!(view(json!({"cmd": "ls"})).command().as_deref(), Some("ls"));
        assert_eq!(
            view(json!({"command": ["cargo", "test", "--", "a b", "it's"]}))
                .command()
                .as_deref(),
            Some("cargo test -- 'a b' 'it'\\''s'")
        );
        assert_eq!(
            view(json!({"command": ["/bin/bash", "-lc", "cargo test && rm x"]}))
                .command()
                .as_deref(),
            Some("cargo test && rm x")
        );
        assert_eq!(view(json!({"command": "  "})).command(), None);
        assert_eq!(view(json!({"command": 3})).command(), None);
        assert_eq!(view(json!({"description": "x"})).command(), None);
    }

    #[test]
    fn paths_from_everywhere_without_duplicates() {
        let mut v = view(json!({
            "path": "a", "file_path": "b", "filePath": "c", "abs_path": "d",
            "source": "e", "destination": "f", "old_path": "g", "new_path": "h",
            "paths": ["i", 3, "a"], "command": "not a path"
        }));
        v.locations = vec!["l".into(), "a".into()];
        v.diff_paths = vec!["m".into()];
        assert_eq!(
            v.paths(),
            ["l", "a", "m", "b", "c", "d", "e", "f", "g", "h", "i"]
        );
    }
}

//! The settings file: agents, rules and notifications.
//!
//! Reading: [`load`] and [`parse`] (errors carry a line and column; a key
//! the schema does not know, [`unknown_keys`], is one). Writing: [`apply`] one typed [`Edit`] (comment- and
//! order-preserving, locked, atomic, never over a file that does not parse);
//! a file that does not exist yet starts from [`template`].

mod edit;
mod file;
mod keys;
mod naming;

#[cfg(test)]
mod example_tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer};

use crate::policy::{KindMatch, Mode, Rule, RuleDecision};
use crate::sandbox::{SandboxMode, WhenUnavailable};

pub use edit::{
    Applied, Edit, WriteError, agent_for_command, agent_for_identity, apply, apply_edit,
    bypass_edit, describe_applied, unique_agent_name,
};
pub use keys::unknown_keys;
pub(crate) use naming::{
    agent_identity, agent_name_for, agent_slug, name_refused, name_refused_by_file, pinned_command,
};

/// The name the built-in demo agent goes by.
pub(crate) const DEMO_AGENT: &str = "demo";

// What a run whose settings did not load decides by: the state's (it
// recognises the rule on the rules screen).
pub(crate) use crate::state::NOT_LOADED;
pub use crate::state::fail_closed_rule;

/// The parsed settings file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct Settings {
    /// Agent started when none is named on the command line.
    pub default_agent: Option<String>,
    /// `[agents.NAME]` blocks.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentSettings>,
    /// `[[rules]]`, in file order.
    #[serde(default, deserialize_with = "lenient_rules")]
    pub rules: Vec<Rule>,
    /// `[notifications]`.
    #[serde(default)]
    pub notifications: Notifications,
    /// Directories besides the chat's cwd that the agent's own file and
    /// terminal requests may touch (`~` expands).
    #[serde(default)]
    pub roots: Vec<String>,
    /// `[mcp_servers.NAME]`: MCP servers passed to every agent's sessions
    /// (an agent's own `[agents.NAME.mcp_servers.X]` adds to them, and
    /// replaces one of the same name).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerSettings>,
    /// `[screen]`.
    #[serde(default)]
    pub screen: Screen,
    /// `[checkpoints]`.
    #[serde(default)]
    pub checkpoints: CheckpointSettings,
    /// `[sandbox]`: how every agent process is confined.
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// `[remote]`: waiting cards served to another device (`src/remote/`).
    #[serde(default)]
    pub remote: RemoteSettings,
}

/// `[remote]`: approve from another device. Off unless enabled here or by
/// `warden --remote`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RemoteSettings {
    /// Start the server with every warden.
    pub enabled: bool,
    /// The address to listen on: 127.0.0.1 unless said otherwise (warden
    /// then says so in red).
    pub listen: String,
    /// The address a phone opens (`https://box.tailnet.ts.net`): what the
    /// URL, its QR code and the notification's link say instead of the
    /// address warden listens on.
    pub public_url: Option<String>,
    /// An ntfy-style topic URL or any webhook (`http://` or `https://`):
    /// POSTed a title and a link, never the content, when a card waits too
    /// long.
    pub notify_url: Option<String>,
    /// Seconds a card waits before `notify_url` is told.
    pub notify_after: u64,
}

impl Default for RemoteSettings {
    fn default() -> Self {
        RemoteSettings {
            enabled: false,
            listen: "127.0.0.1:8765".to_string(),
            public_url: None,
            notify_url: None,
            notify_after: 60,
        }
    }
}

/// `[sandbox]`: the confinement of every agent process (an agent block's
/// `sandbox` table changes it for that agent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct SandboxSettings {
    /// `workspace-write` (the default), `read-only` or `off`.
    #[serde(default)]
    pub mode: SandboxMode,
    /// Without Landlock: `refuse` to start (the default) or `run-unconfined`.
    #[serde(default)]
    pub when_unavailable: WhenUnavailable,
    /// More paths every agent may write (`~` expands).
    #[serde(default)]
    pub writable: Vec<String>,
    /// More paths no agent may read (`~` expands).
    #[serde(default)]
    pub hidden: Vec<String>,
    /// More variables of warden's environment every agent gets (`NAME`,
    /// or `PREFIX_*`), besides the defaults and each agent's own.
    #[serde(default, deserialize_with = "env_patterns")]
    pub env_pass: Vec<String>,
}

/// A list of variable names or `PREFIX_*` patterns; anything else is an
/// error (a pattern that matches nothing would pass nothing silently).
fn env_patterns<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<String>, D::Error> {
    let patterns = Vec::<String>::deserialize(de)?;
    if let Some(bad) = patterns
        .iter()
        .find(|p| !crate::sandbox::env::is_pattern(p))
    {
        return Err(serde::de::Error::custom(format!(
            "`{bad}` is not a variable name or `PREFIX_*` pattern (letters, digits and `_`, \
             an optional `*` at the end)"
        )));
    }
    Ok(patterns)
}

/// `[agents.NAME.sandbox]` (or `sandbox.writable = [...]` in the block).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct AgentSandbox {
    /// This agent's mode, instead of `[sandbox] mode`.
    pub mode: Option<SandboxMode>,
    /// More paths this agent may write, besides its known state directories.
    #[serde(default)]
    pub writable: Vec<String>,
    /// More paths this agent may not read.
    #[serde(default)]
    pub hidden: Vec<String>,
}

/// `[screen]`: how warden draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Screen {
    /// Let the terminal scroll the transcript itself (a scroll region) while
    /// an answer streams, sending only the new lines; `false` draws moved
    /// lines again, for terminals and multiplexers without scroll regions.
    #[serde(default = "yes")]
    pub scroll_regions: bool,
    /// Milliseconds between two frames while the terminal is not focused
    /// (it says so with focus events); a frame is drawn at once when it is
    /// focused again. At least the focused 16 ms.
    #[serde(default = "unfocused_frame_ms")]
    pub unfocused_frame_ms: u64,
}

/// The default of [`Screen::unfocused_frame_ms`]: four frames a second.
fn unfocused_frame_ms() -> u64 {
    250
}

impl Default for Screen {
    fn default() -> Self {
        Screen {
            scroll_regions: true,
            unfocused_frame_ms: unfocused_frame_ms(),
        }
    }
}

/// `[checkpoints]`: snapshots of the workspace around every turn, for
/// `/undo`, `/changes` and `/checkpoints`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckpointSettings {
    /// Take checkpoints at all.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// How many to keep per workspace: a number of steps (`100`) or days (`"7d"`).
    #[serde(default)]
    pub keep: Option<NumberOrText>,
    /// Files larger than this are left out: bytes, or `"10MB"`, `"512KB"`.
    #[serde(default)]
    pub max_file_size: Option<NumberOrText>,
    /// A workspace with more new or changed files than this has its
    /// checkpoints switched off (default 100,000).
    #[serde(default)]
    pub max_files: Option<usize>,
    /// After an undo, the next prompt tells the agent the files were restored.
    #[serde(default = "yes")]
    pub tell_agent: bool,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: true,
            keep: None,
            max_file_size: None,
            max_files: None,
            tell_agent: true,
        }
    }
}

/// A setting written as a number or as text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum NumberOrText {
    Number(u64),
    Text(String),
}

impl CheckpointSettings {
    /// The checkpoint options with stores under `dir`; `None` when off.
    pub fn options(&self, dir: PathBuf) -> Option<crate::checkpoint::CheckpointOptions> {
        if !self.enabled {
            return None;
        }
        let mut options = crate::checkpoint::CheckpointOptions::in_dir(dir);
        options.tell_agent = self.tell_agent;
        match &self.keep {
            Some(NumberOrText::Number(n)) => {
                options.keep =
                    crate::checkpoint::Keep::Last(usize::try_from(*n).unwrap_or(usize::MAX).max(1));
            }
            Some(NumberOrText::Text(text)) => {
                if let Some(keep) = crate::checkpoint::Keep::parse(text) {
                    options.keep = keep;
                }
            }
            None => {}
        }
        match &self.max_file_size {
            Some(NumberOrText::Number(n)) => options.limits.max_file_size = *n,
            Some(NumberOrText::Text(text)) => {
                if let Some(n) = parse_size(text) {
                    options.limits.max_file_size = n;
                }
            }
            None => {}
        }
        if let Some(n) = self.max_files {
            options.limits.max_files = n;
        }
        Some(options)
    }
}

/// `"10MB"`, `"512 KB"`, `"1GB"`, `"300"` as bytes.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_uppercase();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = digits.parse().ok()?;
    let scale = match unit.trim().trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1024,
        "M" => 1024 * 1024,
        "G" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// One `[mcp_servers.NAME]` block: a local server (`command`, `args`,
/// `env`) or a remote one (`url`, `headers`, `type = "http"` or `"sse"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct McpServerSettings {
    /// Program of a local (stdio) server.
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Address of a remote server.
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `stdio`, `http` (the default with a `url`) or `sse`.
    #[serde(rename = "type")]
    pub transport: Option<String>,
}

impl McpServerSettings {
    /// The server as passed to the agent; an error names what is wrong.
    pub(crate) fn to_server(&self, name: &str) -> Result<crate::acp::McpServer, String> {
        use crate::acp::McpTransport;
        let transport = match (self.transport.as_deref(), &self.command, &self.url) {
            (None | Some("stdio"), Some(command), None) => McpTransport::Stdio {
                command: command.clone(),
                args: self.args.clone(),
                env: self.env.clone().into_iter().collect(),
            },
            (None | Some("http"), None, Some(url)) => McpTransport::Http {
                url: url.clone(),
                headers: self.headers.clone().into_iter().collect(),
            },
            (Some("sse"), None, Some(url)) => McpTransport::Sse {
                url: url.clone(),
                headers: self.headers.clone().into_iter().collect(),
            },
            _ => {
                return Err(format!(
                    "mcp server `{name}`: give either `command` (type stdio) or `url` (type http or sse)"
                ));
            }
        };
        Ok(crate::acp::McpServer {
            name: name.to_string(),
            transport,
        })
    }
}

/// `[notifications]`: what happens when a card appears.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Notifications {
    /// Ring the terminal bell.
    #[serde(default = "yes")]
    pub bell: bool,
    /// Send an OSC 9 desktop notification.
    #[serde(default = "yes")]
    pub desktop: bool,
    /// A turn that took at least this many seconds alerts (bell and desktop
    /// notification, as above) when it ends while the terminal is not
    /// focused; 0 turns it off.
    #[serde(default = "turn_end_after")]
    pub turn_end_after: u64,
}

fn turn_end_after() -> u64 {
    30
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications {
            bell: true,
            desktop: true,
            turn_end_after: turn_end_after(),
        }
    }
}

fn yes() -> bool {
    true
}

/// One `[agents.NAME]` block.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AgentSettings {
    /// Program to run.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of warden's environment this agent gets besides the
    /// defaults and its own (`NAME` or `PREFIX_*`).
    #[serde(default, deserialize_with = "env_patterns")]
    pub env_pass: Vec<String>,
    /// Allow every request of this agent without asking (deny and ask rules still apply).
    #[serde(default)]
    pub bypass_permissions: bool,
    /// The mode a new chat with this agent starts in.
    pub default_mode: Option<Mode>,
    /// The agent's own mode id to switch it to while the chat is in Plan (opt-in).
    pub agent_plan_mode: Option<String>,
    /// The agent's own mode id that asks before acting, where warden keeps
    /// it (default: found from the modes the agent advertises).
    #[serde(default)]
    pub asking_mode: Option<String>,
    /// Offer `fs/read_text_file` to this agent.
    #[serde(default = "yes")]
    pub fs_read: bool,
    /// Offer `fs/write_text_file` to this agent.
    #[serde(default = "yes")]
    pub fs_write: bool,
    /// Offer `terminal/*` to this agent.
    #[serde(default = "yes")]
    pub terminal: bool,
    /// `[agents.NAME.mcp_servers.X]`: MCP servers for this agent's sessions
    /// only, besides the top-level ones.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerSettings>,
    /// The agent's authentication method to sign in with (`authenticate`),
    /// one of the ids its `initialize` answer lists.
    #[serde(default)]
    pub auth_method: Option<String>,
    /// `[agents.NAME.sandbox]`: this agent's confinement.
    #[serde(default)]
    pub sandbox: AgentSandbox,
}

/// A `[[rules]]` entry as read: a [`Rule`] that lets unknown keys pass, so
/// that they can be kept and warned about ([`unknown_keys`]). [`parse`] still
/// refuses one in an allow rule.
#[derive(Deserialize)]
struct LenientRule {
    decision: RuleDecision,
    agent: Option<String>,
    kind: Option<KindMatch>,
    tool: Option<String>,
    command: Option<String>,
    path: Option<String>,
    note: Option<String>,
}

fn lenient_rules<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<Rule>, D::Error> {
    let rules = Vec::<LenientRule>::deserialize(de)?;
    Ok(rules
        .into_iter()
        .map(|r| Rule {
            decision: r.decision,
            agent: r.agent,
            kind: r.kind,
            tool: r.tool,
            command: r.command,
            path: r.path,
            note: r.note,
        })
        .collect())
}

/// Reading the settings file failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    /// The file is not valid TOML or does not fit the schema.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// The settings path in use: `--config`/`WARDEN_CONFIG` if given, else the
/// platform config dir's `warden/config.toml`.
pub fn resolve_path(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    directories::ProjectDirs::from("", "", "warden").map(|d| d.config_dir().join("config.toml"))
}

/// Load the file; `Ok(None)` when it does not exist.
pub fn load(path: &Path) -> Result<Option<Settings>, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(SettingsError::Read {
                path: path.to_path_buf(),
                message: err.to_string(),
            });
        }
    };
    parse(&text, path).map(Some)
}

/// Parse settings text; errors carry the 1-based line and column.
///
/// A key the schema does not know (see [`unknown_keys`]) is an error named
/// with its line and column, and the known key it most likely misspells:
/// `defualt_agent` silently ignored would leave the user wondering, and in
/// an allow rule a misspelt condition (`comand`, `pth`) would allow more
/// than its author meant.
pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
    let unknown = keys::find(text);
    let unknown_key = |key: &keys::UnknownKey| {
        let hint = key.suggestion().map_or_else(
            || format!("expected one of {}", key.expected.join(", ")),
            |known| format!("did you mean `{known}`?"),
        );
        SettingsError::Parse {
            path: path.to_path_buf(),
            line: key.line,
            column: key.column,
            message: format!(
                "unknown key `{}` ({hint})",
                crate::sanitize::one_line(&key.dotted)
            ),
        }
    };
    let settings: Settings = toml::from_str(text).map_err(|err| {
        // A misspelt key is the likely cause (`comand`: "missing field
        // `command`"): named first.
        if let Some(key) = unknown.first() {
            return unknown_key(key);
        }
        let (line, column) = err.span().map_or((1, 1), |span| line_col(text, span.start));
        SettingsError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: err.message().to_string(),
        }
    })?;
    let in_allow_rule = unknown.iter().find(|key| {
        key.rule
            .and_then(|i| settings.rules.get(i))
            .is_some_and(|rule| rule.decision == RuleDecision::Allow)
    });
    if let Some(key) = in_allow_rule {
        return Err(SettingsError::Parse {
            path: path.to_path_buf(),
            line: key.line,
            column: key.column,
            message: format!(
                "unknown key `{}` in an allow rule, expected one of {}: a misspelt \
                 condition would allow more than meant",
                key.name,
                keys::RULE_KEYS.join(", ")
            ),
        });
    }
    match unknown.first() {
        Some(key) => Err(unknown_key(key)),
        None => Ok(settings),
    }
}

/// The commented template a settings file starts from when warden writes it
/// first: `config.example.toml` with its own header and every setting
/// commented out, so that the new file holds only what the user chose.
pub fn template() -> &'static str {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let example = include_str!("../../config.example.toml");
        let body = example
            .split_once("\n\n")
            .map_or(example, |(_header, body)| body);
        let mut out = String::from(TEMPLATE_HEADER);
        for line in body.lines() {
            let trimmed = line.trim_start();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                out.push_str("# ");
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    })
}

const TEMPLATE_HEADER: &str = "\
# warden settings. warden wrote this file when it first saved a choice of yours
# (a bypass or a kept rule) and adds later ones the same way, keeping your own
# edits and comments. The commented lines document every key: remove the
# leading `# ` of a setting to use it. Every key is optional.

";

/// 1-based line and column (in chars) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_agents_and_default() {
        let text = r#"
default_agent = "claude"

[agents.claude]
command = "npx"
args = ["@zed-industries/claude-agent-acp"]
env = { ANTHROPIC_LOG = "debug" }
"#;
        let s = parse(text, Path::new("c.toml")).expect("valid");
        assert_eq!(s.default_agent.as_deref(), Some("claude"));
        let claude = &s.agents["claude"];
        assert_eq!(claude.command, "npx");
        assert_eq!(claude.args, vec!["@zed-industries/claude-agent-acp"]);
        assert_eq!(claude.env["ANTHROPIC_LOG"], "debug");
    }

    #[test]
    fn malformed_file_reports_line_and_column() {
        let text = "default_agent = \"x\"\n[agents.a]\ncommand = 3\n";
        let err = parse(text, Path::new("c.toml")).expect_err("wrong type");
        let SettingsError::Parse { line, column, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!((*line, *column), (3, 11));
        assert!(err.to_string().starts_with("c.toml:3:11: "), "{err}");
    }

    #[test]
    fn example_file_loads() {
        let text = include_str!("../../config.example.toml");
        let s = parse(text, Path::new("config.example.toml")).expect("example parses");
        assert_eq!(s.default_agent.as_deref(), Some(DEMO_AGENT));
        for name in [
            "demo",
            "claude-code",
            "codex",
            "gemini",
            "fast-agent",
            "qwen",
            "kimi",
            "opencode",
            "eliza",
        ] {
            assert!(s.agents.contains_key(name), "{name} is in the example");
        }
        assert_eq!(s.agents["gemini"].args, vec!["--acp"]);
        assert_eq!(s.agents["qwen"].asking_mode.as_deref(), Some("default"));
        assert_eq!(s.agents["kimi"].args, vec!["acp"]);
    }

    #[test]
    fn reads_policy_settings() {
        let text = r#"
[agents.claude]
command = "npx"
bypass_permissions = true
default_mode = "auto"
agent_plan_mode = "plan"

[[rules]]
decision = "deny"
kind = "read"
path = "~/.ssh/**"

[notifications]
bell = false
"#;
        let s = parse(text, Path::new("c.toml")).expect("valid");
        let claude = &s.agents["claude"];
        assert!(claude.bypass_permissions);
        assert_eq!(claude.default_mode, Some(Mode::Auto));
        assert_eq!(claude.agent_plan_mode.as_deref(), Some("plan"));
        assert_eq!(s.rules.len(), 1);
        assert_eq!(s.rules[0].path.as_deref(), Some("~/.ssh/**"));
        assert!(!s.notifications.bell && s.notifications.desktop);
    }

    #[test]
    fn scroll_regions_are_on_unless_the_screen_block_turns_them_off() {
        let default = parse("", Path::new("c.toml")).expect("valid");
        assert!(default.screen.scroll_regions);
        let off = parse("[screen]\nscroll_regions = false\n", Path::new("c.toml")).expect("valid");
        assert!(!off.screen.scroll_regions);
        assert_eq!(
            keys::unknown_keys("[screen]\nscroll_region = false\nscroll_regions = true\n"),
            vec![("screen.scroll_region".to_string(), 2)]
        );
        let err = parse("[screen]\nscroll_regions = \"no\"\n", Path::new("c.toml"))
            .expect_err("not a boolean");
        assert!(err.to_string().contains("2:"), "{err}");
    }

    #[test]
    fn unknown_mode_is_an_error_with_position() {
        let text = "[agents.a]\ncommand = \"x\"\ndefault_mode = \"yolo\"\n";
        let err = parse(text, Path::new("c.toml")).expect_err("bad mode");
        let SettingsError::Parse { line, message, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*line, 3);
        assert!(message.contains("yolo"), "{message}");
    }

    #[test]
    fn an_unknown_key_is_an_error_with_its_line_and_column() {
        let text = "defualt_agent = \"claude\"\n";
        let err = parse(text, Path::new("c.toml")).expect_err("a misspelt key");
        assert_eq!(
            err.to_string(),
            "c.toml:1:1: unknown key `defualt_agent` (did you mean `default_agent`?)"
        );
        let text = "[[rules]]\ndecision = \"deny\"\npath = \"~/.ssh/**\"\n  why = \"keys\"\n";
        let SettingsError::Parse {
            line,
            column,
            message,
            ..
        } = parse(text, Path::new("c.toml")).expect_err("a deny rule with an unknown key")
        else {
            panic!()
        };
        assert_eq!((line, column), (4, 3));
        assert!(
            message.starts_with("unknown key `rules.why` (expected one of decision"),
            "{message}"
        );
        assert_eq!(unknown_keys(text), vec![("rules.why".to_string(), 4)]);
        let text = "[agents.c]\ncomand = \"claude\"\n";
        let err = parse(text, Path::new("c.toml")).expect_err("a misspelt agent key");
        assert!(
            err.to_string()
                .contains("2:1: unknown key `agents.c.comand` (did you mean `command`?)"),
            "{err}"
        );

        let text = "[[rules]]\ndecision = \"deny\"\n\n[[rules]]\ndecision = \"allow\"\n  comand = \"ls *\"\n";
        let err = parse(text, Path::new("c.toml")).expect_err("an allow rule with a typo");
        let SettingsError::Parse {
            line,
            column,
            message,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((*line, *column), (6, 3));
        assert!(
            message.starts_with("unknown key `comand` in an allow rule, expected one of decision, agent, kind, tool, command, path, note"),
            "{message}"
        );
    }

    #[test]
    fn template_is_the_example_commented_out() {
        let template = template();
        assert_eq!(parse(template, Path::new("t")), Ok(Settings::default()));
        assert!(template.starts_with("# warden settings. warden wrote this file"));
        let example = include_str!("../../config.example.toml");
        for line in example.lines() {
            if !line.is_empty() && !line.starts_with('#') {
                assert!(template.contains(&format!("\n# {line}\n")), "{line}");
            }
        }
    }

    /// The commented `For example:` block that follows `marker`, uncommented.
    fn example_block(example: &str, marker: &str) -> String {
        let start = example.find(marker).expect("marker");
        let block = &example[start..];
        let marker = "# For example:\n";
        let block = &block[block.find(marker).expect("example") + marker.len()..];
        block
            .lines()
            .take_while(|line| line.starts_with('#'))
            .map(|line| line.trim_start_matches('#').trim_start())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn example_documents_every_key_and_its_examples_load() {
        let example = include_str!("../../config.example.toml");
        // Every key the schema knows (the tables themselves aside).
        let keys = keys::RULE_KEYS
            .iter()
            .chain(&keys::AGENT_KEYS)
            .chain(&keys::NOTIFICATION_KEYS)
            .chain(&keys::SANDBOX_KEYS)
            .chain(&["default_agent", "roots"]);
        for key in keys {
            let documented = example.lines().any(|line| {
                let line = line.trim_start_matches('#').trim_start();
                line.starts_with(&format!("{key} ")) || line.starts_with(&format!("{key}\t"))
            });
            assert!(documented, "{key} is documented");
        }

        let agent =
            parse(&example_block(example, "[agents.NAME]"), Path::new("e")).expect("agent example");
        let claude = &agent.agents["my-claude"];
        assert_eq!(claude.env["ANTHROPIC_LOG"], "warn");
        assert_eq!(claude.auth_method.as_deref(), Some("claude-login"));
        assert_eq!(
            (claude.default_mode, claude.agent_plan_mode.as_deref()),
            (Some(Mode::Default), None),
            "the example never opts an agent into its own plan mode"
        );

        let mcp = parse(
            &example_block(example, "# MCP servers passed"),
            Path::new("e"),
        )
        .expect("mcp examples");
        let servers: Vec<String> = mcp
            .mcp_servers
            .iter()
            .chain(&agent.agents["my-claude"].mcp_servers)
            .map(|(name, s)| format!("{:?}", s.to_server(name).expect("valid server")))
            .collect();
        assert_eq!(servers.len(), 3);
        assert!(
            servers[0].contains("Http") && servers[0].contains("Bearer TOKEN"),
            "{servers:?}"
        );
        assert!(
            servers[1].contains("Stdio") && servers[1].contains("LOG_LEVEL"),
            "{servers:?}"
        );
        assert!(servers[2].contains("Sse"), "{servers:?}");

        let rules = parse(&example_block(example, "# Rules decide"), Path::new("e"))
            .expect("rule examples");
        let described: Vec<String> = rules.rules.iter().map(Rule::describe).collect();
        assert_eq!(
            described,
            [
                "ask rule kind=read path=\"~/.ssh/**\": keys stay private",
                "ask rule path=\"**/.env\": secrets",
                "allow rule kind=execute command=\"cargo test *\"",
            ]
        );
    }

    #[test]
    fn an_mcp_server_needs_a_command_or_a_url_not_both() {
        let text = "[mcp_servers.both]\ncommand = \"x\"\nurl = \"https://x\"\n\
                    [mcp_servers.none]\nargs = [\"a\"]\n\
                    [mcp_servers.sse_cmd]\ntype = \"sse\"\ncommand = \"x\"\n";
        let s = parse(text, Path::new("c.toml")).expect("valid toml");
        for (name, server) in &s.mcp_servers {
            let err = server.to_server(name).expect_err("invalid");
            assert!(
                err.contains(name.as_str()) && err.contains("`command`"),
                "{err}"
            );
        }
        assert_eq!(s.mcp_servers.len(), 3);
    }

    #[test]
    fn reads_the_sandbox_table_and_an_agents_sandbox_keys() {
        let text = r#"
[sandbox]
mode = "read-only"
when_unavailable = "run-unconfined"
writable = ["~/.gradle"]
hidden = ["~/.config/tokens"]

[agents.a]
command = "a"
sandbox.mode = "off"
sandbox.writable = ["~/.a"]

[agents.b]
command = "b"
"#;
        let s = parse(text, Path::new("c.toml")).expect("valid");
        assert_eq!(s.sandbox.mode, SandboxMode::ReadOnly);
        assert_eq!(s.sandbox.when_unavailable, WhenUnavailable::RunUnconfined);
        assert_eq!(s.sandbox.writable, ["~/.gradle"]);
        assert_eq!(s.sandbox.hidden, ["~/.config/tokens"]);
        assert_eq!(s.agents["a"].sandbox.mode, Some(SandboxMode::Off));
        assert_eq!(s.agents["a"].sandbox.writable, ["~/.a"]);
        assert_eq!(s.agents["b"].sandbox, AgentSandbox::default());
        assert_eq!(
            parse("", Path::new("c.toml")).expect("valid").sandbox.mode,
            SandboxMode::WorkspaceWrite,
            "on by default"
        );
        let err = parse("[sandbox]\nmode = \"none\"\n", Path::new("c.toml"))
            .expect_err("an unknown mode");
        assert!(err.to_string().contains("2:"), "{err}");
        assert_eq!(
            keys::unknown_keys(
                "[sandbox]\nmodes = \"off\"\n[agents.a]\ncommand = \"a\"\nsandbox.writeable = []\n"
            ),
            vec![
                ("sandbox.modes".to_string(), 2),
                ("agents.a.sandbox.writeable".to_string(), 5)
            ]
        );
    }

    #[test]
    fn env_pass_is_read_from_sandbox_and_agent_blocks_and_a_bad_pattern_is_refused() {
        let text = "[sandbox]\nenv_pass = [\"FOO\", \"BAR_*\"]\n\n[agents.a]\ncommand = \"a\"\nenv_pass = [\"AWS_PROFILE\"]\n";
        let s = parse(text, Path::new("c.toml")).expect("valid");
        assert_eq!(s.sandbox.env_pass, ["FOO", "BAR_*"]);
        assert_eq!(s.agents["a"].env_pass, ["AWS_PROFILE"]);
        assert_eq!(keys::unknown_keys(text), Vec::new());
        for bad in ["\"*\"", "\"A-B\"", "\"*_KEY\"", "\"\""] {
            let text = format!("[agents.a]\ncommand = \"a\"\nenv_pass = [\"OK\", {bad}]\n");
            let err = parse(&text, Path::new("c.toml")).expect_err(bad);
            assert!(
                err.to_string().contains("c.toml:3:") && err.to_string().contains("PREFIX_*"),
                "{err}"
            );
        }
        assert_eq!(
            keys::unknown_keys("[sandbox]\nenv_passs = []\n"),
            vec![("sandbox.env_passs".to_string(), 2)]
        );
    }

    #[test]
    fn missing_file_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(load(&dir.path().join("none.toml")), Ok(None));
    }
}

//! The settings file: agents, rules and notifications.
//!
//! Reading: [`load`] and [`parse`] (errors carry a line and column; a key
//! the schema does not know, [`unknown_keys`], is one). Writing: [`apply`] one typed [`Edit`] (comment- and
//! order-preserving, locked, atomic, never over a file that does not parse);
//! a file that does not exist yet starts from [`template`].

mod edit;
mod edit_place;
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
    /// How agents reach the network: `gated` (the default), `open` or
    /// `closed` (issue 35).
    #[serde(default)]
    pub network: crate::net::NetworkMode,
    /// Hosts every agent reaches without asking (`host`, `host:port`,
    /// `*.domain`).
    #[serde(default, deserialize_with = "host_patterns")]
    pub allow_hosts: Vec<String>,
}

/// A list of host patterns; anything else is an error (a pattern that
/// matches nothing would allow nothing silently).
fn host_patterns<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<String>, D::Error> {
    let patterns = Vec::<String>::deserialize(de)?;
    if let Some(bad) = patterns
        .iter()
        .find(|p| !crate::net::hosts::is_host_pattern(p))
    {
        return Err(serde::de::Error::custom(format!(
            "`{bad}` is not a host pattern (`host`, `host:port` or `*.domain`)"
        )));
    }
    Ok(patterns)
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
    /// This agent's network, instead of `[sandbox] network`.
    pub network: Option<crate::net::NetworkMode>,
    /// More hosts this agent reaches without asking.
    #[serde(default, deserialize_with = "host_patterns")]
    pub allow_hosts: Vec<String>,
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
    host: Option<String>,
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
            host: r.host,
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
    if let Some(key) = unknown.first() {
        return Err(unknown_key(key));
    }
    // A host rule decides connections only: a condition beside its host
    // would be one it never checks (a deny rule meant for a command, an
    // allow rule wider than it reads).
    if let Some(index) = settings.rules.iter().position(|r| {
        r.host.is_some()
            && (r.kind.is_some() || r.tool.is_some() || r.command.is_some() || r.path.is_some())
    }) {
        let offset = text
            .match_indices("[[rules]]")
            .nth(index)
            .map_or(0, |(at, _)| at);
        let (line, column) = line_col(text, offset);
        return Err(SettingsError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: "a rule with `host` decides connections only: it takes no kind, tool, \
                      command or path (make it two rules)"
                .to_string(),
        });
    }
    Ok(settings)
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
mod tests;

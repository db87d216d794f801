//! The settings file: which agents exist and which one starts by default.
//!
//! This is the reading half; typed edits written back with `toml_edit`
//! come with the settings issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::policy::{Mode, Rule};

/// The name the built-in demo agent goes by.
pub const DEMO_AGENT: &str = "demo";

/// The parsed settings file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct Settings {
    /// Agent started when none is named on the command line.
    pub default_agent: Option<String>,
    /// `[agents.NAME]` blocks.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentSettings>,
    /// `[[rules]]`, in file order.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// `[notifications]`.
    #[serde(default)]
    pub notifications: Notifications,
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
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications {
            bell: true,
            desktop: true,
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
    /// Allow every request of this agent without asking (deny and ask rules still apply).
    #[serde(default)]
    pub bypass_permissions: bool,
    /// The mode a new chat with this agent starts in.
    pub default_mode: Option<Mode>,
    /// The agent's own mode id to switch it to while the chat is in Plan (opt-in).
    pub agent_plan_mode: Option<String>,
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
pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
    toml::from_str(text).map_err(|err| {
        let (line, column) = err.span().map_or((1, 1), |span| line_col(text, span.start));
        SettingsError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: err.message().to_string(),
        }
    })
}

/// 1-based line and column (in chars) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
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
args = ["@zed-industries/claude-code-acp"]
env = { ANTHROPIC_LOG = "debug" }
"#;
        let s = parse(text, Path::new("c.toml")).expect("valid");
        assert_eq!(s.default_agent.as_deref(), Some("claude"));
        let claude = &s.agents["claude"];
        assert_eq!(claude.command, "npx");
        assert_eq!(claude.args, vec!["@zed-industries/claude-code-acp"]);
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
            "claude-agent",
            "codex",
            "gemini",
            "fast-agent",
            "eliza",
        ] {
            assert!(s.agents.contains_key(name), "{name} is in the example");
        }
        assert_eq!(s.agents["gemini"].args, vec!["--acp"]);
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
    fn missing_file_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(load(&dir.path().join("none.toml")), Ok(None));
    }
}

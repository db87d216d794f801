//! Codex (`codex-acp`).
//!
//! Codex runs the commands it is not asked about in a sandbox of its own:
//! bubblewrap, which needs user namespaces and `mount`, both refused inside
//! warden's Landlock domain ("bwrap: setting up uid map: Permission
//! denied"), so every such command fails and only the model's text says so.
//! Its legacy sandbox is Landlock, which stacks with warden's: under the
//! sandbox warden starts codex with `-c features.use_legacy_landlock=true`,
//! unless its command line sets that feature already, and says so at start.

use super::quirks::{KnownMode, MetaReading, OwnSandboxFailed, WorkspaceConfig};
use super::{Launch, Sandbox};
use crate::policy::agent_mode::ModeAsks;
use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use crate::acp::AgentCommand;
use crate::model::TerminalMeta;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["codex-acp", "codex"];

/// Its modes (codex-acp-0.16.0-fakellm-touch-allow.jsonl, `session/new`).
pub(super) const MODES: &[KnownMode] = &[
    ("read-only", ModeAsks::Asks),
    ("auto", ModeAsks::NeverAsks),
    ("full-access", ModeAsks::NeverAsks),
];

/// Its project config (MCP servers, commands it runs).
pub(super) const WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig {
    files: &[".codex/config.toml"],
    dirs: &[],
};

/// It runs commands itself and streams their terminals in `_meta`
/// ([`terminal_meta`]).
pub(super) const META: MetaReading = MetaReading {
    tool_name: false,
    terminals: true,
};
/// The hosts of its model it reaches without asking (issue 35): OpenAI's API, ChatGPT's backend (a ChatGPT sign-in) and its token refresh.
pub const API_HOSTS: &[&str] = &["api.openai.com", "chatgpt.com", "auth.openai.com"];

/// What the sandbox gives it (and the variables its config names for its
/// key: `sandbox::env::codex_env_keys`).
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".codex"],
    state_env: &["CODEX_HOME"],
    env: &["OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"],
    auth: &[".codex/auth.json"],
    code_config: &[],
    // Its config, its hooks, the rules that let commands run without
    // asking, and skills whose scripts it runs.
    guarded: &[
        ".codex/config.toml",
        ".codex/hooks.json",
        ".codex/rules",
        ".codex/skills",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
    moved_by: &[("CODEX_HOME", ".codex", "")],
};

/// What its output says when its own sandbox (bubblewrap) cannot start
/// inside warden's ("bwrap: setting up uid map: Permission denied", the
/// module's note above), and what warden says then: never advice to widen
/// warden's sandbox (the words are the agent's).
pub(super) const OWN_SANDBOX_FAILED: OwnSandboxFailed = OwnSandboxFailed {
    marker: "bwrap:",
    line: "the agent's own sandbox (bubblewrap) failed: it cannot start inside warden's \
           sandbox, which refuses the mounts and user namespaces it needs (for codex, warden \
           passes `-c features.use_legacy_landlock=true` unless its command line sets it)",
};

/// The feature that picks codex's Landlock sandbox.
pub const LEGACY_LANDLOCK: &str = "features.use_legacy_landlock";

/// The arguments that turn it on.
fn args() -> [String; 2] {
    ["-c".to_string(), format!("{LEGACY_LANDLOCK}=true")]
}

/// Whether the command line sets the feature itself (`-c
/// features.use_legacy_landlock=false`, `--config=...`).
fn sets_it(command: &AgentCommand) -> bool {
    command.args.iter().any(|a| a.contains(LEGACY_LANDLOCK))
}

pub(super) fn launch(command: &AgentCommand) -> Launch {
    Launch {
        args: if sets_it(command) {
            Vec::new()
        } else {
            args().to_vec()
        },
        env: Vec::new(),
    }
}

/// What start-up says when [`launch`] adds the setting.
pub(super) fn start_note(command: &AgentCommand) -> Option<String> {
    (!sets_it(command)).then(|| {
        format!(
            "codex's own sandbox (bubblewrap) cannot start inside warden's: warden starts codex \
             with `-c {LEGACY_LANDLOCK}=true`, so its sandbox uses Landlock, which stacks with \
             warden's (set `{LEGACY_LANDLOCK}` in the agent's args to decide yourself)"
        )
    })
}

/// Bytes of one `_meta` terminal id kept; a longer one is not a terminal id.
pub(crate) const TERMINAL_ID_LIMIT: usize = 512;

/// What `_meta` says about terminals the agent runs itself (codex-acp):
/// `terminal_info {terminal_id}`, `terminal_output` or `terminal_output_delta`
/// `{terminal_id, data}` (appended), `terminal_exit {terminal_id, exit_code, signal}`.
/// Anything malformed is ignored.
pub(crate) fn terminal_meta(meta: Option<&acp::Meta>) -> Vec<TerminalMeta> {
    let Some(meta) = meta else {
        return Vec::new();
    };
    let id_of = |v: &Value| {
        v.get("terminal_id")
            .or_else(|| v.get("terminalId"))
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty() && id.len() <= TERMINAL_ID_LIMIT)
            .map(str::to_string)
    };
    let mut news = Vec::new();
    if let Some(id) = meta.get("terminal_info").and_then(id_of) {
        news.push(TerminalMeta::Started { id });
    }
    for key in ["terminal_output", "terminal_output_delta"] {
        if let Some(value) = meta.get(key)
            && let Some(id) = id_of(value)
            && let Some(data) = value.get("data").and_then(Value::as_str)
        {
            news.push(TerminalMeta::Output {
                id,
                data: data.to_string(),
            });
        }
    }
    if let Some(value) = meta.get("terminal_exit")
        && let Some(id) = id_of(value)
    {
        let code = value
            .get("exit_code")
            .or_else(|| value.get("exitCode"))
            .and_then(Value::as_i64);
        let signal = value.get("signal").and_then(Value::as_str);
        let exit = match (code, signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("killed by {signal}"),
            (None, None) => "ended".to_string(),
        };
        news.push(TerminalMeta::Exited { id, exit });
    }
    news
}

//! Codex (`codex-acp`).
//!
//! Codex runs the commands it is not asked about in a sandbox of its own:
//! bubblewrap, which needs user namespaces and `mount`, both refused inside
//! warden's Landlock domain ("bwrap: setting up uid map: Permission
//! denied"), so every such command fails and only the model's text says so.
//! Its legacy sandbox is Landlock, which stacks with warden's: under the
//! sandbox warden starts codex with `-c features.use_legacy_landlock=true`,
//! unless its command line sets that feature already, and says so at start.

use super::{Launch, Sandbox};
use crate::acp::AgentCommand;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["codex-acp", "codex"];

/// What the sandbox gives it (and the variables its config names for its
/// key: `sandbox::env::codex_env_keys`).
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".codex"],
    state_env: &["CODEX_HOME"],
    env: &["OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"],
    auth: &[".codex/auth.json"],
    code_config: &[],
    guarded: &[".codex/config.toml"],
    guarded_keys: &[],
    state_subdirs: &[],
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

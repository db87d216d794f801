//! Gemini CLI (`gemini --acp`, `@google/gemini-cli`).

use super::Sandbox;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["gemini", "gemini-cli"];

/// The hosts of its model it reaches without asking (issue 35): the Gemini API, Code Assist (a Google sign-in) and its token refresh.
pub const API_HOSTS: &[&str] = &[
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".gemini"],
    state_env: &["GEMINI_CLI_HOME"],
    env: &["GEMINI_*", "GOOGLE_*"],
    auth: &[
        ".gemini/oauth_creds.json",
        ".gemini/mcp-oauth-tokens.json",
        ".gemini/gemini-credentials.json",
    ],
    code_config: &[],
    guarded: &[
        ".gemini/settings.json",
        ".gemini/extensions",
        ".gemini/commands",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
};

//! Qwen Code (`qwen --acp`, `@qwen-code/qwen-code`, whose script is
//! `cli-entry.js`: its folder names it).

use super::Sandbox;

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &["qwen", "qwen-code"];

/// The hosts of its model it reaches without asking (issue 35): DashScope and Qwen's own sign-in.
pub const API_HOSTS: &[&str] = &[
    "dashscope.aliyuncs.com",
    "dashscope-intl.aliyuncs.com",
    "chat.qwen.ai",
    "portal.qwen.ai",
];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    state: &[".qwen"],
    state_env: &[],
    env: &["QWEN_*", "DASHSCOPE_*", "OPENAI_*"],
    auth: &[".qwen/oauth_creds.json"],
    code_config: &[],
    guarded: &[
        ".qwen/settings.json",
        ".qwen/extensions",
        ".qwen/commands",
        ".qwen/skills",
    ],
    guarded_keys: &[],
    state_subdirs: &[],
};

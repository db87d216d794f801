//! What an agent is told and given of the user's world beyond its files:
//! the environment it starts with (an allow-list), its own caches, the
//! files of its own config that run code later (read-only to it), and the
//! credentials of the other agents (hidden from it).
//!
//! Each agent is known by a word of its command line, as its state
//! directories are ([`super::AGENT_STATE`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Profile;

/// Variables every agent gets from warden's environment: the shell's
/// basics, locale, proxies, the XDG directories that are not sockets,
/// the user's editor and pager, where toolchains live. A trailing `*`
/// matches a prefix.
pub const ENV_PASS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "HOSTNAME",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "COLUMNS",
    "LINES",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "LESS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "NIX_SSL_CERT_FILE",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "NVM_DIR",
    "NVM_BIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "VOLTA_HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
];

/// Variables no pattern lets through (an exact name in `env_pass` does):
/// the dynamic loader's, and the sockets of the user's session.
pub const ENV_NEVER: &[&str] = &[
    "LD_*",
    "DYLD_*",
    "GCONV_PATH",
    "MALLOC_*",
    "TMUX",
    "TMUX_*",
    "STY",
    "DBUS_*",
    "SSH_*",
    "GPG_*",
    "DISPLAY",
    "WAYLAND_*",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_*",
];

/// Each agent's own variables (its keys, base URLs and switches), by the
/// agent warden knows it is: they pass to that agent only.
pub const AGENT_ENV: &[(&str, &[&str])] = &[
    (
        "claude",
        &[
            "ANTHROPIC_*",
            "CLAUDE_*",
            "IS_SANDBOX",
            "DISABLE_*",
            "MCP_TIMEOUT",
            "MCP_TOOL_TIMEOUT",
            "MAX_THINKING_TOKENS",
            "MAX_MCP_OUTPUT_TOKENS",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_TIMEOUT_MS",
            "BASH_MAX_OUTPUT_LENGTH",
            "CLOUD_ML_REGION",
            "VERTEX_REGION_*",
        ],
    ),
    ("codex", &["OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"]),
    ("gemini", &["GEMINI_*", "GOOGLE_*"]),
    ("qwen", &["QWEN_*", "DASHSCOPE_*", "OPENAI_*"]),
    ("kimi", &["KIMI_*", "MOONSHOT_*"]),
    ("opencode", &["OPENCODE_*"]),
    ("fast-agent", &["FAST_AGENT_*"]),
    ("demo-agent", &["WARDEN_DEMO_*"]),
];

/// Each agent's sign-in files (relative to the home directory), and its
/// config files that hold a key: hidden from every other agent.
pub const AGENT_AUTH: &[(&str, &[&str])] = &[
    ("claude", &[".claude/.credentials.json", ".claude.json"]),
    ("codex", &[".codex/auth.json"]),
    (
        "gemini",
        &[
            ".gemini/oauth_creds.json",
            ".gemini/mcp-oauth-tokens.json",
            ".gemini/gemini-credentials.json",
        ],
    ),
    ("qwen", &[".qwen/oauth_creds.json"]),
    ("kimi", &[".kimi/credentials", ".kimi/config.toml"]),
    (
        "opencode",
        &[
            ".local/share/opencode/auth.json",
            ".local/share/opencode/mcp-auth.json",
            ".config/opencode/opencode.json",
        ],
    ),
];

/// Each agent's files that make it run a program later (hooks, MCP
/// servers, notify commands, plugins), relative to the home directory,
/// that the kernel keeps read-only to it ([`super::Profile::read_only`]):
/// only where the agent creates nothing new directly in their directory,
/// which then takes new entries no more (Claude Code, whose usual
/// directories in `~/.claude` warden makes first: [`AGENT_STATE_SUBDIRS`]).
/// codex, gemini, qwen, opencode and kimi write new files beside their
/// config (atomic replaces of their state): [`AGENT_GUARDED`].
pub const AGENT_CODE_CONFIG: &[(&str, &[&str])] = &[(
    "claude",
    &[
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/plugins",
        ".claude/hooks",
        // Slash commands (`!` lines run a shell), subagents and skills
        // (their scripts): what a later `claude` runs outside warden.
        ".claude/commands",
        ".claude/agents",
        ".claude/skills",
        ".claude/output-styles",
        ".claude/CLAUDE.md",
    ],
)];

/// Each agent's files and directories (extensions, plugins, commands)
/// that make it run a program later, in a directory it writes new files in
/// (its state, atomic replaces): copied when it starts, put back when it
/// exits, or by the next warden when its own was killed
/// ([`super::guard::Guard`]).
pub const AGENT_GUARDED: &[(&str, &[&str])] = &[
    // Only the keys that run programs of `~/.claude.json`, which Claude
    // Code writes its bookkeeping in ([`super::guard::CODE_KEYS`]).
    ("claude", &[".claude.json"]),
    ("codex", &[".codex/config.toml"]),
    (
        "gemini",
        &[
            ".gemini/settings.json",
            ".gemini/extensions",
            ".gemini/commands",
        ],
    ),
    (
        "qwen",
        &[".qwen/settings.json", ".qwen/extensions", ".qwen/commands"],
    ),
    (
        "opencode",
        &[
            ".config/opencode/opencode.json",
            ".config/opencode/opencode.jsonc",
            ".config/opencode/config.json",
            ".config/opencode/plugin",
            ".config/opencode/plugins",
            ".config/opencode/command",
            ".config/opencode/agent",
        ],
    ),
    ("kimi", &[".kimi/config.toml", ".kimi/mcp.json"]),
];

/// The directories beside an agent's read-only config that it writes
/// directly in (its sessions, logs, backups): made when missing, so that
/// their own rules let it write in them (the directory that holds the
/// config only lets it write in entries that exist when it starts).
pub const AGENT_STATE_SUBDIRS: &[(&str, &[&str])] = &[(
    "claude",
    &[
        ".claude/projects",
        ".claude/plans",
        ".claude/backups",
        ".claude/shell-snapshots",
        ".claude/session-env",
        ".claude/todos",
        ".claude/statsig",
        ".claude/ide",
        ".claude/file-history",
        ".claude/debug",
    ],
)];

/// The items of `table` for the agent `word` ([`crate::agents::Agent::word`]:
/// the agent warden knows from the name its command gives it, never a word
/// anywhere in its command line).
pub(super) fn words_of<'t>(
    table: &'t [(&'static str, &'static [&'static str])],
    word: Option<&'static str>,
) -> impl Iterator<Item = &'t str> + 't {
    table
        .iter()
        .filter(move |(key, _)| Some(*key) == word)
        .flat_map(|(_, items)| items.iter().copied())
}

/// Whether `name` matches `pattern` (a trailing `*` matches any rest).
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Whether the variable `name` passes `patterns`: an exact name always
/// does; a pattern does unless [`ENV_NEVER`] names it.
pub fn passes(patterns: &[String], name: &str) -> bool {
    if patterns.iter().any(|p| p == name) {
        return true;
    }
    patterns.iter().any(|p| matches(p, name)) && !ENV_NEVER.iter().any(|n| matches(n, name))
}

/// The environment of a process of `profile`, from `vars` (warden's):
/// what passes its allow-list, then its own cache directories (when it
/// is confined: with `mode = "off"` it may write the shared ones). The
/// agent block's `env`, warden's TMPDIR and a terminal's variables are set
/// by the caller over it.
pub fn environment(
    profile: &Profile,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(|n| passes(&profile.env_pass, n)))
        .collect();
    let confined = profile.mode != super::SandboxMode::Off;
    if let Some(cache) = profile.cache.as_ref().filter(|_| confined) {
        for (name, value) in cache_vars(cache) {
            out.retain(|(n, _)| n != name);
            out.push((name.into(), value.into_os_string()));
        }
    }
    out
}

/// The variables that move a process's caches into `cache` (the agent's
/// own, under warden's state directory).
pub fn cache_vars(cache: &Path) -> [(&'static str, PathBuf); 2] {
    [
        ("XDG_CACHE_HOME", cache.join("cache")),
        ("npm_config_cache", cache.join("npm")),
    ]
}

/// Start `command` from the environment of `profile` (warden's own,
/// filtered) instead of all of warden's.
pub fn scrub(command: &mut tokio::process::Command, profile: &Profile) {
    command
        .env_clear()
        .envs(environment(profile, std::env::vars_os()));
}

/// The names of warden's variables `profile` keeps from its processes.
pub fn withheld(profile: &Profile) -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| !passes(&profile.env_pass, name))
        .collect();
    names.sort();
    names
}

/// The names of the variables `codex`'s config names for its keys
/// (`env_key` of `[model_providers.*]`): codex reads the key from there.
pub(super) fn codex_env_keys(codex_home: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(codex_home.join("config.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(providers) = doc.get("model_providers").and_then(|p| p.as_table()) else {
        return Vec::new();
    };
    providers
        .values()
        .filter_map(|p| p.get("env_key").and_then(|k| k.as_str()))
        .filter(|k| is_name(k))
        .map(str::to_string)
        .collect()
}

/// Whether `text` is a variable name (or a name with a trailing `*`).
pub fn is_pattern(text: &str) -> bool {
    is_name(text.strip_suffix('*').unwrap_or(text))
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

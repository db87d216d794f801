//! What an agent is told and given of the user's world beyond its files:
//! the environment it starts with (an allow-list) and its own caches.
//! Each agent's own variables, sign-in files and config that runs code
//! are in its file of `agents/` (`agents::Sandbox`), chosen by the name its
//! command gives it, never by a word of its command line.

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

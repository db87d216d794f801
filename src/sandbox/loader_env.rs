//! Environment variables that change which code a program loads or runs
//! before its `main` (the dynamic loader's, and glibc's that it ignores for
//! setuid programs for the same reason): never passed on to an agent
//! process or to a login's program, from warden's environment or an agent
//! block's `env`.

use std::os::unix::ffi::OsStrExt as _;

/// glibc's other "unsecure" variables (`sysdeps/generic/unsecvars.h`) that
/// load code or data from a path, beyond every `LD_*`.
const OTHERS: &[&str] = &[
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_TRACE",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
];

/// Whether `name` is a loader variable: `LD_*` (`LD_PRELOAD`,
/// `LD_LIBRARY_PATH`, `LD_AUDIT`, ...), macOS's `DYLD_*`, or one of [`OTHERS`].
pub fn is_loader_var(name: &[u8]) -> bool {
    name.starts_with(b"LD_")
        || name.starts_with(b"DYLD_")
        || OTHERS.iter().any(|o| o.as_bytes() == name)
}

/// Remove every loader variable from what `command` passes on: those it
/// would inherit and those set on it.
pub fn strip_loader_env(command: &mut tokio::process::Command) {
    let mut names: Vec<std::ffi::OsString> = std::env::vars_os()
        .map(|(name, _)| name)
        .chain(command.as_std().get_envs().map(|(name, _)| name.to_owned()))
        .filter(|name| is_loader_var(name.as_bytes()))
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        tracing::info!(
            name = %name.to_string_lossy(),
            "a loader variable is not passed on"
        );
        command.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_variables_are_known_by_name() {
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
        ] {
            assert!(is_loader_var(name.as_bytes()), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "OLD_PRELOAD", "TMPDIR"] {
            assert!(!is_loader_var(name.as_bytes()), "{name}");
        }
    }

    #[tokio::test]
    async fn a_loader_variable_set_on_the_command_does_not_reach_the_program() {
        let mut command = tokio::process::Command::new("/usr/bin/env");
        command
            .env("LD_PRELOAD", "/nonexistent/evil.so")
            .env("GCONV_PATH", "/tmp")
            .env("KEPT", "1")
            .stdout(std::process::Stdio::piped());
        strip_loader_env(&mut command);
        let out = command.output().await.expect("env runs");
        let env = String::from_utf8_lossy(&out.stdout);
        assert!(env.contains("KEPT=1"), "{env}");
        assert!(
            !env.contains("LD_PRELOAD") && !env.contains("GCONV_PATH"),
            "{env}"
        );
    }
}

//! Landlock: the ruleset is built in the parent (every path opened, every
//! rule added); the child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self` between `fork` and `exec`, two system calls that
//! allocate nothing.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access as _, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};

use super::{
    Access, Badge, Profile, RealFs, SandboxError, SandboxMode, Support, WhenUnavailable, canonical,
    grants,
};

/// The newest Landlock ABI whose rights warden asks for (best effort: an
/// older kernel enforces what it knows). ABI 5 adds `IOCTL_DEV`; later ones
/// add network and socket rules, out of scope here.
const ABI_USED: ABI = ABI::V5;

/// `LANDLOCK_CREATE_RULESET_VERSION`.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// What the kernel offers: Landlock's ABI version, or why there is none.
pub fn kernel_support() -> Support {
    // SAFETY: with a null attribute, size 0 and the version flag the call
    // only returns the ABI version (or an error); it touches no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        return Support::Landlock(i32::try_from(version).unwrap_or(i32::MAX));
    }
    let err = std::io::Error::last_os_error();
    let why = match err.raw_os_error() {
        Some(libc::ENOSYS) => {
            "this kernel has no Landlock (Linux 5.13 or newer has it)".to_string()
        }
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built in but not enabled (add `landlock` to the kernel's `lsm=` boot list)"
                .to_string()
        }
        _ => format!("Landlock did not answer: {err}"),
    };
    Support::Missing(why)
}

/// A prepared confinement for one process: the ruleset (an open Landlock
/// file descriptor) and its private temporary directory, removed when this
/// is dropped (keep it until the process exits).
#[derive(Debug)]
pub struct Confinement {
    ruleset: Option<OwnedFd>,
    tmp: Option<PathBuf>,
    badge: Badge,
    rules: usize,
}

impl Confinement {
    /// Build the confinement `profile` asks for: nothing for `mode = "off"`;
    /// without Landlock, nothing or the refusal, as `when_unavailable` says.
    pub fn prepare(profile: &Profile) -> Result<Confinement, SandboxError> {
        if profile.mode == SandboxMode::Off {
            return Ok(Confinement::none(Badge::Off));
        }
        if let Support::Missing(why) = kernel_support() {
            return match profile.when_unavailable {
                WhenUnavailable::RunUnconfined => {
                    tracing::warn!(agent = %profile.agent, "sandbox unavailable, running unconfined: {why}");
                    Ok(Confinement::none(Badge::Unconfined))
                }
                WhenUnavailable::Refuse => Err(SandboxError::Unavailable {
                    agent: profile.agent.clone(),
                    why,
                }),
            };
        }
        let tmp = private_tmp(&profile.agent).map_err(SandboxError::TempDir)?;
        let mut confinement = Confinement {
            ruleset: None,
            tmp: Some(tmp),
            badge: profile.badge(),
            rules: 0,
        };
        let (fd, rules) =
            ruleset(&canonical(profile), confinement.tmp.as_deref()).map_err(|message| {
                SandboxError::Rules {
                    agent: profile.agent.clone(),
                    message,
                }
            })?;
        confinement.ruleset = Some(fd);
        confinement.rules = rules;
        Ok(confinement)
    }

    fn none(badge: Badge) -> Confinement {
        Confinement {
            ruleset: None,
            tmp: None,
            badge,
            rules: 0,
        }
    }

    /// What the footer says about the process.
    pub fn badge(&self) -> Badge {
        self.badge
    }

    /// How many Landlock rules the ruleset holds.
    pub fn rules(&self) -> usize {
        self.rules
    }

    /// The private temporary directory (`TMPDIR`), when confined.
    pub fn tmp(&self) -> Option<&Path> {
        self.tmp.as_deref()
    }

    /// Confine `command`'s process: `TMPDIR` (and `TMP`, `TEMP`) set to the
    /// private directory, and the ruleset applied just before `exec`.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        if let Some(tmp) = &self.tmp {
            command.env("TMPDIR", tmp).env("TMP", tmp).env("TEMP", tmp);
        }
        let Some(fd) = self.ruleset.as_ref().map(AsRawFd::as_raw_fd) else {
            return;
        };
        // SAFETY: the hook runs in the child between fork and exec; it only
        // makes two system calls on a file descriptor the parent keeps open
        // (this `Confinement` outlives the spawn), allocating nothing.
        unsafe {
            command.pre_exec(move || restrict(fd));
        }
    }

    /// The same, for a `std` command (`warden sandbox`'s self-test).
    pub fn apply_std(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt as _;
        if let Some(tmp) = &self.tmp {
            command.env("TMPDIR", tmp).env("TMP", tmp).env("TEMP", tmp);
        }
        let Some(fd) = self.ruleset.as_ref().map(AsRawFd::as_raw_fd) else {
            return;
        };
        // SAFETY: as in `apply`.
        unsafe {
            command.pre_exec(move || restrict(fd));
        }
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take()
            && let Err(err) = std::fs::remove_dir_all(&tmp)
        {
            tracing::debug!(tmp = %tmp.display(), "private temporary directory not removed: {err}");
        }
    }
}

/// In the child: no new privileges (Landlock requires it without
/// `CAP_SYS_ADMIN`, and setuid programs must not escape), then the ruleset.
fn restrict(fd: libc::c_int) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A fresh directory only this user can enter, under warden's own temp dir.
fn private_tmp(agent: &str) -> std::io::Result<PathBuf> {
    let word: String = agent
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(32)
        .collect();
    let dir = std::env::temp_dir().join(format!(
        "warden-{word}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// The rights of an [`Access`].
fn rights(access: Access) -> BitFlags<AccessFs> {
    match access {
        Access::List => AccessFs::ReadDir.into(),
        Access::Read => AccessFs::from_read(ABI_USED),
        Access::Write => AccessFs::from_all(ABI_USED),
    }
}

/// The ruleset of `profile` (canonical) as an open Landlock fd, and how many rules it holds.
fn ruleset(profile: &Profile, tmp: Option<&Path>) -> Result<(OwnedFd, usize), String> {
    let mut created = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_USED))
        .and_then(|r| r.create())
        .map_err(|e| e.to_string())?;
    let mut rules = 0;
    for grant in grants(profile, tmp, &RealFs) {
        let Ok(fd) = PathFd::new(&grant.path) else {
            // Gone since it was listed: nothing to allow.
            continue;
        };
        let mut access = rights(grant.access);
        let is_dir = rustix::fs::fstat(&fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory
        });
        if !is_dir {
            access &= AccessFs::from_file(ABI_USED);
        }
        if access.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| format!("{}: {e}", grant.path.display()))?;
        rules += 1;
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| "the kernel refused to create a Landlock ruleset".to_string())?;
    Ok((fd, rules))
}

/// `warden sandbox`'s self-test: a confined child of `profile` tries to
/// write a file outside the workspace and to read a hidden file (both made
/// for the test in a fresh directory of warden's temp dir); an unconfined
/// child does the same first, to show that the test can fail. Each line
/// says what happened; the result is whether the sandbox held.
pub fn self_test(profile: &Profile) -> (bool, Vec<String>) {
    let dir = match private_tmp("self-test") {
        Ok(dir) => dir,
        Err(err) => {
            return (
                false,
                vec![format!("cannot make the test directory: {err}")],
            );
        }
    };
    let secret = dir.join("id_rsa");
    let outside = dir.join("written-outside");
    let result = run_self_test(profile, &dir, &secret, &outside);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_self_test(
    profile: &Profile,
    dir: &Path,
    secret: &Path,
    outside: &Path,
) -> (bool, Vec<String>) {
    if let Err(err) = std::fs::write(secret, "not a real key\n") {
        return (
            false,
            vec![format!("cannot make the test's hidden file: {err}")],
        );
    }
    let mut profile = profile.clone();
    profile.hidden.push(secret.to_path_buf());
    profile.workspace.retain(|w| !dir.starts_with(w));
    let confinement = match Confinement::prepare(&profile) {
        Ok(c) => c,
        Err(err) => return (false, vec![err.to_string()]),
    };
    if confinement.ruleset.is_none() {
        return (
            false,
            vec![format!(
                "the agent would run unconfined ({})",
                confinement.badge().label()
            )],
        );
    }
    let quote = |p: &Path| crate::policy::shell_quote(&p.to_string_lossy()).into_owned();
    let tries = [
        (
            format!("write {}", outside.display()),
            format!(": > {}", quote(outside)),
        ),
        (
            format!("read {}", secret.display()),
            format!("cat {}", quote(secret)),
        ),
    ];
    let mut lines = Vec::new();
    let mut held = true;
    for (what, line) in tries {
        let run = |confined: bool| {
            let mut command = std::process::Command::new("sh");
            command
                .arg("-c")
                .arg(&line)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            if confined {
                confinement.apply_std(&mut command);
            }
            command.output()
        };
        match run(false) {
            Ok(out) if out.status.success() => {}
            _ => lines.push(format!("note: even an unconfined child could not {what}")),
        }
        let _ = std::fs::remove_file(outside);
        match run(true) {
            Ok(out) if out.status.success() => {
                held = false;
                lines.push(format!("FAILED: a confined child could {what}"));
            }
            Ok(out) => lines.push(format!(
                "ok: a confined child could not {what}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(err) => {
                held = false;
                lines.push(format!("FAILED: the confined child did not start: {err}"));
            }
        }
    }
    (held, lines)
}

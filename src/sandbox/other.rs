//! Systems without a sandbox of warden's yet (macOS's `sandbox-exec` is a
//! next step): every confinement is unavailable, and the setting decides.

use super::{Badge, Profile, SandboxError, SandboxMode, Support, WhenUnavailable};

const NONE: &str = "warden has no sandbox for this system yet (Linux's Landlock only)";

/// Nothing confines here.
pub fn kernel_support() -> Support {
    Support::Missing(NONE.to_string())
}

/// An unconfined run, or the refusal.
#[derive(Debug)]
pub struct Confinement {
    badge: Badge,
}

impl Confinement {
    /// As on Linux, without a kernel that confines.
    pub fn prepare(profile: &Profile) -> Result<Confinement, SandboxError> {
        if profile.mode == SandboxMode::Off {
            return Ok(Confinement { badge: Badge::Off });
        }
        match profile.when_unavailable {
            WhenUnavailable::RunUnconfined => Ok(Confinement {
                badge: Badge::Unconfined,
            }),
            WhenUnavailable::Refuse => Err(SandboxError::Unavailable {
                agent: profile.agent.clone(),
                why: NONE.to_string(),
            }),
        }
    }

    /// What the footer says.
    pub fn badge(&self) -> Badge {
        self.badge
    }

    /// No rules.
    pub fn rules(&self) -> usize {
        0
    }

    /// No private directory.
    pub fn tmp(&self) -> Option<&std::path::Path> {
        None
    }

    /// Nothing to apply.
    pub fn apply(&self, _command: &mut tokio::process::Command) {}

    /// Nothing to apply.
    pub fn apply_std(&self, _command: &mut std::process::Command) {}
}

/// Nothing to test.
pub fn self_test(_profile: &Profile) -> (bool, Vec<String>) {
    (false, vec!["no sandbox on this system".into()])
}

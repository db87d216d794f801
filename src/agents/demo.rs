//! warden's own demo agent (`warden demo-agent`): its scenario's
//! variables.

use super::{EMPTY, Sandbox};

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &[];

/// The hosts of its model it reaches without asking (issue 35): none: it answers itself.
pub const API_HOSTS: &[&str] = &[];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    env: &["WARDEN_DEMO_*"],
    ..EMPTY
};

//! warden's own demo agent (`warden demo-agent`): its scenario's
//! variables.

use super::{EMPTY, Sandbox};

/// The names its command gives it.
pub(super) const NAMES: &[&str] = &[];

/// What the sandbox gives it.
pub const SANDBOX: Sandbox = Sandbox {
    env: &["WARDEN_DEMO_*"],
    ..EMPTY
};

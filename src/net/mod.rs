//! The network gate (issue 35): the agent's process tree reaches the network
//! only through warden's proxy, and the proxy connects to a host only when
//! the gate said yes.
//!
//! This module is the seam between the two halves:
//! - the wall and the proxy (`sandbox/` keeps every other way out shut;
//!   the proxy accepts the agent's connections and, for each, sends one
//!   [`ConnectAsk`] and waits for its [`NetAnswer`]);
//! - the gate (the app turns each ask into a decision: the settings' hosts,
//!   the rules, this chat's grants, else a card of kind network).
//!
//! A connection that waits for its answer holds nothing else: the proxy
//! serves each connection on its own task.

use tokio::sync::oneshot;

/// One connection the agent's process tree wants to open, waiting for the
/// gate's answer. Dropping `reply` unanswered refuses the connection (fail
/// closed).
#[derive(Debug)]
pub struct ConnectAsk {
    /// The name of the agent whose process tree asks (as the settings name it).
    pub agent: String,
    /// The host as the client named it: a DNS name or an IP literal, lower case,
    /// without brackets.
    pub host: String,
    pub port: u16,
    pub reply: oneshot::Sender<NetAnswer>,
}

/// The gate's answer to one [`ConnectAsk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetAnswer {
    Allow,
    /// Refused; the reason, when the user gave one, is for the log and the
    /// proxy's error reply.
    Deny {
        reason: Option<String>,
    },
}

#[cfg(target_os = "linux")]
pub mod door;
pub mod hosts;
pub mod proxy;
mod relay;

pub use hosts::{Hosts, NetworkMode};

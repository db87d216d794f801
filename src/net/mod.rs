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
//! serves each connection on its own task. A connection the proxy refuses
//! by itself (`network = "closed"`) is still told to the gate, which only
//! logs it ([`Reply::Refused`]): every refusal is in the decision log.

use tokio::sync::oneshot;

/// One connection the agent's process tree (or a terminal warden runs for
/// it) wants to open: waiting for the gate's answer, or refused already.
#[derive(Debug)]
pub struct ConnectAsk {
    /// The name of the agent whose process tree asks (as the settings name it).
    pub agent: String,
    /// The host as the client named it: a DNS name or an IP literal, lower case,
    /// without brackets.
    pub host: String,
    pub port: u16,
    pub reply: Reply,
}

/// Where a [`ConnectAsk`]'s answer goes.
#[derive(Debug)]
pub enum Reply {
    /// The connection waits here for the gate's answer; dropping it
    /// unanswered refuses the connection (fail closed).
    Wait(oneshot::Sender<NetAnswer>),
    /// The proxy refused the connection by itself, for this reason (the
    /// network is closed): nothing waits, the gate only logs it.
    Refused(String),
}

impl ConnectAsk {
    /// A connection that waits for the gate's answer on the receiver.
    pub fn waiting(
        agent: &str,
        host: &str,
        port: u16,
    ) -> (ConnectAsk, oneshot::Receiver<NetAnswer>) {
        let (reply, answer) = oneshot::channel();
        let ask = ConnectAsk {
            agent: agent.to_string(),
            host: host.to_string(),
            port,
            reply: Reply::Wait(reply),
        };
        (ask, answer)
    }
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

pub mod chain;
#[cfg(target_os = "linux")]
pub mod door;
pub mod hosts;
pub mod proxy;
mod relay;
pub mod upstream;

pub use hosts::{Hosts, NetworkMode};

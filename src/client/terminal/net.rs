//! A terminal's way to the network, walled as the agent's is: the door of
//! a proxy of its own, made before the spawn, and the proxy served on it
//! after. The proxy lets the hosts allowed without asking through and asks
//! the chat's gate about any other; with no gate to ask, it refuses them.

use std::io;

use tokio::sync::mpsc;

use crate::net::ConnectAsk;
use crate::net::chain::Dialer;
use crate::net::door::Door;
use crate::net::proxy::{Gate, Proxy};
use crate::sandbox::{NetWall, Profile};

/// A terminal's proxy, from before its spawn until it is served.
#[derive(Debug)]
pub(super) struct NetDoor {
    door: Door,
    gate: Gate,
}

impl NetDoor {
    /// The door a terminal under `sandbox` needs, its proxy's asks going
    /// to `asks`: none where its network is not walled (no sandbox, the
    /// sandbox off, the network open, no Landlock here).
    pub(super) fn prepare(
        sandbox: Option<&Profile>,
        asks: Option<&mpsc::UnboundedSender<ConnectAsk>>,
    ) -> io::Result<Option<NetDoor>> {
        let Some(profile) = sandbox.filter(|p| {
            p.mode != crate::sandbox::SandboxMode::Off
                && p.network != crate::net::NetworkMode::Open
                && matches!(
                    crate::sandbox::kernel_support(),
                    crate::sandbox::Support::Landlock(_)
                )
        }) else {
            return Ok(None);
        };
        let gate = Gate {
            agent: profile.agent.clone(),
            hosts: crate::net::Hosts::new(profile.network, profile.allow_hosts.clone()),
            // With no gate to ask, the asks find no receiver: refused.
            asks: asks.cloned().unwrap_or_else(|| mpsc::unbounded_channel().0),
        };
        Ok(Some(NetDoor {
            door: Door::for_profile(profile)?,
            gate,
        }))
    }

    /// What the confinement walls the terminal's network with.
    pub(super) fn wall(&self) -> Option<NetWall> {
        self.door.wall()
    }

    /// The variables that send the terminal's connections to its proxy.
    pub(super) fn env(&self) -> Vec<(String, String)> {
        crate::net::proxy::proxy_env(self.door.port(), self.door.own_loopback())
    }

    /// After the spawn: the proxy, serving on the door (call inside the
    /// runtime). It lives as long as the terminal.
    pub(super) fn serve(self) -> io::Result<Proxy> {
        let NetDoor { door, gate } = self;
        door.listeners()
            .and_then(|listeners| Proxy::serve_all(listeners, gate, Dialer::own()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetworkMode;
    use crate::sandbox::SandboxMode;

    /// No door where nothing walls the network: no sandbox, the sandbox
    /// off, the network open.
    #[test]
    fn only_a_walled_network_gets_a_door() {
        assert!(NetDoor::prepare(None, None).unwrap().is_none());
        for (mode, network) in [
            (SandboxMode::Off, NetworkMode::Gated),
            (SandboxMode::WorkspaceWrite, NetworkMode::Open),
        ] {
            let profile = Profile {
                mode,
                network,
                ..Profile::default()
            };
            assert!(
                NetDoor::prepare(Some(&profile), None).unwrap().is_none(),
                "{mode:?} {network:?}"
            );
        }
    }
}

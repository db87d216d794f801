//! The proxy's door for one agent process, made before it is spawned:
//! in its own network namespace (a unix socket pair on which the child
//! sends back the listening socket it makes there) or, where Landlock
//! walls the network instead, a listener on the host's loopback whose
//! port is the only one the agent may connect to.
//!
//! In a namespace the agent's loopback is its own, so the host's loopback
//! services the user allowed with their port (a model server such as
//! ollama on `localhost:11434`, [`super::hosts::loopback_services`]) are
//! listened on there too, and the proxy forwards what comes (`proxy.rs`).
//! On the host's loopback nothing is needed: those connections go through
//! the proxy like any other.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

use super::proxy::{Forward, Listeners};
use crate::sandbox::{LoopbackPorts, NetKind, NetWall};

/// A door prepared for one spawn.
#[derive(Debug)]
pub struct Door {
    kind: NetKind,
    port: u16,
    /// The namespace's channel: warden's end, and the child's (closed
    /// once the child has it).
    ours: Option<OwnedFd>,
    theirs: Option<OwnedFd>,
    /// The listener on the host's loopback (Landlock, or no wall).
    host: Option<std::net::TcpListener>,
    /// The host's loopback services listened on in the namespace.
    services: Vec<(String, u16)>,
}

impl Door {
    /// Prepare the door `kind` needs; in a namespace, with `services` (the
    /// host's loopback services, [`super::hosts::loopback_services`])
    /// listened on there too.
    pub fn new(kind: NetKind, services: Vec<(String, u16)>) -> std::io::Result<Door> {
        let host = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let port = host.local_addr()?.port();
        if kind != NetKind::Namespace {
            return Ok(Door {
                kind,
                port,
                ours: None,
                theirs: None,
                host: Some(host),
                services: Vec::new(),
            });
        }
        // The namespace is empty: the port number found free here is free
        // there too (any would be but a service's); the host's listener goes.
        drop(host);
        let services = services.into_iter().filter(|(_, p)| *p != port).collect();
        let mut fds = [-1; 2];
        // SAFETY: `fds` has room for the two descriptors.
        let done = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both were just made and are owned here.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Door {
            kind,
            port,
            ours: Some(ours),
            theirs: Some(theirs),
            host: None,
            services,
        })
    }

    /// The door of one process confined by `profile`, as this kernel walls
    /// its network, the host's loopback services `profile` allows with
    /// their port listened on in its namespace.
    pub fn for_profile(profile: &crate::sandbox::Profile) -> std::io::Result<Door> {
        Door::new(
            crate::sandbox::net_wall(),
            super::hosts::loopback_services(&profile.allow_hosts),
        )
    }

    /// The port the agent reaches the proxy on (`127.0.0.1`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the agent's loopback is its own (a network namespace).
    pub fn own_loopback(&self) -> bool {
        self.kind == NetKind::Namespace
    }

    /// What the confinement walls: `None` where nothing can.
    pub fn wall(&self) -> Option<NetWall> {
        match self.kind {
            NetKind::Namespace => Some(NetWall::Namespace {
                channel: self.theirs.as_ref()?.as_raw_fd(),
                port: self.port,
                loopback: LoopbackPorts::new(self.services.iter().map(|(_, p)| *p)),
            }),
            NetKind::Landlock => Some(NetWall::Landlock { port: self.port }),
            NetKind::Open => None,
        }
    }

    /// After the spawn returned (the child ran its hooks and `exec`ed):
    /// the listening sockets the proxy serves on.
    pub fn listeners(mut self) -> std::io::Result<Listeners> {
        drop(self.theirs.take());
        let Some(ours) = &self.ours else {
            return match self.host.take() {
                Some(proxy) => Ok(Listeners {
                    proxy,
                    forwards: Vec::new(),
                }),
                None => Err(std::io::Error::other("no door")),
            };
        };
        let mut sent = crate::sandbox::receive_listeners(ours.as_raw_fd())?.into_iter();
        let proxy = sent
            .next()
            .ok_or_else(|| std::io::Error::other("no proxy socket"))?;
        let mut forwards = Vec::new();
        for listener in sent {
            let port = listener.local_addr()?.port();
            let Some((host, _)) = self.services.iter().find(|(_, p)| *p == port) else {
                return Err(std::io::Error::other(format!(
                    "the agent's namespace sent a socket on port {port}, not asked for"
                )));
            };
            forwards.push(Forward {
                listener,
                host: host.clone(),
                port,
            });
        }
        Ok(Listeners { proxy, forwards })
    }
}

//! The proxy's door for one agent process, made before it is spawned:
//! in its own network namespace (a unix socket pair on which the child
//! sends back the listening socket it makes there) or, where Landlock
//! walls the network instead, a listener on the host's loopback whose
//! port is the only one the agent may connect to.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

use crate::sandbox::{NetKind, NetWall};

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
}

impl Door {
    /// Prepare the door `kind` needs.
    pub fn new(kind: NetKind) -> std::io::Result<Door> {
        let host = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let port = host.local_addr()?.port();
        if kind != NetKind::Namespace {
            return Ok(Door {
                kind,
                port,
                ours: None,
                theirs: None,
                host: Some(host),
            });
        }
        // The namespace is empty: the port number found free here is free
        // there too (any would be); the host's listener goes.
        drop(host);
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
        })
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
            }),
            NetKind::Landlock => Some(NetWall::Landlock { port: self.port }),
            NetKind::Open => None,
        }
    }

    /// After the spawn returned (the child ran its hooks and `exec`ed):
    /// the listening socket the proxy serves on.
    pub fn listener(mut self) -> std::io::Result<std::net::TcpListener> {
        drop(self.theirs.take());
        match (self.host.take(), &self.ours) {
            (Some(host), _) => Ok(host),
            (None, Some(ours)) => crate::sandbox::receive_listener(ours.as_raw_fd()),
            (None, None) => Err(std::io::Error::other("no door")),
        }
    }
}

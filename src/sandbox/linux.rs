//! Landlock: the ruleset is built in the parent (every path opened, every
//! rule added); the child, between `fork` and `exec`, enters the walls
//! (`walls.rs`: mount namespace, capabilities), calls
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self`, then installs
//! the seccomp filter: system calls on memory prepared before the fork,
//! nothing allocated.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use landlock::{
    ABI, Access as _, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::tmpdir::PrivateTmp;
use super::walls::{Fence, NetDoor, kernel_walls};
use super::{
    Access, Badge, Grant, Profile, RealFs, SandboxError, SandboxMode, Support, WhenUnavailable,
    canonical, grants,
};

/// The newest Landlock ABI whose file rights warden asks for (best effort:
/// an older kernel enforces what it knows). ABI 5 adds `IOCTL_DEV`; ABI 6's
/// scopes are asked for on their own. (ABI 9's `RESOLVE_UNIX` is not used
/// yet: the mount namespace covers the user's sockets.)
const ABI_USED: ABI = ABI::V5;

/// Every file right warden handles.
fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI_USED)
}

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
    tmp: Option<PrivateTmp>,
    /// The walls besides Landlock, shared with the `pre_exec` hook.
    fence: Option<Arc<Fence>>,
    badge: Badge,
    rules: usize,
    /// The network walled: only the proxy's door.
    net_walled: bool,
}

/// How the network is walled for one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetWall {
    /// A network namespace of its own, only loopback up; the proxy's
    /// listening socket is made there on `port`, and one on each of
    /// `loopback`'s ports (the host's loopback services it may reach), and
    /// sent back on the unix socket `channel` before `exec`.
    Namespace {
        channel: std::os::fd::RawFd,
        port: u16,
        loopback: LoopbackPorts,
    },
    /// Landlock allows TCP connect to `port` only (the proxy on the
    /// host's loopback), and seccomp refuses UDP, raw and packet sockets.
    Landlock { port: u16 },
}

/// The ports of the host's loopback services an agent in a namespace of
/// its own reaches on its own loopback (`net::hosts::loopback_services`):
/// a fixed array, as the child between `fork` and `exec` allocates nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopbackPorts {
    ports: [u16; crate::net::hosts::MAX_LOOPBACK],
    len: usize,
}

impl LoopbackPorts {
    /// The first [`crate::net::hosts::MAX_LOOPBACK`] of `ports`, but 0.
    pub fn new(ports: impl IntoIterator<Item = u16>) -> LoopbackPorts {
        let mut taken = LoopbackPorts::default();
        for port in ports.into_iter().filter(|p| *p != 0) {
            if taken.len == taken.ports.len() {
                break;
            }
            taken.ports[taken.len] = port;
            taken.len += 1;
        }
        taken
    }

    pub fn as_slice(&self) -> &[u16] {
        &self.ports[..self.len]
    }
}

impl Confinement {
    /// Build the confinement `profile` asks for: nothing for `mode = "off"`;
    /// without Landlock, nothing or the refusal, as `when_unavailable` says.
    pub fn prepare(profile: &Profile) -> Result<Confinement, SandboxError> {
        Confinement::prepare_net(profile, None)
    }

    /// The same, with a wall around the network: only the proxy's door
    /// left (see [`NetWall`]).
    pub fn prepare_net(
        profile: &Profile,
        net: Option<NetWall>,
    ) -> Result<Confinement, SandboxError> {
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
        super::tmpdir::sweep_once();
        let tmp = PrivateTmp::new(&profile.agent).map_err(SandboxError::TempDir)?;
        let real = canonical(profile);
        let walls = kernel_walls();
        let mut allowed: Vec<PathBuf> = real.workspace.clone();
        allowed.extend(real.writable.iter().cloned());
        allowed.push(tmp.path().to_path_buf());
        let mut fence = Fence::new(walls, &allowed, pts_rights());
        let mut proxy_port = None;
        let mut walled = false;
        match net {
            Some(NetWall::Namespace {
                channel,
                port,
                loopback,
            }) => {
                walled = fence.set_net(NetDoor {
                    channel,
                    port,
                    loopback,
                });
            }
            Some(NetWall::Landlock { port }) => {
                walled = fence.refuse_datagrams();
                proxy_port = walled.then_some(port);
            }
            None => {}
        }
        // Without a private /dev/pts the agent's own ptys need the shared one.
        let shared_pts = walls.namespace.is_none().then(|| Grant {
            path: PathBuf::from("/dev/pts"),
            access: Access::Write,
        });
        let mut confinement = Confinement {
            ruleset: None,
            tmp: Some(tmp),
            fence: Some(Arc::new(fence)),
            badge: profile.badge(),
            rules: 0,
            net_walled: walled,
        };
        let (fd, rules) =
            ruleset(&real, confinement.tmp(), shared_pts, proxy_port).map_err(|message| {
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
            fence: None,
            badge,
            rules: 0,
            net_walled: false,
        }
    }

    /// Whether the network is walled (only the proxy's door open).
    pub fn net_walled(&self) -> bool {
        self.net_walled
    }

    /// What the footer says about the process.
    pub fn badge(&self) -> Badge {
        self.badge
    }

    /// Whether a ruleset confines the process.
    pub(crate) fn is_confined(&self) -> bool {
        self.ruleset.is_some()
    }

    /// How many Landlock rules the ruleset holds.
    pub fn rules(&self) -> usize {
        self.rules
    }

    /// The private temporary directory (`TMPDIR`), when confined.
    pub fn tmp(&self) -> Option<&Path> {
        self.tmp.as_ref().map(PrivateTmp::path)
    }

    /// Confine `command`'s process: `TMPDIR` (and `TMP`, `TEMP`) set to the
    /// private directory, and the ruleset applied just before `exec`.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        if let Some(tmp) = self.tmp() {
            command.env("TMPDIR", tmp).env("TMP", tmp).env("TEMP", tmp);
        }
        let (Some(fd), Some(fence)) = (self.ruleset.as_ref().map(AsRawFd::as_raw_fd), &self.fence)
        else {
            return;
        };
        let fence = fence.clone();
        // SAFETY: the hook runs in the child between fork and exec; it only
        // makes system calls on a file descriptor the parent keeps open
        // (this `Confinement` outlives the spawn) and on memory prepared
        // before the fork, allocating nothing.
        unsafe {
            command.pre_exec(move || restrict(fd, &fence));
        }
    }

    /// The same, for a `std` command (`warden sandbox`'s self-test).
    pub fn apply_std(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt as _;
        if let Some(tmp) = self.tmp() {
            command.env("TMPDIR", tmp).env("TMP", tmp).env("TEMP", tmp);
        }
        let (Some(fd), Some(fence)) = (self.ruleset.as_ref().map(AsRawFd::as_raw_fd), &self.fence)
        else {
            return;
        };
        let fence = fence.clone();
        // SAFETY: as in `apply`.
        unsafe {
            command.pre_exec(move || restrict(fd, &fence));
        }
    }
}

/// In the child: the walls that need privileges (namespace, then no
/// capabilities); no new privileges (Landlock requires it without
/// `CAP_SYS_ADMIN`, and setuid programs must not escape); the ruleset;
/// the seccomp filter.
fn restrict(fd: libc::c_int, fence: &Fence) -> std::io::Result<()> {
    fence.before_landlock(fd)?;
    super::walls::no_new_privs()?;
    // SAFETY: a plain system call with integer arguments.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    fence.after_landlock()
}

/// The rights of an [`Access`]. Writing never makes device nodes.
fn rights(access: Access) -> BitFlags<AccessFs> {
    match access {
        Access::List => AccessFs::ReadDir.into(),
        Access::Read => AccessFs::from_read(ABI_USED),
        Access::Write => handled() & !(AccessFs::MakeChar | AccessFs::MakeBlock),
    }
}

/// What the private `/dev/pts` allows (the rule the child adds once it is
/// mounted): writing, as far as this kernel knows the rights.
fn pts_rights() -> u64 {
    let abi = match kernel_walls().abi {
        abi if abi > 0 => ABI::from(abi),
        _ => ABI_USED,
    };
    (rights(Access::Write) & AccessFs::from_all(abi)).bits()
}

/// The ruleset of `profile` (canonical) as an open Landlock fd, and how
/// many rules it holds; `extra` is one more grant.
fn ruleset(
    profile: &Profile,
    tmp: Option<&Path>,
    extra: Option<Grant>,
    proxy_port: Option<u16>,
) -> Result<(OwnedFd, usize), String> {
    let mut ruleset = Ruleset::default()
        .handle_access(handled())
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .map_err(|e| e.to_string())?;
    if proxy_port.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?;
    }
    let mut created = ruleset.create().map_err(|e| e.to_string())?;
    let mut rules = 0;
    if let Some(port) = proxy_port {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(|e| format!("the proxy's port: {e}"))?;
        rules += 1;
    }
    for grant in grants(profile, tmp, &RealFs).into_iter().chain(extra) {
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

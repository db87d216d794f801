//! The walls around a confined process besides Landlock's file rules:
//!
//! - a mount namespace of its own (directly as root, else inside a user
//!   namespace) with a fresh `devpts` on `/dev/pts`: its own ptys work,
//!   warden's terminal and the user's other ptys are not there; and the
//!   user's pathname sockets outside the workspace covered (an empty
//!   read-only tmpfs over the directories that hold them, `/dev/null` over
//!   each other socket bound when the process starts);
//! - no capabilities (a root warden's agent runs as root without them:
//!   no reading others' files or `/proc/<pid>/environ`, no `mknod`);
//! - a seccomp filter refusing `TIOCSTI` and `TIOCLINUX`.
//!
//! What the kernel allows is probed once ([`kernel_walls`]: a forked child
//! tries each); a [`Fence`] is prepared in the parent for one process, and
//! its hooks run in the child, making system calls only.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::seccomp;

/// How the process gets a mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// warden runs as root (`CAP_SYS_ADMIN`): a mount namespace directly.
    Mount,
    /// A user namespace first (the process keeps its uid and gid, mapped to
    /// themselves), then a mount namespace inside it.
    User,
}

/// What this kernel (and warden's privileges) allows, probed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelWalls {
    /// A mount namespace with a fresh devpts, and how; `None`: neither
    /// works here (user namespaces disabled or restricted).
    pub namespace: Option<Namespace>,
    /// A seccomp filter can be installed.
    pub seccomp: bool,
    /// Landlock's ABI (0: none).
    pub abi: i32,
    /// A network namespace of its own (only loopback up) works too.
    pub net: bool,
}

impl KernelWalls {
    /// Landlock scopes abstract unix sockets and signals (ABI 6).
    pub fn scopes(&self) -> bool {
        self.abi >= 6
    }

    /// How an agent's network is walled here.
    pub fn net_kind(&self) -> super::NetKind {
        if self.net {
            super::NetKind::Namespace
        } else if self.abi >= 4 && self.seccomp {
            super::NetKind::Landlock
        } else {
            super::NetKind::Open
        }
    }

    /// The doors this kernel leaves open, one line each (none: all closed).
    pub fn open_doors(&self) -> Vec<String> {
        let mut open = Vec::new();
        if !self.scopes() {
            open.push(
                "abstract unix sockets and signals outside the sandbox (Landlock ABI 6 closes them)"
                    .to_string(),
            );
        }
        if self.namespace.is_none() {
            open.push(
                "warden's terminal and your other ptys (/dev/pts), and your pathname sockets \
                 (tmux, docker, D-Bus, ssh-agent): no mount namespace (user namespaces are \
                 disabled here)"
                    .to_string(),
            );
        }
        if !self.seccomp {
            open.push(format!(
                "TIOCSTI into the agent's own ptys: no seccomp filter (the kernel setting \
                 dev.tty.legacy_tiocsti=0 refuses it everywhere; now {})",
                legacy_tiocsti()
            ));
        }
        open
    }

    /// What `warden sandbox` says about each wall.
    pub fn describe(&self) -> Vec<String> {
        let mut out = vec![
            "terminal: the agent runs in a session of its own, without a controlling terminal \
             (no /dev/tty of warden's); descriptors other than 0, 1, 2 are closed at exec"
                .to_string(),
        ];
        out.push(match self.namespace {
            Some(how) => format!(
                "mount namespace ({}): a private /dev/pts (the agent's own ptys only, not warden's \
                 terminal); your pathname sockets outside the workspace covered (the directories \
                 of tmux, D-Bus, docker, X11, and every other socket bound when the agent starts \
                 but name lookups and logging)",
                match how {
                    Namespace::Mount => "warden runs as root",
                    Namespace::User => "inside a user namespace",
                }
            ),
            None => "OPEN: no mount namespace here (user namespaces disabled): warden's terminal \
                     (/dev/pts) and your pathname sockets are reachable"
                .to_string(),
        });
        if self.namespace.is_some() {
            out.push(late_sockets_door(self.abi));
        }
        out.push(if self.scopes() {
            "Landlock scopes (ABI 6): no abstract unix socket and no signal out of the sandbox"
                .to_string()
        } else {
            format!(
                "OPEN: Landlock ABI {} has no scopes (6 does): abstract unix sockets and signals \
                 reach outside the sandbox",
                self.abi
            )
        });
        out.push(if self.seccomp {
            format!(
                "seccomp: TIOCSTI and TIOCLINUX refused (the kernel setting \
                 dev.tty.legacy_tiocsti, now {}, is yours: 0 refuses TIOCSTI for every program)",
                legacy_tiocsti()
            )
        } else {
            format!(
                "OPEN: no seccomp filter: TIOCSTI works on the agent's own ptys (set \
                 dev.tty.legacy_tiocsti=0 to refuse it everywhere; now {})",
                legacy_tiocsti()
            )
        });
        out.push(
            "no device nodes (mknod) and no capabilities, even when warden runs as root"
                .to_string(),
        );
        out
    }
}

/// `dev.tty.legacy_tiocsti`, as the kernel says it.
fn legacy_tiocsti() -> String {
    std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map_or_else(|_| "absent".to_string(), |s| s.trim().to_string())
}

/// What the kernel allows, probed on first use.
pub fn kernel_walls() -> &'static KernelWalls {
    static WALLS: OnceLock<KernelWalls> = OnceLock::new();
    WALLS.get_or_init(|| {
        let abi = match super::kernel_support() {
            super::Support::Landlock(abi) => abi,
            super::Support::Missing(_) => 0,
        };
        // SAFETY: a plain query.
        let root = unsafe { libc::geteuid() } == 0;
        let kinds: &[Namespace] = if root {
            &[Namespace::Mount, Namespace::User]
        } else {
            &[Namespace::User]
        };
        let namespace = kinds.iter().copied().find(|kind| {
            let fence = NamespacePlan::new(*kind, Vec::new());
            probe(|| fence.enter(None))
        });
        let net = namespace.is_some_and(|kind| {
            let mut fence = NamespacePlan::new(kind, Vec::new());
            fence.net = Some(NetDoor {
                channel: -1,
                port: 1080,
                loopback: super::LoopbackPorts::default(),
            });
            probe(|| fence.enter(None))
        });
        let filter = seccomp::program();
        let seccomp = seccomp::known_arch()
            && probe(|| {
                no_new_privs()?;
                seccomp::install(&filter)
            });
        KernelWalls {
            namespace,
            seccomp,
            abi,
            net,
        }
    })
}

/// Whether `step` succeeds in a forked child.
fn probe(step: impl Fn() -> std::io::Result<()>) -> bool {
    // SAFETY: the child only runs `step` (system calls on memory prepared
    // before the fork) and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = i32::from(step().is_err());
        // SAFETY: leaves the child without running anything of the parent's.
        unsafe { libc::_exit(code) };
    }
    if pid < 0 {
        return false;
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child just forked.
        let done = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if done == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if done < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// One process's walls, prepared in the parent.
#[derive(Debug)]
pub(crate) struct Fence {
    namespace: Option<NamespacePlan>,
    /// The Landlock rights the fresh `/dev/pts` gets (a rule the child
    /// adds to the ruleset once it is mounted).
    pts_rights: u64,
    /// Drop every capability (fail if they cannot be).
    drop_caps: bool,
    /// The seccomp program, when the kernel takes one.
    filter: Option<Vec<libc::sock_filter>>,
}

impl Fence {
    /// The walls of a process that may write in `allowed` (the workspace,
    /// its state, its temporary directory): every other pathname socket
    /// is covered. `pts_rights`: what the private `/dev/pts` allows.
    pub(crate) fn new(walls: &KernelWalls, allowed: &[PathBuf], pts_rights: u64) -> Fence {
        // SAFETY: plain queries.
        let root = unsafe { libc::geteuid() } == 0;
        Fence {
            namespace: walls
                .namespace
                .map(|kind| NamespacePlan::new(kind, covers(allowed))),
            pts_rights,
            drop_caps: root || walls.namespace == Some(Namespace::User),
            filter: walls.seccomp.then(seccomp::program),
        }
    }

    /// In the child, before Landlock: the namespace (the fresh devpts
    /// allowed by a rule added to `ruleset`), then no capabilities.
    /// Give the process a network namespace of its own, with only
    /// loopback up and the proxy's listening socket made there on `door`'s
    /// port and sent back on its channel. `false`: no namespace here.
    pub(crate) fn set_net(&mut self, door: NetDoor) -> bool {
        match &mut self.namespace {
            Some(plan) => {
                plan.net = Some(door);
                // The system's resolvers answer over unix sockets: a name
                // looked up there leaves by the host's DNS. Covered too.
                for dir in RESOLVER_SOCKETS {
                    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
                        && let Ok(path) = CString::new(*dir)
                    {
                        plan.covers.push((path, Cover::Tmpfs));
                    }
                }
                true
            }
            None => false,
        }
    }

    /// Refuse UDP, raw and packet sockets (the seccomp filter's walled
    /// program). `false`: no seccomp here.
    pub(crate) fn refuse_datagrams(&mut self) -> bool {
        match &mut self.filter {
            Some(filter) => {
                *filter = seccomp::program_walled();
                true
            }
            None => false,
        }
    }

    pub(crate) fn before_landlock(&self, ruleset: RawFd) -> std::io::Result<()> {
        if let Some(namespace) = &self.namespace {
            namespace.enter(Some((ruleset, self.pts_rights)))?;
        }
        drop_capabilities(self.drop_caps)
    }

    /// In the child, after Landlock (no-new-privileges is set): seccomp.
    pub(crate) fn after_landlock(&self) -> std::io::Result<()> {
        match &self.filter {
            Some(filter) => seccomp::install(filter),
            None => Ok(()),
        }
    }
}

/// What covers a path of the user's in the agent's mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cover {
    /// An empty, read-only tmpfs over a directory.
    Tmpfs,
    /// `/dev/null` bound over a socket.
    Null,
}

#[derive(Debug)]
struct NamespacePlan {
    kind: Namespace,
    uid_map: CString,
    gid_map: CString,
    covers: Vec<(CString, Cover)>,
    /// A network namespace too, and where its proxy socket goes.
    net: Option<NetDoor>,
}

/// The agent's end of the proxy's door: a unix socket the child sends the
/// listening sockets on (`-1`: make them, send nothing: the probe), the
/// port the proxy listens on in the namespace, and the host's loopback
/// services' ports listened on there too.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NetDoor {
    pub(crate) channel: RawFd,
    pub(crate) port: u16,
    pub(crate) loopback: super::LoopbackPorts,
}

/// Directories of the user's that hold sockets, covered whole (sockets
/// made there later are covered too).
fn socket_dirs() -> Vec<PathBuf> {
    // SAFETY: a plain query.
    let uid = unsafe { libc::geteuid() };
    vec![
        PathBuf::from(format!("/run/user/{uid}")),
        PathBuf::from(format!("/tmp/tmux-{uid}")),
        PathBuf::from("/tmp/.X11-unix"),
        PathBuf::from("/tmp/.ICE-unix"),
        PathBuf::from("/run/dbus"),
        PathBuf::from("/run/docker"),
    ]
}

/// The door the mount namespace leaves: sockets it cannot cover, since
/// they did not exist when the agent started. Landlock before ABI 9 does
/// not confine `connect`, and seccomp cannot see a socket's path.
fn late_sockets_door(abi: i32) -> String {
    let dirs: Vec<String> = socket_dirs()
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    format!(
        "OPEN: a pathname socket bound after the agent starts, outside the workspace and \
         the covered directories ({}), is reachable: an ssh-agent or an ssh ControlMaster \
         socket started later, or a service that restarts and binds its socket again (the \
         cover goes with the old file). Landlock's socket rule would close it (ABI 9; this \
         kernel: ABI {abi}; warden does not use it yet)",
        dirs.join(", ")
    )
}

/// The system's sockets left in reach: name and user lookups (nscd, sssd,
/// systemd's userdb and resolver) and logging; they answer questions, they
/// run nothing.
const SYSTEM_SOCKETS: &[&str] = &[
    "/run/systemd/resolve/",
    "/run/systemd/userdb/",
    "/run/systemd/journal/",
    "/dev/log",
    "/run/nscd/",
    "/var/run/nscd/",
    "/var/lib/sss/pipes/",
];

/// The directories of the system's name resolvers' sockets, covered
/// when the network is walled (systemd-resolved's varlink and D-Bus-less
/// API, nscd).
const RESOLVER_SOCKETS: &[&str] = &["/run/systemd/resolve", "/run/nscd", "/var/run/nscd"];

/// The most sockets covered one by one.
const MOST_SOCKETS: usize = 4096;

/// The paths to cover: [`socket_dirs`] that hold nothing of `allowed`,
/// and every other bound socket (`/proc/net/unix`) outside them and
/// outside `allowed`.
fn covers(allowed: &[PathBuf]) -> Vec<(CString, Cover)> {
    let keeps = |p: &Path| allowed.iter().any(|a| a.starts_with(p) || p.starts_with(a));
    let dirs: Vec<PathBuf> = socket_dirs()
        .into_iter()
        .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) && !keeps(d))
        .collect();
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let mut sockets: Vec<PathBuf> = bound_sockets(&table)
        .into_iter()
        .filter(|s| {
            !allowed.iter().any(|a| s.starts_with(a))
                && !dirs.iter().any(|d| s.starts_with(d))
                && !SYSTEM_SOCKETS
                    .iter()
                    .any(|k| s.to_string_lossy().starts_with(k))
                && std::fs::symlink_metadata(s).is_ok_and(|m| m.file_type().is_socket())
        })
        .collect();
    sockets.sort();
    sockets.dedup();
    sockets.truncate(MOST_SOCKETS);
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    dirs.iter()
        .filter_map(|d| Some((c(d)?, Cover::Tmpfs)))
        .chain(sockets.iter().filter_map(|s| Some((c(s)?, Cover::Null))))
        .collect()
}

/// The absolute paths of `/proc/net/unix` (abstract names start with `@`).
fn bound_sockets(table: &str) -> Vec<PathBuf> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let path = line.split_whitespace().nth(7)?;
            let start = line.find(path)?;
            Some(&line[start..])
        })
        .filter(|p| p.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

impl NamespacePlan {
    fn new(kind: Namespace, covers: Vec<(CString, Cover)>) -> NamespacePlan {
        // SAFETY: plain queries.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        NamespacePlan {
            kind,
            uid_map: CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
            gid_map: CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
            covers,
            net: None,
        }
    }

    /// In the child: the namespaces, the fresh devpts (and, given a
    /// ruleset, its rule), the covers.
    fn enter(&self, rule: Option<(RawFd, u64)>) -> std::io::Result<()> {
        // SAFETY: system calls on C strings prepared before the fork.
        unsafe {
            let net = if self.net.is_some() {
                libc::CLONE_NEWNET
            } else {
                0
            };
            match self.kind {
                Namespace::Mount => check(libc::unshare(libc::CLONE_NEWNS | net))?,
                Namespace::User => {
                    check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | net))?;
                    write_file(c"/proc/self/setgroups", c"deny")?;
                    write_file(c"/proc/self/uid_map", &self.uid_map)?;
                    write_file(c"/proc/self/gid_map", &self.gid_map)?;
                }
            }
            // Nothing mounted here propagates back to the user's namespace.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                c"devpts".as_ptr(),
                c"/dev/pts".as_ptr(),
                c"devpts".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
            ))?;
            if let Some((ruleset, rights)) = rule {
                allow_beneath(ruleset, c"/dev/pts", rights)?;
            }
            if let Some(door) = self.net {
                loopback_up()?;
                send_listeners(door)?;
            }
            for (path, cover) in &self.covers {
                let done = match cover {
                    Cover::Tmpfs => libc::mount(
                        c"tmpfs".as_ptr(),
                        path.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        c"size=4k,mode=0700".as_ptr().cast(),
                    ),
                    Cover::Null => libc::mount(
                        c"/dev/null".as_ptr(),
                        path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ),
                };
                if done != 0 {
                    let err = std::io::Error::last_os_error();
                    // Gone since it was listed, or where the user cannot go either.
                    if !matches!(
                        err.raw_os_error(),
                        Some(libc::ENOENT | libc::ENOTDIR | libc::EACCES | libc::ELOOP)
                    ) {
                        return Err(err);
                    }
                }
            }
        }
        Ok(())
    }
}

/// `struct ifreq` with its flags (the rest of the union unused).
#[repr(C)]
struct IfreqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    pad: [u8; 22],
}

/// In the child, in its new network namespace: `lo` up.
fn loopback_up() -> std::io::Result<()> {
    let mut req = IfreqFlags {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short,
        pad: [0; 22],
    };
    req.name[0] = b'l';
    req.name[1] = b'o';
    // SAFETY: system calls on a struct on the stack.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(fd)?;
        let done = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &raw mut req);
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if done != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// In the child, in its new network namespace: the proxy's listening TCP
/// socket on `127.0.0.1:port`, then one on `127.0.0.1` and one on `::1`
/// (where IPv6 is) for each of the door's loopback ports, each sent over
/// `door.channel` (`SCM_RIGHTS`) in that order.
fn send_listeners(door: NetDoor) -> std::io::Result<()> {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    send(door.channel, (Ipv4Addr::LOCALHOST, door.port).into())?;
    for &port in door.loopback.as_slice() {
        send(door.channel, (Ipv4Addr::LOCALHOST, port).into())?;
        let v6: SocketAddr = (Ipv6Addr::LOCALHOST, port).into();
        match send(door.channel, v6) {
            // No IPv6 in this kernel or namespace: IPv4 only.
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(libc::EADDRNOTAVAIL | libc::EAFNOSUPPORT)
                ) => {}
            other => other?,
        }
    }
    Ok(())
}

/// A listening TCP socket on `addr`, sent over `channel` (with one byte;
/// `-1`: made, sent nowhere: the probe). Nothing allocated: it runs
/// between `fork` and `exec`.
fn send(channel: RawFd, addr: std::net::SocketAddr) -> std::io::Result<()> {
    use rustix::net::{
        AddressFamily, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags,
        SocketType,
    };
    let family = match addr {
        std::net::SocketAddr::V4(_) => AddressFamily::INET,
        std::net::SocketAddr::V6(_) => AddressFamily::INET6,
    };
    let socket = rustix::net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
    if family == AddressFamily::INET6 {
        // `::1` only: no IPv4 through it.
        rustix::net::sockopt::set_ipv6_v6only(&socket, true)?;
    }
    rustix::net::bind(&socket, &addr)?;
    rustix::net::listen(&socket, 1024)?;
    if channel < 0 {
        return Ok(());
    }
    // SAFETY: the door's channel is open in the child until `exec`.
    let channel = unsafe { std::os::fd::BorrowedFd::borrow_raw(channel) };
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [std::os::fd::AsFd::as_fd(&socket)];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    let sent = rustix::net::sendmsg(
        channel,
        &[std::io::IoSlice::new(&[0])],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    if sent != 1 {
        return Err(std::io::Error::from_raw_os_error(libc::EMSGSIZE));
    }
    Ok(())
}

/// In the parent: the listening sockets the child sent on `channel`, in
/// the order sent (they were sent before `exec`, so all are there once the
/// spawn returned). The first is the proxy's.
pub fn receive_listeners(channel: RawFd) -> std::io::Result<Vec<std::net::TcpListener>> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    // SAFETY: warden's end of the door, open while the door is.
    let channel = unsafe { std::os::fd::BorrowedFd::borrow_raw(channel) };
    let mut listeners = Vec::new();
    loop {
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let mut byte = [0u8; 1];
        let got = rustix::net::recvmsg(
            channel,
            &mut [std::io::IoSliceMut::new(&mut byte)],
            &mut control,
            RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
        );
        match got {
            Ok(got) if got.bytes == 1 => {}
            // Nothing more sent (or the child's end closed).
            Ok(_) | Err(rustix::io::Errno::AGAIN) => break,
            Err(err) => return Err(err.into()),
        }
        let mut fds = control.drain().filter_map(|message| match message {
            RecvAncillaryMessage::ScmRights(fds) => Some(fds),
            _ => None,
        });
        match fds.next().and_then(|mut fds| fds.next()) {
            Some(fd) => listeners.push(std::net::TcpListener::from(fd)),
            None => break,
        }
    }
    if listeners.is_empty() {
        return Err(std::io::Error::other(
            "the agent's network namespace sent no proxy socket",
        ));
    }
    Ok(listeners)
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Add a rule allowing `rights` beneath `path` to `ruleset`.
fn allow_beneath(ruleset: RawFd, path: &std::ffi::CStr, rights: u64) -> std::io::Result<()> {
    // SAFETY: system calls on a C string and a struct on the stack.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        check(fd)?;
        let attr = PathBeneathAttr {
            allowed_access: rights,
            parent_fd: fd,
        };
        // LANDLOCK_RULE_PATH_BENEATH = 1
        let done = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1 as libc::c_int,
            &raw const attr,
            0u32,
        );
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if done != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Write `text` to `path` (a file of `/proc/self`).
fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: system calls on C strings.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if written < 0 || written.unsigned_abs() != bytes.len() {
            return Err(err);
        }
    }
    Ok(())
}

fn check(done: libc::c_int) -> std::io::Result<()> {
    if done < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `PR_SET_NO_NEW_PRIVS`.
pub(crate) fn no_new_privs() -> std::io::Result<()> {
    // SAFETY: a plain system call.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAP_V3: u32 = 0x2008_0522;

/// In the child: empty the bounding set (a root process regains none at
/// `exec`), the ambient set, and the effective, permitted and inheritable
/// ones. With `required`, a failure is an error; without, an unprivileged
/// process has nothing to drop.
fn drop_capabilities(required: bool) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments and stack structs.
    unsafe {
        for cap in 0..64 {
            let has = libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0);
            if has < 0 {
                break;
            }
            if has == 1 && libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && required {
                return Err(std::io::Error::last_os_error());
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let header = CapHeader {
            version: CAP_V3,
            pid: 0,
        };
        let data = [
            CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) != 0 && required {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "walls_tests.rs"]
mod tests;

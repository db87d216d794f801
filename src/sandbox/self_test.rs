//! `warden sandbox`'s self-test: confined children of a profile try each
//! door the sandbox closes, and an unconfined child tries first, to show
//! the test can fail. Everything tried on is made for the test in a fresh
//! directory of warden's temp dir (a file outside the workspace, a hidden
//! file, a pty standing for warden's terminal, sockets, a leaked
//! descriptor, a workspace for `mknod`).

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::sync::Arc;

use super::tmpdir::PrivateTmp;
use super::walls::kernel_walls;
use super::{Confinement, Profile, own_session_std};

/// Exit status of a step that failed: this plus its errno (at most 150).
const STEP_FAILED: i32 = 100;

type Step = Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>;

/// What a child tries.
enum Attempt {
    /// A shell line: it got through when the shell succeeds.
    Shell(String),
    /// A step run in the child just before `exec` (after the sandbox's
    /// hooks): it got through when it succeeds.
    Step(Step),
}

struct Try {
    what: String,
    attempt: Attempt,
    /// The unconfined child runs in a session of its own too (else it
    /// shares warden's, and its terminal).
    alone: bool,
    /// This kernel lacks the wall that shuts this door (a door
    /// `open_doors` names already): getting through is said, not a failure.
    known_open: bool,
    /// For a datagram: whether it arrived (a send that succeeds in the
    /// agent's own network namespace lands nowhere).
    landed: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

/// The self-test of `profile`: each line says what happened; the result
/// is whether the sandbox held.
pub fn self_test(profile: &Profile) -> (bool, Vec<String>) {
    let dir = match PrivateTmp::new("self-test") {
        Ok(dir) => dir,
        Err(err) => {
            return (
                false,
                vec![format!("cannot make the test directory: {err}")],
            );
        }
    };
    match Bench::new(dir.path()) {
        Ok(bench) => run(profile, dir.path(), &bench),
        Err(err) => (false, vec![format!("cannot set the test up: {err}")]),
    }
}

/// What the tries aim at, alive while they run.
struct Bench {
    /// A pty's master; its slave stands for warden's terminal.
    _master: OwnedFd,
    slave: String,
    _abstract: std::os::unix::net::UnixListener,
    abstract_name: Vec<u8>,
    _pathname: std::os::unix::net::UnixListener,
    /// A descriptor of warden's without close-on-exec.
    leaked: OwnedFd,
    /// A TCP listener and a UDP socket on 127.0.0.1 (the network tries).
    tcp: std::net::TcpListener,
    udp: Arc<std::net::UdpSocket>,
}

impl Bench {
    fn new(dir: &Path) -> std::io::Result<Bench> {
        use std::os::linux::net::SocketAddrExt as _;
        std::fs::write(dir.join("id_rsa"), "not a real key\n")?;
        std::fs::create_dir(dir.join("work"))?;
        let (master, slave) = pty()?;
        let abstract_name =
            format!("warden-self-test-{}", uuid::Uuid::new_v4().simple()).into_bytes();
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name)?;
        let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&addr)?;
        let pathname = std::os::unix::net::UnixListener::bind(dir.join("socket"))?;
        let file = std::fs::File::create(dir.join("leaked"))?;
        // SAFETY: `dup` of an open descriptor; the new one is owned here.
        let leaked = unsafe { libc::dup(file.as_raw_fd()) };
        if leaked < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: just made, owned by nothing else.
        let leaked = unsafe { OwnedFd::from_raw_fd(leaked) };
        let tcp = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let udp = std::net::UdpSocket::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        udp.set_nonblocking(true)?;
        Ok(Bench {
            tcp,
            udp: Arc::new(udp),
            _master: master,
            slave,
            _abstract: abstract_listener,
            abstract_name,
            _pathname: pathname,
            leaked,
        })
    }
}

/// A pty: its master and its slave's path.
fn pty() -> std::io::Result<(OwnedFd, String)> {
    // SAFETY: plain calls; the buffer outlives `ptsname_r`.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let master = OwnedFd::from_raw_fd(fd);
        if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let name = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        Ok((master, name))
    }
}

fn tries(dir: &Path, bench: &Bench, net_walled: bool) -> Vec<Try> {
    let quote = |p: &Path| crate::policy::shell_quote(&p.to_string_lossy()).into_owned();
    let outside = dir.join("written-outside");
    let secret = dir.join("id_rsa");
    let node = dir.join("work/null");
    let warden = std::process::id();
    let shell = |what: String, line: String, alone: bool| Try {
        what,
        attempt: Attempt::Shell(line),
        alone,
        known_open: false,
        landed: None,
    };
    let step = |what: String, step: Step| Try {
        what,
        attempt: Attempt::Step(step),
        alone: true,
        known_open: false,
        landed: None,
    };
    let tcp = inet_addr(bench.tcp.local_addr().map_or(0, |a| a.port()));
    let udp = inet_addr(bench.udp.local_addr().map_or(0, |a| a.port()));
    let udp_socket = bench.udp.clone();
    let landed: Arc<dyn Fn() -> bool + Send + Sync> = Arc::new(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut buf = [0u8; 16];
        let mut got = false;
        while udp_socket.recv_from(&mut buf).is_ok() {
            got = true;
        }
        got
    });
    let network = vec![
        open_if_net(
            !net_walled,
            step(
                format!(
                    "connect directly to a TCP listener on 127.0.0.1:{}",
                    u16::from_be(tcp.sin_port)
                ),
                Arc::new(move || inet(&tcp, libc::SOCK_STREAM)),
            ),
        ),
        Try {
            landed: Some(landed),
            ..open_if_net(
                !net_walled,
                step(
                    format!(
                        "send a UDP datagram to 127.0.0.1:{}",
                        u16::from_be(udp.sin_port)
                    ),
                    Arc::new(move || inet(&udp, libc::SOCK_DGRAM)),
                ),
            )
        },
        open_if_net(
            !net_walled,
            shell(
                format!("resolve a name with DNS (getent hosts {DNS_PROBE})"),
                format!("getent hosts {DNS_PROBE}"),
                true,
            ),
        ),
    ];
    let walls = kernel_walls();
    let open_if = |lacking: bool, one: Try| Try {
        known_open: lacking,
        ..one
    };
    let pathname = unix_addr(dir.join("socket").as_os_str().as_encoded_bytes(), false);
    let abstract_addr = unix_addr(&bench.abstract_name, true);
    vec![
        shell(
            format!("write {}", outside.display()),
            format!(": > {}", quote(&outside)),
            true,
        ),
        shell(
            format!("read {}", secret.display()),
            format!("cat {}", quote(&secret)),
            true,
        ),
        shell(
            "open warden's controlling terminal (/dev/tty)".into(),
            ": > /dev/tty".into(),
            false,
        ),
        open_if(
            walls.namespace.is_none(),
            shell(
                format!("write to a terminal of warden's ({})", bench.slave),
                format!("printf '' > {}", crate::policy::shell_quote(&bench.slave)),
                true,
            ),
        ),
        open_if(
            !walls.seccomp,
            step(
                "push a key into a terminal's input (TIOCSTI)".into(),
                Arc::new(tiocsti),
            ),
        ),
        open_if(
            !walls.scopes(),
            step(
                "connect to an abstract unix socket of warden's".into(),
                Arc::new(move || connect(&abstract_addr)),
            ),
        ),
        open_if(
            walls.namespace.is_none(),
            step(
                format!(
                    "connect to a unix socket outside the workspace ({})",
                    dir.join("socket").display()
                ),
                Arc::new(move || connect(&pathname)),
            ),
        ),
        open_if(
            !walls.scopes(),
            shell(
                format!("signal warden (kill -0 {warden})"),
                format!("kill -0 {warden}"),
                true,
            ),
        ),
        shell(
            format!(
                "inherit a descriptor warden opened without close-on-exec ({})",
                bench.leaked.as_raw_fd()
            ),
            format!("test -e /proc/self/fd/{}", bench.leaked.as_raw_fd()),
            false,
        ),
        shell(
            format!("read warden's environment (/proc/{warden}/environ)"),
            format!("cat /proc/{warden}/environ > /dev/null"),
            true,
        ),
        shell(
            format!("make a device node in the workspace ({})", node.display()),
            format!("mknod {} c 1 3", quote(&node)),
            true,
        ),
    ]
    .into_iter()
    .chain(network)
    .collect()
}

/// The name the DNS try resolves.
const DNS_PROBE: &str = "example.com";

/// A try whose door is open when the network is (said, not a failure).
fn open_if_net(open: bool, one: Try) -> Try {
    Try {
        known_open: open,
        ..one
    }
}

/// `127.0.0.1:port`.
fn inet_addr(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// In the child: a socket of `kind` connected to `addr`, and a byte sent.
fn inet(addr: &libc::sockaddr_in, kind: libc::c_int) -> std::io::Result<()> {
    // SAFETY: system calls on a struct prepared before the fork.
    unsafe {
        let fd = libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let done = libc::connect(
            fd,
            (&raw const *addr).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) == 0
            && libc::send(fd, b"x".as_ptr().cast(), 1, libc::MSG_NOSIGNAL) == 1;
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if !done {
            return Err(err);
        }
    }
    Ok(())
}

fn run(profile: &Profile, dir: &Path, bench: &Bench) -> (bool, Vec<String>) {
    let mut profile = profile.clone();
    profile.hidden.push(dir.join("id_rsa"));
    profile.workspace.retain(|w| !dir.starts_with(w));
    profile.workspace.push(dir.join("work"));
    // The network walled as the agent's is (its proxy's door kept open
    // while the tries run; nothing serves on it).
    let door = (profile.network != crate::net::NetworkMode::Open)
        .then(|| crate::net::door::Door::new(super::net_wall(), Vec::new()).ok())
        .flatten();
    let confinement = match Confinement::prepare_net(&profile, door.as_ref().and_then(|d| d.wall()))
    {
        Ok(c) => c,
        Err(err) => return (false, vec![err.to_string()]),
    };
    let net_walled = confinement.net_walled();
    if !confinement.is_confined() {
        return (
            false,
            vec![format!(
                "the agent would run unconfined ({})",
                confinement.badge().label()
            )],
        );
    }
    let mut lines = Vec::new();
    let mut held = true;
    for one in tries(dir, bench, net_walled) {
        let what = &one.what;
        match attempt(&one, None) {
            Ok(()) => {}
            Err(Blocked::Refused(why)) => lines.push(format!(
                "note: even an unconfined child could not {what}: {why}"
            )),
            Err(Blocked::NotStarted(err)) => lines.push(format!(
                "note: even an unconfined child could not {what}: it did not start: {err}"
            )),
        }
        let _ = std::fs::remove_file(dir.join("written-outside"));
        let _ = std::fs::remove_file(dir.join("work/null"));
        match attempt(&one, Some(&confinement)) {
            Ok(()) if one.known_open => lines.push(format!(
                "OPEN on this kernel: a confined child could {what}"
            )),
            Ok(()) => {
                held = false;
                lines.push(format!("FAILED: a confined child could {what}"));
            }
            Err(Blocked::Refused(why)) => {
                lines.push(format!("ok: a confined child could not {what}: {why}"));
            }
            Err(Blocked::NotStarted(err)) => {
                held = false;
                lines.push(format!("FAILED: the confined child did not start: {err}"));
            }
        }
    }
    (held, lines)
}

enum Blocked {
    /// The attempt failed, for this reason.
    Refused(String),
    /// The child did not start.
    NotStarted(std::io::Error),
}

/// Run one try in a child, confined by `confinement` or not.
fn attempt(one: &Try, confinement: Option<&Confinement>) -> Result<(), Blocked> {
    let mut command = std::process::Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(match &one.attempt {
            Attempt::Shell(line) => line.as_str(),
            Attempt::Step(_) => ":",
        })
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if confinement.is_some() || one.alone {
        own_session_std(&mut command);
    }
    if let Some(confinement) = confinement {
        confinement.apply_std(&mut command);
    }
    if let Attempt::Step(step) = &one.attempt {
        let step = step.clone();
        // SAFETY: the step only makes system calls on memory prepared
        // before the fork, then `_exit`s when it failed.
        unsafe {
            command.pre_exec(move || {
                if let Err(err) = step() {
                    let errno = err.raw_os_error().unwrap_or(0).clamp(0, 150);
                    libc::_exit(STEP_FAILED + errno);
                }
                Ok(())
            });
        }
    }
    let out = command.output().map_err(Blocked::NotStarted)?;
    if out.status.success() {
        return match &one.landed {
            Some(landed) if !landed() => Err(Blocked::Refused(
                "sent, but nothing arrived (the agent's network is its own)".to_string(),
            )),
            _ => Ok(()),
        };
    }
    let why = match (&one.attempt, out.status.code()) {
        (Attempt::Step(_), Some(code)) if code >= STEP_FAILED => {
            std::io::Error::from_raw_os_error(code - STEP_FAILED).to_string()
        }
        _ => {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if said.is_empty() {
                out.status.to_string()
            } else {
                said
            }
        }
    };
    Err(Blocked::Refused(why))
}

/// A `sockaddr_un` for `name` (abstract: a NUL first) and its length.
fn unix_addr(name: &[u8], abstract_name: bool) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: all zeroes is a valid `sockaddr_un`.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let start = usize::from(abstract_name);
    let room = addr.sun_path.len() - 1 - start;
    for (slot, byte) in addr.sun_path[start..]
        .iter_mut()
        .zip(&name[..name.len().min(room)])
    {
        *slot = *byte as libc::c_char;
    }
    let path_offset = std::mem::size_of::<libc::sa_family_t>();
    let len = path_offset + start + name.len().min(room) + usize::from(!abstract_name);
    (addr, libc::socklen_t::try_from(len).unwrap_or(0))
}

/// In the child: connect a unix stream socket to `addr`.
fn connect(addr: &(libc::sockaddr_un, libc::socklen_t)) -> std::io::Result<()> {
    // SAFETY: system calls on a struct prepared before the fork.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let done = libc::connect(fd, (&raw const addr.0).cast(), addr.1);
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if done != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// In the child (a session leader): a pty of its own as its controlling
/// terminal, and a byte pushed into its input with `TIOCSTI`.
fn tiocsti() -> std::io::Result<()> {
    // SAFETY: system calls on integers and a byte on the stack.
    unsafe {
        let master = libc::open(
            c"/dev/ptmx".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if master < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let unlock: libc::c_int = 0;
        libc::ioctl(master, libc::TIOCSPTLCK, &raw const unlock);
        let slave = libc::ioctl(master, libc::TIOCGPTPEER, libc::O_RDWR | libc::O_CLOEXEC);
        if slave < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::ioctl(slave, libc::TIOCSCTTY, 0);
        let byte = b'y';
        if libc::ioctl(slave, libc::TIOCSTI, &raw const byte) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Let the pty go (without the hangup it sends its session leader)
        // before `exec` closes it.
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::ioctl(slave, libc::TIOCNOTTY);
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
    }
    Ok(())
}

//! The walls besides Landlock's file rules, end to end: an agent process
//! (started by warden as agents are) and one of warden's terminals for it
//! run a probe that tries each door: warden's terminal, `TIOCSTI`, a pty
//! standing for warden's, the user's sockets (abstract and pathname),
//! signalling warden, a descriptor warden leaked, `mknod`, warden's
//! environment; and checks that its own ptys, its own sockets and
//! signalling its own children still work. With the sandbox off, the doors
//! the sandbox closes are open: each check can fail.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::linux::net::SocketAddrExt as _;
use std::path::{Path, PathBuf};

use warden::acp::AgentCommand;
use warden::app::{App, ChatOptions};
use warden::policy::Mode;
use warden::sandbox::SandboxMode;

use crate::common::*;
use crate::sandbox::{Rig, landlock, profile, rig};

const PROBE: &str = r#"
import fcntl, json, os, pty, socket, subprocess, sys, termios
conf = json.load(open(sys.argv[1]))
out = {}
def check(name, fn):
    try:
        out[name] = "through: " + str(fn())
    except Exception as e:
        out[name] = "refused: " + repr(e)

check("own-session", lambda: os.getsid(0) != conf["sid"] or (_ for _ in ()).throw(OSError("warden's session")))
check("dev-tty", lambda: os.close(os.open("/dev/tty", os.O_RDWR)))
check("wardens-pts", lambda: os.close(os.open(conf["pts"], os.O_WRONLY | os.O_NOCTTY)))
def tiocsti():
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSTI, b"y")
            os._exit(0)
        except OSError:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError("TIOCSTI refused")
check("tiocsti", tiocsti)
def own_pty():
    m, s = os.openpty()
    again = os.open(os.ttyname(s), os.O_RDWR | os.O_NOCTTY)
    os.write(again, b"pty-ok\n")
    return os.read(m, 100)
check("own-pty", own_pty)
def script():
    got = subprocess.run(["script", "-qc", "echo script-ok", "/dev/null"], stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    if b"script-ok" not in got.stdout:
        raise OSError(got.stderr)
    return "script-ok"
check("own-script", script)
def connect(addr):
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr)
    s.close()
check("abstract-socket", lambda: connect("\0" + conf["abstract"]))
check("user-socket", lambda: connect(conf["socket"]))
def own_socket():
    path = os.path.join(conf["work"], "own.sock")
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    connect(path)
check("own-socket", own_socket)
check("signal-warden", lambda: os.kill(conf["pid"], 0))
def own_child():
    child = subprocess.Popen(["sleep", "30"])
    child.terminate()
    return child.wait()
check("own-child", own_child)
check("leaked-fd", lambda: os.write(conf["fd"], b"x"))
def mknod():
    path = os.path.join(conf["work"], "null-" + sys.argv[2])
    os.mknod(path, 0o20600, os.makedev(1, 3))
    os.unlink(path)
check("mknod", mknod)
check("wardens-environ", lambda: len(open("/proc/%d/environ" % conf["pid"], "rb").read()))
def caps():
    status = open("/proc/self/status").read()
    held = [l for l in status.splitlines() if l.startswith(("CapEff", "CapPrm", "CapBnd")) and not l.endswith("0" * 16)]
    if held:
        raise OSError(held)
check("no-capabilities", caps)
json.dump(out, open(os.path.join(conf["work"], "probe-" + sys.argv[2] + ".json"), "w"))
"#;

fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// What the probe aims at, alive while it runs.
struct Bench {
    _master: OwnedFd,
    _abstract: std::os::unix::net::UnixListener,
    _socket: std::os::unix::net::UnixListener,
    _leaked: OwnedFd,
    conf: PathBuf,
}

fn bench(rig: &Rig) -> Bench {
    // A pty standing for warden's terminal.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    assert!(master >= 0);
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    assert_eq!(unsafe { libc::grantpt(master.as_raw_fd()) }, 0);
    assert_eq!(unsafe { libc::unlockpt(master.as_raw_fd()) }, 0);
    let mut name = [0 as libc::c_char; 128];
    assert_eq!(
        unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) },
        0
    );
    let pts = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let abstract_name = format!("warden-walls-test-{}", std::process::id());
    let abstract_name = format!("{abstract_name}-{}", rig.root.display().to_string().len());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
    let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let socket_path = rig.root.join("user.sock");
    let socket = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    // A descriptor of warden's without close-on-exec, open for writing.
    let file = std::fs::File::create(rig.root.join("leaked.txt")).unwrap();
    let leaked = unsafe { OwnedFd::from_raw_fd(libc::dup(file.as_raw_fd())) };
    let conf = rig.work.join("probe.json");
    std::fs::write(rig.work.join("probe.py"), PROBE).unwrap();
    std::fs::write(
        &conf,
        serde_json::json!({
            "sid": unsafe { libc::getsid(0) },
            "pid": std::process::id(),
            "pts": pts,
            "abstract": abstract_name,
            "socket": socket_path,
            "fd": leaked.as_raw_fd(),
            "work": rig.work,
        })
        .to_string(),
    )
    .unwrap();
    Bench {
        _master: master,
        _abstract: abstract_listener,
        _socket: socket,
        _leaked: leaked,
        conf,
    }
}

/// The probe's answers: check -> "through: ..." or "refused: ...".
fn answers(rig: &Rig, tag: &str) -> BTreeMap<String, String> {
    let path = rig.work.join(format!("probe-{tag}.json"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// An agent that runs the probe first, then becomes the demo agent.
fn probing_agent(rig: &Rig, bench: &Bench, python: &str, tag: &str) -> AgentCommand {
    let line = format!(
        "{python} {} {} {tag}; exec {} demo-agent",
        rig.work.join("probe.py").display(),
        bench.conf.display(),
        env!("CARGO_BIN_EXE_warden")
    );
    AgentCommand {
        name: "demo".into(),
        program: "/bin/sh".into(),
        args: vec!["-c".into(), line],
        env: vec![
            ("HOME".into(), rig.home.display().to_string()),
            ("WARDEN_DEMO_STATE".into(), rig.state.display().to_string()),
        ],
        cwd: rig.work.clone(),
    }
}

/// Run the probe as the agent, and in one of warden's terminals for it.
async fn probe(
    rig: &Rig,
    bench: &Bench,
    python: &str,
    mode: SandboxMode,
) -> [BTreeMap<String, String>; 2] {
    let agent_tag = format!("agent-{mode:?}");
    let terminal_tag = format!("terminal-{mode:?}");
    let scenario = rig.state.join("probe.toml");
    let line = format!(
        "{python} {} {} {terminal_tag}",
        rig.work.join("probe.py").display(),
        bench.conf.display()
    );
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {line:?} }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n",
        ),
    )
    .unwrap();
    let mut command = probing_agent(rig, bench, python, &agent_tag);
    command.args[1].push_str(&format!(" --scenario {}", scenario.display()));
    let options = ChatOptions {
        mode: Mode::Auto,
        sandbox: Some(profile(rig, mode)),
        ..ChatOptions::default()
    };
    let mut app = ready(App::with_options(command, options)).await;
    send(&mut app, "go");
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() && agent_text(s).contains("terminal exited")
    })
    .await;
    app.shutdown().await;
    [answers(rig, &agent_tag), answers(rig, &terminal_tag)]
}

fn refused(answers: &BTreeMap<String, String>, check: &str) -> bool {
    answers
        .get(check)
        .unwrap_or_else(|| panic!("no {check} in {answers:?}"))
        .starts_with("refused")
}

#[tokio::test]
async fn an_agent_and_its_terminals_find_every_door_shut_and_their_own_ptys_sockets_and_children_working()
 {
    if !landlock() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    let walls = warden::sandbox::kernel_walls();
    let root = unsafe { libc::geteuid() } == 0;
    let rig = rig();
    let bench = bench(&rig);
    let confined = probe(&rig, &bench, python, SandboxMode::WorkspaceWrite).await;
    let off = probe(&rig, &bench, python, SandboxMode::Off).await;
    for (who, answers) in ["agent", "terminal"].iter().zip(&confined) {
        let shut = |check: &str| assert!(refused(answers, check), "{who}: {check}: {answers:#?}");
        let open = |check: &str| assert!(!refused(answers, check), "{who}: {check}: {answers:#?}");
        // Warden's terminal is warden's alone.
        open("own-session");
        shut("dev-tty");
        if walls.seccomp {
            shut("tiocsti");
        } else {
            println!("skipped TIOCSTI: no seccomp filter on this kernel");
        }
        if walls.namespace.is_some() {
            shut("wardens-pts");
            shut("user-socket");
        } else {
            println!("skipped the pts and socket checks: no mount namespace here");
        }
        // Its own ptys, sockets and children work.
        open("own-pty");
        open("own-script");
        open("own-socket");
        open("own-child");
        if walls.scopes() {
            shut("abstract-socket");
            shut("signal-warden");
        } else {
            println!(
                "skipped the scope checks: Landlock ABI {} has none",
                walls.abi
            );
        }
        shut("leaked-fd");
        shut("mknod");
        shut("wardens-environ");
        open("no-capabilities");
    }
    // With the sandbox off, each door the sandbox shuts is open (the
    // session and the descriptors stay warden's: those hold even then).
    for (who, answers) in ["agent", "terminal"].iter().zip(&off) {
        let open = |check: &str| {
            assert!(
                !refused(answers, check),
                "off, {who}: {check}: {answers:#?}"
            )
        };
        open("wardens-pts");
        open("user-socket");
        open("abstract-socket");
        open("signal-warden");
        open("own-pty");
        if root {
            open("mknod");
            open("wardens-environ");
        }
        assert!(refused(answers, "leaked-fd"), "off, {who}: {answers:#?}");
        assert!(refused(answers, "dev-tty"), "off, {who}: {answers:#?}");
    }
}

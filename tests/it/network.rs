//! The network gate end to end (issue 35): a raw agent (a Python script
//! speaking ACP itself and doing its own IO) run by `warden exec` under the
//! real sandbox cannot reach a listener on 127.0.0.1 directly (TCP), send
//! it a UDP datagram, or resolve a name; its own localhost servers work;
//! its request through warden's proxy to a host nobody allowed is refused
//! (the listener receives nothing) and goes through with `--allow-host`.
//! A terminal warden runs for it asks the same way, and every refusal (the
//! closed network's too) is in `warden log` with kind network.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::sandbox::landlock;

/// An ACP agent in Python: at its prompt it tries each way out and says
/// what happened as one JSON line between `PROBE` markers.
const AGENT: &str = r#"
import json, os, socket, sys
conf = json.load(open(sys.argv[1]))

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def check(out, name, fn):
    try:
        out[name] = "through: " + str(fn())
    except Exception as e:
        out[name] = "refused: " + repr(e)

def tcp():
    s = socket.create_connection(("127.0.0.1", conf["tcp"]), timeout=3)
    s.sendall(b"direct")
    s.close()

def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"datagram", ("127.0.0.1", conf["udp"]))
    s.close()

def dns():
    return socket.getaddrinfo(conf["name"], 80)[0][4]

def own_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    c = socket.create_connection(srv.getsockname(), timeout=3)
    a, _ = srv.accept()
    c.sendall(b"own")
    got = a.recv(3)
    c.close(); a.close(); srv.close()
    if got != b"own":
        raise OSError(got)
    return "own"

def proxy():
    url = os.environ["HTTP_PROXY"]
    host, port = url.split("://")[1].rstrip("/").rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    target = "%s:%d" % (conf.get("host", "127.0.0.1"), conf["tcp"])
    s.sendall(("GET http://%s/via-proxy HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    reply = b""
    while b"\r\n" not in reply:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    status = reply.split(b"\r\n")[0].decode()
    if " 200 " not in status:
        raise OSError(status)
    return status

def loopback(port):
    s = socket.create_connection(("localhost", port), timeout=5)
    s.sendall(b"forwarded")
    got = s.recv(64)
    s.close()
    if not got.startswith(b"HTTP/1.1 200"):
        raise OSError(got)
    return "answered"

def probe():
    out = {"env": {k: os.environ.get(k) for k in ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY", "NODE_USE_ENV_PROXY"]}}
    check(out, "tcp", tcp)
    check(out, "udp", udp)
    check(out, "dns", dns)
    check(out, "own-server", own_server)
    check(out, "proxy", proxy)
    for port in conf.get("loopback", []):
        check(out, "loopback-%d" % port, lambda port=port: loopback(port))
    return out

for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "net-1"}})
    elif method == "session/prompt":
        text = "PROBE" + json.dumps(probe()) + "PROBE"
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "net-1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif mid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + method}})
"#;

fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// What the agent aims at: a TCP listener that keeps what it receives,
/// and a UDP socket.
struct Targets {
    /// The host the probe names to the proxy (`127.0.0.1` unless a test
    /// says otherwise).
    host: &'static str,
    tcp: u16,
    udp: UdpSocket,
    received: Arc<Mutex<Vec<u8>>>,
    /// Ports the probe connects to as `localhost` (the host's loopback
    /// services), each its own check `loopback-PORT`.
    loopback: Vec<u16>,
}

fn aim() -> Targets {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let tcp = listener.local_addr().expect("addr").port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let keep = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let keep = keep.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = [0u8; 4096];
                if let Ok(n) = stream.read(&mut buf) {
                    keep.lock().unwrap().extend_from_slice(&buf[..n]);
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                }
            });
        }
    });
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_nonblocking(true).expect("nonblocking");
    Targets {
        host: "127.0.0.1",
        tcp,
        udp,
        received,
        loopback: Vec::new(),
    }
}

impl Targets {
    fn datagrams(&self) -> usize {
        let mut buf = [0u8; 64];
        let mut n = 0;
        while self.udp.recv_from(&mut buf).is_ok() {
            n += 1;
        }
        n
    }
}

/// `warden exec` running the agent in `dir` with `settings` and `args`:
/// what its probe said, and stderr.
fn run(
    dir: &Path,
    python: &str,
    targets: &Targets,
    settings: &str,
    args: &[&str],
) -> (serde_json::Value, String) {
    let (probe, stderr, _) = run_logged(dir, python, targets, settings, args, &[]);
    (probe, stderr)
}

/// [`run`], and the decision log it left.
fn run_logged(
    dir: &Path,
    python: &str,
    targets: &Targets,
    settings: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (
    serde_json::Value,
    String,
    Vec<warden::decision_log::DecisionRecord>,
) {
    std::fs::write(dir.join("agent.py"), AGENT).expect("agent");
    let conf = dir.join("conf.json");
    std::fs::write(
        &conf,
        serde_json::json!({
            "host": targets.host,
            "tcp": targets.tcp,
            "udp": targets.udp.local_addr().expect("addr").port(),
            "name": "example.com",
            "loopback": targets.loopback,
        })
        .to_string(),
    )
    .expect("conf");
    let config = dir.join("config.toml");
    std::fs::write(&config, settings).expect("settings");
    let agent = dir.join("agent.py").display().to_string();
    let conf = conf.display().to_string();
    let mut all: Vec<&str> = vec!["-p", "probe", "--timeout", "60"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", python, &agent, &conf]);
    let (code, stdout, stderr, log) = exec_in_env(dir, &config, &all, env);
    let Some(json) = stdout.split("PROBE").nth(1) else {
        panic!("no probe ({code:?}): {stdout}\n{stderr}");
    };
    (
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}")),
        stderr,
        log,
    )
}

/// What `warden log` prints for the data directory `data` (`XDG_DATA_HOME`).
fn warden_log(data: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["--config", "/nonexistent/warden.toml", "log"])
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .output()
        .expect("warden log runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The rows of `warden log` output about a connection to `target` refused,
/// with kind network.
fn refused_rows(log: &str, target: &str) -> Vec<String> {
    log.lines()
        .filter(|row| {
            row.contains(target)
                && row.split_whitespace().any(|w| w == "denied")
                && row.split_whitespace().any(|w| w == "network")
        })
        .map(str::to_string)
        .collect()
}

fn said(probe: &serde_json::Value, check: &str) -> String {
    probe[check].as_str().unwrap_or_default().to_string()
}

fn resolves_here(name: &str) -> bool {
    std::net::ToSocketAddrs::to_socket_addrs(&(name, 80)).is_ok()
}

/// Whether the network can be walled here (else the reason is printed).
fn walled() -> bool {
    if !landlock() {
        return false;
    }
    if warden::sandbox::net_wall() == warden::sandbox::NetKind::Open {
        println!("skipped: no network namespace and no Landlock ABI 4 with seccomp here");
        return false;
    }
    true
}

/// A walled machine with Python: a scratch dir, the interpreter and the
/// listeners the probe aims at; `None` (the test skips) otherwise.
fn walled_python() -> Option<(tempfile::TempDir, &'static str, Targets)> {
    if !walled() {
        return None;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return None;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    Some((dir, python, aim()))
}

#[test]
fn a_raw_agent_reaches_nothing_directly_and_an_allowed_host_through_the_proxy() {
    let Some((dir, python, targets)) = walled_python() else {
        return;
    };
    // The host without a port: a loopback host with its port would be
    // forwarded into the agent's namespace (the next test).
    let (probe, stderr) = run(
        dir.path(),
        python,
        &targets,
        "",
        &["--allow-host", "127.0.0.1"],
    );
    assert!(
        said(&probe, "tcp").starts_with("refused"),
        "{probe:#}\n{stderr}"
    );
    assert!(said(&probe, "dns").starts_with("refused"), "{probe:#}");
    assert!(
        said(&probe, "own-server").starts_with("through"),
        "{probe:#}"
    );
    assert!(
        said(&probe, "proxy").starts_with("through"),
        "{probe:#}\n{stderr}"
    );
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert!(!received.contains("direct"), "{received}");
    assert!(
        received.starts_with("GET /via-proxy HTTP/1.1\r\n"),
        "{received}"
    );
    assert_eq!(targets.datagrams(), 0, "a datagram got out");
    // The agent was told where the proxy is.
    let env = &probe["env"];
    let url = env["HTTP_PROXY"].as_str().unwrap_or_default();
    assert!(url.starts_with("http://127.0.0.1:"), "{env}");
    assert_eq!(env["https_proxy"].as_str(), Some(url));
    assert_eq!(env["ALL_PROXY"].as_str(), Some(url));
    // Loopback is the agent's own in its namespace: not proxied there.
    let bypass = match warden::sandbox::net_wall() {
        warden::sandbox::NetKind::Namespace => "localhost,127.0.0.1,::1",
        _ => "",
    };
    assert_eq!(env["NO_PROXY"].as_str(), Some(bypass));
    assert_eq!(env["NODE_USE_ENV_PROXY"].as_str(), Some("1"));

    // With the network open, each check can fail: the same agent gets out.
    let dir = tempfile::tempdir().expect("tempdir");
    let targets = aim();
    let (probe, _) = run(
        dir.path(),
        python,
        &targets,
        "[sandbox]\nnetwork = \"open\"\n",
        &[],
    );
    assert!(said(&probe, "tcp").starts_with("through"), "{probe:#}");
    assert!(said(&probe, "udp").starts_with("through"), "{probe:#}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(targets.datagrams(), 1, "{probe:#}");
    if resolves_here("example.com") {
        assert!(said(&probe, "dns").starts_with("through"), "{probe:#}");
    } else {
        println!("skipped the DNS control: example.com does not resolve here either");
    }
}

/// In a network namespace the agent's loopback is its own: a service on
/// the host's loopback the user allowed with its port (a model server such
/// as ollama on `localhost:11434`) is listened on there and forwarded, so
/// the agent reaches it as `localhost` or `127.0.0.1`, directly. Another
/// port of the host's loopback, not allowed, stays out of reach.
#[test]
fn an_allowed_loopback_service_is_reached_on_the_agents_own_loopback() {
    let Some((dir, python, mut targets)) = walled_python() else {
        return;
    };
    if warden::sandbox::net_wall() != warden::sandbox::NetKind::Namespace {
        // Under the Landlock wall loopback goes through the proxy (the
        // first test's `proxy` check).
        println!("skipped: no network namespace here");
        return;
    }
    let other = aim();
    targets.loopback = vec![targets.tcp, other.tcp];
    let allow = format!("localhost:{}", targets.tcp);
    let (probe, stderr) = run(dir.path(), python, &targets, "", &["--allow-host", &allow]);
    let service = format!("loopback-{}", targets.tcp);
    assert_eq!(
        said(&probe, &service),
        "through: answered",
        "{probe:#}\n{stderr}"
    );
    // By address too: the same service, 127.0.0.1.
    assert!(said(&probe, "tcp").starts_with("through"), "{probe:#}");
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert!(received.contains("forwarded"), "{received}");
    assert!(received.contains("direct"), "{received}");
    let not_allowed = format!("loopback-{}", other.tcp);
    assert!(
        said(&probe, &not_allowed).starts_with("refused"),
        "{probe:#}"
    );
    assert!(other.received.lock().unwrap().is_empty());
    assert_eq!(targets.datagrams(), 0, "a datagram got out");
}

/// The user's own proxy (`http_proxy` in warden's environment, as behind
/// a company proxy) carries an allowed connection: the agent's request to
/// an allowed host reaches the user's proxy, in absolute form with its
/// credentials, and never the host directly.
#[test]
fn an_allowed_connection_goes_out_through_the_users_own_proxy() {
    let Some((dir, python, mut targets)) = walled_python() else {
        return;
    };
    targets.host = "target.test";
    // The user's proxy: keeps what it receives and answers 200.
    let upstream = aim();
    let users_proxy = format!("http://bob:s3cret@127.0.0.1:{}", upstream.tcp);
    let allow = format!("target.test:{}", targets.tcp);
    let (probe, stderr, _) = run_logged(
        dir.path(),
        python,
        &targets,
        "",
        &["--allow-host", &allow],
        &[("http_proxy", &users_proxy)],
    );
    assert!(
        said(&probe, "proxy").starts_with("through"),
        "{probe:#}\n{stderr}"
    );
    let got = String::from_utf8_lossy(&upstream.received.lock().unwrap()).into_owned();
    assert!(
        got.starts_with(&format!(
            "GET http://target.test:{}/via-proxy HTTP/1.1\r\n",
            targets.tcp
        )),
        "{got}"
    );
    // bob:s3cret, as Basic.
    assert!(
        got.contains("Proxy-Authorization: Basic Ym9iOnMzY3JldA=="),
        "{got}"
    );
    assert!(targets.received.lock().unwrap().is_empty(), "went direct");
}

#[test]
fn a_host_nobody_allowed_is_refused_and_the_listener_receives_nothing() {
    if !walled() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    for settings in ["", "[sandbox]\nnetwork = \"closed\"\n"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let targets = aim();
        let (probe, stderr) = run(
            dir.path(),
            python,
            &targets,
            settings,
            &["--on-ask", "deny"],
        );
        let proxy = said(&probe, "proxy");
        assert!(proxy.contains("403"), "{settings}: {probe:#}\n{stderr}");
        assert!(said(&probe, "tcp").starts_with("refused"), "{probe:#}");
        assert!(targets.received.lock().unwrap().is_empty());
    }
}

#[test]
fn a_host_nobody_allowed_goes_through_with_on_ask_allow() {
    let Some((dir, python, targets)) = walled_python() else {
        return;
    };
    let (probe, stderr) = run(dir.path(), python, &targets, "", &["--on-ask", "allow"]);
    assert!(
        said(&probe, "proxy").starts_with("through"),
        "{probe:#}\n{stderr}"
    );
    assert!(said(&probe, "tcp").starts_with("refused"), "{probe:#}");
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert!(received.starts_with("GET /via-proxy "), "{received}");
}

/// With `network = "closed"` the proxy refuses a host not allowed without
/// asking anyone, and the refusal is still in the decision log with kind
/// network, which `warden log` shows.
#[test]
fn a_refusal_of_the_closed_network_is_in_warden_log() {
    let Some((dir, python, targets)) = walled_python() else {
        return;
    };
    let (probe, stderr, log) = run_logged(
        dir.path(),
        python,
        &targets,
        "[sandbox]\nnetwork = \"closed\"\n",
        &[],
        &[],
    );
    assert!(said(&probe, "proxy").contains("403"), "{probe:#}\n{stderr}");
    assert!(targets.received.lock().unwrap().is_empty());
    let target = format!("127.0.0.1:{}", targets.tcp);
    let refused: Vec<_> = log
        .iter()
        .filter(|r| r.kind == "network" && r.title.ends_with(&target))
        .collect();
    assert_eq!(refused.len(), 1, "one record per connection: {log:#?}");
    assert_eq!(refused[0].decision.as_str(), "denied");
    assert!(refused[0].reason.contains("closed"), "{:?}", refused[0]);
    let shown = warden_log(&dir.path().join("data"));
    assert_eq!(refused_rows(&shown, &target).len(), 1, "{shown}");
}

/// `[sandbox] allow_hosts` in the settings is honoured like `--allow-host`.
#[test]
fn allow_hosts_in_the_settings_let_a_host_through() {
    let Some((dir, python, targets)) = walled_python() else {
        return;
    };
    let settings = format!("[sandbox]\nallow_hosts = [\"127.0.0.1:{}\"]\n", targets.tcp);
    let (probe, stderr) = run(dir.path(), python, &targets, &settings, &[]);
    assert!(
        said(&probe, "proxy").starts_with("through"),
        "{probe:#}\n{stderr}"
    );
}

/// What the child tries under the Landlock wall, one word per line.
const LANDLOCK_PROBE: &str = r#"
import socket, sys
proxy, other = int(sys.argv[1]), int(sys.argv[2])
def check(name, fn):
    try:
        fn()
        print(name, "through")
    except Exception as e:
        print(name, "refused", repr(e))
def tcp(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.close()
check("proxy-port", lambda: tcp(proxy))
check("other-port", lambda: tcp(other))
check("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
check("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
check("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
check("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
def own():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
check("bind", own)
"#;

/// Where there is no network namespace: Landlock allows TCP connect to
/// the proxy's port only, and seccomp refuses UDP, raw and packet sockets
/// (tried here directly, whatever this kernel's choice).
#[test]
fn the_landlock_wall_leaves_only_the_proxys_port() {
    if !landlock() {
        return;
    }
    let walls = warden::sandbox::kernel_walls();
    if walls.abi < 4 || !walls.seccomp {
        println!(
            "skipped: Landlock ABI {} (4 has network rules), seccomp {}",
            walls.abi, walls.seccomp
        );
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    let rig = crate::sandbox::rig();
    let profile = crate::sandbox::profile(&rig, warden::sandbox::SandboxMode::WorkspaceWrite);
    let proxy = TcpListener::bind("127.0.0.1:0").expect("bind");
    let other = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = |l: &TcpListener| l.local_addr().expect("addr").port().to_string();
    let script = rig.work.join("probe.py");
    std::fs::write(&script, LANDLOCK_PROBE).expect("probe");
    let run = |wall: Option<warden::sandbox::NetWall>| {
        let confinement =
            warden::sandbox::Confinement::prepare_net(&profile, wall).expect("confinement");
        let mut command = std::process::Command::new(python);
        command.arg(&script).arg(port(&proxy)).arg(port(&other));
        confinement.apply_std(&mut command);
        let out = command.output().expect("runs");
        (
            confinement.net_walled(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let wall = warden::sandbox::NetWall::Landlock {
        port: proxy.local_addr().expect("addr").port(),
    };
    let (walled, said) = run(Some(wall));
    assert!(walled);
    let line = |name: &str| {
        said.lines()
            .find(|l| l.split(' ').next() == Some(name))
            .unwrap_or_else(|| panic!("no {name}: {said}"))
            .to_string()
    };
    for through in ["proxy-port", "unix", "bind"] {
        assert!(line(through).contains("through"), "{said}");
    }
    for refused in ["other-port", "udp", "udp6", "raw"] {
        assert!(line(refused).contains("refused"), "{said}");
    }
    // Without the wall, the same child gets out.
    let (walled, said) = run(None);
    assert!(!walled);
    assert!(said.contains("other-port through"), "{said}");
    assert!(said.contains("udp through"), "{said}");
}

/// warden's own terminals (`terminal/create`) are walled as the agent is:
/// a command in one reaches no listener directly; with the network left
/// open it does, which shows the check can fail.
#[tokio::test]
async fn a_terminal_warden_runs_reaches_nothing_directly() {
    use crate::common::{agent_text, pump_until, send};
    use crate::sandbox::rig;
    if !walled() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    for (network, reached) in [
        (warden::net::NetworkMode::Gated, false),
        (warden::net::NetworkMode::Open, true),
    ] {
        let targets = aim();
        let rig = rig();
        let line = format!(
            "{python} -c 'import socket; s = socket.create_connection((\"127.0.0.1\", {}), 3); s.sendall(b\"direct from a terminal\")'",
            targets.tcp
        );
        let scenario = rig.state.join("net-terminal.toml");
        std::fs::write(
            &scenario,
            format!(
                "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {line:?} }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n"
            ),
        )
        .expect("scenario");
        let mut app = auto_with_network(&rig, &scenario, network).await;
        send(&mut app, "go");
        pump_until(&mut app, "end of turn", |s| {
            !s.is_busy() && agent_text(s).contains("terminal exited")
        })
        .await;
        std::thread::sleep(Duration::from_millis(300));
        let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
        assert_eq!(
            received.contains("direct from a terminal"),
            reached,
            "{network:?}: {received:?}\n{}",
            agent_text(app.state())
        );
        app.shutdown().await;
    }
}

/// A ready chat in Auto on the demo agent playing `scenario`, its network
/// `network`.
async fn auto_with_network(
    rig: &crate::sandbox::Rig,
    scenario: &Path,
    network: warden::net::NetworkMode,
) -> warden::app::App {
    let mut command = crate::sandbox::command(rig);
    command
        .args
        .extend(["--scenario".into(), scenario.display().to_string()]);
    let mut profile = crate::sandbox::profile(rig, warden::sandbox::SandboxMode::WorkspaceWrite);
    profile.network = network;
    let options = warden::app::ChatOptions {
        mode: warden::policy::Mode::Auto,
        sandbox: Some(profile),
        ..warden::app::ChatOptions::default()
    };
    crate::common::ready(warden::app::App::with_options(command, options)).await
}

/// What a terminal runs: a connection through its proxy (`HTTP_PROXY`) to
/// `127.0.0.1:PORT`, and the proxy's status line printed.
const TERMINAL_CONNECT: &str = r#"
import os, socket, sys
port = int(sys.argv[1])
host, proxy = os.environ["HTTP_PROXY"].split("://")[1].rstrip("/").rsplit(":", 1)
s = socket.create_connection((host, int(proxy)), timeout=10)
s.sendall(("GET http://127.0.0.1:%d/from-a-terminal HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (port, port)).encode())
reply = b""
while b"\r\n" not in reply:
    chunk = s.recv(4096)
    if not chunk:
        break
    reply += chunk
print("STATUS", reply.split(b"\r\n")[0].decode())
"#;

/// `warden exec --mode auto` of the demo agent running one terminal that
/// connects through the terminal's proxy to `targets`: what exec printed
/// and the decision log, as `warden log` shows it.
fn exec_terminal(python: &str, targets: &Targets, args: &[&str]) -> (String, String) {
    exec_terminal_running(TERMINAL_CONNECT, python, targets, args)
}

/// [`exec_terminal`] with the terminal running `code` (given the port).
fn exec_terminal_running(
    code: &str,
    python: &str,
    targets: &Targets,
    args: &[&str],
) -> (String, String) {
    let rig = crate::sandbox::rig();
    let script = rig.work.join("connect.py");
    std::fs::write(&script, code).expect("script");
    let scenario = rig.work.join(".net-terminal.toml");
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {python:?}, args = [{:?}, \"{}\"] }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n",
            script.display().to_string(),
            targets.tcp
        ),
    )
    .expect("scenario");
    let out = crate::sandbox::exec_scenario(&rig, &scenario, args);
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (said, warden_log(&rig.home.join("data")))
}

/// A terminal warden runs for the agent reaches an allowed service on the
/// host's loopback as the agent does: directly, as `localhost`.
#[test]
fn a_terminal_reaches_an_allowed_loopback_service_too() {
    let Some((_dir, python, targets)) = walled_python() else {
        return;
    };
    if warden::sandbox::net_wall() != warden::sandbox::NetKind::Namespace {
        println!("skipped: no network namespace here");
        return;
    }
    const DIRECT: &str = r#"
import socket, sys
try:
    s = socket.create_connection(("localhost", int(sys.argv[1])), timeout=5)
    s.sendall(b"from-a-terminal")
    print("LOOPBACK", s.recv(64).split(b"\r\n")[0].decode())
except Exception as e:
    print("LOOPBACK refused", repr(e))
"#;
    let allow = format!("localhost:{}", targets.tcp);
    let (said, _) = exec_terminal_running(DIRECT, python, &targets, &["--allow-host", &allow]);
    assert!(said.contains("LOOPBACK HTTP/1.1 200"), "{said}");
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert_eq!(received, "from-a-terminal");
    // Not allowed: out of reach.
    let (said, _) = exec_terminal_running(DIRECT, python, &targets, &[]);
    assert!(said.contains("LOOPBACK refused"), "{said}");
}

/// A terminal warden runs for the agent asks about a host nobody allowed
/// as the agent's own connections do: `--on-ask deny` refuses it (the
/// listener receives nothing, `warden log` shows the refusal with kind
/// network) and `--on-ask allow` lets it through.
#[test]
fn a_terminals_connection_to_a_new_host_is_asked_about() {
    if !walled() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    let targets = aim();
    let target = format!("127.0.0.1:{}", targets.tcp);
    let (said, log) = exec_terminal(python, &targets, &["--on-ask", "deny"]);
    assert!(said.contains("STATUS HTTP/1.1 403"), "{said}");
    assert!(targets.received.lock().unwrap().is_empty());
    assert_eq!(refused_rows(&log, &target).len(), 1, "{log}\n{said}");

    let (said, log) = exec_terminal(python, &targets, &["--on-ask", "allow"]);
    assert!(said.contains("STATUS HTTP/1.1 200"), "{said}");
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert!(received.starts_with("GET /from-a-terminal "), "{received}");
    let allowed = log
        .lines()
        .filter(|row| row.contains(&target) && row.split_whitespace().any(|w| w == "network"))
        .filter(|row| row.split_whitespace().any(|w| w == "allowed"))
        .count();
    assert_eq!(allowed, 1, "{log}");
}

/// In the TUI, a terminal's connection to a new host is a network card in
/// the chat that ran it; while the card waits, the terminal's output goes
/// on; `y` lets the connection through.
#[tokio::test]
async fn a_terminals_connection_waits_for_its_card_and_its_output_does_not() {
    use crate::common::{agent_text, key, pump_until, send};
    use warden::state::Action;
    if !walled() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: no python3");
        return;
    };
    let targets = aim();
    let rig = crate::sandbox::rig();
    let script = rig.work.join("connect.py");
    std::fs::write(
        &script,
        format!("print('before the connection', flush=True)\n{TERMINAL_CONNECT}"),
    )
    .expect("script");
    let scenario = rig.state.join("net-card.toml");
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {python:?}, args = [{:?}, \"{}\"] }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n",
            script.display().to_string(),
            targets.tcp
        ),
    )
    .expect("scenario");
    let mut app = auto_with_network(&rig, &scenario, warden::net::NetworkMode::Gated).await;
    send(&mut app, "go");
    let target = format!("127.0.0.1:{}", targets.tcp);
    pump_until(&mut app, "the card and the output before it", |s| {
        s.gate
            .approvals
            .iter()
            .any(|a| a.view.title.ends_with(&target))
            && s.session
                .terminals
                .values()
                .any(|t| t.output.contains("before the connection"))
    })
    .await;
    assert!(targets.received.lock().unwrap().is_empty(), "it waits");
    key(&mut app, Action::ch('y'));
    pump_until(&mut app, "end of turn", |s| {
        !s.is_busy() && agent_text(s).contains("terminal exited")
    })
    .await;
    assert!(
        agent_text(app.state()).contains("STATUS HTTP/1.1 200"),
        "{}",
        agent_text(app.state())
    );
    let received = String::from_utf8_lossy(&targets.received.lock().unwrap()).into_owned();
    assert!(received.starts_with("GET /from-a-terminal "), "{received}");
    app.shutdown().await;
}

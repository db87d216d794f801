//! warden in a pseudo-terminal of 120x40, the demo agent streaming a paced
//! markdown answer; counts the bytes warden writes and keeps the screen (a
//! vt100 emulator). Shared by `benches/wire.rs` and the `wire` tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// The terminal's size.
pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;
/// Said after the last delta.
pub const END: &str = "END OF THE STREAMED ANSWER";

/// A long markdown answer (deterministic): headings, paragraphs with bold,
/// italics and code spans, lists, and now and then a fenced code block.
fn markdown() -> String {
    const WORDS: &[&str] = &[
        "the",
        "agent",
        "reads",
        "a",
        "file",
        "and",
        "then",
        "writes",
        "tests",
        "for",
        "every",
        "module",
        "it",
        "changed",
        "while",
        "warden",
        "keeps",
        "asking",
        "before",
        "commands",
        "run",
        "in",
        "your",
        "project",
        "directory",
        "parser",
        "returns",
        "an",
        "error",
        "when",
        "input",
        "ends",
        "early",
        "so",
        "we",
        "handle",
        "that",
        "case",
        "explicitly",
        "here",
        "configuration",
        "values",
        "are",
        "merged",
        "from",
        "defaults",
        "user",
        "settings",
        "terminal",
        "output",
        "streams",
        "through",
        "bounded",
        "buffer",
        "which",
        "drops",
        "oldest",
        "lines",
        "first",
        "permission",
        "request",
        "shows",
        "card",
        "with",
        "choices",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut out = String::new();
    let mut section = 0;
    while out.len() < 96 * 1024 {
        section += 1;
        out.push_str(&format!(
            "## Step {section}: {} the {}\n\n",
            WORDS[next(WORDS.len())],
            WORDS[next(WORDS.len())]
        ));
        for _ in 0..1 + next(3) {
            let words = 30 + next(60);
            for w in 0..words {
                let word = WORDS[next(WORDS.len())];
                match next(20) {
                    0 => out.push_str(&format!("**{word}**")),
                    1 => out.push_str(&format!("*{word}*")),
                    2 => out.push_str(&format!("`{word}_{}`", next(100))),
                    _ => out.push_str(word),
                }
                out.push_str(if w + 1 == words { ".\n\n" } else { " " });
            }
        }
        if next(2) == 0 {
            for i in 0..2 + next(4) {
                let words: Vec<&str> = (0..4 + next(8)).map(|_| WORDS[next(WORDS.len())]).collect();
                out.push_str(&format!("{}. {}\n", i + 1, words.join(" ")));
            }
            out.push('\n');
        }
        if next(3) == 0 {
            out.push_str("```rust\n");
            for _ in 0..3 + next(6) {
                let a = WORDS[next(WORDS.len())];
                let b = WORDS[next(WORDS.len())];
                out.push_str(&format!(
                    "    let {a}_{} = {b}(&{a}, {})?;\n",
                    next(10),
                    next(1000)
                ));
            }
            out.push_str("```\n\n");
        }
    }
    out
}

/// A pseudo-terminal pair of `cols` x `rows`.
fn open_pty(cols: u16, rows: u16) -> (OwnedFd, OwnedFd) {
    let mut master = -1;
    let mut slave = -1;
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors it opened into the pointers given.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Close-on-exec, so that no other child (tests run in parallel) keeps
    // the master open: warden must see the terminal go when the test ends.
    for fd in [master, slave] {
        // SAFETY: fcntl on descriptors just opened here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors were just opened and are owned here only.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// warden on the slave side, as its controlling terminal, with the demo
/// agent playing `scenario`; everything it keeps goes under `home`.
fn spawn_warden(slave: &OwnedFd, home: &Path, scenario: &Path, scroll_region: bool) -> Child {
    // `WARDEN_BENCH_EXE`: another build of warden (an older commit's) in
    // the same harness.
    let exe = std::env::var("WARDEN_BENCH_EXE")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_warden").to_owned());
    let exe = exe.as_str();
    let mut cmd = Command::new(exe);
    cmd.args(["--config"])
        .arg(home.join("config.toml"))
        .arg("--cwd")
        .arg(home)
        .args(["--", exe, "demo-agent", "--scenario"])
        .arg(scenario)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("WARDEN_DEMO_STATE", home.join("demo-state"))
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    if !scroll_region {
        cmd.env("WARDEN_NO_SCROLL_REGION", "1");
    }
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().expect("warden starts")
}

/// What the master side reads, in chunks, from a thread.
fn reader(master: &OwnedFd) -> Receiver<Vec<u8>> {
    let mut file = File::from(master.try_clone().unwrap());
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match file.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// The terminal's side: a screen, the byte count, and answers to queries.
struct Term {
    rx: Receiver<Vec<u8>>,
    /// Everything read, when `WARDEN_BENCH_DUMP` names a directory.
    dump: Option<Vec<u8>>,
    input: File,
    screen: vt100::Parser,
    bytes: u64,
}

impl Term {
    /// Take what arrives for `wait` at most; false when the pty closed.
    fn pump(&mut self, wait: Duration) -> bool {
        match self.rx.recv_timeout(wait) {
            Ok(chunk) => {
                self.bytes += chunk.len() as u64;
                if let Some(dump) = &mut self.dump {
                    dump.extend_from_slice(&chunk);
                }
                // crossterm asks for the primary device attributes (after
                // the keyboard-enhancement query) and waits for them.
                if chunk.windows(3).any(|w| w == b"\x1b[c") {
                    self.input.write_all(b"\x1b[?62c").unwrap();
                }
                self.screen.process(&chunk);
                true
            }
            Err(RecvTimeoutError::Timeout) => true,
            Err(RecvTimeoutError::Disconnected) => false,
        }
    }

    fn contents(&self) -> String {
        self.screen.screen().contents()
    }

    /// Pump until `done` holds for the screen, or panic after `limit`.
    fn until(&mut self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) {
        self.until_by(what, limit, Duration::from_millis(20), done);
    }

    /// [`Term::until`], looking at the screen every `tick` at least.
    fn until_by(
        &mut self,
        what: &str,
        limit: Duration,
        tick: Duration,
        done: impl Fn(&str) -> bool,
    ) {
        let end = Instant::now() + limit;
        while !done(&self.contents()) {
            assert!(
                Instant::now() < end && self.pump(tick),
                "timed out waiting for {what}; screen:\n{}",
                self.contents()
            );
        }
    }

    /// Pump until nothing arrived for `quiet`.
    fn settle(&mut self, quiet: Duration) {
        let mut last = (self.bytes, Instant::now());
        while last.1.elapsed() < quiet {
            if !self.pump(Duration::from_millis(10)) {
                return;
            }
            if self.bytes != last.0 {
                last = (self.bytes, Instant::now());
            }
        }
    }
}

/// One streamed answer in the pty.
pub struct Run {
    /// Bytes warden wrote from the prompt's Enter to the end of the answer.
    pub bytes: u64,
    /// How long that took.
    pub elapsed: Duration,
    /// The screen at the end, as text.
    pub screen: String,
    /// CPU seconds warden (user and system, all its threads; not the
    /// agent) spent over the same span.
    pub cpu: f64,
}

/// How a paced run is set up besides the stream.
#[derive(Clone, Copy)]
pub struct Setup {
    /// Columns and rows of the pty.
    pub size: (u16, u16),
    /// Scroll the transcript with scroll regions (else redraw moved rows).
    pub scroll_region: bool,
    /// Tell warden the terminal lost focus before the prompt is sent.
    pub unfocused: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            size: (COLS, ROWS),
            scroll_region: true,
            unfocused: false,
        }
    }
}

/// User plus system CPU seconds of process `pid` so far, from
/// `/proc/<pid>/stat` (fields 14 and 15, in clock ticks).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces; fields after it do not.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> f64 {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // Field 3 (state) is rest[0], so field 14 is rest[11].
    (ticks(11) + ticks(12)) / hz
}

/// Stream `deltas` chunks of 64 bytes at `rate` a second through warden in
/// a pty, with scroll regions or without.
pub fn run(deltas: u64, rate: u64, scroll_region: bool) -> Run {
    run_with(
        deltas,
        rate,
        Setup {
            scroll_region,
            ..Setup::default()
        },
    )
}

/// [`run`] in a pty of another size, or with the terminal unfocused.
pub fn run_with(deltas: u64, rate: u64, setup: Setup) -> Run {
    let Setup {
        size,
        scroll_region,
        unfocused,
    } = setup;
    let home = tempfile::tempdir().expect("tempdir");
    let scenario = home.path().join("paced.json");
    let steps = serde_json::json!([
        { "type": "flood", "count": deltas, "per_second": rate, "text": markdown() },
        { "type": "text", "text": format!("\n\n{END}\n") },
    ]);
    let turns = serde_json::json!({ "turns": [{ "match": "stream", "steps": steps }] });
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let (child, mut term, master) = started(home.path(), &scenario, scroll_region, size);
    term.dump = std::env::var_os("WARDEN_BENCH_DUMP").map(|_| Vec::new());
    // The session is open once the footer no longer says it starts.
    term.until("the session", Duration::from_secs(30), |s| {
        s.contains("⏵") && !s.contains("starting agent")
    });
    term.settle(Duration::from_millis(300));
    term.input.write_all(b"stream").unwrap();
    if unfocused {
        // Focus out, as a terminal reports it (warden asked for focus events).
        term.input.write_all(b"\x1b[O").unwrap();
    }
    term.settle(Duration::from_millis(200));

    let start = (term.bytes, Instant::now(), cpu_seconds(child.id()));
    term.input.write_all(b"\r").unwrap();
    let limit = Duration::from_secs(30 + deltas / rate.max(1));
    term.until("the end of the answer", limit, |s| s.contains(END));
    term.settle(Duration::from_millis(500));
    let cpu = cpu_seconds(child.id()) - start.2;
    if let (Some(dir), Some(dump)) = (std::env::var_os("WARDEN_BENCH_DUMP"), &term.dump) {
        let name = if scroll_region { "scrolled" } else { "redrawn" };
        let dir = Path::new(&dir);
        std::fs::write(dir.join(format!("{name}.bytes")), dump).unwrap();
        std::fs::write(dir.join(format!("{name}.screen")), term.contents()).unwrap();
    }
    let result = Run {
        bytes: term.bytes - start.0,
        elapsed: start.1.elapsed(),
        screen: term.contents(),
        cpu,
    };

    finish(child, term, master);
    result
}

/// How fast warden starts in a pty with the demo agent.
pub struct Startup {
    /// From spawning warden to its first frame on screen.
    pub first_frame: Duration,
    /// To the session being open (the footer names the agent's mode).
    pub ready: Duration,
    /// To the first prompt, typed as soon as the session was open, showing
    /// in the transcript (accepted and sent).
    pub prompt_shown: Duration,
}

/// A scenario file in `home` that answers "hi" and streams on "stream".
fn latency_scenario(home: &Path, deltas: u64, rate: u64) -> std::path::PathBuf {
    let scenario = home.join("latency.json");
    let turns = serde_json::json!({ "turns": [
        { "match": "hi", "steps": [{ "type": "text", "text": "hello back" }] },
        { "match": "stream", "steps": [
            { "type": "flood", "count": deltas, "per_second": rate, "text": markdown() },
            { "type": "text", "text": format!("\n\n{END}\n") },
        ] },
    ] });
    std::fs::write(&scenario, turns.to_string()).unwrap();
    scenario
}

/// A warden in a pty playing `scenario`, and its terminal.
fn started(
    home: &Path,
    scenario: &Path,
    scroll_region: bool,
    (cols, rows): (u16, u16),
) -> (Child, Term, OwnedFd) {
    let (master, slave) = open_pty(cols, rows);
    let child = spawn_warden(&slave, home, scenario, scroll_region);
    drop(slave);
    let term = Term {
        rx: reader(&master),
        input: File::from(master.try_clone().unwrap()),
        screen: vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0),
        bytes: 0,
        dump: None,
    };
    (child, term, master)
}

/// Quit warden (Ctrl-D), reap it, and close the terminal.
fn finish(mut child: Child, mut term: Term, master: OwnedFd) {
    term.input.write_all(b"\x04").unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        term.pump(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(master);
}

/// Start warden and time its first frame, the open session and the first
/// prompt on screen.
pub fn startup() -> Startup {
    let home = tempfile::tempdir().expect("tempdir");
    let scenario = latency_scenario(home.path(), 1, 1);
    let start = Instant::now();
    let (child, mut term, master) = started(home.path(), &scenario, true, (COLS, ROWS));
    let tick = Duration::from_millis(1);
    term.until_by("the first frame", Duration::from_secs(30), tick, |s| {
        s.contains('╭')
    });
    let first_frame = start.elapsed();
    term.until_by("the session", Duration::from_secs(30), tick, |s| {
        s.contains("⏵") && !s.contains("starting agent")
    });
    let ready = start.elapsed();
    term.input.write_all(b"hi\r").unwrap();
    term.until_by("the prompt", Duration::from_secs(30), tick, |s| {
        s.contains("› hi")
    });
    let prompt_shown = start.elapsed();
    finish(child, term, master);
    Startup {
        first_frame,
        ready,
        prompt_shown,
    }
}

/// Type `keys` one by one while an answer streams `rate` deltas a second;
/// for each, the time from the key press to the key on screen.
pub fn keystrokes(keys: &str, rate: u64) -> Vec<Duration> {
    let home = tempfile::tempdir().expect("tempdir");
    let scenario = latency_scenario(home.path(), rate * 30, rate);
    let (child, mut term, master) = started(home.path(), &scenario, true, (COLS, ROWS));
    term.until("the session", Duration::from_secs(30), |s| {
        s.contains("⏵") && !s.contains("starting agent")
    });
    term.input.write_all(b"stream\r").unwrap();
    // Let the stream run for a second first.
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        term.pump(Duration::from_millis(5));
    }
    let mut typed = String::new();
    let mut out = Vec::new();
    for c in keys.chars() {
        typed.push(c);
        let mut buf = [0u8; 4];
        let pressed = Instant::now();
        term.input
            .write_all(c.encode_utf8(&mut buf).as_bytes())
            .unwrap();
        let shown = format!("│ {typed}");
        term.until_by(
            "the key",
            Duration::from_secs(10),
            Duration::from_millis(1),
            |s| s.contains(&shown),
        );
        out.push(pressed.elapsed());
        // Keys come at a typist's pace, not all at once.
        let gap = Instant::now() + Duration::from_millis(60);
        while Instant::now() < gap {
            term.pump(Duration::from_millis(5));
        }
    }
    finish(child, term, master);
    out
}

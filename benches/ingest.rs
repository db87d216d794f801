//! Streaming and rendering cost: `cargo bench --bench ingest`.
//!
//! Prints CPU time per streamed 64-byte chunk (state only; state plus a frame
//! per chunk; the whole client over real pipes from `warden demo-agent
//! flood N` with coalesced frames), frame cost for small and huge
//! transcripts, and resident memory. Figures, not assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use warden::acp::AgentCommand;
use warden::app::{App, FRAME};
use warden::model::{SessionUpdate, ToolCall, ToolContent, ToolKind};
use warden::state::{Action, ChatState, Connection, Msg};
use warden::ui::{self, View};

const CHUNK: &str = "streamed words of an answer, sixty-four bytes long, and more!\n";

fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn rss_mib() -> f64 {
    status_mib("VmRSS:")
}

/// The peak resident size so far.
fn peak_rss_mib() -> f64 {
    status_mib("VmHWM:")
}

fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn ready_state() -> ChatState {
    let mut state = ChatState::new("bench", "~/src/project");
    state.update(Msg::SessionStarted(warden::model::SessionInfo {
        session_id: "s".into(),
        modes: None,
        origin: Default::default(),
    }));
    state.update(Msg::Action(Action::Paste("go".into())));
    state.update(Msg::Action(Action::Submit));
    state
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).expect("test backend")
}

fn per_chunk(label: &str, chunks: usize, elapsed: Duration) {
    println!(
        "{label:<58} {:>9.4} ms/chunk  ({chunks} chunks, {:.1} ms CPU)",
        elapsed.as_secs_f64() * 1000.0 / chunks as f64,
        elapsed.as_secs_f64() * 1000.0
    );
}

fn bench_state_only(chunks: usize) {
    let mut state = ready_state();
    let start = cpu_time();
    for _ in 0..chunks {
        state.update(Msg::Update(SessionUpdate::AgentChunk(CHUNK.into())));
    }
    per_chunk("state only", chunks, cpu_time() - start);
}

fn bench_frame_per_chunk(chunks: usize) {
    let mut state = ready_state();
    let mut term = terminal();
    let mut view = View::new();
    let start = cpu_time();
    for _ in 0..chunks {
        state.update(Msg::Update(SessionUpdate::AgentChunk(CHUNK.into())));
        term.draw(|f| ui::draw(f, &state, &mut view)).expect("draw");
    }
    per_chunk(
        "state + one 120x40 frame per chunk (no coalescing)",
        chunks,
        cpu_time() - start,
    );
}

/// The TUI's share of a flood without the pipes (whose CPU varies with
/// how the two processes are scheduled): the flood's own chunks into the
/// state, a frame every `per_frame` of them, as the pump coalesces a fast
/// stream.
fn bench_coalesced(chunks: u64, per_frame: u64) {
    let text: Vec<String> = (0..chunks)
        .map(|i| warden::demo_agent::flood_chunk(i, chunks))
        .collect();
    let mut state = ready_state();
    let mut term = terminal();
    let mut view = View::new();
    let start = cpu_time();
    for (i, chunk) in (1..).zip(text) {
        state.update(Msg::Update(SessionUpdate::AgentChunk(chunk)));
        if i % per_frame == 0 {
            term.draw(|f| ui::draw(f, &state, &mut view)).expect("draw");
        }
    }
    term.draw(|f| ui::draw(f, &state, &mut view)).expect("draw");
    per_chunk(
        &format!("state + a frame every {per_frame} chunks (no pipes)"),
        chunks as usize,
        cpu_time() - start,
    );
}

fn big_state(entries: usize) -> ChatState {
    let mut state = ready_state();
    for i in 0..entries {
        match i % 4 {
            0 => state.update(Msg::Update(SessionUpdate::AgentChunk(format!(
                "Answer {i}: some **markdown** with `code` and a [link](https://example.com).\n\n- item one\n- item two\n"
            )))),
            1 => {
                let mut call = ToolCall::placeholder(format!("t{i}"));
                call.title = format!("Run cargo test {i}");
                call.kind = ToolKind::Execute;
                call.content = vec![ToolContent::Text {
                    text: "running 3 tests\ntest ok\ntest ok\n".into(),
                }];
                state.update(Msg::Update(SessionUpdate::ToolCall(Box::new(call))))
            }
            2 => state.update(Msg::Update(SessionUpdate::ThoughtChunk(format!("thinking about {i}")))),
            _ => {
                state.info(format!("info line {i}"));
                Vec::new()
            }
        };
    }
    state
}

fn bench_frames(entries: usize) {
    let state = big_state(entries);
    let mut term = terminal();
    let mut view = View::new();
    let first = cpu_time();
    term.draw(|f| ui::draw(f, &state, &mut view)).expect("draw");
    let first = cpu_time() - first;
    let frames = 200;
    let start = cpu_time();
    for _ in 0..frames {
        term.draw(|f| ui::draw(f, &state, &mut view)).expect("draw");
    }
    let each = (cpu_time() - start) / frames;
    println!(
        "{:<58} first frame {:>8.2} ms, then {:>7.4} ms/frame, RSS {:.0} MiB",
        format!("frame of a {entries}-entry transcript"),
        first.as_secs_f64() * 1000.0,
        each.as_secs_f64() * 1000.0,
        rss_mib()
    );
}

/// The whole client: SDK decoding, state, coalesced frames, over real pipes.
fn bench_pipe(rt: &tokio::runtime::Runtime, chunks: usize) -> Duration {
    rt.block_on(async {
        let mut app = App::new(demo_command());
        app.start_agent().expect("demo agent");
        // Three chats on the one agent process; the flood goes to the third.
        app.handle(Msg::Action(Action::NewChat));
        app.handle(Msg::Action(Action::NewChat));
        while !app
            .ws
            .chats
            .iter()
            .all(|c| matches!(c.state.session.connection, Connection::Ready { .. }))
        {
            let Some(event) = app.next_agent_event().await else {
                return Duration::ZERO;
            };
            app.on_agent_event(event);
        }
        let mut term = terminal();
        let mut views = ui::Views::new();
        let wall = Instant::now();
        let start = cpu_time();
        app.handle(Msg::Action(Action::Paste(format!("flood {chunks}"))));
        app.handle(Msg::Action(Action::Submit));
        let mut last_draw = Instant::now();
        let mut frames = 0u32;
        while app.state().is_busy() {
            let Some(event) = app.next_agent_event().await else {
                break;
            };
            app.on_agent_event(event);
            while let Some(event) = app.try_agent_event() {
                app.on_agent_event(event);
            }
            if last_draw.elapsed() >= FRAME {
                term.draw(|f| ui::draw_workspace(f, &app.ws, &mut views))
                    .expect("draw");
                frames += 1;
                last_draw = Instant::now();
            }
        }
        term.draw(|f| ui::draw_workspace(f, &app.ws, &mut views))
            .expect("draw");
        let cpu = cpu_time() - start;
        per_chunk(
            "whole client over pipes, 3 chats (flood in one), coalesced",
            chunks,
            cpu,
        );
        println!(
            "{:<58} {:.0} ms wall, {frames} frames, RSS {:.0} MiB (peak {:.0} MiB)",
            "",
            wall.elapsed().as_secs_f64() * 1000.0,
            rss_mib(),
            peak_rss_mib()
        );
        app.shutdown().await;
        cpu
    })
}

/// `warden exec` in this process (the demo agent is a child process, its
/// CPU not counted): from spawning the agent to the end of a turn of
/// `flood N`, the text written to `/dev/null` through a line writer as
/// stdout is.
fn bench_exec(rt: &tokio::runtime::Runtime, chunks: usize) -> Duration {
    rt.block_on(async {
        let mut app = App::new(demo_command());
        let start = cpu_time();
        let wall = Instant::now();
        app.start_agent().expect("demo agent");
        let null = std::fs::File::create("/dev/null").expect("/dev/null");
        let mut out = std::io::LineWriter::new(null);
        let mut err = std::io::sink();
        let limits = warden::app::ExecLimits {
            start: Duration::from_secs(30),
            turn: None,
        };
        let result = warden::app::run_exec(
            &mut app,
            &format!("flood {chunks}"),
            limits,
            &mut out,
            &mut err,
        )
        .await;
        let cpu = cpu_time() - start;
        assert_eq!(result, Ok(()));
        per_chunk("warden exec (own CPU; agent not counted)", chunks, cpu);
        println!(
            "{:<58} {:.0} ms wall, peak RSS of this process so far {:.0} MiB",
            "",
            wall.elapsed().as_secs_f64() * 1000.0,
            peak_rss_mib()
        );
        app.shutdown().await;
        cpu
    })
}

fn demo_command() -> AgentCommand {
    AgentCommand {
        name: "demo".into(),
        program: env!("CARGO_BIN_EXE_warden").into(),
        args: vec!["demo-agent".into()],
        env: vec![(
            "WARDEN_DEMO_STATE".into(),
            std::env::temp_dir()
                .join("warden-bench-demo-state")
                .display()
                .to_string(),
        )],
        cwd: std::env::temp_dir(),
    }
}

/// The lines `warden demo-agent` writes for `flood N`, as it writes them:
/// its `session/update` notifications, read from its stdout.
fn flood_lines(chunks: usize) -> Vec<String> {
    use std::io::{BufRead, Write};
    let mut agent = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("demo-agent")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("demo agent");
    let mut input = agent.stdin.take().expect("stdin");
    let mut output = std::io::BufReader::new(agent.stdout.take().expect("stdout"));
    let mut answer = |input: &mut std::process::ChildStdin, id: u64, method: &str, params| {
        let request =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{request}").expect("write");
        let mut updates = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                output.read_line(&mut line).expect("read") > 0,
                "agent ended"
            );
            let text = line.trim_end_matches('\n');
            let value: serde_json::Value = serde_json::from_str(text).expect("json");
            if value["id"] == id {
                return (value, updates);
            }
            if value["method"] == "session/update" {
                updates.push(text.to_string());
            }
        }
    };
    answer(
        &mut input,
        1,
        "initialize",
        serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let (session, _) = answer(
        &mut input,
        2,
        "session/new",
        serde_json::json!({"cwd": std::env::temp_dir(), "mcpServers": []}),
    );
    let session = session["result"]["sessionId"].clone();
    let (_, lines) = answer(
        &mut input,
        3,
        "session/prompt",
        serde_json::json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("flood {chunks}")}]}),
    );
    drop(input);
    let _ = agent.wait();
    lines
}

/// The parse floor: the flood's lines parsed with serde_json alone, into
/// the schema's typed notification and into a `Value`.
fn bench_floor(lines: &[String]) -> Duration {
    use agent_client_protocol::v1::schema::SessionNotification;
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Notification {
        jsonrpc: String,
        method: String,
        params: SessionNotification,
    }
    let chunks = lines.len();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let start = cpu_time();
    for line in lines {
        let note: Notification = serde_json::from_str(line).expect("typed");
        std::hint::black_box(note);
    }
    let typed = cpu_time() - start;
    let start = cpu_time();
    for line in lines {
        let value: serde_json::Value = serde_json::from_str(line).expect("value");
        std::hint::black_box(value);
    }
    let value = cpu_time() - start;
    println!(
        "parse floor, the same {chunks} lines ({:.1} MB): serde typed {:.0} ms, serde Value {:.0} ms",
        bytes as f64 / 1e6,
        typed.as_secs_f64() * 1000.0,
        value.as_secs_f64() * 1000.0
    );
    typed
}

/// The median of a few runs.
fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort_unstable();
    runs[runs.len() / 2]
}

/// `policy::decide` over a mix of requests against a dozen rules.
fn bench_decide() {
    use std::path::Path;
    use warden::policy::{self, AgentPolicy, Context, Mode, RequestView, Rule};
    let rules: Vec<Rule> = toml::from_str::<toml::Table>(
        r#"
        [[rules]]
        decision = "deny"
        kind = "read"
        path = "~/.ssh/**"
        [[rules]]
        decision = "ask"
        path = "**/.env"
        [[rules]]
        decision = "allow"
        command = "cargo test *"
        [[rules]]
        decision = "allow"
        command = "git status*"
        [[rules]]
        decision = "deny"
        command = "rm -rf *"
        [[rules]]
        decision = "allow"
        kind = "edit"
        path = "~/src/app/**"
        "#,
    )
    .ok()
    .and_then(|t| t.get("rules").cloned())
    .and_then(|v| v.try_into().ok())
    .unwrap_or_default();
    let agent = AgentPolicy {
        name: "claude".into(),
        ..AgentPolicy::default()
    };
    let cx = Context {
        mode: Mode::Default,
        agent: &agent,
        rules: &rules,
        grants: &[],
        home: Some(Path::new("/home/u")),
        cwd: Path::new("/home/u/src/app"),
        unattended: false,
    };
    let requests: Vec<RequestView> = [
        (
            ToolKind::Execute,
            serde_json::json!({"command": "cargo test --all && cargo fmt --check | tee log"}),
        ),
        (
            ToolKind::Edit,
            serde_json::json!({"path": "/home/u/src/app/src/main.rs"}),
        ),
        (
            ToolKind::Read,
            serde_json::json!({"path": "/home/u/src/app/../../.ssh/id_rsa"}),
        ),
        (
            ToolKind::Fetch,
            serde_json::json!({"url": "https://example.com"}),
        ),
    ]
    .into_iter()
    .map(|(kind, raw)| RequestView {
        kind,
        title: "t".into(),
        raw_input: Some(raw),
        options: ["allow_once", "reject_once"]
            .iter()
            .map(|kind| warden::model::PermissionOption {
                id: (*kind).into(),
                name: (*kind).into(),
                kind: serde_json::from_value(serde_json::json!(kind)).expect("kind"),
            })
            .collect(),
        ..RequestView::default()
    })
    .collect();
    let rounds = 50_000;
    let start = cpu_time();
    let mut asks = 0usize;
    for i in 0..rounds {
        if matches!(
            policy::decide(&requests[i % requests.len()], &cx),
            policy::Decision::Ask { .. }
        ) {
            asks += 1;
        }
    }
    let each = (cpu_time() - start).as_secs_f64() * 1e6 / rounds as f64;
    println!(
        "{:<58} {each:>9.2} µs/decision ({} rules, {asks} asks)",
        "policy::decide",
        rules.len()
    );
}

fn main() {
    // The same runtime flavour as warden itself.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("warden ingest/render benchmark (CPU time of this process)");
    // `WARDEN_BENCH_ONLY=pipe` runs the whole client over pipes alone, for
    // a profiler (`WARDEN_BENCH_PIPE=N` chunks, 200,000 by default);
    // `WARDEN_BENCH_ONLY=tui` the runs without pipes.
    if std::env::var("WARDEN_BENCH_ONLY").is_ok_and(|only| only == "pipe") {
        let chunks = std::env::var("WARDEN_BENCH_PIPE")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(200_000);
        bench_pipe(&rt, chunks);
        return;
    }
    if std::env::var("WARDEN_BENCH_ONLY").is_ok_and(|only| only == "tui") {
        bench_coalesced(200_000, 4_000);
        bench_coalesced(200_000, 100);
        return;
    }
    // `WARDEN_BENCH_EXEC=N` sets the flood of exec, the floor and the TUI path (0 skips them).
    let floods = std::env::var("WARDEN_BENCH_EXEC")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000usize);
    if floods > 0 {
        // Against the floor: three runs of each, interleaved, so that the
        // shared machine's noise falls on all of them alike. The first exec
        // run comes before anything else grows this process: its peak
        // memory is exec's.
        let mut exec = vec![bench_exec(&rt, floods)];
        let lines = flood_lines(floods);
        assert_eq!(lines.len(), floods);
        let (mut floor, mut tui) = (Vec::new(), Vec::new());
        for round in 0..3 {
            if round > 0 {
                exec.push(bench_exec(&rt, floods));
            }
            floor.push(bench_floor(&lines));
            tui.push(bench_pipe(&rt, floods));
        }
        let floor = median(floor).as_secs_f64();
        println!(
            "against the typed parse floor (medians of 3): exec {:.2}x, the TUI path {:.2}x",
            median(exec).as_secs_f64() / floor,
            median(tui).as_secs_f64() / floor
        );
    }
    bench_state_only(100_000);
    bench_frame_per_chunk(5_000);
    bench_pipe(&rt, 50_000);
    // A flood of a million small updates (issue 12): memory should follow
    // the transcript's text (64 MiB here), not the number of updates.
    // `WARDEN_BENCH_FLOOD=N` changes N; 0 skips it.
    let flood = std::env::var("WARDEN_BENCH_FLOOD")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    if flood > 0 {
        bench_pipe(&rt, flood);
    }
    // After the floods, whose memory figures these would blur.
    bench_coalesced(200_000, 4_000);
    bench_coalesced(200_000, 100);
    bench_frames(100);
    bench_frames(100_000);
    bench_decide();
    bench_mentions();
}

/// The `@` finder on a repository of 100,000 files (issue 14): listing them
/// (off the loop in warden) and one fuzzy match per key press (on it).
fn bench_mentions() {
    let files = std::env::var("WARDEN_BENCH_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000usize);
    if files == 0 {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..files {
        let sub = dir
            .path()
            .join(format!("crate{}/src/module{}", i % 100, (i / 100) % 10));
        if i % 100 < 1 || !sub.exists() {
            std::fs::create_dir_all(&sub).expect("dir");
        }
        std::fs::write(sub.join(format!("file_{i}.rs")), "").expect("file");
    }
    let protected = warden::client::fs::Protected::new();
    let start = std::time::Instant::now();
    let listed = warden::mention::list_files(dir.path(), &protected);
    let list = start.elapsed();
    let start = std::time::Instant::now();
    let queries = [
        "m",
        "mo",
        "mod",
        "modu",
        "modul",
        "module3",
        "module3/f",
        "module3/file_9",
    ];
    let mut found = 0;
    for query in queries {
        found += warden::state::mention::fuzzy(&listed, query).len();
    }
    let per_key = start.elapsed() / queries.len() as u32;
    println!(
        "@ finder over {} files: listing {:.0} ms (a thread), matching {:.1} ms per key press ({found} matches kept)",
        listed.len(),
        list.as_secs_f64() * 1000.0,
        per_key.as_secs_f64() * 1000.0
    );
}

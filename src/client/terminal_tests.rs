use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use tokio::time::timeout;

use super::*;

/// Generous: only a bug makes a test wait this long.
const WAIT: Duration = Duration::from_secs(30);

fn manager() -> (Terminals, mpsc::UnboundedReceiver<TerminalEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Terminals::with_budget(tx, Budget::new(TOTAL_OUTPUT)), rx)
}

fn spec(command: &str, args: &[&str]) -> TerminalSpec {
    TerminalSpec {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: Vec::new(),
        cwd: std::env::current_dir().expect("cwd"),
        output_byte_limit: None,
    }
}

async fn exit_of(terminals: &Terminals, id: &str) -> ExitStatus {
    let waiter = terminals.exit_waiter(id).expect("known terminal");
    timeout(WAIT, waiter)
        .await
        .expect("the terminal did not exit in time")
        .expect("an exit status")
}

/// Poll until the output satisfies `done`.
async fn output_until(terminals: &Terminals, id: &str, done: impl Fn(&str) -> bool) -> String {
    timeout(WAIT, async {
        loop {
            let output = terminals.output(id).expect("known terminal").output;
            if done(&output) {
                return output;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the output did not arrive in time")
}

fn killed() -> ExitStatus {
    ExitStatus {
        exit_code: None,
        signal: Some("SIGKILL".to_owned()),
    }
}

fn exited(code: i32) -> ExitStatus {
    ExitStatus {
        exit_code: Some(code),
        signal: None,
    }
}

/// Whether `pid` is gone (or a zombie nobody reaped yet: it runs no
/// more either way).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

#[tokio::test]
async fn shell_line_prints_and_exits_zero() {
    let (mut terminals, mut events) = manager();
    let id = terminals.create(spec("echo hi", &[])).expect("create");
    assert_eq!(id, "term-1");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    assert_eq!(
        terminals.output(&id).expect("output"),
        TerminalOutput {
            output: "hi\n".to_owned(),
            truncated: false,
            exit: Some(exited(0)),
        }
    );
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    assert_eq!(
        seen,
        vec![
            TerminalEvent::Output { id: id.clone() },
            TerminalEvent::Exited {
                id: id.clone(),
                status: exited(0)
            },
        ]
    );
}

/// Regression: the supervisor once awaited its finished drain future a
/// second time, panicking in its task on every exit (and never marking
/// the group done).
#[tokio::test]
async fn the_supervisor_finishes_cleanly_after_an_exit() {
    let (mut terminals, _events) = manager();
    let id = terminals.create(spec("echo bye", &[])).expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    let shared = Arc::clone(&terminals.get(&id).expect("known").shared);
    let done = tokio::time::timeout(Duration::from_secs(10), async {
        while !shared.group_done.load(Ordering::Acquire) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(done.is_ok(), "the supervisor completed");
}

#[tokio::test]
async fn output_events_are_coalesced_until_snapshot() {
    let (mut terminals, mut events) = manager();
    let id = terminals
        .create(spec("for i in 1 2 3; do echo $i; sleep 0.05; done", &[]))
        .expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    let outputs = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|e| matches!(e, TerminalEvent::Output { .. }))
        .count();
    assert_eq!(outputs, 1, "one pending Output event until a snapshot");
    assert_eq!(
        terminals.snapshot(&id),
        Some(Snapshot {
            output: "1\n2\n3\n".to_owned(),
            truncated: false,
            dropped: 0,
            exit: Some(exited(0)),
        })
    );
    assert_eq!(terminals.snapshot("term-9"), None);
}

#[tokio::test]
async fn command_and_args_are_executed_directly() {
    let (mut terminals, _events) = manager();
    let id = terminals
        .create(spec("printf", &["%s-%s\\n", "a b", "$HOME"]))
        .expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    assert_eq!(terminals.output(&id).expect("output").output, "a b-$HOME\n");
    assert_eq!(
        spec("printf", &["%s-%s\\n", "a b", "$HOME"]).command_line(),
        "printf '%s-%s\\n' 'a b' '$HOME'"
    );
}

#[tokio::test]
async fn stdout_and_stderr_share_the_output_and_exit_codes_show() {
    let (mut terminals, _events) = manager();
    let id = terminals
        .create(spec("echo out; echo err >&2; exit 3", &[]))
        .expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(3));
    let output = terminals.output(&id).expect("output").output;
    assert!(
        output.contains("out\n") && output.contains("err\n"),
        "{output:?}"
    );
}

#[tokio::test]
async fn env_and_cwd_are_honoured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut terminals, _events) = manager();
    let mut spec = spec("printf '%s:' \"$FOO\"; pwd", &[]);
    spec.env = vec![("FOO".to_owned(), "bar baz".to_owned())];
    spec.cwd = dir.path().to_path_buf();
    let id = terminals.create(spec).expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    let output = terminals.output(&id).expect("output").output;
    let (foo, pwd) = output.split_once(':').expect("two parts");
    assert_eq!(foo, "bar baz");
    assert_eq!(
        Path::new(pwd.trim_end()).canonicalize().expect("pwd"),
        dir.path().canonicalize().expect("tempdir")
    );
}

#[tokio::test]
async fn kill_ends_a_process_that_runs_forever() {
    let (mut terminals, _events) = manager();
    let id = terminals.create(spec("sleep 100", &[])).expect("create");
    assert_eq!(terminals.output(&id).expect("output").exit, None);
    terminals.kill(&id).expect("kill");
    assert_eq!(exit_of(&terminals, &id).await, killed());
    // Still queryable after the kill.
    assert_eq!(terminals.output(&id).expect("output").exit, Some(killed()));
    assert_eq!(terminals.ids(), vec![id.clone()]);
    // Killing again is harmless.
    terminals.kill(&id).expect("kill again");
}

#[tokio::test]
async fn kill_takes_the_whole_process_group() {
    let (mut terminals, _events) = manager();
    let id = terminals
        .create(spec("sleep 100 & echo $!; wait", &[]))
        .expect("create");
    let output = output_until(&terminals, &id, |o| o.contains('\n')).await;
    let pid: i32 = output.trim().parse().expect("the background pid");
    assert!(!process_gone(pid), "the background sleep runs");
    terminals.kill(&id).expect("kill");
    assert_eq!(exit_of(&terminals, &id).await, killed());
    timeout(WAIT, async {
        while !process_gone(pid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the background child was not killed");
}

#[tokio::test]
async fn release_kills_and_forgets() {
    let (mut terminals, _events) = manager();
    let id = terminals.create(spec("sleep 100", &[])).expect("create");
    let waiter = terminals.exit_waiter(&id).expect("waiter");
    terminals.release(&id).expect("release");
    assert_eq!(
        timeout(WAIT, waiter).await.expect("in time").expect("exit"),
        killed()
    );
    assert!(terminals.ids().is_empty());
    for result in [
        terminals.output(&id).map(|_| ()),
        terminals.kill(&id),
        terminals.release(&id),
        terminals.exit_waiter(&id).map(|_| ()),
    ] {
        let err = result.expect_err("released");
        assert!(
            matches!(err, TerminalError::UnknownTerminal { .. }),
            "{err:?}"
        );
    }
    assert_eq!(terminals.snapshot(&id), None);
    // Ids are not reused.
    let next = terminals.create(spec("true", &[])).expect("create");
    assert_eq!(next, "term-2");
}

#[tokio::test]
async fn output_past_the_limit_keeps_the_newest() {
    let (mut terminals, _events) = manager();
    let mut spec = spec("printf 'abcdefghij0123456789'", &[]);
    spec.output_byte_limit = Some(10);
    let id = terminals.create(spec).expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    assert_eq!(
        terminals.output(&id).expect("output"),
        TerminalOutput {
            output: "0123456789".to_owned(),
            truncated: true,
            exit: Some(exited(0)),
        }
    );
}

#[tokio::test]
async fn kill_all_kills_every_terminal() {
    let (mut terminals, _events) = manager();
    let a = terminals.create(spec("sleep 100", &[])).expect("create");
    let b = terminals.create(spec("sleep", &["100"])).expect("create");
    assert_eq!(terminals.ids(), vec![a.clone(), b.clone()]);
    terminals.kill_all();
    assert_eq!(exit_of(&terminals, &a).await, killed());
    assert_eq!(exit_of(&terminals, &b).await, killed());
}

#[tokio::test]
async fn two_waiters_both_see_the_exit() {
    let (mut terminals, _events) = manager();
    let id = terminals
        .create(spec("sleep 0.2; exit 7", &[]))
        .expect("create");
    let first = terminals.exit_waiter(&id).expect("waiter");
    let second = terminals.exit_waiter(&id).expect("waiter");
    let (first, second) = timeout(WAIT, async { tokio::join!(first, second) })
        .await
        .expect("in time");
    assert_eq!(first.expect("exit"), exited(7));
    assert_eq!(second.expect("exit"), exited(7));
    // A waiter made after the exit resolves at once.
    assert_eq!(
        timeout(WAIT, terminals.wait_for_exit(&id))
            .await
            .expect("in time")
            .expect("exit"),
        exited(7)
    );
}

#[tokio::test]
async fn bad_requests_are_errors() {
    let (mut terminals, _events) = manager();
    let err = terminals.create(spec("  ", &[])).expect_err("empty");
    assert!(matches!(err, TerminalError::EmptyCommand), "{err:?}");

    let mut bad_cwd = spec("true", &[]);
    bad_cwd.cwd = PathBuf::from("/does/not/exist");
    let err = terminals.create(bad_cwd).expect_err("cwd");
    assert!(matches!(err, TerminalError::BadCwd { .. }), "{err:?}");

    let err = terminals
        .create(spec("warden-no-such-program", &["x"]))
        .expect_err("spawn");
    assert!(matches!(err, TerminalError::Spawn { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("could not start `warden-no-such-program x`")
    );
    assert!(terminals.ids().is_empty());

    // A missing program in a shell line is the shell's exit 127.
    let id = terminals
        .create(spec("warden-no-such-program --flag", &[]))
        .expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(127));
}

#[test]
fn create_outside_a_runtime_is_an_error() {
    let (mut terminals, _events) = manager();
    let err = terminals.create(spec("true", &[])).expect_err("no runtime");
    assert!(matches!(err, TerminalError::NoRuntime), "{err:?}");
}

#[test]
fn buffer_without_limit_keeps_up_to_the_maximum() {
    let mut buffer = OutputBuffer::new(None);
    buffer.push_str("hello ");
    buffer.push_str("world");
    assert_eq!(buffer.text(), "hello world");
    assert!(!buffer.truncated());
    assert_eq!(OutputBuffer::new(Some(1 << 30)).limit(), MAX_OUTPUT);
}

#[test]
fn a_big_limit_costs_no_more_than_the_bytes() {
    // 64 MiB in 64-byte chunks under the agent's 1 GiB limit: the text
    // kept never passes twice the cap, so each byte is copied a bounded
    // number of times (quadratic before: every chunk moved the buffer).
    let mut buffer = OutputBuffer::new(Some(1 << 30));
    let chunk = "0123456789abcdef".repeat(4);
    let mut written = 0usize;
    while written < 64 << 20 {
        buffer.push_str(&chunk);
        written += chunk.len();
        assert!(buffer.text.len() <= 2 * MAX_OUTPUT + chunk.len());
    }
    assert_eq!(buffer.text().len(), MAX_OUTPUT);
    assert!(buffer.truncated());
    let (tail, cut) = buffer.tail(SCREEN_OUTPUT);
    assert_eq!((tail.len(), cut), (SCREEN_OUTPUT, true));
}

#[test]
fn buffer_at_the_limit_is_not_truncated() {
    let mut buffer = OutputBuffer::new(Some(5));
    buffer.push_str("abc");
    buffer.push_str("de");
    assert_eq!((buffer.text(), buffer.truncated()), ("abcde", false));
    buffer.push_str("f");
    assert_eq!((buffer.text(), buffer.truncated()), ("bcdef", true));
}

#[test]
fn buffer_cuts_at_a_char_boundary() {
    // "é" is 2 bytes: cutting 1 byte from "éab" would split it.
    let mut buffer = OutputBuffer::new(Some(3));
    buffer.push_str("é");
    buffer.push_str("ab");
    assert_eq!((buffer.text(), buffer.truncated()), ("ab", true));

    // "日本" is 3 + 3 bytes; a limit of 4 keeps only "本".
    let mut buffer = OutputBuffer::new(Some(4));
    buffer.push_str("a日本");
    assert_eq!((buffer.text(), buffer.truncated()), ("本", true));

    // Keeping 5 of "x日本é" (1 + 3 + 3 + 2) keeps "本é".
    let mut buffer = OutputBuffer::new(Some(5));
    buffer.push_str("x日");
    buffer.push_str("本é");
    assert_eq!((buffer.text(), buffer.truncated()), ("本é", true));

    let mut buffer = OutputBuffer::new(Some(0));
    buffer.push_str("日");
    assert_eq!((buffer.text(), buffer.truncated()), ("", true));
}

#[test]
fn buffer_converts_invalid_utf8_lossily() {
    let mut buffer = OutputBuffer::new(Some(64));
    buffer.push_bytes(b"ok \xff\xfe done");
    assert_eq!(buffer.text(), "ok \u{FFFD}\u{FFFD} done");
}

#[test]
fn decoder_joins_a_char_split_across_reads() {
    let mut decoder = Utf8Decoder::new();
    let bytes = "日".as_bytes();
    assert_eq!(decoder.decode(&bytes[..1]), "");
    assert_eq!(decoder.decode(&bytes[1..2]), "");
    assert_eq!(decoder.decode(&bytes[2..]), "日");
    assert_eq!(decoder.decode(b"a\xffb"), "a\u{FFFD}b");
    assert_eq!(decoder.decode(&bytes[..2]), "");
    assert_eq!(decoder.finish(), "\u{FFFD}");
    assert_eq!(decoder.finish(), "");
}

#[tokio::test]
async fn invalid_utf8_from_a_process_is_replaced() {
    let (mut terminals, _events) = manager();
    let id = terminals
        .create(spec("printf", &["a\\377b\\346\\227\\245"]))
        .expect("create");
    assert_eq!(exit_of(&terminals, &id).await, exited(0));
    assert_eq!(
        terminals.output(&id).expect("output").output,
        "a\u{FFFD}b日"
    );
}

proptest! {
    #[test]
    fn decoder_matches_lossy_decoding_whatever_the_chunks(
        bytes in proptest::collection::vec(
            prop_oneof![any::<u8>(), Just(0xe6u8), Just(0x97u8), Just(0xc3u8)],
            0..64,
        ),
        cuts in proptest::collection::vec(0usize..64, 0..6),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= bytes.len()).collect();
        cuts.sort_unstable();
        let mut decoder = Utf8Decoder::new();
        let mut out = String::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            out.push_str(&decoder.decode(&bytes[start..cut]));
            start = cut;
        }
        out.push_str(&decoder.finish());
        prop_assert_eq!(out, String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn buffer_keeps_the_newest_suffix(
        chunks in proptest::collection::vec("[a-zé日本🦀]{0,8}", 0..12),
        limit in 0usize..24,
    ) {
        let mut buffer = OutputBuffer::new(Some(limit));
        for chunk in &chunks {
            buffer.push_str(chunk);
        }
        let all: String = chunks.concat();
        prop_assert!(all.ends_with(buffer.text()));
        prop_assert!(buffer.text().len() <= limit);
        // At most one character's worth (< 4 bytes) is lost to the cut.
        prop_assert!(buffer.text().len() + 3 >= limit.min(all.len()));
        prop_assert_eq!(buffer.truncated(), all.len() > limit);
    }
}

// The total across terminals (issue 22, resources).

#[test]
fn the_budget_drops_finished_terminals_first_and_keeps_the_newest_of_each() {
    let budget = Budget::new(4 * KEPT_EACH * 4);
    let (tx, _rx) = mpsc::unbounded_channel();
    let member = |id: &str, exited: bool| {
        let (exit, _) = watch::channel(exited.then_some(ExitStatus {
            exit_code: Some(0),
            signal: None,
        }));
        let shared = Arc::new(Shared {
            id: id.to_owned(),
            buffer: Mutex::new(OutputBuffer::new(None)),
            budget: Arc::clone(&budget),
            notified: AtomicBool::new(true),
            exit,
            kill: Notify::new(),
            group_done: AtomicBool::new(true),
            pgid: 0,
            tree: Arc::new(crate::procs::Tree::prepare()),
            events: tx.clone(),
        });
        budget.join(&shared);
        shared
    };
    let done = member("done", true);
    let running = member("running", false);
    let chunk = "x".repeat(KEPT_EACH);
    for _ in 0..6 {
        done.append(&chunk);
    }
    assert_eq!(budget.held(), 6 * KEPT_EACH, "under the limit: all kept");
    for _ in 0..6 {
        running.append(&chunk);
    }
    // 12 chunks > 16 * KEPT_EACH? No: the limit is 16 chunks. More:
    for _ in 0..6 {
        running.append(&chunk);
    }
    // 18 chunks held > 16: the finished terminal went first, to its newest.
    assert!(budget.held() <= 16 * KEPT_EACH, "{}", budget.held());
    assert_eq!(
        done.buffer().held(),
        KEPT_EACH,
        "the finished one is cut first"
    );
    assert_eq!(
        running.buffer().held(),
        12 * KEPT_EACH,
        "the running one kept"
    );
    assert_eq!(done.buffer().dropped(KEPT_EACH), 5 * KEPT_EACH as u64);
    // The running one grows on: it is cut too, never below its newest.
    for _ in 0..20 {
        running.append(&chunk);
    }
    assert!(budget.held() <= 16 * KEPT_EACH, "{}", budget.held());
    assert!(running.buffer().held() >= KEPT_EACH);
    assert!(running.buffer().text().ends_with('x'));
    let held = budget.held();
    assert_eq!(
        held,
        done.buffer().held() + running.buffer().held(),
        "the accounting matches the buffers"
    );
    drop(done);
    assert_eq!(
        budget.held(),
        running.buffer().held(),
        "a forgotten terminal holds nothing"
    );
}

#[tokio::test]
async fn many_terminals_stay_within_the_total_and_say_what_was_dropped() {
    let budget = Budget::new(8 << 20);
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut terminals = Terminals::with_budget(tx, Arc::clone(&budget));
    let mut ids = Vec::new();
    for _ in 0..12 {
        // 2 MiB of output each, 24 MiB in all, into a total of 8 MiB.
        let id = terminals
            .create(spec(
                "head -c 2097152 /dev/zero | tr '\\0' 'a'; echo END",
                &[],
            ))
            .expect("create");
        ids.push(id);
    }
    for id in &ids {
        exit_of(&terminals, id).await;
    }
    assert!(budget.held() <= 8 << 20, "{}", budget.held());
    let mut dropped = 0;
    for id in &ids {
        let snapshot = terminals.snapshot(id).expect("known");
        assert!(
            snapshot.output.ends_with("END\n"),
            "the newest output of each is kept"
        );
        dropped += snapshot.dropped;
        if snapshot.dropped > 0 {
            assert!(snapshot.truncated);
        }
    }
    assert!(dropped >= 16 << 20, "{dropped}");
    for id in &ids {
        terminals.release(id).expect("release");
    }
}

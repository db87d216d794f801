//! No process warden started outlives a warden killed outright: `warden
//! exec`, under the default sandbox, runs the demo agent, whose turn waits
//! on a long terminal; warden is SIGKILLed (it ends nothing itself then),
//! and the agent process and the terminal go with it (their parent-death
//! signal). Before, both ran on, orphaned (the agent process here is one
//! that does not end when its stdin does).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::alive;

/// The children of `parent` whose command line holds `word`.
fn children_with(parent: i32, word: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let ppid = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                });
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains(word)
        })
        .collect()
}

/// A demo-agent scenario whose one turn runs `line` in a terminal of
/// warden's and waits for it.
fn terminal_scenario(dir: &Path, line: &str) -> std::path::PathBuf {
    let scenario = dir.join("long-terminal.toml");
    std::fs::write(
        &scenario,
        format!(
            "builtin = false\n[[turns]]\nsteps = [\n  {{ type = \"terminal\", command = {line:?} }},\n  {{ type = \"stop\", reason = \"end_turn\" }},\n]\n"
        ),
    )
    .unwrap();
    scenario
}

/// Poll until `found` gives something, at most `limit`.
fn wait_for<T>(limit: Duration, mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(it) = found() {
            return Some(it);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `warden exec -p PROMPT --` (the agent's command line still to add) in
/// `work`, with `home` as its HOME and data, config and state dirs, no
/// settings, every card allowed, stdin and stdout null.
fn exec_in_home(home: &Path, work: &Path, prompt: &str) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    command
        .arg("--config")
        .arg(Path::new("/nonexistent/warden.toml"))
        .args(["exec", "--on-ask", "allow", "-p", prompt, "--"])
        .current_dir(work)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    command
}

/// Kills what is left when dropped, so a failing run leaves no orphan.
struct Leftovers(Vec<i32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn the_agent_and_its_terminal_die_with_a_sigkilled_warden() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let pid_file = work.join("term.pid");
    let line = format!("echo $$ > {}; exec sleep 600", pid_file.display());
    let scenario = terminal_scenario(home.path(), &line);
    let warden_bin = env!("CARGO_BIN_EXE_warden");
    let mut warden = exec_in_home(home.path(), &work, "go")
        // An agent that outlives its stdin's end (the demo agent exits on
        // it; one busy in a turn or that ignores it does not): when the
        // demo agent is gone, its process becomes a long `sleep`.
        .args(["sh", "-c", "\"$@\"; exec sleep 600", "agent"])
        .args([warden_bin, "demo-agent", "--scenario"])
        .arg(&scenario)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let warden_pid = i32::try_from(warden.id()).unwrap();
    let mut leftovers = Leftovers(Vec::new());

    let terminal = wait_for(Duration::from_secs(30), || {
        std::fs::read_to_string(&pid_file)
            .ok()?
            .trim()
            .parse::<i32>()
            .ok()
    });
    let Some(terminal) = terminal else {
        let _ = warden.kill();
        let out = warden.wait_with_output().unwrap();
        panic!(
            "the terminal never started: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    leftovers.0.push(terminal);
    let agents = children_with(warden_pid, "demo-agent");
    leftovers.0.extend(&agents);
    assert_eq!(agents.len(), 1, "warden's agent process: {agents:?}");
    let agent = agents[0];
    assert!(alive(agent) && alive(terminal), "both run before");
    assert!(
        children_with(warden_pid, "sleep").contains(&terminal),
        "the terminal is warden's child"
    );

    if crate::sandbox::landlock() {
        // Under the real sandbox: its hooks (namespace, no new privileges,
        // Landlock, seccomp) ran before the one that sets the death signal.
        for pid in [agent, terminal] {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            assert!(
                status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"),
                "{pid} is not confined: {status}"
            );
        }
    }

    // Killed outright: no shutdown, no panic hook, nothing of warden's runs.
    warden.kill().unwrap();
    warden.wait().unwrap();

    let gone = wait_for(Duration::from_secs(10), || {
        (!alive(agent) && !alive(terminal)).then_some(())
    });
    assert!(
        gone.is_some(),
        "outlived a SIGKILLed warden: agent {agent} (alive: {}), terminal {terminal} (alive: {})",
        alive(agent),
        alive(terminal)
    );
}

/// What a SIGKILLed warden's terminal started itself (a background job,
/// which has no death signal of warden's) is left running in the
/// terminal's cgroup; the next warden that starts an agent ends it and
/// removes the cgroup (without the sweep's kill it runs on for good).
/// Where warden has no cgroups, this is skipped.
#[test]
fn what_a_killed_warden_left_running_is_ended_at_the_next_start() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let pid_file = work.join("term.pid");
    let bg_file = work.join("bg.pid");
    let line = format!(
        "echo $$ > {}; sleep 601 & echo $! > {}; exec sleep 600",
        pid_file.display(),
        bg_file.display()
    );
    let scenario = terminal_scenario(home.path(), &line);
    let warden_bin = env!("CARGO_BIN_EXE_warden");
    let warden = |prompt: &str, scenario: Option<&Path>| {
        let mut command = exec_in_home(home.path(), &work, prompt);
        command
            .args([warden_bin, "demo-agent"])
            .stderr(std::process::Stdio::null());
        if let Some(scenario) = scenario {
            command.arg("--scenario").arg(scenario);
        }
        command
    };
    let mut first = warden("go", Some(&scenario)).spawn().unwrap();
    let mut leftovers = Leftovers(Vec::new());
    let read_pid = |file: &Path| {
        wait_for(Duration::from_secs(30), || {
            std::fs::read_to_string(file)
                .ok()?
                .trim()
                .parse::<i32>()
                .ok()
        })
    };
    let (Some(terminal), Some(bg)) = (read_pid(&pid_file), read_pid(&bg_file)) else {
        let _ = first.kill();
        panic!("the terminal never started");
    };
    leftovers.0.extend([terminal, bg]);
    let cgroup = std::fs::read_to_string(format!("/proc/{bg}/cgroup")).unwrap_or_default();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || (!alive(terminal)).then_some(())).is_some(),
        "the terminal outlived warden"
    );
    if !cgroup.contains("/warden-") {
        println!("skipped: no cgroup of warden's here ({})", cgroup.trim());
        return;
    }
    // It runs on until a warden starts an agent or a terminal in the same
    // cgroup: the next one below, or one of another test running
    // meanwhile (each sweeps), so it may be gone already.
    if !alive(bg) {
        println!("{bg} was ended already by another warden's sweep");
    }

    // The next warden, starting its agent, ends it.
    let next = warden("hello", None).status().unwrap();
    assert!(next.success(), "{next:?}");
    assert!(
        wait_for(Duration::from_secs(10), || (!alive(bg)).then_some(())).is_some(),
        "what the killed warden left still runs: {bg} in {cgroup}"
    );
}

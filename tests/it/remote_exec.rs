//! `warden exec --on-ask remote` (issue 26): a headless run serves its
//! cards on the remote page, prints the URL on stderr, and waits for an
//! answer there; a card nobody answers in time is denied, and says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::remote::{csrf_of, http, sign_in};

/// A running `warden exec --on-ask remote`, and what it said on stderr.
pub(crate) struct RemoteExec {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    /// The URL's path and query (`/?t=...`).
    pub(crate) path: String,
    /// The whole URL printed.
    pub(crate) url: String,
    /// Everything stderr said, filled by a thread.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl RemoteExec {
    /// Start it in `dir` (also its HOME) on the demo agent with `prompt`,
    /// the server on a free port; returns once the URL is printed.
    pub(crate) fn start(dir: &Path, prompt: &str, extra: &[&str]) -> RemoteExec {
        RemoteExec::start_with(dir, "", prompt, extra)
    }

    /// The same, with more `[remote]` settings.
    pub(crate) fn start_with(dir: &Path, remote: &str, prompt: &str, extra: &[&str]) -> RemoteExec {
        let config = dir.join("warden.toml");
        std::fs::write(
            &config,
            format!("[remote]\nlisten = \"127.0.0.1:0\"\n{remote}"),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .arg("--config")
            .arg(&config)
            .args(["exec", "--on-ask", "remote", "-p", prompt])
            .args(extra)
            .current_dir(dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("HOME", dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("warden exec runs");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let said = stderr.clone();
        let reader = std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("remote: answer this run's cards at ") {
                    let url = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = url_tx.send(url);
                }
                let mut said = said.lock().unwrap();
                said.push_str(&line);
                said.push('\n');
            }
        });
        let url = url_rx
            .recv_timeout(crate::common::GUARD)
            .unwrap_or_else(|_| panic!("no URL on stderr: {}", stderr.lock().unwrap()));
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (host, path) = rest.split_at(rest.find('/').expect("a path"));
        RemoteExec {
            child,
            addr: host.parse().expect("an address"),
            path: path.to_string(),
            url: url.clone(),
            stderr,
            reader: Some(reader),
        }
    }

    /// Wait for the run to end: its exit code, stdout and stderr.
    pub(crate) fn finish(mut self) -> (Option<i32>, String, String) {
        let mut out = String::new();
        std::io::Read::read_to_string(self.child.stdout.as_mut().unwrap(), &mut out).unwrap();
        let status = self.child.wait().unwrap();
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        let err = self.stderr.lock().unwrap().clone();
        (status.code(), out, err)
    }
}

impl Drop for RemoteExec {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sign in and wait until the page shows a card; returns the cookie and
/// the page.
pub(crate) async fn card_on_page(run: &RemoteExec) -> (String, String) {
    let cookie = sign_in(run.addr, &run.path).await;
    let page = tokio::time::timeout(crate::common::GUARD, async {
        loop {
            let page = http(run.addr, "GET", "/", Some(&cookie), None).await;
            if page.body.contains("Allow once") {
                return page.body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a card on the page");
    (cookie, page)
}

/// The `chat=..&card=..` of the first card on the page.
pub(crate) fn first_card(page: &str) -> String {
    let at = page.find("id=\"card-").expect("a card") + 9;
    let id = &page[at..at + page[at..].find('"').unwrap()];
    let (chat, card) = id.split_once('-').unwrap();
    format!("chat={chat}&card={card}")
}

#[tokio::test]
async fn exec_waits_for_the_remote_page_and_the_agent_gets_allow_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = RemoteExec::start(dir.path(), "edit", &[]);
    let qr = warden::remote::qr::lines(&run.url)
        .expect("a QR code")
        .join("\n");
    let (cookie, page) = card_on_page(&run).await;
    let form = format!("{}&pick=allow&csrf={}", first_card(&page), csrf_of(&page));
    // The card arms for a second after it reaches the page: until then
    // the answer is refused (409) and the card still waits.
    let answered = tokio::time::timeout(crate::common::GUARD, async {
        loop {
            let reply = http(run.addr, "POST", "/answer", Some(&cookie), Some(&form)).await;
            if reply.status == 303 {
                return;
            }
            assert_eq!(reply.status, 409, "{}", reply.body);
            assert!(reply.body.contains("just arrived"), "{}", reply.body);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(answered.is_ok(), "the answer was never taken");
    let (code, out, err) = run.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected allow-once"),
        "{out}"
    );
    assert!(err.contains("allowed remotely"), "{err}");
    assert!(err.contains(&qr), "the URL's QR code on stderr: {err}");
    let log =
        warden::decision_log::read(&dir.path().join("data/warden/decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        (log[0].source.as_str(), log[0].decision.as_str()),
        ("remote", "allowed")
    );
}

#[tokio::test]
async fn exec_denies_a_card_nobody_answers_in_time_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = RemoteExec::start(dir.path(), "edit", &["--ask-timeout", "1"]);
    let (code, out, err) = run.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("permission outcome: selected reject-once"),
        "{out}"
    );
    assert!(err.contains("no answer within 1 s"), "{err}");
    let log =
        warden::decision_log::read(&dir.path().join("data/warden/decisions.jsonl")).expect("log");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        (
            log[0].source.as_str(),
            log[0].decision.as_str(),
            log[0].reason.as_str()
        ),
        ("remote", "denied", "no answer within 1 s")
    );
}

#[tokio::test]
async fn exec_tells_notify_url_of_a_card_waiting() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let topic = format!("http://{}/ci-topic", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().expect("tempdir");
    let run = RemoteExec::start_with(
        dir.path(),
        &format!("notify_url = \"{topic}\"\nnotify_after = 0\n"),
        "edit",
        &["--ask-timeout", "5"],
    );
    let (head, body) = crate::remote::take_post(&listener).await;
    assert!(head.starts_with("POST /ci-topic"), "{head}");
    assert!(body.contains(&format!("http://{}/", run.addr)), "{body}");
    assert!(!body.contains("src/main.rs"), "{body}");
    let (code, _, err) = run.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no answer within 5 s"), "{err}");
}

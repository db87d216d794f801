//! The remote page in a real browser (issue 26): Debian's `chromium`,
//! headless, driven over the DevTools protocol on a pipe (fds 3 and 4,
//! NUL-separated JSON: no websocket, no crate). It opens the URL warden
//! shows, presses Allow with the mouse, and the agent gets `allow_once`.
//! Skipped, saying why, where chromium is not installed (`.ci/run`
//! installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use warden::policy::Mode;

use crate::common::*;

/// The browser, if there is one.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A headless chromium and its DevTools pipe.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: BufReader<std::fs::File>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start(name: &str, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        // Our ends and the browser's: it reads commands on fd 3 and
        // writes answers on fd 4.
        let (cmd_read, cmd_write) = pipe();
        let (out_read, out_write) = pipe();
        let mut command = Command::new(name);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: its renderers go with it.
            .process_group(0);
        let (r, w) = (cmd_read, out_write);
        // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("chromium starts");
        // SAFETY: the fds are ours, each wrapped once; the child has its copies.
        let (to, from) = unsafe {
            use std::os::fd::FromRawFd;
            libc::close(cmd_read);
            libc::close(out_write);
            (
                std::fs::File::from_raw_fd(cmd_write),
                std::fs::File::from_raw_fd(out_read),
            )
        };
        Browser {
            child,
            to,
            from: BufReader::new(from),
            next_id: 1,
            _profile: profile,
        }
    }

    /// One DevTools command (in `session`, a page's, if given); its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        loop {
            let mut raw = Vec::new();
            let n = self
                .from
                .read_until(0, &mut raw)
                .expect("read from chromium");
            assert!(n > 0, "chromium closed its pipe");
            raw.pop();
            let reply: Value = serde_json::from_slice(&raw).expect("JSON from chromium");
            if reply["id"] == json!(id) {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// A new tab at `url`; its session id.
    fn open(&mut self, url: &str) -> String {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().unwrap().to_string();
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        let session = attached["sessionId"].as_str().unwrap().to_string();
        self.call(Some(&session), "Page.enable", json!({}));
        // A phone's screen: 390 by 844 CSS pixels, touch, mobile.
        self.call(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": true}),
        );
        self.call(Some(&session), "Page.navigate", json!({"url": url}));
        session
    }

    /// The value of `expression` in the page.
    fn eval(&mut self, session: &str, expression: &str) -> Value {
        let result = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }

    /// Wait until `expression` is true in the page.
    fn wait_for(&mut self, session: &str, expression: &str) {
        let start = std::time::Instant::now();
        while self.eval(session, expression) != json!(true) {
            assert!(
                start.elapsed() < GUARD,
                "never true: {expression}; the page: {}",
                self.eval(session, "document.body ? document.body.innerText : ''")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A left click at the middle of the element `selector`.
    fn press(&mut self, session: &str, selector: &str) {
        let rect = self.eval(
            session,
            &format!(
                "(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView(); \
                 const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
            ),
        );
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                Some(session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// A PNG of the page as it is shown.
    fn screenshot(&mut self, session: &str) -> Vec<u8> {
        let shot = self.call(
            Some(session),
            "Page.captureScreenshot",
            json!({"format": "png"}),
        );
        base64_decode(shot["data"].as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: a signal to the browser's own process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.child.wait();
    }
}

fn pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = text.bytes().filter(|&c| c != b'=' && c != b'\n').collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(value(c)) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_browser_presses_allow_and_the_agent_gets_allow_once() {
    let Some(name) = chromium() else {
        eprintln!("skipped: no chromium installed (.ci/run installs Debian's chromium)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_with(dir.path(), logged_options(dir.path(), Mode::Default)).await;
    let url = app
        .start_remote("127.0.0.1:0".parse().unwrap())
        .expect("the server starts");
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let title = app.state().gate.approvals[0].title();
    let shot_to = std::env::var_os("WARDEN_REMOTE_SCREENSHOT");
    // The browser is driven from a thread of its own (its pipe blocks);
    // the server answers on the runtime's workers meanwhile.
    let browser = tokio::task::spawn_blocking(move || {
        let mut browser = Browser::start(name, 390, 844);
        let page = browser.open(&url);
        browser.wait_for(
            &page,
            "document.querySelector('button.allow') !== null && \
             document.getElementById('live').textContent === 'live'",
        );
        let shown = browser.eval(&page, "document.body.innerText");
        if let Some(path) = shot_to {
            std::fs::write(path, browser.screenshot(&page)).expect("screenshot");
        }
        // The card arms for a second after it reached the page.
        std::thread::sleep(warden::remote::ARMING);
        browser.press(&page, "button.allow");
        (browser, page, shown)
    });
    let (mut browser, page, shown) = browser.await.expect("the browser drove the page");
    let shown = shown.as_str().unwrap_or_default().to_string();
    assert!(shown.contains(&title), "{shown}");
    assert!(shown.contains("Allow once"), "{shown}");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    let text = agent_text(app.state());
    assert!(
        text.contains("permission outcome: selected allow-once"),
        "{text}"
    );
    // The page, live, says who decided, and no card waits.
    let after = tokio::task::spawn_blocking(move || {
        browser.wait_for(
            &page,
            "document.body.innerText.includes('allowed by remote')",
        );
        browser.eval(&page, "document.body.innerText")
    })
    .await
    .expect("the page updated");
    assert!(
        after.as_str().unwrap_or_default().contains("No card waits"),
        "{after}"
    );
    app.shutdown().await;
}

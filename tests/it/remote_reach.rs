//! The remote page reached from a phone (issue 33, item 9): the URL and
//! its QR code say `[remote] public_url` when set, a taken port moves on
//! to the next free one (`--remote-port` asks for one exactly), and an
//! address on every interface is never what the URL says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use warden::app::App;
use warden::policy::Mode;

use crate::common::*;
use crate::remote::{http, sign_in, take_post};

async fn app_in(dir: &std::path::Path) -> App {
    started_with(dir, logged_options(dir, Mode::Default)).await
}

/// The URL and QR code shown over the screen.
fn shown(app: &App) -> (String, Vec<String>) {
    let code = app.ws.remote_code.as_ref().expect("the URL is shown");
    (code.url.clone(), code.qr.clone())
}

/// `127.0.0.1:PORT`, a port some other program holds (kept while `_held` lives).
fn taken_port() -> (std::net::TcpListener, SocketAddr) {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap();
    (held, addr)
}

#[tokio::test]
async fn a_taken_port_moves_on_to_the_next_free_one_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_in(dir.path()).await;
    let (_held, taken) = taken_port();
    app.set_remote_listen(taken);
    app.start_remote_told(app.remote_listen());
    let addr = app.remote_addr().expect("serving, on another port");
    assert_ne!(addr.port(), taken.port());
    assert!(
        addr.port() > taken.port() && addr.port() <= taken.port() + warden::remote::PORT_TRIES,
        "{addr} after {taken}"
    );
    let notes = infos(app.state());
    let said = format!(
        "remote: port {} is taken (another warden?): serving on port {}",
        taken.port(),
        addr.port()
    );
    assert!(notes.iter().any(|n| n.contains(&said)), "{notes:?}");
    // The URL shown is the one it serves on, and it signs in.
    let (url, qr) = shown(&app);
    let path = url
        .strip_prefix(&format!("http://{addr}"))
        .unwrap_or_else(|| panic!("{url} is not on {addr}"));
    assert_eq!(qr, warden::remote::qr::lines(&url).unwrap());
    sign_in(addr, path).await;
    app.shutdown().await;
}

#[tokio::test]
async fn remote_port_is_that_port_or_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_in(dir.path()).await;
    let (held, taken) = taken_port();
    app.set_remote_port(taken.port());
    app.start_remote_told(app.remote_listen());
    assert_eq!(app.remote_addr(), None, "not on another port");
    let errors: Vec<String> = errors(app.state()).into_iter().map(|(m, _)| m).collect();
    assert!(
        errors
            .iter()
            .any(|m| m.contains(&format!("cannot listen on {taken}"))
                && m.contains("--remote-port asks for that port only")),
        "{errors:?}"
    );
    // Free, it is the port served on.
    drop(held);
    app.start_remote_told(app.remote_listen());
    assert_eq!(app.remote_addr(), Some(taken));
    app.shutdown().await;
}

#[tokio::test]
async fn public_url_is_what_the_url_its_qr_code_and_the_notification_say() {
    let topic = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_in(dir.path()).await;
    app.set_remote_settings(&warden::settings::RemoteSettings {
        listen: "127.0.0.1:0".into(),
        public_url: Some("https://box.tail1234.ts.net/".into()),
        notify_url: Some(format!("http://{}/t", topic.local_addr().unwrap())),
        notify_after: 0,
        ..Default::default()
    });
    app.start_remote_told(app.remote_listen());
    let addr = app.remote_addr().expect("serving");
    let (url, qr) = shown(&app);
    let token = url
        .strip_prefix("https://box.tail1234.ts.net/?t=")
        .unwrap_or_else(|| panic!("{url}"));
    assert_eq!(token.len(), 32, "{url}");
    assert_eq!(qr, warden::remote::qr::lines(&url).unwrap());
    assert!(!url.contains("127.0.0.1"), "{url}");
    assert_eq!(
        app.remote_base().as_deref(),
        Some("https://box.tail1234.ts.net/")
    );
    // What the phone's URL carries signs in where warden listens (the
    // tailnet's proxy forwards it there).
    sign_in(addr, &format!("/?t={token}")).await;
    // The notification's link is the phone's address too.
    key(&mut app, warden::state::Action::Cancel);
    assert!(app.ws.remote_code.is_none(), "a key closed the URL's box");
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    let (head, body) = take_post(&topic).await;
    assert!(
        head.to_ascii_lowercase()
            .contains("click: https://box.tail1234.ts.net/"),
        "{head}"
    );
    assert!(body.contains("https://box.tail1234.ts.net/"), "{body}");
    assert!(!body.contains("127.0.0.1"), "{body}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_server_on_every_interface_shows_an_address_that_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_in(dir.path()).await;
    app.start_remote_told("0.0.0.0:0".parse().unwrap());
    let addr = app.remote_addr().expect("serving");
    assert!(addr.ip().is_unspecified());
    let (url, _) = shown(&app);
    assert!(!url.contains("0.0.0.0"), "{url}");
    // The address in the URL answers.
    let host_port = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once('/'))
        .map(|(hp, _)| hp.to_string())
        .unwrap_or_else(|| panic!("{url}"));
    let shown_addr: SocketAddr = host_port.parse().unwrap();
    assert_eq!(shown_addr.port(), addr.port());
    let reply = tokio::time::timeout(
        Duration::from_secs(5),
        http(shown_addr, "GET", "/", None, None),
    )
    .await
    .expect("the shown address answers");
    assert_eq!(reply.status, 403, "not signed in, but there");
    // And it is said in red that it listens beyond this machine.
    let errors: Vec<String> = errors(app.state()).into_iter().map(|(m, _)| m).collect();
    assert!(
        errors.iter().any(|m| m.contains("beyond this machine")),
        "{errors:?}"
    );
    app.shutdown().await;
}

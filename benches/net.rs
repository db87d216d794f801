//! What warden's network proxy costs (issue 35): `cargo bench --bench net`.
//!
//! On loopback, an origin server and warden's proxy (the host allowed,
//! so no ask): the time to a first byte of a fresh connection, direct and
//! through the proxy (`CONNECT`, then one byte echoed), medians of
//! `WARDEN_BENCH_RUNS` (default 500) each, interleaved; and a download of
//! `WARDEN_BENCH_MB` (default 100) MB, direct and through the proxy, best
//! of 5 each. Targets: under 1 ms added per connection, 90% or more of the
//! direct throughput. Figures, not assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use warden::net::proxy::{Gate, Proxy};
use warden::net::{Hosts, NetworkMode};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// An origin server: the first byte `e` echoes one byte; `d` sends `size`
/// bytes and closes.
async fn origin(size: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let chunk = vec![7u8; 1 << 20];
        while let Ok((mut s, _)) = listener.accept().await {
            let _ = s.set_nodelay(true);
            let chunk = chunk.clone();
            tokio::spawn(async move {
                let mut first = [0u8; 1];
                if s.read_exact(&mut first).await.is_err() {
                    return;
                }
                if first[0] == b'e' {
                    let _ = s.write_all(b"e").await;
                } else {
                    let mut left = size;
                    while left > 0 {
                        let n = left.min(chunk.len());
                        if s.write_all(&chunk[..n]).await.is_err() {
                            return;
                        }
                        left -= n;
                    }
                }
            });
        }
    });
    port
}

/// A connection to the origin: direct, or through the proxy's tunnel.
async fn open(origin: u16, proxy: Option<u16>) -> TcpStream {
    match proxy {
        None => {
            let s = TcpStream::connect(("127.0.0.1", origin)).await.unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Some(port) => {
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.set_nodelay(true).unwrap();
            s.write_all(format!("CONNECT 127.0.0.1:{origin} HTTP/1.1\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut byte).await.unwrap();
                head.push(byte[0]);
            }
            assert!(head.starts_with(b"HTTP/1.1 200"));
            s
        }
    }
}

async fn first_byte(origin: u16, proxy: Option<u16>) -> Duration {
    let start = Instant::now();
    let mut s = open(origin, proxy).await;
    s.write_all(b"e").await.unwrap();
    let mut byte = [0u8; 1];
    s.read_exact(&mut byte).await.unwrap();
    start.elapsed()
}

async fn download(origin: u16, proxy: Option<u16>) -> Duration {
    let start = Instant::now();
    let mut s = open(origin, proxy).await;
    s.write_all(b"d").await.unwrap();
    let mut buf = vec![0u8; 1 << 18];
    while s.read(&mut buf).await.unwrap() > 0 {}
    start.elapsed()
}

fn main() {
    let runs: usize = std::env::var("WARDEN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let mb: usize = std::env::var("WARDEN_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let origin = origin(mb << 20).await;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (asks, _never) = tokio::sync::mpsc::unbounded_channel();
        let proxy = Proxy::serve(
            listener,
            Gate {
                agent: "bench".into(),
                hosts: Hosts::new(NetworkMode::Gated, vec![format!("127.0.0.1:{origin}")]),
                asks,
            },
        )
        .unwrap();
        let port = Some(proxy.port());
        let (mut direct, mut proxied) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            direct.push(first_byte(origin, None).await);
            proxied.push(first_byte(origin, port).await);
        }
        let (d, p) = (median(direct), median(proxied));
        println!(
            "connection to a first byte on loopback: direct {:.3} ms, through the proxy {:.3} ms: {:.3} ms added (target < 1 ms)",
            ms(d),
            ms(p),
            ms(p.saturating_sub(d))
        );
        let (mut direct, mut proxied) = (Duration::MAX, Duration::MAX);
        for _ in 0..5 {
            direct = direct.min(download(origin, None).await);
            proxied = proxied.min(download(origin, port).await);
        }
        let rate = |d: Duration| mb as f64 / d.as_secs_f64();
        println!(
            "{mb} MB download on loopback: direct {:.0} MB/s, through the proxy {:.0} MB/s: {:.0}% (target >= 90%)",
            rate(direct),
            rate(proxied),
            100.0 * rate(proxied) / rate(direct)
        );
    });
}

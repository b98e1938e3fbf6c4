//! Idle clients cannot starve the service: header-read timeout, connection cap, and `/healthz` answering
//! through a flood of silent connections.

use crate::helpers::{TestApp, spawn_app, spawn_app_with};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

async fn open_idle(app: &TestApp, n: usize) -> Vec<TcpStream> {
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut idle = Vec::with_capacity(n);
    for _ in 0..n {
        // Past the cap, connects still complete (the kernel's backlog holds them) or time out; either way
        // the client keeps nothing but what it holds here.
        if let Ok(Ok(s)) = tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(&addr)).await {
            idle.push(s);
        }
    }
    idle
}

async fn healthz_within(app: &TestApp, limit: Duration) -> Duration {
    let started = Instant::now();
    let response = tokio::time::timeout(limit, reqwest::Client::new().get(app.url("/healthz")).send())
        .await
        .expect("/healthz answered in time")
        .expect("request");
    assert_eq!(response.status(), 200);
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_while_thousands_of_idle_connections_are_open() {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let app = spawn_app().await;
    let idle = open_idle(&app, 3000).await;
    assert!(idle.len() >= 2900, "opened {}", idle.len());
    healthz_within(&app, Duration::from_secs(2)).await;
    drop(idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_closed_after_the_header_read_timeout() {
    let app = spawn_app_with(|s| s.header_read_timeout_seconds = 1).await;
    let mut silent = TcpStream::connect(app.base.trim_start_matches("http://")).await.expect("connect");
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await.expect("closed in time");
    assert!(matches!(read, Ok(0) | Err(_)), "the server closed it: {read:?}");
    assert!(started.elapsed() >= Duration::from_millis(900), "not before the timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_new_client_is_served_once_idle_ones_time_out() {
    let app = spawn_app_with(|s| {
        s.max_connections = 50;
        s.header_read_timeout_seconds = 1;
    })
    .await;
    let idle = open_idle(&app, 200).await;
    assert!(idle.len() >= 50);
    // The first 50 hold every slot until their header-read timeout closes them; the request then gets in.
    let waited = healthz_within(&app, Duration::from_secs(8)).await;
    assert!(waited < Duration::from_secs(8));
    drop(idle);
}

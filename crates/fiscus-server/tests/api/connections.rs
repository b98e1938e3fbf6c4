//! Idle and slow clients cannot starve the service: header-read timeout, body pace (408), connection cap,
//! a per-address limit on anonymous connections, and `/healthz` answering through floods of silent or
//! trickling connections. Floods come from other loopback addresses (127.0.0.2 and up) than the client that
//! checks `/healthz`, as an attacker's would.

use fiscus_apptest::{TestApp, spawn_app, spawn_app_with};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn open_idle(app: &TestApp, n: usize) -> Vec<TcpStream> {
    let mut idle = Vec::with_capacity(n);
    for i in 0..n {
        // A hundred from each of several addresses (under the per-address limit of anonymous connections).
        // Past the cap, connects still complete (the kernel's backlog holds them) or time out; either way the
        // client keeps nothing but what it holds here.
        let source = format!("127.0.1.{}", 1 + i / 100);
        if let Ok(Ok(s)) = tokio::time::timeout(Duration::from_millis(200), connect_from(app, &source)).await {
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

/// A connection from `source` (any 127.0.0.0/8 address is this machine's loopback), as a client elsewhere.
async fn connect_from(app: &TestApp, source: &str) -> std::io::Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(format!("{source}:0").parse().expect("source"))?;
    socket.connect(app.base.trim_start_matches("http://").parse().expect("addr")).await
}

/// Sends a request head that declares a 100 kB form body, and its first byte.
async fn start_slow_body(stream: &mut TcpStream) -> std::io::Result<()> {
    stream
        .write_all(
            b"POST /console/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n\
              Content-Length: 100000\r\n\r\ne",
        )
        .await
}

async fn answer(stream: &mut TcpStream, within: Duration) -> String {
    let mut buf = vec![0u8; 2048];
    match tokio::time::timeout(within, stream.read(&mut buf)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).to_string(),
        Ok(Err(e)) => format!("error: {e}"),
        Err(_) => "no answer".to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_is_cut_off_with_408_after_the_grace_period() {
    let app = spawn_app_with(|s| s.body_read_timeout_seconds = 1).await;
    let stream = connect_from(&app, "127.0.0.1").await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    let started = Instant::now();
    write
        .write_all(
            b"POST /console/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n\
              Content-Length: 100000\r\n\r\ne",
        )
        .await
        .expect("head");
    // One byte every 200 ms: far below the minimum rate, never a pause as long as the grace period.
    let trickle = tokio::spawn(async move {
        while write.write_all(b"m").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let mut buf = vec![0u8; 2048];
    let n = tokio::time::timeout(Duration::from_secs(5), read.read(&mut buf)).await.expect("answered").expect("read");
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("request_timeout"), "{text}");
    assert!(started.elapsed() >= Duration::from_millis(900), "not before the grace period");
    trickle.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_anonymous_clients_from_one_address_cannot_take_the_slots_everyone_needs() {
    // The probe's case: 200 slots, 300 clients that declare a body and send a byte of it. One address holds
    // at most half the slots anonymously; the rest of its connections are answered 429 at once.
    let app = spawn_app_with(|s| s.max_connections = 200).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..300 {
        let mut stream = connect_from(&app, "127.0.0.2").await.expect("connect");
        if start_slow_body(&mut stream).await.is_err() {
            refused += 1;
            continue;
        }
        held.push(stream);
    }
    // Connections past the address's limit were answered without being read.
    let mut answered_429 = 0;
    for stream in held.iter_mut().rev().take(150) {
        if answer(stream, Duration::from_millis(50)).await.starts_with("HTTP/1.1 429") {
            answered_429 += 1;
        }
    }
    assert!(answered_429 + refused >= 150, "{answered_429} answered 429, {refused} refused");
    let waited = healthz_within(&app, Duration::from_secs(2)).await;
    assert!(waited < Duration::from_secs(1), "/healthz waited {waited:?}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_authenticated_no_longer_counts_against_its_address() {
    let app = spawn_app_with(|s| s.unauthenticated_connections_per_address = 2).await;
    let mut first = connect_from(&app, "127.0.0.3").await.expect("connect");
    let _second = connect_from(&app, "127.0.0.3").await.expect("connect");
    let mut third = connect_from(&app, "127.0.0.3").await.expect("connect");
    assert!(answer(&mut third, Duration::from_secs(2)).await.starts_with("HTTP/1.1 429"));
    // Another address is not affected.
    let mut other = connect_from(&app, "127.0.0.4").await.expect("connect");
    other.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await.expect("write");
    assert!(answer(&mut other, Duration::from_secs(2)).await.starts_with("HTTP/1.1 200"));
    // The first authenticates: its address has room again.
    let request =
        format!("GET /api/v2/workspace HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\r\n", app.key);
    first.write_all(request.as_bytes()).await.expect("write");
    assert!(answer(&mut first, Duration::from_secs(2)).await.starts_with("HTTP/1.1 200"));
    let mut fourth = connect_from(&app, "127.0.0.3").await.expect("connect");
    fourth.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await.expect("write");
    assert!(answer(&mut fourth, Duration::from_secs(2)).await.starts_with("HTTP/1.1 200"));
}

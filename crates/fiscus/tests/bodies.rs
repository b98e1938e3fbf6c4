//! One tenant's large bodies against everyone else (issue 54): a `fiscus serve` process (the release's own
//! allocator and runtime, measured from outside) receives twenty concurrent 15.8 MiB computation bodies
//! from one workspace while another workspace reads. Admission (`fiscus_http::admission`) holds the bytes
//! of bodies in flight to a budget and a per-workspace share, so the process's peak memory stays under a
//! stated bound and the other workspace's `/healthz` and reads keep their latency.
//!
//! The bodies are the largest the computations take (1,000 assets × 1,000 periods of returns as JSON), each
//! with one return out of range, so every admitted body is read and parsed whole and then refused (422)
//! without the engine running: what is measured is what bodies cost, not the optimiser (whose fairness
//! between workspaces the compute queue answers for).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The bound on the server's peak resident memory while the bodies arrive (the 600 MB on the 2-core
/// machine).
const PEAK_RSS_BOUND_KB: u64 = 600 * 1024;
/// The other workspace's 99th percentile latency bound for `/healthz` and for a read.
const P99_BOUND: Duration = Duration::from_millis(250);

fn fiscus(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fiscus"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("FISCUS_DATABASE_URL")
        .env_remove("FISCUS_CONFIG")
        .output()
        .expect("run fiscus");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").to_string()
}

/// A workspace with an application holding `scopes`: its key.
fn workspace_key(dir: &std::path::Path, name: &str, scopes: &str) -> String {
    let ws = fiscus(dir, &["admin", "workspace", "create", name]);
    let app = fiscus(
        dir,
        &["admin", "app", "create", "--workspace", &ws, "--name", name, "--environment", "sandbox", "--scopes", scopes],
    );
    fiscus(dir, &["admin", "key", "issue", "--app", &app])
}

/// 1,000 assets × 1,000 periods of returns, about 15.8 MiB of JSON, the last return out of range.
fn large_body() -> &'static [u8] {
    let mut body = String::with_capacity(17 << 20);
    body.push_str("{\"objective\":\"min_variance\",\"returns\":{");
    for a in 0..1000 {
        if a > 0 {
            body.push(',');
        }
        body.push_str(&format!("\"A{a:04}\":["));
        for t in 0..1000 {
            if t > 0 {
                body.push(',');
            }
            let r = if a == 999 && t == 999 { 1000.0 } else { ((a * 7 + t * 13) % 997) as f64 * 1.0e-5 - 0.00498 };
            body.push_str(&format!("{r:.13}"));
        }
        body.push(']');
    }
    body.push_str("}}");
    // Leaked once: every request sends the same bytes without a copy of its own.
    Box::leak(body.into_bytes().into_boxed_slice())
}

fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[test]
fn one_workspace_s_large_bodies_keep_the_process_bounded_and_leave_others_fast() {
    let dir = tempfile::tempdir().expect("dir");
    let heavy = workspace_key(dir.path(), "Heavy", "quant:compute:run");
    let other = workspace_key(dir.path(), "Other", "workspace:read");
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fiscus"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env_remove("FISCUS_DATABASE_URL")
        .env_remove("FISCUS_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let base = format!("http://127.0.0.1:{port}");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let outcome = rt.block_on(async {
        let http = reqwest::Client::new();
        // The node is another process: wait on what it serves (its readiness), asking every 50 ms.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut every = tokio::time::interval(Duration::from_millis(50));
        while !http.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status() == 200) {
            assert!(Instant::now() < deadline, "the server did not start");
            every.tick().await;
        }
        let idle_rss = peak_rss_kb(pid);
        let body = large_body();
        assert!((15 << 20..16 << 20).contains(&body.len()), "{} bytes", body.len());
        // The other workspace reads throughout, on its own connections.
        // The reader says how many rounds it has taken, so the test waits for rounds, not for time.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (rounds_tx, mut rounds) = tokio::sync::watch::channel(0usize);
        let reader = {
            let (base, other, stop) = (base.clone(), other.clone(), stop.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let (mut health, mut reads) = (Vec::new(), Vec::new());
                // A steady pace of one round each 20 ms, like a client polling.
                let mut pace = tokio::time::interval(Duration::from_millis(20));
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = http.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status() == 200);
                    health.push((t.elapsed(), ok));
                    let t = Instant::now();
                    let ok = http
                        .get(format!("{base}/api/v2/workspace"))
                        .bearer_auth(&other)
                        .send()
                        .await
                        .is_ok_and(|r| r.status() == 200);
                    reads.push((t.elapsed(), ok));
                    rounds_tx.send_modify(|n| *n += 1);
                    pace.tick().await;
                }
                (health, reads)
            })
        };
        // Some rounds idle first, to have the reader going before the bodies arrive.
        rounds.wait_for(|n| *n >= 10).await.expect("reader");
        let started = Instant::now();
        let senders: Vec<_> = (0..20)
            .map(|_| {
                let (base, heavy) = (base.clone(), heavy.clone());
                tokio::spawn(async move {
                    let r = reqwest::Client::new()
                        .post(format!("{base}/api/v2/quant/compute/optimizations"))
                        .bearer_auth(&heavy)
                        .header("content-type", "application/json")
                        .body(body)
                        .send()
                        .await;
                    match r {
                        Ok(r) => (r.status().as_u16(), r.headers().contains_key("retry-after")),
                        Err(_) => (0, false),
                    }
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for s in senders {
            statuses.push(s.await.expect("sender"));
        }
        let took = started.elapsed();
        // And some rounds after the last answer, before the reader stops.
        let after = *rounds.borrow() + 10;
        rounds.wait_for(|n| *n >= after).await.expect("reader");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (health, reads) = reader.await.expect("reader");
        (idle_rss, peak_rss_kb(pid), statuses, took, health, reads)
    });
    child.kill().ok();
    child.wait().ok();
    let (idle_rss, peak_rss, statuses, took, health, reads) = outcome;
    let summary = |name: &str, samples: &[(Duration, bool)]| {
        assert!(samples.iter().all(|(_, ok)| *ok), "{name}: every answer 200");
        let mut d: Vec<Duration> = samples.iter().map(|(d, _)| *d).collect();
        d.sort();
        let (p50, p99, max) = (percentile(&d, 0.5), percentile(&d, 0.99), d[d.len() - 1]);
        eprintln!("{name}: {} samples, p50 {p50:?}, p99 {p99:?}, max {max:?}", d.len());
        p99
    };
    let admitted = statuses.iter().filter(|(s, _)| *s == 422).count();
    let refused = statuses.iter().filter(|(s, retry)| *s == 503 && *retry).count();
    eprintln!(
        "20 bodies of 15.8 MiB in {took:?}: {admitted} read and refused (422), {refused} not admitted (503 with \
         Retry-After); peak RSS {} MB (idle {} MB)",
        peak_rss / 1024,
        idle_rss / 1024
    );
    assert_eq!(admitted + refused, 20, "every body is read or refused unread: {statuses:?}");
    assert!(admitted >= 1, "{statuses:?}");
    let health_p99 = summary("/healthz", &health);
    let reads_p99 = summary("GET /workspace (the other workspace)", &reads);
    assert!(peak_rss <= PEAK_RSS_BOUND_KB, "peak RSS {} MB", peak_rss / 1024);
    assert!(health_p99 <= P99_BOUND && reads_p99 <= P99_BOUND, "{health_p99:?} {reads_p99:?}");
}

//! Webhook delivery benchmark for `bench/webhooks.sh`: the real service (its delivery worker included) on
//! loopback, a receiver in this process that answers 200 and notes when each `webhook-id` arrived, and
//! events written into the outbox the way the service writes them (one transaction per batch).
//!
//! `webhook_bench [--database-url U] --rate R --seconds S --burst N` runs two measurements on a fresh data
//! directory (or database) and prints them:
//! 1. sustained: R events/s for S s, in batches every 10 ms; delivered events/s and outbox-to-delivery
//!    latency (the event's `created_at` to its arrival at the receiver) p50, p99 and max;
//! 2. burst: N events written at once; how fast the worker drains them (events/s from the first write to the
//!    last arrival).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::{ActionEventData, Event, EventData, EventType};
use fiscus_domain::scopes::ScopeSet;
use fiscus_kernel::Settings;
use fiscus_server::admin::Admin;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Arrivals = Arc<Mutex<HashMap<String, i64>>>;

async fn hook(State(arrivals): State<Arrivals>, headers: HeaderMap) -> StatusCode {
    let at = now_micros();
    if let Some(id) = headers.get("webhook-id").and_then(|v| v.to_str().ok())
        && let Ok(mut seen) = arrivals.lock()
    {
        seen.entry(id.to_string()).or_insert(at);
    }
    StatusCode::OK
}

fn event(workspace_id: &str) -> Event {
    let now = now_micros();
    Event {
        id: fiscus_domain::ids::new_id("evt"),
        event_type: EventType::ActionApproved,
        created_at: rfc3339(now),
        workspace_id: workspace_id.to_string(),
        environment: Environment::Sandbox,
        actor: Actor::worker("wrk_bench"),
        data: EventData::Action(ActionEventData {
            action_id: fiscus_domain::ids::new_id("act"),
            from_state: Some(ControlState::PendingApproval),
            to_state: ControlState::Approved,
            envelope_hash: format!("sha256:{}", "0".repeat(64)),
            detail: serde_json::json!({ "decision_id": "dec_bench" }),
        }),
    }
}

/// Writes `count` events in one transaction; returns their ids and creation times.
async fn write(state: &fiscus_http::AppState, ws: &str, count: usize) -> anyhow::Result<Vec<(String, i64)>> {
    let mut tx = state.store.begin().await?;
    let mut written = Vec::with_capacity(count);
    for _ in 0..count {
        let e = event(ws);
        let at = fiscus_domain::clock::parse_rfc3339(&e.created_at).unwrap_or_else(now_micros);
        fiscus_store::outbox::enqueue(&mut tx, &e, "act_bench", None, at).await?;
        written.push((e.id, at));
    }
    tx.commit().await?;
    Ok(written)
}

/// Waits until every id arrived (or `timeout`); returns the latencies in microseconds, sorted.
async fn arrived(arrivals: &Arrivals, written: &[(String, i64)], timeout: Duration) -> anyhow::Result<Vec<i64>> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let seen = arrivals.lock().map_err(|_| anyhow::anyhow!("lock"))?.clone();
        let missing = written.iter().filter(|(id, _)| !seen.contains_key(id)).count();
        if missing == 0 {
            let mut latencies: Vec<i64> = written.iter().map(|(id, at)| seen[id] - at).collect();
            latencies.sort_unstable();
            return Ok(latencies);
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("{missing} of {} events not delivered within {timeout:?}", written.len());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn quantile(sorted: &[i64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(0) as f64 / 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut rate, mut seconds, mut burst, mut database_url) = (1000usize, 10usize, 20_000usize, None);
    let mut i = 0;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--rate" => rate = args[i + 1].parse()?,
            "--seconds" => seconds = args[i + 1].parse()?,
            "--burst" => burst = args[i + 1].parse()?,
            "--database-url" => database_url = Some(args[i + 1].clone()),
            other => anyhow::bail!("unknown option {other}"),
        }
        i += 2;
    }
    let dir = tempfile::tempdir()?;
    let mut settings = Settings { data_dir: dir.path().to_path_buf(), database_url, ..Settings::default() };
    settings.webhooks_allow_loopback = true;
    let state = fiscus_server::serve::open(settings).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(fiscus_server::serve::run(state.clone(), listener, async move {
        let _ = stopped.await;
    }));

    let arrivals: Arrivals = Arc::new(Mutex::new(HashMap::new()));
    let receiver = axum::Router::new().route("/hook", axum::routing::post(hook)).with_state(arrivals.clone());
    let rx = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hook_url = format!("http://{}/hook", rx.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(rx, receiver).await;
    });

    let admin = Admin { store: &state.store, server_key: &state.server_key, actor: Actor::cli() };
    let ws = admin.create_workspace("Webhook bench", false).await?;
    let scopes = ScopeSet::parse("agent:execution:webhooks").map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let app = admin.create_application(&ws.id, "webhook-bench", Environment::Sandbox, &scopes, None).await?;
    let key = admin.issue_key(&app.id, None).await?;
    let registered = reqwest::Client::new()
        .post(format!("{base}/api/v2/agent-execution/webhooks"))
        .bearer_auth(&key.secret)
        .json(&serde_json::json!({ "url": hook_url, "event_types": ["action.approved"] }))
        .send()
        .await?;
    anyhow::ensure!(registered.status() == 201, "registration answered {}", registered.status());

    // 1. Sustained rate.
    let per_batch = (rate / 100).max(1);
    let mut written = Vec::with_capacity(rate * seconds);
    let started = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    for _ in 0..seconds * 100 {
        tick.tick().await;
        written.extend(write(&state, &ws.id, per_batch).await?);
    }
    let latencies = arrived(&arrivals, &written, Duration::from_secs(120)).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let offered = written.len() as f64 / (seconds as f64);
    println!(
        "sustained\t{}\tevents\t{offered:.0}\toffered/s\t{:.0}\tdelivered/s\tp50_ms\t{:.1}\tp99_ms\t{:.1}\tmax_ms\t{:.1}",
        written.len(),
        written.len() as f64 / elapsed,
        quantile(&latencies, 0.5),
        quantile(&latencies, 0.99),
        quantile(&latencies, 1.0),
    );

    // 2. Burst.
    let started = tokio::time::Instant::now();
    let mut burst_written = Vec::with_capacity(burst);
    while burst_written.len() < burst {
        let n = (burst - burst_written.len()).min(1000);
        burst_written.extend(write(&state, &ws.id, n).await?);
    }
    let latencies = arrived(&arrivals, &burst_written, Duration::from_secs(300)).await?;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "burst\t{}\tevents\t{:.0}\tdelivered/s\tp99_ms\t{:.1}",
        burst_written.len(),
        burst_written.len() as f64 / elapsed,
        quantile(&latencies, 0.99)
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
    Ok(())
}

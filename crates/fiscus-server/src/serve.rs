//! Serving and stopping the service: the listener, every worker, and the orderly stop (drain, hand-back,
//! flushes). A process's start is `start.rs`.

use anyhow::Context;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;

use fiscus_http::AppState;
use fiscus_kernel::progress::Worker;

// The entry points the binary and the tests await return futures boxed here (see `fiscus_store::Boxed`),
// so the service's start and serve loop, every worker's included, compile once, in this crate.
use fiscus_store::Boxed;

// A node's start (opening the database, the shared settings, waiting for PostgreSQL) is `start.rs`.
pub use crate::start::{
    Agreement, Unreachable, open, open_node, open_when_ready, open_with, shared_settings, shutdown_signal,
};

/// Serves until `shutdown` resolves, then lets in-flight requests finish (bounded by the grace period),
/// flushes the request log and closes the pool.
pub fn run(
    state: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Boxed<'static, anyhow::Result<()>> {
    serving(state, listener, Box::pin(shutdown))
}

/// [`run`] once its `shutdown` is boxed: not generic, so compiled here only.
fn serving(state: AppState, listener: TcpListener, shutdown: Boxed<'static, ()>) -> Boxed<'static, anyhow::Result<()>> {
    Box::pin(async move {
        // A serving node caches credentials; with PostgreSQL that needs its watch of the standing generation.
        state.store.watch_standing();
        let app = crate::app::build(state.clone());
        let background = spawn_background(state.clone());
        if let Some(files) = &state.settings.iso20022 {
            fiscus_platform::actions::bank_files::check_directories(files).map_err(anyhow::Error::msg)?;
        }
        // The name this node's workers claim under, in every queue: what they hold is handed back under it
        // when the node stops.
        let claimer = fiscus_domain::ids::new_id("wrk");
        let worker = spawn_settlement_worker(state.clone(), claimer.clone());
        let evidence = spawn_evidence_worker(state.clone());
        let banker = (state.settings.iso20022.is_some() && state.settings.bank_file_worker)
            .then(|| spawn_bank_file_worker(state.clone()));
        let computer = state.settings.compute_worker.then(|| spawn_compute_worker(state.clone(), claimer.clone()));
        let deliverer = state.settings.webhook_worker.then(|| spawn_webhook_worker(state.clone(), claimer.clone()));
        let flows = state.settings.workflow_worker.then(|| spawn_workflow_worker(state.clone(), claimer.clone()));
        let agents = (state.settings.agent_worker
            && state.settings.agent_queue == fiscus_kernel::settings::AgentQueue::Database)
            .then(|| spawn_agent_worker(state.clone(), claimer.clone()));
        let grace = Duration::from_secs(state.settings.shutdown_grace_seconds);
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        let max_connections = fiscus_http::connections::effective_max_connections(state.settings.max_connections);
        let limits = fiscus_http::connections::Limits {
            max_connections,
            header_read_timeout: Duration::from_secs(state.settings.header_read_timeout_seconds),
            // One address never holds more than half the slots anonymously, whatever the setting says.
            unauthenticated_per_address: match state.settings.unauthenticated_connections_per_address {
                0 => 0,
                n => n.min((max_connections / 2).max(1)),
            },
            body: fiscus_http::connections::Pace {
                grace: Duration::from_secs(state.settings.body_read_timeout_seconds.max(1)),
                min_bytes_per_second: state.settings.body_min_bytes_per_second.max(1),
            },
        };
        tracing::info!(max_connections = limits.max_connections, "accepting connections");
        let drain = Duration::from_secs(state.settings.shutdown_drain_seconds);
        let draining = state.clone();
        let serving = tokio::spawn(fiscus_http::connections::serve(listener, app, limits, async move {
            shutdown.await;
            // `/readyz` goes 503 first and the node keeps serving for the drain, so a load balancer takes it
            // out of rotation before connections are refused.
            draining.http.draining.store(true, std::sync::atomic::Ordering::Release);
            if !drain.is_zero() {
                tracing::info!(seconds = drain.as_secs(), "draining: /readyz answers 503 until accepting stops");
                tokio::time::sleep(drain).await;
            }
            let _ = stopped_tx.send(());
        }));
        let result = tokio::select! {
            r = serving => r.context("server task"),
            _ = async {
                let _ = stopped_rx.await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!("in-flight requests did not finish within the grace period");
                Ok(())
            }
        };
        // Running computations stop at their next check. The workers stopped claiming when the drain began
        // (they look at `draining` before each pass) and finish the pass they are in; one still busy after
        // `STOPPING` is aborted where it is (its transaction rolls back). What they held is handed back, for
        // another node (or this one when it is back) to take at once.
        state.compute.close();
        background.abort();
        let workers = [Some(worker), Some(evidence), computer, deliverer, flows, agents, banker];
        stop_workers(workers.into_iter().flatten().collect()).await;
        // Every step from here is bounded: a node that cannot finish them still exits, and the database
        // releases whatever its connections held (a node that hung here once held a row lock every node's
        // writes waited on).
        bounded("handing back claims", hand_back(&state, &claimer)).await;
        bounded("the final flush of tool invocation rows", async {
            if let Err(e) = state.invocations.flush(&state.store).await {
                tracing::warn!(error = %e, "final flush of tool invocation rows failed");
            }
        })
        .await;
        bounded("the final usage flush", async {
            if let Err(e) = state.http.usage.flush(&state.store).await {
                tracing::warn!(error = %e, "final usage flush failed");
            }
        })
        .await;
        bounded("anchoring the audit heads", anchor_heads(&state)).await;
        bounded("closing the database pool", state.store.close()).await;
        result
    })
}

/// How long a stopping node waits for its workers to finish the pass they are in, and for each step of its
/// stop after that.
const STOPPING: Duration = Duration::from_secs(5);

/// Waits up to [`STOPPING`] for the workers (which stop claiming once the node drains) to end their pass,
/// then aborts those still running.
async fn stop_workers(tasks: Vec<tokio::task::JoinHandle<()>>) {
    let aborts: Vec<_> = tasks.iter().map(|t| t.abort_handle()).collect();
    let all = async {
        for task in tasks {
            let _ = task.await;
        }
    };
    if tokio::time::timeout(STOPPING, all).await.is_err() {
        tracing::warn!("a worker was still busy when the node stopped; its pass is aborted and its claims handed back");
        for abort in aborts {
            abort.abort();
        }
    }
}

/// Runs one step of the stop, giving up after [`STOPPING`].
async fn bounded(what: &str, step: impl Future<Output = ()>) {
    if tokio::time::timeout(STOPPING, step).await.is_err() {
        tracing::warn!(step = what, "a step of the stop did not finish in time; the node stops without it");
    }
}

/// Whether this node is stopping: its workers claim nothing more once it drains.
fn stopping(state: &AppState) -> bool {
    state.http.draining.load(std::sync::atomic::Ordering::Acquire)
}

/// Background work of every node: flushing the request log, purging expired idempotency keys, forgetting
/// signature nonces whose signatures can no longer be fresh, and the webhook delivery log past its retention.
fn spawn_background(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut seconds: u64 = 0;
        loop {
            tick.tick().await;
            seconds += 1;
            if let Err(e) = state.http.usage.flush(&state.store).await {
                tracing::warn!(error = %e, "usage flush failed; counts are kept for the next try");
            }
            if let Err(e) = state.invocations.flush(&state.store).await {
                tracing::warn!(error = %e, "tool invocation flush failed; rows are kept for the next try");
            }
            if seconds.is_multiple_of(state.settings.audit_anchor_interval_seconds.max(1)) {
                anchor_heads(&state).await;
            }
            if seconds.is_multiple_of(600) {
                let purge = async {
                    let now = fiscus_domain::clock::now_micros();
                    let mut tx = state.store.begin().await?;
                    let n = fiscus_store::idempotency::purge_expired(tx.conn(), now).await?;
                    fiscus_store::execution_clients::sweep_nonces(tx.conn(), now).await?;
                    tx.commit().await?;
                    Ok::<u64, fiscus_store::StoreError>(n)
                };
                match purge.await {
                    Ok(n) if n > 0 => tracing::info!(purged = n, "expired idempotency keys purged"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "idempotency purge failed"),
                }
                // Its own transaction: a failure here never holds back the purges above.
                let log = async {
                    let now = fiscus_domain::clock::now_micros();
                    let retention = i64::try_from(state.settings.webhook_log_retention_days).unwrap_or(30);
                    let before = now - retention * 86_400 * fiscus_domain::clock::MICROS_PER_SECOND;
                    let mut tx = state.store.begin().await?;
                    let n = fiscus_store::webhook_deliveries::purge(tx.conn(), before).await?;
                    tx.commit().await?;
                    Ok::<u64, fiscus_store::StoreError>(n)
                };
                if let Err(e) = log.await {
                    tracing::warn!(error = %e, "webhook delivery log purge failed");
                }
            }
        }
    })
}

/// This node's settlement worker. Any number of nodes may run one against the same database.
pub fn spawn_settlement_worker(state: AppState, worker: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(state.settings.worker_interval_ms.max(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        state.progress.started(Worker::Settlement);
        loop {
            tick.tick().await;
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::Settlement);
            let worked = match crate::workers::settlement::run_once(&state, &worker).await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "settlement worker pass failed");
                    1
                }
            };
            state.progress.end(pass, worked);
        }
    })
}

/// This node's evidence worker: integrates the workspaces' transparency logs and signs their checkpoints
/// (`fiscus_kernel::evidence`). Any number of nodes may run one: an integration checks the tree unchanged
/// before it writes, and a checkpoint of a size already signed is kept once.
pub fn spawn_evidence_worker(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if stopping(&state) {
                break;
            }
            if let Err(e) = fiscus_kernel::evidence::run_once(&state).await {
                tracing::warn!(error = %e, "evidence worker pass failed");
            }
        }
    })
}

/// This node's bank file worker (the `iso20022` connector's files out and messages in). Any number of nodes
/// may run one against the same database.
pub fn spawn_bank_file_worker(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let worker = fiscus_domain::ids::new_id("wrk");
        let mut tick = tokio::time::interval(Duration::from_millis(state.settings.worker_interval_ms.max(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        state.progress.started(Worker::BankFiles);
        loop {
            tick.tick().await;
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::BankFiles);
            let worked = match crate::workers::bank_files::run_once(&state, &worker).await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "bank file worker pass failed");
                    1
                }
            };
            state.progress.end(pass, worked);
        }
    })
}

/// This node's compute worker. Any number of nodes may run one against the same database. It is woken when
/// a job is queued on this node and polls otherwise (jobs queued on other nodes, retaken claims).
pub fn spawn_compute_worker(state: AppState, worker: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let idle = Duration::from_millis(state.settings.worker_interval_ms.clamp(10, 500));
        state.progress.started(Worker::Compute);
        loop {
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::Compute);
            // A failed pass counts as work (what it failed on is still due) and waits like an idle one.
            let (claimed, wait) = match crate::workers::compute::run_once(&state, &worker).await {
                Ok(n) => (n, n == 0),
                Err(e) => {
                    tracing::warn!(error = %e, "compute worker pass failed");
                    (1, true)
                }
            };
            state.progress.end(pass, claimed);
            if wait {
                let _ = tokio::time::timeout(idle, state.compute.wake.notified()).await;
            }
        }
    })
}

/// This node's workflow worker. Any number of nodes may run one against the same database. It is woken
/// when a run becomes due on this node and polls otherwise (timers, runs started on other nodes, retaken
/// claims).
pub fn spawn_workflow_worker(state: AppState, worker: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let idle = Duration::from_millis(state.settings.worker_interval_ms.clamp(10, 500));
        state.progress.started(Worker::Workflows);
        loop {
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::Workflows);
            // A failed pass counts as work (what it failed on is still due) and waits like an idle one.
            let (claimed, wait) = match crate::workers::workflows::run_once(&state, &worker).await {
                Ok(n) => (n, n == 0),
                Err(e) => {
                    tracing::warn!(error = %e, "workflow worker pass failed");
                    (1, true)
                }
            };
            state.progress.end(pass, claimed);
            if wait {
                let _ = tokio::time::timeout(idle, state.workflows_wake.notified()).await;
            }
        }
    })
}

/// This node's agent worker for queued Agent Space runs. Any number of nodes may run one against the same
/// database. It is woken when a run is queued on this node and polls otherwise.
pub fn spawn_agent_worker(state: AppState, worker: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let idle = Duration::from_millis(state.settings.worker_interval_ms.clamp(10, 500));
        state.progress.started(Worker::AgentRuns);
        loop {
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::AgentRuns);
            // A failed pass counts as work (what it failed on is still due) and waits like an idle one.
            let (claimed, wait) = match crate::workers::agent_runs::run_once(&state, &worker).await {
                Ok(n) => (n, n == 0),
                Err(e) => {
                    tracing::warn!(error = %e, "agent worker pass failed");
                    (1, true)
                }
            };
            state.progress.end(pass, claimed);
            if wait {
                let _ = tokio::time::timeout(idle, state.spaces_wake.notified()).await;
            }
        }
    })
}

/// This node's webhook delivery worker. Any number of nodes may run one against the same database. It polls
/// at most every 100 ms when idle and goes on at once while there is work.
pub fn spawn_webhook_worker(state: AppState, worker: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let clients = match fiscus_kernel::deliveries::Clients::new(&state) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "webhook delivery is off: its HTTP client cannot be built");
                return;
            }
        };
        let idle = Duration::from_millis(state.settings.worker_interval_ms.clamp(10, 100));
        state.progress.started(Worker::Webhooks);
        loop {
            if stopping(&state) {
                break;
            }
            let pass = state.progress.begin(Worker::Webhooks);
            let (worked, wait) = match crate::workers::webhooks::run_once(&state, &clients, &worker).await {
                Ok(done) => (done.fanned_out + done.claimed, done.fanned_out + done.claimed == 0),
                Err(e) => {
                    tracing::warn!(error = %e, "webhook delivery pass failed");
                    (1, true)
                }
            };
            state.progress.end(pass, worked);
            if wait {
                tokio::time::sleep(idle).await;
            }
        }
    })
}

/// Hands back what this node's workers (all claiming as `claimer`) hold, once they were stopped: queued
/// again at once for another node rather than after each claim's stale time (`fiscus_store::hand_back`). A
/// failure only delays the work: the claims then go stale and are taken over as after a crash.
async fn hand_back(state: &AppState, claimer: &str) {
    let handed = async {
        let mut tx = state.store.begin().await?;
        let n = fiscus_store::hand_back::all(&mut tx, claimer).await?;
        tx.commit().await?;
        Ok::<_, fiscus_store::StoreError>(n)
    };
    match handed.await {
        Ok(n) if n.total() == 0 => {}
        Ok(n) => tracing::info!(
            compute_jobs = n.compute_jobs,
            settlement_items = n.settlement_items,
            workflow_runs = n.workflow_runs,
            agent_runs = n.agent_runs,
            webhook_queues = n.webhook_queues,
            "claims handed back for another node"
        ),
        Err(e) => tracing::warn!(error = %e, "handing back claims failed; they are taken over when stale"),
    }
}

/// Moves the audit anchors forward; a chain that no longer reaches its anchor is an alarm, not a warning.
pub async fn anchor_heads(state: &AppState) {
    match fiscus_kernel::anchor::refresh(state).await {
        Ok(broken) => {
            for workspace_id in broken {
                tracing::error!(
                    workspace_id,
                    "the audit chain no longer reaches its anchored head: events were removed"
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not anchor the audit heads"),
    }
}

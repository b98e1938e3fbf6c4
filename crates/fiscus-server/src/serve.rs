//! Serving and stopping the service: the listener, every worker, and the orderly stop (drain, hand-back,
//! flushes). A process's start is `start.rs`.

use anyhow::Context;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;

use fiscus_http::AppState;

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
        // The name this node's workers claim under, in every queue: what they hold is handed back under it
        // when the node stops.
        let claimer = fiscus_domain::ids::new_id("wrk");
        let (app, dispatcher) = crate::app::assemble(state.clone());
        if let Some(files) = &state.settings.iso20022 {
            fiscus_actions::bank_files::check_directories(files).map_err(anyhow::Error::msg)?;
        }
        let workers = spawn_workers(&state.services, &dispatcher, &claimer);
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
            draining.draining.store(true, std::sync::atomic::Ordering::Release);
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
        stop_workers(workers).await;
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
            if let Err(e) = state.usage.flush(&state.store).await {
                tracing::warn!(error = %e, "final usage flush failed");
            }
        })
        .await;
        bounded("anchoring the audit heads", crate::workers::housekeeping::anchor_heads(&state)).await;
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

/// Starts every worker this node runs (`crate::workers`): settlement, the log's integrator and housekeeping
/// always; bank files, compute, webhook delivery, workflows and queued Agent Space runs as the settings say.
/// Each claims as `claimer` (bank files under a name of their own: their claims are files, handed back by
/// their own stale time).
fn spawn_workers(
    services: &fiscus_kernel::Services,
    dispatcher: &fiscus_agents::dispatch::Dispatcher,
    claimer: &str,
) -> Vec<tokio::task::JoinHandle<()>> {
    use crate::workers::{self, spawn};
    let s = &services.settings;
    let claimer = || claimer.to_string();
    let mut tasks = vec![
        spawn(services.clone(), workers::housekeeping::Housekeeping::default()),
        spawn(services.clone(), workers::settlement::Settlement { claimer: claimer() }),
        spawn(services.clone(), workers::evidence::Evidence),
    ];
    if s.iso20022.is_some() && s.bank_file_worker {
        let bank = workers::bank_files::BankFiles { claimer: fiscus_domain::ids::new_id("wrk") };
        tasks.push(spawn(services.clone(), bank));
    }
    if s.compute_worker {
        tasks.push(spawn(services.clone(), workers::compute::Compute { claimer: claimer() }));
    }
    if s.webhook_worker {
        match workers::webhooks::Webhooks::new(services, claimer()) {
            Ok(w) => tasks.push(spawn(services.clone(), w)),
            Err(e) => tracing::error!(error = %e, "webhook delivery is off: its HTTP client cannot be built"),
        }
    }
    if s.workflow_worker {
        tasks.push(spawn(services.clone(), workers::workflows::Workflows { claimer: claimer() }));
    }
    if s.agent_worker && s.agent_queue == fiscus_kernel::settings::AgentQueue::Database {
        let runs = workers::agent_runs::AgentRuns { claimer: claimer(), dispatcher: dispatcher.clone() };
        tasks.push(spawn(services.clone(), runs));
    }
    tasks
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

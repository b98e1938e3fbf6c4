//! Background work any node may run (claims are exclusive across nodes): settlement through connectors,
//! bank files out and bank messages in, webhook delivery, compute jobs, workflow runs, queued Agent Space
//! runs, the transparency log's integration and the node's housekeeping. Each is a [`Worker`]; [`spawn`]
//! runs any of them in the one loop (`worker.rs`).

pub mod agent_runs;
pub mod bank_files;
pub mod compute;
pub mod evidence;
pub mod housekeeping;
pub mod settlement;
pub mod webhooks;
mod worker;
pub mod workflows;

pub use worker::{Pace, Worker, spawn, stopping};

use fiscus_domain::actor::Actor;
use fiscus_kernel::Services;
use fiscus_kernel::governed::{Caller, Failure, set_aside};
use fiscus_store::StoreError;
use fiscus_store::run_claims::{Claimed, RunQueue};

/// Sets a claimed run aside whose record failed its seal, and lets go of its claim, so no later claim takes
/// it and it holds none of its workspace's share (issue 54); a failure to do so is logged and the run is
/// retried at its stale time, as before.
async fn set_aside_run(services: &Services, worker: &str, queue: &RunQueue, run: &Claimed, e: &StoreError) {
    let caller = Caller::bare(Actor::worker(worker));
    let bad = [fiscus_store::set_aside::Bad {
        record_id: run.run_id.clone(),
        tenant: run.tenant.clone(),
        reason: format!("it failed its seal (edited outside Fiscus): {e}"),
    }];
    let done = async {
        let mut tx = services.store.begin().await?;
        set_aside::record(&mut tx, &caller, queue.table, &bad).await?;
        fiscus_store::run_claims::release(&mut tx, queue, &run.run_id, worker).await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    };
    if let Err(e) = done.await {
        tracing::warn!(run = %run.run_id, error = ?e, "a run could not be set aside; it will be retried");
    }
}

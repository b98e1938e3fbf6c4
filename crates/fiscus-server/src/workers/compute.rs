//! The compute worker, on every node: claims queued jobs (and running ones whose node went silent) as the
//! CPU pool has room, exclusive across nodes, and runs each through the application layer
//! (`compute::execute`) in its own task.

use fiscus_domain::clock::now_micros;

use crate::compute::STALE_AFTER;
use crate::state::AppState;

/// Claims as many jobs as the pool has free threads and starts them; returns how many it started.
pub async fn run_once(state: &AppState, worker: &str) -> anyhow::Result<usize> {
    let free = state.compute.free();
    if free == 0 {
        return Ok(0);
    }
    let mut tx = state.store.begin().await?;
    let claimed = fiscus_store::compute::claim(&mut tx, worker, now_micros(), STALE_AFTER, free as i64).await?;
    tx.commit().await?;
    let started = claimed.len();
    for job in claimed {
        let (state, worker) = (state.clone(), worker.to_string());
        tokio::spawn(async move {
            let id = job.id.clone();
            if let Err(e) = crate::compute::execute(&state, &worker, job).await {
                tracing::warn!(job = %id, error = ?e, "a compute job could not be ended; it will be retaken");
            }
        });
    }
    Ok(started)
}

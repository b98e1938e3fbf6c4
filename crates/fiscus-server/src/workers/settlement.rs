//! The settlement worker: claims due execution work from every workspace (exclusive across nodes) and
//! settles each item through the application layer (`governed::actions::settle`), one transaction per item.

use fiscus_domain::actor::Actor;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_store::settlement::Job;

use fiscus_kernel::Services;
use fiscus_kernel::governed::actions::settle::{Settled, settle};
use fiscus_kernel::governed::{Caller, Failure};

/// Claims and processes one batch; returns how many items it finished.
pub async fn run_once(state: &Services, worker: &str) -> anyhow::Result<usize> {
    let now = now_micros();
    let mut tx = state.store.begin().await?;
    let jobs = fiscus_store::settlement::claim(&mut tx, worker, now, 60 * MICROS_PER_SECOND, 16).await?;
    tx.commit().await?;
    let caller = Caller::bare(Actor::worker(worker));
    let mut done = 0;
    for job in jobs {
        match process(state, &caller, &job).await {
            Ok(true) => done += 1,
            Ok(false) => tracing::info!(job = %job.id, "the claim was taken over; leaving the item to its new worker"),
            Err(e) => {
                tracing::warn!(job = %job.id, action = %job.action_id, error = ?e, "settlement item failed; it will be retried")
            }
        }
    }
    Ok(done)
}

/// Settles one item; false when this worker no longer holds its claim (nothing is committed then).
async fn process(state: &Services, caller: &Caller, job: &Job) -> Result<bool, Failure> {
    let mut tx = state.store.begin().await?;
    match settle(&mut tx, &state.settings, caller, job, state.book.as_ref()).await? {
        Settled::ClaimLost => Ok(false),
        Settled::Moved(_) | Settled::AlreadyDone => {
            tx.commit().await?;
            Ok(true)
        }
    }
}

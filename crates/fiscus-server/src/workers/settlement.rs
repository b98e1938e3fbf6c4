//! The settlement worker: claims due execution work from every workspace (exclusive across nodes) and
//! settles each item through the application layer (`fiscus_actions::steps::settle`), one transaction per item.
//! An item whose action fails its seal is set aside (`governed::set_aside`) rather than retried forever.

use fiscus_actions::tables::settlement::Job;
use fiscus_domain::actor::Actor;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};

use fiscus_actions::steps::settle::{Settled, settle};
use fiscus_kernel::Services;
use fiscus_kernel::governed::{Caller, Failure, set_aside};
use fiscus_store::StoreError;
use fiscus_store::set_aside::Bad;

/// Claims and processes one batch; returns how many items it finished.
pub async fn run_once(services: &Services, worker: &str) -> anyhow::Result<usize> {
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    let jobs = fiscus_actions::tables::settlement::claim(&mut tx, worker, now, 60 * MICROS_PER_SECOND, 16).await?;
    tx.commit().await?;
    let caller = Caller::bare(Actor::worker(worker));
    let mut done = 0;
    for job in jobs {
        match process(services, &caller, &job).await {
            Ok(true) => done += 1,
            Ok(false) => tracing::info!(job = %job.id, "the claim was taken over; leaving the item to its new worker"),
            // The action (or what it binds) failed its seal: the item is set aside, never retried, and every
            // other item goes on (issue 54).
            Err(Failure::Store(e @ StoreError::Tampered(_))) => {
                let bad = [Bad {
                    record_id: job.id.clone(),
                    tenant: job.tenant.clone(),
                    reason: format!("its action {} failed its seal (edited outside Fiscus): {e}", job.action_id),
                }];
                let set_aside = async {
                    let mut tx = services.store.begin().await?;
                    set_aside::record(&mut tx, &caller, "settlement_jobs", &bad).await?;
                    tx.commit().await?;
                    Ok::<(), Failure>(())
                };
                if let Err(e) = set_aside.await {
                    tracing::warn!(job = %job.id, error = ?e, "a settlement item could not be set aside; it will be retried");
                }
            }
            Err(e) => {
                tracing::warn!(job = %job.id, action = %job.action_id, error = ?e, "settlement item failed; it will be retried")
            }
        }
    }
    Ok(done)
}

/// Settles one item; false when this worker no longer holds its claim (nothing is committed then).
async fn process(services: &Services, caller: &Caller, job: &Job) -> Result<bool, Failure> {
    let mut tx = services.store.begin().await?;
    match settle(&mut tx, &services.settings, caller, job, services.book.as_ref()).await? {
        Settled::ClaimLost => Ok(false),
        Settled::Moved(_) | Settled::AlreadyDone => {
            tx.commit().await?;
            Ok(true)
        }
    }
}

/// The settlement worker as the node runs it: a pass every `worker_interval_ms`, busy or idle (each pass
/// calls connectors, so its cadence is bounded).
pub struct Settlement {
    pub claimer: String,
}

impl super::Worker for Settlement {
    const NAME: &'static str = "settlement";
    const SLOT: Option<fiscus_kernel::progress::Worker> = Some(fiscus_kernel::progress::Worker::Settlement);

    fn pace(&self, services: &fiscus_kernel::Services) -> super::Pace {
        super::Pace::Every(std::time::Duration::from_millis(services.settings.worker_interval_ms.max(10)))
    }

    async fn pass(&mut self, services: &fiscus_kernel::Services) -> anyhow::Result<usize> {
        run_once(services, &self.claimer).await
    }
}

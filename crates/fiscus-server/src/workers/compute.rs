//! The compute worker, on every node: claims queued jobs (and running ones whose node went silent), only as
//! many as it has job threads free (reserved first), exclusive across nodes, and runs each through the
//! application layer (`compute::execute`) in its own task.

use fiscus_domain::clock::now_micros;

use fiscus_kernel::Services;
use fiscus_kernel::progress::Worker;
use fiscus_models::compute::STALE_AFTER;

/// Reserves the pool's free job threads, claims as many jobs, starts each on its thread and releases the
/// threads left over; returns how many it started.
pub async fn run_once(services: &Services, worker: &str) -> anyhow::Result<usize> {
    let mut threads = Vec::new();
    while let Some(t) = services.compute.reserve() {
        threads.push(t);
    }
    if threads.is_empty() {
        return Ok(0);
    }
    let mut tx = services.store.begin().await?;
    let per_workspace = i64::try_from(services.compute.per_workspace()).unwrap_or(1);
    let claimed = fiscus_models::tables::compute::claim(
        &mut tx,
        worker,
        now_micros(),
        STALE_AFTER,
        threads.len() as i64,
        per_workspace,
    )
    .await?;
    tx.commit().await?;
    let started = claimed.len();
    for (job, thread) in claimed.into_iter().zip(threads) {
        let (services, worker) = (services.clone(), worker.to_string());
        let task = services.progress.task(Worker::Compute);
        tokio::spawn(async move {
            let _task = task;
            let id = job.id.clone();
            if let Err(e) = fiscus_models::compute::execute(&services, &worker, job, thread).await {
                tracing::warn!(job = %id, error = ?e, "a compute job could not be ended; it will be retaken");
            }
        });
    }
    Ok(started)
}

/// The compute worker as the node runs it: woken when a job is queued on this node, polling otherwise
/// (jobs queued on other nodes, retaken claims).
pub struct Compute {
    pub claimer: String,
}

impl super::Worker for Compute {
    const NAME: &'static str = "compute";
    const SLOT: Option<Worker> = Some(Worker::Compute);

    fn pace(&self, services: &fiscus_kernel::Services) -> super::Pace {
        super::Pace::WhenIdle(std::time::Duration::from_millis(services.settings.worker_interval_ms.clamp(10, 500)))
    }

    fn wake<'s>(&self, services: &'s fiscus_kernel::Services) -> Option<&'s tokio::sync::Notify> {
        Some(&services.compute.wake)
    }

    async fn pass(&mut self, services: &fiscus_kernel::Services) -> anyhow::Result<usize> {
        run_once(services, &self.claimer).await
    }
}

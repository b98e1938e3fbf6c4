//! The workflow worker: claims due runs from every workspace (exclusive across nodes; a claim silent for
//! 30 s is taken over) and advances each through the runtime (`workflows::runtime`).

use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};

use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_store::StoreError;

/// A claim older than this is taken over (its worker died or hangs); the run goes on from its history.
const STALE_SECONDS: i64 = 30;

/// Claims and advances one batch; returns how many runs it advanced.
pub async fn run_once(services: &Services, worker: &str) -> anyhow::Result<usize> {
    let mut tx = services.store.begin().await?;
    let per_workspace = i64::try_from(services.settings.runs_per_workspace.max(1)).unwrap_or(1);
    let stale = STALE_SECONDS * MICROS_PER_SECOND;
    let claimed =
        fiscus_agents::tables::workflows::claim(&mut tx, worker, now_micros(), stale, 8, per_workspace).await?;
    tx.commit().await?;
    let mut done = 0;
    for run in &claimed {
        match fiscus_agents::workflows::runtime::advance(services, worker, run).await {
            Ok(()) => done += 1,
            // The run's own record failed its seal: set aside, never retried (issue 54).
            Err(Failure::Store(e @ StoreError::Tampered(_))) => {
                super::set_aside_run(services, worker, &fiscus_agents::tables::workflows::WORKFLOW_RUNS, run, &e).await;
            }
            Err(e) => tracing::warn!(run = %run.run_id, error = ?e, "workflow run step failed; it will be retried"),
        }
    }
    Ok(done)
}

/// The workflow worker as the node runs it: woken when a run becomes due on this node, polling otherwise
/// (timers, runs started on other nodes, retaken claims).
pub struct Workflows {
    pub claimer: String,
}

impl super::Worker for Workflows {
    const NAME: &'static str = "workflows";
    const SLOT: Option<fiscus_kernel::progress::Worker> = Some(fiscus_kernel::progress::Worker::Workflows);

    fn pace(&self, services: &fiscus_kernel::Services) -> super::Pace {
        super::Pace::WhenIdle(std::time::Duration::from_millis(services.settings.worker_interval_ms.clamp(10, 500)))
    }

    fn wake<'s>(&self, services: &'s fiscus_kernel::Services) -> Option<&'s tokio::sync::Notify> {
        Some(&services.workflows_wake)
    }

    async fn pass(&mut self, services: &fiscus_kernel::Services) -> anyhow::Result<usize> {
        run_once(services, &self.claimer).await
    }
}

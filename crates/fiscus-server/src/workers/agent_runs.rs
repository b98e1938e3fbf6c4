//! The agent worker: claims queued Agent Space runs from every workspace (exclusive across nodes; a claim
//! silent for 60 s is taken over, and the run goes on from the calls it recorded) and carries each out with
//! the native runtime (`spaces::runs::execute`). Beside the services it holds the dispatcher the composition
//! built (`crate::app::dispatcher`): a run's tool calls go through the service's own routes.

use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};

use fiscus_agents::dispatch::Dispatcher;
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_store::StoreError;

/// A claim older than this is taken over (its worker died or hangs).
const STALE_SECONDS: i64 = 60;

/// Claims and carries out one batch; returns how many runs it carried out.
pub async fn run_once(services: &Services, dispatcher: &Dispatcher, worker: &str) -> anyhow::Result<usize> {
    let mut tx = services.store.begin().await?;
    let per_workspace = i64::try_from(services.settings.runs_per_workspace.max(1)).unwrap_or(1);
    let stale = STALE_SECONDS * MICROS_PER_SECOND;
    let claimed = fiscus_agents::tables::spaces::claim(&mut tx, worker, now_micros(), stale, 4, per_workspace).await?;
    tx.commit().await?;
    let mut done = 0;
    for run in &claimed {
        let request_id = fiscus_domain::ids::new_id("req");
        match fiscus_agents::spaces::runs::execute(services, dispatcher, &run.tenant, &run.run_id, &request_id).await {
            Ok(_) => done += 1,
            // The run's record (or a call it recorded) failed its seal: set aside, never retried (issue 54).
            Err(Failure::Store(e @ StoreError::Tampered(_))) => {
                super::set_aside_run(services, worker, &fiscus_agents::tables::spaces::AGENT_RUNS, run, &e).await;
            }
            Err(e) => tracing::warn!(run = %run.run_id, error = ?e, "agent run failed to advance; it will be retried"),
        }
    }
    Ok(done)
}

/// The agent worker as the node runs it: woken when a run is queued on this node, polling otherwise.
pub struct AgentRuns {
    pub claimer: String,
    pub dispatcher: Dispatcher,
}

impl super::Worker for AgentRuns {
    const NAME: &'static str = "agent runs";
    const SLOT: Option<fiscus_kernel::progress::Worker> = Some(fiscus_kernel::progress::Worker::AgentRuns);

    fn pace(&self, services: &Services) -> super::Pace {
        super::Pace::WhenIdle(std::time::Duration::from_millis(services.settings.worker_interval_ms.clamp(10, 500)))
    }

    fn wake<'s>(&self, services: &'s Services) -> Option<&'s tokio::sync::Notify> {
        Some(&services.spaces_wake)
    }

    async fn pass(&mut self, services: &Services) -> anyhow::Result<usize> {
        run_once(services, &self.dispatcher, &self.claimer).await
    }
}

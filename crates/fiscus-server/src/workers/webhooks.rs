//! The webhook delivery worker, on every node: each pass fans the outbox out into deliveries, claims as many
//! due endpoint queues as it has free tasks for (exclusive across nodes, least-served workspace first) and
//! serves each in its own task through `fiscus_kernel::deliveries`, where the delivery rules are.

use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_kernel::Services;
use fiscus_kernel::deliveries::{Clients, serve_queue};
use fiscus_kernel::progress::Worker;
use fiscus_kernel::tables::webhook_deliveries as deliveries;

/// Events fanned out per pass.
const FAN_OUT: i64 = 1000;

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    pub fanned_out: usize,
    /// Queues claimed (now being served in their own tasks).
    pub claimed: usize,
}

/// One pass: fan out, then claim as many due queues as this worker has free tasks for, and serve each in its
/// own task. A slow receiver occupies only its own task: the next pass does not wait for it.
pub async fn run_once(services: &Services, clients: &Clients, worker: &str) -> anyhow::Result<Pass> {
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    let fanned = deliveries::fan_out(&mut tx, now, FAN_OUT).await?;
    tx.commit().await?;
    let free = clients.free();
    if free == 0 {
        return Ok(Pass { fanned_out: fanned.events, claimed: 0 });
    }
    let stale = i64::try_from(services.settings.webhook_claim_stale_seconds).unwrap_or(60).max(1) * MICROS_PER_SECOND;
    let mut tx = services.store.begin().await?;
    let limit = i64::try_from(free).unwrap_or(1);
    let per_workspace = i64::try_from(services.settings.webhook_queues_per_workspace.max(1)).unwrap_or(1);
    let queues = deliveries::claim(&mut tx, worker, now_micros(), now_micros() - stale, limit, per_workspace).await?;
    tx.commit().await?;
    let claimed = queues.len();
    for queue in queues {
        let Some(permit) = clients.slot() else { break };
        let (services, clients, worker) = (services.clone(), clients.clone(), worker.to_string());
        let task = services.progress.task(Worker::Webhooks);
        tokio::spawn(async move {
            let (_permit, _task) = (permit, task);
            if let Err(e) = serve_queue(&services, &clients, &worker, &queue).await {
                tracing::warn!(endpoint = %queue.endpoint_id, error = %e, "webhook queue pass failed; its claim will go stale and be retaken");
            }
        });
    }
    Ok(Pass { fanned_out: fanned.events, claimed })
}

/// The webhook delivery worker as the node runs it: passes back to back while there is work, at most every
/// 100 ms when idle. Its HTTP clients are built once, when it starts.
pub struct Webhooks {
    pub claimer: String,
    pub clients: Clients,
}

impl Webhooks {
    /// The worker, or why webhook delivery is off (its HTTP client cannot be built).
    pub fn new(services: &Services, claimer: String) -> anyhow::Result<Webhooks> {
        Ok(Webhooks { claimer, clients: Clients::new(services)? })
    }
}

impl super::Worker for Webhooks {
    const NAME: &'static str = "webhook delivery";
    const SLOT: Option<Worker> = Some(Worker::Webhooks);

    fn pace(&self, services: &fiscus_kernel::Services) -> super::Pace {
        super::Pace::WhenIdle(std::time::Duration::from_millis(services.settings.worker_interval_ms.clamp(10, 100)))
    }

    async fn pass(&mut self, services: &fiscus_kernel::Services) -> anyhow::Result<usize> {
        let done = run_once(services, &self.clients, &self.claimer).await?;
        Ok(done.fanned_out + done.claimed)
    }
}

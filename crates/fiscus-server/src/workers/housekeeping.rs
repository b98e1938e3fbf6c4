//! Housekeeping every node does once a second: flushing the request log and the tool invocation rows,
//! anchoring the audit heads, and every ten minutes purging expired idempotency keys, signature nonces
//! that can no longer be fresh and the webhook delivery log past its retention. It claims nothing due, so
//! the tests' drain does not wait for it.

use fiscus_kernel::Services;
use fiscus_kernel::progress;

/// Seconds since the node started, counted by passes.
#[derive(Default)]
pub struct Housekeeping {
    seconds: u64,
}

impl super::Worker for Housekeeping {
    const NAME: &'static str = "housekeeping";
    const SLOT: Option<progress::Worker> = None;

    fn pace(&self, _services: &Services) -> super::Pace {
        super::Pace::Every(std::time::Duration::from_secs(1))
    }

    async fn pass(&mut self, services: &Services) -> anyhow::Result<usize> {
        self.seconds += 1;
        if let Err(e) = services.usage.flush(&services.store).await {
            tracing::warn!(error = %e, "usage flush failed; counts are kept for the next try");
        }
        if let Err(e) = services.invocations.flush(&services.store).await {
            tracing::warn!(error = %e, "tool invocation flush failed; rows are kept for the next try");
        }
        if self.seconds.is_multiple_of(services.settings.audit_anchor_interval_seconds.max(1)) {
            anchor_heads(services).await;
        }
        if self.seconds.is_multiple_of(600) {
            purge(services).await;
        }
        Ok(0)
    }
}

/// The ten-minute purges, each in its own transaction: one failing never holds back the other.
async fn purge(services: &Services) {
    let keys = async {
        let now = fiscus_domain::clock::now_micros();
        let mut tx = services.store.begin().await?;
        let n = fiscus_store::idempotency::purge_expired(tx.conn(), now).await?;
        fiscus_store::execution_clients::sweep_nonces(tx.conn(), now).await?;
        tx.commit().await?;
        Ok::<u64, fiscus_store::StoreError>(n)
    };
    match keys.await {
        Ok(n) if n > 0 => tracing::info!(purged = n, "expired idempotency keys purged"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "idempotency purge failed"),
    }
    let log = async {
        let now = fiscus_domain::clock::now_micros();
        let retention = i64::try_from(services.settings.webhook_log_retention_days).unwrap_or(30);
        let before = now - retention * 86_400 * fiscus_domain::clock::MICROS_PER_SECOND;
        let mut tx = services.store.begin().await?;
        let n = fiscus_kernel::tables::webhook_deliveries::purge(tx.conn(), before).await?;
        tx.commit().await?;
        Ok::<u64, fiscus_store::StoreError>(n)
    };
    if let Err(e) = log.await {
        tracing::warn!(error = %e, "webhook delivery log purge failed");
    }
}

/// Moves the audit anchors forward; a chain that no longer reaches its anchor is an alarm, not a warning.
pub async fn anchor_heads(services: &Services) {
    match fiscus_kernel::anchor::refresh(services).await {
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

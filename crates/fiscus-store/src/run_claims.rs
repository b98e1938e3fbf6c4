//! Claiming queued runs (workflow runs, Agent Space runs) across nodes: one `UPDATE … WHERE id IN (SELECT …
//! FOR UPDATE SKIP LOCKED)` marks up to `limit` due runs as this worker's, taking over a claim older than
//! `stale_after` (its worker died or hangs). Serves every workspace, by design, like the settlement
//! worker's claim; the worker then works inside each run's tenant.

use crate::dialect::{backend_of, for_update_skip_locked};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;

/// A table of runs the workers claim.
pub struct RunQueue {
    pub table: &'static str,
    /// The states a due run may be claimed in, as an SQL list of literals (`('queued', 'running')`).
    pub claimable: &'static str,
}

/// A run claimed by a worker, with the tenant it must be worked in.
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub run_id: String,
    pub tenant: Tenant,
}

pub async fn claim(
    tx: &mut WriteTx,
    queue: &RunQueue,
    worker: &str,
    now: i64,
    stale_after: i64,
    limit: i64,
) -> Result<Vec<Claimed>> {
    let RunQueue { table, claimable } = queue;
    let skip = for_update_skip_locked(backend_of(tx.conn()));
    let rows: Vec<(String, String, String)> = sqlx::query_as(&format!(
        "UPDATE {table} SET claimed_by = $1, claimed_at = $2 \
         WHERE id IN (SELECT id FROM {table} \
                      WHERE state IN {claimable} AND due_at IS NOT NULL AND due_at <= $2 \
                      AND (claimed_at IS NULL OR claimed_at < $3) \
                      ORDER BY due_at, id LIMIT $4{skip}) \
         RETURNING id, workspace_id, environment"
    ))
    .bind(worker)
    .bind(now)
    .bind(now - stale_after)
    .bind(limit)
    .fetch_all(tx.conn())
    .await?;
    rows.into_iter()
        .map(|(run_id, workspace_id, environment)| {
            let environment = Environment::parse(&environment)
                .ok_or_else(|| StoreError::Corrupt(format!("{table} {run_id}: environment `{environment}`")))?;
            Ok(Claimed { run_id, tenant: Tenant { workspace_id, environment } })
        })
        .collect()
}

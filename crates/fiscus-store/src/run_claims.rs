//! Claiming queued runs (workflow runs, Agent Space runs) across nodes: `UPDATE … WHERE id IN (SELECT …
//! FOR UPDATE SKIP LOCKED)` marks due runs as this worker's one at a time, fairly across workspaces
//! (`fair`), taking over a claim older than `stale_after` (its worker died or hangs). Serves every workspace, by design, like the settlement
//! worker's claim; the worker then works inside each run's tenant.

use crate::dialect::backend_of;
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

/// Claims up to `limit` due runs for `worker`, fairly across workspaces and at most `per_workspace` held at
/// once by any one workspace (`fair`).
pub async fn claim(
    tx: &mut WriteTx,
    queue: &RunQueue,
    worker: &str,
    now: i64,
    stale_after: i64,
    limit: i64,
    per_workspace: i64,
) -> Result<Vec<Claimed>> {
    let RunQueue { table, claimable } = queue;
    // A run set aside (it failed its seal: `crate::set_aside`) is never claimed again.
    let candidates = format!(
        "c.state IN {claimable} AND c.due_at IS NOT NULL AND c.due_at <= $2 AND (c.claimed_at IS NULL OR c.claimed_at < $3) \
         AND {}",
        crate::set_aside::skipped(table, "c")
    );
    let fair = crate::fair::FairQueue {
        table,
        key: "id",
        claimable: &candidates,
        live: "l.claimed_by IS NOT NULL AND l.claimed_at >= $3",
        order: "c.due_at, c.id",
    };
    let sql = format!(
        "UPDATE {table} SET claimed_by = $1, claimed_at = $2 WHERE id IN ({}) RETURNING id, workspace_id, environment",
        crate::fair::pick(&fair, "$4", backend_of(tx.conn()))
    );
    let claim = crate::fair::Claim { worker, now, stale_before: now - stale_after, per_workspace };
    let rows: Vec<(String, String, String)> = crate::fair::claim_each(tx, &sql, &claim, limit).await?;
    rows.into_iter()
        .map(|(run_id, workspace_id, environment)| {
            let environment = Environment::parse(&environment)
                .ok_or_else(|| StoreError::Corrupt(format!("{table} {run_id}: environment `{environment}`")))?;
            Ok(Claimed { run_id, tenant: Tenant { workspace_id, environment } })
        })
        .collect()
}

/// Lets go of a run `worker` holds (one it set aside, say), so it counts against no workspace's share.
pub async fn release(tx: &mut WriteTx, queue: &RunQueue, run_id: &str, worker: &str) -> Result<bool> {
    let done = sqlx::query(&format!(
        "UPDATE {} SET claimed_by = NULL, claimed_at = NULL WHERE id = $1 AND claimed_by = $2",
        queue.table
    ))
    .bind(run_id)
    .bind(worker)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

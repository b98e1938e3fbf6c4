//! A stopping node's claims handed back (issue 35): every queue a worker claims from (compute jobs,
//! settlement items, workflow and Agent Space runs, webhook endpoint queues) lets go of what `worker` holds,
//! so another node takes it at once rather than after the claim's stale time. Serves every workspace, like
//! the claims themselves (ARCHITECTURE.md invariant 2), and only ever touches rows `worker` holds.
//!
//! Why handing back is as safe as a takeover: every claimed item's effect is recorded in a transaction that
//! checks the claim (`finish`, `record`, a step's or call's unique sequence number), and the stopping node's
//! tasks were aborted before this runs, so what they had not committed is rolled back and done again by the
//! next holder, exactly as after a crash. A commit racing the hand-back wins or loses as a whole: on
//! PostgreSQL the UPDATE here waits for the row lock that commit holds and then re-reads the row; SQLite has
//! one writer.

use crate::{Result, WriteTx};

/// How many claims of each queue were handed back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandedBack {
    pub compute_jobs: u64,
    pub settlement_items: u64,
    pub workflow_runs: u64,
    pub agent_runs: u64,
    pub webhook_queues: u64,
}

impl HandedBack {
    pub fn total(&self) -> u64 {
        self.compute_jobs + self.settlement_items + self.workflow_runs + self.agent_runs + self.webhook_queues
    }
}

/// Hands back everything `worker` holds (see the module's comment); one statement per queue, in the
/// caller's transaction.
pub async fn all(tx: &mut WriteTx, worker: &str) -> Result<HandedBack> {
    // A compute job is queued again from its request (its computation was stopped); one whose cancel was
    // asked for is left to end as cancelled.
    let compute_jobs = let_go(
        tx,
        "UPDATE compute_jobs SET state = 'queued', claimed_by = NULL, claimed_at = NULL, progress = 0 \
         WHERE state = 'running' AND claimed_by = $1 AND cancel_requested_at IS NULL",
        worker,
    )
    .await?;
    // A settlement item goes back to `pending` (it was due when claimed, so `available_at` has passed); its
    // attempt count stays, as a takeover's would.
    let settlement_items = let_go(
        tx,
        "UPDATE settlement_jobs SET state = 'pending', claimed_by = NULL, claimed_at = NULL \
         WHERE state = 'claimed' AND claimed_by = $1",
        worker,
    )
    .await?;
    // Runs and queues keep their state: a claim is only who holds them, and their due time says when next.
    let mut released = [0u64; 3];
    let tables = [crate::agent_tables::WORKFLOW_RUNS.table, crate::agent_tables::AGENT_RUNS.table, "webhook_queues"];
    for (count, table) in released.iter_mut().zip(tables) {
        let sql = format!("UPDATE {table} SET claimed_by = NULL, claimed_at = NULL WHERE claimed_by = $1");
        *count = let_go(tx, &sql, worker).await?;
    }
    let [workflow_runs, agent_runs, webhook_queues] = released;
    Ok(HandedBack { compute_jobs, settlement_items, workflow_runs, agent_runs, webhook_queues })
}

async fn let_go(tx: &mut WriteTx, sql: &str, worker: &str) -> Result<u64> {
    Ok(sqlx::query(sql).bind(worker).execute(tx.conn()).await?.rows_affected())
}

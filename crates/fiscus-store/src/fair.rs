//! Claiming work fairly across workspaces. Every background queue (compute jobs, workflow runs, Agent Space
//! runs, webhook endpoints' queues) serves all workspaces from one table; claimed oldest-first, one tenant
//! that queues a thousand items holds every worker until they are done. Here a claim takes one item at a
//! time, from the workspace that holds the fewest live claims on that queue (ties: the queue's own order,
//! oldest first), and never from a workspace that already holds its cap. So workers go round the
//! workspaces that are waiting, and a tenant's flood takes at most its cap of them.
//!
//! The counts are the database's, so the cap holds across nodes, for claims that committed: nodes whose
//! claiming transactions overlap do not see each other's claims (PostgreSQL's `SKIP LOCKED` does not lock
//! the counted rows), so a workspace can briefly hold up to its cap on each node claiming at that instant.

/// One queue, as the fair pick sees it. Conditions are SQL over the queue's table aliased `c` (the
/// candidates) and `l` (rows counted as live claims), with the caller's numbered parameters.
pub struct FairQueue<'a> {
    pub table: &'a str,
    /// The column the claiming `UPDATE … WHERE key IN (…)` matches.
    pub key: &'a str,
    /// Which rows of `c` may be claimed now.
    pub claimable: &'a str,
    /// Which rows of `l` are held by a live claim.
    pub live: &'a str,
    /// The queue's own order among equals (`c.id`, `c.due_at, c.id`).
    pub order: &'a str,
}

/// A subquery choosing the one row to claim next, or none: the claimable row of the workspace with the
/// fewest live claims below `cap` (a numbered parameter), in the queue's order. The live claims are counted
/// once per pick, grouped by workspace, not once per candidate. `backend` decides the row lock: PostgreSQL
/// locks the chosen candidate only (`FOR UPDATE OF c SKIP LOCKED`), SQLite's writer is already exclusive.
pub fn pick(q: &FairQueue<'_>, cap: &str, backend: crate::Backend) -> String {
    let FairQueue { table, key, claimable, live, order } = q;
    let lock = crate::dialect::for_update_of_skip_locked(backend, "c");
    format!(
        "WITH held AS (SELECT l.workspace_id, COUNT(*) AS n FROM {table} l WHERE {live} GROUP BY l.workspace_id) \
         SELECT c.{key} FROM {table} c LEFT JOIN held h ON h.workspace_id = c.workspace_id \
         WHERE ({claimable}) AND COALESCE(h.n, 0) < {cap} ORDER BY COALESCE(h.n, 0), {order} LIMIT 1{lock}"
    )
}

/// The binds of every fair claim statement, in order: `$1` the worker, `$2` now, `$3` the time before which a
/// claim is stale (live claims are at or after it), `$4` the per-workspace cap.
pub struct Claim<'a> {
    pub worker: &'a str,
    pub now: i64,
    pub stale_before: i64,
    pub per_workspace: i64,
}

/// Runs `sql` (an `UPDATE … WHERE key IN ({pick}) RETURNING …` over the binds of [`Claim`]) up to `limit`
/// times in `tx`, one claim at a time so that each pick counts the claims just made; stops when nothing is
/// left to claim.
pub async fn claim_each<R>(tx: &mut crate::WriteTx, sql: &str, c: &Claim<'_>, limit: i64) -> crate::Result<Vec<R>>
where
    R: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let mut claimed = Vec::new();
    for _ in 0..limit {
        let row = sqlx::query_as::<_, R>(sql)
            .bind(c.worker)
            .bind(c.now)
            .bind(c.stale_before)
            .bind(c.per_workspace)
            .fetch_optional(tx.conn())
            .await?;
        match row {
            Some(row) => claimed.push(row),
            None => break,
        }
    }
    Ok(claimed)
}

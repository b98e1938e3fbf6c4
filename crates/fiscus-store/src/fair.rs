//! Claiming work fairly across workspaces. Every background queue (compute jobs, workflow runs, Agent Space
//! runs, webhook endpoints' queues) serves all workspaces from one table; claimed oldest-first, one tenant
//! that queues a thousand items holds every worker until they are done. Here a claim takes one item at a
//! time, from the workspace that holds the fewest live claims on that queue (ties: the queue's own order,
//! oldest first), and never from a workspace that already holds its cap. So workers go round the
//! workspaces that are waiting, and a tenant's flood takes at most its cap of them.
//!
//! The counts are the database's, so the cap holds across nodes; two nodes claiming at the same instant may
//! each see one fewer than the other took (PostgreSQL's `SKIP LOCKED` does not lock the counted rows), so a
//! workspace can briefly hold one or two more than its cap, never a worker pool.

/// One queue, as the fair pick sees it. Conditions are SQL over the queue's table aliased `c` (the
/// candidates) and `l` (rows counted as live claims), with the caller's numbered parameters.
pub(crate) struct FairQueue<'a> {
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
/// fewest live claims below `cap` (a numbered parameter), in the queue's order; `lock` is the backend's
/// `FOR UPDATE SKIP LOCKED` (or nothing).
pub(crate) fn pick(q: &FairQueue<'_>, cap: &str, lock: &str) -> String {
    let FairQueue { table, key, claimable, live, order } = q;
    let held = format!("(SELECT COUNT(*) FROM {table} l WHERE l.workspace_id = c.workspace_id AND ({live}))");
    format!(
        "SELECT c.{key} FROM {table} c WHERE ({claimable}) AND {held} < {cap} ORDER BY {held}, {order} LIMIT 1{lock}"
    )
}

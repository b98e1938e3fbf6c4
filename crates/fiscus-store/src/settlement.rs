//! Settlement work items and records. A worker claims due items with one conditional statement
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so several nodes never process the same item; a record is
//! unique per action and kind, so even a repeated delivery cannot settle an action twice.

use crate::dialect::{backend_of, for_update_skip_locked};
use crate::{Result, WriteTx};
use fiscus_domain::tenancy::Tenant;
use sqlx::{AnyConnection, FromRow};

pub async fn enqueue(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, connector: &str, now: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO settlement_jobs (id, workspace_id, environment, action_id, connector, state, available_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6)",
    )
    .bind(fiscus_domain::ids::new_id("stj"))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(action_id)
    .bind(connector)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

#[derive(Clone, Debug, FromRow)]
pub struct Job {
    pub id: String,
    pub workspace_id: String,
    pub environment: String,
    pub action_id: String,
    pub connector: String,
    pub attempts: i64,
}

/// Claims up to `limit` due items for `worker`: pending ones, and claimed ones whose worker went silent for
/// `stale_after` (it crashed before finishing; finishing is transactional, so nothing was half done).
pub async fn claim(tx: &mut WriteTx, worker: &str, now: i64, stale_after: i64, limit: i64) -> Result<Vec<Job>> {
    let skip = for_update_skip_locked(backend_of(tx.conn()));
    Ok(sqlx::query_as::<_, Job>(&format!(
        "UPDATE settlement_jobs SET state = 'claimed', claimed_by = $1, claimed_at = $2, attempts = attempts + 1 \
         WHERE id IN (SELECT id FROM settlement_jobs \
                      WHERE (state = 'pending' AND available_at <= $2) OR (state = 'claimed' AND claimed_at < $3) \
                      ORDER BY id LIMIT $4{skip}) \
         RETURNING id, workspace_id, environment, action_id, connector, attempts"
    ))
    .bind(worker)
    .bind(now)
    .bind(now - stale_after)
    .bind(limit)
    .fetch_all(tx.conn())
    .await?)
}

/// Finishes a claimed item; false when this worker no longer holds it.
pub async fn finish(tx: &mut WriteTx, job_id: &str, worker: &str, now: i64) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE settlement_jobs SET state = 'done', finished_at = $1 WHERE id = $2 AND state = 'claimed' AND claimed_by = $3",
    )
    .bind(now)
    .bind(job_id)
    .bind(worker)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

#[derive(Clone, Debug, FromRow)]
pub struct RecordRow {
    pub id: String,
    pub kind: String,
    pub connector: String,
    pub connector_reference: String,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub reconciliation: String,
    pub mismatches: String,
    pub record_hash: String,
    pub processed_by: String,
    pub received_at: i64,
}

pub async fn insert_record(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, r: &RecordRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO settlement_records (id, workspace_id, environment, action_id, kind, connector, connector_reference, reference, \
                                         amount_minor, currency, reconciliation, mismatches, record_hash, processed_by, received_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(&r.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(action_id)
    .bind(&r.kind)
    .bind(&r.connector)
    .bind(&r.connector_reference)
    .bind(&r.reference)
    .bind(r.amount_minor)
    .bind(&r.currency)
    .bind(&r.reconciliation)
    .bind(&r.mismatches)
    .bind(&r.record_hash)
    .bind(&r.processed_by)
    .bind(r.received_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &crate::seals::SETTLEMENT_RECORDS, &tenant.workspace_id, &r.id).await?;
    Ok(())
}

pub async fn records(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<RecordRow>> {
    Ok(sqlx::query_as::<_, RecordRow>(
        "SELECT id, kind, connector, connector_reference, reference, amount_minor, currency, reconciliation, mismatches, \
                record_hash, processed_by, received_at \
         FROM settlement_records WHERE workspace_id = $1 AND environment = $2 AND action_id = $3 ORDER BY received_at, id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(action_id)
    .fetch_all(&mut *conn)
    .await?)
}

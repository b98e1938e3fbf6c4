//! Settlement work items and records. A worker claims due items with one conditional statement
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so several nodes never process the same item; a record is
//! unique per action and kind, so even a repeated delivery cannot settle an action twice.

use crate::rules::settlement::{Reconciliation, SettlementKind};
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::dialect::{backend_of, for_update_skip_locked};
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

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

/// A claimed settlement work item, with the tenant it must be worked in.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: String,
    pub tenant: Tenant,
    pub action_id: String,
    pub connector: String,
    pub attempts: i64,
}

fiscus_store::row! {
    struct JobRow {
        id: String,
        workspace_id: String,
        environment: String,
        action_id: String,
        connector: String,
        attempts: i64,
    }
}

impl TryFrom<JobRow> for Job {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Job> {
        let environment = Environment::parse(&r.environment)
            .ok_or_else(|| corrupt("settlement_jobs", &r.id, "environment", &r.environment))?;
        Ok(Job {
            tenant: Tenant { workspace_id: r.workspace_id, environment },
            id: r.id,
            action_id: r.action_id,
            connector: r.connector,
            attempts: r.attempts,
        })
    }
}

/// Claims up to `limit` due items for `worker`: pending ones, and claimed ones whose worker went silent for
/// `stale_after` (it crashed before finishing; finishing is transactional, so nothing was half done); never
/// one set aside.
pub async fn claim(tx: &mut WriteTx, worker: &str, now: i64, stale_after: i64, limit: i64) -> Result<Vec<Job>> {
    let skip = for_update_skip_locked(backend_of(tx.conn()));
    // An item set aside (its action failed its seal: `fiscus_store::set_aside`) is never claimed again.
    let not_set_aside = fiscus_store::set_aside::skipped("settlement_jobs", "settlement_jobs");
    sqlx::query_as::<_, JobRow>(&format!(
        "UPDATE settlement_jobs SET state = 'claimed', claimed_by = $1, claimed_at = $2, attempts = attempts + 1 \
         WHERE id IN (SELECT id FROM settlement_jobs \
                      WHERE ((state = 'pending' AND available_at <= $2) OR (state = 'claimed' AND claimed_at < $3)) \
                      AND {not_set_aside} ORDER BY id LIMIT $4{skip}) \
         RETURNING id, workspace_id, environment, action_id, connector, attempts"
    ))
    .bind(worker)
    .bind(now)
    .bind(now - stale_after)
    .bind(limit)
    .fetch_all(tx.conn())
    .await?
    .into_iter()
    .map(Job::try_from)
    .collect()
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

/// What a connector reported for an action, as sealed when it was received.
#[derive(Clone, Debug, PartialEq)]
pub struct SettlementRecord {
    pub id: String,
    pub kind: SettlementKind,
    pub connector: String,
    pub connector_reference: String,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub reconciliation: Reconciliation,
    pub mismatches: Vec<String>,
    pub record_hash: String,
    /// The worker (its node name) that processed the notice: only the settlement worker does.
    pub processed_by: String,
    pub received_at: i64,
}

fiscus_store::row! {
    struct RecordRow {
        id: String,
        kind: String,
        connector: String,
        connector_reference: String,
        reference: String,
        amount_minor: i64,
        currency: String,
        reconciliation: String,
        mismatches: String,
        record_hash: String,
        processed_by: String,
        received_at: i64,
    }
}

impl TryFrom<RecordRow> for SettlementRecord {
    type Error = StoreError;

    fn try_from(r: RecordRow) -> Result<SettlementRecord> {
        let bad = |column: &str, value: &str| corrupt("settlement_records", &r.id, column, value);
        Ok(SettlementRecord {
            kind: SettlementKind::parse(&r.kind).ok_or_else(|| bad("kind", &r.kind))?,
            reconciliation: Reconciliation::parse(&r.reconciliation)
                .ok_or_else(|| bad("reconciliation", &r.reconciliation))?,
            mismatches: serde_json::from_str(&r.mismatches).map_err(|_| bad("mismatches", &r.mismatches))?,
            id: r.id,
            connector: r.connector,
            connector_reference: r.connector_reference,
            reference: r.reference,
            amount_minor: r.amount_minor,
            currency: r.currency,
            record_hash: r.record_hash,
            processed_by: r.processed_by,
            received_at: r.received_at,
        })
    }
}

pub async fn insert_record(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, r: &SettlementRecord) -> Result<()> {
    let mismatches = serde_json::to_string(&r.mismatches).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    sqlx::query(
        "INSERT INTO settlement_records (id, workspace_id, environment, action_id, kind, connector, connector_reference, reference, \
                                         amount_minor, currency, reconciliation, mismatches, record_hash, processed_by, received_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(&r.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(action_id)
    .bind(r.kind.as_str())
    .bind(&r.connector)
    .bind(&r.connector_reference)
    .bind(&r.reference)
    .bind(r.amount_minor)
    .bind(&r.currency)
    .bind(r.reconciliation.as_str())
    .bind(mismatches)
    .bind(&r.record_hash)
    .bind(&r.processed_by)
    .bind(r.received_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::SETTLEMENT_RECORDS, &tenant.workspace_id, &r.id).await?;
    Ok(())
}

/// [`insert_record`] of many records (each `(action id, record)`), sealed as they are written, in
/// multi-row statements.
pub async fn insert_records(tx: &mut WriteTx, tenant: &Tenant, records: &[(&str, SettlementRecord)]) -> Result<()> {
    use fiscus_domain::integrity::Stored;
    let table = &fiscus_store::seals::SETTLEMENT_RECORDS;
    let width = table.columns.len() + 1;
    let key = tx.seal_key().clone();
    let backend = backend_of(tx.conn());
    let head = format!("INSERT INTO settlement_records ({}, seal_mac) VALUES ", table.columns.join(", "));
    for chunk in records.chunks(fiscus_store::dialect::rows_per_statement(width).min(500)) {
        let mut values = Vec::with_capacity(chunk.len() * width);
        let mut rows = Vec::with_capacity(chunk.len());
        for (action_id, r) in chunk {
            let mismatches = serde_json::to_string(&r.mismatches).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            // In the sealed columns' order (`seals::SETTLEMENT_RECORDS`).
            let row = vec![
                Stored::Text(r.id.clone()),
                Stored::Text(tenant.workspace_id.clone()),
                Stored::Text(tenant.environment.as_str().into()),
                Stored::Text((*action_id).into()),
                Stored::Text(r.kind.as_str().into()),
                Stored::Text(r.connector.clone()),
                Stored::Text(r.connector_reference.clone()),
                Stored::Text(r.reference.clone()),
                Stored::Integer(r.amount_minor),
                Stored::Text(r.currency.clone()),
                Stored::Text(r.reconciliation.as_str().into()),
                Stored::Text(mismatches),
                Stored::Text(r.record_hash.clone()),
                Stored::Text(r.processed_by.clone()),
                Stored::Integer(r.received_at),
            ];
            let mac = fiscus_store::seals::seal_of(&key, table, row.clone())?;
            values.extend(row.iter().cloned());
            values.push(Stored::Text(mac));
            rows.push(row);
        }
        let sql = fiscus_store::dialect::multi_row_insert(backend, &head, chunk.len(), width);
        fiscus_store::dialect::bind_all!(sqlx::query(&sql), &values).execute(tx.conn()).await?;
        for row in &rows {
            fiscus_store::seals::log(tx, table, row).await?;
        }
    }
    Ok(())
}

/// An action's settlement records, their seals checked (`Tampered` for a row edited outside Fiscus).
pub async fn records(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    action_id: &str,
) -> Result<Vec<SettlementRecord>> {
    let records = sqlx::query_as::<_, RecordRow>(
        "SELECT id, kind, connector, connector_reference, reference, amount_minor, currency, reconciliation, mismatches, \
                record_hash, processed_by, received_at \
         FROM settlement_records WHERE workspace_id = $1 AND environment = $2 AND action_id = $3 ORDER BY received_at, id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(action_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(SettlementRecord::try_from)
    .collect::<Result<Vec<_>>>()?;
    fiscus_store::seals::check(
        conn,
        key,
        &fiscus_store::seals::SETTLEMENT_RECORDS,
        &tenant.workspace_id,
        "action_id",
        action_id,
    )
    .await?;
    Ok(records)
}

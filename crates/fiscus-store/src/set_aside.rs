//! Records a worker set aside (issue 54): a row that failed its seal, or could not be read as what it
//! claims to be, is named in `set_aside` with why, and every claim that would take it skips it
//! ([`skipped`]), so one edited row stops neither its workspace's other work nor any other workspace's.
//! Setting aside only ever withholds work: the row stays as it is, refused wherever it is read, and a row
//! taken out of this table is claimed again and refused again.

use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

use crate::{Result, StoreError, WriteTx};

/// One record set aside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    pub table: String,
    pub record_id: String,
    pub reason: String,
    pub set_aside_by: String,
    pub set_aside_at: i64,
}

/// A `NOT EXISTS` condition for a claim's `WHERE`: the row of `table` (aliased or named `row`) whose id
/// column is `id` is not set aside. `table` is a fixed table name of the repository, never input.
pub fn skipped(table: &'static str, row: &str) -> String {
    format!("NOT EXISTS (SELECT 1 FROM set_aside sa WHERE sa.table_name = '{table}' AND sa.record_id = {row}.id)")
}

/// Sets `record_id` of `table` aside for `tenant`, once (setting it aside again keeps the first reason).
pub async fn put(
    tx: &mut WriteTx,
    tenant: &Tenant,
    table: &str,
    record_id: &str,
    reason: &str,
    by: &str,
    now: i64,
) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO set_aside (table_name, record_id, workspace_id, environment, reason, set_aside_by, set_aside_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (table_name, record_id) DO NOTHING",
    )
    .bind(table)
    .bind(record_id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(reason)
    .bind(by)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The tenant's records set aside, newest first (at most `limit`).
pub async fn list(conn: &mut AnyConnection, tenant: &Tenant, limit: i64) -> Result<Vec<SetAside>> {
    let rows: Vec<(String, String, String, String, i64)> = sqlx::query_as(
        "SELECT table_name, record_id, reason, set_aside_by, set_aside_at FROM set_aside \
         WHERE workspace_id = $1 AND environment = $2 ORDER BY set_aside_at DESC, record_id LIMIT $3",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(table, record_id, reason, set_aside_by, set_aside_at)| SetAside {
            table,
            record_id,
            reason,
            set_aside_by,
            set_aside_at,
        })
        .collect())
}

/// How many records of each table are set aside, over every workspace (for `/metrics`; no tenant data).
pub async fn counts(conn: &mut AnyConnection) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as("SELECT table_name, COUNT(*) FROM set_aside GROUP BY table_name ORDER BY table_name")
        .fetch_all(conn)
        .await?)
}

/// The tenant a bad row names, from its raw columns (the row failed its seal, so this is only where to file
/// it, never a decision); `None` when it names none Fiscus knows.
pub fn tenant_of(columns: &[(&str, fiscus_domain::integrity::Stored)]) -> Option<Tenant> {
    use fiscus_domain::integrity::Stored;
    let text = |name: &str| match columns.iter().find(|(n, _)| *n == name) {
        Some((_, Stored::Text(t))) => Some(t.clone()),
        _ => None,
    };
    let environment = Environment::parse(&text("environment")?)?;
    Some(Tenant { workspace_id: text("workspace_id")?, environment })
}

/// A row of a claim that failed its seal or could not be read: its id, its tenant and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    pub record_id: String,
    pub tenant: Tenant,
    pub reason: String,
}

impl Bad {
    /// The bad row of `table` a store error names, if it names one row (`Tampered` or `Corrupt`).
    pub fn of(error: &StoreError, record_id: &str, tenant: &Tenant) -> Option<Bad> {
        match error {
            StoreError::Tampered(_) => Some(Bad {
                record_id: record_id.to_string(),
                tenant: tenant.clone(),
                reason: "it failed its seal (edited outside Fiscus)".into(),
            }),
            StoreError::Corrupt(why) => Some(Bad {
                record_id: record_id.to_string(),
                tenant: tenant.clone(),
                reason: format!("it cannot be read as stored: {why}"),
            }),
            _ => None,
        }
    }
}

//! The AI credits ledger: append-only grants and consumption; the balance is derived, never stored.

use fiscus_domain::tenancy::Tenant;
use fiscus_store::Result;
use sqlx::AnyConnection;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Grant,
    Consumption,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Grant => "grant",
            EntryKind::Consumption => "consumption",
        }
    }
}

pub struct NewEntry<'a> {
    pub id: &'a str,
    pub kind: EntryKind,
    pub credits: i64,
    pub reason: &'a str,
    pub reference: Option<&'a str>,
    pub created_at: i64,
}

pub async fn record(conn: &mut AnyConnection, tenant: &Tenant, entry: &NewEntry<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO credit_ledger (id, workspace_id, environment, kind, credits, reason, reference, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(entry.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(entry.kind.as_str())
    .bind(entry.credits)
    .bind(entry.reason)
    .bind(entry.reference)
    .bind(entry.created_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub granted: i64,
    pub consumed: i64,
    pub entries: i64,
}

pub async fn totals(conn: &mut AnyConnection, tenant: &Tenant) -> Result<Totals> {
    // SUM of BIGINT is NUMERIC on PostgreSQL; the casts keep one decoder for both backends.
    let (granted, consumed, entries): (i64, i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN kind = 'grant' THEN credits ELSE 0 END), 0) AS BIGINT), \
                CAST(COALESCE(SUM(CASE WHEN kind = 'consumption' THEN credits ELSE 0 END), 0) AS BIGINT), \
                COUNT(*) \
         FROM credit_ledger WHERE workspace_id = $1 AND environment = $2",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_one(&mut *conn)
    .await?;
    Ok(Totals { granted, consumed, entries })
}

/// Consumes `entry.credits` when the balance covers them and returns what is left, or `None` (nothing
/// written) when it does not. Debits of one workspace are serialised: its row is locked on PostgreSQL, and
/// SQLite has one writer, so two jobs can never both spend the last credits.
pub async fn debit(tx: &mut fiscus_store::WriteTx, tenant: &Tenant, entry: &NewEntry<'_>) -> Result<Option<i64>> {
    debug_assert_eq!(entry.kind, EntryKind::Consumption);
    let lock = fiscus_store::dialect::for_update(fiscus_store::dialect::backend_of(tx.conn()));
    sqlx::query(&format!("SELECT id FROM workspaces WHERE id = $1{lock}"))
        .bind(&tenant.workspace_id)
        .fetch_optional(tx.conn())
        .await?;
    let t = totals(tx.conn(), tenant).await?;
    let left = t.granted - t.consumed;
    if left < entry.credits {
        return Ok(None);
    }
    record(tx.conn(), tenant, entry).await?;
    Ok(Some(left - entry.credits))
}

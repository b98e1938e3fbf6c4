//! Financial Actions: envelopes, check versions, decisions, history and the outbox. State changes are
//! conditional single statements (`… WHERE control_state = $from`), so two racing requests can never both
//! move an action out of the same state.

use crate::dialect::{backend_of, for_update};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::tenancy::Tenant;
use sqlx::{AnyConnection, FromRow};

#[derive(Clone, Debug, FromRow)]
pub struct ActionRow {
    pub id: String,
    pub environment: String,
    pub kind: String,
    pub amount_minor: i64,
    pub currency: String,
    pub counterparty: String,
    pub connector: String,
    pub execution_mode: String,
    pub delegation_id: Option<String>,
    pub risk_tier: String,
    pub reference: String,
    pub required_checks: String,
    pub metadata: String,
    pub envelope_hash: String,
    pub control_state: String,
    pub origin: String,
    pub proposed_by_kind: String,
    pub proposed_by_id: String,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, environment, kind, amount_minor, currency, counterparty, connector, execution_mode, delegation_id, \
                       risk_tier, reference, required_checks, metadata, envelope_hash, control_state, origin, \
                       proposed_by_kind, proposed_by_id, created_at, updated_at";

pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, a: &ActionRow) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO actions (workspace_id, {COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
    ))
    .bind(&tenant.workspace_id)
    .bind(&a.id)
    .bind(tenant.environment.as_str())
    .bind(&a.kind)
    .bind(a.amount_minor)
    .bind(&a.currency)
    .bind(&a.counterparty)
    .bind(&a.connector)
    .bind(&a.execution_mode)
    .bind(&a.delegation_id)
    .bind(&a.risk_tier)
    .bind(&a.reference)
    .bind(&a.required_checks)
    .bind(&a.metadata)
    .bind(&a.envelope_hash)
    .bind(&a.control_state)
    .bind(&a.origin)
    .bind(&a.proposed_by_kind)
    .bind(&a.proposed_by_id)
    .bind(a.created_at)
    .bind(a.updated_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &crate::seals::ACTIONS, &tenant.workspace_id, &a.id).await?;
    Ok(())
}

pub async fn get(conn: &mut AnyConnection, tenant: &Tenant, id: &str) -> Result<ActionRow> {
    sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND id = $3"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)
}

/// The action, locked for the rest of the transaction (PostgreSQL; SQLite's writer is already exclusive).
pub async fn get_for_decision(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<ActionRow> {
    let lock = for_update(backend_of(tx.conn()));
    sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND id = $3{lock}"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(StoreError::NotFound)
}

pub async fn list(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    state: Option<&str>,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<ActionRow>> {
    Ok(sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 \
         AND ($3 IS NULL OR control_state = $3) AND ($4 IS NULL OR id > $4) ORDER BY id LIMIT $5"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(state)
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?)
}

/// Moves an action from `from` to `to`; `Conflict` when it is no longer in `from`.
pub async fn transition(tx: &mut WriteTx, tenant: &Tenant, id: &str, from: &str, to: &str, now: i64) -> Result<()> {
    let done = sqlx::query(
        "UPDATE actions SET control_state = $1, updated_at = $2 \
         WHERE workspace_id = $3 AND environment = $4 AND id = $5 AND control_state = $6",
    )
    .bind(to)
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .bind(from)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict(format!("action {id} is no longer {from}")));
    }
    Ok(())
}

pub struct HistoryEntry<'a> {
    pub action_id: &'a str,
    pub from_state: Option<&'a str>,
    pub to_state: &'a str,
    pub event: &'a str,
    pub actor_kind: &'a str,
    pub actor_id: &'a str,
    pub detail: serde_json::Value,
    pub created_at: i64,
}

pub async fn record_history(tx: &mut WriteTx, tenant: &Tenant, h: &HistoryEntry<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO action_history (id, workspace_id, action_id, from_state, to_state, event, actor_kind, actor_id, detail, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(fiscus_domain::ids::new_id("ahe"))
    .bind(&tenant.workspace_id)
    .bind(h.action_id)
    .bind(h.from_state)
    .bind(h.to_state)
    .bind(h.event)
    .bind(h.actor_kind)
    .bind(h.actor_id)
    .bind(h.detail.to_string())
    .bind(h.created_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

#[derive(Clone, Debug, FromRow)]
pub struct HistoryRow {
    pub from_state: Option<String>,
    pub to_state: String,
    pub event: String,
    pub actor_kind: String,
    pub actor_id: String,
    pub detail: String,
    pub created_at: i64,
}

pub async fn history(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<HistoryRow>> {
    Ok(sqlx::query_as::<_, HistoryRow>(
        "SELECT from_state, to_state, event, actor_kind, actor_id, detail, created_at FROM action_history \
         WHERE workspace_id = $1 AND action_id = $2 ORDER BY id",
    )
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .fetch_all(&mut *conn)
    .await?)
}

// ------------------------------------------------------------------------------------------------ checks

#[derive(Clone, Debug, FromRow)]
pub struct CheckRow {
    pub id: String,
    pub check_key: String,
    pub version: i64,
    pub status: String,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub metrics: String,
    pub metadata: String,
    pub check_hash: String,
    pub recorded_by: String,
    pub created_at: i64,
}

const CHECK_COLUMNS: &str = "id, check_key, version, status, source_type, source_reference, source_hash, metrics, metadata, \
                             check_hash, recorded_by, created_at";

/// The next version number of a check of an action (1 for the first).
pub async fn next_check_version(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, check_key: &str) -> Result<i64> {
    let (max,): (i64,) = sqlx::query_as(
        "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM action_checks \
         WHERE workspace_id = $1 AND action_id = $2 AND check_key = $3",
    )
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(check_key)
    .fetch_one(tx.conn())
    .await?;
    Ok(max + 1)
}

pub async fn insert_check(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, c: &CheckRow) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO action_checks (workspace_id, action_id, {CHECK_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(&c.id)
    .bind(&c.check_key)
    .bind(c.version)
    .bind(&c.status)
    .bind(&c.source_type)
    .bind(&c.source_reference)
    .bind(&c.source_hash)
    .bind(&c.metrics)
    .bind(&c.metadata)
    .bind(&c.check_hash)
    .bind(&c.recorded_by)
    .bind(c.created_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &crate::seals::ACTION_CHECKS, &tenant.workspace_id, &c.id).await?;
    Ok(())
}

/// Every version of every check of an action, oldest first.
pub async fn checks(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<CheckRow>> {
    Ok(sqlx::query_as::<_, CheckRow>(&format!(
        "SELECT {CHECK_COLUMNS} FROM action_checks WHERE workspace_id = $1 AND action_id = $2 ORDER BY check_key, version"
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .fetch_all(&mut *conn)
    .await?)
}

// --------------------------------------------------------------------------------------------- decisions

#[derive(Clone, Debug, FromRow)]
pub struct DecisionRow {
    pub id: String,
    pub operator_id: String,
    pub role: String,
    pub decision: String,
    pub envelope_hash: String,
    pub check_set_hash: String,
    pub evidence_hash: String,
    pub created_at: i64,
    pub invalidated_at: Option<i64>,
}

pub async fn insert_decision(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, d: &DecisionRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO action_decisions (id, workspace_id, action_id, operator_id, role, decision, envelope_hash, \
                                       check_set_hash, evidence_hash, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&d.id)
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(&d.operator_id)
    .bind(&d.role)
    .bind(&d.decision)
    .bind(&d.envelope_hash)
    .bind(&d.check_set_hash)
    .bind(&d.evidence_hash)
    .bind(d.created_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &crate::seals::ACTION_DECISIONS, &tenant.workspace_id, &d.id).await?;
    Ok(())
}

pub async fn decisions(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<DecisionRow>> {
    Ok(sqlx::query_as::<_, DecisionRow>(
        "SELECT id, operator_id, role, decision, envelope_hash, check_set_hash, evidence_hash, created_at, invalidated_at \
         FROM action_decisions WHERE workspace_id = $1 AND action_id = $2 ORDER BY created_at, id",
    )
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// Marks every standing approval of an action stale (a new check version changed the evidence).
pub async fn invalidate_approvals(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, now: i64) -> Result<u64> {
    let done = sqlx::query(
        "UPDATE action_decisions SET invalidated_at = $1 \
         WHERE workspace_id = $2 AND action_id = $3 AND decision = 'approve' AND invalidated_at IS NULL",
    )
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected())
}

// ------------------------------------------------------------------------------------------------ outbox

pub async fn enqueue_event(
    tx: &mut WriteTx,
    tenant: &Tenant,
    event_type: &str,
    subject_id: &str,
    payload: &serde_json::Value,
    now: i64,
) -> Result<String> {
    let id = fiscus_domain::ids::new_id("evt");
    sqlx::query(
        "INSERT INTO outbox (id, workspace_id, environment, event_type, subject_id, payload, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(event_type)
    .bind(subject_id)
    .bind(payload.to_string())
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(id)
}

/// Event types of an action's outbox entries, oldest first (for tests and the console).
pub async fn events_of(conn: &mut AnyConnection, tenant: &Tenant, subject_id: &str) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT event_type FROM outbox WHERE workspace_id = $1 AND environment = $2 AND subject_id = $3 ORDER BY id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(subject_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

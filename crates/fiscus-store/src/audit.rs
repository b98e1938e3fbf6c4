//! The per-workspace hash-chained audit log. Appends happen inside the transaction of the change they record.

use crate::dialect::{backend_of, for_update};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::audit::AuditEvent;
use serde_json::Value;
use sqlx::{AnyConnection, FromRow};

pub struct NewAuditEvent<'a> {
    pub environment: Option<fiscus_domain::credentials::Environment>,
    pub actor: &'a fiscus_domain::actor::Actor,
    pub action: &'a str,
    pub request_id: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub details: Value,
    pub occurred_at: i64,
}

/// Appends an event to the workspace's chain and returns its sequence number and hash. The head row is
/// locked (PostgreSQL) or the transaction is the only writer (SQLite), so appends of one workspace are
/// strictly ordered. Within a commit group the head an earlier member of the group appended to is known
/// already and not read back, and the head row is written once for the whole group, just before its COMMIT
/// (see `group`): the row is locked by the group's transaction from its first read.
pub async fn append(tx: &mut WriteTx, workspace_id: &str, new: NewAuditEvent<'_>) -> Result<(i64, String)> {
    let key = tx.seal_key().clone();
    let known = tx.known_head(workspace_id);
    let conn = tx.conn();
    let (head_seq, head_hash): (i64, String) = match known {
        Some(head) => head,
        None => {
            let lock = for_update(backend_of(conn));
            sqlx::query_as(&format!("SELECT seq, hash FROM audit_heads WHERE workspace_id = $1{lock}"))
                .bind(workspace_id)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(StoreError::NotFound)?
        }
    };
    let event = AuditEvent {
        workspace_id: workspace_id.to_string(),
        seq: head_seq + 1,
        prev_hash: head_hash,
        occurred_at: new.occurred_at,
        environment: new.environment.map(|e| e.as_str().to_string()),
        actor_kind: new.actor.kind.as_str().to_string(),
        actor_id: new.actor.id.clone(),
        action: new.action.to_string(),
        request_id: new.request_id.map(str::to_string),
        subject: new.subject.map(str::to_string),
        details: new.details,
    };
    let hash = event.hash().map_err(|e| StoreError::Corrupt(format!("audit details: {e}")))?;
    sqlx::query(
        "INSERT INTO audit_events (workspace_id, seq, prev_hash, hash, occurred_at, environment, actor_kind, actor_id, \
                                   action, request_id, subject, details, mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(workspace_id)
    .bind(event.seq)
    .bind(&event.prev_hash)
    .bind(&hash)
    .bind(event.occurred_at)
    .bind(&event.environment)
    .bind(&event.actor_kind)
    .bind(&event.actor_id)
    .bind(&event.action)
    .bind(&event.request_id)
    .bind(&event.subject)
    .bind(event.details.to_string())
    .bind(key.audit_event(workspace_id, event.seq, &hash))
    .execute(&mut *conn)
    .await?;
    let head_mac = key.audit_head(workspace_id, event.seq, &hash);
    if !tx.defer_head(workspace_id, event.seq, &hash, &head_mac) {
        sqlx::query("UPDATE audit_heads SET seq = $1, hash = $2, mac = $3 WHERE workspace_id = $4")
            .bind(event.seq)
            .bind(&hash)
            .bind(&head_mac)
            .bind(workspace_id)
            .execute(tx.conn())
            .await?;
    }
    Ok((event.seq, hash))
}

#[derive(FromRow)]
struct EventRow {
    seq: i64,
    prev_hash: String,
    hash: String,
    occurred_at: i64,
    environment: Option<String>,
    actor_kind: String,
    actor_id: String,
    action: String,
    request_id: Option<String>,
    subject: Option<String>,
    details: String,
    mac: Option<String>,
}

/// An event as stored, with its stored hash and MAC.
pub struct StoredEvent {
    pub event: AuditEvent,
    pub hash: String,
    pub mac: Option<String>,
}

/// Events of a workspace with `seq > after_seq`, in order, at most `limit`; each with its stored hash and MAC.
/// A `details` column that is not JSON is returned as a JSON string, so verification reports the event as
/// altered instead of failing to read it.
pub async fn events_after(
    conn: &mut AnyConnection,
    workspace_id: &str,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<StoredEvent>> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT seq, prev_hash, hash, occurred_at, environment, actor_kind, actor_id, action, request_id, subject, details, mac \
         FROM audit_events WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
    )
    .bind(workspace_id)
    .bind(after_seq)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let details = serde_json::from_str(&r.details).unwrap_or(Value::String(r.details));
            let event = AuditEvent {
                workspace_id: workspace_id.to_string(),
                seq: r.seq,
                prev_hash: r.prev_hash,
                occurred_at: r.occurred_at,
                environment: r.environment,
                actor_kind: r.actor_kind,
                actor_id: r.actor_id,
                action: r.action,
                request_id: r.request_id,
                subject: r.subject,
                details,
            };
            StoredEvent { event, hash: r.hash, mac: r.mac }
        })
        .collect())
}

/// The chain head: the last sequence number, hash and MAC.
pub async fn head(conn: &mut AnyConnection, workspace_id: &str) -> Result<(i64, String, Option<String>)> {
    sqlx::query_as("SELECT seq, hash, mac FROM audit_heads WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Every workspace's head (for anchoring outside the database). Not scoped to one workspace by design: the
/// anchor covers them all.
pub async fn all_heads(conn: &mut AnyConnection) -> Result<Vec<(String, i64, String)>> {
    Ok(sqlx::query_as("SELECT workspace_id, seq, hash FROM audit_heads ORDER BY workspace_id")
        .fetch_all(&mut *conn)
        .await?)
}

/// The stored hash of one event, if the event exists.
pub async fn hash_at(conn: &mut AnyConnection, workspace_id: &str, seq: i64) -> Result<Option<String>> {
    let row: Option<(String,)> = sqlx::query_as("SELECT hash FROM audit_events WHERE workspace_id = $1 AND seq = $2")
        .bind(workspace_id)
        .bind(seq)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|(h,)| h))
}

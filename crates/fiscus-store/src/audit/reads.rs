//! The audit log read back: events after a sequence number or about one subject, the chain's heads and
//! growth. A stored event is returned as stored (hash and MAC beside it), for the verifier to judge.

use crate::{Result, StoreError};
use fiscus_domain::audit::AuditEvent;
use serde_json::Value;
use sqlx::AnyConnection;

row! {
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
}

/// An event as stored, with its stored hash and MAC.
pub struct StoredEvent {
    pub event: AuditEvent,
    pub hash: String,
    pub mac: Option<String>,
}

/// The chain's length over time, for a picture: `(occurred_at, seq)` of about `points` events spread evenly
/// over the workspace's first `total`, the last one included.
pub async fn growth(conn: &mut AnyConnection, workspace_id: &str, total: i64, points: i64) -> Result<Vec<(i64, i64)>> {
    let step = (total / points.max(1)).max(1);
    Ok(sqlx::query_as(
        "SELECT occurred_at, seq FROM audit_events WHERE workspace_id = $1 AND seq <= $2 \
         AND (seq % $3 = 0 OR seq = $2 OR seq = 1) ORDER BY seq",
    )
    .bind(workspace_id)
    .bind(total)
    .bind(step)
    .fetch_all(&mut *conn)
    .await?)
}

/// Events of a workspace about `subject` (the id of what they record), in order, at most `limit`.
pub async fn events_about(
    conn: &mut AnyConnection,
    workspace_id: &str,
    subject: &str,
    limit: i64,
) -> Result<Vec<StoredEvent>> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT seq, prev_hash, hash, occurred_at, environment, actor_kind, actor_id, action, request_id, subject, details, mac \
         FROM audit_events WHERE workspace_id = $1 AND subject = $2 ORDER BY seq LIMIT $3",
    )
    .bind(workspace_id)
    .bind(subject)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| stored(workspace_id, r)).collect())
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
    Ok(rows.into_iter().map(|r| stored(workspace_id, r)).collect())
}

fn stored(workspace_id: &str, r: EventRow) -> StoredEvent {
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

//! The transactional outbox: every lifecycle event is written in the transaction of the change it
//! announces, in the one envelope ([`fiscus_domain::events::Event`]), so it is delivered (later, at least
//! once) if and only if the change committed. The stored payload is the envelope exactly as subscribers will
//! receive it; reading it back decodes it strictly (an unknown type or shape is `Corrupt`).

use crate::{Result, StoreError, WriteTx};
use fiscus_domain::events::Event;
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

/// Writes `event` (about `subject_id`, e.g. the action, which belongs to application `owner` when an
/// application proposed or invoked it) into the outbox, inside `tx`.
pub async fn enqueue(
    tx: &mut WriteTx,
    event: &Event,
    subject_id: &str,
    owner: Option<&str>,
    created_at: i64,
) -> Result<()> {
    let payload = serde_json::to_string(event).map_err(|e| StoreError::Corrupt(format!("event {}: {e}", event.id)))?;
    sqlx::query(
        "INSERT INTO outbox (id, workspace_id, environment, event_type, subject_id, payload, created_at, \
         owner_application_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&event.id)
    .bind(&event.workspace_id)
    .bind(event.environment.as_str())
    .bind(event.event_type.as_str())
    .bind(subject_id)
    .bind(payload)
    .bind(created_at)
    .bind(owner)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// One event to enqueue: the event, its subject's id, and the application that owns the subject, if any.
pub struct Enqueued<'a> {
    pub event: &'a Event,
    pub subject_id: &'a str,
    pub owner: Option<&'a str>,
    pub created_at: i64,
}

/// [`enqueue`] of many events, in multi-row statements.
pub async fn enqueue_many(tx: &mut WriteTx, events: &[Enqueued<'_>]) -> Result<()> {
    const WIDTH: usize = 8;
    let backend = crate::dialect::backend_of(tx.conn());
    for chunk in events.chunks(crate::dialect::rows_per_statement(WIDTH).min(500)) {
        let sql = crate::dialect::multi_row_insert(
            backend,
            "INSERT INTO outbox (id, workspace_id, environment, event_type, subject_id, payload, created_at, owner_application_id) VALUES ",
            chunk.len(),
            WIDTH,
        );
        let mut q = sqlx::query(&sql);
        for e in chunk {
            let payload = serde_json::to_string(e.event)
                .map_err(|err| StoreError::Corrupt(format!("event {}: {err}", e.event.id)))?;
            q = q
                .bind(&e.event.id)
                .bind(&e.event.workspace_id)
                .bind(e.event.environment.as_str())
                .bind(e.event.event_type.as_str())
                .bind(e.subject_id)
                .bind(payload)
                .bind(e.created_at)
                .bind(e.owner);
        }
        q.execute(tx.conn()).await?;
    }
    Ok(())
}

fn decode(id: &str, payload: &str) -> Result<Event> {
    serde_json::from_str(payload).map_err(|e| StoreError::Corrupt(format!("outbox {id}: payload: {e}")))
}

/// The events about one subject, oldest first.
pub async fn events_of(conn: &mut AnyConnection, tenant: &Tenant, subject_id: &str) -> Result<Vec<Event>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, payload FROM outbox WHERE workspace_id = $1 AND environment = $2 AND subject_id = $3 ORDER BY id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(subject_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|(id, payload)| decode(id, payload)).collect()
}

/// A page of the tenant's events, ascending by id (`limit + 1` rows: the extra one says there is more).
pub async fn list(conn: &mut AnyConnection, tenant: &Tenant, after_id: Option<&str>, limit: u32) -> Result<Vec<Event>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, payload FROM outbox WHERE workspace_id = $1 AND environment = $2 AND ($3 IS NULL OR id > $3) \
         ORDER BY id LIMIT $4",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|(id, payload)| decode(id, payload)).collect()
}

//! Idempotency keys (draft-ietf-httpapi-idempotency-key-header; Stripe's semantics).
//!
//! Two ways to hold a key:
//!
//! - **Reserved first**: [`reserve`] in its own short transaction before the handler runs, so that a
//!   concurrent duplicate sees it at once (409). The handler's effect and the stored response are then
//!   committed in ONE transaction by [`complete`], which only succeeds for the holder of the reservation's
//!   `lock_token`: if a reservation went stale and was taken over by a retry, the slow original cannot also
//!   commit its effect.
//! - **Recorded with the effect** (for handlers that are one short transaction with no effect outside it):
//!   the handler runs at once, and [`record`] inserts the completed record in the effect's own transaction
//!   (taking over a stale reservation like [`reserve`] does). The primary key decides between concurrent duplicates: the one whose insert lands keeps
//!   its effect; any other finds the record and must discard its own effect, answering with what it found
//!   (the replay, or 409 while the winner's transaction is still open elsewhere). One commit instead of two.

use crate::Result;
use crate::dialect::{backend_of, for_update};
use sqlx::AnyConnection;

/// What a reservation attempt found.
#[derive(Debug)]
pub enum Reservation {
    /// The caller holds the key and must complete or release it.
    Acquired { lock_token: String },
    /// The key completed earlier with this response.
    Replay(StoredResponse),
    /// Another request with this key is still running.
    InFlight,
    /// The key was used with another method, path or body.
    Mismatch,
}

#[derive(Clone, Debug)]
pub struct StoredResponse {
    pub status: u16,
    /// JSON object of the response headers worth replaying (content type, location).
    pub headers: String,
    pub body: String,
}

pub struct KeyRef<'a> {
    pub workspace_id: &'a str,
    pub application_id: &'a str,
    pub key: &'a str,
}

pub struct Fingerprint<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// SHA-256 of the request body.
    pub body: &'a str,
}

row! {
    struct Row {
        method: String,
        path: String,
        fingerprint: String,
        state: String,
        response_status: Option<i64>,
        response_headers: Option<String>,
        response_body: Option<String>,
        lock_token: String,
        locked_at: i64,
    }
}

/// Reserves `key` for a request. Run inside a write transaction and commit it before running the handler.
pub async fn reserve(
    conn: &mut AnyConnection,
    key: &KeyRef<'_>,
    fp: &Fingerprint<'_>,
    lock_token: &str,
    now: i64,
    stale_after: i64,
    retain_for: i64,
) -> Result<Reservation> {
    // A key past its retention is forgotten, so it may be used afresh.
    sqlx::query("DELETE FROM idempotency_keys WHERE application_id = $1 AND idem_key = $2 AND expires_at < $3")
        .bind(key.application_id)
        .bind(key.key)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys (workspace_id, application_id, idem_key, method, path, fingerprint, state, \
                                       lock_token, locked_at, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'in_flight', $7, $8, $8, $9) \
         ON CONFLICT (application_id, idem_key) DO NOTHING",
    )
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .bind(fp.method)
    .bind(fp.path)
    .bind(fp.body)
    .bind(lock_token)
    .bind(now)
    .bind(now + retain_for)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(Reservation::Acquired { lock_token: lock_token.to_string() });
    }
    let lock = for_update(backend_of(conn));
    let row: Row = sqlx::query_as(&format!(
        "SELECT method, path, fingerprint, state, response_status, response_headers, response_body, lock_token, locked_at \
         FROM idempotency_keys WHERE workspace_id = $1 AND application_id = $2 AND idem_key = $3{lock}"
    ))
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .fetch_one(&mut *conn)
    .await?;
    let (held_by, locked_at) = (row.lock_token.clone(), row.locked_at);
    match classify(row, fp) {
        Reservation::InFlight => {}
        settled => return Ok(settled),
    }
    if locked_at > now - stale_after {
        return Ok(Reservation::InFlight);
    }
    // The holder has been silent past the stale window (it crashed, or its effect never committed). Take it
    // over; the old holder's `complete` will now fail, so at most one effect commits.
    let taken = sqlx::query(
        "UPDATE idempotency_keys SET lock_token = $1, locked_at = $2 \
         WHERE application_id = $3 AND idem_key = $4 AND state = 'in_flight' AND lock_token = $5",
    )
    .bind(lock_token)
    .bind(now)
    .bind(key.application_id)
    .bind(key.key)
    .bind(&held_by)
    .execute(&mut *conn)
    .await?;
    Ok(if taken.rows_affected() == 1 {
        Reservation::Acquired { lock_token: lock_token.to_string() }
    } else {
        Reservation::InFlight
    })
}

/// Looks a key up without writing. `None` when no live record exists (absent, or past its retention).
/// `InFlight` may be stale: [`reserve`] decides whether it can be taken over.
pub async fn peek(
    conn: &mut AnyConnection,
    key: &KeyRef<'_>,
    fp: &Fingerprint<'_>,
    now: i64,
) -> Result<Option<Reservation>> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT method, path, fingerprint, state, response_status, response_headers, response_body, lock_token, locked_at \
         FROM idempotency_keys WHERE workspace_id = $1 AND application_id = $2 AND idem_key = $3 AND expires_at >= $4",
    )
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|row| classify(row, fp)))
}

/// What an existing record means for a request with fingerprint `fp`.
fn classify(row: Row, fp: &Fingerprint<'_>) -> Reservation {
    if row.method != fp.method || row.path != fp.path || row.fingerprint != fp.body {
        return Reservation::Mismatch;
    }
    if row.state == "completed" {
        return Reservation::Replay(StoredResponse {
            status: row.response_status.and_then(|s| u16::try_from(s).ok()).unwrap_or(500),
            headers: row.response_headers.unwrap_or_else(|| "{}".into()),
            body: row.response_body.unwrap_or_default(),
        });
    }
    Reservation::InFlight
}

/// Records a key as completed with its response, inside the transaction of the effect (see the module
/// documentation). `None` when recorded; otherwise what holds the key (a replay, a mismatch, or in flight),
/// and the caller must discard its effect. A record past its retention is replaced, and a reservation
/// silent for `stale_after` is taken over.
#[allow(clippy::too_many_arguments)]
pub async fn record(
    conn: &mut AnyConnection,
    key: &KeyRef<'_>,
    fp: &Fingerprint<'_>,
    lock_token: &str,
    response: &StoredResponse,
    now: i64,
    stale_after: i64,
    retain_for: i64,
) -> Result<Option<Reservation>> {
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys (workspace_id, application_id, idem_key, method, path, fingerprint, state, \
                                       response_status, response_headers, response_body, lock_token, locked_at, \
                                       created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, $9, $10, $11, $11, $12) \
         ON CONFLICT (application_id, idem_key) DO UPDATE SET \
             workspace_id = excluded.workspace_id, method = excluded.method, path = excluded.path, \
             fingerprint = excluded.fingerprint, state = excluded.state, response_status = excluded.response_status, \
             response_headers = excluded.response_headers, response_body = excluded.response_body, \
             lock_token = excluded.lock_token, locked_at = excluded.locked_at, created_at = excluded.created_at, \
             expires_at = excluded.expires_at \
         WHERE idempotency_keys.expires_at < $11",
    )
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .bind(fp.method)
    .bind(fp.path)
    .bind(fp.body)
    .bind(i64::from(response.status))
    .bind(&response.headers)
    .bind(&response.body)
    .bind(lock_token)
    .bind(now)
    .bind(now + retain_for)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(None);
    }
    let row: Row = sqlx::query_as(
        "SELECT method, path, fingerprint, state, response_status, response_headers, response_body, lock_token, locked_at \
         FROM idempotency_keys WHERE application_id = $1 AND idem_key = $2",
    )
    .bind(key.application_id)
    .bind(key.key)
    .fetch_one(&mut *conn)
    .await?;
    let (held_by, locked_at) = (row.lock_token.clone(), row.locked_at);
    match classify(row, fp) {
        Reservation::InFlight if locked_at <= now - stale_after => {}
        found => return Ok(Some(found)),
    }
    // A reservation whose holder went silent (see `reserve`): this request's effect is the one that counts.
    let taken = sqlx::query(
        "UPDATE idempotency_keys SET state = 'completed', response_status = $1, response_headers = $2, \
                response_body = $3, lock_token = $4, locked_at = $5 \
         WHERE application_id = $6 AND idem_key = $7 AND state = 'in_flight' AND lock_token = $8",
    )
    .bind(i64::from(response.status))
    .bind(&response.headers)
    .bind(&response.body)
    .bind(lock_token)
    .bind(now)
    .bind(key.application_id)
    .bind(key.key)
    .bind(&held_by)
    .execute(&mut *conn)
    .await?;
    Ok(if taken.rows_affected() == 1 { None } else { Some(Reservation::InFlight) })
}

/// Stores the response of a reserved key. Returns false when the reservation is no longer this caller's;
/// the caller must then roll back its effect.
pub async fn complete(
    conn: &mut AnyConnection,
    key: &KeyRef<'_>,
    lock_token: &str,
    response: &StoredResponse,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE idempotency_keys SET state = 'completed', response_status = $1, response_headers = $2, response_body = $3 \
         WHERE workspace_id = $4 AND application_id = $5 AND idem_key = $6 AND state = 'in_flight' AND lock_token = $7",
    )
    .bind(i64::from(response.status))
    .bind(&response.headers)
    .bind(&response.body)
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .bind(lock_token)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Gives a reservation up (the request failed with a 5xx, which is never stored), so a retry may run.
pub async fn release(conn: &mut AnyConnection, key: &KeyRef<'_>, lock_token: &str) -> Result<()> {
    sqlx::query(
        "DELETE FROM idempotency_keys \
         WHERE workspace_id = $1 AND application_id = $2 AND idem_key = $3 AND state = 'in_flight' AND lock_token = $4",
    )
    .bind(key.workspace_id)
    .bind(key.application_id)
    .bind(key.key)
    .bind(lock_token)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes keys past their retention; run periodically.
pub async fn purge_expired(conn: &mut AnyConnection, now: i64) -> Result<u64> {
    let done = sqlx::query("DELETE FROM idempotency_keys WHERE expires_at < $1").bind(now).execute(&mut *conn).await?;
    Ok(done.rows_affected())
}

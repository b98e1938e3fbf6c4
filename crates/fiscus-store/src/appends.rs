//! Appends: what a short write hands to the store whole instead of writing it statement by statement — rows
//! of append-only tables, the request's idempotency record and its audit events ([`Appends`],
//! [`crate::Store::append`]).
//!
//! With group commit the lane keeps each member's appends until the group commits, then writes them all in
//! a few multi-row statements just before the `COMMIT` (see `group`): the idempotency records first, in one
//! `INSERT … ON CONFLICT DO NOTHING`, then the rows of the members whose key was recorded, table by table,
//! then their audit events with the group's other events. A member costs the database no round trip of its
//! own, which is what a keyed append on PostgreSQL spends its time on (each round trip wakes a backend).
//!
//! A member is isolated as a member with its own savepoint is: if a batched statement fails, the lane rolls
//! the batch back and writes the members one by one, each in a savepoint, so only the member whose rows
//! fail gets the error. A member whose key turns out to be held (a concurrent duplicate, a replay, a reused
//! key) writes nothing and is told what holds it ([`Appended::Held`]).
//!
//! Only what needs no reading inside the transaction fits here: rows with server-made ids, written as they
//! are. Anything that decides on stored state takes a [`crate::WriteTx`].

use crate::audit::{NewAuditEvent, PendingEvent};
use crate::dialect::{backend_of, bind_all, multi_row_insert, rows_per_statement};
use crate::idempotency::{self, Fingerprint, KeyRef, Reservation, StoredResponse};
use crate::seals::SealedTable;
use crate::{Result, StoreError};
use fiscus_domain::integrity::{SealKey, Stored};
use sqlx::{AnyConnection, Row};
use std::collections::HashSet;

/// A member's appends (see the module documentation).
#[derive(Default)]
pub struct Appends {
    pub(crate) rows: Vec<AppendRow>,
    pub(crate) audit: Vec<PendingEvent>,
    pub(crate) key: Option<KeyWrite>,
}

/// A row of a sealed append-only table: its sealed columns' values and their seal (see [`Appends::sealed_row`]).
pub(crate) struct AppendRow {
    pub(crate) table: &'static str,
    /// The table's sealed columns, in `values` order; `seal_mac` follows them.
    pub(crate) columns: &'static [&'static str],
    pub(crate) values: Vec<Stored>,
    pub(crate) seal_mac: String,
}

/// How the member's idempotency key is written with its appends.
pub enum KeyWrite {
    /// Recorded with the effect (see [`idempotency::record`]): the member's appends are kept only if its
    /// record lands.
    Record(KeyRecord),
    /// Completes the reservation the request took first (see [`idempotency::complete`]); kept only if the
    /// reservation is still this request's.
    Complete { workspace_id: String, application_id: String, key: String, lock_token: String, response: StoredResponse },
}

/// An idempotency key recorded with the effect: what [`idempotency::record`] takes, owned.
pub struct KeyRecord {
    pub workspace_id: String,
    pub application_id: String,
    pub key: String,
    pub method: String,
    pub path: String,
    /// SHA-256 of the request body.
    pub fingerprint: String,
    pub lock_token: String,
    pub response: StoredResponse,
    pub now: i64,
    pub stale_after: i64,
    pub retain_for: i64,
}

/// What became of a member's appends once its group committed.
#[derive(Debug)]
pub enum Appended {
    /// Durable, with its idempotency record if it carried one.
    Written,
    /// Its key is held by another record: nothing of it was written; the answer is what holds the key.
    Held(Reservation),
}

impl Appends {
    pub fn new() -> Appends {
        Appends::default()
    }

    /// Adds a row to a sealed table, sealed over exactly the values written (`values` in `table.columns`
    /// order); `fiscus verify records` checks it like any other seal. A `Stored::Null` is bound as text, so
    /// a column that may receive one must be a text column.
    pub fn sealed_row(&mut self, key: &SealKey, table: &SealedTable, values: Vec<Stored>) -> Result<()> {
        let seal_mac = crate::seals::seal_of(key, table, values.clone())?;
        let columns: crate::seals::Columns = table.columns.iter().copied().zip(values.iter().cloned()).collect();
        // Its leaf goes with the member's audit events: chained only if the member's appends are written.
        let (workspace_id, leaf) = crate::seals::leaf_of(table, &columns)?;
        if crate::tlog::logging() {
            self.audit.push(PendingEvent::Record { workspace_id, leaf });
        }
        self.rows.push(AppendRow { table: table.table, columns: table.columns, values, seal_mac });
        Ok(())
    }

    /// Adds an audit event to `workspace_id`'s chain (chained when the group commits, like every event).
    pub fn audit(&mut self, workspace_id: &str, event: NewAuditEvent<'_>) {
        self.audit.push(PendingEvent::new(workspace_id, event));
    }

    /// The workspace these appends are chained in (their first audit event's), if they carry one.
    pub(crate) fn workspace(&self) -> Option<&str> {
        self.audit.first().map(PendingEvent::workspace_id)
    }

    /// Writes the idempotency key with the appends (at most one per member; a second replaces the first).
    pub fn key(&mut self, key: KeyWrite) {
        self.key = Some(key);
    }
}

/// Writes the appends of `members` (all of them, or none: an error leaves the transaction to be rolled back
/// to a savepoint taken before) and says what became of each, in order. The audit events of the members
/// written are left for the caller to chain; a held member's are dropped.
pub(crate) async fn write(conn: &mut AnyConnection, members: &[&Appends]) -> Result<Vec<Appended>> {
    let mut outcomes: Vec<Option<Appended>> = members.iter().map(|_| None).collect();
    let records: Vec<(usize, &KeyRecord)> = members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match &m.key {
            Some(KeyWrite::Record(r)) => Some((i, r)),
            _ => None,
        })
        .collect();
    // Records first, together: whichever does not land (its key exists) is resolved on its own below.
    let landed = record_keys(conn, &records).await?;
    for (i, record) in records {
        if landed.contains(record.lock_token.as_str()) {
            continue;
        }
        let key =
            KeyRef { workspace_id: &record.workspace_id, application_id: &record.application_id, key: &record.key };
        let fp = Fingerprint { method: &record.method, path: &record.path, body: &record.fingerprint };
        let found = idempotency::record(
            conn,
            &key,
            &fp,
            &record.lock_token,
            &record.response,
            record.now,
            record.stale_after,
            record.retain_for,
        )
        .await?;
        if let Some(found) = found {
            outcomes[i] = Some(Appended::Held(found));
        }
    }
    for (i, member) in members.iter().enumerate() {
        if let Some(KeyWrite::Complete { workspace_id, application_id, key, lock_token, response }) = &member.key {
            let key = KeyRef { workspace_id, application_id, key };
            if !idempotency::complete(conn, &key, lock_token, response).await? {
                outcomes[i] = Some(Appended::Held(Reservation::InFlight));
            }
        }
    }
    let kept: Vec<&AppendRow> = members
        .iter()
        .zip(&outcomes)
        .filter(|(_, outcome)| outcome.is_none())
        .flat_map(|(m, _)| m.rows.iter())
        .collect();
    insert_rows(conn, &kept).await?;
    Ok(outcomes.into_iter().map(|o| o.unwrap_or(Appended::Written)).collect())
}

/// Columns of a recorded key, in bind order (see [`bind_key`]).
pub(crate) const KEY_COLUMNS: &[&str] = &[
    "workspace_id",
    "application_id",
    "idem_key",
    "method",
    "path",
    "fingerprint",
    "state",
    "response_status",
    "response_headers",
    "response_body",
    "lock_token",
    "locked_at",
    "created_at",
    "expires_at",
];

/// Inserts the records whose key is free, in multi-row statements; returns the lock tokens of those that
/// landed (a token is unique to its request, where two members may carry the same key).
async fn record_keys(conn: &mut AnyConnection, records: &[(usize, &KeyRecord)]) -> Result<HashSet<String>> {
    let mut landed = HashSet::with_capacity(records.len());
    if records.is_empty() {
        return Ok(landed);
    }
    let backend = backend_of(conn);
    let head = format!("INSERT INTO idempotency_keys ({}) VALUES ", KEY_COLUMNS.join(", "));
    for chunk in records.chunks(rows_per_statement(KEY_COLUMNS.len())) {
        let mut sql = multi_row_insert(backend, &head, chunk.len(), KEY_COLUMNS.len());
        sql.push_str(" ON CONFLICT (application_id, idem_key) DO NOTHING RETURNING lock_token");
        let mut query = sqlx::query(&sql);
        for (_, r) in chunk {
            query = bind_key(query, r);
        }
        for row in query.fetch_all(&mut *conn).await? {
            landed.insert(row.try_get::<String, _>(0).map_err(StoreError::from)?);
        }
    }
    Ok(landed)
}

/// Binds a recorded key's values in [`KEY_COLUMNS`] order.
pub(crate) fn bind_key<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    r: &'q KeyRecord,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    query
        .bind(&r.workspace_id)
        .bind(&r.application_id)
        .bind(&r.key)
        .bind(&r.method)
        .bind(&r.path)
        .bind(&r.fingerprint)
        .bind("completed")
        .bind(i64::from(r.response.status))
        .bind(&r.response.headers)
        .bind(&r.response.body)
        .bind(&r.lock_token)
        .bind(r.now)
        .bind(r.now)
        .bind(r.now + r.retain_for)
}

/// Inserts `rows` grouped by table (in the order each table first appears), in multi-row statements.
async fn insert_rows(conn: &mut AnyConnection, rows: &[&AppendRow]) -> Result<()> {
    let backend = backend_of(conn);
    let mut tables: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    for row in rows {
        if !tables.iter().any(|(table, _)| *table == row.table) {
            tables.push((row.table, row.columns));
        }
    }
    for (table, columns) in tables {
        let of_table: Vec<&AppendRow> = rows.iter().copied().filter(|r| r.table == table).collect();
        let width = columns.len() + 1;
        let head = format!("INSERT INTO {table} ({}, seal_mac) VALUES ", columns.join(", "));
        for chunk in of_table.chunks(rows_per_statement(width)) {
            let sql = multi_row_insert(backend, &head, chunk.len(), width);
            let mut query = sqlx::query(&sql);
            for row in chunk {
                query = bind_all!(query, &row.values).bind(row.seal_mac.as_str());
            }
            query.execute(&mut *conn).await?;
        }
    }
    Ok(())
}

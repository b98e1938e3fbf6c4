//! The per-workspace hash-chained audit log. Appends happen inside the transaction of the change they record:
//! here the events are chained under their head's lock and written with the transparency log's leaves in
//! multi-row statements; `reads.rs` reads them back for verification, bundles and the console.

mod reads;

pub use reads::{StoredEvent, all_heads, events_about, events_after, growth, hash_at, head};

use crate::dialect::{backend_of, for_update};
use crate::{Backend, Result, StoreError, WriteTx};
use fiscus_domain::audit::AuditEvent;
use fiscus_domain::integrity::SealKey;
use fiscus_domain::tlog::Leaf;
use serde_json::Value;
use sqlx::AnyConnection;
use std::collections::HashMap;

pub struct NewAuditEvent<'a> {
    pub environment: Option<fiscus_domain::credentials::Environment>,
    pub actor: &'a fiscus_domain::actor::Actor,
    pub action: fiscus_domain::audit_action::AuditAction,
    pub request_id: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub details: Value,
    pub occurred_at: i64,
}

/// An audit event waiting for its place in its workspace's chain.
#[derive(Clone)]
pub(crate) struct PendingAudit {
    workspace_id: String,
    environment: Option<String>,
    actor_kind: String,
    actor_id: String,
    action: String,
    request_id: Option<String>,
    subject: Option<String>,
    details: Value,
    occurred_at: i64,
}

/// What waits for its place in its workspace's log at the group's end: an audit event (which also takes a
/// place in the chain), or a sealed record's leaf of the transparency log (`fiscus_domain::tlog`). Both are
/// kept, dropped with a member's savepoint and written the same way, so a record's leaf lands in exactly the
/// transaction that wrote the record.
#[derive(Clone)]
pub(crate) enum PendingEvent {
    Audit(PendingAudit),
    Record { workspace_id: String, leaf: Leaf },
}

impl PendingEvent {
    pub(crate) fn workspace_id(&self) -> &str {
        match self {
            PendingEvent::Audit(a) => &a.workspace_id,
            PendingEvent::Record { workspace_id, .. } => workspace_id,
        }
    }

    pub(crate) fn new(workspace_id: &str, new: NewAuditEvent<'_>) -> PendingEvent {
        PendingEvent::Audit(PendingAudit {
            workspace_id: workspace_id.to_string(),
            environment: new.environment.map(|e| e.as_str().to_string()),
            actor_kind: new.actor.kind.as_str().to_string(),
            actor_id: new.actor.id.clone(),
            action: new.action.as_str().to_string(),
            request_id: new.request_id.map(str::to_string),
            subject: new.subject.map(str::to_string),
            details: new.details,
            occurred_at: new.occurred_at,
        })
    }
}

/// Appends an event to the workspace's chain, in the transaction of the change it records.
///
/// In a commit group (see `group`) the event takes its place in the chain when the group commits: the lane
/// keeps it with the member's savepoint (dropped if the member rolls back), and just before the `COMMIT` it
/// locks the heads of the workspaces appended to, chains the group's events in order, inserts them together
/// and moves each head once. A workspace's head is thus locked only while its group commits, not while its
/// members work, so several lanes can work at once. Here only the workspace's chain is checked to exist (once
/// per group). Without a group the event is chained and written at once, its head locked (PostgreSQL) or the
/// transaction the only writer (SQLite).
pub async fn append(tx: &mut WriteTx, workspace_id: &str, new: NewAuditEvent<'_>) -> Result<()> {
    defer(tx, PendingEvent::new(workspace_id, new)).await
}

/// Puts a sealed record's leaf in its workspace's transparency log, in the transaction that wrote the record
/// (the same way as an audit event: see [`append`]).
pub(crate) async fn log_record(tx: &mut WriteTx, workspace_id: &str, leaf: Leaf) -> Result<()> {
    if !crate::tlog::logging() {
        return Ok(());
    }
    defer(tx, PendingEvent::Record { workspace_id: workspace_id.to_string(), leaf }).await
}

async fn defer(tx: &mut WriteTx, event: PendingEvent) -> Result<()> {
    let key = tx.seal_key().clone();
    match tx.lane_state() {
        Some(state) => {
            let workspace_id = event.workspace_id();
            if !state.knows_chain(workspace_id) {
                let exists: Option<(i64,)> = sqlx::query_as("SELECT seq FROM audit_heads WHERE workspace_id = $1")
                    .bind(workspace_id)
                    .fetch_optional(state.conn())
                    .await?;
                if exists.is_none() {
                    return Err(StoreError::NotFound);
                }
                let workspace_id = workspace_id.to_string();
                state.mark_chain_known(&workspace_id);
            }
            state.defer_audit(event);
            Ok(())
        }
        None => write_chained(tx.conn(), &key, vec![event]).await.map(drop),
    }
}

/// Rows per multi-row `INSERT` (14 binds each, far below both backends' limits).
const INSERT_CHUNK: usize = 64;

/// The columns of `audit_events`, in the order [`bind_event`] binds them.
pub(crate) const EVENT_COLUMNS: &[&str] = &[
    "workspace_id",
    "seq",
    "prev_hash",
    "hash",
    "occurred_at",
    "environment",
    "actor_kind",
    "actor_id",
    "action",
    "request_id",
    "subject",
    "details",
    "mac",
    "leaf_index",
];

/// Leaves per `tlog_batches` row, at most.
const BATCH_LEAVES: usize = 1024;

/// The columns of `tlog_batches`, in the order [`bind_batch`] binds them.
pub(crate) const BATCH_COLUMNS: &[&str] = &["workspace_id", "first_leaf", "leaf_count", "leaves"];

/// A workspace's head: its chain's last sequence number and hash, and how many leaves its transparency log
/// has. The MAC covers the chain's part; the log's count needs none (a checkpoint signs what it covers, and
/// a count moved by hand only makes the next write collide with a leaf already there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) seq: i64,
    pub(crate) hash: String,
    pub(crate) leaves: i64,
}

/// An event given its place in its chain: the event, its hash and its MAC, and its leaf's index in the
/// transparency log (none with the log off), which its row keeps so that nothing else need index it.
pub(crate) struct ChainedEvent {
    event: AuditEvent,
    hash: String,
    mac: String,
    leaf_index: Option<i64>,
}

/// A group's leaves of one workspace, given their places in its log: one `tlog_batches` row.
pub(crate) struct LeafBatch {
    workspace_id: String,
    first: i64,
    count: i64,
    /// The leaves as `crate::tlog::encode_leaves` writes them.
    leaves: String,
}

/// What chaining a group's pending events gives: the events to insert and the log's leaves (every record's
/// and every event's), in batches of one workspace each.
pub(crate) struct Chained {
    pub(crate) events: Vec<ChainedEvent>,
    pub(crate) batches: Vec<LeafBatch>,
}

/// Chains `events`, in order, onto `heads` (workspace id → head), moving each head past its events and
/// leaves. Pure: the caller read the heads (or remembers them, see `append_statement`) and writes the result.
/// `NotFound` if an event's workspace has no head in `heads`.
pub(crate) fn chain(key: &SealKey, events: Vec<PendingEvent>, heads: &mut HashMap<String, Head>) -> Result<Chained> {
    let mut rows = Vec::with_capacity(events.len());
    // Runs of leaves, each of one workspace: where it starts and its leaves. A workspace's leaves are
    // numbered from its head, one after another, so one group's are one contiguous run, cut every
    // `BATCH_LEAVES` (a backfill logs a whole workspace in one transaction, and a reader decodes a batch whole).
    let mut leaves: Vec<(String, i64, Vec<Leaf>)> = Vec::new();
    let mut place = |workspace_id: &str, head: &mut Head, leaf: Leaf| {
        match leaves.iter_mut().rev().find(|(w, _, _)| w == workspace_id) {
            Some((_, _, run)) if run.len() < BATCH_LEAVES => run.push(leaf),
            _ => leaves.push((workspace_id.to_string(), head.leaves, vec![leaf])),
        }
        head.leaves += 1;
    };
    for pending in events {
        let head = heads.get_mut(pending.workspace_id()).ok_or(StoreError::NotFound)?;
        let pending = match pending {
            PendingEvent::Audit(a) => a,
            PendingEvent::Record { workspace_id, leaf } => {
                place(&workspace_id, head, leaf);
                continue;
            }
        };
        let event = AuditEvent {
            workspace_id: pending.workspace_id,
            seq: head.seq + 1,
            prev_hash: std::mem::take(&mut head.hash),
            occurred_at: pending.occurred_at,
            environment: pending.environment,
            actor_kind: pending.actor_kind,
            actor_id: pending.actor_id,
            action: pending.action,
            request_id: pending.request_id,
            subject: pending.subject,
            details: pending.details,
        };
        let hash = event.hash().map_err(|e| StoreError::Corrupt(format!("audit details: {e}")))?;
        let mac = key.audit_event(&event.workspace_id, event.seq, &hash);
        head.seq = event.seq;
        head.hash.clone_from(&hash);
        let leaf_index = crate::tlog::logging().then(|| {
            let index = head.leaves;
            place(&event.workspace_id, head, Leaf::audit_event(event.seq, &hash));
            index
        });
        rows.push(ChainedEvent { event, hash, mac, leaf_index });
    }
    let batches = leaves
        .into_iter()
        .map(|(workspace_id, first, run)| LeafBatch {
            workspace_id,
            first,
            count: run.len() as i64,
            leaves: crate::tlog::encode_leaves(&run),
        })
        .collect();
    Ok(Chained { events: rows, batches })
}

/// Binds a chained event's values in [`EVENT_COLUMNS`] order.
pub(crate) fn bind_event<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    row: &'q ChainedEvent,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    let event = &row.event;
    query
        .bind(&event.workspace_id)
        .bind(event.seq)
        .bind(&event.prev_hash)
        .bind(&row.hash)
        .bind(event.occurred_at)
        .bind(&event.environment)
        .bind(&event.actor_kind)
        .bind(&event.actor_id)
        .bind(&event.action)
        .bind(&event.request_id)
        .bind(&event.subject)
        .bind(event.details.to_string())
        .bind(&row.mac)
        .bind(row.leaf_index)
}

/// Binds a batch of leaves in [`BATCH_COLUMNS`] order.
pub(crate) fn bind_batch<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    row: &'q LeafBatch,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    query.bind(&row.workspace_id).bind(row.first).bind(row.count).bind(&row.leaves)
}

/// `INSERT INTO table (columns) VALUES (…), …` for `rows` rows whose parameters start after `offset`.
fn values_clause(sql: &mut String, table: &str, columns: &[&str], rows: usize, offset: usize) {
    sql.push_str(&format!("INSERT INTO {table} ({}) VALUES ", columns.join(", ")));
    for i in 0..rows {
        let b = offset + i * columns.len();
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for c in 1..=columns.len() {
            if c > 1 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("${}", b + c));
        }
        sql.push(')');
    }
}

/// Chains `events` (in order) onto their workspaces' heads and writes them with their leaves: the heads are
/// locked in workspace order (PostgreSQL `FOR UPDATE`; so two transactions never wait on each other's heads),
/// the events and leaves inserted in multi-row statements, and each head moved once. Returns the heads as
/// moved (for a lane to remember, see `append_statement`). `NotFound` if a workspace has no chain.
pub(crate) async fn write_chained(
    conn: &mut AnyConnection,
    key: &SealKey,
    events: Vec<PendingEvent>,
) -> Result<Vec<(String, Head)>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut workspaces: Vec<&str> = events.iter().map(PendingEvent::workspace_id).collect();
    workspaces.sort_unstable();
    workspaces.dedup();
    let lock = for_update(backend_of(conn));
    let mut heads: HashMap<String, Head> = HashMap::with_capacity(workspaces.len());
    for workspace_id in workspaces {
        let (seq, hash, leaves): (i64, String, i64) =
            sqlx::query_as(&format!("SELECT seq, hash, leaves FROM audit_heads WHERE workspace_id = $1{lock}"))
                .bind(workspace_id)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(StoreError::NotFound)?;
        heads.insert(workspace_id.to_string(), Head { seq, hash, leaves });
    }
    let chained = chain(key, events, &mut heads)?;
    let heads: Vec<(String, Head)> = heads.into_iter().collect();
    // PostgreSQL moves the heads in the statement that inserts the leaves (data-modifying `WITH` clauses run
    // once, whether or not the statement reads them), and a group's events that fit one chunk ride in it
    // too: round trips less for every group, on the path every workspace's writes serialize on. SQLite has
    // no such clause and needs no round trips. Without leaves (the log off) nothing carries them.
    let inline = backend_of(conn) == Backend::Postgres && !chained.batches.is_empty();
    let inline_events = inline && chained.events.len() <= INSERT_CHUNK;
    if !inline_events {
        for chunk in chained.events.chunks(INSERT_CHUNK) {
            let mut sql = String::new();
            values_clause(&mut sql, "audit_events", EVENT_COLUMNS, chunk.len(), 0);
            let mut query = sqlx::query(&sql);
            for row in chunk {
                query = bind_event(query, row);
            }
            query.execute(&mut *conn).await?;
        }
    }
    let chunks: Vec<_> = chained.batches.chunks(INSERT_CHUNK).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let moves = if inline && last { heads.as_slice() } else { &[] };
        let events: &[ChainedEvent] = if inline_events && last { &chained.events } else { &[] };
        let mut sql = String::new();
        let mut clauses = 0;
        let mut open = |sql: &mut String| {
            sql.push_str(if clauses == 0 { "WITH " } else { ", " });
            clauses += 1;
        };
        for (h, _) in moves.iter().enumerate() {
            let b = h * 5;
            open(&mut sql);
            sql.push_str(&format!(
                "head_{h} AS (UPDATE audit_heads SET seq = ${}, hash = ${}, mac = ${}, leaves = ${} WHERE workspace_id = ${})",
                b + 1,
                b + 2,
                b + 3,
                b + 4,
                b + 5
            ));
        }
        let mut offset = moves.len() * 5;
        if !events.is_empty() {
            open(&mut sql);
            sql.push_str("events AS (");
            values_clause(&mut sql, "audit_events", EVENT_COLUMNS, events.len(), offset);
            sql.push(')');
            offset += events.len() * EVENT_COLUMNS.len();
        }
        sql.push(' ');
        values_clause(&mut sql, "tlog_batches", BATCH_COLUMNS, chunk.len(), offset);
        let mut query = sqlx::query(&sql);
        for (workspace_id, head) in moves {
            query = query
                .bind(head.seq)
                .bind(&head.hash)
                .bind(key.audit_head(workspace_id, head.seq, &head.hash))
                .bind(head.leaves)
                .bind(workspace_id);
        }
        for row in events {
            query = bind_event(query, row);
        }
        for row in chunk.iter() {
            query = bind_batch(query, row);
        }
        query.execute(&mut *conn).await?;
    }
    if !inline {
        for (workspace_id, head) in &heads {
            sqlx::query("UPDATE audit_heads SET seq = $1, hash = $2, mac = $3, leaves = $4 WHERE workspace_id = $5")
                .bind(head.seq)
                .bind(&head.hash)
                .bind(key.audit_head(workspace_id, head.seq, &head.hash))
                .bind(head.leaves)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(heads)
}

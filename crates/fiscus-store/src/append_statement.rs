//! A group of appends written in one PostgreSQL statement (see `group` and `appends`).
//!
//! The ordinary way a lane writes a group of appends is a chain of round trips: `BEGIN`, the keys, the rows,
//! the audit heads' `FOR UPDATE`, the events with the heads' move, `COMMIT`. Every round trip wakes a
//! backend and then the lane, and a workspace's groups follow each other on its audit head, so the chain's
//! length, not the CPU or the disk, bounded keyed writes on PostgreSQL.
//!
//! When the lane remembers the head of every workspace the group appends to (from the last group it
//! committed), the whole group is one statement in its own implicit transaction: data-modifying `WITH`
//! clauses insert the keys (`ON CONFLICT DO NOTHING`), the rows and the chained events, and move each head
//! only if it is still where the lane remembers it. The statement's result divides by zero unless every key
//! landed and every head moved, which aborts the statement, and with it every clause: nothing of it is
//! written. A statement is atomic, so the group is written whole or not at all, and its commit is durable
//! when the statement returns (default `synchronous_commit`).
//!
//! Any failure (a key already held, a head moved by another lane, node or the CLI, a row refused, the
//! connection itself) sends the group down the ordinary path, which re-reads the heads under lock, resolves
//! held keys one by one and isolates a failing member; that path is what the tests of `appends` prove, and
//! it stays the only one on SQLite (where a group costs no round trips) and for groups with `WriteTx`
//! members.

use crate::appends::{self, AppendRow, Appends, KeyRecord, KeyWrite};
use crate::audit::{self, Head};
use crate::dialect::MAX_BINDS;
use crate::{Result, StoreError};
use fiscus_domain::integrity::SealKey;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// Writes `members` in one statement if the lane remembers every head they append to (`heads`). `Ok(None)`:
/// the group does not fit this path (a key completing a reservation, a head not remembered, too many binds)
/// and nothing was sent. `Ok(Some(moved))`: every member is written and durable; `moved` are the heads as
/// they now stand. `Err`: the statement failed and nothing of it was written; the caller takes the ordinary
/// path.
pub(crate) async fn try_write(
    conn: &mut AnyConnection,
    key: &SealKey,
    members: &[&Appends],
    heads: &HashMap<String, Head>,
) -> Result<Option<Vec<(String, Head)>>> {
    let mut records: Vec<&KeyRecord> = Vec::new();
    let mut rows: Vec<&AppendRow> = Vec::new();
    let mut events = Vec::new();
    for member in members {
        match &member.key {
            Some(KeyWrite::Record(record)) => records.push(record),
            Some(KeyWrite::Complete { .. }) => return Ok(None),
            None => {}
        }
        rows.extend(member.rows.iter());
        events.extend(member.audit.iter().cloned());
    }
    let mut moving: HashMap<String, Head> = HashMap::new();
    for event in &events {
        let workspace_id = event.workspace_id();
        if !moving.contains_key(workspace_id) {
            let Some(head) = heads.get(workspace_id) else { return Ok(None) };
            moving.insert(workspace_id.to_string(), head.clone());
        }
    }
    let chained = audit::chain(key, events, &mut moving)?;
    let moved: Vec<(String, Head)> = moving.into_iter().collect();
    let binds = records.len() * appends::KEY_COLUMNS.len()
        + rows.iter().map(|r| r.columns.len() + 1).sum::<usize>()
        + chained.events.len() * audit::EVENT_COLUMNS.len()
        + chained.batches.len() * audit::BATCH_COLUMNS.len()
        + moved.len() * 8
        + 1;
    if binds > MAX_BINDS {
        return Ok(None);
    }

    let mut sql = Statement::default();
    let mut checks: Vec<String> = Vec::new();
    if !records.is_empty() {
        let head = format!("k AS (INSERT INTO idempotency_keys ({}) VALUES ", appends::KEY_COLUMNS.join(", "));
        sql.clause(&head, records.len(), appends::KEY_COLUMNS.len());
        sql.text.push_str(" ON CONFLICT (application_id, idem_key) DO NOTHING RETURNING 1)");
        let n = sql.param();
        checks.push(format!("(SELECT count(*) FROM k) = {n}::BIGINT"));
    }
    let mut tables: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    for row in &rows {
        if !tables.iter().any(|(table, _)| *table == row.table) {
            tables.push((row.table, row.columns));
        }
    }
    let mut ordered_rows: Vec<&AppendRow> = Vec::with_capacity(rows.len());
    for (i, (table, columns)) in tables.iter().enumerate() {
        let of_table: Vec<&AppendRow> = rows.iter().copied().filter(|r| r.table == *table).collect();
        let head = format!("r{i} AS (INSERT INTO {table} ({}, seal_mac) VALUES ", columns.join(", "));
        sql.clause(&head, of_table.len(), columns.len() + 1);
        sql.text.push(')');
        ordered_rows.extend(of_table);
    }
    for i in 0..moved.len() {
        let p: Vec<String> = (0..8).map(|_| sql.param()).collect();
        sql.open_clause();
        sql.text.push_str(&format!(
            "h{i} AS (UPDATE audit_heads SET seq = {}, hash = {}, mac = {}, leaves = {} WHERE workspace_id = {} \
             AND seq = {} AND hash = {} AND leaves = {} RETURNING 1)",
            p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
        ));
        checks.push(format!("(SELECT count(*) FROM h{i}) = 1"));
    }
    if !chained.events.is_empty() {
        let head = format!("e AS (INSERT INTO audit_events ({}) VALUES ", audit::EVENT_COLUMNS.join(", "));
        sql.clause(&head, chained.events.len(), audit::EVENT_COLUMNS.len());
        sql.text.push(')');
    }
    if !chained.batches.is_empty() {
        let head = format!("l AS (INSERT INTO tlog_batches ({}) VALUES ", audit::BATCH_COLUMNS.join(", "));
        sql.clause(&head, chained.batches.len(), audit::BATCH_COLUMNS.len());
        sql.text.push(')');
    }
    if sql.clauses == 0 {
        return Ok(None);
    }
    let condition = if checks.is_empty() { "TRUE".to_string() } else { checks.join(" AND ") };
    // A division by zero that depends on the clauses' results is evaluated when the statement runs (a
    // constant one could be folded while planning), and aborts the statement with everything it wrote.
    sql.text.push_str(&format!(" SELECT 1 / (CASE WHEN {condition} THEN 1 ELSE 0 END)"));

    // Binds, in the order the parameters were numbered above.
    let mut query = sqlx::query(&sql.text);
    for record in &records {
        query = appends::bind_key(query, record);
    }
    if !records.is_empty() {
        query = query.bind(records.len() as i64);
    }
    for row in &ordered_rows {
        query = crate::dialect::bind_all!(query, &row.values).bind(row.seal_mac.as_str());
    }
    let previous: Vec<&Head> =
        moved.iter().map(|(w, _)| heads.get(w).expect("every moved head was remembered")).collect();
    let head_macs: Vec<String> = moved.iter().map(|(w, head)| key.audit_head(w, head.seq, &head.hash)).collect();
    for (((workspace_id, head), previous), mac) in moved.iter().zip(&previous).zip(&head_macs) {
        query = query
            .bind(head.seq)
            .bind(&head.hash)
            .bind(mac)
            .bind(head.leaves)
            .bind(workspace_id)
            .bind(previous.seq)
            .bind(&previous.hash)
            .bind(previous.leaves);
    }
    for event in &chained.events {
        query = audit::bind_event(query, event);
    }
    for batch in &chained.batches {
        query = audit::bind_batch(query, batch);
    }
    query.execute(&mut *conn).await.map_err(StoreError::from)?;
    Ok(Some(moved))
}

/// A `WITH` statement being written, numbering its parameters as clauses are added.
#[derive(Default)]
struct Statement {
    text: String,
    params: usize,
    clauses: usize,
}

impl Statement {
    /// The next parameter (`$n`).
    fn param(&mut self) -> String {
        self.params += 1;
        format!("${}", self.params)
    }

    /// Starts a clause: `WITH ` before the first, `, ` between.
    fn open_clause(&mut self) {
        self.text.push_str(if self.clauses == 0 { "WITH " } else { ", " });
        self.clauses += 1;
    }

    /// Adds a clause `head` followed by `rows` tuples of `width` parameters.
    fn clause(&mut self, head: &str, rows: usize, width: usize) {
        self.open_clause();
        self.text.push_str(head);
        for i in 0..rows {
            if i > 0 {
                self.text.push(',');
            }
            self.text.push('(');
            for c in 0..width {
                if c > 0 {
                    self.text.push(',');
                }
                let p = self.param();
                self.text.push_str(&p);
            }
            self.text.push(')');
        }
    }
}

//! The data plane's tables: datasets and the rows they hold (see the migration `…_data_plane.sql`).
//!
//! Rows are written in bulk (multi-row INSERTs, as many rows per statement as the backends' bind limits
//! allow) inside the import's one transaction, so a file is imported whole or not at all. Each dataset
//! seals its rows by a content hash over their canonical lines (each row's stored values as an RFC 8785
//! JSON array), in one of two ways named by the importer version that wrote it ([`Sealing`]); neither
//! depends on the order rows are stored or read in, nor on any database's collation. `fiscus verify
//! records` recomputes it from the rows.

pub mod banking;
pub mod book;
pub mod datasets;
pub mod economics;
pub mod finance_core;
pub mod lineage;
pub mod market;

use crate::rules::Kind;
use fiscus_domain::integrity::Stored;
use fiscus_store::dialect::{bind_all, multi_row_insert, rows_per_statement};
use fiscus_store::{Result, StoreError, WriteTx};
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Row};

/// A table of dataset rows: its columns in stored order (besides `workspace_id`, which every row has).
#[derive(Clone, Copy, Debug)]
pub struct RowTable {
    pub table: &'static str,
    pub columns: &'static [&'static str],
}

/// Inserts rows (values in `table.columns` order) for one workspace, and appends each row's canonical
/// line to `lines` for the dataset's content hash.
pub(crate) async fn insert_rows(
    tx: &mut WriteTx,
    workspace_id: &str,
    table: &RowTable,
    rows: &[Vec<Stored>],
    lines: &mut impl RowSink,
) -> Result<()> {
    if let Some((url, slot)) = tx.copy_url(rows.len()) {
        return staged(tx, (&url, slot), workspace_id, table, rows, |r| r.clone(), lines).await;
    }
    insert_direct(tx, workspace_id, table, rows, lines).await
}

/// Inserts rows by multi-row INSERTs, as many a statement as the bind limits allow.
async fn insert_direct(
    tx: &mut WriteTx,
    workspace_id: &str,
    table: &RowTable,
    rows: &[Vec<Stored>],
    lines: &mut impl RowSink,
) -> Result<()> {
    let width = table.columns.len() + 1;
    let backend = fiscus_store::dialect::backend_of(tx.conn());
    let head = format!("INSERT INTO {} (workspace_id, {}) VALUES ", table.table, table.columns.join(", "));
    for chunk in rows.chunks(rows_per_statement(width)) {
        let sql = multi_row_insert(backend, &head, chunk.len(), width);
        let mut query = sqlx::query(&sql);
        for row in chunk {
            debug_assert_eq!(row.len(), table.columns.len());
            query = bind_all!(query.bind(workspace_id), row);
        }
        query.execute(tx.conn()).await?;
        chunk.iter().for_each(|r| lines.row(r));
    }
    Ok(())
}

/// Inserts one row per item, building each statement's rows as it goes (an import never holds a second copy
/// of all its rows as bind values).
pub(crate) async fn insert_mapped<T>(
    tx: &mut WriteTx,
    workspace_id: &str,
    table: &RowTable,
    items: &[T],
    row: impl Fn(&T) -> Vec<Stored>,
    lines: &mut impl RowSink,
) -> Result<()> {
    if let Some((url, slot)) = tx.copy_url(items.len()) {
        return staged(tx, (&url, slot), workspace_id, table, items, row, lines).await;
    }
    for chunk in items.chunks(rows_per_statement(table.columns.len() + 1)) {
        let rows: Vec<Vec<Stored>> = chunk.iter().map(&row).collect();
        insert_rows(tx, workspace_id, table, &rows, lines).await?;
    }
    Ok(())
}

/// PostgreSQL's bulk path (see [`fiscus_store::copy_in`]): the rows staged by COPY a chunk at a time, then moved
/// into the table by one `INSERT … SELECT` in the import's transaction; the staging table is dropped when
/// that transaction ends, whether it committed or not.
async fn staged<T>(
    tx: &mut WriteTx,
    (url, slot): (&str, fiscus_store::copy_in::Slot),
    workspace_id: &str,
    table: &RowTable,
    items: &[T],
    row: impl Fn(&T) -> Vec<Stored>,
    lines: &mut impl RowSink,
) -> Result<()> {
    let mut staging = fiscus_store::copy_in::Staging::open(url, table.columns.len(), slot).await?;
    let moved = async {
        for chunk in items.chunks(50_000) {
            let rows: Vec<Vec<Stored>> = chunk.iter().map(&row).collect();
            staging.send(&rows).await?;
            rows.iter().for_each(|r| lines.row(r));
        }
        move_staged(tx, workspace_id, table, &staging.table).await
    }
    .await;
    // Dropped when the transaction ends: the drop waits for the lock the INSERT holds on it.
    tx.staged(staging);
    moved
}

/// Moves a staging table's rows into the table, in the import's transaction.
async fn move_staged(tx: &mut WriteTx, workspace_id: &str, table: &RowTable, staging: &str) -> Result<()> {
    let select = fiscus_store::copy_in::select_list(tx.conn(), table.table, table.columns).await?;
    sqlx::query(&format!(
        "INSERT INTO {} (workspace_id, {}) SELECT $1, {select} FROM {staging}",
        table.table,
        table.columns.join(", "),
    ))
    .bind(workspace_id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The rows of one table written a chunk at a time inside one transaction, for an import that streams its
/// file (so its rows are never all in memory at once): by multi-row INSERTs, or on PostgreSQL, for a file
/// large enough and while a COPY slot is free, staged by COPY as they come and moved in by one
/// `INSERT … SELECT` at the end. The rows come already accounted for the content hash (the caller hashes
/// them where it builds them).
pub struct Bulk {
    table: RowTable,
    staging: Option<fiscus_store::copy_in::Staging>,
}

impl Bulk {
    /// Starts writing about `expected_rows` rows to `table`.
    pub async fn open(tx: &mut WriteTx, table: RowTable, expected_rows: usize) -> Result<Bulk> {
        let staging = match tx.copy_url(expected_rows) {
            Some((url, slot)) => Some(fiscus_store::copy_in::Staging::open(&url, table.columns.len(), slot).await?),
            None => None,
        };
        Ok(Bulk { table, staging })
    }

    pub async fn send(&mut self, tx: &mut WriteTx, workspace_id: &str, rows: &[Vec<Stored>]) -> Result<()> {
        match &mut self.staging {
            Some(staging) => staging.send(rows).await,
            None => insert_direct(tx, workspace_id, &self.table, rows, &mut Accounted).await,
        }
    }

    /// Writes what is still staged; the staging table goes when the transaction ends.
    pub async fn finish(self, tx: &mut WriteTx, workspace_id: &str) -> Result<()> {
        let Some(staging) = self.staging else { return Ok(()) };
        let moved = move_staged(tx, workspace_id, &self.table, &staging.table).await;
        tx.staged(staging);
        moved
    }

    /// Gives up (the import failed): the staging table goes when the transaction ends.
    pub fn abandon(self, tx: &mut WriteTx) {
        if let Some(staging) = self.staging {
            tx.staged(staging);
        }
    }
}

/// Rows their writer has already hashed.
struct Accounted;

impl RowSink for Accounted {
    fn row(&mut self, _: &[Stored]) {}
}

/// One row's canonical line: an RFC 8785 JSON array of its stored values.
pub fn line(row: &[Stored]) -> String {
    let mut out = String::with_capacity(16 * row.len());
    write_line(row, &mut out);
    out
}

/// Appends a row's canonical line to `out`.
fn write_line(row: &[Stored], out: &mut String) {
    out.push('[');
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match v {
            Stored::Null => out.push_str("null"),
            Stored::Integer(n) => out.push_str(&n.to_string()),
            // Text needing no escape is written as it is; else serde_json's escaping is already canonical
            // under RFC 8785 (only what JSON requires, the short escapes, lowercase \u00XX).
            Stored::Text(t) if !t.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') => {
                out.push('"');
                out.push_str(t);
                out.push('"');
            }
            Stored::Text(t) => out.push_str(&serde_json::Value::String(t.clone()).to_string()),
        }
    }
    out.push(']');
}

/// Where the rows an insert writes are accounted for the dataset's content hash: their canonical lines
/// kept whole (`Vec<String>`, the first way of sealing) or only their digests ([`RowDigests`]).
pub trait RowSink {
    fn row(&mut self, row: &[Stored]);
}

impl RowSink for Vec<String> {
    fn row(&mut self, row: &[Stored]) {
        self.push(line(row));
    }
}

/// How a dataset's rows are sealed into its content hash, named by the importer version that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sealing {
    /// `fiscus-import/1`: SHA-256 over the lines sorted bytewise, each followed by a newline.
    Lines,
    /// Since `fiscus-import/2`: SHA-256 over the lines' own SHA-256 digests (32 bytes each, of the line
    /// without its newline) sorted bytewise. Equally binding (a different set of rows needs a SHA-256
    /// collision to hash the same), and an import keeps 32 bytes a row to seal it, never the rows' text.
    Digests,
}

impl Sealing {
    pub fn of(importer_version: &str) -> Sealing {
        if importer_version == "fiscus-import/1" { Sealing::Lines } else { Sealing::Digests }
    }
}

/// The digests of the rows of a dataset sealed by [`Sealing::Digests`], as they are written.
#[derive(Default)]
pub struct RowDigests {
    digests: Vec<[u8; 32]>,
    buffer: String,
}

impl RowDigests {
    pub fn with_capacity(rows: usize) -> RowDigests {
        RowDigests { digests: Vec::with_capacity(rows), buffer: String::with_capacity(256) }
    }

    /// Makes room for `rows` more digests at once.
    pub fn reserve(&mut self, rows: usize) {
        self.digests.reserve_exact(rows);
    }

    /// Accounts one line already canonical.
    fn line(&mut self, line: &str) {
        self.digests.push(Sha256::digest(line.as_bytes()).into());
    }

    /// Takes another's digests (rows hashed on another thread).
    pub fn append(&mut self, other: &mut RowDigests) {
        self.digests.append(&mut other.digests);
    }

    pub fn len(&self) -> usize {
        self.digests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// The content hash: `sha256:` and the hex digest over the sorted digests.
    pub fn finish(mut self) -> String {
        self.digests.sort_unstable();
        let mut h = Sha256::new();
        for d in &self.digests {
            h.update(d);
        }
        format!("sha256:{}", fiscus_domain::evidence::hex(&h.finalize()))
    }
}

impl RowSink for RowDigests {
    fn row(&mut self, row: &[Stored]) {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        write_line(row, &mut buffer);
        self.line(&buffer);
        self.buffer = buffer;
    }
}

/// The content hash of a dataset's rows from their canonical lines (any order), sealed as `sealing` says.
pub fn content_hash_of(sealing: Sealing, lines: Vec<String>) -> String {
    match sealing {
        Sealing::Lines => content_hash(lines),
        Sealing::Digests => {
            let mut digests = RowDigests::with_capacity(lines.len());
            lines.iter().for_each(|l| digests.line(l));
            digests.finish()
        }
    }
}

/// The content hash of a dataset's rows from their canonical lines (any order), sealed by
/// [`Sealing::Lines`].
pub fn content_hash(mut lines: Vec<String>) -> String {
    lines.sort_unstable();
    let mut h = Sha256::new();
    for l in &lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{}", fiscus_domain::evidence::hex(&h.finalize()))
}

/// The tables a dataset of `kind` writes its rows to.
pub fn tables(kind: Kind) -> &'static [RowTable] {
    match kind {
        Kind::Instruments => &[market::INSTRUMENT_REFS],
        Kind::Prices => &[market::PRICES],
        Kind::CorporateActions => &[market::CORPORATE_ACTIONS],
        Kind::Fundamentals => &[market::FUNDAMENTALS],
        Kind::Economics => &[economics::SERIES, economics::OBSERVATIONS],
        Kind::Ledgers => &[finance_core::LEDGERS],
        Kind::Entities => &[finance_core::ENTITIES],
        Kind::Journals => &[finance_core::JOURNALS, finance_core::JOURNAL_LINES],
        Kind::Transactions => &[banking::TRANSACTIONS],
        Kind::Balances => &[banking::BALANCES],
        Kind::Portfolios => &[book::PORTFOLIOS],
        Kind::Lots | Kind::Positions => &[book::TAX_LOTS],
        Kind::Cash => &[book::CASH],
    }
}

/// Recomputes a dataset's content hash from its stored rows.
pub async fn recompute_content_hash(
    conn: &mut AnyConnection,
    workspace_id: &str,
    kind: Kind,
    number: i64,
    sealing: Sealing,
) -> Result<String> {
    Ok(content_hash_of(sealing, content_lines(conn, workspace_id, kind, number).await?))
}

/// A dataset's stored rows as the canonical lines its content hash is taken over (in no order): what
/// [`content_hash`] takes, for a caller that hashes them elsewhere (off an async runtime).
pub async fn content_lines(
    conn: &mut AnyConnection,
    workspace_id: &str,
    kind: Kind,
    number: i64,
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for table in tables(kind) {
        let rows = sqlx::query(&format!(
            "SELECT {} FROM {} WHERE workspace_id = $1 AND dataset_number = $2",
            table.columns.join(", "),
            table.table
        ))
        .bind(workspace_id)
        .bind(number)
        .fetch_all(&mut *conn)
        .await?;
        for row in &rows {
            let mut values = Vec::with_capacity(table.columns.len());
            for (i, name) in table.columns.iter().enumerate() {
                values.push(stored(row, i).map_err(|e| StoreError::Corrupt(format!("{}.{name}: {e}", table.table)))?);
            }
            lines.push(line(&values));
        }
    }
    Ok(lines)
}

fn stored(row: &sqlx::any::AnyRow, i: usize) -> std::result::Result<Stored, sqlx::Error> {
    // Columns are TEXT or BIGINT (crates/fiscus-store/README.md, Persistence); try the integer first.
    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
        return Ok(v.map_or(Stored::Null, Stored::Integer));
    }
    let v: Option<String> = row.try_get(i)?;
    Ok(v.map_or(Stored::Null, Stored::Text))
}

/// Takes the next number of a counter, inside the writing transaction.
pub async fn take_number(tx: &mut WriteTx, counter: &str) -> Result<i64> {
    take_numbers(tx, counter, 1).await
}

/// Takes `n` consecutive numbers from a counter, inside the writing transaction; returns the first.
pub(crate) async fn take_numbers(tx: &mut WriteTx, counter: &str, n: i64) -> Result<i64> {
    let last: i64 = sqlx::query_scalar("UPDATE data_counters SET value = value + $1 WHERE name = $2 RETURNING value")
        .bind(n)
        .bind(counter)
        .fetch_one(tx.conn())
        .await?;
    Ok(last - n + 1)
}

pub(crate) fn text(s: &str) -> Stored {
    Stored::Text(s.to_string())
}

pub(crate) fn opt_text(s: Option<&str>) -> Stored {
    s.map_or(Stored::Null, text)
}

/// A bound that is exclusive and absent-safe for cursors and date ranges: the empty string sorts first.
pub(crate) fn or_min(s: Option<&str>) -> &str {
    s.unwrap_or("")
}

/// `9999-12-31`: the inclusive upper bound when no end date is given.
pub(crate) const MAX_DATE: &str = "9999-12-31";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sealed_by_their_digests_hash_the_same_in_any_order_and_differ_from_their_lines() {
        let rows = [
            vec![Stored::Text("ins_a".into()), Stored::Integer(3), Stored::Null],
            vec![Stored::Text("ins_b \"q\"".into()), Stored::Integer(3), Stored::Text("1.5".into())],
        ];
        let (mut forward, mut backward) = (RowDigests::default(), RowDigests::default());
        rows.iter().for_each(|r| forward.row(r));
        rows.iter().rev().for_each(|r| backward.row(r));
        let lines: Vec<String> = rows.iter().map(|r| line(r)).collect();
        let by_digests = forward.finish();
        assert_eq!(by_digests, backward.finish());
        assert_eq!(by_digests, content_hash_of(Sealing::Digests, lines.clone()));
        assert_ne!(by_digests, content_hash_of(Sealing::Lines, lines.clone()), "the two sealings are told apart");
        let mut one = RowDigests::default();
        one.row(&rows[0]);
        assert_ne!(one.finish(), by_digests, "a missing row changes the hash");
        assert_eq!(Sealing::of("fiscus-import/1"), Sealing::Lines);
        assert_eq!(Sealing::of(crate::rules::IMPORTER_VERSION), Sealing::Digests);
    }
}

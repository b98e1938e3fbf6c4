//! The data plane's tables: datasets and the rows they hold (see the migration `…_data_plane.sql`).
//!
//! Rows are written in bulk (multi-row INSERTs, as many rows per statement as the backends' bind limits
//! allow) inside the import's one transaction, so a file is imported whole or not at all. Each dataset
//! seals its rows by a content hash: SHA-256 over the rows' stored values, each row as an RFC 8785 JSON
//! array followed by a newline, the lines sorted bytewise (so the hash does not depend on any database's
//! collation). `fiscus verify records` recomputes it from the rows.

pub mod banking;
pub mod book;
pub mod datasets;
pub mod economics;
pub mod finance_core;
pub mod lineage;
pub mod market;

use crate::dialect::{bind_all, multi_row_insert, rows_per_statement};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::data::Kind;
use fiscus_domain::integrity::Stored;
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
    lines: &mut Vec<String>,
) -> Result<()> {
    if let Some((url, slot)) = tx.copy_url(rows.len()) {
        return staged(tx, (&url, slot), workspace_id, table, rows, |r| r.clone(), lines).await;
    }
    let width = table.columns.len() + 1;
    let backend = crate::dialect::backend_of(tx.conn());
    let head = format!("INSERT INTO {} (workspace_id, {}) VALUES ", table.table, table.columns.join(", "));
    for chunk in rows.chunks(rows_per_statement(width)) {
        let sql = multi_row_insert(backend, &head, chunk.len(), width);
        let mut query = sqlx::query(&sql);
        for row in chunk {
            debug_assert_eq!(row.len(), table.columns.len());
            query = bind_all!(query.bind(workspace_id), row);
        }
        query.execute(tx.conn()).await?;
        lines.extend(chunk.iter().map(|r| line(r)));
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
    lines: &mut Vec<String>,
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

/// PostgreSQL's bulk path (see [`crate::copy_in`]): the rows staged by COPY a chunk at a time, then moved
/// into the table by one `INSERT … SELECT` in the import's transaction; the staging table is dropped when
/// that transaction ends, whether it committed or not.
async fn staged<T>(
    tx: &mut WriteTx,
    (url, slot): (&str, crate::copy_in::Slot),
    workspace_id: &str,
    table: &RowTable,
    items: &[T],
    row: impl Fn(&T) -> Vec<Stored>,
    lines: &mut Vec<String>,
) -> Result<()> {
    let mut staging = crate::copy_in::Staging::open(url, table.columns.len(), slot).await?;
    let moved = async {
        for chunk in items.chunks(50_000) {
            let rows: Vec<Vec<Stored>> = chunk.iter().map(&row).collect();
            staging.send(&rows).await?;
            lines.extend(rows.iter().map(|r| line(r)));
        }
        let select = crate::copy_in::select_list(tx.conn(), table.table, table.columns).await?;
        sqlx::query(&format!(
            "INSERT INTO {} (workspace_id, {}) SELECT $1, {select} FROM {}",
            table.table,
            table.columns.join(", "),
            staging.table
        ))
        .bind(workspace_id)
        .execute(tx.conn())
        .await?;
        Ok::<(), StoreError>(())
    }
    .await;
    // Dropped when the transaction ends: the drop waits for the lock the INSERT holds on it.
    tx.staged(staging);
    moved
}

/// One row's canonical line: an RFC 8785 JSON array of its stored values.
pub fn line(row: &[Stored]) -> String {
    let mut out = String::with_capacity(16 * row.len());
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
    out
}

/// The content hash of a dataset's rows from their canonical lines (any order).
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
) -> Result<String> {
    Ok(content_hash(content_lines(conn, workspace_id, kind, number).await?))
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
pub(crate) async fn take_number(tx: &mut WriteTx, counter: &str) -> Result<i64> {
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

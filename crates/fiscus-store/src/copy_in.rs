//! PostgreSQL's bulk path for a large import: the rows travel by `COPY … FROM STDIN` (text format) into
//! `import_staging` on a connection of their own, then the import's transaction moves them into their table
//! with one `INSERT … SELECT` and deletes them from staging. Binding every value of a 500,000-row file as a
//! parameter cost most of an import's time (issue 34: 0.13× `\copy`); COPY streams them as the server
//! parses its own format.
//!
//! Why a second connection: the store's connections are sqlx's `Any` connections, which expose no COPY, and
//! the import's transaction is a savepoint in a group-commit lane's transaction. The staged rows are
//! committed before that transaction reads them (READ COMMITTED sees them), and carry a batch id no one else
//! knows; a batch whose import failed is deleted by the import, or swept by age when the process died
//! between the two steps. Staging is UNLOGGED: a crash loses only rows no import acknowledged.

use crate::Result;
use fiscus_domain::integrity::Stored;
use sqlx::Connection as _;
use std::str::FromStr;

/// Imports of at least this many rows take the COPY path on PostgreSQL (below it, multi-row INSERTs are as
/// fast and need no second connection).
pub const COPY_FROM_ROWS: usize = 20_000;

/// The staging table's value columns.
pub const STAGING_COLUMNS: usize = 16;

/// A batch staged older than this is an import that died: swept.
const STALE_MICROS: i64 = 24 * 3600 * 1_000_000;

/// Makes staging unlogged (nothing in it must survive a crash) and sweeps batches of imports that died.
pub async fn prepare(pool: &sqlx::AnyPool) -> Result<()> {
    let persistence: Option<String> =
        sqlx::query_scalar("SELECT relpersistence::text FROM pg_class WHERE relname = 'import_staging'")
            .fetch_optional(pool)
            .await?;
    if persistence.as_deref() == Some("p") {
        sqlx::query("ALTER TABLE import_staging SET UNLOGGED").execute(pool).await?;
    }
    sqlx::query("DELETE FROM import_staging WHERE staged_at < $1")
        .bind(fiscus_domain::clock::now_micros() - STALE_MICROS)
        .execute(pool)
        .await?;
    Ok(())
}

/// Appends one value to a COPY text-format row: `\N` for NULL, the text with backslash, tab, newline and
/// carriage return escaped.
fn field(out: &mut Vec<u8>, v: &Stored) {
    match v {
        Stored::Null => out.extend_from_slice(b"\\N"),
        Stored::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Stored::Text(t) => {
            for b in t.bytes() {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    _ => out.push(b),
                }
            }
        }
    }
}

/// Rows to stage, built a chunk at a time (so a large import never holds its whole COPY stream).
pub struct Staging {
    conn: sqlx::postgres::PgConnection,
    pub batch: String,
    width: usize,
    buffer: Vec<u8>,
    staged_at: i64,
}

impl Staging {
    /// Opens the staging connection for rows of `width` values.
    pub async fn open(url: &str, width: usize) -> Result<Staging> {
        assert!(width <= STAGING_COLUMNS, "a dataset table wider than staging");
        let options = sqlx::postgres::PgConnectOptions::from_str(url)?;
        let conn = sqlx::postgres::PgConnection::connect_with(&options).await?;
        Ok(Staging {
            conn,
            batch: fiscus_domain::ids::new_id("stg"),
            width,
            buffer: Vec::with_capacity(1 << 20),
            staged_at: fiscus_domain::clock::now_micros(),
        })
    }

    /// Sends rows (each `width` values) by one COPY.
    pub async fn send(&mut self, rows: &[Vec<Stored>]) -> Result<()> {
        let columns: Vec<String> = (0..self.width).map(|i| format!("c{i}")).collect();
        let sql = format!("COPY import_staging (batch, staged_at, {}) FROM STDIN", columns.join(", "));
        let mut copy = self.conn.copy_in_raw(&sql).await?;
        let prefix = format!("{}\t{}", self.batch, self.staged_at);
        for chunk in rows.chunks(4096) {
            self.buffer.clear();
            for row in chunk {
                debug_assert_eq!(row.len(), self.width);
                self.buffer.extend_from_slice(prefix.as_bytes());
                for v in row {
                    self.buffer.push(b'\t');
                    field(&mut self.buffer, v);
                }
                self.buffer.push(b'\n');
            }
            if let Err(e) = copy.send(self.buffer.as_slice()).await {
                let _ = copy.abort("send failed").await;
                return Err(e.into());
            }
        }
        copy.finish().await?;
        Ok(())
    }

    /// Deletes the batch (after the import's transaction took it, or failed).
    pub async fn discard(mut self) -> Result<()> {
        sqlx::query("DELETE FROM import_staging WHERE batch = $1").bind(&self.batch).execute(&mut self.conn).await?;
        self.conn.close().await?;
        Ok(())
    }
}

/// The `SELECT` list that turns staged text back into a table's values: `cN::bigint` for its BIGINT columns
/// (as the database describes the table), `cN` for its TEXT ones.
pub async fn select_list(conn: &mut sqlx::AnyConnection, table: &str, columns: &[&str]) -> Result<String> {
    let types: Vec<(String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1",
    )
    .bind(table)
    .fetch_all(conn)
    .await?;
    Ok(columns
        .iter()
        .enumerate()
        .map(|(i, c)| match types.iter().find(|(name, _)| name == c) {
            Some((_, t)) if t == "bigint" || t == "integer" => format!("c{i}::bigint"),
            _ => format!("c{i}"),
        })
        .collect::<Vec<_>>()
        .join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_as_copy_text_reads_them() {
        let mut out = Vec::new();
        for v in [Stored::Null, Stored::Integer(-7), Stored::Text("a\\b\tc\nd\re".into())] {
            field(&mut out, &v);
            out.push(b'|');
        }
        assert_eq!(String::from_utf8(out).expect("utf8"), "\\N|-7|a\\\\b\\tc\\nd\\re|");
    }
}

//! PostgreSQL's bulk path for a large import: the rows travel by `COPY … FROM STDIN` (text format) into a
//! staging table of the import's own on a connection of their own, then the import's transaction moves them
//! into their table with one `INSERT … SELECT`, and the staging table is dropped. Binding every value of a
//! 500,000-row file as a parameter cost most of an import's time (issue 34: 0.13× `\copy`); COPY streams
//! them as the server parses its own format.
//!
//! Why a second connection: the store's connections are sqlx's `Any` connections, which expose no COPY, and
//! the import's transaction is a savepoint in a group-commit lane's transaction. The staged rows are
//! committed before that transaction reads them (READ COMMITTED sees them) in a table whose name no one
//! else knows. Why a table per import rather than one shared one: dropping a table is one catalogue change,
//! where deleting 500,000 staged rows was a second pass over them. The table is UNLOGGED (a crash loses only
//! rows no import acknowledged) and named after the time it was made, so one left by a process that died
//! between the two steps is dropped at the next start.

use crate::Result;
use fiscus_domain::integrity::Stored;
use sqlx::Connection as _;
use std::str::FromStr;

/// Imports of at least this many rows take the COPY path on PostgreSQL (below it, multi-row INSERTs are as
/// fast and need no second connection).
pub const COPY_FROM_ROWS: usize = 20_000;

/// At most this many imports stage by COPY at once in a process, each holding a PostgreSQL connection of its
/// own outside the pool: an import that finds every slot taken writes by multi-row INSERTs instead of
/// waiting, so no tenant's imports can take the database's connections or hold up another's.
static SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// A COPY slot, held by a staging table until it is dropped.
pub type Slot = tokio::sync::SemaphorePermit<'static>;

/// A free COPY slot, if there is one now.
pub fn slot() -> Option<Slot> {
    SLOTS.try_acquire().ok()
}

/// Staging tables are named `import_staging_<micros>_<random>`.
const PREFIX: &str = "import_staging_";

/// A staging table older than this is an import that died: dropped.
const STALE_MICROS: i64 = 24 * 3600 * 1_000_000;

/// Drops the staging tables of imports that died (older than a day: an import never takes that long).
pub async fn prepare(pool: &sqlx::AnyPool) -> Result<()> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'import\\_staging\\_%'",
    )
    .fetch_all(pool)
    .await?;
    let now = fiscus_domain::clock::now_micros();
    for t in tables {
        let made = t.strip_prefix(PREFIX).and_then(|r| r.split('_').next()).and_then(|m| m.parse::<i64>().ok());
        if made.is_some_and(|m| now - m > STALE_MICROS) && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            sqlx::query(&format!("DROP TABLE IF EXISTS {t}")).execute(pool).await?;
        }
    }
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
    /// The staging table's name.
    pub table: String,
    width: usize,
    buffer: Vec<u8>,
    _slot: Slot,
}

impl Staging {
    /// Opens the staging connection and makes the staging table, `width` text columns `c0…`.
    pub async fn open(url: &str, width: usize, slot: Slot) -> Result<Staging> {
        let options = sqlx::postgres::PgConnectOptions::from_str(url)?;
        let mut conn = sqlx::postgres::PgConnection::connect_with(&options).await?;
        let random = fiscus_domain::ids::new_id("x").to_ascii_lowercase();
        let table = format!("{PREFIX}{}_{}", fiscus_domain::clock::now_micros(), random.trim_start_matches("x_"));
        let columns: Vec<String> = (0..width).map(|i| format!("c{i} TEXT")).collect();
        sqlx::query(&format!("CREATE UNLOGGED TABLE {table} ({})", columns.join(", "))).execute(&mut conn).await?;
        Ok(Staging { conn, table, width, buffer: Vec::with_capacity(1 << 20), _slot: slot })
    }

    /// Sends rows (each `width` values) by one COPY.
    pub async fn send(&mut self, rows: &[Vec<Stored>]) -> Result<()> {
        let columns: Vec<String> = (0..self.width).map(|i| format!("c{i}")).collect();
        let sql = format!("COPY {} ({}) FROM STDIN", self.table, columns.join(", "));
        let mut copy = self.conn.copy_in_raw(&sql).await?;
        for chunk in rows.chunks(4096) {
            self.buffer.clear();
            for row in chunk {
                debug_assert_eq!(row.len(), self.width);
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        self.buffer.push(b'\t');
                    }
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

    /// Drops the staging table (after the import's transaction took its rows, or failed).
    pub async fn discard(mut self) -> Result<()> {
        sqlx::query(&format!("DROP TABLE IF EXISTS {}", self.table)).execute(&mut self.conn).await?;
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

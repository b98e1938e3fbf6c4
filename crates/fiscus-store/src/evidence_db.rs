//! Where the transparency log's integrated state lives: its tiles, tree sizes, index of leaves by record and
//! kept checkpoints (`tlog`), apart from the leaves, which are written with their records.
//!
//! On PostgreSQL that is the database itself: writers of different rows do not wait for each other, so the
//! integrator's transactions cost keyed writes nothing but their share of the server. On SQLite it is a file
//! of its own beside the database (`<name>-evidence.<ext>`), with its own writer, write-ahead log and
//! checkpoints of that log: SQLite has one writer per file, and the integrator's writes (an index row per
//! leaf, tiles rewritten as they widen) on the database's one writer cost keyed writes about a tenth of their
//! rate (`bench/evidence.sh`). Nothing in the main file refers to this one, and everything in it is derived
//! from the leaves except the checkpoints issued; a transaction never spans both files (SQLite's WAL mode
//! makes no promise across files), so each stays consistent by itself. Back up both.
//!
//! On PostgreSQL the log's columns of hex (the writers' batches and the tiles) are also kept out of TOAST's
//! compression, which never pays on hashes ([`store_uncompressed`]).
//!
//! The types keep the two apart: the log's repository functions take an [`EvidenceConn`] or an
//! [`EvidenceTx`] for the integrated state and a plain connection for the leaves, so a query cannot reach the
//! wrong file.

use crate::{Backend, Result, StoreError};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyConnection, AnyPool, Executor};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The log's integrated state's database (see the module's comment).
#[derive(Clone)]
pub(crate) struct EvidenceDb {
    pool: AnyPool,
    backend: Backend,
    /// SQLite: the one writer of the evidence file, queued in this process (as the main file's writers are
    /// without group commit). `None` on PostgreSQL.
    writer: Option<Arc<Mutex<()>>>,
    /// Whether this is a file of its own (SQLite), not the main database.
    separate: bool,
    /// SQLite: the main file (what an earlier release kept the integrated state in); `None` in memory.
    main_file: Option<std::path::PathBuf>,
}

/// A connection to read the log's integrated state.
pub struct EvidenceConn(sqlx::pool::PoolConnection<sqlx::Any>);

impl EvidenceConn {
    /// The connection itself: the repository's functions use it, and so may a statement outside them (a
    /// test playing someone who holds the database, an operator's maintenance).
    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.0
    }
}

/// A write transaction on the log's integrated state: on SQLite the evidence file's one writer, begun
/// `IMMEDIATE`; on PostgreSQL a transaction of the database's own (never part of a commit group: the
/// integrator commits about once a second).
pub struct EvidenceTx {
    tx: sqlx::Transaction<'static, sqlx::Any>,
    _writer: Option<OwnedMutexGuard<()>>,
}

impl EvidenceTx {
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    pub async fn commit(self) -> Result<()> {
        Ok(self.tx.commit().await?)
    }
}

/// The evidence file of a SQLite database URL: `…/fiscus.db?mode=rwc` → `…/fiscus-evidence.db?mode=rwc`; an
/// in-memory database keeps its evidence in memory too. `None` for PostgreSQL (the database itself).
pub fn evidence_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    if path.is_empty() || path == ":memory:" {
        return Some("sqlite::memory:".into());
    }
    let file = std::path::Path::new(path);
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match file.extension() {
        Some(ext) => format!("{stem}-evidence.{}", ext.to_string_lossy()),
        None => format!("{stem}-evidence"),
    };
    let evidence = file.with_file_name(name);
    Some(match query {
        Some(q) => format!("sqlite://{}?{q}", evidence.display()),
        None => format!("sqlite://{}", evidence.display()),
    })
}

impl EvidenceDb {
    /// The database itself (PostgreSQL).
    pub(crate) fn shared(pool: AnyPool, backend: Backend) -> EvidenceDb {
        EvidenceDb { pool, backend, writer: None, separate: false, main_file: None }
    }

    /// The evidence file beside a SQLite database whose URL is `url` (created if missing, WAL mode).
    pub(crate) async fn open_beside(url: &str, max_connections: u32) -> Result<EvidenceDb> {
        let evidence = evidence_url(url)
            .ok_or_else(|| StoreError::Config("the evidence file is for SQLite databases only".into()))?;
        let evidence = if evidence.contains("mode=") || evidence.ends_with(":memory:") {
            evidence
        } else {
            format!("{evidence}{}mode=rwc", if evidence.contains('?') { '&' } else { '?' })
        };
        let memory = evidence.ends_with(":memory:");
        let options = AnyConnectOptions::from_str(&evidence)?;
        let pool = AnyPoolOptions::new()
            // Readers (proofs, tiles, checkpoints: as many as the main file's) and the integrator; an
            // in-memory database is one connection's, so it has one and keeps it.
            .max_connections(if memory { 1 } else { max_connections.max(2) })
            .min_connections(1)
            .idle_timeout(if memory { None } else { Some(Duration::from_secs(600)) })
            .max_lifetime(if memory { None } else { Some(Duration::from_secs(1800)) })
            .acquire_timeout(Duration::from_secs(10))
            .test_before_acquire(false)
            .after_connect(|conn, _meta| Box::pin(async move { evidence_pragmas(conn).await }))
            .connect_with(options)
            .await?;
        Ok(EvidenceDb {
            pool,
            backend: Backend::Sqlite,
            writer: Some(Arc::new(Mutex::new(()))),
            separate: true,
            main_file: crate::sqlite_file(url),
        })
    }

    pub(crate) async fn close(&self) {
        if self.separate {
            self.pool.close().await;
        }
    }

    pub(crate) async fn read(&self) -> Result<EvidenceConn> {
        Ok(EvidenceConn(self.pool.acquire().await?))
    }

    pub(crate) async fn begin(&self) -> Result<EvidenceTx> {
        let writer = match &self.writer {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        };
        let tx = self.pool.begin_with(crate::dialect::begin_write(self.backend)).await?;
        Ok(EvidenceTx { tx, _writer: writer })
    }

    /// Creates the evidence file's tables (SQLite; on PostgreSQL the database's own migrations did), and moves
    /// into it what an earlier release kept in the main file (once: only into an empty evidence file, then the
    /// main file's copies are emptied, which is safe to repeat).
    pub(crate) async fn migrate(&self, main: &AnyPool) -> Result<()> {
        if !self.separate {
            return Ok(());
        }
        let migrator = crate::migrations::evidence().await.map_err(|e| StoreError::Migration(e.to_string()))?;
        crate::migrations::run(migrator, &self.pool).await.map_err(StoreError::Migration)?;
        let (trees,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM tlog_trees").fetch_one(&self.pool).await?;
        let (checkpoints,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM tlog_checkpoints").fetch_one(&self.pool).await?;
        if trees == 0 && checkpoints == 0 {
            self.move_from_main().await?;
        }
        for (table, _) in MOVED {
            sqlx::query(&format!("DELETE FROM {table}")).execute(main).await?;
        }
        Ok(())
    }

    /// Copies every row of the log's integrated state from the main file, in one transaction of the evidence
    /// file, the main file attached for the statements' duration (one `INSERT … SELECT` per table).
    async fn move_from_main(&self) -> Result<()> {
        let Some(main) = &self.main_file else { return Ok(()) };
        let mut conn = self.pool.acquire().await?;
        sqlx::query("ATTACH DATABASE $1 AS fiscus_main")
            .bind(main.to_string_lossy().into_owned())
            .execute(&mut *conn)
            .await?;
        let copied = async {
            let _writer = match &self.writer {
                Some(lock) => Some(lock.clone().lock_owned().await),
                None => None,
            };
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            for (table, columns) in MOVED {
                sqlx::query(&format!("INSERT INTO {table} ({columns}) SELECT {columns} FROM fiscus_main.{table}"))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await;
        let detached = sqlx::query("DETACH DATABASE fiscus_main").execute(&mut *conn).await;
        copied?;
        detached?;
        Ok(())
    }
}

/// The tables of the integrated state, and their columns, as the main file kept them before.
const MOVED: [(&str, &str); 4] = [
    ("tlog_trees", "workspace_id, size, root_hash, integrated_at"),
    ("tlog_tiles", "workspace_id, level, tile_index, hashes"),
    ("tlog_checkpoints", "workspace_id, tree_size, root_hash, note, created_at"),
    ("tlog_leaves", "workspace_id, leaf_index, kind, record_id, record_hash"),
];

async fn evidence_pragmas(conn: &mut AnyConnection) -> std::result::Result<(), sqlx::Error> {
    conn.execute("PRAGMA journal_mode = WAL").await?;
    conn.execute("PRAGMA synchronous = FULL").await?;
    conn.execute("PRAGMA busy_timeout = 10000").await?;
    Ok(())
}

/// The log's columns of hashes in hex, as PostgreSQL stores them: out of line when long, never compressed.
const UNCOMPRESSED: &[(&str, &str)] = &[("tlog_batches", "leaves"), ("tlog_tiles", "hashes")];

/// PostgreSQL: sets [`UNCOMPRESSED`]'s columns to `STORAGE EXTERNAL` where they are not yet. Hex of hashes
/// never shrinks by the quarter TOAST's compression asks of a value, so every attempt was CPU spent for
/// nothing, on the writers' batches and on the integrator's tiles alike: integrating a leaf cost the machine
/// 11.0 us of CPU with it and 10.1 us without (medians of three alternating runs of 200,000 leaves, as
/// `bench/evidence.sh` integrates them; 11.8 and 9.7 in two earlier pairs). A storage setting rather than a
/// migration, since SQLite has no such thing and the migrations are one folder for both. The change takes
/// an `ACCESS EXCLUSIVE` lock, which every writer of the table would queue behind, so it waits at most
/// [`STORAGE_LOCK_WAIT`] for the table's open transactions and otherwise is left for the next start (it is
/// only a saving; rows already written stay as they are and read the same). Only the first start after an
/// upgrade changes anything. Any other failure of the change is left the same way, and for the same reason.
pub(crate) async fn store_uncompressed(pool: &sqlx::AnyPool) -> Result<()> {
    for ((table, column), storage) in UNCOMPRESSED.iter().zip(storage_of_the_log(pool).await?) {
        if storage == "e" {
            continue;
        }
        let mut tx = pool.begin().await?;
        sqlx::query(&format!("SET LOCAL lock_timeout = '{STORAGE_LOCK_WAIT}'")).execute(&mut *tx).await?;
        let altered = sqlx::query(&format!("ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTERNAL"))
            .execute(&mut *tx)
            .await;
        match altered {
            Ok(_) => tx.commit().await?,
            Err(e) => tracing::warn!(table, column, error = %e, "the log's storage setting is left for the next start"),
        }
    }
    Ok(())
}

/// How long [`store_uncompressed`] waits for a table's open transactions. Short, because while the change
/// waits for its lock every writer of the table waits behind it: a node starting beside serving ones stalls
/// their keyed writes by at most this much, once.
const STORAGE_LOCK_WAIT: &str = "250ms";

/// The storage of each of [`UNCOMPRESSED`]'s columns, in its order (PostgreSQL's `attstorage`: `e` external,
/// `x` extended, the default).
pub async fn storage_of_the_log(pool: &sqlx::AnyPool) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(UNCOMPRESSED.len());
    for (table, column) in UNCOMPRESSED {
        let (storage,): (String,) = sqlx::query_as(
            "SELECT a.attstorage::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
             WHERE c.oid = to_regclass($1) AND a.attname = $2",
        )
        .bind(*table)
        .bind(*column)
        .fetch_one(pool)
        .await?;
        out.push(storage);
    }
    Ok(out)
}

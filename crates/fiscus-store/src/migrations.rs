//! The schema's migrations, compiled into the binary (`build.rs` lists the files) and given to sqlx's
//! migrator as the migrations its `migrate!` macro would make of the same folder: the version is the file
//! name's number, the description the rest with `_` as spaces, the checksum SHA-384 of the text
//! (`Migration::new`), so a database migrated by an earlier build is recognised migration by migration.

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use std::borrow::Cow;

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrations of one folder, as embedded.
#[derive(Debug)]
struct Embedded(&'static [(&'static str, &'static str)]);

impl MigrationSource<'static> for Embedded {
    // The trait's `BoxFuture`, written out (futures' alias is not a dependency of this crate).
    #[allow(clippy::type_complexity)]
    fn resolve(
        self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>>
    {
        Box::pin(async move { self.migrations() })
    }
}

impl Embedded {
    fn migrations(&self) -> Result<Vec<Migration>, BoxDynError> {
        let mut out = Vec::with_capacity(self.0.len());
        for (file, sql) in self.0 {
            let (version, rest) =
                file.split_once('_').ok_or_else(|| format!("migration {file:?} has no version prefix"))?;
            let version: i64 = version.parse().map_err(|_| format!("migration {file:?} has no version prefix"))?;
            let kind = MigrationType::from_filename(rest);
            let description = rest.trim_end_matches(kind.suffix()).replace('_', " ");
            let no_tx = sql.starts_with("-- no-transaction");
            out.push(Migration::new(version, Cow::Owned(description), kind, Cow::Borrowed(*sql), no_tx));
        }
        out.sort_by_key(|m| m.version);
        Ok(out)
    }
}

/// Runs `migrator` on `pool` and answers the versions the database holds that this build does not know.
///
/// A rolling upgrade serves one database from two releases (the online-migration rule, the crate's
/// README), and a node of the previous release that restarts meanwhile runs its migrations at start: sqlx
/// would refuse the database for the newer release's migrations it does not know, so the old node would not
/// come back. Versions newer than every migration of this build are therefore accepted (by the rule they only
/// expanded the schema this build uses) and answered, for the caller to say so; an unknown version older
/// than this build's newest is refused, since this build should know it (a database of another lineage, or a
/// migration that never shipped). Checksums of the versions this build knows are still checked by sqlx.
pub(crate) async fn run(migrator: Migrator, pool: &sqlx::AnyPool) -> Result<Vec<i64>, String> {
    use sqlx::migrate::Migrate as _;
    let mut migrator = migrator;
    let known: std::collections::BTreeSet<i64> = migrator.iter().map(|m| m.version).collect();
    let newest = known.last().copied().unwrap_or(0);
    // What sqlx itself reads before it migrates, under its lock and with its table made first, as its `run`
    // does (several nodes may start at once on a fresh database).
    let applied = {
        let mut conn = pool.acquire().await.map_err(|e| e.to_string())?;
        conn.lock().await.map_err(|e| e.to_string())?;
        let read = async {
            conn.ensure_migrations_table().await?;
            conn.list_applied_migrations().await
        }
        .await;
        conn.unlock().await.map_err(|e| e.to_string())?;
        read.map_err(|e| e.to_string())?
    };
    let unknown: Vec<i64> = applied.into_iter().map(|m| m.version).filter(|v| !known.contains(v)).collect();
    if let Some(older) = unknown.iter().find(|v| **v < newest) {
        return Err(format!(
            "the database has migration {older}, which this build does not know although it is older than this \
             build's newest ({newest}): it was not migrated by a release of this line"
        ));
    }
    migrator.set_ignore_missing(!unknown.is_empty());
    migrator.run(pool).await.map_err(|e| e.to_string())?;
    Ok(unknown)
}

/// The main database's migrator (`migrations/`).
pub(crate) async fn main() -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded(MAIN)).await
}

/// The evidence file's migrator (`migrations_evidence/`, SQLite only: see `evidence_db`).
pub(crate) async fn evidence() -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded(EVIDENCE)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded migrations are what sqlx's own reader of the folders (the one its `migrate!` macro
    /// uses) makes of them: versions, descriptions, kinds and checksums, so a database an earlier build
    /// migrated is recognised.
    #[tokio::test]
    async fn the_embedded_migrations_are_what_sqlx_reads_from_the_folders() {
        for (embedded, folder) in [(main().await, "migrations"), (evidence().await, "migrations_evidence")] {
            let embedded = embedded.expect("embedded");
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
            let read = Migrator::new(dir).await.expect("the folder");
            let shape = |m: &Migrator| {
                m.iter()
                    .map(|m| (m.version, m.description.to_string(), m.migration_type, m.checksum.to_vec(), m.no_tx))
                    .collect::<Vec<_>>()
            };
            let mut from_folder = shape(&read);
            from_folder.sort_by_key(|m| m.0);
            assert!(!from_folder.is_empty(), "{folder}");
            assert_eq!(shape(&embedded), from_folder, "{folder}");
        }
    }
}

//! Research: snapshots that freeze a research run, and the projects runs and snapshots are filed under (see
//! the migration `…_research.sql`).
//!
//! A research run is a compute job (kind `research_run`) whose `project` column files it; a snapshot is a
//! sealed, immutable row holding the run's bundle (its pinned request, engine version and results) and the
//! bundle's hash. Projects have no table: they are the distinct `project` values of runs, counted.

use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::seals;
use fiscus_store::{Result, WriteTx};
use sqlx::{AnyConnection, FromRow};

pub use fiscus_store::model_tables::SNAPSHOTS_SEALED;

/// A snapshot as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub id: String,
    pub project: String,
    pub name: String,
    pub description: Option<String>,
    /// The research run it froze.
    pub run_id: String,
    /// The bundle as canonical JSON (RFC 8785).
    pub bundle: String,
    pub bundle_hash: String,
    pub created_by: Actor,
    pub created_at: i64,
}

impl<'r> FromRow<'r, sqlx::any::AnyRow> for Snapshot {
    fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        Ok(Snapshot {
            id: row.try_get("id")?,
            project: row.try_get("project")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            run_id: row.try_get("run_id")?,
            bundle: row.try_get("bundle")?,
            bundle_hash: row.try_get("bundle_hash")?,
            created_by: fiscus_store::actor_column(row, "created_by")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const SNAPSHOT_COLUMNS: &str = "id, project, name, description, run_id, bundle, bundle_hash, created_by, created_at";

/// Writes a snapshot, sealed. A second snapshot of the same run is a [`StoreError::Conflict`].
pub async fn insert_snapshot(tx: &mut WriteTx, tenant: &Tenant, s: &Snapshot) -> Result<()> {
    let sealed_values = vec![
        Stored::Text(s.id.clone()),
        Stored::Text(tenant.workspace_id.clone()),
        Stored::Text(tenant.environment.as_str().to_string()),
        Stored::Text(s.project.clone()),
        Stored::Text(s.name.clone()),
        s.description.clone().map_or(Stored::Null, Stored::Text),
        Stored::Text(s.run_id.clone()),
        Stored::Text(s.bundle.clone()),
        Stored::Text(s.bundle_hash.clone()),
        Stored::Text(s.created_by.label()),
        Stored::Integer(s.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &SNAPSHOTS_SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO research_snapshots (id, workspace_id, environment, project, name, description, run_id, bundle, \
         bundle_hash, created_by, created_at, seal_mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&s.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&s.project)
    .bind(&s.name)
    .bind(s.description.as_deref())
    .bind(&s.run_id)
    .bind(&s.bundle)
    .bind(&s.bundle_hash)
    .bind(s.created_by.label())
    .bind(s.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &SNAPSHOTS_SEALED, &sealed_values).await?;
    Ok(())
}

/// A snapshot of this tenant, its seal checked (an edited bundle is refused, never served).
pub async fn get_snapshot(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Snapshot> {
    seals::get_tenant_row::<Snapshot, _>(conn, key, &SNAPSHOTS_SEALED, SNAPSHOT_COLUMNS, tenant, id).await
}

/// The id of the snapshot of a run, if it has one.
pub async fn snapshot_of_run(conn: &mut AnyConnection, tenant: &Tenant, run_id: &str) -> Result<Option<String>> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM research_snapshots WHERE workspace_id = $1 AND environment = $2 AND run_id = $3",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(run_id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(id,)| id))
}

/// The tenant's snapshots newest first (of one project, or all), before `before` (exclusive), `limit + 1`
/// rows.
pub async fn list_snapshots(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    project: Option<&str>,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Snapshot>> {
    let mut sql =
        format!("SELECT {SNAPSHOT_COLUMNS} FROM research_snapshots WHERE workspace_id = $1 AND environment = $2");
    let mut binds: Vec<&str> = Vec::new();
    for (condition, value) in [("project =", project), ("id <", before)] {
        if let Some(v) = value {
            binds.push(v);
            sql.push_str(&format!(" AND {condition} ${}", binds.len() + 2));
        }
    }
    sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", binds.len() + 3));
    let mut q = sqlx::query_as::<_, Snapshot>(&sql).bind(&tenant.workspace_id).bind(tenant.environment.as_str());
    for b in binds {
        q = q.bind(b);
    }
    Ok(q.bind(i64::from(limit) + 1).fetch_all(conn).await?)
}

/// A project: its runs and snapshots counted.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    pub key: String,
    pub runs: i64,
    pub succeeded_runs: i64,
    pub first_run_at: i64,
    pub last_run_at: i64,
    /// The newest run (ids sort by time).
    pub last_run_id: String,
    pub snapshots: i64,
    pub last_snapshot_id: Option<String>,
}

/// The tenant's projects in key order, after `after` (exclusive), `limit + 1` rows.
pub async fn projects(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<Project>> {
    let runs: Vec<(String, i64, i64, i64, i64, String)> = sqlx::query_as(
        "SELECT project, COUNT(*), SUM(CASE WHEN state = 'succeeded' THEN 1 ELSE 0 END), MIN(created_at), \
         MAX(created_at), MAX(id) FROM compute_jobs \
         WHERE workspace_id = $1 AND environment = $2 AND project IS NOT NULL AND project > $3 \
         GROUP BY project ORDER BY project LIMIT $4",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(after.unwrap_or(""))
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::with_capacity(runs.len());
    for (key, count, succeeded, first, last, last_id) in runs {
        let (snapshots, last_snapshot): (i64, Option<String>) = sqlx::query_as(
            "SELECT COUNT(*), MAX(id) FROM research_snapshots \
             WHERE workspace_id = $1 AND environment = $2 AND project = $3",
        )
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(&key)
        .fetch_one(&mut *conn)
        .await?;
        out.push(Project {
            key,
            runs: count,
            succeeded_runs: succeeded,
            first_run_at: first,
            last_run_at: last,
            last_run_id: last_id,
            snapshots,
            last_snapshot_id: last_snapshot,
        });
    }
    Ok(out)
}

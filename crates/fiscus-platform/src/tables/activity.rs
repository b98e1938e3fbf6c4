//! A tenant's activity in counts (`GET /intelligence/summary`): its records grouped by state or kind, each
//! stored value decoded into its domain type (an unknown one is `Corrupt`), and its audit chain's head.

use fiscus_data_core::rules::Kind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::compute::{JobKind, JobState};
use fiscus_domain::lqm::PromotionState;
use fiscus_domain::tenancy::Tenant;
use fiscus_domain::workflows::RunState;
use fiscus_store::{Result, StoreError};
use sqlx::AnyConnection;

/// Counts of one tenant's records.
#[derive(Clone, Debug, PartialEq)]
pub struct Activity {
    pub actions: Vec<(ControlState, i64)>,
    pub workflow_runs: Vec<(RunState, i64)>,
    pub compute_jobs: Vec<(JobKind, JobState, i64)>,
    pub lqm_models: i64,
    pub lqm_promotions: Vec<(PromotionState, i64)>,
    /// The workspace's datasets by kind (datasets serve both environments).
    pub datasets: Vec<(Kind, i64)>,
    /// The workspace's audit chain: its last sequence number and hash.
    pub audit_head: (i64, String),
}

async fn grouped(conn: &mut AnyConnection, sql: &str, tenant: &Tenant) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(sql).bind(&tenant.workspace_id).bind(tenant.environment.as_str()).fetch_all(conn).await?)
}

fn decode<T>(table: &str, rows: Vec<(String, i64)>, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<(T, i64)>> {
    rows.into_iter()
        .map(|(v, n)| {
            parse(&v).map(|t| (t, n)).ok_or_else(|| StoreError::Corrupt(format!("{table}: unknown value `{v}`")))
        })
        .collect()
}

/// The tenant's activity, read in one pass.
pub async fn of(conn: &mut AnyConnection, tenant: &Tenant) -> Result<Activity> {
    let tenant_filter = "WHERE workspace_id = $1 AND environment = $2";
    let actions = grouped(
        conn,
        &format!("SELECT control_state, CAST(COUNT(*) AS BIGINT) FROM actions {tenant_filter} GROUP BY control_state ORDER BY control_state"),
        tenant,
    )
    .await?;
    let runs = grouped(
        conn,
        &format!(
            "SELECT state, CAST(COUNT(*) AS BIGINT) FROM workflow_runs {tenant_filter} GROUP BY state ORDER BY state"
        ),
        tenant,
    )
    .await?;
    let jobs: Vec<(String, String, i64)> = sqlx::query_as(&format!(
        "SELECT kind, state, CAST(COUNT(*) AS BIGINT) FROM compute_jobs {tenant_filter} GROUP BY kind, state ORDER BY kind, state"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?;
    let compute_jobs = jobs
        .into_iter()
        .map(|(k, s, n)| match (JobKind::parse(&k), JobState::parse(&s)) {
            (Some(k), Some(s)) => Ok((k, s, n)),
            _ => Err(StoreError::Corrupt(format!("compute_jobs: unknown kind or state `{k}`, `{s}`"))),
        })
        .collect::<Result<_>>()?;
    let (lqm_models,): (i64,) =
        sqlx::query_as(&format!("SELECT CAST(COUNT(*) AS BIGINT) FROM lqm_models {tenant_filter}"))
            .bind(&tenant.workspace_id)
            .bind(tenant.environment.as_str())
            .fetch_one(&mut *conn)
            .await?;
    let promotions = grouped(
        conn,
        &format!(
            "SELECT state, CAST(COUNT(*) AS BIGINT) FROM lqm_promotions {tenant_filter} GROUP BY state ORDER BY state"
        ),
        tenant,
    )
    .await?;
    let datasets: Vec<(String, i64)> = sqlx::query_as(
        "SELECT kind, CAST(COUNT(*) AS BIGINT) FROM datasets WHERE workspace_id = $1 GROUP BY kind ORDER BY kind",
    )
    .bind(&tenant.workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    let (seq, hash, _) = fiscus_store::audit::head(conn, &tenant.workspace_id).await?;
    Ok(Activity {
        actions: decode("actions", actions, ControlState::parse)?,
        workflow_runs: decode("workflow_runs", runs, RunState::parse)?,
        compute_jobs,
        lqm_models,
        lqm_promotions: decode("lqm_promotions", promotions, PromotionState::parse)?,
        datasets: decode("datasets", datasets, Kind::parse)?,
        audit_head: (seq, hash),
    })
}

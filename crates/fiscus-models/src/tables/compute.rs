//! Compute jobs and their results (see the migration `…_compute_jobs.sql`).
//!
//! A job's request, engine version and price are sealed when it is created; its state moves by conditional
//! updates, so two workers never both run a job and a worker that lost its claim cannot finish it. A
//! result is its own sealed row, written in the transaction that ends the job.

use fiscus_domain::actor::Actor;
use fiscus_domain::compute::{JobFailure, JobKind, JobState};
use fiscus_domain::credentials::Environment;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::dialect::backend_of;
use fiscus_store::model_tables::{COMPUTE_JOBS_SEALED as JOBS_SEALED, COMPUTE_RESULTS_SEALED as RESULTS_SEALED};
use fiscus_store::seals;
use fiscus_store::{Result, StoreError, WriteTx, corrupt, fair, stored_actor};
use sqlx::AnyConnection;

/// Progress is stored in thousandths.
pub const PROGRESS_DONE: i64 = 1000;

/// A job about to be created.
pub struct NewJob<'a> {
    pub id: &'a str,
    pub kind: JobKind,
    /// The canonical request: what to compute and the dataset versions it reads.
    pub request: &'a str,
    pub request_hash: &'a str,
    pub engine_version: &'a str,
    pub credits: i64,
    /// `application:app_…`, `cli:…`.
    pub created_by: &'a Actor,
    pub created_at: i64,
    /// The research project a research run is filed under (a copy of the one in its sealed request, for
    /// grouping).
    pub project: Option<&'a str>,
}

/// A job as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: String,
    pub tenant: Tenant,
    pub kind: JobKind,
    pub state: JobState,
    pub request: String,
    pub request_hash: String,
    pub engine_version: String,
    pub credits: i64,
    pub created_by: Actor,
    pub created_at: i64,
    /// Thousandths done.
    pub progress: i64,
    pub cancel_requested_at: Option<i64>,
    pub attempts: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// Why a failed job failed: (code, detail).
    pub error: Option<(JobFailure, String)>,
}

fiscus_store::row! {
    struct JobRow {
        id: String,
        workspace_id: String,
        environment: String,
        kind: String,
        state: String,
        request: String,
        request_hash: String,
        engine_version: String,
        credits: i64,
        created_by: String,
        created_at: i64,
        progress: i64,
        cancel_requested_at: Option<i64>,
        attempts: i64,
        started_at: Option<i64>,
        finished_at: Option<i64>,
        error_code: Option<String>,
        error_detail: Option<String>,
    }
}

const JOB_COLUMNS: &str = "id, workspace_id, environment, kind, state, request, request_hash, engine_version, \
     credits, created_by, created_at, progress, cancel_requested_at, attempts, started_at, finished_at, error_code, \
     error_detail";

impl TryFrom<JobRow> for Job {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Job> {
        let created_by = stored_actor("compute_jobs", &r.id, "created_by", &r.created_by)?;
        let environment = Environment::parse(&r.environment)
            .ok_or_else(|| corrupt("compute_jobs", &r.id, "environment", &r.environment))?;
        let kind = JobKind::parse(&r.kind).ok_or_else(|| corrupt("compute_jobs", &r.id, "kind", &r.kind))?;
        let state = JobState::parse(&r.state).ok_or_else(|| corrupt("compute_jobs", &r.id, "state", &r.state))?;
        let error = match r.error_code {
            Some(code) => Some((
                JobFailure::parse(&code).ok_or_else(|| corrupt("compute_jobs", &r.id, "error_code", &code))?,
                r.error_detail.unwrap_or_default(),
            )),
            None => None,
        };
        Ok(Job {
            tenant: Tenant { workspace_id: r.workspace_id, environment },
            kind,
            state,
            request: r.request,
            request_hash: r.request_hash,
            engine_version: r.engine_version,
            credits: r.credits,
            created_by,
            created_at: r.created_at,
            progress: r.progress,
            cancel_requested_at: r.cancel_requested_at,
            attempts: r.attempts,
            started_at: r.started_at,
            finished_at: r.finished_at,
            error,
            id: r.id,
        })
    }
}

fiscus_store::row! {
    /// A job's sealed result.
    #[derive(Clone, Debug, PartialEq)]
    pub struct JobResult {
        pub id: String,
        pub job_id: String,
        /// The engine's output as JSON.
        pub output: String,
        pub output_hash: String,
        pub result_hash: String,
        pub created_at: i64,
    }
}

/// Creates a job, sealed, queued (or already running, for one computed in the request itself).
pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, job: &NewJob<'_>, state: JobState) -> Result<()> {
    let sealed_values = vec![
        Stored::Text(job.id.to_string()),
        Stored::Text(tenant.workspace_id.clone()),
        Stored::Text(tenant.environment.as_str().to_string()),
        Stored::Text(job.kind.as_str().to_string()),
        Stored::Text(job.request.to_string()),
        Stored::Text(job.request_hash.to_string()),
        Stored::Text(job.engine_version.to_string()),
        Stored::Integer(job.credits),
        Stored::Text(job.created_by.to_string()),
        Stored::Integer(job.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &JOBS_SEALED, sealed_values.clone())?;
    let started = (state == JobState::Running).then_some(job.created_at);
    sqlx::query(
        "INSERT INTO compute_jobs (id, workspace_id, environment, kind, request, request_hash, engine_version, credits, \
         created_by, created_at, seal_mac, state, started_at, attempts, project) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(job.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(job.kind.as_str())
    .bind(job.request)
    .bind(job.request_hash)
    .bind(job.engine_version)
    .bind(job.credits)
    .bind(job.created_by.label())
    .bind(job.created_at)
    .bind(mac)
    .bind(state.as_str())
    .bind(started)
    .bind(i64::from(started.is_some()))
    .bind(job.project)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &JOBS_SEALED, &sealed_values).await?;
    Ok(())
}

/// A job of this tenant with its result when it has one, both seals checked (an edited request or result is
/// refused, never served).
pub async fn get(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<(Job, Option<JobResult>)> {
    let job: Job = seals::get_tenant_row::<JobRow, _>(conn, key, &JOBS_SEALED, JOB_COLUMNS, tenant, id).await?;
    let result = sqlx::query_as::<_, JobResult>(
        "SELECT id, job_id, output, output_hash, result_hash, created_at FROM compute_results \
         WHERE workspace_id = $1 AND job_id = $2",
    )
    .bind(&tenant.workspace_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if result.is_some() {
        seals::check(conn, key, &RESULTS_SEALED, &tenant.workspace_id, "job_id", id).await?;
    }
    Ok((job, result))
}

/// Filters of the job list; `None` matches everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobFilter {
    pub kind: Option<JobKind>,
    pub state: Option<JobState>,
}

/// The tenant's jobs newest first, before `before` (exclusive), `limit + 1` rows.
pub async fn list(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    filter: JobFilter,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Job>> {
    let mut sql = format!("SELECT {JOB_COLUMNS} FROM compute_jobs WHERE workspace_id = $1 AND environment = $2");
    let mut binds: Vec<&str> = Vec::new();
    for (column, value) in
        [("kind", filter.kind.map(JobKind::as_str)), ("state", filter.state.map(JobState::as_str)), ("id", before)]
    {
        if let Some(v) = value {
            binds.push(v);
            let op = if column == "id" { "<" } else { "=" };
            sql.push_str(&format!(" AND {column} {op} ${}", binds.len() + 2));
        }
    }
    sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", binds.len() + 3));
    let mut q = sqlx::query_as::<_, JobRow>(&sql).bind(&tenant.workspace_id).bind(tenant.environment.as_str());
    for b in binds {
        q = q.bind(b);
    }
    q.bind(i64::from(limit) + 1).fetch_all(conn).await?.into_iter().map(Job::try_from).collect()
}

/// Claims up to `limit` jobs for `worker`: queued ones, and running ones whose worker went silent for
/// `stale_after` (its node died; the job starts again from its request, which reads immutable datasets);
/// fairly across workspaces, at most `per_workspace` running per workspace (`fair`).
pub async fn claim(
    tx: &mut WriteTx,
    worker: &str,
    now: i64,
    stale_after: i64,
    limit: i64,
    per_workspace: i64,
) -> Result<Vec<Job>> {
    let queue = fair::FairQueue {
        table: "compute_jobs",
        key: "id",
        claimable: "c.state = 'queued' OR (c.state = 'running' AND c.claimed_at < $3)",
        live: "l.state = 'running' AND l.claimed_at >= $3",
        order: "c.id",
    };
    let sql = format!(
        "UPDATE compute_jobs SET state = 'running', claimed_by = $1, claimed_at = $2, attempts = attempts + 1, \
         started_at = COALESCE(started_at, $2), progress = 0 WHERE id IN ({}) RETURNING {JOB_COLUMNS}",
        fair::pick(&queue, "$4", backend_of(tx.conn()))
    );
    let claim = fair::Claim { worker, now, stale_before: now - stale_after, per_workspace };
    fair::claim_each::<JobRow>(tx, &sql, &claim, limit).await?.into_iter().map(Job::try_from).collect()
}

/// A running job's heartbeat: its progress, and the claim renewed. `None` when `worker` no longer holds it
/// (retaken after going silent, or cancelled while queued); otherwise whether a cancel was asked for.
pub async fn heartbeat(
    conn: &mut AnyConnection,
    id: &str,
    worker: &str,
    progress: i64,
    now: i64,
) -> Result<Option<bool>> {
    let row: Option<(Option<i64>,)> = sqlx::query_as(
        "UPDATE compute_jobs SET progress = $1, claimed_at = $2 \
         WHERE id = $3 AND state = 'running' AND claimed_by = $4 RETURNING cancel_requested_at",
    )
    .bind(progress.clamp(0, PROGRESS_DONE))
    .bind(now)
    .bind(id)
    .bind(worker)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(c,)| c.is_some()))
}

/// How a job ended.
pub enum Ending<'a> {
    Succeeded { result: &'a JobResult },
    Failed { code: JobFailure, detail: &'a str },
    Cancelled,
}

/// Ends a running job held by `worker` (or computed in its request, `worker` = `None`); false when the claim
/// was lost (nothing is written then).
pub async fn finish(
    tx: &mut WriteTx,
    tenant: &Tenant,
    job_id: &str,
    worker: Option<&str>,
    now: i64,
    ending: Ending<'_>,
) -> Result<bool> {
    let (state, code, detail) = match &ending {
        Ending::Succeeded { .. } => (JobState::Succeeded, None, None),
        Ending::Failed { code, detail } => (JobState::Failed, Some(code.as_str()), Some(*detail)),
        Ending::Cancelled => (JobState::Cancelled, None, None),
    };
    let progress = if state == JobState::Succeeded { Some(PROGRESS_DONE) } else { None };
    let moved = sqlx::query(
        "UPDATE compute_jobs SET state = $1, finished_at = $2, error_code = $3, error_detail = $4, \
         progress = COALESCE($5, progress) \
         WHERE workspace_id = $6 AND environment = $7 AND id = $8 AND state = 'running' \
         AND (claimed_by = $9 OR ($9 IS NULL AND claimed_by IS NULL))",
    )
    .bind(state.as_str())
    .bind(now)
    .bind(code)
    .bind(detail)
    .bind(progress)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(job_id)
    .bind(worker)
    .execute(tx.conn())
    .await?;
    if moved.rows_affected() != 1 {
        return Ok(false);
    }
    if let Ending::Succeeded { result } = ending {
        let sealed_values = vec![
            Stored::Text(result.id.clone()),
            Stored::Text(tenant.workspace_id.clone()),
            Stored::Text(result.job_id.clone()),
            Stored::Text(result.output.clone()),
            Stored::Text(result.output_hash.clone()),
            Stored::Text(result.result_hash.clone()),
            Stored::Integer(result.created_at),
        ];
        let mac = seals::seal_of(tx.seal_key(), &RESULTS_SEALED, sealed_values.clone())?;
        sqlx::query(
            "INSERT INTO compute_results (id, workspace_id, job_id, output, output_hash, result_hash, created_at, \
             seal_mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&result.id)
        .bind(&tenant.workspace_id)
        .bind(&result.job_id)
        .bind(&result.output)
        .bind(&result.output_hash)
        .bind(&result.result_hash)
        .bind(result.created_at)
        .bind(mac)
        .execute(tx.conn())
        .await?;
        seals::log(tx, &RESULTS_SEALED, &sealed_values).await?;
    }
    Ok(true)
}

/// The state of a job of this tenant, locked for the rest of the transaction (PostgreSQL).
pub async fn state_for_update(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<JobState> {
    let lock = fiscus_store::dialect::for_update(backend_of(tx.conn()));
    let (state,): (String,) = sqlx::query_as(&format!(
        "SELECT state FROM compute_jobs WHERE workspace_id = $1 AND environment = $2 AND id = $3{lock}"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(StoreError::NotFound)?;
    JobState::parse(&state).ok_or_else(|| corrupt("compute_jobs", id, "state", &state))
}

/// Cancels a queued job now.
pub async fn cancel_queued(tx: &mut WriteTx, tenant: &Tenant, id: &str, now: i64) -> Result<bool> {
    let moved = sqlx::query(
        "UPDATE compute_jobs SET state = 'cancelled', cancel_requested_at = $1, finished_at = $1 \
         WHERE workspace_id = $2 AND environment = $3 AND id = $4 AND state = 'queued'",
    )
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// Asks a running job's worker to stop (the first request's time is kept).
pub async fn request_cancel(tx: &mut WriteTx, tenant: &Tenant, id: &str, now: i64) -> Result<bool> {
    let moved = sqlx::query(
        "UPDATE compute_jobs SET cancel_requested_at = COALESCE(cancel_requested_at, $1) \
         WHERE workspace_id = $2 AND environment = $3 AND id = $4 AND state = 'running'",
    )
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(moved.rows_affected() == 1)
}

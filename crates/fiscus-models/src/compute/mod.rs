//! Compute jobs: the application layer between the quant routes (and the compute worker) and the store.
//!
//! A job's request is checked and its inputs pinned (dataset versions) before anything is written; the
//! job, its credits debit and its audit event are written together. Small jobs are computed in the request
//! and written ended with their result (201); others are queued (202) for a worker on any node, which claims
//! them exclusively, heartbeats while it computes on the CPU pool, and ends them in one transaction with the
//! sealed result. A job whose node died is retaken after [`STALE_AFTER`] and computed again from its
//! request (the datasets it pinned never change, so the result is the same). Every job has a wall-clock
//! safety net ([`JOB_BUDGET`]); the engine's own budgets are counted in work, so an answer does not depend on
//! the machine's speed or load.
//!
//! It is long because a job's whole life is here in order (submission, claim, execution, ending, cancellation);
//! each kind's own computation is in its module behind `Computation`.

pub mod backtest;
pub mod forecast;
pub mod generative;
pub mod models;
pub mod optimization;
pub mod research;
pub mod scenarios;
pub mod simulation;
pub mod tournament;

pub use fiscus_kernel::pool::{Control, Crashed, Pool, Reserved, Stop};

use crate::tables::compute::{self as jobs, Ending, Job, JobResult, NewJob};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::compute::{self as rules, JobFailure, JobKind, JobState};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::tables::credits::{EntryKind, NewEntry};
use fiscus_quant::QuantError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// The engine every result names.
pub const ENGINE_VERSION: &str = concat!("fiscus-quant/", env!("CARGO_PKG_VERSION"));
/// The longest a job may compute: a safety net far above the engine's counted budgets; past it the job fails
/// with `safety_timeout` (retryable).
pub const JOB_BUDGET: Duration = Duration::from_secs(300);
/// A running job whose worker has not reported for this long is retaken by another.
pub const STALE_AFTER: i64 = 30 * MICROS_PER_SECOND;

/// A job's request as stored and sealed: every default applied, inputs pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    Optimization(optimization::Optimization),
    Simulation(simulation::Simulation),
    Backtest(backtest::Backtest),
    ModelRun(models::ModelRun),
    Scenarios(scenarios::Scenarios),
    Forecast(forecast::Forecast),
    Generative(generative::Generative),
    Tournament(tournament::Tournament),
    ResearchRun(research::Research),
}

/// What every kind of computation is once pinned (every `Request` but a research run, which is a sequence of
/// them): what its credits are priced on, whether it is small enough to answer in the request, how its
/// pinned inputs are read from the store, and how it computes them on a pool thread, stopping at `control`'s
/// checks. The request, the job, the worker and the routes handle every kind through it alike.
pub trait Computation: Clone + Send + Sync + 'static {
    /// What `load` reads and `run` computes on.
    type Inputs: Send + 'static;
    const KIND: JobKind;
    /// The size its credits are priced on (`fiscus_domain::compute::credits`).
    fn size(&self) -> u64;
    /// Small enough to be answered in the request (a larger one is queued as a job).
    fn small(&self) -> bool;
    fn load(
        &self,
        services: &Services,
        workspace_id: &str,
    ) -> impl std::future::Future<Output = Result<Self::Inputs, Failure>> + Send;
    fn run(&self, inputs: Self::Inputs, control: &Control) -> Result<Value, Refusal>;
    /// What reading the data plane dropped and bridged, and the dates' frequency: added to the output as
    /// `warnings` and `frequency` where the computation did not put its own (none for inline inputs).
    fn quality(_inputs: &Self::Inputs) -> Option<fiscus_kernel::inputs::Quality> {
        None
    }
}

/// `$each` with `$c` bound to the request's computation, whatever its kind; `$research` for a research run.
macro_rules! dispatch {
    ($request:expr, $c:ident => $each:expr, $r:ident => $research:expr) => {
        match $request {
            Request::Optimization($c) => $each,
            Request::Simulation($c) => $each,
            Request::Backtest($c) => $each,
            Request::ModelRun($c) => $each,
            Request::Scenarios($c) => $each,
            Request::Forecast($c) => $each,
            Request::Generative($c) => $each,
            Request::Tournament($c) => $each,
            Request::ResearchRun($r) => $research,
        }
    };
}

fn kind_of<C: Computation>(_: &C) -> JobKind {
    C::KIND
}

impl Request {
    pub fn kind(&self) -> JobKind {
        dispatch!(self, c => kind_of(c), _r => JobKind::ResearchRun)
    }

    /// What it costs in AI credits (`fiscus_domain::compute::credits`; a research run the sum of its steps).
    pub fn credits(&self) -> i64 {
        match self {
            Request::ResearchRun(r) => r.credits(),
            other => rules::credits(other.kind(), other.size()),
        }
    }

    /// The research project it is filed under.
    fn project(&self) -> Option<&str> {
        match self {
            Request::ResearchRun(r) => Some(&r.project),
            _ => None,
        }
    }

    /// The size its credits are priced on (`fiscus_domain::compute::credits`).
    fn size(&self) -> u64 {
        dispatch!(self, c => c.size(), r => r.size())
    }

    fn small(&self) -> bool {
        dispatch!(self, c => c.small(), r => r.small())
    }

    /// Reads the inputs and computes on the pool: a queued job on the thread its worker reserved, a
    /// computation answered in the request on the inline threads, never behind queued jobs (it is small by
    /// rule).
    async fn compute(
        &self,
        services: &Services,
        workspace_id: &str,
        control: Arc<Control>,
        thread: Option<&Reserved>,
    ) -> Result<Value, Refusal> {
        dispatch!(
            self,
            c => computed(c, services, workspace_id, control, thread).await,
            r => r.compute(services, workspace_id, control, thread).await
        )
    }
}

/// One computation's inputs read, then computed on the pool (see `Request::compute`).
async fn computed<C: Computation>(
    c: &C,
    services: &Services,
    workspace_id: &str,
    control: Arc<Control>,
    thread: Option<&Reserved>,
) -> Result<Value, Refusal> {
    let inputs = c.load(services, workspace_id).await.map_err(Refusal::Failure)?;
    let quality = C::quality(&inputs);
    let c = c.clone();
    let f = move || c.run(inputs, &control);
    let done = match thread {
        Some(t) => services.compute.run(t, f).await,
        None => services.compute.run_inline(workspace_id, f).await,
    };
    let mut output = done.map_err(|Crashed| Refusal::Crashed)??;
    if let Some(q) = quality {
        q.annotate(&mut output, None);
    }
    Ok(output)
}

/// Why a computation produced no result.
#[derive(Debug)]
pub enum Refusal {
    /// The engine refused the inputs.
    Engine(QuantError),
    Stopped(Stop),
    /// Reading the inputs failed.
    Failure(Failure),
    /// The computation panicked (a bug).
    Crashed,
}

impl From<QuantError> for Refusal {
    fn from(e: QuantError) -> Refusal {
        Refusal::Engine(e)
    }
}

impl From<Stop> for Refusal {
    fn from(s: Stop) -> Refusal {
        Refusal::Stopped(s)
    }
}

pub use fiscus_kernel::engine::{engine_code, engine_error, limit_exceeded, refused_by_engine};

/// A job and its result, as the API shows them.
pub struct Shown {
    pub job: Job,
    pub result: Option<JobResult>,
    /// Computed in the request (201) rather than queued (202).
    pub inline: bool,
}

/// Creates a job: computed now when small and the caller did not prefer an asynchronous answer, queued
/// otherwise. Credits are debited with the job (402 `credits_exhausted` when they do not cover it).
pub async fn submit(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    request: Request,
    prefer_async: bool,
) -> Result<Shown, Failure> {
    let kind = request.kind();
    let credits = request.credits();
    let value = serde_json::to_value(&request).map_err(|e| Failure::internal(format!("request: {e}")))?;
    let canonical =
        fiscus_domain::jcs::canonicalize(&value).map_err(|e| Failure::internal(format!("request: {e:?}")))?;
    let request_hash = fiscus_domain::evidence::seal_bytes(canonical.as_bytes());
    let id = fiscus_domain::ids::new_id("cjb");
    let created_by = caller.actor.clone();
    let output = if !prefer_async && request.small() {
        // Refused before computing when the balance already cannot cover it (checked again when debited).
        let mut conn = services.store.read().await?;
        let t = fiscus_kernel::tables::credits::totals(&mut conn, tenant).await?;
        drop(conn);
        if t.granted - t.consumed < credits {
            return Err(exhausted(credits, t.granted - t.consumed));
        }
        // Small by rule, and short by budget: one that runs past the in-request budget is stopped and queued
        // instead, so no request (and no other workspace's request behind it) waits on a long computation.
        let control = services.compute.control(services.compute.inline_budget());
        match request.compute(services, &tenant.workspace_id, control, None).await {
            Ok(v) => Some(v),
            Err(Refusal::Engine(e)) => return Err(refused_by_engine(e)),
            Err(Refusal::Failure(f)) => return Err(f),
            Err(Refusal::Stopped(_)) => None,
            Err(Refusal::Crashed) => return Err(Failure::internal("a computation crashed")),
        }
    } else {
        None
    };
    let inline = output.is_some();
    let now = now_micros();
    let new = NewJob {
        id: &id,
        kind,
        request: &canonical,
        request_hash: &request_hash,
        engine_version: ENGINE_VERSION,
        credits,
        created_by: &created_by,
        created_at: now,
        project: request.project(),
    };
    let mut tx = services.store.begin().await?;
    let debit = NewEntry {
        id: &fiscus_domain::ids::new_id("crd"),
        kind: EntryKind::Consumption,
        credits,
        reason: "compute job",
        reference: Some(&id),
        created_at: now,
    };
    if fiscus_kernel::tables::credits::debit(&mut tx, tenant, &debit).await?.is_none() {
        let mut conn = services.store.read().await?;
        let t = fiscus_kernel::tables::credits::totals(&mut conn, tenant).await?;
        return Err(exhausted(credits, t.granted - t.consumed));
    }
    let state_now = if output.is_some() { JobState::Running } else { JobState::Queued };
    jobs::insert(&mut tx, tenant, &new, state_now).await?;
    let mut result = None;
    if let Some(output) = &output {
        let sealed = result_of(&id, &request_hash, output, now)?;
        if !jobs::finish(&mut tx, tenant, &id, None, now, Ending::Succeeded { result: &sealed }).await? {
            return Err(Failure::internal("a job computed in its request could not be ended"));
        }
        result = Some(sealed);
    }
    let result_hash = result.as_ref().map(|r| r.result_hash.clone());
    let details = json!({
        "kind": kind.as_str(), "request_hash": request_hash, "credits": credits, "inline": inline,
        "result_hash": result_hash,
    });
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::ComputeJobCreated.into(),
        subject: Some(&id),
        details,
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    if !inline {
        services.compute.wake.notify_one();
    }
    // Shown as written (not read back: a large request would be read and its seal checked again for
    // nothing); a queued job may already have been claimed since, which its next read shows.
    let job = Job {
        id,
        tenant: tenant.clone(),
        kind,
        state: if inline { JobState::Succeeded } else { JobState::Queued },
        request: canonical,
        request_hash,
        engine_version: ENGINE_VERSION.to_string(),
        credits,
        created_by,
        created_at: now,
        progress: if inline { jobs::PROGRESS_DONE } else { 0 },
        cancel_requested_at: None,
        attempts: i64::from(inline),
        started_at: inline.then_some(now),
        finished_at: inline.then_some(now),
        error: None,
    };
    Ok(Shown { job, result, inline })
}

fn exhausted(needed: i64, left: i64) -> Failure {
    Failure::refused(
        ErrorCode::CreditsExhausted,
        format!("this job costs {needed} AI credits and the balance is {left}; see GET /ai-credits/balance"),
    )
}

/// The sealed result of a computation: its output, the output's hash, and the result hash binding the
/// request, the engine and the output together.
fn result_of(job_id: &str, request_hash: &str, output: &Value, now: i64) -> Result<JobResult, Failure> {
    let canonical =
        fiscus_domain::jcs::canonicalize(output).map_err(|e| Failure::internal(format!("output: {e:?}")))?;
    let output_hash = fiscus_domain::evidence::seal_bytes(canonical.as_bytes());
    let result_hash = fiscus_domain::evidence::seal(&json!({
        "request_hash": request_hash, "engine_version": ENGINE_VERSION, "output_hash": output_hash,
    }))
    .map_err(|e| Failure::internal(format!("result: {e:?}")))?;
    Ok(JobResult {
        id: fiscus_domain::ids::new_id("cjr"),
        job_id: job_id.to_string(),
        output: canonical,
        output_hash,
        result_hash,
        created_at: now,
    })
}

/// Cancels a job: a queued one now (its credits refunded), a running one at its next check; an ended one
/// is a conflict.
pub async fn cancel(services: &Services, caller: &Caller, tenant: &Tenant, id: &str) -> Result<Job, Failure> {
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    let current = jobs::state_for_update(&mut tx, tenant, id).await?;
    let moved = match rules::cancel(current) {
        Err(rules::AlreadyEnded(s)) => {
            return Err(Failure::refused(ErrorCode::Conflict, format!("the job has ended ({})", s.as_str())));
        }
        Ok(rules::Cancel::Now) => {
            let done = jobs::cancel_queued(&mut tx, tenant, id, now).await?;
            if done {
                let mut conn = services.store.read().await?;
                let (job, _) = jobs::get(&mut conn, services.store.seal_key(), tenant, id).await?;
                drop(conn);
                let refund = NewEntry {
                    id: &fiscus_domain::ids::new_id("crd"),
                    kind: EntryKind::Grant,
                    credits: job.credits,
                    reason: "refund of a compute job cancelled before it ran",
                    reference: Some(id),
                    created_at: now,
                };
                fiscus_kernel::tables::credits::record(tx.conn(), tenant, &refund).await?;
            }
            done
        }
        Ok(rules::Cancel::Requested) => jobs::request_cancel(&mut tx, tenant, id, now).await?,
    };
    if !moved {
        // Claimed or ended between the read and the update (SQLite reads without locking): ask again.
        return Err(Failure::refused(ErrorCode::Conflict, "the job changed while it was being cancelled; try again"));
    }
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::ComputeJobCancelRequested.into(),
        subject: Some(id),
        details: json!({ "state_before": current.as_str() }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    let mut conn = services.store.read().await?;
    Ok(jobs::get(&mut conn, services.store.seal_key(), tenant, id).await?.0)
}

/// Runs a job this worker claimed on the thread it reserved, heartbeating while it computes, and ends it. Nothing is written when the
/// claim was lost meanwhile.
pub async fn execute(services: &Services, worker: &str, job: Job, thread: Reserved) -> Result<(), Failure> {
    let caller = Caller::bare(fiscus_domain::actor::Actor::worker(worker));
    // The claim returns the row as it stands; its request is computed only once its seal checks.
    let verified = {
        let mut conn = services.store.read().await?;
        jobs::get(&mut conn, services.store.seal_key(), &job.tenant, &job.id).await.map(|_| ())
    };
    match verified {
        Ok(()) => {}
        Err(fiscus_store::StoreError::Tampered(what)) => {
            tracing::error!(job = %job.id, what = %what, "a compute job failed verification; it is not computed");
            let why = "the job's sealed request failed verification".to_string();
            return end_unrun(services, worker, &caller, &job, JobFailure::IntegrityFailure, why, false).await;
        }
        Err(e) => return Err(e.into()),
    }
    if let Some(why) = authority_withdrawn(services, &job).await? {
        return end_unrun(services, worker, &caller, &job, JobFailure::AuthorityWithdrawn, why, true).await;
    }
    let control = services.compute.control(JOB_BUDGET);
    let beat = {
        let (services, control, id, worker) = (services.clone(), control.clone(), job.id.clone(), worker.to_string());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let Ok(mut conn) = services.store.read().await else { continue };
                match jobs::heartbeat(&mut conn, &id, &worker, control.progress(), now_micros()).await {
                    Ok(None) => control.stop(Stop::Abandoned),
                    Ok(Some(true)) => control.stop(Stop::Cancelled),
                    Ok(Some(false)) => {}
                    Err(e) => tracing::warn!(job = %id, error = %e, "a compute heartbeat failed"),
                }
            }
        })
    };
    let outcome = match serde_json::from_str::<Request>(&job.request) {
        Ok(request) => request.compute(services, &job.tenant.workspace_id, control.clone(), Some(&thread)).await,
        Err(e) => Err(Refusal::Failure(Failure::internal(format!("job {}: stored request: {e}", job.id)))),
    };
    beat.abort();
    if control.stopped() == Some(Stop::Abandoned) {
        return Ok(());
    }
    // The workspace lost its entitlement to the data after the job was queued: nothing was read, so the job
    // ends as such, its credits refunded (issue 54).
    if let Err(Refusal::Failure(Failure::Refused { code: ErrorCode::EntitlementMissing, detail, .. })) = &outcome {
        return end_unrun(services, worker, &caller, &job, JobFailure::EntitlementMissing, detail.clone(), true).await;
    }
    let now = now_micros();
    let engine_detail = match &outcome {
        Err(Refusal::Engine(e)) => e.to_string(),
        _ => String::new(),
    };
    let result;
    let (ending, action) = match &outcome {
        Ok(output) => {
            result = result_of(&job.id, &job.request_hash, output, now)?;
            (Ending::Succeeded { result: &result }, Change::ComputeJobSucceeded)
        }
        Err(Refusal::Stopped(Stop::Cancelled)) => (Ending::Cancelled, Change::ComputeJobCancelled),
        Err(Refusal::Stopped(_)) => (
            Ending::Failed {
                code: JobFailure::SafetyTimeout,
                detail: "the computation ran past the job's wall-clock safety net before its counted budget \
                         ran out (the machine was slow or busy); submitting it again may succeed",
            },
            Change::ComputeJobFailed,
        ),
        Err(Refusal::Engine(e)) => (
            Ending::Failed { code: JobFailure::Engine(engine_error(e)), detail: &engine_detail },
            Change::ComputeJobFailed,
        ),
        Err(Refusal::Failure(_)) | Err(Refusal::Crashed) => (
            Ending::Failed { code: JobFailure::Internal, detail: "the job could not be computed" },
            Change::ComputeJobFailed,
        ),
    };
    if let Err(Refusal::Failure(f)) = &outcome {
        tracing::error!(job = %job.id, failure = ?f, "a compute job could not read its inputs");
    }
    let mut tx = services.store.begin().await?;
    if !jobs::finish(&mut tx, &job.tenant, &job.id, Some(worker), now, ending).await? {
        return Ok(());
    }
    let entry = AuditEntry {
        workspace_id: &job.tenant.workspace_id,
        environment: Some(job.tenant.environment),
        action: action.into(),
        subject: Some(&job.id),
        details: json!({ "attempts": job.attempts }),
        occurred_at: now,
    };
    audit(&mut tx, &caller, &entry).await?;
    tx.commit().await?;
    Ok(())
}

/// Why a queued job may no longer be computed on behalf of the application that queued it: it is no longer
/// active, or neither it nor its workspace holds a scope that queues jobs of this kind any more. Read when a
/// worker takes the job up, not when it was queued. `None` when it may (or a person or the CLI queued it).
async fn authority_withdrawn(services: &Services, job: &Job) -> Result<Option<String>, Failure> {
    let Some(application) = job.created_by.application_id() else { return Ok(None) };
    let mut conn = services.store.read().await?;
    let held = fiscus_store::applications::authority(&mut conn, &job.tenant.workspace_id, application).await?;
    let scopes = job.kind.submitting_scopes();
    Ok(match held {
        None => Some("the application that queued the job is no longer active".to_string()),
        Some(held) if !scopes.iter().any(|s| held.contains(s)) => {
            Some(format!("the application that queued the job no longer holds {}", scopes.join(" or ")))
        }
        Some(_) => None,
    })
}

/// Ends a job that is not to be computed (its authority withdrawn, its record failing verification) as
/// failed with `code`, its credits refunded when `refund` (nothing was computed for them), in one
/// transaction; nothing when the claim was lost meanwhile.
async fn end_unrun(
    services: &Services,
    worker: &str,
    caller: &Caller,
    job: &Job,
    code: JobFailure,
    why: String,
    refund: bool,
) -> Result<(), Failure> {
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    let ending = Ending::Failed { code, detail: &why };
    if !jobs::finish(&mut tx, &job.tenant, &job.id, Some(worker), now, ending).await? {
        return Ok(());
    }
    if refund {
        let entry = NewEntry {
            id: &fiscus_domain::ids::new_id("crd"),
            kind: EntryKind::Grant,
            credits: job.credits,
            reason: "refund of a compute job ended before it ran",
            reference: Some(&job.id),
            created_at: now,
        };
        fiscus_kernel::tables::credits::record(tx.conn(), &job.tenant, &entry).await?;
    }
    let entry = AuditEntry {
        workspace_id: &job.tenant.workspace_id,
        environment: Some(job.tenant.environment),
        action: Change::ComputeJobFailed.into(),
        subject: Some(&job.id),
        details: json!({ "attempts": job.attempts, "code": code.as_str(), "detail": why }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(())
}

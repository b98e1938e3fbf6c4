//! Workflows, their versions, runs with their step-by-step history, and validation campaigns (see the
//! migration `…_workflows.sql`). Records are sealed and decoded by column (`sealed_records`); a run's state
//! moves under a guard and is re-sealed; the worker's claim is the one cross-tenant query.

use crate::rules::workflows::records::{CampaignBody, ProofBody, RunBody, StepBody, VersionBody, WorkflowBody};
use crate::rules::workflows::run::{RunState, StepOutcome};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, history, insert_record, select_one, select_page, select_where, text, update_guarded,
};
use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::agent_tables::CAMPAIGNS_SEALED;
pub use fiscus_store::agent_tables::PROOFS_SEALED;
pub use fiscus_store::agent_tables::WORKFLOW_RUNS_SEALED as RUNS_SEALED;
pub use fiscus_store::agent_tables::WORKFLOW_STEPS_SEALED as STEPS_SEALED;
pub use fiscus_store::agent_tables::WORKFLOW_VERSIONS_SEALED as VERSIONS_SEALED;
pub use fiscus_store::agent_tables::WORKFLOWS_SEALED;

pub type Workflow = Record<WorkflowBody>;
pub type Proof = Record<ProofBody>;
pub type Version = Record<VersionBody>;
pub type Campaign = Record<CampaignBody>;
pub type Step = Record<StepBody>;

/// A run: its record, and what moves.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub record: Record<RunBody>,
    pub state: RunState,
    /// Set when the run ends: SHA-256 over its steps' ids and output hashes, in order.
    pub evidence_hash: Option<String>,
    pub ended_at: Option<i64>,
}

fn workflow(f: &Fields) -> Result<Workflow> {
    let w: Workflow = f.record()?;
    let key = w.body.library.as_ref().map(|l| l.key.clone());
    if f.text("name")? != w.body.name || f.opt_text("library_key")? != key {
        return Err(columns_differ("workflows", &w.id));
    }
    Ok(w)
}

fn version(f: &Fields) -> Result<Version> {
    let v: Version = f.record()?;
    if f.text("workflow_id")? != v.body.workflow_id || f.int("version")? != v.body.version {
        return Err(columns_differ("workflow_versions", &v.id));
    }
    Ok(v)
}

fn run(f: &Fields) -> Result<Run> {
    let record: Record<RunBody> = f.record()?;
    if f.text("workflow_id")? != record.body.workflow_id || f.text("version_id")? != record.body.version_id {
        return Err(columns_differ("workflow_runs", &record.id));
    }
    Ok(Run {
        state: f.parsed("state", RunState::parse)?,
        evidence_hash: f.opt_text("evidence_hash")?,
        ended_at: f.opt_int("ended_at")?,
        record,
    })
}

fn step(f: &Fields) -> Result<Step> {
    let s: Step = f.record()?;
    let outcome = f.parsed("outcome", StepOutcome::parse)?;
    if f.text("run_id")? != s.body.run_id
        || f.text("step_id")? != s.body.step
        || f.int("seq")? != s.body.seq
        || outcome != s.body.outcome
    {
        return Err(columns_differ("workflow_run_steps", &s.id));
    }
    Ok(s)
}

/// Creates a workflow with its first version; a name the tenant uses already is `Conflict`.
pub async fn insert_workflow(tx: &mut WriteTx, tenant: &Tenant, w: &Workflow, first: &Version) -> Result<()> {
    let key = w.body.library.as_ref().map_or(Stored::Null, |l| text(&l.key));
    insert_record(tx, &WORKFLOWS_SEALED, tenant, w, &[("name", text(&w.body.name)), ("library_key", key)]).await?;
    insert_version(tx, tenant, first).await
}

/// Appends a version; a second writer of the same version number is `Conflict`.
pub async fn insert_version(tx: &mut WriteTx, tenant: &Tenant, v: &Version) -> Result<()> {
    let own = [("workflow_id", text(&v.body.workflow_id)), ("version", Stored::Integer(v.body.version))];
    insert_record(tx, &VERSIONS_SEALED, tenant, v, &own).await
}

pub async fn get_workflow(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Workflow> {
    workflow(&select_one(conn, key, &WORKFLOWS_SEALED, tenant, id).await?)
}

/// The tenant's workflow installed from a library template, if any.
pub async fn find_installed(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    library_key: &str,
) -> Result<Option<Workflow>> {
    let rows = select_where(conn, key, &WORKFLOWS_SEALED, tenant, "library_key", text(library_key)).await?;
    rows.iter().map(workflow).next().transpose()
}

pub async fn get_version(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Version> {
    version(&select_one(conn, key, &VERSIONS_SEALED, tenant, id).await?)
}

/// A workflow's versions, oldest first.
pub async fn versions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    workflow_id: &str,
) -> Result<Vec<Version>> {
    history(conn, key, &VERSIONS_SEALED, tenant, ("workflow_id", workflow_id), version, |v: &Version| v.body.version)
        .await
}

/// The tenant's versions of every workflow, newest first, at most `limit` (the console's allowlist form).
pub async fn recent_versions(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    limit: u32,
) -> Result<Vec<Version>> {
    let mut all: Vec<Version> = select_page(conn, key, &VERSIONS_SEALED, tenant, None, limit)
        .await?
        .iter()
        .map(version)
        .collect::<Result<_>>()?;
    all.truncate(limit as usize);
    Ok(all)
}

/// Creates a run, queued and due at once.
pub async fn insert_run(tx: &mut WriteTx, tenant: &Tenant, r: &Record<RunBody>) -> Result<()> {
    let own = [
        ("workflow_id", text(&r.body.workflow_id)),
        ("version_id", text(&r.body.version_id)),
        ("state", text(RunState::Queued.as_str())),
    ];
    insert_record(tx, &RUNS_SEALED, tenant, r, &own).await?;
    sqlx::query("UPDATE workflow_runs SET due_at = $1 WHERE id = $2")
        .bind(r.created_at)
        .bind(&r.id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn get_run(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Run> {
    run(&select_one(conn, key, &RUNS_SEALED, tenant, id).await?)
}

/// The tenant's runs newest first, before `before`, `limit + 1` of them.
pub async fn list_runs(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Run>> {
    select_page(conn, key, &RUNS_SEALED, tenant, before, limit).await?.iter().map(run).collect()
}

/// The tenant's runs in `state`, oldest first.
pub async fn runs_in(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, state: RunState) -> Result<Vec<Run>> {
    select_where(conn, key, &RUNS_SEALED, tenant, "state", text(state.as_str())).await?.iter().map(run).collect()
}

/// Moves a run from `from` to `to` (with its evidence hash and end time when it ends) and re-seals it;
/// `false` if it was no longer in `from`. `due_at` is when a worker should next look at it (`None`: only
/// when something else moves it, such as a review). A run that ends lets go of whichever claim it holds,
/// as an Agent Space run does: the worker ending it may not be its holder (a step is guarded by its
/// sequence number, not by the claim, so a worker whose claim went stale goes on), and a cancelled run's
/// holder may be gone; either claim would stay on the ended run for good.
pub async fn move_run(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: RunState,
    to: RunState,
    ending: Option<(&str, i64)>,
    due_at: Option<i64>,
) -> Result<bool> {
    let mut set = vec![("state", text(to.as_str()))];
    if let Some((evidence_hash, at)) = ending {
        set.push(("evidence_hash", text(evidence_hash)));
        set.push(("ended_at", Stored::Integer(at)));
    }
    if !update_guarded(tx, &RUNS_SEALED, tenant, id, &set, ("state", from.as_str())).await? {
        return Ok(false);
    }
    let sql = if to.is_ended() {
        "UPDATE workflow_runs SET due_at = $1, claimed_by = NULL, claimed_at = NULL WHERE id = $2"
    } else {
        "UPDATE workflow_runs SET due_at = $1 WHERE id = $2"
    };
    sqlx::query(sql).bind(due_at).bind(id).execute(tx.conn()).await?;
    Ok(true)
}

pub use fiscus_store::run_claims::Claimed;

pub use fiscus_store::agent_tables::WORKFLOW_RUNS;

/// Claims up to `limit` of them not held by a live claim (`run_claims::claim`).
pub async fn claim(
    tx: &mut WriteTx,
    worker: &str,
    now: i64,
    stale_after: i64,
    limit: i64,
    per_workspace: i64,
) -> Result<Vec<Claimed>> {
    fiscus_store::run_claims::claim(tx, &WORKFLOW_RUNS, worker, now, stale_after, limit, per_workspace).await
}

/// Lets go of a claim (the run waits for its timer, a review, or has ended); `false` when this worker no
/// longer held it.
pub async fn release(tx: &mut WriteTx, run_id: &str, worker: &str) -> Result<bool> {
    let done =
        sqlx::query("UPDATE workflow_runs SET claimed_by = NULL, claimed_at = NULL WHERE id = $1 AND claimed_by = $2")
            .bind(run_id)
            .bind(worker)
            .execute(tx.conn())
            .await?;
    Ok(done.rows_affected() == 1)
}

/// Records a step's outcome; a step recorded already (or a sequence number taken) is `Conflict`, which is
/// how a step's effect never lands twice.
pub async fn insert_step(tx: &mut WriteTx, tenant: &Tenant, s: &Step) -> Result<()> {
    let own = [
        ("run_id", text(&s.body.run_id)),
        ("step_id", text(&s.body.step)),
        ("seq", Stored::Integer(s.body.seq)),
        ("outcome", text(s.body.outcome.as_str())),
    ];
    insert_record(tx, &STEPS_SEALED, tenant, s, &own).await
}

/// A run's recorded steps, in the order they were recorded.
pub async fn steps_of(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, run_id: &str) -> Result<Vec<Step>> {
    let mut all: Vec<Step> = select_where(conn, key, &STEPS_SEALED, tenant, "run_id", text(run_id))
        .await?
        .iter()
        .map(step)
        .collect::<Result<_>>()?;
    all.sort_by_key(|s| s.body.seq);
    Ok(all)
}

pub async fn insert_campaign(tx: &mut WriteTx, tenant: &Tenant, c: &Campaign) -> Result<()> {
    insert_record(tx, &CAMPAIGNS_SEALED, tenant, c, &[("version_id", text(&c.body.version_id))]).await
}

pub async fn get_campaign(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Campaign> {
    let c: Campaign = select_one(conn, key, &CAMPAIGNS_SEALED, tenant, id).await?.record()?;
    Ok(c)
}

/// A workflow's runs (every version's), oldest first.
pub async fn runs_of(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, workflow_id: &str) -> Result<Vec<Run>> {
    select_where(conn, key, &RUNS_SEALED, tenant, "workflow_id", text(workflow_id)).await?.iter().map(run).collect()
}

pub async fn insert_proof(tx: &mut WriteTx, tenant: &Tenant, p: &Proof) -> Result<()> {
    insert_record(tx, &PROOFS_SEALED, tenant, p, &[("workflow_id", text(&p.body.workflow_id))]).await
}

/// The tenant's proofs of value newest first, before `before`, `limit + 1` of them.
pub async fn list_proofs(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Proof>> {
    let rows = select_page(conn, key, &PROOFS_SEALED, tenant, before, limit).await?;
    rows.iter()
        .map(|f| {
            let p: Proof = f.record()?;
            if f.text("workflow_id")? != p.body.workflow_id {
                return Err(columns_differ("workflow_proofs", &p.id));
            }
            Ok(p)
        })
        .collect()
}

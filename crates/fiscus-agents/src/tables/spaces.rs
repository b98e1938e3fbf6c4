//! Agent Spaces (see the migration `…_agent_spaces.sql`): spaces, their versions, operators' decisions, runs
//! and their calls. Records are sealed and decoded by column (`sealed_records`); a run's state moves under a
//! guard and is re-sealed; the queue's claim is the one cross-tenant query.

use crate::rules::spaces::AgentRunState;
use crate::rules::spaces::records::{CallBody, DecisionBody, RunBody, SpaceBody, VersionBody};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, history, insert_record, select_one, select_page, select_where, text, update_guarded,
};
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::agent_tables::SPACE_CALLS_SEALED as CALLS_SEALED;
pub use fiscus_store::agent_tables::SPACE_DECISIONS_SEALED as DECISIONS_SEALED;
pub use fiscus_store::agent_tables::SPACE_RUNS_SEALED as RUNS_SEALED;
pub use fiscus_store::agent_tables::SPACE_VERSIONS_SEALED as VERSIONS_SEALED;
pub use fiscus_store::agent_tables::SPACES_SEALED;

pub type Space = Record<SpaceBody>;
pub type Version = Record<VersionBody>;
pub type Decision = Record<DecisionBody>;
pub type Call = Record<CallBody>;

/// A run: its record and what moves.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub record: Record<RunBody>,
    pub state: AgentRunState,
    /// What the runtime concluded (set when the run ends).
    pub answer: Option<String>,
    /// Set when the run ends: SHA-256 over its calls' record hashes, in order.
    pub output_hash: Option<String>,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
}

fn space(f: &Fields) -> Result<Space> {
    let s: Space = f.record()?;
    if f.text("key")? != s.body.key {
        return Err(columns_differ("agent_spaces", &s.id));
    }
    Ok(s)
}

fn version(f: &Fields) -> Result<Version> {
    let v: Version = f.record()?;
    if f.text("space_id")? != v.body.space_id || f.int("version")? != v.body.version {
        return Err(columns_differ("agent_space_versions", &v.id));
    }
    Ok(v)
}

fn decision(f: &Fields) -> Result<Decision> {
    let d: Decision = f.record()?;
    if f.text("space_id")? != d.body.space_id
        || f.int("seq")? != d.body.seq
        || f.text("decision")? != d.body.decision.as_str()
    {
        return Err(columns_differ("agent_space_decisions", &d.id));
    }
    Ok(d)
}

fn run(f: &Fields) -> Result<Run> {
    let record: Record<RunBody> = f.record()?;
    if f.text("space_id")? != record.body.space_id
        || f.text("version_id")? != record.body.version_id
        || f.text("execution_id")? != record.body.execution_id
    {
        return Err(columns_differ("agent_runs", &record.id));
    }
    Ok(Run {
        state: f.parsed("state", AgentRunState::parse)?,
        answer: f.opt_text("answer")?,
        output_hash: f.opt_text("output_hash")?,
        started_at: f.opt_int("started_at")?,
        ended_at: f.opt_int("ended_at")?,
        record,
    })
}

fn call(f: &Fields) -> Result<Call> {
    let c: Call = f.record()?;
    if f.text("run_id")? != c.body.run_id || f.int("seq")? != c.body.seq {
        return Err(columns_differ("agent_run_calls", &c.id));
    }
    Ok(c)
}

/// Creates a space of the tenant; a key the tenant holds already is `Conflict`.
pub async fn insert_space(tx: &mut WriteTx, tenant: &Tenant, s: &Space) -> Result<()> {
    insert_record(tx, &SPACES_SEALED, tenant, s, &[("key", text(&s.body.key))]).await
}

/// Appends a version; a second writer of the same number is `Conflict`.
pub async fn insert_version(tx: &mut WriteTx, tenant: &Tenant, v: &Version) -> Result<()> {
    let own = [("space_id", text(&v.body.space_id)), ("version", Stored::Integer(v.body.version))];
    insert_record(tx, &VERSIONS_SEALED, tenant, v, &own).await
}

/// Appends a decision; a second writer of the same sequence number is `Conflict`.
pub async fn insert_decision(tx: &mut WriteTx, tenant: &Tenant, d: &Decision) -> Result<()> {
    let own = [
        ("space_id", text(&d.body.space_id)),
        ("seq", Stored::Integer(d.body.seq)),
        ("decision", text(d.body.decision.as_str())),
    ];
    insert_record(tx, &DECISIONS_SEALED, tenant, d, &own).await
}

pub async fn get_space(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Space> {
    space(&select_one(conn, key, &SPACES_SEALED, tenant, id).await?)
}

/// The tenant's space made from a shipped key, if any.
pub async fn space_by_key(
    conn: &mut AnyConnection,
    seal: &SealKey,
    tenant: &Tenant,
    shipped_key: &str,
) -> Result<Option<Space>> {
    select_where(conn, seal, &SPACES_SEALED, tenant, "key", text(shipped_key)).await?.first().map(space).transpose()
}

/// The tenant's spaces, oldest first (a workspace holds a handful).
pub async fn spaces(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Vec<Space>> {
    let mut all: Vec<Space> =
        select_page(conn, key, &SPACES_SEALED, tenant, None, 500).await?.iter().map(space).collect::<Result<_>>()?;
    all.reverse();
    Ok(all)
}

pub async fn get_version(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Version> {
    version(&select_one(conn, key, &VERSIONS_SEALED, tenant, id).await?)
}

/// A space's versions, oldest first.
pub async fn versions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    space_id: &str,
) -> Result<Vec<Version>> {
    history(conn, key, &VERSIONS_SEALED, tenant, ("space_id", space_id), version, |v: &Version| v.body.version).await
}

/// A space's decisions, oldest first; the last is its standing.
pub async fn decisions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    space_id: &str,
) -> Result<Vec<Decision>> {
    history(conn, key, &DECISIONS_SEALED, tenant, ("space_id", space_id), decision, |d: &Decision| d.body.seq).await
}

/// Creates a run in `state` (queued runs are due at once).
pub async fn insert_run(tx: &mut WriteTx, tenant: &Tenant, r: &Record<RunBody>, state: AgentRunState) -> Result<()> {
    let own = [
        ("space_id", text(&r.body.space_id)),
        ("version_id", text(&r.body.version_id)),
        ("execution_id", text(&r.body.execution_id)),
        ("state", text(state.as_str())),
    ];
    insert_record(tx, &RUNS_SEALED, tenant, r, &own).await?;
    if state == AgentRunState::Queued {
        sqlx::query("UPDATE agent_runs SET due_at = $1 WHERE id = $2")
            .bind(r.created_at)
            .bind(&r.id)
            .execute(tx.conn())
            .await?;
    }
    Ok(())
}

pub async fn get_run(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Run> {
    run(&select_one(conn, key, &RUNS_SEALED, tenant, id).await?)
}

/// The run whose execution is `execution_id`.
pub async fn run_of_execution(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    execution_id: &str,
) -> Result<Run> {
    select_where(conn, key, &RUNS_SEALED, tenant, "execution_id", text(execution_id))
        .await?
        .first()
        .map(run)
        .transpose()?
        .ok_or(StoreError::NotFound)
}

/// How many of the workspace's runs are queued or running (its use of the runtime's capacity).
pub async fn in_flight(conn: &mut AnyConnection, tenant: &Tenant) -> Result<i64> {
    let (n,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM agent_runs WHERE workspace_id = $1 AND environment = $2 \
         AND state IN ('queued', 'running')",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_one(&mut *conn)
    .await?;
    Ok(n)
}

/// Moves a run from `from` to `to`, with its start, or its answer, output hash and end, and re-seals it;
/// `false` if it was no longer in `from`.
pub async fn move_run(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: AgentRunState,
    to: AgentRunState,
    started_at: Option<i64>,
    ending: Option<(&str, &str, i64)>,
) -> Result<bool> {
    let mut set = vec![("state", text(to.as_str()))];
    if let Some(at) = started_at {
        set.push(("started_at", Stored::Integer(at)));
    }
    if let Some((answer, output_hash, at)) = ending {
        set.push(("answer", text(answer)));
        set.push(("output_hash", text(output_hash)));
        set.push(("ended_at", Stored::Integer(at)));
    }
    if !update_guarded(tx, &RUNS_SEALED, tenant, id, &set, ("state", from.as_str())).await? {
        return Ok(false);
    }
    if to.is_ended() {
        sqlx::query("UPDATE agent_runs SET due_at = NULL, claimed_by = NULL, claimed_at = NULL WHERE id = $1")
            .bind(id)
            .execute(tx.conn())
            .await?;
    }
    Ok(true)
}

pub use fiscus_store::run_claims::Claimed;

pub use fiscus_store::agent_tables::AGENT_RUNS;

/// Claims up to `limit` of them not held by a live claim (`run_claims::claim`).
pub async fn claim(
    tx: &mut WriteTx,
    worker: &str,
    now: i64,
    stale_after: i64,
    limit: i64,
    per_workspace: i64,
) -> Result<Vec<Claimed>> {
    fiscus_store::run_claims::claim(tx, &AGENT_RUNS, worker, now, stale_after, limit, per_workspace).await
}

/// Records a call; a sequence number recorded already is `Conflict`, which is how no call lands twice.
pub async fn insert_call(tx: &mut WriteTx, tenant: &Tenant, c: &Call) -> Result<()> {
    let own = [("run_id", text(&c.body.run_id)), ("seq", Stored::Integer(c.body.seq))];
    insert_record(tx, &CALLS_SEALED, tenant, c, &own).await
}

/// A run's calls, in order.
pub async fn calls_of(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, run_id: &str) -> Result<Vec<Call>> {
    history(conn, key, &CALLS_SEALED, tenant, ("run_id", run_id), call, |c: &Call| c.body.seq).await
}

#[cfg(test)]
mod tests {
    const RECORD: [&str; 7] = ["id", "workspace_id", "environment", "body", "content_hash", "created_by", "created_at"];

    #[test]
    fn every_record_table_seals_the_record_columns() {
        for t in [
            super::SPACES_SEALED,
            super::VERSIONS_SEALED,
            super::DECISIONS_SEALED,
            super::RUNS_SEALED,
            super::CALLS_SEALED,
        ] {
            for c in RECORD {
                assert!(t.columns.contains(&c), "{} {c}", t.table);
            }
        }
    }
}

//! Financial Actions: envelopes, check versions, decisions and history, decoded into domain types where they
//! are read. A stored value the domain does not know (a state, tier, mode, role, event name…) is
//! [`StoreError::Corrupt`], which refuses whatever was about to be decided: it is never reinterpreted.
//!
//! State changes are conditional single statements (`… WHERE control_state = $from`), so two racing requests
//! can never both move an action out of the same state.
//!
//! It is long because an action's row, its check versions, decisions and history are one aggregate with one set
//! of conditional transitions.

use crate::rules::approval::Decision;
use crate::rules::checks::CheckStatus;
use crate::rules::envelope::{Envelope, ExecutionMode, Origin, RiskTier};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::EventType;
use fiscus_domain::money::Currency;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::dialect::{backend_of, for_update};
use fiscus_store::{Result, StoreError, WriteTx};
use serde_json::Value;
use sqlx::{AnyConnection, FromRow};

/// A Financial Action as the domain knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub id: String,
    pub environment: Environment,
    pub envelope: Envelope,
    /// What every approval names; [`Action::envelope`] must still hash to it (checked before decisions).
    pub envelope_hash: String,
    pub state: ControlState,
    pub origin: Origin,
    pub proposed_by: Actor,
    pub created_at: i64,
    pub updated_at: i64,
}

fiscus_store::row! {
    struct ActionRow {
        id: String,
        environment: String,
        kind: String,
        amount_minor: i64,
        currency: String,
        counterparty: String,
        connector: String,
        execution_mode: String,
        delegation_id: Option<String>,
        risk_tier: String,
        reference: String,
        required_checks: String,
        metadata: String,
        envelope_hash: String,
        control_state: String,
        origin: String,
        proposed_by_kind: String,
        proposed_by_id: String,
        created_at: i64,
        updated_at: i64,
    }
}

/// The tenant's open actions (draft, pending approval, approved) whose latest version of check `check_key`
/// cites `source_hash`: what a change of that source must reach.
pub async fn open_citing(tx: &mut WriteTx, tenant: &Tenant, check_key: &str, source_hash: &str) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT c.action_id FROM action_checks c JOIN actions a ON a.id = c.action_id \
         WHERE c.workspace_id = $1 AND a.environment = $2 AND c.check_key = $3 AND c.source_hash = $4 \
           AND a.control_state IN ('draft', 'pending_approval', 'approved') \
           AND c.version = (SELECT MAX(l.version) FROM action_checks l WHERE l.action_id = c.action_id AND l.check_key = c.check_key) \
         ORDER BY c.action_id",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(check_key)
    .bind(source_hash)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

impl TryFrom<ActionRow> for Action {
    type Error = StoreError;

    fn try_from(r: ActionRow) -> Result<Action> {
        let bad = |column: &str, value: &str| corrupt("actions", &r.id, column, value);
        let envelope = Envelope {
            kind: ActionKind::parse(&r.kind).ok_or_else(|| bad("kind", &r.kind))?,
            amount_minor: r.amount_minor,
            currency: Currency::parse(&r.currency).ok_or_else(|| bad("currency", &r.currency))?,
            counterparty: r.counterparty,
            connector: r.connector,
            execution_mode: ExecutionMode::parse(&r.execution_mode)
                .ok_or_else(|| bad("execution_mode", &r.execution_mode))?,
            delegation_id: r.delegation_id,
            risk_tier: RiskTier::parse(&r.risk_tier).ok_or_else(|| bad("risk_tier", &r.risk_tier))?,
            reference: r.reference,
            required_checks: serde_json::from_str(&r.required_checks)
                .map_err(|_| bad("required_checks", &r.required_checks))?,
            metadata: serde_json::from_str(&r.metadata).map_err(|_| bad("metadata", &r.metadata))?,
        };
        Ok(Action {
            environment: Environment::parse(&r.environment).ok_or_else(|| bad("environment", &r.environment))?,
            envelope,
            envelope_hash: r.envelope_hash,
            state: ControlState::parse(&r.control_state).ok_or_else(|| bad("control_state", &r.control_state))?,
            origin: Origin::parse(&r.origin).ok_or_else(|| bad("origin", &r.origin))?,
            proposed_by: Actor::parse(&r.proposed_by_kind, &r.proposed_by_id)
                .ok_or_else(|| bad("proposed_by_kind", &r.proposed_by_kind))?,
            created_at: r.created_at,
            updated_at: r.updated_at,
            id: r.id,
        })
    }
}

const COLUMNS: &str = "id, environment, kind, amount_minor, currency, counterparty, connector, execution_mode, delegation_id, \
                       risk_tier, reference, required_checks, metadata, envelope_hash, control_state, origin, \
                       proposed_by_kind, proposed_by_id, created_at, updated_at";

pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, a: &Action) -> Result<()> {
    let e = &a.envelope;
    let required_checks =
        serde_json::to_string(&e.required_checks).map_err(|err| StoreError::Corrupt(err.to_string()))?;
    sqlx::query(&format!(
        "INSERT INTO actions (workspace_id, {COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
    ))
    .bind(&tenant.workspace_id)
    .bind(&a.id)
    .bind(tenant.environment.as_str())
    .bind(e.kind.as_str())
    .bind(e.amount_minor)
    .bind(e.currency.code())
    .bind(&e.counterparty)
    .bind(&e.connector)
    .bind(e.execution_mode.as_str())
    .bind(&e.delegation_id)
    .bind(e.risk_tier.as_str())
    .bind(&e.reference)
    .bind(required_checks)
    .bind(e.metadata.to_string())
    .bind(&a.envelope_hash)
    .bind(a.state.as_str())
    .bind(a.origin.as_str())
    .bind(a.proposed_by.kind.as_str())
    .bind(&a.proposed_by.id)
    .bind(a.created_at)
    .bind(a.updated_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::ACTIONS, &tenant.workspace_id, &a.id).await?;
    Ok(())
}

pub async fn get(conn: &mut AnyConnection, tenant: &Tenant, id: &str) -> Result<Action> {
    sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND id = $3"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()
}

/// The action, locked for the rest of the transaction (PostgreSQL; SQLite's writer is already exclusive).
pub async fn get_for_decision(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<Action> {
    let lock = for_update(backend_of(tx.conn()));
    sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND id = $3{lock}"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()
}

/// The tenant's actions among `ids` (any order; ids of none are left out), each row's seal checked. For
/// work over many actions in one transaction (a statement's entries), read without a lock: every change is
/// then guarded on the state it was decided on ([`transition_many`]).
pub async fn get_many(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<Vec<Action>> {
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 3)).collect();
        let sql = format!(
            "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND id IN ({})",
            placeholders.join(", ")
        );
        let mut q = sqlx::query_as::<_, ActionRow>(&sql).bind(&tenant.workspace_id).bind(tenant.environment.as_str());
        for id in chunk {
            q = q.bind(*id);
        }
        for row in q.fetch_all(&mut *conn).await? {
            found.push(Action::try_from(row)?);
        }
        fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::ACTIONS, &tenant.workspace_id, "id", chunk)
            .await?;
    }
    Ok(found)
}

/// [`transition`] of many actions at once: every one must still be `from`, or nothing moves (`Conflict`).
pub async fn transition_many(
    tx: &mut WriteTx,
    tenant: &Tenant,
    ids: &[&str],
    from: ControlState,
    to: ControlState,
    now: i64,
) -> Result<()> {
    for chunk in ids.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 6)).collect();
        let sql = format!(
            "UPDATE actions SET control_state = $1, updated_at = $2 \
             WHERE workspace_id = $3 AND environment = $4 AND control_state = $5 AND id IN ({})",
            placeholders.join(", ")
        );
        let mut q = sqlx::query(&sql)
            .bind(to.as_str())
            .bind(now)
            .bind(&tenant.workspace_id)
            .bind(tenant.environment.as_str())
            .bind(from.as_str());
        for id in chunk {
            q = q.bind(*id);
        }
        let done = q.execute(tx.conn()).await?;
        if done.rows_affected() != chunk.len() as u64 {
            return Err(StoreError::Conflict(format!(
                "{} of {} actions are no longer {from:?}",
                chunk.len() as u64 - done.rows_affected(),
                chunk.len()
            )));
        }
    }
    Ok(())
}

/// A page of the tenant's actions, ascending by id, `limit + 1` rows (the extra one says there is more).
/// Each row's seal is checked (`Tampered` for a row edited outside Fiscus).
pub async fn list(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    state: Option<ControlState>,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<Action>> {
    let actions = sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 \
         AND ($3 IS NULL OR control_state = $3) AND ($4 IS NULL OR id > $4) ORDER BY id LIMIT $5"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(state.map(ControlState::as_str))
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Action::try_from)
    .collect::<Result<Vec<_>>>()?;
    let ids: Vec<&str> = actions.iter().map(|a| a.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::ACTIONS, &tenant.workspace_id, "id", &ids).await?;
    Ok(actions)
}

/// What the console's batch approval filters the queue by: every condition given must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueFilter {
    pub kind: Option<ActionKind>,
    pub connector: Option<String>,
    pub currency: Option<Currency>,
    /// Amounts in minor units of `currency`, both ends included.
    pub min_amount_minor: Option<i64>,
    pub max_amount_minor: Option<i64>,
    pub counterparty: Option<String>,
    /// The proposer's id (`app_…`, `opr_…`).
    pub proposer_id: Option<String>,
    /// References starting with this (a payment run's common prefix), compared exactly on both backends.
    pub reference_prefix: Option<String>,
    /// Proposed at or before this time (microseconds): "older than".
    pub proposed_before: Option<i64>,
}

/// The tenant's actions awaiting approval that match `filter`, oldest first, at most `limit + 1` (so the
/// caller can say there are more), their seals checked. The filter is the database's, not a page's.
pub async fn pending_matching(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    filter: &QueueFilter,
    limit: u32,
) -> Result<Vec<Action>> {
    use fiscus_domain::integrity::Stored;
    let mut binds = vec![
        Stored::Text(tenant.workspace_id.clone()),
        Stored::Text(tenant.environment.as_str().into()),
        Stored::Text(ControlState::PendingApproval.as_str().into()),
    ];
    let mut sql =
        format!("SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 AND control_state = $3");
    let mut add = |clause: &str, value: Stored| {
        binds.push(value);
        sql.push_str(&clause.replace("$n", &format!("${}", binds.len())));
    };
    if let Some(k) = filter.kind {
        add(" AND kind = $n", Stored::Text(k.as_str().into()));
    }
    if let Some(c) = &filter.connector {
        add(" AND connector = $n", Stored::Text(c.clone()));
    }
    if let Some(c) = filter.currency {
        add(" AND currency = $n", Stored::Text(c.code().into()));
    }
    if let Some(m) = filter.min_amount_minor {
        add(" AND amount_minor >= $n", Stored::Integer(m));
    }
    if let Some(m) = filter.max_amount_minor {
        add(" AND amount_minor <= $n", Stored::Integer(m));
    }
    if let Some(c) = &filter.counterparty {
        add(" AND counterparty = $n", Stored::Text(c.clone()));
    }
    if let Some(p) = &filter.proposer_id {
        add(" AND proposed_by_id = $n", Stored::Text(p.clone()));
    }
    if let Some(p) = &filter.reference_prefix {
        // `substr` with a bound length: LIKE differs between the backends (SQLite's ignores ASCII case).
        let chars = i64::try_from(p.chars().count()).unwrap_or(i64::MAX);
        // PostgreSQL has no substr(text, int, bigint): the bound length is cast.
        add(" AND substr(reference, 1, CAST($n AS INTEGER))", Stored::Integer(chars));
        add(" = $n", Stored::Text(p.clone()));
    }
    if let Some(t) = filter.proposed_before {
        add(" AND created_at <= $n", Stored::Integer(t));
    }
    add(" ORDER BY id LIMIT $n", Stored::Integer(i64::from(limit) + 1));
    let actions = fiscus_store::dialect::bind_all!(sqlx::query_as::<_, ActionRow>(&sql), &binds)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(Action::try_from)
        .collect::<Result<Vec<_>>>()?;
    let ids: Vec<&str> = actions.iter().map(|a| a.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::ACTIONS, &tenant.workspace_id, "id", &ids).await?;
    Ok(actions)
}

/// Like [`list`] over every state, but decoding each row on its own: a row the code does not recognise is
/// reported by id instead of failing the page (for verification, which must name every bad row).
pub async fn list_each(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<(String, Result<Action>)>> {
    Ok(sqlx::query_as::<_, ActionRow>(&format!(
        "SELECT {COLUMNS} FROM actions WHERE workspace_id = $1 AND environment = $2 \
         AND ($3 IS NULL OR id > $3) ORDER BY id LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|row| (row.id.clone(), Action::try_from(row)))
    .collect())
}

/// Moves an action from `from` to `to`; `Conflict` when it is no longer in `from`.
pub async fn transition(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: ControlState,
    to: ControlState,
    now: i64,
) -> Result<()> {
    let done = sqlx::query(
        "UPDATE actions SET control_state = $1, updated_at = $2 \
         WHERE workspace_id = $3 AND environment = $4 AND id = $5 AND control_state = $6",
    )
    .bind(to.as_str())
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .bind(from.as_str())
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict(format!("action {id} is no longer {from:?}")));
    }
    Ok(())
}

/// Scopes a query on an action's child rows (history, checks, decisions, reservations), which carry the
/// workspace but not the environment, to the tenant's environment through the action: `$1` is the
/// workspace, `$2` the action id and `$3` the environment.
pub const OF_TENANT: &str =
    "action_id IN (SELECT a.id FROM actions a WHERE a.id = $2 AND a.workspace_id = $1 AND a.environment = $3)";

// ----------------------------------------------------------------------------------------------- history

/// One entry of an action's history.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryEntry {
    pub from_state: Option<ControlState>,
    pub to_state: ControlState,
    pub event: EventType,
    pub actor: Actor,
    pub detail: Value,
    pub created_at: i64,
}

pub async fn record_history(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, h: &HistoryEntry) -> Result<()> {
    sqlx::query(
        "INSERT INTO action_history (id, workspace_id, action_id, from_state, to_state, event, actor_kind, actor_id, detail, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(fiscus_domain::ids::new_id("ahe"))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(h.from_state.map(ControlState::as_str))
    .bind(h.to_state.as_str())
    .bind(h.event.as_str())
    .bind(h.actor.kind.as_str())
    .bind(&h.actor.id)
    .bind(h.detail.to_string())
    .bind(h.created_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// [`record_history`] of many entries, in multi-row statements.
pub async fn record_history_many(tx: &mut WriteTx, tenant: &Tenant, entries: &[(&str, HistoryEntry)]) -> Result<()> {
    const WIDTH: usize = 10;
    let backend = backend_of(tx.conn());
    for chunk in entries.chunks(fiscus_store::dialect::rows_per_statement(WIDTH).min(500)) {
        let sql = fiscus_store::dialect::multi_row_insert(
            backend,
            "INSERT INTO action_history (id, workspace_id, action_id, from_state, to_state, event, actor_kind, actor_id, detail, created_at) VALUES ",
            chunk.len(),
            WIDTH,
        );
        let mut q = sqlx::query(&sql);
        for (action_id, h) in chunk {
            q = q
                .bind(fiscus_domain::ids::new_id("ahe"))
                .bind(&tenant.workspace_id)
                .bind(*action_id)
                .bind(h.from_state.map(ControlState::as_str))
                .bind(h.to_state.as_str())
                .bind(h.event.as_str())
                .bind(h.actor.kind.as_str())
                .bind(&h.actor.id)
                .bind(h.detail.to_string())
                .bind(h.created_at);
        }
        q.execute(tx.conn()).await?;
    }
    Ok(())
}

fiscus_store::row! {
    struct HistoryRow {
        id: String,
        from_state: Option<String>,
        to_state: String,
        event: String,
        actor_kind: String,
        actor_id: String,
        detail: String,
        created_at: i64,
    }
}

impl TryFrom<HistoryRow> for HistoryEntry {
    type Error = StoreError;

    fn try_from(r: HistoryRow) -> Result<HistoryEntry> {
        let bad = |column: &str, value: &str| corrupt("action_history", &r.id, column, value);
        Ok(HistoryEntry {
            from_state: match &r.from_state {
                None => None,
                Some(s) => Some(ControlState::parse(s).ok_or_else(|| bad("from_state", s))?),
            },
            to_state: ControlState::parse(&r.to_state).ok_or_else(|| bad("to_state", &r.to_state))?,
            event: EventType::parse(&r.event).ok_or_else(|| bad("event", &r.event))?,
            actor: Actor::parse(&r.actor_kind, &r.actor_id).ok_or_else(|| bad("actor_kind", &r.actor_kind))?,
            detail: serde_json::from_str(&r.detail).map_err(|_| bad("detail", &r.detail))?,
            created_at: r.created_at,
        })
    }
}

pub async fn history(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<HistoryEntry>> {
    sqlx::query_as::<_, HistoryRow>(&format!(
        "SELECT id, from_state, to_state, event, actor_kind, actor_id, detail, created_at FROM action_history \
         WHERE workspace_id = $1 AND action_id = $2 AND {OF_TENANT} ORDER BY id",
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(HistoryEntry::try_from)
    .collect()
}

// ------------------------------------------------------------------------------------------------ checks

/// One version of a pre-trade check.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub id: String,
    pub check_key: String,
    pub version: i64,
    pub status: CheckStatus,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub metrics: Value,
    pub metadata: Value,
    pub check_hash: String,
    /// Who recorded this version, by id (`app_…`, a worker's node, `local`), as the check's sealed payload
    /// (`ValidCheck::payload`) names it. That payload is public and recomputed outside Fiscus, so its form
    /// stays the bare id; the version's audit event names the full actor.
    pub recorded_by: String,
    pub created_at: i64,
}

fiscus_store::row! {
    struct CheckRow {
        id: String,
        check_key: String,
        version: i64,
        status: String,
        source_type: String,
        source_reference: String,
        source_hash: String,
        metrics: String,
        metadata: String,
        check_hash: String,
        recorded_by: String,
        created_at: i64,
    }
}

impl TryFrom<CheckRow> for Check {
    type Error = StoreError;

    fn try_from(r: CheckRow) -> Result<Check> {
        let bad = |column: &str, value: &str| corrupt("action_checks", &r.id, column, value);
        Ok(Check {
            status: CheckStatus::parse(&r.status).ok_or_else(|| bad("status", &r.status))?,
            metrics: serde_json::from_str(&r.metrics).map_err(|_| bad("metrics", &r.metrics))?,
            metadata: serde_json::from_str(&r.metadata).map_err(|_| bad("metadata", &r.metadata))?,
            id: r.id,
            check_key: r.check_key,
            version: r.version,
            source_type: r.source_type,
            source_reference: r.source_reference,
            source_hash: r.source_hash,
            check_hash: r.check_hash,
            recorded_by: r.recorded_by,
            created_at: r.created_at,
        })
    }
}

const CHECK_COLUMNS: &str = "id, check_key, version, status, source_type, source_reference, source_hash, metrics, metadata, \
                             check_hash, recorded_by, created_at";

/// The next version number of a check of an action (1 for the first).
pub async fn next_check_version(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, check_key: &str) -> Result<i64> {
    let (max,): (i64,) = sqlx::query_as(&format!(
        "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM action_checks \
         WHERE workspace_id = $1 AND action_id = $2 AND check_key = $4 AND {OF_TENANT}",
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .bind(check_key)
    .fetch_one(tx.conn())
    .await?;
    Ok(max + 1)
}

pub async fn insert_check(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, c: &Check) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO action_checks (workspace_id, action_id, {CHECK_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(&c.id)
    .bind(&c.check_key)
    .bind(c.version)
    .bind(c.status.as_str())
    .bind(&c.source_type)
    .bind(&c.source_reference)
    .bind(&c.source_hash)
    .bind(c.metrics.to_string())
    .bind(c.metadata.to_string())
    .bind(&c.check_hash)
    .bind(&c.recorded_by)
    .bind(c.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::ACTION_CHECKS, &tenant.workspace_id, &c.id).await?;
    Ok(())
}

/// Every version of every check of an action, ordered by key, then version.
pub async fn checks(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<Check>> {
    sqlx::query_as::<_, CheckRow>(&format!(
        "SELECT {CHECK_COLUMNS} FROM action_checks WHERE workspace_id = $1 AND action_id = $2 AND {OF_TENANT} \
         ORDER BY check_key, version"
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Check::try_from)
    .collect()
}

/// A child row of an action with the action it belongs to (for reads over many actions): `action_id`, and
/// the child read from the same row's other columns.
struct OfAction<Child> {
    action_id: String,
    row: Child,
}

impl<'r, Child: FromRow<'r, sqlx::any::AnyRow>> FromRow<'r, sqlx::any::AnyRow> for OfAction<Child> {
    fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        Ok(OfAction { action_id: row.try_get("action_id")?, row: Child::from_row(row)? })
    }
}

/// `SELECT action_id, {columns} FROM {table}` for the workspace's rows of `ids`, each chunk one read.
async fn children_of<R, T>(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    ids: &[&str],
    (table, columns, order): (&str, &str, &str),
) -> Result<std::collections::HashMap<String, Vec<T>>>
where
    R: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    T: TryFrom<R, Error = StoreError>,
{
    let mut by_action: std::collections::HashMap<String, Vec<T>> = std::collections::HashMap::new();
    for chunk in ids.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "SELECT action_id, {columns} FROM {table} WHERE workspace_id = $1 AND action_id IN ({}) ORDER BY action_id, {order}",
            placeholders.join(", ")
        );
        let mut q = sqlx::query_as::<_, OfAction<R>>(&sql).bind(&tenant.workspace_id);
        for id in chunk {
            q = q.bind(*id);
        }
        for r in q.fetch_all(&mut *conn).await? {
            by_action.entry(r.action_id).or_default().push(T::try_from(r.row)?);
        }
    }
    Ok(by_action)
}

/// [`checks`] of many actions of the tenant (ids as [`get_many`] returned them), by action, in a read per
/// 500 actions.
pub async fn checks_of_many(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Vec<Check>>> {
    children_of::<CheckRow, Check>(conn, tenant, ids, ("action_checks", CHECK_COLUMNS, "check_key, version")).await
}

/// [`decisions`] of many actions of the tenant (ids as [`get_many`] returned them), by action.
pub async fn decisions_of_many(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Vec<ActionDecision>>> {
    const COLUMNS: &str =
        "id, operator_id, role, decision, envelope_hash, check_set_hash, evidence_hash, created_at, invalidated_at";
    children_of::<DecisionRow, ActionDecision>(conn, tenant, ids, ("action_decisions", COLUMNS, "created_at, id")).await
}

// --------------------------------------------------------------------------------------------- decisions

/// An operator's sealed decision on an action.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionDecision {
    pub id: String,
    pub operator_id: String,
    pub role: Role,
    pub decision: Decision,
    pub envelope_hash: String,
    pub check_set_hash: String,
    pub evidence_hash: String,
    pub created_at: i64,
    /// Set when a new check version made an approval stale.
    pub invalidated_at: Option<i64>,
}

fiscus_store::row! {
    struct DecisionRow {
        id: String,
        operator_id: String,
        role: String,
        decision: String,
        envelope_hash: String,
        check_set_hash: String,
        evidence_hash: String,
        created_at: i64,
        invalidated_at: Option<i64>,
    }
}

impl TryFrom<DecisionRow> for ActionDecision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<ActionDecision> {
        let bad = |column: &str, value: &str| corrupt("action_decisions", &r.id, column, value);
        Ok(ActionDecision {
            role: Role::parse(&r.role).ok_or_else(|| bad("role", &r.role))?,
            decision: Decision::parse(&r.decision).ok_or_else(|| bad("decision", &r.decision))?,
            id: r.id,
            operator_id: r.operator_id,
            envelope_hash: r.envelope_hash,
            check_set_hash: r.check_set_hash,
            evidence_hash: r.evidence_hash,
            created_at: r.created_at,
            invalidated_at: r.invalidated_at,
        })
    }
}

pub async fn insert_decision(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, d: &ActionDecision) -> Result<()> {
    sqlx::query(
        "INSERT INTO action_decisions (id, workspace_id, action_id, operator_id, role, decision, envelope_hash, \
                                       check_set_hash, evidence_hash, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&d.id)
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(&d.operator_id)
    .bind(d.role.as_str())
    .bind(d.decision.as_str())
    .bind(&d.envelope_hash)
    .bind(&d.check_set_hash)
    .bind(&d.evidence_hash)
    .bind(d.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::ACTION_DECISIONS, &tenant.workspace_id, &d.id).await?;
    Ok(())
}

pub async fn decisions(conn: &mut AnyConnection, tenant: &Tenant, action_id: &str) -> Result<Vec<ActionDecision>> {
    sqlx::query_as::<_, DecisionRow>(&format!(
        "SELECT id, operator_id, role, decision, envelope_hash, check_set_hash, evidence_hash, created_at, invalidated_at \
         FROM action_decisions WHERE workspace_id = $1 AND action_id = $2 AND {OF_TENANT} ORDER BY created_at, id",
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(ActionDecision::try_from)
    .collect()
}

/// Marks every standing approval of an action stale (a new check version changed the evidence).
pub async fn invalidate_approvals(tx: &mut WriteTx, tenant: &Tenant, action_id: &str, now: i64) -> Result<u64> {
    let done = sqlx::query(&format!(
        "UPDATE action_decisions SET invalidated_at = $4 \
         WHERE workspace_id = $1 AND action_id = $2 AND {OF_TENANT} AND decision = 'approve' AND invalidated_at IS NULL",
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected())
}

//! Thematic universes, the model portfolios drawn from them, and the governed AI operations that use an
//! approved model portfolio (see the migration `…_themes.sql`). Rows decode into domain types here; an
//! unknown stored state, weighting or status is [`StoreError::Corrupt`], never a default.
//!
//! A universe belongs to the workspace (research hands it to both environments, as data); a model
//! portfolio and an operation belong to the environment that created them. Universes and model portfolios
//! are sealed: a universe's members are fixed by its handoff (the members' hash is sealed with it), and a
//! model portfolio's content by its hash; its decision is the only change, and it re-seals the row.
//!
//! It is long because universes, model portfolios and operations are three tables of one lineage (an operation
//! fixes a model portfolio's hash, a model portfolio a universe's), read together.

use crate::rules::model_portfolio::{ModelHolding, ModelState, Weighting};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::seals;
use fiscus_store::stored_actor;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::investment_tables::MODEL_PORTFOLIOS_SEALED;
pub use fiscus_store::investment_tables::OPERATIONS_SEALED;
pub use fiscus_store::investment_tables::UNIVERSES_SEALED;

/// Whether research has handed a universe's members off yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniverseStatus {
    /// Announced; its members are still to come. Nothing can be drawn from it yet.
    Pending,
    /// Its members are fixed and sealed.
    HandedOff,
}

impl UniverseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            UniverseStatus::Pending => "pending",
            UniverseStatus::HandedOff => "handed_off",
        }
    }

    pub fn parse(s: &str) -> Option<UniverseStatus> {
        [UniverseStatus::Pending, UniverseStatus::HandedOff].into_iter().find(|u| u.as_str() == s)
    }
}

/// A universe as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Universe {
    pub id: i64,
    pub uid: String,
    pub name: String,
    pub theme: String,
    pub source: String,
    pub status: UniverseStatus,
    pub members_hash: Option<String>,
    pub created_by: Actor,
    pub created_at: i64,
    pub handed_off_at: Option<i64>,
}

fiscus_store::row! {
    struct UniverseRow {
        id: i64,
        uid: String,
        name: String,
        theme: String,
        source: String,
        status: String,
        members_hash: Option<String>,
        created_by: String,
        created_at: i64,
        handed_off_at: Option<i64>,
    }
}

impl TryFrom<UniverseRow> for Universe {
    type Error = StoreError;
    fn try_from(r: UniverseRow) -> Result<Universe> {
        let created_by = stored_actor("investment_universes", &r.uid, "created_by", &r.created_by)?;
        Ok(Universe {
            status: UniverseStatus::parse(&r.status)
                .ok_or_else(|| StoreError::Corrupt(format!("investment_universes.status: unknown `{}`", r.status)))?,
            id: r.id,
            uid: r.uid,
            name: r.name,
            theme: r.theme,
            source: r.source,
            members_hash: r.members_hash,
            created_by,
            created_at: r.created_at,
            handed_off_at: r.handed_off_at,
        })
    }
}

fiscus_store::row! {
    /// A member as research handed it off.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Member {
        pub symbol: String,
        pub instrument_id: String,
        /// Decimal text, 0 to 1.
        pub relevance: String,
        pub rationale: String,
    }
}

const UNIVERSE_COLUMNS: &str =
    "id, uid, name, theme, source, status, members_hash, created_by, created_at, handed_off_at";

fn universe_values(workspace_id: &str, u: &Universe) -> Vec<Stored> {
    let text = |s: &str| Stored::Text(s.to_string());
    vec![
        text(&u.uid),
        text(workspace_id),
        Stored::Integer(u.id),
        text(&u.name),
        text(&u.theme),
        text(&u.source),
        text(u.status.as_str()),
        u.members_hash.as_deref().map_or(Stored::Null, text),
        text(&u.created_by.label()),
        Stored::Integer(u.created_at),
        u.handed_off_at.map_or(Stored::Null, Stored::Integer),
    ]
}

/// Inserts a universe (its integer id taken from the counter here and returned), with its members when it
/// is handed off at once.
pub async fn insert_universe(tx: &mut WriteTx, workspace_id: &str, u: &mut Universe, members: &[Member]) -> Result<()> {
    u.id = fiscus_data_core::tables::take_number(tx, "universes").await?;
    let sealed_values = universe_values(workspace_id, u);
    let mac = seals::seal_of(tx.seal_key(), &UNIVERSES_SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO investment_universes (uid, workspace_id, id, name, theme, source, status, members_hash, \
         created_by, created_at, handed_off_at, seal_mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&u.uid)
    .bind(workspace_id)
    .bind(u.id)
    .bind(&u.name)
    .bind(&u.theme)
    .bind(&u.source)
    .bind(u.status.as_str())
    .bind(u.members_hash.as_deref())
    .bind(u.created_by.label())
    .bind(u.created_at)
    .bind(u.handed_off_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &UNIVERSES_SEALED, &sealed_values).await?;
    insert_members(tx, workspace_id, u.id, members).await
}

async fn insert_members(tx: &mut WriteTx, workspace_id: &str, universe_id: i64, members: &[Member]) -> Result<()> {
    for m in members {
        sqlx::query(
            "INSERT INTO universe_members (workspace_id, universe_id, symbol, instrument_id, relevance, rationale) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(workspace_id)
        .bind(universe_id)
        .bind(&m.symbol)
        .bind(&m.instrument_id)
        .bind(&m.relevance)
        .bind(&m.rationale)
        .execute(tx.conn())
        .await?;
    }
    Ok(())
}

/// Hands a pending universe's members off: writes them, fixes their hash and re-seals the row. `false` when
/// the universe was no longer pending (another handoff came first).
pub async fn hand_off(
    tx: &mut WriteTx,
    workspace_id: &str,
    u: &Universe,
    members: &[Member],
    members_hash: &str,
    at: i64,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE investment_universes SET status = 'handed_off', members_hash = $1, handed_off_at = $2 \
         WHERE workspace_id = $3 AND id = $4 AND status = 'pending'",
    )
    .bind(members_hash)
    .bind(at)
    .bind(workspace_id)
    .bind(u.id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    insert_members(tx, workspace_id, u.id, members).await?;
    seals::seal_by(tx, &UNIVERSES_SEALED, workspace_id, "uid", &u.uid).await?;
    Ok(true)
}

/// A universe of the workspace, its seal checked.
pub async fn get_universe(conn: &mut AnyConnection, key: &SealKey, workspace_id: &str, id: i64) -> Result<Universe> {
    let row: UniverseRow = sqlx::query_as(&format!(
        "SELECT {UNIVERSE_COLUMNS} FROM investment_universes WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?;
    seals::check(conn, key, &UNIVERSES_SEALED, workspace_id, "uid", &row.uid).await?;
    row.try_into()
}

/// The workspace's universes by id after `after`, `limit + 1` rows (seals checked).
pub async fn list_universes(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    after: i64,
    limit: u32,
) -> Result<Vec<Universe>> {
    let rows: Vec<UniverseRow> = sqlx::query_as(&format!(
        "SELECT {UNIVERSE_COLUMNS} FROM investment_universes WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3"
    ))
    .bind(workspace_id)
    .bind(after)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        seals::check(conn, key, &UNIVERSES_SEALED, workspace_id, "uid", &r.uid).await?;
        out.push(r.try_into()?);
    }
    Ok(out)
}

/// A universe's members by symbol.
pub async fn members(conn: &mut AnyConnection, workspace_id: &str, universe_id: i64) -> Result<Vec<Member>> {
    Ok(sqlx::query_as(
        "SELECT symbol, instrument_id, relevance, rationale FROM universe_members \
         WHERE workspace_id = $1 AND universe_id = $2 ORDER BY symbol",
    )
    .bind(workspace_id)
    .bind(universe_id)
    .fetch_all(conn)
    .await?)
}

/// A model portfolio as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPortfolio {
    pub id: String,
    pub universe_id: i64,
    pub name: String,
    pub weighting: Weighting,
    pub limit: i64,
    pub benchmark_symbol: Option<String>,
    pub holdings: Vec<ModelHolding>,
    /// The holdings as stored (canonical JSON), which the content hash covers.
    pub holdings_json: String,
    pub content_hash: String,
    pub state: ModelState,
    pub created_by: Actor,
    pub created_at: i64,
    pub decided_by: Option<Actor>,
    pub decided_at: Option<i64>,
    pub decision_note: Option<String>,
}

fiscus_store::row! {
    struct ModelRow {
        id: String,
        universe_id: i64,
        name: String,
        weighting: String,
        member_limit: i64,
        benchmark_symbol: Option<String>,
        holdings: String,
        content_hash: String,
        state: String,
        created_by: String,
        created_at: i64,
        decided_by: Option<String>,
        decided_at: Option<i64>,
        decision_note: Option<String>,
    }
}

impl TryFrom<ModelRow> for ModelPortfolio {
    type Error = StoreError;
    fn try_from(r: ModelRow) -> Result<ModelPortfolio> {
        let decided_by =
            r.decided_by.as_deref().map(|by| stored_actor("model_portfolios", &r.id, "decided_by", by)).transpose()?;
        let created_by = stored_actor("model_portfolios", &r.id, "created_by", &r.created_by)?;
        let corrupt =
            |column: &str, v: &str| StoreError::Corrupt(format!("model_portfolios {}: {column} = `{v}`", r.id));
        Ok(ModelPortfolio {
            weighting: Weighting::parse(&r.weighting).ok_or_else(|| corrupt("weighting", &r.weighting))?,
            state: ModelState::parse(&r.state).ok_or_else(|| corrupt("state", &r.state))?,
            holdings: serde_json::from_str(&r.holdings).map_err(|e| corrupt("holdings", &e.to_string()))?,
            holdings_json: r.holdings,
            id: r.id,
            universe_id: r.universe_id,
            name: r.name,
            limit: r.member_limit,
            benchmark_symbol: r.benchmark_symbol,
            content_hash: r.content_hash,
            created_by,
            created_at: r.created_at,
            decided_by,
            decided_at: r.decided_at,
            decision_note: r.decision_note,
        })
    }
}

const MODEL_COLUMNS: &str = "id, universe_id, name, weighting, member_limit, benchmark_symbol, holdings, content_hash, \
     state, created_by, created_at, decided_by, decided_at, decision_note";

/// Inserts a draft model portfolio, sealed.
pub async fn insert_model(tx: &mut WriteTx, tenant: &Tenant, m: &ModelPortfolio) -> Result<()> {
    sqlx::query(
        "INSERT INTO model_portfolios (id, workspace_id, environment, universe_id, name, weighting, member_limit, \
         benchmark_symbol, holdings, content_hash, state, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&m.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(m.universe_id)
    .bind(&m.name)
    .bind(m.weighting.as_str())
    .bind(m.limit)
    .bind(m.benchmark_symbol.as_deref())
    .bind(&m.holdings_json)
    .bind(&m.content_hash)
    .bind(m.state.as_str())
    .bind(m.created_by.label())
    .bind(m.created_at)
    .execute(tx.conn())
    .await?;
    seals::seal(tx, &MODEL_PORTFOLIOS_SEALED, &tenant.workspace_id, &m.id).await
}

/// A model portfolio of the tenant, its seal checked.
pub async fn get_model(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<ModelPortfolio> {
    seals::get_tenant_row::<ModelRow, _>(conn, key, &MODEL_PORTFOLIOS_SEALED, MODEL_COLUMNS, tenant, id).await
}

/// The tenant's model portfolios newest first, optionally in one state, before `before`, `limit + 1` rows.
pub async fn list_models(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    state: Option<ModelState>,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<ModelPortfolio>> {
    let filter = if state.is_some() { " AND state = $5" } else { "" };
    let sql = format!(
        "SELECT {MODEL_COLUMNS} FROM model_portfolios WHERE workspace_id = $1 AND environment = $2 AND ($3 IS NULL OR id < $3){filter} \
         ORDER BY id DESC LIMIT $4"
    );
    let mut q = sqlx::query_as::<_, ModelRow>(&sql)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(before)
        .bind(i64::from(limit) + 1);
    if let Some(s) = state {
        q = q.bind(s.as_str());
    }
    let rows = q.fetch_all(&mut *conn).await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        seals::check(conn, key, &MODEL_PORTFOLIOS_SEALED, &tenant.workspace_id, "id", &r.id).await?;
        out.push(r.try_into()?);
    }
    Ok(out)
}

/// Records a decision on a draft and re-seals the row; `false` when it was no longer awaiting one.
pub async fn decide_model(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    to: ModelState,
    decided_by: &Actor,
    at: i64,
    note: Option<&str>,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE model_portfolios SET state = $1, decided_by = $2, decided_at = $3, decision_note = $4 \
         WHERE workspace_id = $5 AND environment = $6 AND id = $7 AND state = 'approval_required'",
    )
    .bind(to.as_str())
    .bind(decided_by.label())
    .bind(at)
    .bind(note)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    seals::seal(tx, &MODEL_PORTFOLIOS_SEALED, &tenant.workspace_id, id).await?;
    Ok(true)
}

/// Where a governed AI operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationStatus {
    /// Open, under governed review: proposals may be drawn for people to decide on.
    GovernedReview,
    /// Closed: nothing more is proposed under it.
    Closed,
}

impl OperationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::GovernedReview => "governed_review",
            OperationStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<OperationStatus> {
        [OperationStatus::GovernedReview, OperationStatus::Closed].into_iter().find(|o| o.as_str() == s)
    }
}

/// A governed AI operation: an AI-assisted portfolio operation opened under governed review, naming the
/// portfolio it works on and the model portfolio (with the hash it had when the operation was opened).
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    pub id: String,
    pub portfolio_id: i64,
    pub model_portfolio_id: String,
    pub model_portfolio_hash: String,
    pub objective: String,
    pub agent: Option<String>,
    pub status: OperationStatus,
    pub created_by: Actor,
    pub created_at: i64,
}

fiscus_store::row! {
    struct OperationRow {
        id: String,
        portfolio_id: i64,
        model_portfolio_id: String,
        model_portfolio_hash: String,
        objective: String,
        agent: Option<String>,
        status: String,
        created_by: String,
        created_at: i64,
    }
}

impl TryFrom<OperationRow> for Operation {
    type Error = StoreError;
    fn try_from(r: OperationRow) -> Result<Operation> {
        let created_by = stored_actor("governed_ai_operations", &r.id, "created_by", &r.created_by)?;
        Ok(Operation {
            status: OperationStatus::parse(&r.status).ok_or_else(|| {
                StoreError::Corrupt(format!("governed_ai_operations {}: status = `{}`", r.id, r.status))
            })?,
            id: r.id,
            portfolio_id: r.portfolio_id,
            model_portfolio_id: r.model_portfolio_id,
            model_portfolio_hash: r.model_portfolio_hash,
            objective: r.objective,
            agent: r.agent,
            created_by,
            created_at: r.created_at,
        })
    }
}

const OPERATION_COLUMNS: &str = "id, portfolio_id, model_portfolio_id, model_portfolio_hash, objective, agent, status, \
     created_by, created_at";

/// Inserts an operation, sealed.
pub async fn insert_operation(tx: &mut WriteTx, tenant: &Tenant, o: &Operation) -> Result<()> {
    let text = |s: &str| Stored::Text(s.to_string());
    let sealed_values = vec![
        text(&o.id),
        text(&tenant.workspace_id),
        text(tenant.environment.as_str()),
        Stored::Integer(o.portfolio_id),
        text(&o.model_portfolio_id),
        text(&o.model_portfolio_hash),
        text(&o.objective),
        o.agent.as_deref().map_or(Stored::Null, text),
        text(o.status.as_str()),
        text(&o.created_by.label()),
        Stored::Integer(o.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &OPERATIONS_SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO governed_ai_operations (id, workspace_id, environment, portfolio_id, model_portfolio_id, \
         model_portfolio_hash, objective, agent, status, created_by, created_at, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&o.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(o.portfolio_id)
    .bind(&o.model_portfolio_id)
    .bind(&o.model_portfolio_hash)
    .bind(&o.objective)
    .bind(o.agent.as_deref())
    .bind(o.status.as_str())
    .bind(o.created_by.label())
    .bind(o.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &OPERATIONS_SEALED, &sealed_values).await?;
    Ok(())
}

/// An operation of the tenant, its seal checked.
pub async fn get_operation(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Operation> {
    seals::get_tenant_row::<OperationRow, _>(conn, key, &OPERATIONS_SEALED, OPERATION_COLUMNS, tenant, id).await
}

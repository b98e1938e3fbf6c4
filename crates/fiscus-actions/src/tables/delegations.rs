//! Machine identities, delegations, budget reservations and machine-authority nonces.

use crate::rules::delegation::{DelegationStatus, IdentityStatus, Terms};
use crate::rules::envelope::{ExecutionMode, RiskTier};
use crate::rules::settlement::ReservationState;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::dialect::{backend_of, for_update};
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

/// A machine identity: a name and an Ed25519 public key an application registered.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    pub id: String,
    pub environment: Environment,
    pub name: String,
    pub public_key: String,
    pub status: IdentityStatus,
    /// The application (`app_…`) that registered it: identities are registered over the API only.
    pub created_by: String,
    pub created_at: i64,
}

fiscus_store::row! {
    struct IdentityRow {
        id: String,
        environment: String,
        name: String,
        public_key: String,
        status: String,
        created_by: String,
        created_at: i64,
    }
}

impl TryFrom<IdentityRow> for Identity {
    type Error = StoreError;

    fn try_from(r: IdentityRow) -> Result<Identity> {
        let bad = |column: &str, value: &str| corrupt("machine_identities", &r.id, column, value);
        Ok(Identity {
            environment: Environment::parse(&r.environment).ok_or_else(|| bad("environment", &r.environment))?,
            status: IdentityStatus::parse(&r.status).ok_or_else(|| bad("status", &r.status))?,
            id: r.id,
            name: r.name,
            public_key: r.public_key,
            created_by: r.created_by,
            created_at: r.created_at,
        })
    }
}

pub async fn insert_identity(tx: &mut WriteTx, tenant: &Tenant, r: &Identity) -> Result<()> {
    sqlx::query(
        "INSERT INTO machine_identities (id, workspace_id, environment, name, public_key, status, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&r.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&r.name)
    .bind(&r.public_key)
    .bind(r.status.as_str())
    .bind(&r.created_by)
    .bind(r.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::MACHINE_IDENTITIES, &tenant.workspace_id, &r.id).await?;
    Ok(())
}

const IDENTITY_COLUMNS: &str = "id, environment, name, public_key, status, created_by, created_at";

/// One machine identity, its seal checked.
pub async fn get_identity(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<Identity> {
    let table = &fiscus_store::seals::MACHINE_IDENTITIES;
    fiscus_store::seals::get_tenant_row::<IdentityRow, _>(conn, key, table, IDENTITY_COLUMNS, tenant, id).await
}

pub async fn list_identities(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<Identity>> {
    let all = sqlx::query_as::<_, IdentityRow>(&format!(
        "SELECT {IDENTITY_COLUMNS} FROM machine_identities WHERE workspace_id = $1 AND environment = $2 \
         AND ($3 IS NULL OR id > $3) ORDER BY id LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Identity::try_from)
    .collect::<Result<Vec<_>>>()?;
    let ids: Vec<&str> = all.iter().map(|i| i.id.as_str()).collect();
    fiscus_store::seals::check_keys(
        conn,
        key,
        &fiscus_store::seals::MACHINE_IDENTITIES,
        &tenant.workspace_id,
        "id",
        &ids,
    )
    .await?;
    Ok(all)
}

/// A delegation: standing authority for one machine identity within sealed terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Delegation {
    pub id: String,
    pub environment: Environment,
    pub identity_id: String,
    pub terms: Terms,
    pub status: DelegationStatus,
    /// What an operator's activation covers (`Terms::hash`).
    pub terms_hash: String,
    /// The application (`app_…`) that asked for it, and the operator (`opr_…`) who decided: the two
    /// planes, each fixed by the operation, so bare ids.
    pub created_by: String,
    pub decided_by: Option<String>,
    pub decided_at: Option<i64>,
    pub created_at: i64,
}

fiscus_store::row! {
    struct DelegationRow {
        id: String,
        environment: String,
        identity_id: String,
        action_kind: String,
        counterparty: String,
        connector: String,
        currency: String,
        execution_mode: String,
        risk_tier: String,
        per_action_limit_minor: i64,
        daily_limit_minor: i64,
        monthly_limit_minor: i64,
        expires_at: i64,
        status: String,
        terms_hash: String,
        created_by: String,
        decided_by: Option<String>,
        decided_at: Option<i64>,
        created_at: i64,
    }
}

impl TryFrom<DelegationRow> for Delegation {
    type Error = StoreError;

    fn try_from(r: DelegationRow) -> Result<Delegation> {
        let bad = |column: &str, value: &str| corrupt("delegations", &r.id, column, value);
        // A delegation is standing authority for machine-delegated execution and nothing else.
        if ExecutionMode::parse(&r.execution_mode) != Some(ExecutionMode::MachineDelegated) {
            return Err(bad("execution_mode", &r.execution_mode));
        }
        let terms = Terms {
            action: ActionKind::parse(&r.action_kind).ok_or_else(|| bad("action_kind", &r.action_kind))?,
            counterparty: r.counterparty,
            connector: r.connector,
            currency: Currency::parse(&r.currency).ok_or_else(|| bad("currency", &r.currency))?,
            risk_tier: RiskTier::parse(&r.risk_tier).ok_or_else(|| bad("risk_tier", &r.risk_tier))?,
            per_action: r.per_action_limit_minor,
            daily: r.daily_limit_minor,
            monthly: r.monthly_limit_minor,
            expires_at: r.expires_at,
        };
        Ok(Delegation {
            environment: Environment::parse(&r.environment).ok_or_else(|| bad("environment", &r.environment))?,
            status: DelegationStatus::parse(&r.status).ok_or_else(|| bad("status", &r.status))?,
            terms,
            id: r.id,
            identity_id: r.identity_id,
            terms_hash: r.terms_hash,
            created_by: r.created_by,
            decided_by: r.decided_by,
            decided_at: r.decided_at,
            created_at: r.created_at,
        })
    }
}

const DELEGATION_COLUMNS: &str = "id, environment, identity_id, action_kind, counterparty, connector, currency, execution_mode, risk_tier, \
                                  per_action_limit_minor, daily_limit_minor, monthly_limit_minor, expires_at, status, terms_hash, \
                                  created_by, decided_by, decided_at, created_at";

pub async fn insert_delegation(tx: &mut WriteTx, tenant: &Tenant, d: &Delegation) -> Result<()> {
    let t = &d.terms;
    sqlx::query(&format!(
        "INSERT INTO delegations (workspace_id, {DELEGATION_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
    ))
    .bind(&tenant.workspace_id)
    .bind(&d.id)
    .bind(tenant.environment.as_str())
    .bind(&d.identity_id)
    .bind(t.action.as_str())
    .bind(&t.counterparty)
    .bind(&t.connector)
    .bind(t.currency.code())
    .bind(ExecutionMode::MachineDelegated.as_str())
    .bind(t.risk_tier.as_str())
    .bind(t.per_action)
    .bind(t.daily)
    .bind(t.monthly)
    .bind(t.expires_at)
    .bind(d.status.as_str())
    .bind(&d.terms_hash)
    .bind(&d.created_by)
    .bind(&d.decided_by)
    .bind(d.decided_at)
    .bind(d.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::DELEGATIONS, &tenant.workspace_id, &d.id).await?;
    Ok(())
}

/// One delegation, its seal checked.
pub async fn get_delegation(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<Delegation> {
    let table = &fiscus_store::seals::DELEGATIONS;
    fiscus_store::seals::get_tenant_row::<DelegationRow, _>(conn, key, table, DELEGATION_COLUMNS, tenant, id).await
}

/// The delegation, locked: budget reservations of one delegation are decided one at a time.
pub async fn lock_delegation(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<Delegation> {
    let lock = for_update(backend_of(tx.conn()));
    sqlx::query_as::<_, DelegationRow>(&format!(
        "SELECT {DELEGATION_COLUMNS} FROM delegations WHERE workspace_id = $1 AND environment = $2 AND id = $3{lock}"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()
}

/// The tenant's delegations, each one's seal checked.
pub async fn list_delegations(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
) -> Result<Vec<Delegation>> {
    let all = sqlx::query_as::<_, DelegationRow>(&format!(
        "SELECT {DELEGATION_COLUMNS} FROM delegations WHERE workspace_id = $1 AND environment = $2 ORDER BY id"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Delegation::try_from)
    .collect::<Result<Vec<_>>>()?;
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::DELEGATIONS, &tenant.workspace_id, "id", &ids)
        .await?;
    Ok(all)
}

/// An operator's decision on a delegation: moves it from `from` to `to`; `Conflict` if it is not in `from`.
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: DelegationStatus,
    to: DelegationStatus,
    operator: &str,
    now: i64,
) -> Result<()> {
    let done = sqlx::query(
        "UPDATE delegations SET status = $1, decided_by = $2, decided_at = $3 \
         WHERE workspace_id = $4 AND environment = $5 AND id = $6 AND status = $7",
    )
    .bind(to.as_str())
    .bind(operator)
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .bind(from.as_str())
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict(format!("delegation {id} is not {}", from.as_str())));
    }
    Ok(())
}

/// Amounts reserved or consumed under a delegation on `day` and in `month` (in-flight reservations count).
pub async fn used(tx: &mut WriteTx, delegation_id: &str, day: &str, month: &str) -> Result<(i64, i64)> {
    let (today, this_month): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN day = $2 THEN amount_minor ELSE 0 END), 0) AS BIGINT), \
                CAST(COALESCE(SUM(amount_minor), 0) AS BIGINT) \
         FROM budget_reservations WHERE delegation_id = $1 AND month = $3 AND state IN ('reserved', 'consumed')",
    )
    .bind(delegation_id)
    .bind(day)
    .bind(month)
    .fetch_one(tx.conn())
    .await?;
    Ok((today, this_month))
}

/// What a delegation of the workspace reserved or consumed on each UTC day of `month` (`YYYY-MM`), oldest
/// first: the console draws its budget use over the month from it. In-flight reservations count, as they do
/// against the budget.
pub async fn daily_use(
    conn: &mut AnyConnection,
    workspace_id: &str,
    delegation_id: &str,
    month: &str,
) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT day, CAST(SUM(amount_minor) AS BIGINT) FROM budget_reservations \
         WHERE workspace_id = $1 AND delegation_id = $2 AND month = $3 AND state IN ('reserved', 'consumed') \
         GROUP BY day ORDER BY day",
    )
    .bind(workspace_id)
    .bind(delegation_id)
    .bind(month)
    .fetch_all(&mut *conn)
    .await?)
}

#[expect(clippy::too_many_arguments, reason = "one reservation row: each argument is one of its columns")]
pub async fn reserve(
    tx: &mut WriteTx,
    tenant: &Tenant,
    delegation_id: &str,
    action_id: &str,
    amount: i64,
    day: &str,
    month: &str,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO budget_reservations (id, workspace_id, delegation_id, action_id, amount_minor, day, month, state, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'reserved', $8, $8)",
    )
    .bind(fiscus_domain::ids::new_id("bud"))
    .bind(&tenant.workspace_id)
    .bind(delegation_id)
    .bind(action_id)
    .bind(amount)
    .bind(day)
    .bind(month)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Settles a reservation: `consumed` when the action completed, `released` when it failed or was returned.
pub async fn settle_reservation(
    tx: &mut WriteTx,
    tenant: &Tenant,
    action_id: &str,
    state: ReservationState,
    now: i64,
) -> Result<()> {
    // A return gives back even a consumed reservation; consumption only ever follows a reservation.
    let from = match state {
        ReservationState::Released => "('reserved', 'consumed')",
        ReservationState::Consumed | ReservationState::Reserved => "('reserved')",
    };
    let of_tenant = crate::tables::actions::OF_TENANT;
    sqlx::query(&format!(
        "UPDATE budget_reservations SET state = $4, updated_at = $5 \
         WHERE workspace_id = $1 AND action_id = $2 AND {of_tenant} AND state IN {from}"
    ))
    .bind(&tenant.workspace_id)
    .bind(action_id)
    .bind(tenant.environment.as_str())
    .bind(state.as_str())
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Spends a nonce; false when the identity used it before.
pub async fn spend_nonce(tx: &mut WriteTx, tenant: &Tenant, identity_id: &str, nonce: &str, now: i64) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO machine_nonces (workspace_id, identity_id, nonce, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (identity_id, nonce) DO NOTHING",
    )
    .bind(&tenant.workspace_id)
    .bind(identity_id)
    .bind(nonce)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

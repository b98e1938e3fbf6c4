//! Signed execution clients, the sealed decisions about them, and their signature nonces.
//!
//! A client's standing is its latest decision (highest version): none → draft, `grant` → active with that
//! grant, `revoke` → revoked. Decisions are append-only and sealed; the standing is never a mutable column.

use crate::corrupt;
use crate::dialect::{backend_of, for_update};
use crate::seals::{EXECUTION_CLIENT_DECISIONS, EXECUTION_CLIENTS};
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::credentials::Environment;
use fiscus_domain::execution_client::{ClientStatus, Decision, Grant};
use fiscus_domain::integrity::SealKey;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

/// A registered client (its immutable registration).
#[derive(Clone, Debug, PartialEq)]
pub struct Client {
    pub id: String,
    pub environment: Environment,
    pub application_id: String,
    pub name: String,
    /// Base64 of the 32-byte Ed25519 public key.
    pub public_key: String,
    /// The CLI session that registered it (`local`). A bare id, not an actor label: clients are registered
    /// by `fiscus admin` only.
    pub created_by: String,
    pub created_at: i64,
}

/// One decision of people about a client.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientDecision {
    pub id: String,
    pub client_id: String,
    pub version: i64,
    pub decision: Decision,
    /// The allowlist a `grant` gives; `None` for a revocation.
    pub grant: Option<Grant>,
    pub decision_hash: String,
    /// The operator (`opr_…`) who decided. A bare id, not an actor label: only an admin at the console
    /// decides about a client.
    pub decided_by: String,
    pub created_at: i64,
}

/// A client and its latest decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub client: Client,
    pub latest: Option<ClientDecision>,
}

impl Standing {
    pub fn status(&self) -> ClientStatus {
        self.latest.as_ref().map_or(ClientStatus::Draft, |d| d.decision.status())
    }

    /// The grant in force, if the client is active.
    pub fn grant(&self) -> Option<&Grant> {
        self.latest.as_ref().filter(|d| d.decision == Decision::Grant).and_then(|d| d.grant.as_ref())
    }

    /// The version the next decision takes.
    pub fn next_version(&self) -> i64 {
        self.latest.as_ref().map_or(1, |d| d.version + 1)
    }
}

row! {
    struct ClientRow {
        id: String,
        environment: String,
        application_id: String,
        name: String,
        public_key: String,
        created_by: String,
        created_at: i64,
    }
}

impl TryFrom<ClientRow> for Client {
    type Error = StoreError;

    fn try_from(r: ClientRow) -> Result<Client> {
        Ok(Client {
            environment: Environment::parse(&r.environment)
                .ok_or_else(|| corrupt("execution_clients", &r.id, "environment", &r.environment))?,
            id: r.id,
            application_id: r.application_id,
            name: r.name,
            public_key: r.public_key,
            created_by: r.created_by,
            created_at: r.created_at,
        })
    }
}

row! {
    struct DecisionRow {
        id: String,
        client_id: String,
        version: i64,
        decision: String,
        operations: String,
        action_kinds: String,
        environment: String,
        expires_at: Option<i64>,
        rate_limit_per_minute: i64,
        monthly_quota: i64,
        decision_hash: String,
        decided_by: String,
        created_at: i64,
    }
}

impl TryFrom<DecisionRow> for ClientDecision {
    type Error = StoreError;

    fn try_from(r: DecisionRow) -> Result<ClientDecision> {
        let bad = |column: &str, value: &str| corrupt("execution_client_decisions", &r.id, column, value);
        let decision = Decision::parse(&r.decision).ok_or_else(|| bad("decision", &r.decision))?;
        let grant = match decision {
            Decision::Revoke => None,
            Decision::Grant => {
                let mut action_kinds = Vec::new();
                for k in r.action_kinds.split_whitespace() {
                    action_kinds.push(ActionKind::parse(k).ok_or_else(|| bad("action_kinds", k))?);
                }
                Some(Grant {
                    operations: r.operations.split_whitespace().map(str::to_string).collect(),
                    action_kinds,
                    environment: Environment::parse(&r.environment)
                        .ok_or_else(|| bad("environment", &r.environment))?,
                    expires_at: r.expires_at,
                    rate_limit_per_minute: u32::try_from(r.rate_limit_per_minute)
                        .map_err(|_| bad("rate_limit_per_minute", &r.rate_limit_per_minute.to_string()))?,
                    monthly_quota: u64::try_from(r.monthly_quota)
                        .map_err(|_| bad("monthly_quota", &r.monthly_quota.to_string()))?,
                })
            }
        };
        Ok(ClientDecision {
            id: r.id,
            client_id: r.client_id,
            version: r.version,
            decision,
            grant,
            decision_hash: r.decision_hash,
            decided_by: r.decided_by,
            created_at: r.created_at,
        })
    }
}

const CLIENT_COLUMNS: &str = "id, environment, application_id, name, public_key, created_by, created_at";
const DECISION_COLUMNS: &str = "id, client_id, version, decision, operations, action_kinds, environment, expires_at, \
                                rate_limit_per_minute, monthly_quota, decision_hash, decided_by, created_at";

/// Registers a client (a draft: no decision yet).
pub async fn insert(tx: &mut WriteTx, workspace_id: &str, c: &Client) -> Result<()> {
    sqlx::query(
        "INSERT INTO execution_clients (id, workspace_id, environment, application_id, name, public_key, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&c.id)
    .bind(workspace_id)
    .bind(c.environment.as_str())
    .bind(&c.application_id)
    .bind(&c.name)
    .bind(&c.public_key)
    .bind(&c.created_by)
    .bind(c.created_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &EXECUTION_CLIENTS, workspace_id, &c.id).await
}

/// Records a decision. Its version must be the next one: a concurrent decision on the same version fails
/// with [`StoreError::Conflict`]. A decision changes the client's standing, so caches forget.
pub async fn insert_decision(tx: &mut WriteTx, tenant: &Tenant, d: &ClientDecision) -> Result<()> {
    tx.standing_changed()?;
    // A revocation keeps the client's environment and no terms, so the row still says where it applied.
    let (operations, kinds, expires_at, rate, quota) = match &d.grant {
        Some(g) => (
            g.operations_stored(),
            g.action_kinds_stored(),
            g.expires_at,
            i64::from(g.rate_limit_per_minute),
            i64::try_from(g.monthly_quota).map_err(|_| StoreError::Corrupt("monthly quota out of range".into()))?,
        ),
        None => (String::new(), String::new(), None, 0, 0),
    };
    let environment = d.grant.as_ref().map_or(tenant.environment, |g| g.environment);
    let workspace_id = tenant.workspace_id.as_str();
    sqlx::query(&format!(
        "INSERT INTO execution_client_decisions (workspace_id, {DECISION_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(workspace_id)
    .bind(&d.id)
    .bind(&d.client_id)
    .bind(d.version)
    .bind(d.decision.as_str())
    .bind(operations)
    .bind(kinds)
    .bind(environment.as_str())
    .bind(expires_at)
    .bind(rate)
    .bind(quota)
    .bind(&d.decision_hash)
    .bind(&d.decided_by)
    .bind(d.created_at)
    .execute(tx.conn())
    .await?;
    crate::seals::seal(tx, &EXECUTION_CLIENT_DECISIONS, workspace_id, &d.id).await
}

async fn latest_decision(
    conn: &mut AnyConnection,
    workspace_id: &str,
    client_id: &str,
) -> Result<Option<ClientDecision>> {
    sqlx::query_as::<_, DecisionRow>(&format!(
        "SELECT {DECISION_COLUMNS} FROM execution_client_decisions WHERE workspace_id = $1 AND client_id = $2 \
         ORDER BY version DESC LIMIT 1"
    ))
    .bind(workspace_id)
    .bind(client_id)
    .fetch_optional(&mut *conn)
    .await?
    .map(ClientDecision::try_from)
    .transpose()
}

/// A client of the tenant with its latest decision.
/// One client with its latest decision, both checked against their seals.
pub async fn get(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<Standing> {
    let client: Client = sqlx::query_as::<_, ClientRow>(&format!(
        "SELECT {CLIENT_COLUMNS} FROM execution_clients WHERE workspace_id = $1 AND environment = $2 AND id = $3"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()?;
    // Decoded first, so an unknown stored value is named as such (`Corrupt`) before the seals are checked.
    let latest = latest_decision(conn, &tenant.workspace_id, id).await?;
    crate::seals::check(conn, key, &EXECUTION_CLIENTS, &tenant.workspace_id, "id", id).await?;
    crate::seals::check(conn, key, &EXECUTION_CLIENT_DECISIONS, &tenant.workspace_id, "client_id", id).await?;
    Ok(Standing { client, latest })
}

/// A client about to be decided on: its row locked (PostgreSQL), both seals checked.
pub async fn lock_for_decision(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<Standing> {
    let lock = for_update(backend_of(tx.conn()));
    let client: Client = sqlx::query_as::<_, ClientRow>(&format!(
        "SELECT {CLIENT_COLUMNS} FROM execution_clients WHERE workspace_id = $1 AND environment = $2 AND id = $3{lock}"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()?;
    let key = tx.seal_key().clone();
    crate::seals::check(tx.conn(), &key, &EXECUTION_CLIENTS, &tenant.workspace_id, "id", id).await?;
    crate::seals::check(tx.conn(), &key, &EXECUTION_CLIENT_DECISIONS, &tenant.workspace_id, "client_id", id).await?;
    let latest = latest_decision(tx.conn(), &tenant.workspace_id, id).await?;
    Ok(Standing { client, latest })
}

/// Every client of a workspace (both environments), newest first, with their latest decisions, all checked
/// against their seals.
pub async fn list(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
) -> Result<Vec<Standing>> {
    let clients: Vec<Client> = sqlx::query_as::<_, ClientRow>(&format!(
        "SELECT {CLIENT_COLUMNS} FROM execution_clients WHERE workspace_id = $1 ORDER BY id DESC LIMIT 500"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Client::try_from)
    .collect::<Result<_>>()?;
    let mut out = Vec::with_capacity(clients.len());
    for client in clients {
        let latest = latest_decision(conn, workspace_id, &client.id).await?;
        out.push(Standing { client, latest });
    }
    let ids: Vec<&str> = out.iter().map(|s| s.client.id.as_str()).collect();
    crate::seals::check_keys(conn, key, &EXECUTION_CLIENTS, workspace_id, "id", &ids).await?;
    crate::seals::check_keys(conn, key, &EXECUTION_CLIENT_DECISIONS, workspace_id, "client_id", &ids).await?;
    Ok(out)
}

/// Every decision about a client, oldest first (the console shows the history).
/// A client's decisions in version order, their seals checked.
pub async fn decisions(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    client_id: &str,
) -> Result<Vec<ClientDecision>> {
    let all = sqlx::query_as::<_, DecisionRow>(&format!(
        "SELECT {DECISION_COLUMNS} FROM execution_client_decisions WHERE workspace_id = $1 AND client_id = $2 \
         ORDER BY version"
    ))
    .bind(workspace_id)
    .bind(client_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(ClientDecision::try_from)
    .collect::<Result<Vec<_>>>()?;
    crate::seals::check(conn, key, &EXECUTION_CLIENT_DECISIONS, workspace_id, "client_id", client_id).await?;
    Ok(all)
}

/// What a signed request needs to know about the client named by its `keyid`, and the standing of the
/// application and workspace it acts for.
#[derive(Clone, Debug)]
pub struct ResolvedClient {
    pub workspace_id: String,
    /// The client's key, decoded once when the client is resolved (decompressing the curve point costs about
    /// as much as a third of a verification), not per request. `None` when the stored key does not decode.
    pub verifying_key: Option<fiscus_domain::public_keys::PublicKey>,
    pub standing: Standing,
    pub app_status: String,
    pub app_scopes: ScopeSet,
    pub service_class: String,
    pub workspace_entitlement: ScopeSet,
    pub production_access: bool,
}

row! {
    struct ResolvedRow {
        workspace_id: String,
        app_status: String,
        app_scopes: String,
        service_class: String,
        workspace_entitlement: String,
        production_access: i64,
    }
}

/// Resolves a client by id (how a signed request learns its workspace), with both seals checked: a key or
/// a grant edited in the database is refused as tampered, never used.
pub async fn resolve(conn: &mut AnyConnection, key: &SealKey, client_id: &str) -> Result<Option<ResolvedClient>> {
    let Some(row) = sqlx::query_as::<_, ResolvedRow>(
        "SELECT c.workspace_id, a.status AS app_status, a.scopes AS app_scopes, a.service_class, \
                w.entitlement AS workspace_entitlement, w.production_access \
         FROM execution_clients c \
         JOIN applications a ON a.id = c.application_id AND a.workspace_id = c.workspace_id \
         JOIN workspaces w ON w.id = c.workspace_id \
         WHERE c.id = $1",
    )
    .bind(client_id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let client: Client = sqlx::query_as::<_, ClientRow>(&format!(
        "SELECT {CLIENT_COLUMNS} FROM execution_clients WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(&row.workspace_id)
    .bind(client_id)
    .fetch_one(&mut *conn)
    .await?
    .try_into()?;
    crate::seals::check(conn, key, &EXECUTION_CLIENTS, &row.workspace_id, "id", client_id).await?;
    crate::seals::check(conn, key, &EXECUTION_CLIENT_DECISIONS, &row.workspace_id, "client_id", client_id).await?;
    let latest = latest_decision(conn, &row.workspace_id, client_id).await?;
    Ok(Some(ResolvedClient {
        verifying_key: fiscus_domain::public_keys::decode_public_key(&client.public_key),
        standing: Standing { client, latest },
        app_scopes: ScopeSet::from_stored(&row.app_scopes),
        workspace_entitlement: ScopeSet::from_stored(&row.workspace_entitlement),
        production_access: row.production_access == 1,
        workspace_id: row.workspace_id,
        app_status: row.app_status,
        service_class: row.service_class,
    }))
}

/// Records a signature nonce as used until `expires_at`. `Ok(false)` when it was used already (a replay).
pub async fn claim_nonce(tx: &mut WriteTx, client_id: &str, nonce: &str, expires_at: i64) -> Result<bool> {
    let inserted = sqlx::query(
        "INSERT INTO signature_nonces (client_id, nonce, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    )
    .bind(client_id)
    .bind(nonce)
    .bind(expires_at)
    .execute(tx.conn())
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// Forgets nonces whose signatures can no longer be fresh; returns how many.
pub async fn sweep_nonces(conn: &mut AnyConnection, now: i64) -> Result<u64> {
    Ok(sqlx::query("DELETE FROM signature_nonces WHERE expires_at < $1")
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected())
}

/// Requests of a credential since `since_day` (inclusive, `YYYY-MM-DD`), from the flushed usage counters.
pub async fn requests_since(
    conn: &mut AnyConnection,
    workspace_id: &str,
    credential_id: &str,
    since_day: &str,
) -> Result<i64> {
    Ok(sqlx::query_scalar::<_, Option<i64>>(
        "SELECT CAST(SUM(requests) AS BIGINT) FROM usage_counters WHERE workspace_id = $1 AND credential_id = $2 AND day >= $3",
    )
    .bind(workspace_id)
    .bind(credential_id)
    .bind(since_day)
    .fetch_one(&mut *conn)
    .await?
    .unwrap_or(0))
}

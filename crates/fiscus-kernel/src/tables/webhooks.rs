//! Webhook endpoints (registration and standing). Their deliveries come with the delivery worker.

use fiscus_domain::credentials::Environment;
use fiscus_domain::integrity::SealKey;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointStatus {
    Active,
    /// A production endpoint before an operator approved it: nothing is delivered.
    PendingApproval,
    /// Disabled by the delivery worker (the receiver answered 410) or by an operator.
    Disabled,
    /// Deleted by its application: kept for the record, never delivered to again.
    Revoked,
}

impl EndpointStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointStatus::Active => "active",
            EndpointStatus::PendingApproval => "pending_approval",
            EndpointStatus::Disabled => "disabled",
            EndpointStatus::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<EndpointStatus> {
        [EndpointStatus::Active, EndpointStatus::PendingApproval, EndpointStatus::Disabled, EndpointStatus::Revoked]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    pub id: String,
    pub environment: Environment,
    pub application_id: String,
    pub url: String,
    pub description: String,
    /// Event types, or `["*"]` for all.
    pub event_types: Vec<String>,
    pub secret_sealed: String,
    pub status: EndpointStatus,
    pub status_reason: Option<String>,
    /// The credential (`key_…` or an access token's id) that created it.
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
}

fiscus_store::row! {
    struct EndpointRow {
        id: String,
        environment: String,
        application_id: String,
        url: String,
        description: String,
        event_types: String,
        secret_sealed: String,
        status: String,
        status_reason: Option<String>,
        created_by: String,
        created_at: i64,
        updated_at: i64,
    }
}

impl TryFrom<EndpointRow> for Endpoint {
    type Error = StoreError;

    fn try_from(r: EndpointRow) -> Result<Endpoint> {
        let bad = |column: &str, value: &str| corrupt("webhook_endpoints", &r.id, column, value);
        Ok(Endpoint {
            environment: Environment::parse(&r.environment).ok_or_else(|| bad("environment", &r.environment))?,
            status: EndpointStatus::parse(&r.status).ok_or_else(|| bad("status", &r.status))?,
            event_types: r.event_types.split_whitespace().map(str::to_string).collect(),
            id: r.id,
            application_id: r.application_id,
            url: r.url,
            description: r.description,
            secret_sealed: r.secret_sealed,
            status_reason: r.status_reason,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

const COLUMNS: &str = "id, environment, application_id, url, description, event_types, secret_sealed, status, \
                       status_reason, created_by, created_at, updated_at";

pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, e: &Endpoint) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO webhook_endpoints (workspace_id, {COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
    ))
    .bind(&tenant.workspace_id)
    .bind(&e.id)
    .bind(tenant.environment.as_str())
    .bind(&e.application_id)
    .bind(&e.url)
    .bind(&e.description)
    .bind(e.event_types.join(" "))
    .bind(&e.secret_sealed)
    .bind(e.status.as_str())
    .bind(&e.status_reason)
    .bind(&e.created_by)
    .bind(e.created_at)
    .bind(e.updated_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &fiscus_store::seals::WEBHOOK_ENDPOINTS, &tenant.workspace_id, &e.id).await
}

/// One endpoint of the tenant, its seal checked (`Tampered` for a row edited outside Fiscus).
pub async fn get(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Endpoint> {
    let endpoint: Endpoint = sqlx::query_as::<_, EndpointRow>(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND environment = $2 AND id = $3"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()?;
    checked(conn, key, &tenant.workspace_id, vec![endpoint]).await?.pop().ok_or(StoreError::NotFound)
}

/// `endpoints` once every one's seal is checked.
async fn checked(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    endpoints: Vec<Endpoint>,
) -> Result<Vec<Endpoint>> {
    let ids: Vec<&str> = endpoints.iter().map(|e| e.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::WEBHOOK_ENDPOINTS, workspace_id, "id", &ids)
        .await?;
    Ok(endpoints)
}

/// One of `application_id`'s endpoints; another application's is `NotFound`, as another workspace's is.
pub async fn get_of_application(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
    id: &str,
) -> Result<Endpoint> {
    let endpoint = get(conn, key, tenant, id).await?;
    if endpoint.application_id != application_id {
        return Err(StoreError::NotFound);
    }
    Ok(endpoint)
}

/// A page of `application_id`'s endpoints in the tenant (revoked ones included) in id order after
/// `after_id`, `limit + 1` rows. Endpoints belong to the application that registered them.
pub async fn list(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<Endpoint>> {
    let endpoints = sqlx::query_as::<_, EndpointRow>(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND environment = $2 \
         AND application_id = $5 AND ($3 IS NULL OR id > $3) ORDER BY id LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .bind(application_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Endpoint::try_from)
    .collect::<Result<Vec<_>>>()?;
    checked(conn, key, &tenant.workspace_id, endpoints).await
}

/// Moves an endpoint from `from` to `to`; `NotFound` if it is not in `from` any more (a concurrent change).
pub async fn set_status(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: EndpointStatus,
    to: EndpointStatus,
    reason: Option<&str>,
    now: i64,
) -> Result<()> {
    let done = sqlx::query(
        "UPDATE webhook_endpoints SET status = $1, status_reason = $2, updated_at = $3 \
         WHERE workspace_id = $4 AND environment = $5 AND id = $6 AND status = $7",
    )
    .bind(to.as_str())
    .bind(reason)
    .bind(now)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .bind(from.as_str())
    .execute(tx.conn())
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Every endpoint of a workspace (both environments), newest first, for the console.
pub async fn list_workspace(conn: &mut AnyConnection, key: &SealKey, workspace_id: &str) -> Result<Vec<Endpoint>> {
    let endpoints = sqlx::query_as::<_, EndpointRow>(&format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY id DESC LIMIT 500"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Endpoint::try_from)
    .collect::<Result<Vec<_>>>()?;
    checked(conn, key, workspace_id, endpoints).await
}

//! API keys, OAuth clients and OAuth access tokens. Only keyed hashes of secrets are stored.
//!
//! The `resolve_*` functions are the one place where the store looks a row up without knowing the workspace:
//! a presented credential is how a request learns its workspace. They return everything the authentication
//! layer needs to decide in one round trip.

use crate::corrupt;
use crate::{Result, StoreError, WriteTx};
use fiscus_domain::credentials::{AppStatus, CredentialStatus, Environment};
use fiscus_domain::scopes::ScopeSet;
use sqlx::AnyConnection;

/// A presented credential joined with its application and workspace, typed once here: its scope sets parsed,
/// its statuses and environment read into the domain's types (a stored word none of them knows is
/// `Corrupt`, so a request is refused rather than decided on a value no code wrote).
#[derive(Clone, Debug)]
pub struct ResolvedCredential {
    pub credential_id: String,
    pub secret_hash: String,
    pub credential_status: CredentialStatus,
    pub expires_at: Option<i64>,
    /// The token's own scopes; `None` for API keys, which carry the application's scopes.
    pub token_scopes: Option<ScopeSet>,
    pub application_id: String,
    pub workspace_id: String,
    pub environment: Environment,
    pub app_status: AppStatus,
    pub app_scopes: ScopeSet,
    pub service_class: String,
    pub workspace_entitlement: ScopeSet,
    pub production_access: bool,
}

impl TryFrom<ResolvedRow> for ResolvedCredential {
    type Error = StoreError;

    fn try_from(r: ResolvedRow) -> Result<Self> {
        let bad = |column: &str, value: &str| corrupt("credentials", &r.credential_id, column, value);
        let credential_status = CredentialStatus::parse(&r.credential_status)
            .ok_or_else(|| bad("credential_status", &r.credential_status))?;
        let environment = Environment::parse(&r.environment).ok_or_else(|| bad("environment", &r.environment))?;
        let app_status = AppStatus::parse(&r.app_status).ok_or_else(|| bad("app_status", &r.app_status))?;
        Ok(ResolvedCredential {
            token_scopes: r.token_scopes.as_deref().map(ScopeSet::from_stored),
            app_scopes: ScopeSet::from_stored(&r.app_scopes),
            workspace_entitlement: ScopeSet::from_stored(&r.workspace_entitlement),
            production_access: r.production_access == 1,
            credential_status,
            environment,
            app_status,
            credential_id: r.credential_id,
            secret_hash: r.secret_hash,
            expires_at: r.expires_at,
            application_id: r.application_id,
            workspace_id: r.workspace_id,
            service_class: r.service_class,
        })
    }
}

row! {
    struct ResolvedRow {
        pub credential_id: String,
        pub secret_hash: String,
        /// `active`, `rotated` or `revoked` for keys; `active` or `revoked` for tokens.
        pub credential_status: String,
        pub expires_at: Option<i64>,
        /// Token scopes (space-separated); `None` for API keys, which carry the application's scopes.
        pub token_scopes: Option<String>,
        pub application_id: String,
        pub workspace_id: String,
        pub environment: String,
        pub app_status: String,
        pub app_scopes: String,
        pub service_class: String,
        pub workspace_entitlement: String,
        pub production_access: i64,
    }
}

pub async fn resolve_api_key(conn: &mut AnyConnection, lookup: &str) -> Result<Option<ResolvedCredential>> {
    sqlx::query_as::<_, ResolvedRow>(
        "SELECT k.id AS credential_id, k.secret_hash, k.status AS credential_status, k.expires_at, \
                CAST(NULL AS TEXT) AS token_scopes, \
                a.id AS application_id, a.workspace_id, a.environment, a.status AS app_status, \
                a.scopes AS app_scopes, a.service_class, \
                w.entitlement AS workspace_entitlement, w.production_access \
         FROM api_keys k \
         JOIN applications a ON a.id = k.application_id AND a.workspace_id = k.workspace_id \
         JOIN workspaces w ON w.id = a.workspace_id \
         WHERE k.lookup = $1",
    )
    .bind(lookup)
    .fetch_optional(&mut *conn)
    .await?
    .map(ResolvedCredential::try_from)
    .transpose()
}

pub async fn resolve_access_token(conn: &mut AnyConnection, lookup: &str) -> Result<Option<ResolvedCredential>> {
    sqlx::query_as::<_, ResolvedRow>(
        "SELECT t.id AS credential_id, t.secret_hash, \
                CASE WHEN t.revoked_at IS NULL THEN 'active' ELSE 'revoked' END AS credential_status, \
                t.expires_at, t.scopes AS token_scopes, \
                a.id AS application_id, a.workspace_id, a.environment, a.status AS app_status, \
                a.scopes AS app_scopes, a.service_class, \
                w.entitlement AS workspace_entitlement, w.production_access \
         FROM oauth_tokens t \
         JOIN applications a ON a.id = t.application_id AND a.workspace_id = t.workspace_id \
         JOIN workspaces w ON w.id = a.workspace_id \
         WHERE t.lookup = $1",
    )
    .bind(lookup)
    .fetch_optional(&mut *conn)
    .await?
    .map(ResolvedCredential::try_from)
    .transpose()
}

// ---------------------------------------------------------------------------------------------- API keys

/// An API key as listed (never its secret or lookup).
#[derive(Clone, Debug)]
pub struct ApiKeyRow {
    pub id: String,
    pub application_id: String,
    pub hint: String,
    pub status: CredentialStatus,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

row! {
    struct KeyRow {
        id: String,
        application_id: String,
        hint: String,
        status: String,
        created_at: i64,
        expires_at: Option<i64>,
        revoked_at: Option<i64>,
    }
}

impl TryFrom<KeyRow> for ApiKeyRow {
    type Error = StoreError;

    fn try_from(r: KeyRow) -> Result<ApiKeyRow> {
        let status =
            CredentialStatus::parse(&r.status).ok_or_else(|| corrupt("api_keys", &r.id, "status", &r.status))?;
        Ok(ApiKeyRow {
            id: r.id,
            application_id: r.application_id,
            hint: r.hint,
            status,
            created_at: r.created_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
        })
    }
}

pub struct NewApiKey<'a> {
    pub id: &'a str,
    pub application_id: &'a str,
    pub lookup: &'a str,
    pub secret_hash: &'a str,
    pub hint: &'a str,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

pub async fn insert_api_key(conn: &mut AnyConnection, workspace_id: &str, new: &NewApiKey<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO api_keys (id, workspace_id, application_id, lookup, secret_hash, hint, status, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8)",
    )
    .bind(new.id)
    .bind(workspace_id)
    .bind(new.application_id)
    .bind(new.lookup)
    .bind(new.secret_hash)
    .bind(new.hint)
    .bind(new.created_at)
    .bind(new.expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Ends every active key of an application with `status` (rotated or revoked); returns how many.
pub async fn end_active_keys(
    tx: &mut WriteTx,
    workspace_id: &str,
    application_id: &str,
    status: CredentialStatus,
    now: i64,
) -> Result<u64> {
    tx.standing_changed()?;
    let done = sqlx::query(
        "UPDATE api_keys SET status = $1, revoked_at = $2 \
         WHERE workspace_id = $3 AND application_id = $4 AND status = 'active'",
    )
    .bind(status.as_str())
    .bind(now)
    .bind(workspace_id)
    .bind(application_id)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected())
}

/// Revokes one key; `NotFound` when it is not an active key of the workspace.
pub async fn revoke_api_key(tx: &mut WriteTx, workspace_id: &str, key_id: &str, now: i64) -> Result<()> {
    tx.standing_changed()?;
    let done = sqlx::query(
        "UPDATE api_keys SET status = 'revoked', revoked_at = $1 WHERE workspace_id = $2 AND id = $3 AND status = 'active'",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(key_id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn list_api_keys(
    conn: &mut AnyConnection,
    workspace_id: &str,
    application_id: Option<&str>,
) -> Result<Vec<ApiKeyRow>> {
    sqlx::query_as::<_, KeyRow>(
        "SELECT id, application_id, hint, status, created_at, expires_at, revoked_at FROM api_keys \
         WHERE workspace_id = $1 AND ($2 IS NULL OR application_id = $2) ORDER BY id",
    )
    .bind(workspace_id)
    .bind(application_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(ApiKeyRow::try_from)
    .collect()
}

// ------------------------------------------------------------------------------------------ OAuth clients

/// An OAuth client (its secret only as its keyed hash).
#[derive(Clone, Debug)]
pub struct OAuthClientRow {
    pub id: String,
    pub workspace_id: String,
    pub application_id: String,
    pub secret_hash: String,
    pub secret_hint: String,
    pub status: CredentialStatus,
    pub created_at: i64,
    pub rotated_at: Option<i64>,
}

row! {
    struct ClientRow {
        id: String,
        workspace_id: String,
        application_id: String,
        secret_hash: String,
        secret_hint: String,
        status: String,
        created_at: i64,
        rotated_at: Option<i64>,
    }
}

impl TryFrom<ClientRow> for OAuthClientRow {
    type Error = StoreError;

    fn try_from(r: ClientRow) -> Result<OAuthClientRow> {
        let status =
            CredentialStatus::parse(&r.status).ok_or_else(|| corrupt("oauth_clients", &r.id, "status", &r.status))?;
        Ok(OAuthClientRow {
            id: r.id,
            workspace_id: r.workspace_id,
            application_id: r.application_id,
            secret_hash: r.secret_hash,
            secret_hint: r.secret_hint,
            status,
            created_at: r.created_at,
            rotated_at: r.rotated_at,
        })
    }
}

const CLIENT_COLUMNS: &str =
    "id, workspace_id, application_id, secret_hash, secret_hint, status, created_at, rotated_at";

pub async fn insert_oauth_client(
    conn: &mut AnyConnection,
    workspace_id: &str,
    application_id: &str,
    client_id: &str,
    secret_hash: &str,
    secret_hint: &str,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO oauth_clients (id, workspace_id, application_id, secret_hash, secret_hint, status, created_at) \
         VALUES ($1, $2, $3, $4, $5, 'active', $6)",
    )
    .bind(client_id)
    .bind(workspace_id)
    .bind(application_id)
    .bind(secret_hash)
    .bind(secret_hint)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A client by its public id: the token endpoint authenticates the client before it knows the workspace.
pub async fn find_oauth_client(conn: &mut AnyConnection, client_id: &str) -> Result<Option<OAuthClientRow>> {
    sqlx::query_as::<_, ClientRow>(&format!("SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE id = $1"))
        .bind(client_id)
        .fetch_optional(&mut *conn)
        .await?
        .map(OAuthClientRow::try_from)
        .transpose()
}

pub async fn list_oauth_clients(
    conn: &mut AnyConnection,
    workspace_id: &str,
    application_id: Option<&str>,
) -> Result<Vec<OAuthClientRow>> {
    sqlx::query_as::<_, ClientRow>(&format!(
        "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE workspace_id = $1 AND ($2 IS NULL OR application_id = $2) ORDER BY id"
    ))
    .bind(workspace_id)
    .bind(application_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(OAuthClientRow::try_from)
    .collect()
}

/// Replaces a client's secret and revokes every live token it was issued (the seed's lifecycle rule 3).
/// Returns the number of tokens revoked.
pub async fn rotate_oauth_client_secret(
    tx: &mut WriteTx,
    workspace_id: &str,
    client_id: &str,
    secret_hash: &str,
    secret_hint: &str,
    now: i64,
) -> Result<u64> {
    tx.standing_changed()?;
    let done = sqlx::query(
        "UPDATE oauth_clients SET secret_hash = $1, secret_hint = $2, rotated_at = $3 \
         WHERE workspace_id = $4 AND id = $5 AND status = 'active'",
    )
    .bind(secret_hash)
    .bind(secret_hint)
    .bind(now)
    .bind(workspace_id)
    .bind(client_id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    let revoked = sqlx::query(
        "UPDATE oauth_tokens SET revoked_at = $1 WHERE workspace_id = $2 AND client_id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(client_id)
    .execute(tx.conn())
    .await?;
    Ok(revoked.rows_affected())
}

// ------------------------------------------------------------------------------------------ OAuth tokens

pub struct NewAccessToken<'a> {
    pub id: &'a str,
    pub application_id: &'a str,
    pub client_id: &'a str,
    pub lookup: &'a str,
    pub secret_hash: &'a str,
    pub scopes: &'a str,
    pub created_at: i64,
    pub expires_at: i64,
}

pub async fn insert_access_token(conn: &mut AnyConnection, workspace_id: &str, new: &NewAccessToken<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO oauth_tokens (id, workspace_id, application_id, client_id, lookup, secret_hash, scopes, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(new.id)
    .bind(workspace_id)
    .bind(new.application_id)
    .bind(new.client_id)
    .bind(new.lookup)
    .bind(new.secret_hash)
    .bind(new.scopes)
    .bind(new.created_at)
    .bind(new.expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

row! {
    /// The client a token was issued to, with its hash, for revocation and introspection (RFC 7009 §2.1 and
    /// RFC 7662 §2.1: a client may only act on its own tokens).
    #[derive(Clone, Debug)]
    pub struct TokenOwner {
        pub id: String,
        pub workspace_id: String,
        pub client_id: String,
        pub secret_hash: String,
    }
}

pub async fn find_token_owner(conn: &mut AnyConnection, lookup: &str) -> Result<Option<TokenOwner>> {
    Ok(sqlx::query_as::<_, TokenOwner>(
        "SELECT id, workspace_id, client_id, secret_hash FROM oauth_tokens WHERE lookup = $1",
    )
    .bind(lookup)
    .fetch_optional(&mut *conn)
    .await?)
}

pub async fn revoke_access_token(tx: &mut WriteTx, workspace_id: &str, token_id: &str, now: i64) -> Result<bool> {
    tx.standing_changed()?;
    let done = sqlx::query(
        "UPDATE oauth_tokens SET revoked_at = $1 WHERE workspace_id = $2 AND id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(token_id)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() > 0)
}

row! {
    /// Key ages and expiry facts for the posture read.
    #[derive(Clone, Debug)]
    pub struct ActiveKeyFacts {
        pub id: String,
        pub application_id: String,
        pub environment: String,
        pub created_at: i64,
        pub expires_at: Option<i64>,
    }
}

pub async fn active_key_facts(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<ActiveKeyFacts>> {
    Ok(sqlx::query_as::<_, ActiveKeyFacts>(
        "SELECT k.id, k.application_id, a.environment, k.created_at, k.expires_at FROM api_keys k \
         JOIN applications a ON a.id = k.application_id \
         WHERE k.workspace_id = $1 AND k.status = 'active' AND a.status = 'active' ORDER BY k.id",
    )
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?)
}

pub async fn count_active_oauth_clients(conn: &mut AnyConnection, workspace_id: &str) -> Result<i64> {
    let (n,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM oauth_clients WHERE workspace_id = $1 AND status = 'active'")
            .bind(workspace_id)
            .fetch_one(&mut *conn)
            .await?;
    Ok(n)
}

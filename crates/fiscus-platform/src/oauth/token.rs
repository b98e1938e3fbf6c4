//! The token endpoint (client credentials, RFC 6749 §4.4), revocation (RFC 7009) and introspection
//! (RFC 7662), answered in the RFCs' own JSON shapes.

use crate::views::{IntrospectionResponse, OAuthErrorResponse, TokenForm, TokenReferenceForm, TokenResponse};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use fiscus_domain::audit_action::AuditAction;
use fiscus_domain::catalogue;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, AppStatus, Environment, SecretKind};
use fiscus_domain::scopes::ScopeSet;
use fiscus_kernel::governed::record::AuditEntry;
use fiscus_store::credentials::NewAccessToken;

use super::client_auth::{AddressThrottle, OAuthError, authenticate_client, no_store, parse_form};
use fiscus_http::AppState;
use fiscus_http::form::RawBody;
use fiscus_http::request_id;

/// Issues an access token for the client credentials grant. Requested scopes (`scope`, space-separated) are
/// intersected with the application's and the workspace's entitlement; without `scope` the whole
/// intersection is granted.
///
/// The client authenticates by HTTP Basic or the `client_id` and `client_secret` fields; the token is issued for
/// `expires_in` seconds, stored only as a keyed hash, and audited. An inactive application, or a production
/// application while the workspace lacks production access, is 400 `unauthorized_client`; no entitled scope is 400
/// `invalid_scope`. Needs no scope. The token carries API scopes only: it never approves or executes an action.
/// Requests are throttled per client id and address (429).
#[utoipa::path(
    post,
    path = "/api/v2/oauth/token",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`grant_type=client_credentials`, optional `scope`; client authentication by HTTP Basic or `client_id`/`client_secret` fields", content = TokenForm),
    responses(
        (status = 200, description = "Access token (RFC 6749 §5.1)", body = TokenResponse),
        (status = 400, description = "RFC 6749 §5.2 error", body = OAuthErrorResponse),
        (status = 401, description = "Client authentication failed", body = OAuthErrorResponse),
        (status = 429, description = "Too many requests from this client id or address (`temporarily_unavailable`)", body = OAuthErrorResponse),
    )
)]
pub async fn post_token(
    State(state): State<AppState>,
    _throttled: AddressThrottle,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Response {
    match issue(&state, &headers, &body).await {
        Ok(token) => {
            let mut response = (StatusCode::OK, Json(token)).into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn issue(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<TokenResponse, OAuthError> {
    let form = parse_form(headers, body)?;
    match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {}
        Some(_) => {
            return Err(OAuthError::bad_request("unsupported_grant_type", "only client_credentials is supported"));
        }
        None => {
            return Err(OAuthError::bad_request("invalid_request", "grant_type is required"));
        }
    }
    let client = authenticate_client(state, headers, &form).await?;
    let mut conn = state.store.read().await?;
    let app = fiscus_store::applications::get(&mut conn, &client.workspace_id, &client.application_id).await?;
    let workspace = fiscus_store::workspaces::get(&mut conn, &client.workspace_id).await?;
    drop(conn);
    if app.status().ok() != Some(AppStatus::Active) {
        return Err(OAuthError::bad_request("unauthorized_client", "the application is not active"));
    }
    let environment = app.environment().map_err(OAuthError::from)?;
    if environment == Environment::Production && !workspace.production_access() {
        return Err(OAuthError::bad_request(
            "unauthorized_client",
            "production access is not enabled for this workspace",
        ));
    }
    let entitled = app.scopes().intersection(&workspace.entitlement());
    let granted = match form.get("scope") {
        None => entitled,
        Some(requested) => {
            let requested =
                ScopeSet::parse(requested).map_err(|e| OAuthError::bad_request("invalid_scope", e.to_string()))?;
            requested.intersection(&entitled)
        }
    };
    if granted.is_empty() {
        return Err(OAuthError::bad_request("invalid_scope", "none of the requested scopes is entitled"));
    }
    let now = now_micros();
    let ttl = state.settings.access_token_ttl_seconds;
    let minted = credentials::mint(SecretKind::AccessToken);
    let token_id = fiscus_domain::ids::new_id("tok");
    let scope = granted.to_space_separated();
    let mut tx = state.store.begin().await?;
    fiscus_store::credentials::insert_access_token(
        tx.conn(),
        &client.workspace_id,
        &NewAccessToken {
            id: &token_id,
            application_id: &client.application_id,
            client_id: &client.id,
            lookup: &minted.lookup,
            secret_hash: &credentials::keyed_hash(&state.server_key, &minted.full),
            scopes: &scope,
            created_at: now,
            expires_at: now + ttl as i64 * MICROS_PER_SECOND,
        },
    )
    .await?;
    fiscus_kernel::governed::record::audit(
        &mut tx,
        &oauth_caller(&client.application_id),
        &AuditEntry {
            workspace_id: &client.workspace_id,
            environment: Some(environment),
            action: AuditAction::Operation(const { catalogue::named("post_oauth_token") }),
            subject: Some(&token_id),
            details: serde_json::json!({ "client_id": client.id, "scope": scope, "expires_in": ttl }),
            occurred_at: now,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(TokenResponse { access_token: minted.full, token_type: "Bearer".into(), expires_in: ttl, scope })
}

/// RFC 7009 revocation. Answers 200 whether or not the token existed (§2.2), but only revokes tokens issued
/// to the authenticated client.
///
/// The token is revoked, and audited, only when it was issued to the authenticated client and matches its stored
/// hash; an unknown, malformed or other client's token is answered 200 with nothing changed, so the answer reveals
/// nothing about it. Needs no scope: the client authenticates as for `POST /oauth/token`. Only that access token
/// is revoked: the client, its secret, the application's API keys and its other tokens are untouched.
#[utoipa::path(
    post,
    path = "/api/v2/oauth/revoke",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`token`, optional `token_type_hint`; client authentication as for the token endpoint", content = TokenReferenceForm),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke"),
        (status = 400, description = "RFC 6749 §5.2 error", body = OAuthErrorResponse),
        (status = 401, description = "Client authentication failed", body = OAuthErrorResponse),
        (status = 429, description = "Too many requests from this client id or address (`temporarily_unavailable`)", body = OAuthErrorResponse),
    )
)]
pub async fn post_revoke(
    State(state): State<AppState>,
    _throttled: AddressThrottle,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Response {
    match revoke(&state, &headers, &body).await {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn revoke(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<(), OAuthError> {
    let form = parse_form(headers, body)?;
    let client = authenticate_client(state, headers, &form).await?;
    let token = form.get("token").ok_or_else(|| OAuthError::bad_request("invalid_request", "token is required"))?;
    let Some(parsed) = credentials::parse(token).filter(|p| p.kind == SecretKind::AccessToken) else {
        return Ok(());
    };
    let mut conn = state.store.read().await?;
    let owner = fiscus_store::credentials::find_token_owner(&mut conn, parsed.lookup).await?;
    drop(conn);
    let Some(owner) = owner else { return Ok(()) };
    if owner.client_id != client.id || !credentials::verify(&state.server_key, token, &owner.secret_hash) {
        return Ok(());
    }
    let now = now_micros();
    let mut tx = state.store.begin().await?;
    if fiscus_store::credentials::revoke_access_token(&mut tx, &owner.workspace_id, &owner.id, now).await? {
        fiscus_kernel::governed::record::audit(
            &mut tx,
            &oauth_caller(&client.application_id),
            &AuditEntry {
                workspace_id: &owner.workspace_id,
                environment: None,
                action: AuditAction::Operation(const { catalogue::named("post_oauth_revoke") }),
                subject: Some(&owner.id),
                details: serde_json::json!({ "client_id": client.id }),
                occurred_at: now,
            },
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// RFC 7662 introspection of a token issued to the authenticated client; any other token is inactive.
///
/// `active: true` with the effective `scope` (the token's scopes that the application and the workspace's
/// entitlement still allow), `client_id`, `sub` (the application), `exp`, `workspace_id` and `environment`, only
/// for an unexpired, unrevoked token issued to the authenticated client whose application is active; any other
/// token is just `active: false`. Needs no scope: the client authenticates as for `POST /oauth/token`.
/// Introspection changes nothing and never returns a secret.
#[utoipa::path(
    post,
    path = "/api/v2/oauth/introspect",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`token`; client authentication as for the token endpoint", content = TokenReferenceForm),
    responses(
        (status = 200, description = "RFC 7662 §2.2 response", body = IntrospectionResponse),
        (status = 400, description = "RFC 6749 §5.2 error", body = OAuthErrorResponse),
        (status = 401, description = "Client authentication failed", body = OAuthErrorResponse),
        (status = 429, description = "Too many requests from this client id or address (`temporarily_unavailable`)", body = OAuthErrorResponse),
    )
)]
pub async fn post_introspect(
    State(state): State<AppState>,
    _throttled: AddressThrottle,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Response {
    match introspect(&state, &headers, &body).await {
        Ok(answer) => {
            let mut response = (StatusCode::OK, Json(answer)).into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn introspect(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<IntrospectionResponse, OAuthError> {
    let form = parse_form(headers, body)?;
    let client = authenticate_client(state, headers, &form).await?;
    let token = form.get("token").ok_or_else(|| OAuthError::bad_request("invalid_request", "token is required"))?;
    let inactive = IntrospectionResponse::default();
    let Some(parsed) = credentials::parse(token).filter(|p| p.kind == SecretKind::AccessToken) else {
        return Ok(inactive);
    };
    let mut conn = state.store.read().await?;
    let Some(owner) = fiscus_store::credentials::find_token_owner(&mut conn, parsed.lookup).await? else {
        return Ok(inactive);
    };
    if owner.client_id != client.id || !credentials::verify(&state.server_key, token, &owner.secret_hash) {
        return Ok(inactive);
    }
    let Some(resolved) = fiscus_store::credentials::resolve_access_token(&mut conn, parsed.lookup).await? else {
        return Ok(inactive);
    };
    let now = now_micros();
    let active = resolved.credential_status == fiscus_domain::credentials::CredentialStatus::Active
        && resolved.expires_at.is_some_and(|at| at > now)
        && resolved.app_status == fiscus_domain::credentials::AppStatus::Active;
    if !active {
        return Ok(inactive);
    }
    let scope = resolved
        .token_scopes
        .unwrap_or_default()
        .intersection(&resolved.app_scopes)
        .intersection(&resolved.workspace_entitlement);
    Ok(IntrospectionResponse {
        active: true,
        scope: Some(scope.to_space_separated()),
        client_id: Some(client.id),
        token_type: Some("Bearer".into()),
        exp: resolved.expires_at.map(|at| at / MICROS_PER_SECOND),
        iat: None,
        sub: Some(resolved.application_id),
        workspace_id: Some(resolved.workspace_id),
        environment: Some(resolved.environment.as_str().to_string()),
    })
}

/// The client's application as the caller of the token endpoint (authenticated by its client secret).
fn oauth_caller(application_id: &str) -> fiscus_kernel::governed::Caller {
    request_id::caller(fiscus_domain::actor::Actor::application(application_id))
}

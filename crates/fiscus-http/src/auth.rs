//! Authentication and authorisation on the machine plane: bearer credentials here, signed execution
//! clients in `http::signed`.
//!
//! Each request is checked, in the seed's order and failing closed at the first refusal: the credential
//! itself (shape, checksum, stored hash, not rotated, revoked or expired) → the application's status → the
//! environment → the entitlement → the operation's scope → the rate limit. The scope comes from the
//! operation catalogue entry of the matched route, the same entry the OpenAPI document is checked against,
//! so a route cannot be served with a scope other than the catalogued one.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use fiscus_domain::catalogue::Operation;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, AppStatus, CredentialStatus, Environment, SecretKind};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::{CredentialKind, Principal, Tenant};
use fiscus_store::credentials::ResolvedCredential;
use std::sync::Arc;

use crate::dispatched::Dispatched;
use crate::problem::ApiError;
use crate::rate_limit::{policy_header, state_header};
use crate::state::AppState;
use fiscus_kernel::settings::ServiceClass;

pub static RATELIMIT_POLICY: header::HeaderName = header::HeaderName::from_static("ratelimit-policy");
pub static RATELIMIT: header::HeaderName = header::HeaderName::from_static("ratelimit");

/// Route layer for every catalogued operation that takes a bearer credential.
pub async fn layer(state: State<AppState>, req: Request, next: Next) -> Response {
    // RFC 9728 / MCP authorization: a 401 from the MCP endpoint names the resource's metadata document.
    let mcp_origin = matched_operation(&req)
        .is_some_and(|op| op.id == "post_root_mcp")
        .then(|| crate::issuer::issuer(req.headers()));
    let mut response = guard(state, req, next).await;
    if let Some(origin) = mcp_origin
        && response.status() == axum::http::StatusCode::UNAUTHORIZED
    {
        let metadata = format!("{origin}{}", crate::issuer::MCP_RESOURCE_METADATA);
        let challenge = match response.headers().get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()) {
            Some(existing) => format!("{existing}, resource_metadata=\"{metadata}\""),
            None => format!("Bearer resource_metadata=\"{metadata}\""),
        };
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }
    response
}

async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let operation = match matched_operation(&req) {
        Some(op) => op,
        None => {
            // A route outside the catalogue must never be served with a guessed scope.
            tracing::error!(path = %req.uri().path(), "route missing from the operation catalogue");
            return ApiError::internal().into_response();
        }
    };
    let Some(required_scope) = operation.scope else {
        tracing::error!(operation = operation.id, "bearer layer on an operation without a scope");
        return ApiError::internal().into_response();
    };
    let dispatched = req.extensions().get::<Arc<Dispatched>>().cloned();
    let (mut req, auth, signed) = if let Some(caller) = &dispatched {
        // A tool call dispatched in process for a caller its protocol endpoint already authenticated (an
        // extension cannot come from a client). The grant and the scope are still checked here.
        if let Some(client) = &caller.signed
            && !client.grant.allows(operation.id)
        {
            return ApiError::new(ErrorCode::OutsideGrant)
                .detail(format!(
                    "the grant of client {} does not include the operation {}",
                    client.client_id, operation.id
                ))
                .into_response();
        }
        let principal = (*caller.principal).clone();
        let workspace_entitlement = principal.scopes;
        (req, Authenticated { principal, workspace_entitlement }, caller.signed.clone())
    } else if crate::signed::is_signed(&req) {
        match crate::signed::authenticate(&state, req, operation).await {
            Ok((req, auth, client)) => (req, auth, Some(Arc::new(client))),
            Err(e) => return e.into_response(),
        }
    } else {
        match authenticate(&state, req.headers().get(header::AUTHORIZATION)).await {
            Ok(a) => (req, a, None),
            Err(e) => return e.into_response(),
        }
    };
    // The credential is valid: the connection no longer counts as an anonymous one of its address.
    crate::standing::authenticated(req.extensions());
    if let Err(e) = authorise(&auth, required_scope) {
        return e.into_response();
    }
    // The document is set when the router is built, before any request is routed; without it nothing is
    // known to be declared, so the request is refused rather than read unchecked.
    let Some(api) = state.http.api.get() else {
        return ApiError::internal().into_response();
    };
    if let Err(e) = crate::query::check_documented(api, operation.id, req.uri().query()) {
        return e.into_response();
    }
    let principal = auth.principal;
    let (class_name, class) = state.settings.service_class(&principal.service_class);
    let now = now_micros();
    let now_s = (now / MICROS_PER_SECOND) as u64;
    // One quota per application: all its keys, tokens and signed clients draw on it, so minting credentials
    // buys no headroom. A signed client also has its own per-minute limit and monthly quota (its grant).
    // A dispatched tool call was counted as its protocol request; it is not counted again.
    let decision = match &dispatched {
        Some(_) => crate::rate_limit::Decision { allowed: true, remaining: class.quota, reset_in: 0 },
        None => state.http.rate_limiter.check(&format!("app:{}", principal.application_id), &class, now_s),
    };
    let mut policy = policy_header(&class_name, &class);
    let mut current = state_header(&class_name, &decision);
    let mut refusal = (!decision.allowed).then(|| {
        ApiError::new(ErrorCode::RateLimited)
            .detail(format!(
                "the {class_name} service class allows {} requests per {} s",
                class.quota, class.window_seconds
            ))
            .header(header::RETRY_AFTER, decision.reset_in.to_string())
    });
    if let (None, Some(client), None) = (&refusal, &signed, &dispatched) {
        let client_class = ServiceClass { quota: u64::from(client.grant.rate_limit_per_minute), window_seconds: 60 };
        let per_minute = state.http.rate_limiter.check(&format!("client:{}", client.client_id), &client_class, now_s);
        policy = format!("{policy}, {}", policy_header("client", &client_class));
        current = format!("{current}, {}", state_header("client", &per_minute));
        if !per_minute.allowed {
            refusal = Some(
                ApiError::new(ErrorCode::RateLimited)
                    .detail(format!("the client's grant allows {} requests per minute", client_class.quota))
                    .header(header::RETRY_AFTER, per_minute.reset_in.to_string()),
            );
        } else {
            match state.http.monthly.count(&state.store, &principal.tenant.workspace_id, client, now).await {
                Ok(month) if month.allowed => {}
                Ok(month) => {
                    refusal = Some(
                        ApiError::new(ErrorCode::RateLimited)
                            .detail(format!(
                                "the client's monthly quota of {} requests is used up until the month ends (UTC)",
                                client.grant.monthly_quota
                            ))
                            .header(header::RETRY_AFTER, month.resets_in.to_string()),
                    )
                }
                Err(e) => refusal = Some(ApiError::from(e)),
            }
        }
    }
    let mut response = match refusal {
        None => {
            let principal = Arc::new(principal);
            req.extensions_mut().insert(principal.clone());
            req.extensions_mut().insert(operation);
            req.extensions_mut().insert(api.clone());
            if let Some(client) = signed {
                req.extensions_mut().insert(client);
            }
            let response = next.run(req).await;
            let failed = response.status().is_client_error() || response.status().is_server_error();
            state.usage.record(&principal, operation.id, now, failed);
            response
        }
        Some(refused) => refused.into_response(),
    };
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&policy) {
        headers.insert(RATELIMIT_POLICY.clone(), v);
    }
    if let Ok(v) = HeaderValue::from_str(&current) {
        headers.insert(RATELIMIT.clone(), v);
    }
    response
}

/// Set by the metrics layer, which runs first and already looked the route up in the catalogue.
fn matched_operation(req: &Request) -> Option<&'static Operation> {
    req.extensions().get::<crate::metrics::CataloguedOperation>().map(|c| c.0)
}

fn unauthenticated() -> ApiError {
    ApiError::new(ErrorCode::AuthenticationRequired).header(header::WWW_AUTHENTICATE, "Bearer realm=\"fiscus\"")
}

/// RFC 6750 §3: a presented but unusable token gets `error="invalid_token"`.
fn invalid_token(reason: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidCredential)
        .detail(reason)
        .header(header::WWW_AUTHENTICATE, "Bearer realm=\"fiscus\", error=\"invalid_token\"")
}

/// Resolves the `Authorization` header to a principal, or refuses with 401/403.
/// A principal and the workspace's entitlement, kept apart so that a scope the workspace is not entitled to
/// is reported as an entitlement gap rather than as a missing scope.
pub struct Authenticated {
    pub principal: Principal,
    pub workspace_entitlement: ScopeSet,
}

pub async fn authenticate(state: &AppState, authorization: Option<&HeaderValue>) -> Result<Authenticated, ApiError> {
    let Some(value) = authorization else {
        return Err(unauthenticated());
    };
    let Ok(value) = value.to_str() else {
        return Err(invalid_token("the Authorization header is not valid"));
    };
    let Some((scheme, token)) = value.split_once(' ') else {
        return Err(invalid_token("expected `Authorization: Bearer <credential>`"));
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(invalid_token("only the Bearer scheme is accepted"));
    }
    let token = token.trim();
    // Shape and checksum first: garbage never reaches the database.
    let Some(parsed) = credentials::parse(token) else {
        return Err(invalid_token("the credential is not recognised"));
    };
    let (resolved, kind) = match parsed.kind {
        SecretKind::SandboxApiKey | SecretKind::ProductionApiKey => {
            (state.store.resolve_api_key(parsed.lookup).await?, CredentialKind::ApiKey)
        }
        SecretKind::AccessToken => {
            (state.store.resolve_access_token(parsed.lookup).await?, CredentialKind::AccessToken)
        }
        SecretKind::ClientSecret | SecretKind::EnrollmentToken | SecretKind::SessionToken => {
            return Err(invalid_token("only API keys and access tokens are bearer credentials"));
        }
    };
    let Some(resolved) = resolved else {
        return Err(invalid_token("the credential is not recognised"));
    };
    if !credentials::verify(&state.server_key, token, &resolved.secret_hash) {
        return Err(invalid_token("the credential is not recognised"));
    }
    decide(&resolved, kind, parsed.kind, now_micros())
}

/// The pure part of the decision, after the stored hash matched.
fn decide(
    r: &ResolvedCredential,
    kind: CredentialKind,
    presented: SecretKind,
    now: i64,
) -> Result<Authenticated, ApiError> {
    // 1. The credential itself.
    match r.credential_status {
        CredentialStatus::Active => {}
        CredentialStatus::Rotated => return Err(invalid_token("the credential has been rotated")),
        CredentialStatus::Revoked => return Err(invalid_token("the credential has been revoked")),
    }
    if r.expires_at.is_some_and(|at| at <= now) {
        return Err(invalid_token("the credential has expired"));
    }
    // 2. The application's status.
    match r.app_status {
        AppStatus::Active => {}
        AppStatus::Suspended => return Err(invalid_token("the application is suspended")),
        AppStatus::Revoked => return Err(invalid_token("the application is revoked")),
    }
    // 3. The environment: a key's prefix must match its application's environment, and production needs
    //    production access, which only operators turn on.
    let environment = r.environment;
    let prefix_matches = match presented {
        SecretKind::SandboxApiKey => environment == Environment::Sandbox,
        SecretKind::ProductionApiKey => environment == Environment::Production,
        _ => true,
    };
    if !prefix_matches {
        return Err(invalid_token("the credential does not belong to this environment"));
    }
    if environment == Environment::Production && !r.production_access {
        return Err(ApiError::new(ErrorCode::ProductionAccessDisabled));
    }
    // 4./5. Entitlement and scope are checked per operation in `authorise`; here the effective set is built:
    //    the credential's scopes ∩ the application's entitlement ∩ the workspace's entitlement.
    let workspace = r.workspace_entitlement;
    let application = r.app_scopes;
    let granted = match r.token_scopes {
        Some(token_scopes) => token_scopes.intersection(&application),
        None => application,
    };
    Ok(Principal {
        tenant: Tenant { workspace_id: r.workspace_id.clone(), environment },
        application_id: r.application_id.clone(),
        credential_id: r.credential_id.clone(),
        credential_kind: kind,
        scopes: granted.intersection(&workspace),
        service_class: r.service_class.clone(),
    })
    .map(|p| Authenticated { principal: p, workspace_entitlement: workspace })
}

fn authorise(auth: &Authenticated, required: &'static str) -> Result<(), ApiError> {
    if auth.principal.scopes.contains(required) {
        return Ok(());
    }
    let code = if auth.workspace_entitlement.contains(required) {
        ErrorCode::ScopeMissing
    } else {
        ErrorCode::EntitlementMissing
    };
    // RFC 6750 §3.1: the challenge names the scope the client would need, so a client library can ask
    // for it without parsing the body.
    Err(ApiError::new(code)
        .detail(format!("this operation requires the scope `{required}`"))
        .with("required_scope", required)
        .header(
            header::WWW_AUTHENTICATE,
            format!("Bearer realm=\"fiscus\", error=\"insufficient_scope\", scope=\"{required}\""),
        ))
}

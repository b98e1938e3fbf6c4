//! Webhook endpoint registration on the agent gateway (Standard Webhooks v1). An endpoint must be an HTTPS
//! URL whose host resolves only to public addresses (loopback, private, link-local, multicast, unspecified
//! and cloud metadata addresses are refused, `fiscus_domain::webhooks::screen`); the same screening runs again
//! at every delivery. The `whsec_` signing secret is returned once and stored encrypted. A production
//! endpoint waits for an operator's approval at the console before anything is delivered to it.
//!
//! An endpoint belongs to the application that registered it: only that application lists or revokes it
//! (another application's endpoint is 404, as another workspace's is), and it hears only events about that
//! application's own actions and workflow runs, or about objects its application may read anyway
//! (`actions:read`, `workflow:read`), while the application is active and holds `agent:execution:webhooks`
//! (`fiscus_domain::webhooks::may_hear`, applied at fan-out).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::webhooks::{self, Unsafe};
use fiscus_http::list::ListPage;
use fiscus_kernel::tables::webhooks::{Endpoint, EndpointStatus};
use serde::{Deserialize, Serialize};

use fiscus_domain::pagination::PageParams;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ListParams};
use fiscus_kernel::secret_box::SecretBox;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointRequest {
    /// An `https://` URL naming its host by DNS name (not an IP address), with an optional port, path and
    /// query; no user name, password or fragment. Every address the name resolves to, now and at each
    /// delivery, must be public. (A server whose operator turned on `webhooks_allow_loopback` also takes
    /// `http://` loopback targets for sandbox endpoints: a development switch, off by default.)
    // The pattern: `https://`, DNS labels of at most 63 characters without a leading or trailing hyphen, the
    // last starting with a letter (so never an IPv4 address), a port from 1 to 65535, then a path or query
    // of visible ASCII without `#`.
    #[schema(
        min_length = 1,
        max_length = 2048,
        pattern = "^https://([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?([/?][!-\"$-~]*)?$",
        example = "https://hooks.example.com/fiscus"
    )]
    pub url: String,
    /// Event types to deliver (`action.approved`, …); omitted or `["*"]` for every type.
    #[schema(value_type = Option<Vec<fiscus_domain::events::SubscribedEventType>>, max_items = 32)]
    pub event_types: Option<Vec<String>>,
    /// What the endpoint is for, as people read it: at most 200 characters, no control characters.
    #[schema(value_type = Option<fiscus_domain::fields::Text<0, 200>>, inline)]
    pub description: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct WebhookEndpointView {
    /// Always `webhook_endpoint`.
    pub object: String,
    pub id: String,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub environment: Environment,
    /// `active`; `pending_approval` (a production endpoint until an operator approves it); `disabled`
    /// (the receiver answered 410, or an operator); `revoked`.
    pub status: String,
    pub status_reason: Option<String>,
    /// The `whsec_…` signing secret: in the registration response only, never again (a replay of the
    /// registration answers without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

fn view(e: &Endpoint, secret: Option<String>) -> WebhookEndpointView {
    WebhookEndpointView {
        object: "webhook_endpoint".into(),
        id: e.id.clone(),
        url: e.url.clone(),
        description: e.description.clone(),
        event_types: e.event_types.clone(),
        environment: e.environment,
        status: e.status.as_str().into(),
        status_reason: e.status_reason.clone(),
        secret,
        created_at: rfc3339(e.created_at),
        updated_at: rfc3339(e.updated_at),
    }
}

fn unsafe_endpoint(why: &Unsafe) -> ApiError {
    ApiError::new(ErrorCode::UnsafeWebhookEndpoint).field("url", why.to_string())
}

/// Registers an endpoint for this application's events (Standard Webhooks v1 signatures).
///
/// The endpoint belongs to the calling application: it receives events about the application's own
/// Financial Actions and workflow runs, and about every action (with `actions:read`) or workflow run (with
/// `workflow:read`) of the workspace when the application holds those scopes, for as long as the application
/// is active and holds `agent:execution:webhooks`. Other applications neither list, revoke nor hear it.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/webhooks",
    request_body(content = WebhookEndpointRequest, example = json!({
        "url": "https://hooks.example.com/fiscus", "event_types": ["action.approved", "action.settled"],
        "description": "Treasury agent"
    })),
    responses((status = 201, description = "Registered; the secret is shown once", body = WebhookEndpointView))
)]
pub async fn post_webhook(
    ctx: Ctx,
    State(state): State<AppState>,
    fiscus_http::json::ApiJson(body): fiscus_http::json::ApiJson<WebhookEndpointRequest>,
) -> Result<Response, ApiError> {
    let environment = ctx.tenant().environment;
    // Loopback targets are a development switch for sandbox endpoints only.
    let allow_loopback = state.settings.webhooks_allow_loopback && environment == Environment::Sandbox;
    let target = webhooks::endpoint(&body.url, allow_loopback).map_err(|e| unsafe_endpoint(&e))?;
    let mut invalid = Vec::new();
    let event_types = match body.event_types {
        None => vec!["*".to_string()],
        Some(types) if types.is_empty() => vec!["*".to_string()],
        Some(mut types) => {
            // The limit counts what was sent, as the schema's `maxItems` does, before repeats are merged.
            if types.len() > 32 {
                invalid.push(("event_types", "at most 32 event types".to_string()));
            }
            types.sort();
            types.dedup();
            for t in &types {
                if t != "*" && EventType::parse(t).is_none() {
                    invalid.push(("event_types", format!("`{t}` is not an event type")));
                }
            }
            types
        }
    };
    let description = body.description.unwrap_or_default();
    if description.chars().count() > 200 || description.chars().any(char::is_control) {
        invalid.push(("description", "at most 200 characters, no control characters".to_string()));
    }
    if !invalid.is_empty() {
        return Err(ApiError::invalid_fields(invalid));
    }
    if target.literal.is_none() {
        // A name that resolves nowhere yet is registered: DNS changes, and every delivery resolves and screens
        // the name again before it connects (`outbound.rs`), which is what keeps a receiver public. A name
        // that resolves now to anything not public is refused now.
        let addresses = state.webhook_hosts.resolve(&target.host, target.port).await;
        for ip in addresses {
            webhooks::screen(ip, allow_loopback).map_err(|e| unsafe_endpoint(&e))?;
        }
    }
    let id = fiscus_domain::ids::new_id("whe");
    let secret = webhooks::new_secret();
    let sealed = SecretBox::new(&state.server_key).seal(secret.as_bytes(), &id).ok_or_else(ApiError::internal)?;
    let now = now_micros();
    let endpoint = Endpoint {
        id: id.clone(),
        environment,
        application_id: ctx.principal.application_id.clone(),
        url: target.url,
        description,
        event_types,
        secret_sealed: sealed,
        status: match environment {
            Environment::Sandbox => EndpointStatus::Active,
            Environment::Production => EndpointStatus::PendingApproval,
        },
        status_reason: (environment == Environment::Production)
            .then(|| "production endpoints need an operator's approval at the console".to_string()),
        created_by: ctx.principal.credential_id.clone(),
        created_at: now,
        updated_at: now,
    };
    let mut tx = state.store.begin().await?;
    fiscus_kernel::tables::webhooks::insert(&mut tx, ctx.tenant(), &endpoint).await?;
    ctx.audit(
        &mut tx,
        Some(&id),
        serde_json::json!({ "url": endpoint.url, "event_types": endpoint.event_types, "status": endpoint.status.as_str() }),
    )
    .await?;
    ctx.respond_once(tx, StatusCode::CREATED, &view(&endpoint, Some(secret)), &view(&endpoint, None)).await
}

/// The calling application's webhook endpoints in this environment (secrets are never shown again); other
/// applications' endpoints are not listed.
///
/// Each with its URL, event types, environment, status (`active`, `pending_approval`, `disabled`, `revoked`) and
/// the reason for it, oldest first. Needs `agent:execution:webhooks`. The `whsec_` signing secret is never
/// returned again, and listing delivers, approves and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/webhooks",
    params(PageParams),
    responses((status = 200, description = "Registrations", body = ListPage<WebhookEndpointView>))
)]
pub async fn get_webhooks(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<WebhookEndpointView>>, ApiError> {
    params.only(&[])?;
    let mut conn = state.store.read().await?;
    let rows = fiscus_kernel::tables::webhooks::list(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        &ctx.principal.application_id,
        params.page.after_id.as_deref(),
        params.page.limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |e| e.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.iter().map(|e| view(e, None)).collect(),
    }))
}

/// Revokes one of the calling application's endpoints: nothing is delivered to it again. Revoking a revoked
/// endpoint answers it as it is; another application's endpoint is 404.
///
/// The endpoint becomes `revoked` (reason `revoked by its application`), audited; the delivery worker sends only
/// to `active` endpoints. Needs `agent:execution:webhooks`, and only the application that registered the endpoint
/// may revoke it. No operation makes a revoked endpoint active again (register a new one), and revoking touches no
/// other endpoint or credential.
#[utoipa::path(
    delete,
    path = "/api/v2/agent-execution/webhooks/{uid}",
    params(("uid" = String, Path, description = "Endpoint id (whe_…)")),
    responses((status = 200, description = "Revoked", body = WebhookEndpointView), (status = 404, description = "Not in this workspace"))
)]
pub async fn delete_webhook(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<WebhookEndpointView>, ApiError> {
    let mut tx = state.store.begin().await?;
    let key = tx.seal_key().clone();
    let endpoint = fiscus_kernel::tables::webhooks::get_of_application(
        tx.conn(),
        &key,
        ctx.tenant(),
        &ctx.principal.application_id,
        &uid,
    )
    .await?;
    if endpoint.status == EndpointStatus::Revoked {
        return Ok(Json(view(&endpoint, None)));
    }
    let now = now_micros();
    fiscus_kernel::tables::webhooks::set_status(
        &mut tx,
        ctx.tenant(),
        &uid,
        endpoint.status,
        EndpointStatus::Revoked,
        Some("revoked by its application"),
        now,
    )
    .await?;
    ctx.audit(&mut tx, Some(&uid), serde_json::json!({ "from": endpoint.status.as_str(), "to": "revoked" })).await?;
    tx.commit().await?;
    let revoked = Endpoint {
        status: EndpointStatus::Revoked,
        status_reason: Some("revoked by its application".into()),
        updated_at: now,
        ..endpoint
    };
    Ok(Json(view(&revoked, None)))
}

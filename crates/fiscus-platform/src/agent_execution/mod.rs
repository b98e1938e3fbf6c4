//! The agent-execution gateway's own reads: an action's assurance, the evidence of each gateway request,
//! and the caller's capabilities, service level and usage (`gateway`).

use axum::Json;
use axum::extract::State;
use fiscus_actions::rules::autonomy::AssessmentDomain;
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::rfc3339;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

pub mod gateway;
pub mod webhooks;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_assurance))
        .routes(routes!(get_request))
        .routes(routes!(gateway::get_capabilities))
        .routes(routes!(gateway::get_service_level))
        .routes(routes!(gateway::get_usage))
        .routes(routes!(webhooks::post_webhook, webhooks::get_webhooks))
        .routes(routes!(webhooks::delete_webhook))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct DomainCoverage {
    pub domain: AssessmentDomain,
    /// Evidence records in this domain (this workspace and environment).
    pub evidence_records: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AssuranceView {
    /// Always `action_assurance`.
    pub object: String,
    pub action_id: String,
    pub envelope_hash: String,
    pub control_state: ControlState,
    /// Autonomy assessment evidence across the eight domains.
    pub domains: Vec<DomainCoverage>,
    /// Domains with at least one record, of eight.
    pub covered_domains: usize,
    pub coverage: f64,
    /// Always false: assurance informs people; it grants no execution authority.
    pub grants_authority: bool,
}

/// Aggregate workspace assurance (autonomy evidence coverage per domain) beside the action's envelope hash.
///
/// The autonomy assessment evidence of the caller's workspace and environment counted in each of the eight
/// domains, with `covered_domains` and `coverage` (the share with at least one record), beside the seal-checked
/// action's `envelope_hash` and control state. The coverage is the workspace's, not a verdict on the action. Needs
/// `agent:execution:read`. `grants_authority` is always false: assurance informs people and opens no execution
/// gate.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/actions/{uid}/assurance",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "Aggregate workspace assurance and the action envelope hash", body = AssuranceView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_assurance(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<AssuranceView>, ApiError> {
    let mut conn = state.store.read().await?;
    let row = fiscus_actions::tables::actions::get(&mut conn, ctx.tenant(), &uid).await?;
    let action =
        fiscus_actions::steps::Loaded::load(&mut conn, state.store.seal_key(), ctx.tenant(), row).await?.action;
    let counts = fiscus_actions::tables::autonomy_evidence::count_by_domain(&mut conn, ctx.tenant()).await?;
    let domains: Vec<DomainCoverage> = AssessmentDomain::ALL
        .into_iter()
        .map(|d| DomainCoverage {
            domain: d,
            evidence_records: counts.iter().find(|(name, _)| name == d.as_str()).map(|(_, n)| *n).unwrap_or(0),
        })
        .collect();
    let covered = domains.iter().filter(|d| d.evidence_records > 0).count();
    Ok(Json(AssuranceView {
        object: "action_assurance".into(),
        control_state: action.state,
        action_id: action.id,
        envelope_hash: action.envelope_hash,
        covered_domains: covered,
        coverage: covered as f64 / AssessmentDomain::ALL.len() as f64,
        domains,
        grants_authority: false,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentRequestView {
    /// Always `agent_request`.
    pub object: String,
    pub id: String,
    pub application_id: String,
    pub credential_id: String,
    pub operation: String,
    pub method: String,
    pub path: String,
    pub status: i64,
    /// `sha256:` of the request body.
    pub request_hash: String,
    /// `sha256:` of the response body.
    pub response_hash: String,
    /// `sha256:` of the RFC 8785 form of this record (with the workspace and environment).
    pub evidence_hash: String,
    pub request_id: String,
    pub created_at: String,
}

/// Evidence of one agent-execution gateway request (its id is returned in `Agent-Request-Id`).
///
/// Fiscus seals a record of every `/agent-execution/…` request, accepted or refused: application, credential,
/// operation, method, path, status, the SHA-256 of the request and response bodies, and `evidence_hash` over them.
/// Any record of the caller's workspace and environment is readable, whichever credential made the request. Needs
/// `agent:execution:read`. A record holds hashes, never the bodies or any secret, and reading one changes none.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/requests/{uid}",
    params(("uid" = String, Path, description = "Request evidence id (areq_…)")),
    responses((status = 200, description = "Request evidence", body = AgentRequestView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_request(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<AgentRequestView>, ApiError> {
    let mut conn = state.store.read().await?;
    let r = fiscus_http::tables::agent_requests::get(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?;
    Ok(Json(AgentRequestView {
        object: "agent_request".into(),
        created_at: rfc3339(r.created_at),
        id: r.id,
        application_id: r.application_id,
        credential_id: r.credential_id,
        operation: r.operation,
        method: r.method,
        path: r.path,
        status: r.status,
        request_hash: r.request_hash,
        response_hash: r.response_hash,
        evidence_hash: r.evidence_hash,
        request_id: r.request_id,
    }))
}

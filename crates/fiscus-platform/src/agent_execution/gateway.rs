//! The gateway describing the caller to itself: what it may call (capabilities), how much (service level)
//! and what it did (usage, with the hashes of its sealed request evidence). A signed execution client sees
//! its grant; a bearer credential sees what its scopes allow.

use axum::Json;
use axum::extract::State;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::catalogue::{self, Operation};
use fiscus_domain::clock::{now_micros, rfc3339, utc_month};
use fiscus_domain::credentials::Environment;
use serde::{Deserialize, Serialize};

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

/// How the caller authenticated.
#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentAuthentication {
    /// An RFC 9421 request signature of a signed execution client.
    Signature,
    /// A bearer API key or OAuth access token.
    Bearer,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentOperationRef {
    #[schema(example = "get_agent_execution_actions_uid")]
    pub operation_id: String,
    #[schema(example = "GET")]
    pub method: String,
    #[schema(example = "/api/v2/agent-execution/actions/{uid}")]
    pub path: String,
    #[schema(example = "agent:execution:read")]
    pub scope: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentGrantRef {
    /// The console decision in force (versions count up from 1).
    #[schema(minimum = 1)]
    pub version: i64,
    /// `sha256:` of the decision (RFC 8785), as recorded in the audit trail.
    pub decision_hash: String,
    /// RFC 3339; after it every signed request is refused.
    pub expires_at: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentCapabilitiesView {
    /// Always `agent_capabilities`.
    pub object: String,
    pub authentication: AgentAuthentication,
    /// The signed client (`ecl_…`, its RFC 9421 `keyid`); null for a bearer credential.
    pub client_id: Option<String>,
    pub application_id: String,
    pub environment: Environment,
    /// The grant in force (signed clients only).
    pub grant: Option<AgentGrantRef>,
    /// Served operations this caller may call now (and, as tools, through MCP and A2A).
    pub operations: Vec<AgentOperationRef>,
    /// Financial Action kinds it may propose, submit or ask to execute.
    pub action_kinds: Vec<ActionKind>,
    /// Always false: nothing here approves or executes; people and the action gates decide.
    pub grants_authority: bool,
}

fn operation_ref(op: &Operation) -> AgentOperationRef {
    AgentOperationRef {
        operation_id: op.id.to_string(),
        method: op.method.as_str().to_string(),
        path: op.full_path(),
        scope: op.scope.unwrap_or_default().to_string(),
    }
}

/// The operations and action kinds of the signed client (or of the bearer credential's scopes).
///
/// The served operations whose scope the caller holds (for a signed client, only those its grant names), each with
/// method, path and scope, and the action kinds it may propose, submit or ask to execute (every kind for a bearer
/// credential); a signed client also sees the grant in force (version, `decision_hash`, expiry). Needs
/// `agent:execution:read`. `grants_authority` is always false: an operation listed never stands in for an approval
/// or an execution gate.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/capabilities",
    responses((status = 200, description = "What the caller may call, and the grant in force", body = AgentCapabilitiesView))
)]
pub async fn get_capabilities(ctx: Ctx) -> Result<Json<AgentCapabilitiesView>, ApiError> {
    let scopes = &ctx.principal.scopes;
    let allowed = |op: &&Operation| {
        ctx.api.serves(op.id)
            && op.scope.is_some_and(|s| scopes.contains(s))
            && ctx.signed.as_ref().is_none_or(|c| c.grant.allows(op.id))
    };
    let operations = catalogue::OPERATIONS.iter().filter(allowed).map(operation_ref).collect();
    let (authentication, client_id, grant, action_kinds) = match &ctx.signed {
        Some(c) => (
            AgentAuthentication::Signature,
            Some(c.client_id.clone()),
            Some(AgentGrantRef {
                version: c.decision_version,
                decision_hash: c.decision_hash.clone(),
                expires_at: c.grant.expires_at.map(rfc3339),
            }),
            c.grant.action_kinds.clone(),
        ),
        None => (AgentAuthentication::Bearer, None, None, ActionKind::ALL.to_vec()),
    };
    Ok(Json(AgentCapabilitiesView {
        object: "agent_capabilities".into(),
        authentication,
        client_id,
        application_id: ctx.principal.application_id.clone(),
        environment: ctx.principal.tenant.environment,
        grant,
        operations,
        action_kinds,
        grants_authority: false,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentRateLimitView {
    /// Requests allowed per window.
    #[schema(minimum = 1)]
    pub limit: u64,
    #[schema(minimum = 1)]
    pub window_seconds: u64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentMonthlyQuotaView {
    /// Requests allowed per UTC calendar month.
    #[schema(minimum = 1)]
    pub limit: u64,
    /// Requests counted this month (as this node counts them; see the note on `used`).
    #[schema(minimum = 0)]
    pub used: u64,
    #[schema(minimum = 0)]
    pub remaining: u64,
    /// RFC 3339: the start of the next month (UTC).
    pub resets_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentServiceLevelView {
    /// Always `agent_service_level`.
    pub object: String,
    pub authentication: AgentAuthentication,
    pub client_id: Option<String>,
    /// The application's service class (shared by all its credentials and clients).
    pub service_class: String,
    pub rate_limit: AgentRateLimitView,
    /// The signed client's own per-minute limit (its grant).
    pub client_rate_limit: Option<AgentRateLimitView>,
    /// The signed client's monthly request quota (its grant).
    pub monthly_quota: Option<AgentMonthlyQuotaView>,
}

/// The rate limit and monthly request quota in force, with what is used.
///
/// The application's service class and its rate limit, which all the application's keys, tokens and signed clients
/// share; a signed client also sees its grant's per-minute limit and its monthly quota with `used`, `remaining`
/// and `resets_at` (the next UTC month). Each node counts the requests it serves, so with several nodes `used` may
/// trail. Needs `agent:execution:read`; reading it changes no limit.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/service-level",
    responses((status = 200, description = "Rate limit and monthly request quota with use", body = AgentServiceLevelView))
)]
pub async fn get_service_level(
    ctx: Ctx,
    State(state): State<AppState>,
) -> Result<Json<AgentServiceLevelView>, ApiError> {
    let (class_name, class) = state.settings.service_class(&ctx.principal.service_class);
    let now = now_micros();
    let (client_rate_limit, monthly_quota) = match &ctx.signed {
        Some(c) => {
            let used = state.http.monthly.used(&state.store, ctx.principal.workspace_id(), &c.client_id, now).await?;
            let (_, next) = utc_month(now);
            (
                Some(AgentRateLimitView { limit: u64::from(c.grant.rate_limit_per_minute), window_seconds: 60 }),
                Some(AgentMonthlyQuotaView {
                    limit: c.grant.monthly_quota,
                    used,
                    remaining: c.grant.monthly_quota.saturating_sub(used),
                    resets_at: rfc3339(next),
                }),
            )
        }
        None => (None, None),
    };
    Ok(Json(AgentServiceLevelView {
        object: "agent_service_level".into(),
        authentication: if ctx.signed.is_some() { AgentAuthentication::Signature } else { AgentAuthentication::Bearer },
        client_id: ctx.signed.as_ref().map(|c| c.client_id.clone()),
        service_class: class_name,
        rate_limit: AgentRateLimitView { limit: class.quota, window_seconds: class.window_seconds },
        client_rate_limit,
        monthly_quota,
    }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// How many of the newest request evidence records to list (1 to 100, default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentOperationUsage {
    pub operation_id: String,
    #[schema(minimum = 0)]
    pub requests: i64,
    /// Requests answered with a 4xx or 5xx status.
    #[schema(minimum = 0)]
    pub errors: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentEvidenceRef {
    /// The request evidence (`areq_…`, readable at `/agent-execution/requests/{uid}`).
    pub id: String,
    pub operation_id: String,
    pub status: i64,
    /// `sha256:` of the sealed record (RFC 8785).
    pub evidence_hash: String,
    pub created_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentUsageView {
    /// Always `agent_usage`.
    pub object: String,
    /// The key, token or signed client counted.
    pub credential_id: String,
    /// The UTC month counted (`YYYY-MM`).
    pub month: String,
    /// Requests this month, from the usage counters (flushed about once a second).
    #[schema(minimum = 0)]
    pub requests: i64,
    #[schema(minimum = 0)]
    pub errors: i64,
    pub by_operation: Vec<AgentOperationUsage>,
    /// Gateway requests this month with sealed request evidence.
    #[schema(minimum = 0)]
    pub evidence_records: i64,
    /// The newest request evidence, newest first.
    pub recent_evidence: Vec<AgentEvidenceRef>,
}

/// Request and operation evidence of this credential: counts this month, per operation, and the hashes of
/// its newest sealed request evidence.
///
/// This credential's requests and error responses this UTC month per operation (from the usage counters, flushed
/// about once a second), how many of its gateway requests left sealed evidence this month, and its newest evidence
/// records (`limit`, 1 to 100, default 20) with their `evidence_hash`. Needs `agent:execution:read`. Only the
/// calling key, token or signed client is counted, never another credential of the application; the read adds only
/// its own request evidence.
#[utoipa::path(
    get,
    path = "/api/v2/agent-execution/usage",
    params(UsageQuery),
    responses((status = 200, description = "Request and operation evidence", body = AgentUsageView))
)]
pub async fn get_usage(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UsageQuery>,
) -> Result<Json<AgentUsageView>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let now = now_micros();
    let (month, _) = utc_month(now);
    let month_start = fiscus_domain::clock::parse_rfc3339(&format!("{month}-01T00:00:00Z")).unwrap_or(0);
    let tenant = ctx.tenant();
    let credential = &ctx.principal.credential_id;
    let mut conn = state.store.read().await?;
    let rows = fiscus_kernel::tables::usage::list(&mut conn, tenant, &format!("{month}-01")).await?;
    let mut by_operation: Vec<AgentOperationUsage> = Vec::new();
    for r in rows.into_iter().filter(|r| &r.credential_id == credential) {
        match by_operation.iter_mut().find(|o| o.operation_id == r.operation) {
            Some(o) => {
                o.requests += r.requests;
                o.errors += r.errors;
            }
            None => by_operation.push(AgentOperationUsage {
                operation_id: r.operation,
                requests: r.requests,
                errors: r.errors,
            }),
        }
    }
    by_operation.sort_by(|a, b| a.operation_id.cmp(&b.operation_id));
    let evidence_records =
        fiscus_http::tables::agent_requests::count_for_credential(&mut conn, tenant, credential, month_start).await?;
    let recent = fiscus_http::tables::agent_requests::recent_for_credential(
        &mut conn,
        state.store.seal_key(),
        tenant,
        credential,
        limit,
    )
    .await?;
    Ok(Json(AgentUsageView {
        object: "agent_usage".into(),
        credential_id: credential.clone(),
        month,
        requests: by_operation.iter().map(|o| o.requests).sum(),
        errors: by_operation.iter().map(|o| o.errors).sum(),
        by_operation,
        evidence_records,
        recent_evidence: recent
            .into_iter()
            .map(|r| AgentEvidenceRef {
                id: r.id,
                operation_id: r.operation,
                status: r.status,
                evidence_hash: r.evidence_hash,
                created_at: rfc3339(r.created_at),
            })
            .collect(),
    }))
}

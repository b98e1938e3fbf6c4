//! Infrastructure reads. Each reports what is actually true of this deployment, never a brochure.

use crate::views::{
    AuditHeadView, DataEntitlementView, KeyPostureView, OperatorPostureView, PostureView, ProductionAccessView,
    RegionView, SecretsPostureView, ServiceClassView, UsageRowView, UsageView,
};
use axum::Json;
use axum::extract::State;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros, rfc3339, utc_day};
use fiscus_domain::scopes::{SCOPES, ScopeSet};
use fiscus_http::list::ListPage;
use serde::Deserialize;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;
use fiscus_kernel::secret_key::KeySource;

const DAY: i64 = 24 * 3600 * MICROS_PER_SECOND;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UsageQuery {
    /// First UTC day to count (`YYYY-MM-DD`); defaults to 30 days ago.
    #[param(format = Date)]
    pub since: Option<String>,
}

/// Requests per credential, operation and day, from the service's request log.
///
/// Requests and error responses (4xx or 5xx) of every application of the caller's workspace and environment, by
/// credential, operation and UTC day, from `since` (default 30 days ago; not a date is 422 `invalid_parameter`),
/// with totals; this node's unflushed counts are written first. Needs `infrastructure:read`. Counts only: no
/// request bodies, addresses or secrets.
#[utoipa::path(get, path = "/api/v2/infrastructure/usage", params(UsageQuery), responses((status = 200, description = "Usage of this workspace and environment", body = UsageView)))]
pub async fn get_usage(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<UsageQuery>,
) -> Result<Json<UsageView>, ApiError> {
    let since = match query.since {
        Some(day) if is_day(&day) => day,
        Some(_) => {
            return Err(ApiError::new(fiscus_domain::error_code::ErrorCode::InvalidParameter)
                .field("since", "must be a date YYYY-MM-DD"));
        }
        None => utc_day(now_micros() - 30 * DAY),
    };
    // Count everything served so far, including this node's not yet flushed requests.
    state.usage.flush(&state.store).await?;
    let mut conn = state.store.read().await?;
    let rows = fiscus_kernel::tables::usage::list(&mut conn, ctx.tenant(), &since).await?;
    let data: Vec<UsageRowView> = rows
        .into_iter()
        .map(|r| UsageRowView {
            application_id: r.application_id,
            credential_id: r.credential_id,
            operation: r.operation,
            day: r.day,
            requests: r.requests,
            errors: r.errors,
        })
        .collect();
    Ok(Json(UsageView {
        object: "usage".into(),
        environment: ctx.principal.tenant.environment,
        since,
        total_requests: data.iter().map(|r| r.requests).sum(),
        total_errors: data.iter().map(|r| r.errors).sum(),
        data,
    }))
}

fn is_day(s: &str) -> bool {
    s.len() == 10 && fiscus_domain::clock::parse_rfc3339(&format!("{s}T00:00:00Z")).is_some()
}

/// The regions serving this workspace: this deployment's one region and its database.
///
/// The deployment's configured region, primary and `active`, with its database backend (`sqlite` or `postgres`);
/// the same answer for every workspace. Needs `infrastructure:read`; changes nothing.
#[utoipa::path(get, path = "/api/v2/infrastructure/regions", responses((status = 200, description = "Regions", body = ListPage<RegionView>)))]
pub async fn get_regions(_ctx: Ctx, State(state): State<AppState>) -> Json<ListPage<RegionView>> {
    Json(ListPage::complete(vec![RegionView {
        object: "region".into(),
        id: state.settings.region.clone(),
        primary: true,
        status: "active".into(),
        database_backend: state.store.backend().name().into(),
    }]))
}

/// The rate-limit classes this deployment enforces, and which one applies to the caller.
///
/// Each configured class with its request quota and window, and `current` for the class of the caller. The limit
/// is enforced per application (all its keys, tokens and signed clients share one quota) in fixed windows counted
/// in each node's memory; a signed client also has its grant's limits (`GET /agent-execution/service-level`).
/// Needs `infrastructure:read`; reading changes no class.
#[utoipa::path(get, path = "/api/v2/infrastructure/service-classes", responses((status = 200, description = "Service classes", body = ListPage<ServiceClassView>)))]
pub async fn get_service_classes(ctx: Ctx, State(state): State<AppState>) -> Json<ListPage<ServiceClassView>> {
    let (current, _) = state.settings.service_class(&ctx.principal.service_class);
    Json(ListPage::complete(
        state
            .settings
            .service_classes
            .iter()
            .map(|(name, class)| ServiceClassView {
                object: "service_class".into(),
                name: name.clone(),
                quota: class.quota,
                window_seconds: class.window_seconds,
                current: *name == current,
                enforcement:
                    "per application (its keys, tokens and signed clients share one count), fixed window, per node"
                        .into(),
            })
            .collect(),
    ))
}

/// The workspace's security posture as it stands.
///
/// Production access; the workspace's active API keys by environment and age, and those without expiry; active
/// OAuth clients; how credential secrets are stored (`hmac-sha256`, never recoverable) and where the server key
/// comes from; operators' second-factor coverage; and the audit chain's head. Needs `infrastructure:read`. Counts
/// and ages only: no key, secret or operator is named, and nothing changes.
#[utoipa::path(get, path = "/api/v2/infrastructure/posture", responses((status = 200, description = "Posture", body = PostureView)))]
pub async fn get_posture(ctx: Ctx, State(state): State<AppState>) -> Result<Json<PostureView>, ApiError> {
    let now = now_micros();
    let workspace_id = ctx.principal.workspace_id();
    let mut conn = state.store.read().await?;
    let ws = fiscus_store::workspaces::get(&mut conn, workspace_id).await?;
    let keys = fiscus_store::credentials::active_key_facts(&mut conn, workspace_id).await?;
    let clients = fiscus_store::credentials::count_active_oauth_clients(&mut conn, workspace_id).await?;
    let (seq, hash, _) = fiscus_store::audit::head(&mut conn, workspace_id).await?;
    let (operators, with_second_factor) =
        fiscus_store::operators::second_factor_coverage(&mut conn, workspace_id).await?;
    let ages: Vec<f64> = keys.iter().map(|k| (now - k.created_at) as f64 / DAY as f64).collect();
    let api_keys = KeyPostureView {
        active: keys.len() as i64,
        active_sandbox: keys.iter().filter(|k| k.environment == "sandbox").count() as i64,
        active_production: keys.iter().filter(|k| k.environment == "production").count() as i64,
        oldest_age_days: ages.iter().copied().reduce(f64::max),
        average_age_days: (!ages.is_empty()).then(|| ages.iter().sum::<f64>() / ages.len() as f64),
        older_than_90_days: ages.iter().filter(|a| **a > 90.0).count() as i64,
        without_expiry: keys.iter().filter(|k| k.expires_at.is_none()).count() as i64,
    };
    Ok(Json(PostureView {
        object: "posture".into(),
        workspace_id: workspace_id.to_string(),
        evaluated_at: rfc3339(now),
        production_access: ProductionAccessView { enabled: ws.production_access() },
        api_keys,
        oauth_clients_active: clients,
        secrets: SecretsPostureView {
            credential_storage: "hmac-sha256".into(),
            server_key_source: match state.key_source {
                KeySource::File => "file".into(),
                KeySource::Generated => "generated".into(),
            },
            stored_reversible_secrets: 0,
            reversible_secret_encryption: "none stored".into(),
        },
        operators: OperatorPostureView {
            operators,
            with_second_factor,
            second_factor_coverage: (operators > 0).then(|| with_second_factor as f64 / operators as f64),
        },
        audit_chain: AuditHeadView { object: "audit_head".into(), workspace_id: workspace_id.to_string(), seq, hash },
    }))
}

/// The data domains a scope opens.
fn data_domain(scope: &str) -> Option<&'static str> {
    Some(match scope {
        "data:economics:read" => "economic series",
        "data:fundamentals:read" => "instrument fundamentals",
        "data:market:read" => "market prices and corporate actions",
        "data:reference:read" => "instruments and datasets (reference data)",
        "data:tables:read" | "data:tables:run" => "data tables",
        "finance-core:read" => "finance core: entities and journals",
        "finance-core:close:read" => "finance core: period close",
        "finance-core:reports:read" => "finance core: reports",
        "finance-core:recommendations:read" => "finance core: recommendations",
        "financial:read" => "financial transactions and snapshots",
        "financial:analysis:read" | "financial:analysis:run" => "financial analysis",
        "investment:read" => "investment portfolios, risk and reports",
        "quant:features:read" => "quant features",
        _ => return None,
    })
}

/// Which data domains the workspace is entitled to and which the caller may read.
///
/// For each data scope (economic series, fundamentals, market prices, reference data, data tables, finance core,
/// financial transactions, analysis, investment, quant features), whether the workspace is entitled to it and
/// whether the calling credential holds it. Needs `infrastructure:read`. It reads no data and grants no scope.
#[utoipa::path(get, path = "/api/v2/infrastructure/data-entitlements", responses((status = 200, description = "Data entitlements", body = ListPage<DataEntitlementView>)))]
pub async fn get_data_entitlements(
    ctx: Ctx,
    State(state): State<AppState>,
) -> Result<Json<ListPage<DataEntitlementView>>, ApiError> {
    let mut conn = state.store.read().await?;
    let ws = fiscus_store::workspaces::get(&mut conn, ctx.principal.workspace_id()).await?;
    let entitled: ScopeSet = ws.entitlement();
    let data = SCOPES
        .iter()
        .filter_map(|scope| {
            data_domain(scope).map(|domain| DataEntitlementView {
                object: "data_entitlement".into(),
                scope: scope.to_string(),
                domain: domain.into(),
                workspace_entitled: entitled.contains(scope),
                granted_to_caller: ctx.principal.scopes.contains(scope),
            })
        })
        .collect();
    Ok(Json(ListPage::complete(data)))
}

//! `GET /intelligence/summary`: the workspace's activity and evidence in one sealed read: its Financial
//! Actions by state, workflow runs by state, compute jobs by kind and state, models and promotions, data by
//! kind, and the audit chain's head it was read at. The summary's hash covers all of it, the head included,
//! so a summary shown elsewhere can be checked against the chain (`GET /trust/audit-head`).

use axum::Json;
use axum::extract::State;
use fiscus_domain::clock::{now_micros, rfc3339};
use serde::Serialize;
use serde_json::{Map, Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_summary))
}

/// The audit chain's head the summary was read at.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SummaryAuditHead {
    pub seq: i64,
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub hash: String,
}

/// The workspace's activity, sealed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct IntelligenceSummary {
    /// Always `intelligence_summary`.
    pub object: &'static str,
    pub workspace_id: String,
    pub environment: String,
    pub generated_at: String,
    /// Financial Actions by control state.
    #[schema(value_type = Object, example = json!({"completed": 3, "pending_approval": 1}))]
    pub actions: Value,
    /// Workflow runs by state.
    #[schema(value_type = Object, example = json!({"awaiting_review": 1, "completed": 2}))]
    pub workflow_runs: Value,
    /// Compute jobs by kind, then state.
    #[schema(value_type = Object, example = json!({"optimization": {"succeeded": 2}}))]
    pub compute_jobs: Value,
    /// LQMs registered, and promotions by state.
    #[schema(value_type = Object, example = json!({"models": 1, "promotions": {"active": 1}}))]
    pub lqm: Value,
    /// Datasets by kind (shared by both environments).
    #[schema(value_type = Object, example = json!({"prices": 4, "economics": 6}))]
    pub datasets: Value,
    pub audit_head: SummaryAuditHead,
    /// `sha256:` of this summary without this member (RFC 8785).
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub summary_hash: String,
}

fn counts<T>(rows: &[(T, i64)], name: impl Fn(&T) -> &'static str) -> Value {
    Value::Object(rows.iter().map(|(k, n)| (name(k).to_string(), json!(n))).collect::<Map<_, _>>())
}

/// The workspace's activity in this environment and the audit head it was read at, sealed by its hash.
///
/// Financial Actions by control state, workflow runs by state, compute jobs by kind and state, LQMs registered and
/// their promotions by state in the caller's workspace and environment, and the workspace's datasets by kind
/// (datasets serve both environments), with the audit chain's head; `summary_hash` is the SHA-256 of the RFC 8785
/// form of all of it. Needs `intelligence:read`. Counts only: no record's content is returned, and nothing is
/// changed.
#[utoipa::path(
    get,
    path = "/api/v2/intelligence/summary",
    responses((status = 200, description = "The summary", body = IntelligenceSummary))
)]
pub async fn get_summary(ctx: Ctx, State(state): State<AppState>) -> Result<Json<IntelligenceSummary>, ApiError> {
    let tenant = ctx.tenant();
    let mut conn = state.store.read().await?;
    let a = crate::tables::activity::of(&mut conn, tenant).await?;
    drop(conn);
    let mut jobs: Map<String, Value> = Map::new();
    for (kind, job_state, n) in &a.compute_jobs {
        let entry = jobs.entry(kind.as_str().to_string()).or_insert_with(|| json!({}));
        entry[job_state.as_str()] = json!(n);
    }
    let mut summary = IntelligenceSummary {
        object: "intelligence_summary",
        workspace_id: tenant.workspace_id.clone(),
        environment: tenant.environment.as_str().to_string(),
        generated_at: rfc3339(now_micros()),
        actions: counts(&a.actions, |s| s.as_str()),
        workflow_runs: counts(&a.workflow_runs, |s| s.as_str()),
        compute_jobs: Value::Object(jobs),
        lqm: json!({"models": a.lqm_models, "promotions": counts(&a.lqm_promotions, |s| s.as_str())}),
        datasets: counts(&a.datasets, |k| k.as_str()),
        audit_head: SummaryAuditHead { seq: a.audit_head.0, hash: a.audit_head.1 },
        summary_hash: String::new(),
    };
    let mut content =
        serde_json::to_value(&summary).map_err(|e| fiscus_kernel::governed::Failure::internal(e.to_string()))?;
    if let Value::Object(m) = &mut content {
        m.remove("summary_hash");
    }
    summary.summary_hash = fiscus_kernel::governed::canonical("intelligence summary", &content)?.1;
    Ok(Json(summary))
}

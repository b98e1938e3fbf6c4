//! `/workflows/proof-of-value`: what a workflow's runs did, against a stated manual baseline.

use crate::rules::workflows::records::{Baseline, ValueFigures};
use crate::tables::workflows::Proof;
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use crate::workflows::value::{self, ProofRequest};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

/// An ended run a proof counted, with its evidence hash.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CountedRun {
    pub run_id: String,
    pub evidence_hash: String,
}

/// A proof of value.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ProofOfValueView {
    /// Always `workflow_proof_of_value`.
    pub object: &'static str,
    #[schema(example = "wpv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub workflow_id: String,
    pub workflow_name: String,
    pub baseline: Baseline,
    pub figures: ValueFigures,
    /// The ended runs counted (the most recent 1,000 runs are considered).
    pub evidence: Vec<CountedRun>,
    /// `sha256:` of the record (RFC 8785); the row is sealed.
    pub proof_hash: String,
    pub created_by: String,
    pub created_at: String,
}

fn view(p: Proof) -> ProofOfValueView {
    ProofOfValueView {
        object: "workflow_proof_of_value",
        id: p.id,
        workflow_id: p.body.workflow_id,
        workflow_name: p.body.workflow_name,
        baseline: p.body.baseline,
        figures: p.body.figures,
        evidence: p
            .body
            .evidence
            .into_iter()
            .map(|(run_id, evidence_hash)| CountedRun { run_id, evidence_hash })
            .collect(),
        proof_hash: p.content_hash,
        created_by: p.created_by.label(),
        created_at: rfc3339(p.created_at),
    }
}

/// Measures a workflow's runs against the manual baseline stated: runs by outcome, steps the runtime
/// completed, reviews people decided, the median run time, and the minutes and cost saved (each figure's
/// formula is in its schema). Sealed; it executes nothing.
///
/// Needs `workflow:manage`. Every version's runs count, the newest 1,000; steps, reviews and the median come
/// from completed runs only, and the savings are arithmetic on the baseline the caller states, recorded as
/// given. The proof cites each ended run's evidence hash; it changes no run.
#[utoipa::path(
    post,
    path = "/api/v2/workflows/proof-of-value",
    request_body(content = ProofRequest, example = json!({
        "workflow_uid": "wfl_01M8C3ZQ5V6J1P8N2T4W0XK7RD",
        "baseline": {"minutes_per_run": 90, "minutes_per_review": 15, "hourly_cost_minor": 12000, "currency": "USD"}
    })),
    responses(
        (status = 201, description = "Recorded", body = ProofOfValueView, headers(("Location" = String, description = "The proofs"))),
        (status = 422, description = "Bad input (a baseline out of range, an unknown currency); a workflow this workspace does not hold is 409 `reference_not_found`")
    )
)]
pub async fn post_proof(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProofRequest>,
) -> Result<Response, ApiError> {
    let proof = value::prove(&state, &ctx.caller(), ctx.tenant(), body).await?;
    Ok(created(Some("/api/v2/workflows/proof-of-value".to_string()), view(proof)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ProofsQuery {
    /// Per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^wpv_[0-9A-HJKMNP-TV-Z]{26}$", example = "wpv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The proofs of value of this workspace and environment, newest first.
///
/// Each proof as sealed: the workflow, baseline, figures, the runs it counted with their evidence hashes, and
/// `proof_hash`. Needs `workflow:read`; reading computes nothing again.
#[utoipa::path(
    get,
    path = "/api/v2/workflows/proof-of-value",
    params(ProofsQuery),
    responses((status = 200, description = "Proofs of value", body = ListPage<ProofOfValueView>), (status = 422, description = "Bad query parameter"))
)]
pub async fn get_proofs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ProofsQuery>,
) -> Result<Json<ListPage<ProofOfValueView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "wpv", "a proof")?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::workflows::list_proofs(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    Ok(Json(ListPage::from_overfetch(rows, limit, |p| p.id.clone()).map(view)))
}

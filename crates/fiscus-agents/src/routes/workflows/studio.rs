//! `/workflow-studio/…`: versions written in the studio, and validation campaigns.

use crate::rules::workflows::campaign::Suite;
use axum::Json;
use axum::extract::State;
use axum::response::Response;

use super::views::{WorkflowCampaignView, WorkflowVersionView, accepted, campaign_view, version_view};
use crate::workflows::{campaigns, studio};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::{ApiJson, OptionalJson};
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// Writes a definition as a new workflow (with `name`) or as the next version of one (`workflow_uid`). A
/// definition is a DAG of typed steps; it is refused whole when a kind or parameter is unknown (422), or
/// when a dependency names no step, the graph has a cycle, or a step reads what does not run before it (409
/// `conflict`: rules across steps that no schema states).
///
/// Needs `workflow:manage`. Versions are immutable: a change is the next version of the same workflow (409
/// `conflict` when another was written meanwhile). Connected steps (agent, integration, Financial Action, code
/// runner, sub-workflow, external network) may be written, but a run refuses them (422
/// `step_kind_unavailable`) and so does a validation campaign (422 `invalid_suite`). Writing runs nothing.
#[utoipa::path(
    post,
    path = "/api/v2/workflow-studio/versions",
    request_body(content = studio::CreateVersion, example = json!({
        "name": "Daily VaR watch",
        "definition": {"steps": [
            {"kind": "read_prices", "id": "prices", "instrument": "SPX", "observations": 250},
            {"kind": "measure", "id": "var_95", "after": ["prices"], "input": "prices", "measure": "value_at_risk95"},
            {"kind": "check", "id": "within_appetite", "after": ["var_95"], "input": "var_95", "comparison": "le", "limit": 0.05},
            {"kind": "review", "id": "sign_off", "after": ["within_appetite"], "title": "Sign off the daily VaR"},
            {"kind": "report", "id": "report", "after": ["sign_off"], "title": "Daily VaR", "include": ["var_95", "within_appetite"]}
        ]}
    })),
    responses(
        (status = 201, description = "The version", body = WorkflowVersionView, headers(("Location" = String, description = "The version"))),
        (status = 409, description = "The name is taken, or another version was written meanwhile, or the steps do not fit together: two steps with one id, a dependency that is not a step, a cycle, a step reading what it may not (`conflict`, with `errors` naming each step and field)"),
        (status = 422, description = "Bad input: the definition's problems, each naming its step and field")
    )
)]
pub async fn post_version(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<studio::CreateVersion>,
) -> Result<Response, ApiError> {
    let (workflow, version) = studio::create(&state, &ctx.caller(), ctx.tenant(), body).await?;
    let location = format!("/api/v2/workflow-studio/versions/{}", version.id);
    Ok(created(Some(location), version_view(&workflow, version)))
}

/// One version with its definition.
///
/// The definition as stored, its `definition_hash`, the template it was installed from (`library`), if any, and
/// `version_hash`. Needs `workflow:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/workflow-studio/versions/{uid}",
    params(("uid" = String, Path, description = "The version (`wfv_…`)", example = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The version", body = WorkflowVersionView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_version(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<WorkflowVersionView>, ApiError> {
    let (workflow, version) = studio::load(&state, ctx.tenant(), &uid).await?;
    Ok(Json(version_view(&workflow, version)))
}

/// Runs a validation campaign on a version: each case of the suite (or one case approving every review)
/// to its end, deterministically, with virtual waits, reviews and artifacts; reads and computations are
/// real, on data pinned once. Agent, integration, Financial Action, code-runner, sub-workflow and
/// external-network steps are prohibited. The campaign is done when this answers; its evidence is sealed.
///
/// Needs `workflow:manage`. Without a body, one case approves every review; a suite sent holds 1 to 20 cases
/// (an empty one is 422 `invalid_suite`); `passed` says every case ended as
/// it expected. The sealed campaign records the dataset pins and each case's steps, end state and evidence
/// hash. A campaign starts no run, records no workflow event, asks no person to review, and keeps a report's
/// hash, not the report.
#[utoipa::path(
    post,
    path = "/api/v2/workflow-studio/versions/{uid}/validate",
    params(("uid" = String, Path, description = "The version (`wfv_…`)", example = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = Option<Suite>, description = "The suite (optional)", example = json!({
        "cases": [
            {"name": "approved", "expect": "completed"},
            {"name": "rejected", "reviews": {"sign_off": "reject"}, "expect": "cancelled"}
        ]
    })),
    responses(
        (status = 202, description = "The campaign, done, with durable evidence", body = WorkflowCampaignView,
         headers(("Location" = String, description = "The campaign"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 422, description = "Invalid suite (`invalid_suite`, with `problems` naming each prohibited step and its kind, or a suite of no case), or bad input")
    )
)]
pub async fn post_validate(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<Suite>,
) -> Result<Response, ApiError> {
    let campaign = campaigns::validate(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    let location = format!("/api/v2/workflow-studio/campaigns/{}", campaign.id);
    Ok(accepted(location, campaign_view(campaign)))
}

/// One validation campaign.
///
/// The dataset pins, each case's recorded steps, end state, expectation and evidence hash, `passed` and
/// `campaign_hash`. Needs `workflow:read`; reading it runs nothing again.
#[utoipa::path(
    get,
    path = "/api/v2/workflow-studio/campaigns/{uid}",
    params(("uid" = String, Path, description = "The campaign (`wfc_…`)", example = "wfc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The campaign", body = WorkflowCampaignView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_campaign(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<WorkflowCampaignView>, ApiError> {
    if !fiscus_domain::ids::is_id_of("wfc", &uid) {
        return Err(ApiError::not_found());
    }
    let mut conn = state.store.read().await?;
    let c = crate::tables::workflows::get_campaign(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?;
    Ok(Json(campaign_view(c)))
}

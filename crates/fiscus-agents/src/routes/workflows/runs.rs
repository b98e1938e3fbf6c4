//! `/workflows/runs…`: starting, reading and cancelling runs.

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_http::list::ListPage;
use serde::Deserialize;

use super::views::{WorkflowRunView, accepted, run_view};
use crate::workflows::runs;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// What to run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartWorkflowRun {
    /// The version to run (`wfv_…`).
    #[schema(pattern = "^wfv_[0-9A-HJKMNP-TV-Z]{26}$", example = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub version_uid: String,
}

/// Starts a run of a version on the durable runtime: its read steps are pinned to their newest observed
/// datasets now, a worker runs its steps one at a time (each outcome sealed), a review step waits for a
/// person at the console, and every move is an event (`workflow.invoked`, `…awaiting_review`,
/// `…completed`, `…cancelled`, `…failed`).
///
/// Needs `workflow:manage`. Only local step kinds run: a version with an agent, integration, Financial Action,
/// code-runner, sub-workflow or external-network step is refused before anything starts (422
/// `step_kind_unavailable`), as is a read step whose newest dataset is synthetic. A review is decided only by an
/// admin or approver at `/console/workflow-reviews` (approve: the run goes on; reject: it is cancelled); no
/// credential decides one. A run executes no Financial Action and calls no agent, integration or network.
#[utoipa::path(
    post,
    path = "/api/v2/workflows/runs",
    request_body(content = StartWorkflowRun, example = json!({"version_uid": "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD"})),
    responses(
        (status = 202, description = "Queued", body = WorkflowRunView, headers(("Location" = String, description = "The run"))),
        (status = 422, description = "A read step with no observed data, or steps this runtime does not run (`step_kind_unavailable`, with `steps`)")
    )
)]
pub async fn post_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<StartWorkflowRun>,
) -> Result<Response, ApiError> {
    let run = runs::start(&state, &ctx.caller(), ctx.tenant(), &body.version_uid).await?;
    let location = format!("/api/v2/workflows/runs/{}", run.record.id);
    Ok(accepted(location, run_view(run, Some(Vec::new()))))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct WorkflowRunsQuery {
    /// Per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^wfr_[0-9A-HJKMNP-TV-Z]{26}$", example = "wfr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The runs of this workspace and environment, newest first.
///
/// Each run with its state, pins, evidence hash once ended, and who started it; the list leaves out the steps
/// (`GET /workflows/runs/{uid}` has them). Needs `workflow:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/workflows/runs",
    params(WorkflowRunsQuery),
    responses((status = 200, description = "Runs", body = ListPage<WorkflowRunView>), (status = 422, description = "Bad query parameter"))
)]
pub async fn get_runs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<WorkflowRunsQuery>,
) -> Result<Json<ListPage<WorkflowRunView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "wfr", "a run")?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::workflows::list_runs(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    Ok(Json(ListPage::from_overfetch(rows, limit, |r| r.record.id.clone()).map(|r| run_view(r, None))))
}

/// One run with its recorded steps.
///
/// `steps` are the run's recorded outcomes in order, each with its output, `output_hash`, record hash and who
/// recorded it (the worker, or the operator who decided a review); `evidence_hash` chains them once the run
/// ended. Needs `workflow:read`; reading it changes nothing and decides no review.
#[utoipa::path(
    get,
    path = "/api/v2/workflows/runs/{uid}",
    params(("uid" = String, Path, description = "The run (`wfr_…`)", example = "wfr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The run", body = WorkflowRunView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<WorkflowRunView>, ApiError> {
    let (run, steps) = runs::load(&state, ctx.tenant(), &uid).await?;
    Ok(Json(run_view(run, Some(steps))))
}

/// Cancels a run that has not ended (`workflow.cancelled`); what it recorded stays, sealed.
///
/// Needs `workflow:manage`; any run of this workspace and environment that has not ended can be cancelled,
/// whoever started it, one awaiting review included. It ends `cancelled` with the evidence hash of the steps
/// recorded so far; nothing recorded is deleted.
#[utoipa::path(
    post,
    path = "/api/v2/workflows/runs/{uid}/cancel",
    params(("uid" = String, Path, description = "The run (`wfr_…`)", example = "wfr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "Cancelled", body = WorkflowRunView),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "The run has ended (`run_not_pending`, with `state`) or moved meanwhile (`conflict`)")
    )
)]
pub async fn post_cancel(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<WorkflowRunView>, ApiError> {
    let run = runs::cancel(&state, &ctx.caller(), ctx.tenant(), &uid).await?;
    let (_, steps) = runs::load(&state, ctx.tenant(), &run.record.id).await?;
    Ok(Json(run_view(run, Some(steps))))
}

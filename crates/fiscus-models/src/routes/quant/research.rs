//! `/quant/research/*` and `/quant/projects`: research runs (compute jobs of kind `research_run`), the
//! snapshots that freeze them, and the projects they are filed under (see `crate::compute::research`).

use crate::tables::research::{Project, Snapshot};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::rfc3339;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compute::{ComputeJobView, submit_and_answer};
use crate::compute::Request;
use crate::compute::research::{self, ResearchRunRequest, ResearchSnapshotRequest};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// Runs a research bundle: up to 8 computations (the bodies the compute endpoints take), each pinned to the
/// dataset versions it reads, computed in order, every output hashed; or runs a snapshot again and compares
/// each output with the snapshot's. Answered in the request (201) when every step would be, queued (202)
/// otherwise or with `Prefer: respond-async`. It costs the sum of its steps' credits.
///
/// Needs `quant:research:run`. With `steps`, `project` is required and the run is filed under it (its first
/// run creates it); a re-run (`snapshot`) is filed under the snapshot's project, and its output's `comparison`
/// says per step whether the output hash is the snapshot's (`reproduced`). It is answered in the request only
/// if it costs at most 3 credits (402 `credits_exhausted` writes nothing). Nothing it computes becomes a dataset.
#[utoipa::path(
    post,
    path = "/api/v2/quant/research/runs",
    request_body(content = ResearchRunRequest, example = json!({
        "project": "low-volatility", "name": "Minimum variance against an equal-weight backtest",
        "steps": [
            {"key": "weights", "optimization": {"objective": "min_variance", "periods_per_year": 12,
              "returns": {
                "BONDS": [0.004, 0.006, -0.002, 0.003, 0.009, 0.001],
                "EQUITY": [0.021, -0.013, 0.034, 0.008, -0.026, 0.017],
                "GOLD": [-0.012, 0.018, 0.005, -0.007, 0.022, 0.004]}}},
            {"key": "outliers", "model_run": {"model": "robust_z", "input": {"values": [1.0, 1.2, 0.9, 1.1, 9.5, 1.0, 1.05]}}}
        ]
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the run and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Run in the request: the job with its sealed result (`steps`, `datasets`, and `comparison` for a re-run)",
         body = ComputeJobView, headers(("Location" = String, description = "The run (a compute job)"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the run", body = ComputeJobView,
         headers(("Location" = String, description = "The run (a compute job)"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover the run (`credits_exhausted`)"),
        (status = 422, description = "Bad input (a step's field errors name the step), or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_research_run(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ResearchRunRequest>,
) -> Result<Response, ApiError> {
    let pinned = research::pin(&state, ctx.tenant(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::ResearchRun(pinned)).await
}

/// A snapshot: a research run frozen with the hash of its bundle.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ResearchSnapshotView {
    /// Always `research_snapshot`.
    pub object: &'static str,
    #[schema(example = "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(example = "low-volatility")]
    pub project: String,
    pub name: String,
    pub description: Option<String>,
    /// The research run frozen (`cjb_…`).
    pub run: String,
    /// `sha256:` of the RFC 8785 form of `bundle`.
    pub bundle_hash: String,
    /// The bundle still hashes to `bundle_hash` (recomputed on every read; the row's keyed seal is checked
    /// too, and a tampered row is never served).
    pub verified: bool,
    /// The run's pinned `request` (steps with their dataset versions), `request_hash`, `engine_version`,
    /// `datasets`, `output` (every step's output and `output_hash`), `output_hash` and `result_hash`.
    #[schema(value_type = Object)]
    pub bundle: Value,
    /// `application:app_…`
    pub created_by: String,
    pub created_at: String,
}

fn snapshot_view(s: Snapshot) -> ResearchSnapshotView {
    ResearchSnapshotView {
        object: "research_snapshot",
        verified: research::verified(&s),
        bundle: serde_json::from_str(&s.bundle).unwrap_or(Value::Null),
        id: s.id,
        project: s.project,
        name: s.name,
        description: s.description,
        run: s.run_id,
        bundle_hash: s.bundle_hash,
        created_by: s.created_by.label(),
        created_at: rfc3339(s.created_at),
    }
}

/// Freezes a research run that succeeded: its bundle (pinned request, engine version, outputs and their
/// hashes) is sealed under `bundle_hash`, immutable. One snapshot per run. Re-run it with `POST
/// /quant/research/runs` and `{"snapshot": id}`.
///
/// Needs `quant:research:run`. `run` must be a research run of this workspace and environment (422 otherwise)
/// that succeeded and is not frozen yet (409 `conflict`, naming the snapshot when there is one). Freezing
/// computes nothing, costs no credits and leaves the run as it was.
#[utoipa::path(
    post,
    path = "/api/v2/quant/research/snapshots",
    request_body(content = ResearchSnapshotRequest, example = json!({
        "run": "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD", "name": "Low-volatility study, as presented to the committee"
    })),
    responses(
        (status = 201, description = "Frozen", body = ResearchSnapshotView,
         headers(("Location" = String, description = "The snapshot"))),
        (status = 409, description = "The run has not succeeded, or is already frozen (the detail names the snapshot)"),
        (status = 422, description = "Bad input, or no research run of that id in this workspace and environment")
    )
)]
pub async fn post_snapshot(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ResearchSnapshotRequest>,
) -> Result<Response, ApiError> {
    let s = research::snapshot(&state, &ctx.caller(), ctx.tenant(), body).await?;
    let location = format!("/api/v2/quant/research/snapshots/{}", s.id);
    let mut response = (StatusCode::CREATED, Json(snapshot_view(s))).into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    Ok(response)
}

/// One snapshot with its bundle, re-verified against its hash.
///
/// `verified` recomputes the bundle's SHA-256 against `bundle_hash` on this read; a row that fails its keyed
/// seal is not served (500 `integrity_failure`). Needs `quant:research:read`; reading runs nothing (a re-run is
/// `POST /quant/research/runs` with `snapshot`).
#[utoipa::path(
    get,
    path = "/api/v2/quant/research/snapshots/{uid}",
    params(("uid" = String, Path, description = "The snapshot's id", example = "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The snapshot", body = ResearchSnapshotView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_snapshot(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ResearchSnapshotView>, ApiError> {
    let s = research::load_snapshot(&state, ctx.tenant(), &uid).await?;
    Ok(Json(snapshot_view(s)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SnapshotsQuery {
    /// Only this project's snapshots.
    #[param(pattern = "^[a-z0-9][a-z0-9_.-]{0,63}$", example = "low-volatility")]
    pub project: Option<String>,
    /// Snapshots per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Snapshots older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^rsn_[0-9A-HJKMNP-TV-Z]{26}$", example = "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's snapshots in this environment, newest first.
///
/// `project` narrows it to one project. Each snapshot comes with its bundle and `verified` recomputed, every
/// row's seal checked. Needs `quant:research:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/research/snapshots",
    params(SnapshotsQuery),
    responses((status = 200, description = "Snapshots", body = ListPage<ResearchSnapshotView>))
)]
pub async fn get_snapshots(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<SnapshotsQuery>,
) -> Result<Json<ListPage<ResearchSnapshotView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "rsn", "a snapshot")?;
    if q.project.as_deref().is_some_and(|p| !research::is_project_key(p)) {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("project", "must be a project key"));
    }
    let mut conn = state.store.read().await?;
    let rows = crate::tables::research::list_snapshots(
        &mut conn,
        ctx.tenant(),
        q.project.as_deref(),
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, limit, |s| s.id.clone());
    let mut out = Vec::with_capacity(page.data.len());
    for s in page.data {
        // Each seal checked, as for one snapshot.
        out.push(snapshot_view(
            crate::tables::research::get_snapshot(&mut conn, state.store.seal_key(), ctx.tenant(), &s.id).await?,
        ));
    }
    Ok(Json(ListPage { object: "list", data: out, has_more: page.has_more, next_after_id: page.next_after_id }))
}

/// A project: the research runs filed under one key, and their snapshots.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ResearchProjectView {
    /// Always `research_project`.
    pub object: &'static str,
    #[schema(example = "low-volatility")]
    pub key: String,
    /// Research runs filed under it (any status).
    pub runs: i64,
    pub succeeded_runs: i64,
    pub snapshots: i64,
    pub first_run_at: String,
    pub last_run_at: String,
    /// The newest run (`cjb_…`).
    pub last_run: String,
    /// The newest snapshot (`rsn_…`).
    pub last_snapshot: Option<String>,
}

fn project_view(p: Project) -> ResearchProjectView {
    ResearchProjectView {
        object: "research_project",
        key: p.key,
        runs: p.runs,
        succeeded_runs: p.succeeded_runs,
        snapshots: p.snapshots,
        first_run_at: rfc3339(p.first_run_at),
        last_run_at: rfc3339(p.last_run_at),
        last_run: p.last_run_id,
        last_snapshot: p.last_snapshot_id,
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ProjectsQuery {
    /// Projects per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Projects after this key (exclusive; keys in ascending order).
    #[param(pattern = "^[a-z0-9][a-z0-9_.-]{0,63}$", example = "low-volatility")]
    pub after_id: Option<String>,
}

/// The workspace's research projects in this environment, by key: each with its runs and snapshots counted.
/// A project is created by its first research run.
///
/// A project is no record of its own but the key research runs are filed under: its counts (`runs` of any
/// status, `succeeded_runs`, `snapshots`) and dates come from those runs and their snapshots, in ascending key
/// order. Needs `quant:research:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/projects",
    params(ProjectsQuery),
    responses((status = 200, description = "Projects", body = ListPage<ResearchProjectView>))
)]
pub async fn get_projects(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ProjectsQuery>,
) -> Result<Json<ListPage<ResearchProjectView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    if q.after_id.as_deref().is_some_and(|p| !research::is_project_key(p)) {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("after_id", "must be a project key"));
    }
    let mut conn = state.store.read().await?;
    let rows = crate::tables::research::projects(&mut conn, ctx.tenant(), q.after_id.as_deref(), limit).await?;
    let page = ListPage::from_overfetch(rows, limit, |p| p.key.clone());
    Ok(Json(ListPage {
        object: "list",
        data: page.data.into_iter().map(project_view).collect(),
        has_more: page.has_more,
        next_after_id: page.next_after_id,
    }))
}

//! `/generative/*`: synthetic counterfactual paths and scenario fans, seeded and reproducible, each a sealed
//! compute job of kind `generative` whose output says `synthetic: true`, `executable: false` and carries the
//! SHA-256 of its paths (see `crate::compute::generative`).

use crate::tables::compute::JobFilter;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_domain::compute::JobKind;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::compute::Request;
use crate::compute::generative::{self, GenerativeRequest};
use crate::routes::quant::compute::{ComputeJobView, submit_and_answer, view};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_models)).routes(routes!(get_runs)).routes(routes!(get_run))
}

pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(post_paths)).routes(routes!(post_scenarios))
}

/// A generator.
#[derive(Serialize, utoipa::ToSchema)]
pub struct GenerativeModelView {
    /// Always `generative_model`.
    pub object: &'static str,
    #[schema(example = "gbm")]
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Its output is synthetic, never an observation.
    pub synthetic: bool,
    /// Its output can never be executed (no Financial Action reads it).
    pub executable: bool,
}

/// The generators: correlated GBM and the moving-block bootstrap.
///
/// A fixed list in this build: `gbm` and `block_bootstrap`, each flagged `synthetic: true` and
/// `executable: false`. Needs `generative:models:read`; reads no workspace data and runs nothing.
#[utoipa::path(get, path = "/api/v2/generative/models", responses((status = 200, description = "The generators", body = ListPage<GenerativeModelView>)))]
pub async fn get_models() -> Json<ListPage<GenerativeModelView>> {
    Json(ListPage::complete(vec![
        GenerativeModelView {
            object: "generative_model",
            key: "gbm",
            name: "Correlated geometric Brownian motion",
            description: "Price paths with drift and covariance estimated from instruments' daily log returns (or given), from their last observed prices.",
            synthetic: true,
            executable: false,
        },
        GenerativeModelView {
            object: "generative_model",
            key: "block_bootstrap",
            name: "Moving-block bootstrap",
            description: "Price paths compounding observed daily returns resampled in blocks of consecutive days, from the last observed prices.",
            synthetic: true,
            executable: false,
        },
    ]))
}

async fn submit(
    ctx: &Ctx,
    state: &AppState,
    headers: &HeaderMap,
    body: GenerativeRequest,
    full: bool,
) -> Result<Response, ApiError> {
    let pinned = generative::pin(state, ctx.principal.workspace_id(), body, full).await?;
    submit_and_answer(state, ctx, headers, Request::Generative(pinned)).await
}

/// Generates synthetic counterfactual price paths, every path returned (at most 200,000 prices), seeded
/// and reproducible bit for bit, with the SHA-256 of the paths.
///
/// `gbm` takes drift and covariance estimated from instruments' observed daily log returns (or given in
/// `parameters`); `block_bootstrap` compounds resampled observed daily returns; both start from the last
/// observed prices, and a synthetic prices dataset is refused (422). The run is a sealed compute job of kind
/// `generative` (201 computed in the request, 202 queued) that debits AI credits; its output says
/// `synthetic: true` and `executable: false`. Needs `generative:inference`. Nothing generated becomes a
/// dataset or market data, and no Financial Action reads it.
#[utoipa::path(
    post,
    path = "/api/v2/generative/paths",
    request_body(content = GenerativeRequest, example = json!({
        "generator": "gbm",
        "parameters": { "EQUITY": { "initial": 100.0, "drift": 0.05, "volatility": 0.2 } },
        "steps": 12, "paths": 5, "horizon_years": 1.0, "seed": 42
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Generated in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the run", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_paths(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<GenerativeRequest>,
) -> Result<Response, ApiError> {
    submit(&ctx, &state, &headers, body, true).await
}

/// Generates synthetic scenarios summarised as per-step quantile fans of each asset's price, seeded, with
/// the SHA-256 of the paths they summarise.
///
/// The same generators and inputs as `POST /generative/paths`, for up to 10,000 paths whose prices are not
/// returned: per asset and step, the 5th, 25th, 50th, 75th and 95th percentiles of the price. A sealed compute
/// job of kind `generative` (201 computed in the request; 202 queued when large, or when the request says
/// `Prefer: respond-async`) that debits AI credits; its output says `synthetic: true` and `executable: false`.
/// Needs `generative:inference`. Nothing generated becomes a dataset, and no Financial Action reads it.
#[utoipa::path(
    post,
    path = "/api/v2/generative/scenarios",
    request_body(content = GenerativeRequest, example = json!({
        "generator": "gbm",
        "parameters": {
            "EQUITY": { "initial": 100.0, "drift": 0.06, "volatility": 0.2, "correlations": { "GOLD": 0.05 } },
            "GOLD": { "initial": 50.0, "drift": 0.02, "volatility": 0.15 }
        },
        "steps": 12, "paths": 1000, "horizon_years": 1.0, "seed": 42
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Generated in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the run", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_scenarios(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<GenerativeRequest>,
) -> Result<Response, ApiError> {
    submit(&ctx, &state, &headers, body, false).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RunsQuery {
    /// Runs per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Runs older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's generative runs in this environment, newest first.
///
/// Each run is a compute job of kind `generative` with its stored request, state and, once computed, its
/// sealed result, every seal checked before it is shown. Needs `generative:models:read`; jobs of the other
/// environment or of other kinds are not listed. A read: nothing is generated, debited or changed.
#[utoipa::path(
    get,
    path = "/api/v2/generative/runs",
    params(RunsQuery),
    responses((status = 200, description = "Generative runs", body = ListPage<ComputeJobView>))
)]
pub async fn get_runs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<RunsQuery>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let filter = JobFilter { kind: Some(JobKind::Generative), state: None };
    crate::routes::quant::compute::list(&ctx, &state, filter, q.limit, q.after_id.as_deref()).await
}

/// One generative run with its sealed, synthetic result.
///
/// The job with its stored request, state, progress and, once computed, its result: the paths or fans,
/// `synthetic: true`, `executable: false`, `paths_sha256` and the result's hash, its seal checked before it
/// is shown. Needs `generative:models:read`; any other kind of compute job is 404 here. Changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/generative/runs/{uid}",
    params(("uid" = String, Path, description = "The run's id", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The run", body = ComputeJobView), (status = 404, description = "Not a generative run of this workspace and environment"))
)]
pub async fn get_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ComputeJobView>, ApiError> {
    if !fiscus_domain::ids::is_id_of("cjb", &uid) {
        return Err(ApiError::not_found().detail("no such run"));
    }
    let mut conn = state.store.read().await?;
    let (job, result) = crate::tables::compute::get(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?;
    if job.kind != JobKind::Generative {
        return Err(ApiError::not_found().detail("no such run"));
    }
    Ok(Json(view(job, result)))
}

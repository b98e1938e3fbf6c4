//! `/quant/model-tournaments`: candidate forecasting methods ranked by rolling-origin evaluation with the
//! M4 measures (compute jobs of kind `tournament`; see `crate::compute::tournament`).

use crate::tables::compute::JobFilter;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_domain::compute::JobKind;
use fiscus_http::list::ListPage;
use serde::Deserialize;

use super::compute::{ComputeJobView, submit_and_answer, view};
use crate::compute::Request;
use crate::compute::tournament::{self, TournamentRequest};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// Runs a tournament: each candidate forecasts from every rolling origin, scored by sMAPE, MASE and OWA
/// against Naïve 2, ranked by OWA, sealed. Without ARIMA and with up to 8 origins it is answered in the
/// request (201); otherwise queued (202).
///
/// Needs `quant:models:run`. The series is an economic series, an instrument's adjusted closes, inline `values`
/// or a finance-core account's net movement per period, pinned as a forecast's is. Naïve 2 always competes, as
/// OWA's benchmark; it costs 1 AI credit per candidate, Naïve 2 included (402 `credits_exhausted` writes
/// nothing). The ranking is evidence only: it registers, promotes and changes no model.
#[utoipa::path(
    post,
    path = "/api/v2/quant/model-tournaments",
    request_body(content = TournamentRequest, example = json!({
        "values": [112.0, 118.0, 132.0, 129.0, 121.0, 135.0, 148.0, 148.0, 136.0, 119.0, 104.0, 118.0,
                   115.0, 126.0, 141.0, 135.0, 125.0, 149.0, 170.0, 170.0, 158.0, 133.0, 114.0, 140.0,
                   145.0, 150.0, 178.0, 163.0, 172.0, 178.0, 199.0, 199.0, 184.0, 162.0, 146.0, 166.0],
        "candidates": ["naive", "seasonal_naive", "ses", "damped"], "horizon": 6, "origins": 4, "seasonal_period": 12
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Run in the request: the job with its sealed ranking", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the tournament", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_tournament(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<TournamentRequest>,
) -> Result<Response, ApiError> {
    let pinned = tournament::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Tournament(pinned)).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TournamentsQuery {
    /// Tournaments per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Tournaments older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's tournaments in this environment, newest first.
///
/// Compute jobs of kind `tournament` only, each with its sealed ranking once it has one. Needs
/// `quant:models:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/model-tournaments",
    params(TournamentsQuery),
    responses((status = 200, description = "Tournaments", body = ListPage<ComputeJobView>))
)]
pub async fn get_tournaments(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<TournamentsQuery>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let filter = JobFilter { kind: Some(JobKind::Tournament), state: None };
    super::compute::list(&ctx, &state, filter, q.limit, q.after_id.as_deref()).await
}

/// One tournament with its sealed ranking.
///
/// A compute job of another kind is 404 here, even when it exists. Needs `quant:models:read`; polling it
/// changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/model-tournaments/{uid}",
    params(("uid" = String, Path, description = "The tournament's id", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The tournament", body = ComputeJobView), (status = 404, description = "Not a tournament of this workspace and environment"))
)]
pub async fn get_tournament(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ComputeJobView>, ApiError> {
    if !fiscus_domain::ids::is_id_of("cjb", &uid) {
        return Err(ApiError::not_found().detail("no such tournament"));
    }
    let mut conn = state.store.read().await?;
    let (job, result) = crate::tables::compute::get(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?;
    if job.kind != JobKind::Tournament {
        return Err(ApiError::not_found().detail("no such tournament"));
    }
    Ok(Json(view(job, result)))
}

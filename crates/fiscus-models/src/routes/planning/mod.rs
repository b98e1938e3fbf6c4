//! `/planning/forecasts`: sealed forecasts of economic series, instruments' prices or given values, with
//! prediction intervals (compute jobs of kind `forecast`; see `crate::compute::forecast`).

use crate::tables::compute::JobFilter;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_domain::compute::JobKind;
use fiscus_http::list::ListPage;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::compute::Request;
use crate::compute::forecast::{self, ForecastRequest};
use crate::routes::quant::compute::{ComputeJobView, submit_and_answer};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_forecasts))
}

pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(post_forecast))
}

/// Forecasts a series with prediction intervals: the model (chosen by AICc among ARIMA orders by default,
/// or named), its fit statistics, and the pinned data it read. The series is an economic series, an
/// instrument's prices, a finance-core account's net movement per month or quarter (`ledger_account`, read
/// from the observed journal datasets holding its lines), or values given inline. A named model is fitted
/// in the request (201); the automatic choice is queued (202), as any forecast is with `Prefer:
/// respond-async`.
///
/// Data-plane inputs are pinned when the job is made (each dataset by number and content hash, so a queued or
/// repeated run reads the same numbers) and must be observed: a synthetic dataset is 422. The forecast is a
/// sealed compute job of kind `forecast` that debits AI credits (402 `credits_exhausted` when the balance
/// cannot cover it). Needs `planning:forecast:create`. A computation only: it posts nothing to finance core
/// and changes no data.
#[utoipa::path(
    post,
    path = "/api/v2/planning/forecasts",
    request_body(content = ForecastRequest, example = json!({
        "values": [112.0, 118.0, 132.0, 129.0, 121.0, 135.0, 148.0, 148.0, 136.0, 119.0, 104.0, 118.0,
                   115.0, 126.0, 141.0, 135.0, 125.0, 149.0, 170.0, 170.0, 158.0, 133.0, 114.0, 140.0],
        "model": "holt_winters", "horizon": 6, "level": 0.9
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Fitted in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_forecast(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ForecastRequest>,
) -> Result<Response, ApiError> {
    let pinned = forecast::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Forecast(pinned)).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ForecastsQuery {
    /// Forecasts per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Forecasts older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's forecasts in this environment, newest first.
///
/// Each forecast is a compute job of kind `forecast`: its pinned request, state, progress and, once fitted,
/// its sealed result (the forecast with its intervals, the model and its fit statistics), every seal checked
/// before it is shown. Needs `planning:read`; jobs of the other environment are not listed. Changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/planning/forecasts",
    params(ForecastsQuery),
    responses((status = 200, description = "Forecasts", body = ListPage<ComputeJobView>))
)]
pub async fn get_forecasts(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ForecastsQuery>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let filter = JobFilter { kind: Some(JobKind::Forecast), state: None };
    crate::routes::quant::compute::list(&ctx, &state, filter, q.limit, q.after_id.as_deref()).await
}

//! `/quant/compute/*`: submit optimisations, watch and cancel jobs.
//!
//! A small job is computed in the request and answered 201 with its result; a larger one, or any job
//! submitted with `Prefer: respond-async` (RFC 7240), is queued and answered 202 (`Preference-Applied` says
//! when the preference was honoured). Either way `Location` names the job, which keeps its sealed request,
//! result and progress.

use crate::tables::compute::{Job, JobFilter, JobResult, PROGRESS_DONE};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::rfc3339;
use fiscus_domain::compute::{JobKind, JobState};
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::compute::backtest::{self, BacktestRequest};
use crate::compute::optimization::{self, OptimizationRequest};
use crate::compute::simulation::{self, SimulationRequest};
use crate::compute::{Request, Shown};
use fiscus_http::AppState;
use fiscus_http::columnar::{ColumnSpec, ColumnType, Representation, Table, Values};
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// Why a job failed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JobErrorView {
    /// The engine's typed reason (`infeasible`, `not_positive_definite`, `budget_exceeded` when its counted
    /// iterations or work ran out, …), `safety_timeout` (past the wall-clock safety net before the counted
    /// budget ran out), `authority_withdrawn` (the application that queued it lost the scope or was suspended
    /// before it ran), `entitlement_missing` (its workspace lost the entitlement to the data it reads before
    /// it read it), `integrity_failure` (its sealed request failed verification) or `internal_error`.
    #[schema(value_type = fiscus_domain::compute::JobFailureCode, inline)]
    pub code: &'static str,
    pub detail: String,
    /// Whether submitting the same request again may succeed: true only for `safety_timeout` (the machine was
    /// slow, not the request); every other code is how the same request ends again.
    pub retryable: bool,
}

/// A job's sealed result.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JobResultView {
    #[schema(example = "cjr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    /// What the engine computed (for an optimisation: `weights` with each asset's weight,
    /// `expected_return`, `volatility`, `sharpe_ratio`, `periods`, `first_date`, `last_date`).
    #[schema(value_type = Object)]
    pub output: Box<RawValue>,
    /// `sha256:` of the RFC 8785 form of `output`.
    pub output_hash: String,
    /// `sha256:` of the RFC 8785 form of `{request_hash, engine_version, output_hash}`: what the result is
    /// evidence of.
    pub result_hash: String,
    pub created_at: String,
}

/// A compute job.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ComputeJobView {
    /// Always `compute_job`.
    pub object: &'static str,
    #[schema(example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub kind: JobKind,
    pub status: JobState,
    /// Fraction done, 0 to 1.
    #[schema(minimum = 0, maximum = 1)]
    pub progress: f64,
    /// A cancel was asked for and the job has not stopped yet.
    pub cancel_requested: bool,
    /// The request as stored and sealed: every default applied, instruments pinned to the prices datasets
    /// (id and content hash) they are read from.
    /// Left out of the answer to a request sent with `Prefer: return=minimal`.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<Box<RawValue>>,
    /// `sha256:` of the RFC 8785 form of `request`.
    pub request_hash: String,
    #[schema(example = "fiscus-quant/0.1.0")]
    pub engine_version: String,
    /// AI credits the job cost.
    pub credits: i64,
    /// Times a worker started it (more than 1 when a node died while computing it).
    pub attempts: i64,
    /// `application:app_…`
    pub created_by: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub error: Option<JobErrorView>,
    pub result: Option<JobResultView>,
}

fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| {
        // A sealed row holds what Fiscus wrote; text that is not JSON is shown as null rather than guessed at.
        RawValue::from_string("null".into()).expect("null is JSON")
    })
}

pub(crate) fn view(job: Job, result: Option<JobResult>) -> ComputeJobView {
    ComputeJobView {
        object: "compute_job",
        kind: job.kind,
        status: job.state,
        progress: job.progress as f64 / PROGRESS_DONE as f64,
        cancel_requested: job.cancel_requested_at.is_some() && !job.state.is_final(),
        // Stored as canonical JSON text: served as it is, never parsed and written again.
        request: Some(raw(job.request)),
        request_hash: job.request_hash,
        engine_version: job.engine_version,
        credits: job.credits,
        attempts: job.attempts,
        created_by: job.created_by.label(),
        created_at: rfc3339(job.created_at),
        started_at: job.started_at.map(rfc3339),
        finished_at: job.finished_at.map(rfc3339),
        error: job.error.map(|(code, detail)| JobErrorView {
            code: code.as_str(),
            retryable: code.retryable(),
            detail,
        }),
        result: result.map(|r| JobResultView {
            id: r.id,
            output: raw(r.output),
            output_hash: r.output_hash,
            result_hash: r.result_hash,
            created_at: rfc3339(r.created_at),
        }),
        id: job.id,
    }
}

/// Whether the request states a preference (RFC 7240 `Prefer`: `respond-async`, `return=minimal`), matched
/// case-insensitively on the preference itself, its parameters ignored.
pub(crate) fn prefers(headers: &HeaderMap, preference: &str) -> bool {
    headers.get_all("prefer").iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|p| {
            let token: String = p.split(';').next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
            token.eq_ignore_ascii_case(preference)
        })
    })
}

/// How every route that computes answers, whatever the kind: the pinned request submitted (computed in the
/// request when small and not `respond-async`, queued as a job otherwise) and answered 201 or 202 with the
/// job (`submitted`).
pub(crate) async fn submit_and_answer(
    services: &fiscus_kernel::Services,
    ctx: &Ctx,
    headers: &HeaderMap,
    request: Request,
) -> Result<Response, ApiError> {
    let shown = crate::compute::submit(services, &ctx.caller(), ctx.tenant(), request, prefers_async(headers)).await?;
    Ok(submitted(shown, headers))
}

/// Whether the request asked for an asynchronous answer (`Prefer: respond-async`, RFC 7240).
pub(crate) fn prefers_async(headers: &HeaderMap) -> bool {
    prefers(headers, "respond-async")
}

/// 201 with the result, or 202 with the queued job; `Location` names the job. With `Prefer: return=minimal`
/// the stored request (which the caller just sent) is left out of the answer; `GET` the job for it.
pub(crate) fn submitted(shown: Shown, headers: &HeaderMap) -> Response {
    let location = format!("/api/v2/quant/compute/jobs/{}", shown.job.id);
    let status = if shown.inline { StatusCode::CREATED } else { StatusCode::ACCEPTED };
    let minimal = prefers(headers, "return=minimal");
    let mut applied = Vec::new();
    if prefers_async(headers) && !shown.inline {
        applied.push("respond-async");
    }
    let mut shown_view = view(shown.job, shown.result);
    if minimal {
        shown_view.request = None;
        applied.push("return=minimal");
    }
    let mut response = (status, Json(shown_view)).into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&applied.join(", "))
        && !applied.is_empty()
    {
        response.headers_mut().insert("preference-applied", v);
    }
    response
}

/// Runs a mean-variance optimisation (PyPortfolioOpt's conventions) on instruments' prices or inline
/// returns: up to 100 assets in the request (201), more as a job (202).
///
/// Needs `quant:compute:run`. Instruments resolve to their newest prices dataset, pinned by id and content hash
/// (a synthetic one is 422), and the request is stored with every default applied. It costs 1 AI credit per
/// started 100 assets, debited with the job (402 `credits_exhausted` writes nothing); a computation past the
/// in-request budget is queued instead (202). The weights are a result only: no order, proposal or Financial
/// Action is created.
#[utoipa::path(
    post,
    path = "/api/v2/quant/compute/optimizations",
    request_body(content = OptimizationRequest, example = json!({
        "objective": "max_sharpe", "risk_free_rate": 0.02, "periods_per_year": 12,
        "returns": {
            "BONDS": [0.004, 0.006, -0.002, 0.003, 0.009, 0.001],
            "EQUITY": [0.021, -0.013, 0.034, 0.008, -0.026, 0.017],
            "GOLD": [-0.012, 0.018, 0.005, -0.007, 0.022, 0.004]
        }
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Computed in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job (or cancel it)", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover the job (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_optimization(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<OptimizationRequest>,
) -> Result<Response, ApiError> {
    let pinned = optimization::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Optimization(pinned)).await
}

/// Simulates correlated geometric Brownian motion (seeded, reproducible bit for bit) with parameters
/// estimated from instruments' prices or given inline: terminal distributions per asset and, with
/// weights, the portfolio's return quantiles, VaR and expected shortfall. Up to a million draws in the
/// request (201), more as a job (202).
///
/// Needs `quant:compute:run`. Instruments resolve to their newest prices dataset, pinned by id and content hash
/// (a synthetic one is 422); a `seed` left out is drawn and recorded in the stored request. It costs 1 AI credit
/// per started 10 million simulated values (402 `credits_exhausted` writes nothing). The output is kept only as
/// the job's result: nothing simulated becomes a dataset.
#[utoipa::path(
    post,
    path = "/api/v2/quant/compute/simulations",
    request_body(content = SimulationRequest, example = json!({
        "parameters": {
            "EQUITY": { "initial": 100.0, "drift": 0.06, "volatility": 0.2, "correlations": { "GOLD": 0.05 } },
            "GOLD": { "initial": 50.0, "drift": 0.02, "volatility": 0.15 }
        },
        "horizon_years": 1.0, "steps": 52, "paths": 2000, "seed": 7, "weights": { "EQUITY": 0.6, "GOLD": 0.4 }
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Computed in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job (or cancel it)", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover the job (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_simulation(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SimulationRequest>,
) -> Result<Response, ApiError> {
    let pinned = simulation::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Simulation(pinned)).await
}

/// Backtests a periodically rebalanced portfolio of instruments over their observed prices (vectorbt's
/// fill rules): equity curve, fees, final positions and risk statistics. Up to 100 instruments in the
/// request (201), more as a job (202).
///
/// Needs `quant:compute:run`. Instruments resolve to their newest prices dataset, pinned by id and content hash
/// (a synthetic one is 422). It costs 1 AI credit per started million asset-periods, priced at 5,000 periods
/// per instrument (402 `credits_exhausted` writes nothing); a computation past the in-request budget is queued
/// instead (202). The trades are simulated on past prices: no order, proposal or Financial Action is created.
#[utoipa::path(
    post,
    path = "/api/v2/quant/compute/backtests",
    request_body(content = BacktestRequest, example = json!({
        "weights": {"AAPL": 0.4, "MSFT": 0.3, "JPM": 0.3}, "start": "2015-01-01",
        "end": "2017-12-31", "rebalance_every": 21, "initial_cash": 1000000, "fee_rate": 0.001
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Computed in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job (or cancel it)", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover the job (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_backtest(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<BacktestRequest>,
) -> Result<Response, ApiError> {
    let pinned = backtest::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Backtest(pinned)).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct JobsQuery {
    pub kind: Option<JobKind>,
    pub status: Option<JobState>,
    /// Jobs per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Jobs older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's compute jobs in this environment, newest first.
///
/// Jobs of every kind (optimisations, simulations, backtests, model runs, scenarios, forecasts, generative runs,
/// tournaments, research runs) unless `kind` narrows it; `status` filters by state. Each job comes with its
/// sealed result, every seal checked as it is read. Needs `quant:compute:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/compute/jobs",
    params(JobsQuery),
    responses((status = 200, description = "Jobs", body = ListPage<ComputeJobView>))
)]
pub async fn get_jobs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<JobsQuery>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let filter = JobFilter { kind: q.kind, state: q.status };
    list(&ctx, &state, filter, q.limit, q.after_id.as_deref()).await
}

/// A page of jobs, newest first, each with its result (seals checked).
pub(crate) async fn list(
    ctx: &Ctx,
    state: &AppState,
    filter: JobFilter,
    limit: Option<i64>,
    after_id: Option<&str>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let limit = fiscus_http::query::limit(limit, fiscus_domain::pagination::ITEMS)?;
    let q_after = fiscus_http::query::after_id(after_id, "cjb", "a job")?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::compute::list(&mut conn, ctx.tenant(), filter, q_after, limit).await?;
    let page = ListPage::from_overfetch(rows, limit, |j| j.id.clone());
    let mut out = Vec::with_capacity(page.data.len());
    for job in page.data {
        // The list shows results too, each seal checked as for one job.
        let (job, result) =
            crate::tables::compute::get(&mut conn, state.store.seal_key(), ctx.tenant(), &job.id).await?;
        out.push(view(job, result));
    }
    Ok(Json(ListPage { object: "list", data: out, has_more: page.has_more, next_after_id: page.next_after_id }))
}

fn job_id(uid: &str) -> Result<&str, ApiError> {
    if fiscus_domain::ids::is_id_of("cjb", uid) { Ok(uid) } else { Err(ApiError::not_found().detail("no such job")) }
}

/// One compute job with its progress, and its sealed result once it has one.
///
/// A job of any kind: `status`, `progress`, `cancel_requested`, the stored request and `request_hash`, credits,
/// attempts, and its result (`output`, `output_hash`, `result_hash`) or the error it ended with. A job that
/// fails its seal is not served (500 `integrity_failure`). Needs `quant:compute:read`; polling changes nothing.
/// A model run's result is also served as its series (see the columnar forms below).
#[utoipa::path(
    get,
    path = "/api/v2/quant/compute/jobs/{uid}",
    params(("uid" = String, Path, description = "The job's id", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The job", body = ComputeJobView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_job(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let id = job_id(&uid)?;
    let mut conn = state.store.read().await?;
    let (job, result) = crate::tables::compute::get(&mut conn, state.store.seal_key(), ctx.tenant(), id).await?;
    let vary = [(header::VARY, HeaderValue::from_static("accept"))];
    if representation == Representation::Json {
        return Ok((vary, Json(view(job, result))).into_response());
    }
    let table = match (job.kind, &result) {
        (JobKind::ModelRun, Some(r)) => series(&r.output),
        _ => None,
    }
    .ok_or_else(|| {
        ApiError::new(fiscus_domain::error_code::ErrorCode::NotAcceptable)
            .detail("only a finished model run's result has a series; this job is offered as application/json")
            .with("offered", ["application/json"])
    })?;
    let headers = HeaderMap::from_iter(vary);
    let body = match representation {
        Representation::Csv => table.csv(),
        Representation::Arrow => table.arrow().map_err(|e| {
            tracing::error!(error = %e, "a model run's Arrow stream could not be written");
            ApiError::internal()
        })?,
        _ => serde_json::to_vec(&serde_json::json!({
            "object": "model_run_series", "job": job.id, "data": table.json_columns(),
        }))
        .unwrap_or_default(),
    };
    Ok(fiscus_http::columnar::respond(representation, headers, body))
}

/// The members of a model run's output that are series, in the columnar forms' column order after
/// `index`: a forecast with its standard errors and bounds (one value a step ahead), or a score per
/// observation, as its model gives.
pub const SERIES_COLUMNS: &[ColumnSpec] = &[
    ("index", ColumnType::Int),
    ("forecast", ColumnType::Float),
    ("standard_error", ColumnType::Float),
    ("lower", ColumnType::Float),
    ("upper", ColumnType::Float),
    ("scores", ColumnType::Float),
];

/// A model run's series as columns: `index` (0, 1, …) and each series member its output has, all of the
/// first one's length; none when it has no series (a covariance, a value at risk).
fn series(output: &str) -> Option<Table> {
    let output: serde_json::Value = serde_json::from_str(output).ok()?;
    let mut table: Option<Table> = None;
    for (name, _) in &SERIES_COLUMNS[1..] {
        let Some(values) = output.get(*name).and_then(serde_json::Value::as_array) else { continue };
        let values: Vec<Option<f64>> = values.iter().map(serde_json::Value::as_f64).collect();
        let t = table
            .take()
            .unwrap_or_else(|| Table::new().column("index", Values::Int((0..values.len() as i64).map(Some).collect())));
        table = Some(if t.rows() == values.len() { t.column(name, Values::Float(values)) } else { t });
    }
    table
}

/// Cancels a job: a queued one at once (its credits are refunded), a running one at its next check (it
/// shows `cancel_requested` until it stops). An ended job is a conflict.
///
/// Needs `quant:compute:run`; any job of this workspace and environment can be cancelled, of any kind and
/// whoever created it. A queued job ends `cancelled` at once and a `grant` entry refunds its credits; a running
/// one is not refunded. An ended job is 409 `conflict`, and so is one that moved meanwhile (ask again).
#[utoipa::path(
    post,
    path = "/api/v2/quant/compute/jobs/{uid}/cancel",
    params(("uid" = String, Path, description = "The job's id", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "Cancelled, or asked to stop", body = ComputeJobView),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "The job has ended")
    )
)]
pub async fn post_cancel(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ComputeJobView>, ApiError> {
    let id = job_id(&uid)?;
    let job = crate::compute::cancel(&state, &ctx.caller(), ctx.tenant(), id).await?;
    let mut conn = state.store.read().await?;
    let (job, result) = crate::tables::compute::get(&mut conn, state.store.seal_key(), ctx.tenant(), &job.id).await?;
    Ok(Json(view(job, result)))
}

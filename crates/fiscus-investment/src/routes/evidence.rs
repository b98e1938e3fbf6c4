//! `/investment/risk-compliance/runs…`, `/investment/generative-markets/runs` and `/investment/reports`:
//! sealed institutional risk evidence, synthetic counterfactual market runs and portfolio reports.

use crate::tables::investment_records::{self as records, Record, RecordKind};
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::Deserialize;

use super::records::{RecordView, view};
use crate::evidence::{
    self, GenerativeMarketOutput, GenerativeMarketRequest, RiskComplianceOutput, RiskComplianceRequest,
};
use crate::reports::{self, ReportOutput, ReportRequest};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// Measures a portfolio against explicit risk limits (largest weight, one-day VaR, drawdown, tracking
/// error; house defaults where a limit is not given) from its risk report, benchmark comparison and factor
/// exposures, and seals the result as evidence: each limit `passed` or `breached`.
///
/// The measurements are the risk report of `GET /investment/risk` (365 days of returns, 95 % confidence) and,
/// when the portfolio has a benchmark, the comparison of `GET /benchmarking/comparisons` ending on the same
/// date; `status` is `passed` only when every check passed. The record holds the request, the checks and
/// both reports under its `content_hash`, with an audit event. Needs `investment:run`. It is evidence only:
/// a breach blocks, approves or trades nothing.
#[utoipa::path(
    post,
    path = "/api/v2/investment/risk-compliance/runs",
    request_body(content = RiskComplianceRequest, example = json!({
        "portfolio_id": 1, "limits": {"max_weight": 0.25, "max_var_1d": 0.03, "max_drawdown": 0.25, "max_tracking_error": 0.1}
    })),
    responses(
        (status = 201, description = "The run, sealed", body = RecordView<RiskComplianceOutput>,
         headers(("Location" = String, description = "The run"))),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input, or too few returns; an unknown portfolio is 409 `reference_not_found` naming `portfolio_id`"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_risk_compliance_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(req): ApiJson<RiskComplianceRequest>,
) -> Result<Response, ApiError> {
    let r = evidence::risk_compliance(&state, &ctx.caller(), ctx.tenant(), req).await?;
    let location = format!("/api/v2/investment/risk-compliance/runs/{}", r.id);
    Ok(created(Some(location), view::<RiskComplianceOutput>("risk_compliance_run", r)?))
}

/// One risk-compliance run, its seal checked.
///
/// The record as it was written: the request, each limit's check, the risk report, the benchmark comparison
/// and `content_hash`. Its seal is checked first (500 `integrity_failure` if it was changed outside Fiscus).
/// Needs `investment:read`. A read: nothing is measured again.
#[utoipa::path(
    get,
    path = "/api/v2/investment/risk-compliance/runs/{uid}",
    params(("uid" = String, Path, description = "The run (`rcr_…`)", example = "rcr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The run", body = RecordView<RiskComplianceOutput>),
        (status = 404, description = "Not in the active workspace and environment")
    )
)]
pub async fn get_risk_compliance_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<RecordView<RiskComplianceOutput>>, ApiError> {
    let r = load(&state, ctx.tenant(), RecordKind::RiskCompliance, &uid).await?;
    Ok(Json(view("risk_compliance_run", r)?))
}

async fn load(
    state: &AppState,
    tenant: &fiscus_domain::tenancy::Tenant,
    kind: RecordKind,
    uid: &str,
) -> Result<Record, ApiError> {
    if !fiscus_domain::ids::is_id_of(kind.prefix(), uid) {
        return Err(ApiError::new(ErrorCode::NotFound));
    }
    let mut conn = state.store.read().await?;
    let r = records::get(&mut conn, state.store.seal_key(), tenant, uid).await?;
    if r.kind != kind {
        return Err(ApiError::new(ErrorCode::NotFound));
    }
    Ok(r)
}

/// Draws synthetic counterfactual markets for a portfolio's current holdings: block-bootstrapped paths of
/// their own observed daily returns (seeded, so the same request draws the same markets), summarised as
/// the distribution of the horizon return. Synthetic and never executable; sealed as evidence.
///
/// Holdings are valued as `GET /investment/risk` values them, and the portfolio's daily returns on current
/// weights over `lookback_days` (default 1095; at least 60 returns) are resampled with `seed` (default 1):
/// percentiles of the horizon return, expected shortfall at 5 % and the probability of a loss. The record
/// says `synthetic: true` and `executable: false` and is sealed with an audit event. Needs `investment:run`.
/// Nothing generated becomes market data, and nothing trades.
#[utoipa::path(
    post,
    path = "/api/v2/investment/generative-markets/runs",
    request_body(content = GenerativeMarketRequest, example = json!({
        "portfolio_id": 1, "horizon_days": 21, "paths": 1000, "block_length": 5, "seed": 7
    })),
    responses(
        (status = 201, description = "The run, sealed", body = RecordView<GenerativeMarketOutput>),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input, or too few returns; an unknown portfolio is 409 `reference_not_found` naming `portfolio_id`"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_generative_market_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(req): ApiJson<GenerativeMarketRequest>,
) -> Result<Response, ApiError> {
    let r = evidence::generative_market(&state, &ctx.caller(), ctx.tenant(), req).await?;
    let location = format!("/api/v2/investment/generative-markets/runs?portfolio_id={}", r.portfolio_id.unwrap_or(0));
    Ok(created(Some(location), view::<GenerativeMarketOutput>("generative_market_run", r)?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct GenerativeRunsQuery {
    /// Only the runs of this portfolio (its integer id, as a string of at most 15 digits, so that every
    /// value the pattern admits is an exact integer in JSON clients).
    #[param(pattern = "^[0-9]{1,15}$", example = "1")]
    pub portfolio_id: Option<String>,
    /// Runs per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Runs older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^gmr_[0-9A-HJKMNP-TV-Z]{26}$", example = "gmr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The generative market runs of this workspace and environment, newest first.
///
/// Each run as its sealed record (request, output, `content_hash`), every seal checked before it is shown;
/// `portfolio_id` narrows the list to one portfolio. Needs `investment:read`. A read: nothing is drawn.
#[utoipa::path(
    get,
    path = "/api/v2/investment/generative-markets/runs",
    params(GenerativeRunsQuery),
    responses((status = 200, description = "Runs", body = ListPage<RecordView<GenerativeMarketOutput>>))
)]
pub async fn get_generative_market_runs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<GenerativeRunsQuery>,
) -> Result<Json<ListPage<RecordView<GenerativeMarketOutput>>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let portfolio = match q.portfolio_id.as_deref() {
        None => None,
        Some(p) => match p.parse::<i64>() {
            Ok(n) if n >= 0 && p.len() <= 15 => Some(n),
            _ => {
                return Err(ApiError::new(ErrorCode::InvalidParameter)
                    .field("portfolio_id", "must be a portfolio's integer id"));
            }
        },
    };
    fiscus_http::query::after_id(q.after_id.as_deref(), "gmr", "a run")?;
    let mut conn = state.store.read().await?;
    let rows = records::list(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        RecordKind::GenerativeMarket,
        portfolio,
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    Ok(Json(ListPage::from_overfetch(rows, limit, |r| r.id.clone()).try_map(|r| view("generative_market_run", r))?))
}

/// Generates a portfolio report over a period: performance of today's holdings held through it (return,
/// annualised return and volatility, Sharpe, drawdown) against the benchmark, each holding's and sector's
/// contribution to the return, monthly returns, and one-day VaR and CVaR. Sealed; listed by `GET
/// /investment/reports`.
///
/// Quantities are the lots held on `end` (default: the date of the holdings' newest observed prices), priced
/// on each day of the period when every holding and the benchmark have an observed price (at least 21 such
/// days). A holding's contribution is its start weight times its period return; VaR and CVaR are historical
/// at 95 %. The report is recorded with its request, `content_hash` and an audit event. Needs
/// `investment:run`; nothing trades.
#[utoipa::path(
    post,
    path = "/api/v2/investment/reports",
    request_body(content = ReportRequest, example = json!({"portfolio_id": 1, "start": "2022-01-03", "end": "2022-12-28"})),
    responses(
        (status = 201, description = "The report, sealed", body = RecordView<ReportOutput>),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input, or too few prices in the period; an unknown portfolio is 409 `reference_not_found` naming `portfolio_id`"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_report(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(req): ApiJson<ReportRequest>,
) -> Result<Response, ApiError> {
    let r = reports::generate(&state, &ctx.caller(), ctx.tenant(), req).await?;
    let location = format!("/api/v2/investment/reports?portfolio_id={}", r.portfolio_id.unwrap_or(0));
    Ok(created(Some(location), view::<ReportOutput>("portfolio_report", r)?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReportsQuery {
    /// Only the reports of this portfolio (its integer id).
    #[param(minimum = 1, example = 1)]
    pub portfolio_id: Option<i64>,
    /// Reports per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Reports older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^rpt_[0-9A-HJKMNP-TV-Z]{26}$", example = "rpt_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The generated portfolio reports of this workspace and environment, newest first, each re-verified
/// against its seal.
///
/// Each report as its sealed record (request, output, `content_hash`); `portfolio_id` narrows the list to one
/// portfolio. Needs `investment:read`. A read: nothing is recomputed.
#[utoipa::path(
    get,
    path = "/api/v2/investment/reports",
    params(ReportsQuery),
    responses((status = 200, description = "Reports", body = ListPage<RecordView<ReportOutput>>))
)]
pub async fn get_reports(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ReportsQuery>,
) -> Result<Json<ListPage<RecordView<ReportOutput>>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    if q.portfolio_id.is_some_and(|p| p < 1) {
        return Err(
            ApiError::new(ErrorCode::InvalidParameter).field("portfolio_id", "must be a portfolio's integer id")
        );
    }
    fiscus_http::query::after_id(q.after_id.as_deref(), "rpt", "a report")?;
    let mut conn = state.store.read().await?;
    let rows = records::list(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        RecordKind::Report,
        q.portfolio_id,
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    Ok(Json(ListPage::from_overfetch(rows, limit, |r| r.id.clone()).try_map(|r| view("portfolio_report", r))?))
}

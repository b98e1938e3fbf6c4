//! `GET /investment/risk`, `GET /benchmarking/comparisons` and `GET /investment/companies/{symbol}`.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use crate::analytics::{self, Comparison, ComparisonQuery, RiskQuery, RiskReport};
use crate::company::{self, CompanyView};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RiskParams {
    /// The portfolio (its integer id).
    #[param(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    /// The valuation date (default: the newest date any holding has an observed price).
    #[param(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
    /// Calendar days of daily returns ending on the valuation date, 30 to 3650 (default 365).
    #[param(minimum = 30, maximum = 3650)]
    pub lookback_days: Option<i64>,
    /// VaR confidence, 0.9 to 0.999 (default 0.95).
    #[param(minimum = 0.9, maximum = 0.999)]
    pub confidence: Option<f64>,
    /// Periods per year for the annual figures, 1 to 366 (default: inferred from the prices' dates, 252
    /// for daily, 12 for monthly).
    #[param(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
}

/// A portfolio's risk on its current holdings: one-day historical VaR and CVaR (in return and in money),
/// Gaussian VaR, annualised volatility and return, maximum drawdown over the window, and concentration
/// (Herfindahl index, effective number of holdings, largest and top-five weights). Holdings are weighted by
/// market value at observed marks; the history is those weights applied to the holdings' returns, annualised
/// with the periods per year of their dates' frequency (or `periods_per_year`), and `warnings` names every
/// observation dropped (a close of 0, a date not every holding has) and every gap the returns bridge.
///
/// Holdings are the lots held at the end of `as_of` (today, UTC, by default: every acquisition and sale settled
/// on or before it, nothing after), valued at their newest observed prices on or before it in the base
/// currency at observed FX; the answer's `as_of` is the given date, else the newest of those prices' dates.
/// Fewer than 20 common returns is 409 `insufficient_data`. Factor exposures are null, with the
/// reason, when they cannot be estimated. Needs `investment:read`; nothing is recorded (a risk-compliance run
/// records one) and nothing trades.
#[utoipa::path(
    get,
    path = "/api/v2/investment/risk",
    params(RiskParams),
    responses(
        (status = 200, description = "The risk report", body = RiskReport),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 409, description = "The portfolio holds no open lots (`conflict`), too few returns in the window (`insufficient_data`), or returns the statistics leave undefined (`conflict` with `engine_error`)"),
        (status = 422, description = "Bad input (`invalid_parameter`)"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`); nothing is substituted")
    )
)]
pub async fn get_risk(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<RiskParams>,
) -> Result<Json<RiskReport>, ApiError> {
    let query = RiskQuery {
        portfolio_id: q.portfolio_id,
        as_of: q.as_of,
        lookback_days: q.lookback_days,
        confidence: q.confidence,
        periods_per_year: q.periods_per_year,
    };
    Ok(Json(analytics::risk(&state, ctx.tenant(), query).await.map_err(super::from_query)?))
}

/// A company: its reference data, the newest value of each fundamental metric, and its observed prices
/// over the past year (last price, high, low, return, volatility).
///
/// The instrument is found by its symbol (or its `ins_…` id). Fundamentals come from the newest fundamentals
/// dataset holding it; the price summary covers the 365 days up to its newest observed price (the close,
/// else the adjusted close) in its newest prices dataset, not up to today. Needs `investment:read`; a read
/// that records nothing.
#[utoipa::path(
    get,
    path = "/api/v2/investment/companies/{symbol}",
    params(("symbol" = String, Path, pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description = "The instrument's symbol", example = "AAPL")),
    responses(
        (status = 200, description = "The company", body = CompanyView),
        (status = 404, description = "No instrument with this symbol in this workspace")
    )
)]
pub async fn get_company(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(symbol): ApiPath<String>,
) -> Result<Json<CompanyView>, ApiError> {
    Ok(Json(company::company(&state, ctx.tenant(), &symbol).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ComparisonParams {
    /// The portfolio (its integer id).
    #[param(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    /// The benchmark's symbol (default: the portfolio's benchmark).
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "SPX")]
    pub benchmark: Option<String>,
    /// First date of the window (default: three years before `end`).
    #[param(format = Date, example = "2020-01-02")]
    pub start: Option<String>,
    /// Last date of the window and the valuation date of the weights (default: the newest date any
    /// holding has an observed price).
    #[param(format = Date, example = "2022-12-28")]
    pub end: Option<String>,
    /// Annual risk-free rate for alpha and beta, -0.1 to 0.5 (default 0).
    #[param(minimum = -0.1, maximum = 0.5)]
    pub risk_free_rate: Option<f64>,
    /// Periods per year for the annual figures, 1 to 366 (default: inferred from the prices' dates, 252
    /// for daily, 12 for monthly).
    #[param(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
}

/// A portfolio's current holdings against a benchmark over a window: annual return and volatility of each,
/// tracking error, information ratio, alpha, beta and up/down capture, with empyrical's conventions.
///
/// The benchmark is `benchmark`, else the portfolio's own (422 when it has none). Holdings are valued on `end`
/// as `GET /investment/risk` values them on `as_of`, and compared on the dates where every holding and the
/// benchmark have an observed price (at least 20 returns), annualised with the periods per year of their
/// dates' frequency (or `periods_per_year`); `warnings` names every observation dropped. Needs `benchmark:read`; nothing is recorded and
/// nothing trades.
#[utoipa::path(
    get,
    path = "/api/v2/benchmarking/comparisons",
    params(ComparisonParams),
    responses(
        (status = 200, description = "The comparison", body = Comparison),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 409, description = "The portfolio holds no open lots (`conflict`), too few common returns (`insufficient_data`), returns the statistics leave undefined (`conflict` with `engine_error`), or an unknown benchmark (`reference_not_found` naming `benchmark`)"),
        (status = 422, description = "Bad input (`invalid_parameter`)"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`); nothing is substituted")
    )
)]
pub async fn get_comparisons(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ComparisonParams>,
) -> Result<Json<Comparison>, ApiError> {
    let query = ComparisonQuery {
        portfolio_id: q.portfolio_id,
        benchmark: q.benchmark,
        start: q.start,
        end: q.end,
        risk_free_rate: q.risk_free_rate,
        periods_per_year: q.periods_per_year,
    };
    Ok(Json(analytics::comparison(&state, ctx.tenant(), query).await.map_err(super::from_query)?))
}

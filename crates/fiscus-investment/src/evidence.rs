//! Evidence runs on a portfolio: risk-compliance runs (the risk report, the benchmark comparison and the
//! factor exposures measured against explicit limits, each limit passed or breached, sealed as
//! institutional risk evidence), generative market runs (synthetic counterfactual markets drawn from the
//! holdings' own observed returns; never executable) and portfolio reports (performance, contribution
//! attribution and risk over a period). Each is a sealed investment record.

use crate::tables::investment_records::{Record, RecordKind};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::Matrix;
use fiscus_quant::simulate::bootstrap::{BootstrapSpec, bootstrap_paths};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::analytics::{self, Comparison, ComparisonQuery, RiskQuery, RiskReport, window_start};
use super::{book, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::{Caller, Failure};

/// Limits a risk-compliance run measures against (each optional; absent ones take the house defaults).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RiskLimits {
    /// The largest weight of one holding, 0 to 1 (default 0.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.25)]
    pub max_weight: Option<f64>,
    /// The one-day VaR may not be worse than this loss, as a positive fraction (default 0.03).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.03)]
    pub max_var_1d: Option<f64>,
    /// The window's drawdown may not be deeper than this, as a positive fraction (default 0.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.25)]
    pub max_drawdown: Option<f64>,
    /// Annualised tracking error against the benchmark at most (default 0.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 2, example = 0.1)]
    pub max_tracking_error: Option<f64>,
}

/// `POST /investment/risk-compliance/runs`.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RiskComplianceRequest {
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
    #[serde(default, deserialize_with = "fiscus_domain::api::objects::object")]
    pub limits: RiskLimits,
}

/// One limit, measured.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LimitCheck {
    /// `max_weight`, `max_var_1d`, `max_drawdown` or `max_tracking_error`.
    pub limit: String,
    pub threshold: f64,
    /// What was measured, in the limit's terms (a loss as a positive fraction).
    pub measured: f64,
    /// `passed` or `breached`.
    pub status: String,
}

/// A risk-compliance run's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RiskComplianceOutput {
    pub portfolio_id: i64,
    pub as_of: String,
    /// `passed` when every limit passed, else `breached`.
    pub status: String,
    pub checks: Vec<LimitCheck>,
    pub risk: RiskReport,
    /// Null when the portfolio has no benchmark.
    pub benchmark: Option<Comparison>,
}

fn check(limit: &str, threshold: f64, measured: f64) -> LimitCheck {
    LimitCheck {
        limit: limit.to_string(),
        threshold,
        measured,
        status: if measured <= threshold + 1e-12 { "passed" } else { "breached" }.to_string(),
    }
}

pub async fn risk_compliance(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    req: RiskComplianceRequest,
) -> Result<Record, Failure> {
    let l = &req.limits;
    let mut errors = Vec::new();
    for (field, v, max) in [
        ("limits", l.max_weight, 1.0),
        ("limits", l.max_var_1d, 1.0),
        ("limits", l.max_drawdown, 1.0),
        ("limits", l.max_tracking_error, 2.0),
    ] {
        if v.is_some_and(|x| !(x.is_finite() && (0.0..=max).contains(&x))) {
            errors.push((field, format!("every limit is a fraction from 0 to {max}")));
        }
    }
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".into()));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let risk = analytics::risk(
        services,
        tenant,
        RiskQuery {
            portfolio_id: req.portfolio_id,
            as_of: req.as_of.clone(),
            lookback_days: None,
            confidence: None,
            periods_per_year: None,
        },
    )
    .await
    .map_err(|e| match e {
        Failure::NotFound => Failure::missing("portfolio_id", "no such portfolio in this workspace"),
        other => other,
    })?;
    let book = book::load(services, tenant, req.portfolio_id, req.as_of.as_deref()).await?;
    let benchmark = match &book.portfolio.benchmark_symbol {
        Some(_) => Some(
            analytics::comparison(
                services,
                tenant,
                ComparisonQuery {
                    portfolio_id: req.portfolio_id,
                    benchmark: None,
                    start: None,
                    end: Some(risk.as_of.clone()),
                    risk_free_rate: None,
                    periods_per_year: None,
                },
            )
            .await?,
        ),
        None => None,
    };
    let mut checks = vec![
        check("max_weight", l.max_weight.unwrap_or(0.25), risk.concentration.largest_weight),
        check("max_var_1d", l.max_var_1d.unwrap_or(0.03), -risk.var_1d),
        check("max_drawdown", l.max_drawdown.unwrap_or(0.25), -risk.max_drawdown),
    ];
    if let Some(b) = &benchmark {
        checks.push(check("max_tracking_error", l.max_tracking_error.unwrap_or(0.10), b.tracking_error));
    }
    let status = if checks.iter().all(|c| c.status == "passed") { "passed" } else { "breached" };
    let output = RiskComplianceOutput {
        portfolio_id: req.portfolio_id,
        as_of: risk.as_of.clone(),
        status: status.to_string(),
        checks,
        risk,
        benchmark,
    };
    let request = json!({ "request": req });
    super::records::record(
        services,
        caller,
        tenant,
        RecordKind::RiskCompliance,
        Some(req.portfolio_id),
        request,
        &output,
    )
    .await
}

/// `POST /investment/generative-markets/runs`.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerativeMarketRequest {
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    /// Trading days each synthetic path runs, 1 to 252 (default 21).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 252, example = 21)]
    pub horizon_days: Option<i64>,
    /// Paths, 100 to 5,000 (default 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 100, maximum = 5000, example = 1000)]
    pub paths: Option<i64>,
    /// Days drawn together (moving blocks), 1 to 63 (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 63, example = 5)]
    pub block_length: Option<i64>,
    /// Calendar days of observed returns drawn from, 180 to 3650 (default 1095).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 180, maximum = 3650, example = 1095)]
    pub lookback_days: Option<i64>,
    /// The random seed (default 1): the same request draws the same markets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 9007199254740991_i64, example = 7)]
    pub seed: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
}

/// A percentile of the horizon return.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReturnPercentile {
    /// 1 to 99.
    pub percentile: u8,
    #[serde(rename = "return")]
    pub value: f64,
}

/// A generative market run's sealed output: the distribution of the holdings' value at the horizon.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GenerativeMarketOutput {
    pub portfolio_id: i64,
    pub as_of: String,
    /// Always `block_bootstrap`.
    pub method: String,
    pub horizon_days: i64,
    pub paths: i64,
    pub block_length: i64,
    pub seed: i64,
    /// The observed window drawn from.
    pub window_start: String,
    pub window_end: String,
    pub holdings_value_minor: i64,
    /// Percentiles of the horizon return: 1, 5, 25, 50, 75, 95, 99.
    pub return_percentiles: Vec<ReturnPercentile>,
    /// Mean of the returns at or below the 5th percentile.
    pub expected_shortfall_5: f64,
    /// Share of paths that end below the start.
    pub probability_of_loss: f64,
    /// Always true: synthetic counterfactual markets, never observations.
    pub synthetic: bool,
    /// Always false.
    pub executable: bool,
}

pub async fn generative_market(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    req: GenerativeMarketRequest,
) -> Result<Record, Failure> {
    let horizon = req.horizon_days.unwrap_or(21);
    let paths = req.paths.unwrap_or(1000);
    let block = req.block_length.unwrap_or(5);
    let lookback = req.lookback_days.unwrap_or(1095);
    let seed = req.seed.unwrap_or(1);
    let mut errors = Vec::new();
    for (field, v, lo, hi) in [
        ("horizon_days", horizon, 1, 252),
        ("paths", paths, 100, 5000),
        ("block_length", block, 1, 63),
        ("lookback_days", lookback, 180, 3650),
        ("seed", seed, 0, (1 << 53) - 1),
    ] {
        if !(lo..=hi).contains(&v) {
            errors.push((field, format!("must be from {lo} to {hi}")));
        }
    }
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".into()));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let book = match book::load(services, tenant, req.portfolio_id, req.as_of.as_deref()).await {
        Err(Failure::NotFound) => return Err(Failure::missing("portfolio_id", "no such portfolio in this workspace")),
        other => other?,
    };
    let valued = analytics::value(services, tenant, &book, req.as_of.as_deref()).await?;
    let analytics::History { dates, portfolio: daily, .. } =
        analytics::history(services, tenant, &valued, None, Some(window_start(&valued.as_of, lookback)), &valued.as_of)
            .await?;
    if daily.len() < 60 {
        return Err(Failure::insufficient_data(format!(
            "{} observed daily returns in the window; at least 60 are needed",
            daily.len()
        )));
    }
    let history = Matrix::from_rows(&daily.iter().map(|r| vec![*r]).collect::<Vec<_>>()).map_err(refused_by_engine)?;
    let spec = BootstrapSpec {
        steps: horizon as usize,
        paths: paths as usize,
        block_length: block as usize,
        seed: seed as u64,
    };
    let drawn = bootstrap_paths(&history, spec).map_err(refused_by_engine)?;
    let mut ends: Vec<f64> = drawn.iter().map(|p| p.column(0).iter().fold(1.0, |g, r| g * (1.0 + r)) - 1.0).collect();
    ends.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        let k = (ends.len() - 1) as f64 * q;
        let (f, c) = (k.floor() as usize, k.ceil() as usize);
        ends[f] + (ends[c] - ends[f]) * (k - f as f64)
    };
    let cut = pct(0.05);
    let tail: Vec<f64> = ends.iter().copied().filter(|r| *r <= cut).collect();
    let output = GenerativeMarketOutput {
        portfolio_id: req.portfolio_id,
        as_of: valued.as_of.clone(),
        method: "block_bootstrap".into(),
        horizon_days: horizon,
        paths,
        block_length: block,
        seed,
        window_start: dates.first().cloned().unwrap_or_default(),
        window_end: dates.last().cloned().unwrap_or_default(),
        holdings_value_minor: valued.total_minor,
        return_percentiles: [1u8, 5, 25, 50, 75, 95, 99]
            .iter()
            .map(|p| ReturnPercentile { percentile: *p, value: pct(f64::from(*p) / 100.0) })
            .collect(),
        expected_shortfall_5: tail.iter().sum::<f64>() / tail.len().max(1) as f64,
        probability_of_loss: ends.iter().filter(|r| **r < 0.0).count() as f64 / ends.len() as f64,
        synthetic: true,
        executable: false,
    };
    let request = json!({ "request": req });
    super::records::record(
        services,
        caller,
        tenant,
        RecordKind::GenerativeMarket,
        Some(req.portfolio_id),
        request,
        &output,
    )
    .await
}

//! Portfolio reports: performance, contribution attribution and risk of the book's current holdings over a
//! period, as if held through it (buy and hold: each day's value is today's quantities at that day's
//! observed prices), against the portfolio's benchmark. Generated on request, sealed, listed.

use std::collections::BTreeMap;

use crate::tables::investment_records::{Record, RecordKind};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::risk::{self, DrawdownStart};
use fiscus_quant::value_at_risk;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::analytics::{self, window_start};
use super::{book, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::inputs;

/// `POST /investment/reports`.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRequest {
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    /// First day of the period (default: a year before `end`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-01-03")]
    pub start: Option<String>,
    /// Last day and valuation date (default: the holdings' newest observed prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub end: Option<String>,
    /// Periods per year the annual figures use, 1 to 366 (default: inferred from the prices' dates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
}

/// Return and risk of a series over the period.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Performance {
    /// Cumulative simple return over the period.
    pub period_return: f64,
    pub annual_return: f64,
    pub annual_volatility: f64,
    /// Annualised Sharpe ratio at a zero risk-free rate.
    pub sharpe_ratio: Option<f64>,
    pub max_drawdown: f64,
}

/// A holding's contribution to the period's return.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Contribution {
    pub symbol: String,
    pub sector: String,
    /// Weight at the start of the period (today's quantities at the first day's prices).
    pub start_weight: f64,
    pub period_return: f64,
    /// start weight × return: the contributions sum to the portfolio's period return.
    pub contribution: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SectorContribution {
    pub sector: String,
    pub start_weight: f64,
    pub contribution: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MonthlyReturn {
    /// `YYYY-MM`.
    pub month: String,
    pub portfolio: f64,
    pub benchmark: Option<f64>,
}

/// A report's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReportOutput {
    pub portfolio_id: i64,
    pub portfolio_code: String,
    pub base_currency: String,
    pub period_start: String,
    pub period_end: String,
    pub observations: usize,
    pub benchmark: Option<String>,
    pub performance: Performance,
    pub benchmark_performance: Option<Performance>,
    /// Portfolio period return less the benchmark's.
    pub excess_return: Option<f64>,
    pub contributions: Vec<Contribution>,
    pub sectors: Vec<SectorContribution>,
    pub monthly: Vec<MonthlyReturn>,
    /// One-day historical VaR and CVaR at 95 % of the period's daily returns.
    pub var_1d_95: f64,
    pub cvar_1d_95: f64,
    /// Periods per year the annual figures use: the request's, or inferred from the dates (252 daily, 52
    /// weekly, 12 monthly, 4 quarterly, 1 annual).
    #[schema(example = 252.0)]
    pub periods_per_year: f64,
    /// The frequency of the prices' dates.
    pub frequency: fiscus_data_core::rules::frequency::Frequency,
    /// Each observation dropped and why, each gap bridged, and the frequency inferred.
    pub warnings: Vec<inputs::Warning>,
}

fn performance(returns: &[f64], periods: f64) -> Result<Performance, Failure> {
    Ok(Performance {
        period_return: returns.iter().fold(1.0, |g, r| g * (1.0 + r)) - 1.0,
        annual_return: risk::annual_return(returns, periods).map_err(refused_by_engine)?,
        annual_volatility: risk::annual_volatility(returns, periods).map_err(refused_by_engine)?,
        sharpe_ratio: risk::sharpe_ratio(returns, 0.0, periods).ok(),
        max_drawdown: risk::max_drawdown(returns, DrawdownStart::BeforeFirstReturn).map_err(refused_by_engine)?,
    })
}

fn monthly(dates: &[String], returns: &[f64]) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for (d, r) in dates.iter().zip(returns) {
        let g = out.entry(d[..7].to_string()).or_insert(1.0);
        *g *= 1.0 + r;
    }
    out.into_iter().map(|(m, g)| (m, g - 1.0)).collect()
}

pub async fn generate(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    req: ReportRequest,
) -> Result<Record, Failure> {
    let mut errors = Vec::new();
    for (field, v) in [("start", &req.start), ("end", &req.end)] {
        if v.as_deref().is_some_and(|d| !is_date(d)) {
            errors.push((field, "must be a date (YYYY-MM-DD)".to_string()));
        }
    }
    analytics::check_periods(&mut errors, req.periods_per_year);
    // An `end` on or before `start` is an empty period (409 `insufficient_data` below), not a field error:
    // JSON Schema cannot compare two fields, and the document states every rule that makes a body invalid.
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let book = match book::load(services, tenant, req.portfolio_id, req.end.as_deref()).await {
        Err(Failure::NotFound) => return Err(Failure::missing("portfolio_id", "no such portfolio in this workspace")),
        other => other?,
    };
    let valued = analytics::value(services, tenant, &book, req.end.as_deref()).await?;
    let end = valued.as_of.clone();
    let start = req.start.clone().unwrap_or_else(|| window_start(&end, 365));
    let mut symbols: Vec<String> = valued.instruments.iter().map(|(_, s)| s.clone()).collect();
    let held = symbols.len();
    let benchmark = book.portfolio.benchmark_symbol.clone();
    let bench_at = benchmark.as_ref().map(|b| match symbols.iter().position(|s| s == b) {
        Some(i) => i,
        None => {
            symbols.push(b.clone());
            symbols.len() - 1
        }
    });
    let pinned =
        inputs::pin(services, &tenant.workspace_id, "portfolio_id", &symbols, Some(start), Some(end.clone())).await?;
    let panel = inputs::load(services, &tenant.workspace_id, &pinned).await?;
    if panel.prices.len() < 21 {
        return Err(Failure::insufficient_data(format!(
            "{} days with every holding's observed price in the period; at least 21 are needed",
            panel.prices.len()
        )));
    }
    // Today's quantities, held through the period.
    let quantities: Vec<f64> = valued
        .instruments
        .iter()
        .map(|(id, _)| {
            book.lots
                .iter()
                .filter(|l| &l.instrument_id == id && l.acquired <= end)
                .map(|l| l.open_micros as f64 / 1e6)
                .sum()
        })
        .collect();
    let values: Vec<f64> =
        panel.prices.iter().map(|row| row[..held].iter().zip(&quantities).map(|(p, q)| p * q).sum()).collect();
    let returns: Vec<f64> = values.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let dates: Vec<String> = panel.dates.iter().skip(1).cloned().collect();
    let bench_returns: Option<Vec<f64>> =
        bench_at.map(|i| panel.prices.windows(2).map(|w| w[1][i] / w[0][i] - 1.0).collect());
    let (first, last) = (&panel.prices[0], &panel.prices[panel.prices.len() - 1]);
    let start_value: f64 = first[..held].iter().zip(&quantities).map(|(p, q)| p * q).sum();
    let mut conn = services.store.read().await?;
    let mut contributions = Vec::with_capacity(held);
    for (i, (id, symbol)) in valued.instruments.iter().enumerate() {
        let sector =
            fiscus_data_core::tables::market::get_instrument(&mut conn, &tenant.workspace_id, id).await?.sector;
        let w0 = first[i] * quantities[i] / start_value;
        let r = last[i] / first[i] - 1.0;
        contributions.push(Contribution {
            symbol: symbol.clone(),
            sector,
            start_weight: w0,
            period_return: r,
            contribution: w0 * r,
        });
    }
    drop(conn);
    let mut sectors: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for c in &contributions {
        let e = sectors.entry(c.sector.clone()).or_insert((0.0, 0.0));
        e.0 += c.start_weight;
        e.1 += c.contribution;
    }
    let mut quality = panel.quality.clone();
    let periods = quality.periods_per_year(req.periods_per_year);
    let perf = performance(&returns, periods)?;
    let bench_perf = bench_returns.as_deref().map(|b| performance(b, periods)).transpose()?;
    let port_months = monthly(&dates, &returns);
    let bench_months = bench_returns.as_deref().map(|b| monthly(&dates, b));
    let tail = value_at_risk::historical(&returns, 0.05).map_err(refused_by_engine)?;
    let output = ReportOutput {
        portfolio_id: book.portfolio.id,
        portfolio_code: book.portfolio.code.clone(),
        base_currency: book.portfolio.base_currency.code().to_string(),
        period_start: panel.dates.first().cloned().unwrap_or_default(),
        period_end: panel.dates.last().cloned().unwrap_or_default(),
        observations: returns.len(),
        excess_return: bench_perf.as_ref().map(|b| perf.period_return - b.period_return),
        benchmark,
        performance: perf,
        benchmark_performance: bench_perf,
        contributions,
        sectors: sectors
            .into_iter()
            .map(|(sector, (w, c))| SectorContribution { sector, start_weight: w, contribution: c })
            .collect(),
        monthly: port_months
            .into_iter()
            .map(|(month, r)| MonthlyReturn {
                benchmark: bench_months.as_ref().and_then(|b| b.get(&month).copied()),
                month,
                portfolio: r,
            })
            .collect(),
        var_1d_95: tail.var,
        cvar_1d_95: tail.cvar,
        periods_per_year: periods,
        frequency: quality.frequency,
        warnings: quality.warnings,
    };
    let request = json!({ "request": req });
    super::records::record(services, caller, tenant, RecordKind::Report, Some(book.portfolio.id), request, &output)
        .await
}

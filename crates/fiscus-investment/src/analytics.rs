//! Portfolio risk and benchmark comparison from the book's current holdings: each holding's weight is its
//! market value (in the base currency, at observed marks and FX) over the value of all holdings, and the
//! portfolio's history is those weights applied to the holdings' observed daily returns (historical
//! simulation on current holdings, the convention of a risk report). The statistics are the engine's.

use fiscus_domain::tenancy::Tenant;
use fiscus_quant::risk::{self, DrawdownStart};
use fiscus_quant::value_at_risk;
use serde::{Deserialize, Serialize};

use super::book::{self, Book};
use super::{invalid, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs;

/// Trading days per year, for annualising daily statistics (the engine's and empyrical's convention).
pub const DAYS_PER_YEAR: f64 = 252.0;

/// A holding's value and weight.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Weight {
    pub symbol: String,
    /// Market value in the portfolio's base currency, minor units.
    pub market_value_minor: i64,
    /// Share of the holdings' total value (cash excluded), 0 to 1.
    pub weight: f64,
}

/// Current holdings valued in the base currency, with their weights and the valuation date.
pub struct Valued {
    pub as_of: String,
    pub weights: Vec<Weight>,
    /// `(instrument id, symbol)` in the order of `weights`.
    pub instruments: Vec<(String, String)>,
    pub total_minor: i64,
    pub cash_minor: i64,
}

/// Values a book's holdings on `as_of` (every holding's newest observed price when `None`).
pub async fn value(services: &Services, tenant: &Tenant, book: &Book, as_of: Option<&str>) -> Result<Valued, Failure> {
    if book.lots.is_empty() {
        return Err(Failure::refused(
            fiscus_domain::error_code::ErrorCode::Conflict,
            format!("portfolio {} holds no open lots: there are no positions to measure", book.portfolio.id),
        ));
    }
    // Holdings are the book's on its date (today by default: every settled trade counts); the returns window
    // ends at the newest price that values them.
    let held_on = book::book_date(as_of);
    let instruments = book.instruments(Some(&held_on));
    let marks = book::marks(services, &tenant.workspace_id, &instruments, Some(&held_on)).await?;
    let on = as_of.map(str::to_string).or_else(|| marks.values().map(|m| m.date.clone()).max()).unwrap_or_default();
    let base = book.portfolio.base_currency;
    let mut weights = Vec::with_capacity(instruments.len());
    let mut held = Vec::with_capacity(instruments.len());
    for (id, symbol) in &instruments {
        let lots: Vec<_> = book.lots.iter().filter(|l| &l.instrument_id == id && l.acquired <= held_on).collect();
        let Some(first) = lots.first() else { continue };
        let micros: i64 = lots.iter().map(|l| l.open_micros).sum();
        let mark = &marks[id];
        let local = (i128::from(mark.price_minor) * i128::from(micros) / 1_000_000) as f64;
        let rate = book::fx_rate(services, &tenant.workspace_id, first.currency, base, &on).await?;
        weights.push(Weight { symbol: symbol.clone(), market_value_minor: (local * rate).round() as i64, weight: 0.0 });
        held.push((id.clone(), symbol.clone()));
    }
    let total: i64 = weights.iter().map(|w| w.market_value_minor).sum();
    if total <= 0 {
        return Err(Failure::refused(
            fiscus_domain::error_code::ErrorCode::Conflict,
            format!("portfolio {} has no holdings of positive value on {on}", book.portfolio.id),
        ));
    }
    for w in &mut weights {
        w.weight = w.market_value_minor as f64 / total as f64;
    }
    let mut cash = 0i64;
    for (currency, amount) in &book.cash {
        let rate = book::fx_rate(services, &tenant.workspace_id, *currency, base, &on).await?;
        cash += (*amount as f64 * rate).round() as i64;
    }
    Ok(Valued { as_of: on, weights, instruments: held, total_minor: total, cash_minor: cash })
}

/// A portfolio's returns on current weights, with their dates, the benchmark's on the same dates (when one is
/// named) and what aligning them dropped.
pub struct History {
    pub dates: Vec<String>,
    pub portfolio: Vec<f64>,
    pub benchmark: Vec<f64>,
    pub quality: inputs::Quality,
}

/// The portfolio's returns on current weights over `[start, end]`, with their dates, and (when
/// `benchmark` names one) the benchmark's returns on the same dates: only dates on which every holding and
/// the benchmark have an observed price are kept, and the ones dropped are named in its quality.
pub async fn history(
    services: &Services,
    tenant: &Tenant,
    valued: &Valued,
    benchmark: Option<&str>,
    start: Option<String>,
    end: &str,
) -> Result<History, Failure> {
    let mut symbols: Vec<String> = valued.instruments.iter().map(|(_, s)| s.clone()).collect();
    let held = symbols.len();
    if let Some(b) = benchmark.filter(|b| !symbols.iter().any(|s| s == b)) {
        symbols.push(b.to_string());
    }
    let at = benchmark.and_then(|b| symbols.iter().position(|s| s == b));
    // The holdings were valued, so they exist: an instrument missing here is the benchmark.
    let pinned = inputs::pin(services, &tenant.workspace_id, "portfolio_id", &symbols, start, Some(end.to_string()))
        .await
        .map_err(|f| match f {
            Failure::Missing(_, message) => Failure::missing("benchmark", message),
            other => other,
        })?;
    let panel = inputs::load(services, &tenant.workspace_id, &pinned).await?;
    let returns = panel.returns();
    let w: Vec<f64> = valued.weights.iter().map(|w| w.weight).collect();
    let series = returns.iter().map(|row| row[..held].iter().zip(&w).map(|(r, w)| r * w).sum()).collect();
    let bench = at.map(|i| returns.iter().map(|row| row[i]).collect()).unwrap_or_default();
    Ok(History {
        dates: panel.dates.into_iter().skip(1).collect(),
        portfolio: series,
        benchmark: bench,
        quality: panel.quality,
    })
}

/// The first date of a window of `days` calendar days ending on `end`.
pub fn window_start(end: &str, days: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(end, format)
        .ok()
        .and_then(|d| d.checked_sub(time::Duration::days(days)))
        .and_then(|d| d.format(format).ok())
        .unwrap_or_default()
}

/// `GET /investment/risk`.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RiskReport {
    /// Always `portfolio_risk`.
    pub object: String,
    pub portfolio_id: i64,
    pub base_currency: String,
    pub as_of: String,
    /// The return window: first and last date, and the number of daily returns.
    pub window_start: String,
    pub window_end: String,
    pub observations: usize,
    /// Tail probability of the VaR (1 − confidence).
    pub confidence: f64,
    /// One-day historical VaR and CVaR as returns (a loss is negative), and in base-currency minor units
    /// of the holdings' value (a loss is negative).
    pub var_1d: f64,
    pub cvar_1d: f64,
    pub var_1d_minor: i64,
    pub cvar_1d_minor: i64,
    /// One-day Gaussian VaR, for comparison.
    pub parametric_var_1d: f64,
    pub annual_volatility: f64,
    pub annual_return: f64,
    /// Periods per year the annual figures use: the request's, or inferred from the dates (252 daily, 52
    /// weekly, 12 monthly, 4 quarterly, 1 annual).
    #[schema(example = 252.0)]
    pub periods_per_year: f64,
    /// The frequency of the return dates.
    pub frequency: fiscus_data_core::rules::frequency::Frequency,
    /// Each observation dropped and why, each gap bridged, and the frequency inferred.
    pub warnings: Vec<inputs::Warning>,
    /// Largest fall from a peak over the window, as a non-positive fraction.
    pub max_drawdown: f64,
    pub concentration: Concentration,
    pub holdings_value_minor: i64,
    pub cash_minor: i64,
    pub weights: Vec<Weight>,
    /// Fama-French three-factor loadings of the current holdings (monthly, up to 60 months); null when
    /// they cannot be estimated, with the reason in `factor_exposures_unavailable`.
    pub factor_exposures: Option<super::factors::FactorExposures>,
    pub factor_exposures_unavailable: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Concentration {
    /// Herfindahl-Hirschman index of the weights, Σw² (1 for one holding).
    pub herfindahl: f64,
    /// 1 / Herfindahl: the number of equal holdings as concentrated.
    pub effective_holdings: f64,
    pub largest_symbol: String,
    pub largest_weight: f64,
    /// Sum of the five largest weights.
    pub top_five_weight: f64,
}

pub fn concentration(weights: &[Weight]) -> Concentration {
    let mut w: Vec<&Weight> = weights.iter().collect();
    w.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.symbol.cmp(&b.symbol)));
    let herfindahl: f64 = w.iter().map(|x| x.weight * x.weight).sum();
    Concentration {
        herfindahl,
        effective_holdings: if herfindahl > 0.0 { 1.0 / herfindahl } else { 0.0 },
        largest_symbol: w.first().map(|x| x.symbol.clone()).unwrap_or_default(),
        largest_weight: w.first().map_or(0.0, |x| x.weight),
        top_five_weight: w.iter().take(5).map(|x| x.weight).sum(),
    }
}

/// What a risk report is asked for.
pub struct RiskQuery {
    pub portfolio_id: i64,
    pub as_of: Option<String>,
    /// Calendar days of returns (default 365).
    pub lookback_days: Option<i64>,
    /// 0.9 to 0.999 (default 0.95).
    pub confidence: Option<f64>,
    /// Periods per year for annualising; inferred from the prices' dates when not given.
    pub periods_per_year: Option<f64>,
}

/// Field error of a requested `periods_per_year` (1 to 366).
pub(crate) fn check_periods(errors: &mut Vec<(&'static str, String)>, p: Option<f64>) {
    if p.is_some_and(|p| !(p.is_finite() && (1.0..=366.0).contains(&p))) {
        errors.push(("periods_per_year", "must be from 1 to 366".to_string()));
    }
}

pub async fn risk(services: &Services, tenant: &Tenant, q: RiskQuery) -> Result<RiskReport, Failure> {
    if q.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        return Err(invalid("as_of", "must be a date (YYYY-MM-DD)"));
    }
    let lookback = q.lookback_days.unwrap_or(365);
    if !(30..=3650).contains(&lookback) {
        return Err(invalid("lookback_days", "must be from 30 to 3650"));
    }
    let confidence = q.confidence.unwrap_or(0.95);
    if !(0.9..=0.999).contains(&confidence) {
        return Err(invalid("confidence", "must be from 0.9 to 0.999"));
    }
    let mut errors = Vec::new();
    check_periods(&mut errors, q.periods_per_year);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let book = book::load(services, tenant, q.portfolio_id, q.as_of.as_deref()).await?;
    let valued = value(services, tenant, &book, q.as_of.as_deref()).await?;
    let start = window_start(&valued.as_of, lookback);
    let History { dates, portfolio: returns, mut quality, .. } =
        history(services, tenant, &valued, None, Some(start), &valued.as_of).await?;
    if returns.len() < 20 {
        return Err(Failure::insufficient_data(format!(
            "{} returns on dates every holding has a price in the window; at least 20 are needed",
            returns.len()
        )));
    }
    let periods = quality.periods_per_year(q.periods_per_year);
    let (factor_exposures, factor_exposures_unavailable) =
        match super::factors::exposures(services, tenant, &valued).await? {
            super::factors::Exposures::Estimated(f) => (Some(f), None),
            super::factors::Exposures::Unavailable(why) => (None, Some(why)),
        };
    let cutoff = 1.0 - confidence;
    let tail = value_at_risk::historical(&returns, cutoff).map_err(refused_by_engine)?;
    let gaussian = value_at_risk::parametric(&returns, cutoff).map_err(refused_by_engine)?;
    let money = |r: f64| (r * valued.total_minor as f64).round() as i64;
    Ok(RiskReport {
        object: "portfolio_risk".into(),
        portfolio_id: book.portfolio.id,
        base_currency: book.portfolio.base_currency.code().to_string(),
        as_of: valued.as_of.clone(),
        window_start: dates.first().cloned().unwrap_or_default(),
        window_end: dates.last().cloned().unwrap_or_default(),
        observations: returns.len(),
        confidence,
        var_1d: tail.var,
        cvar_1d: tail.cvar,
        var_1d_minor: money(tail.var),
        cvar_1d_minor: money(tail.cvar),
        parametric_var_1d: gaussian.var,
        annual_volatility: risk::annual_volatility(&returns, periods).map_err(refused_by_engine)?,
        annual_return: risk::annual_return(&returns, periods).map_err(refused_by_engine)?,
        periods_per_year: periods,
        frequency: quality.frequency,
        warnings: quality.warnings,
        max_drawdown: risk::max_drawdown(&returns, DrawdownStart::BeforeFirstReturn).map_err(refused_by_engine)?,
        concentration: concentration(&valued.weights),
        holdings_value_minor: valued.total_minor,
        cash_minor: valued.cash_minor,
        weights: valued.weights,
        factor_exposures,
        factor_exposures_unavailable,
    })
}

/// `GET /benchmarking/comparisons`.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Comparison {
    /// Always `benchmark_comparison`.
    pub object: String,
    pub portfolio_id: i64,
    #[schema(example = "SPX")]
    pub benchmark: String,
    pub as_of: String,
    pub window_start: String,
    pub window_end: String,
    /// Returns compared (dates on which every holding and the benchmark have an observed price).
    pub observations: usize,
    /// Annual risk-free rate used for alpha and beta (converted to a rate per period by `/periods_per_year`).
    pub risk_free_rate: f64,
    /// Periods per year the annual figures use: the request's, or inferred from the dates.
    #[schema(example = 252.0)]
    pub periods_per_year: f64,
    pub frequency: fiscus_data_core::rules::frequency::Frequency,
    /// Each observation dropped and why, each gap bridged, and the frequency inferred.
    pub warnings: Vec<inputs::Warning>,
    pub portfolio_annual_return: f64,
    pub benchmark_annual_return: f64,
    pub portfolio_annual_volatility: f64,
    pub benchmark_annual_volatility: f64,
    /// Annualised standard deviation of active returns (portfolio − benchmark), sample (ddof 1) × √periods_per_year.
    pub tracking_error: f64,
    /// Mean active return over its standard deviation, annualised (× √periods_per_year); null when undefined.
    pub information_ratio: Option<f64>,
    /// empyrical's `excess_sharpe`: the same ratio per period, not annualised.
    pub excess_sharpe: Option<f64>,
    /// Jensen's alpha, annualised as empyrical does.
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    /// Annualised growth on the benchmark's up days over the benchmark's on them (empyrical).
    pub up_capture: Option<f64>,
    pub down_capture: Option<f64>,
    pub up_down_capture: Option<f64>,
}

pub struct ComparisonQuery {
    pub portfolio_id: i64,
    pub benchmark: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub risk_free_rate: Option<f64>,
    /// Periods per year for annualising; inferred from the prices' dates when not given.
    pub periods_per_year: Option<f64>,
}

/// Compares a portfolio's current holdings with a benchmark over a window (default: the three years
/// ending on the valuation date), with empyrical's conventions (`fiscus_quant::benchmark`).
pub async fn comparison(services: &Services, tenant: &Tenant, q: ComparisonQuery) -> Result<Comparison, Failure> {
    let mut errors = Vec::new();
    for (field, v) in [("start", &q.start), ("end", &q.end)] {
        if v.as_deref().is_some_and(|d| !is_date(d)) {
            errors.push((field, "must be a date (YYYY-MM-DD)".to_string()));
        }
    }
    // An `end` before `start` is an empty window (409 `insufficient_data` below), as on every read.
    if q.benchmark.as_deref().is_some_and(|b| !fiscus_data_core::rules::is_name(b)) {
        errors.push(("benchmark", "must be a symbol".to_string()));
    }
    let rf = q.risk_free_rate.unwrap_or(0.0);
    if !(rf.is_finite() && (-0.1..=0.5).contains(&rf)) {
        errors.push(("risk_free_rate", "must be an annual rate from -0.1 to 0.5".to_string()));
    }
    check_periods(&mut errors, q.periods_per_year);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let book = book::load(services, tenant, q.portfolio_id, None).await?;
    let Some(benchmark) = q.benchmark.clone().or_else(|| book.portfolio.benchmark_symbol.clone()) else {
        return Err(invalid("benchmark", "the portfolio has no benchmark: name one"));
    };
    let valued = value(services, tenant, &book, q.end.as_deref()).await?;
    let end = valued.as_of.clone();
    let start = q.start.clone().unwrap_or_else(|| window_start(&end, 3 * 365));
    let History { dates, portfolio: returns, benchmark: bench, mut quality } =
        match history(services, tenant, &valued, Some(&benchmark), Some(start), &end).await {
            // The benchmark is named by the caller: an unknown one is their field's error.
            Err(Failure::Invalid(e)) => {
                return Err(Failure::Invalid(e.into_iter().map(|(_, m)| ("benchmark", m)).collect()));
            }
            other => other?,
        };
    if returns.len() < 20 {
        return Err(Failure::insufficient_data(format!(
            "{} returns in the window; at least 20 are needed",
            returns.len()
        )));
    }
    let periods = quality.periods_per_year(q.periods_per_year);
    let period_rf = rf / periods;
    let rel =
        fiscus_quant::benchmark::relative_summary(&returns, &bench, period_rf, periods).map_err(refused_by_engine)?;
    Ok(Comparison {
        object: "benchmark_comparison".into(),
        portfolio_id: book.portfolio.id,
        benchmark,
        as_of: end,
        window_start: dates.first().cloned().unwrap_or_default(),
        window_end: dates.last().cloned().unwrap_or_default(),
        observations: returns.len(),
        risk_free_rate: rf,
        portfolio_annual_return: risk::annual_return(&returns, periods).map_err(refused_by_engine)?,
        benchmark_annual_return: risk::annual_return(&bench, periods).map_err(refused_by_engine)?,
        portfolio_annual_volatility: risk::annual_volatility(&returns, periods).map_err(refused_by_engine)?,
        benchmark_annual_volatility: risk::annual_volatility(&bench, periods).map_err(refused_by_engine)?,
        periods_per_year: periods,
        frequency: quality.frequency,
        warnings: quality.warnings,
        tracking_error: rel.tracking_error,
        information_ratio: rel.information_ratio,
        excess_sharpe: rel.excess_sharpe,
        alpha: rel.alpha,
        beta: rel.beta,
        up_capture: rel.up_capture,
        down_capture: rel.down_capture,
        up_down_capture: rel.up_down_capture,
    })
}

/// Each holding's share of a portfolio's volatility (the Euler allocation: w_i (Σw)_i / w'Σw, summing to 1),
/// from the holdings' daily returns over the last `lookback` common returns. `None` when a holding has no
/// prices in the workspace, or fewer than 60 common returns exist: then there is nothing honest to draw.
pub async fn risk_contributions(
    services: &Services,
    workspace_id: &str,
    weights: &[(String, f64)],
    lookback: usize,
) -> Result<Option<Vec<(String, f64)>>, Failure> {
    if weights.len() < 2 {
        return Ok(None);
    }
    let symbols: Vec<String> = weights.iter().map(|(s, _)| s.clone()).collect();
    let pinned = match inputs::pin(services, workspace_id, "instruments", &symbols, None, None).await {
        Ok(p) => p,
        Err(Failure::Invalid(_)) => return Ok(None),
        Err(other) => return Err(other),
    };
    let panel = inputs::load(services, workspace_id, &pinned).await?;
    let rows = panel.returns();
    if rows.len() < 60 {
        return Ok(None);
    }
    let recent = &rows[rows.len().saturating_sub(lookback)..];
    let returns = fiscus_quant::matrix::Matrix::from_rows(recent).map_err(refused_by_engine)?;
    let cov = fiscus_quant::covariance::sample(&returns, 1).map_err(refused_by_engine)?;
    let w: Vec<f64> = weights.iter().map(|(_, w)| *w).collect();
    let variance = cov.quad_form(&w);
    if !(variance.is_finite() && variance > 0.0) {
        return Ok(None);
    }
    let marginal = cov.mul_vec(&w);
    Ok(Some(symbols.into_iter().zip(w.iter().zip(marginal).map(|(w, m)| w * m / variance)).collect()))
}

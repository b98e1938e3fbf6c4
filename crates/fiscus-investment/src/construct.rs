//! Portfolio construction: target weights from the engine's optimisers over observed returns of the
//! holdings (or of named instruments), and the whole-unit orders that would reach them. A proposal: it is
//! sealed and recorded, and never trades.

use crate::rules::model_portfolio::{self as model, Held, Order, WEIGHT_UNIT};
use crate::tables::investment_records::{Record, RecordKind};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::Matrix;
use fiscus_quant::optimise::{self, Constraints, Objective, Rebalance};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::analytics::{self, window_start};
use super::{book, invalid, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::inputs;

/// What the optimiser looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConstructionObjective {
    MinVariance,
    MaxSharpe,
    /// Equal risk contribution.
    RiskParity,
}

/// `POST /investment/portfolios/{portfolio}/construct` (every field optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstructRequest {
    /// Default `min_variance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<ConstructionObjective>,
    /// The instruments to invest in (default: those held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 2, max_items = 200, example = json!(["AAPL", "MSFT", "JNJ", "PG", "KO"]))]
    pub instruments: Option<Vec<String>>,
    /// Calendar days of daily returns the estimates use, 90 to 3650 (default 1095).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 90, maximum = 3650, example = 1095)]
    pub lookback_days: Option<i64>,
    /// The largest weight of one instrument, above 0 and up to 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 1, example = 0.3)]
    pub max_weight: Option<f64>,
    /// The most one-way-doubled turnover (Σ|w − w₀|) allowed from the current weights, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 2, example = 0.5)]
    pub max_turnover: Option<f64>,
    /// Annual risk-free rate for `max_sharpe`, -0.1 to 0.5 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = -0.1, maximum = 0.5)]
    pub risk_free_rate: Option<f64>,
    /// Valuation date of the holdings and the end of the window (default: the newest observed prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
    /// Periods per year the annual estimates use, 1 to 366 (default: inferred from the prices' dates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
}

/// A target weight.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Target {
    pub symbol: String,
    pub current_weight_ppm: i64,
    /// Parts per million of the holdings' value (targets sum to exactly 1,000,000).
    pub target_weight_ppm: i64,
}

/// A construction's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ConstructOutput {
    pub portfolio_id: i64,
    pub objective: ConstructionObjective,
    pub as_of: String,
    pub window_start: String,
    pub window_end: String,
    pub observations: usize,
    pub targets: Vec<Target>,
    /// Ex-ante annualised volatility and (where estimated) return of the targets.
    pub expected_volatility: f64,
    pub expected_return: Option<f64>,
    /// Orders from today's holdings to the targets (whole units), against the holdings' value (cash stays
    /// as it is).
    pub orders: Vec<Order>,
    /// Always false: a proposal.
    pub executable: bool,
    /// Periods per year the annual estimates use: the request's, or inferred from the dates (252 daily,
    /// 52 weekly, 12 monthly, 4 quarterly, 1 annual).
    #[schema(example = 252.0)]
    pub periods_per_year: f64,
    /// The frequency of the prices' dates.
    pub frequency: fiscus_data_core::rules::frequency::Frequency,
    /// Each observation dropped and why, each gap bridged, and the frequency inferred.
    pub warnings: Vec<inputs::Warning>,
}

pub async fn construct(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    portfolio_id: i64,
    req: ConstructRequest,
) -> Result<Record, Failure> {
    let mut errors = Vec::new();
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".to_string()));
    }
    let lookback = req.lookback_days.unwrap_or(1095);
    if !(90..=3650).contains(&lookback) {
        errors.push(("lookback_days", "must be from 90 to 3650".to_string()));
    }
    let max_weight = req.max_weight.unwrap_or(1.0);
    if !(max_weight.is_finite() && max_weight > 0.0 && max_weight <= 1.0) {
        errors.push(("max_weight", "must be above 0 and at most 1".to_string()));
    }
    if req.max_turnover.is_some_and(|t| !(t.is_finite() && (0.0..=2.0).contains(&t))) {
        errors.push(("max_turnover", "must be from 0 to 2".to_string()));
    }
    let rf = req.risk_free_rate.unwrap_or(0.0);
    if !(rf.is_finite() && (-0.1..=0.5).contains(&rf)) {
        errors.push(("risk_free_rate", "must be from -0.1 to 0.5".to_string()));
    }
    if let Some(list) = &req.instruments
        && !(2..=200).contains(&list.len())
    {
        errors.push(("instruments", "from 2 to 200 instruments".to_string()));
    }
    analytics::check_periods(&mut errors, req.periods_per_year);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let objective = req.objective.unwrap_or(ConstructionObjective::MinVariance);
    let book = book::load(services, tenant, portfolio_id, req.as_of.as_deref()).await?;
    let valued = analytics::value(services, tenant, &book, req.as_of.as_deref()).await?;
    let symbols: Vec<String> = match &req.instruments {
        Some(list) => list.clone(),
        None => valued.instruments.iter().map(|(_, s)| s.clone()).collect(),
    };
    if symbols.len() < 2 {
        return Err(invalid("instruments", "construction needs at least two instruments"));
    }
    if max_weight * (symbols.len() as f64) < 1.0 - 1e-12 {
        // How many instruments there are is the portfolio's state (or the request's list): 409 with the count,
        // since JSON Schema cannot compare `max_weight` with a number of holdings.
        return Err(Failure::Refused {
            code: fiscus_domain::error_code::ErrorCode::Conflict,
            detail: format!(
                "{} instruments cannot be fully invested under a max_weight of {max_weight}",
                symbols.len()
            ),
            members: vec![("instruments", serde_json::json!(symbols.len()))],
        });
    }
    let pinned = inputs::pin(
        services,
        &tenant.workspace_id,
        "instruments",
        &symbols,
        Some(window_start(&valued.as_of, lookback)),
        Some(valued.as_of.clone()),
    )
    .await?;
    let panel = inputs::load(services, &tenant.workspace_id, &pinned).await?;
    let rows = panel.returns();
    if rows.len() < 60 {
        return Err(Failure::insufficient_data(format!(
            "{} common daily returns in the window; at least 60 are needed",
            rows.len()
        )));
    }
    let mut quality = panel.quality.clone();
    let periods = quality.periods_per_year(req.periods_per_year);
    let current: Vec<f64> =
        symbols.iter().map(|s| valued.weights.iter().find(|w| &w.symbol == s).map_or(0.0, |w| w.weight)).collect();
    let returns = Matrix::from_rows(&rows).map_err(refused_by_engine)?;
    let (weights, volatility, expected_return) = match objective {
        ConstructionObjective::RiskParity => {
            let cov = fiscus_quant::covariance::sample(&returns, 1).map_err(refused_by_engine)?.scaled(periods);
            let p = optimise::equal_risk_contribution(&cov).map_err(refused_by_engine)?;
            let vol = cov.quad_form(&p.weights).sqrt();
            (p.weights, vol, None)
        }
        _ => {
            let mut constraints = Constraints::bounded(symbols.len(), 0.0, max_weight);
            if let Some(t) = req.max_turnover {
                constraints.rebalance =
                    Some(Rebalance { current: current.clone(), cost_per_unit_turnover: 0.0, max_turnover: Some(t) });
            }
            let goal = match objective {
                ConstructionObjective::MaxSharpe => Objective::MaxSharpe { risk_free: rf },
                _ => Objective::MinVariance,
            };
            let p =
                optimise::optimise_from_returns(&returns, periods, goal, &constraints).map_err(refused_by_engine)?;
            (p.weights, p.volatility, p.expected_return)
        }
    };
    let clipped: Vec<f64> = weights.iter().map(|w| w.max(0.0)).collect();
    let ppm = model::largest_remainder(&clipped, WEIGHT_UNIT);
    // Orders at today's marks, in the base currency.
    let mut ids = pinned_instruments(&pinned);
    for (id, symbol) in &valued.instruments {
        if !ids.iter().any(|(i, _)| i == id) {
            ids.push((id.clone(), symbol.clone()));
        }
    }
    let marks = book::marks(services, &tenant.workspace_id, &ids, Some(&valued.as_of)).await?;
    let prices =
        book::prices_in_base(services, &tenant.workspace_id, &marks, book.portfolio.base_currency, &valued.as_of)
            .await?;
    let targets_in: Vec<(String, i64, i64)> =
        pinned.instruments.iter().enumerate().map(|(i, p)| (p.symbol.clone(), ppm[i], prices[&p.instrument])).collect();
    let held: Vec<Held> = valued
        .instruments
        .iter()
        .map(|(id, symbol)| {
            let micros: i64 = book
                .lots
                .iter()
                .filter(|l| &l.instrument_id == id && l.acquired <= valued.as_of)
                .map(|l| l.open_micros)
                .sum();
            Held { symbol: symbol.clone(), quantity_micros: micros, price_minor: prices[id] }
        })
        .collect();
    let (orders, _) = model::rebalance(&held, &targets_in, 0);
    let output = ConstructOutput {
        portfolio_id,
        objective,
        as_of: valued.as_of.clone(),
        window_start: panel.dates.get(1).cloned().unwrap_or_default(),
        window_end: panel.dates.last().cloned().unwrap_or_default(),
        observations: rows.len(),
        targets: symbols
            .iter()
            .zip(&current)
            .zip(&ppm)
            .map(|((s, c), t)| Target {
                symbol: s.clone(),
                current_weight_ppm: (c * WEIGHT_UNIT as f64).round() as i64,
                target_weight_ppm: *t,
            })
            .collect(),
        expected_volatility: volatility,
        expected_return,
        orders,
        executable: false,
        periods_per_year: periods,
        frequency: quality.frequency,
        warnings: quality.warnings,
    };
    let request = json!({ "portfolio_id": portfolio_id, "request": req });
    super::records::record(services, caller, tenant, RecordKind::Construction, Some(portfolio_id), request, &output)
        .await
}

fn pinned_instruments(p: &inputs::PinnedPrices) -> Vec<(String, String)> {
    p.instruments.iter().map(|i| (i.instrument.clone(), i.symbol.clone())).collect()
}

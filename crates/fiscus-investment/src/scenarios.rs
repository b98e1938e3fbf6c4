//! Stress scenarios on a portfolio's current holdings: historical (a window of observed returns replayed on
//! today's holdings, or a named crisis) and hypothetical (shocks by instrument, by sector, or to the market,
//! which reaches each holding through its beta to the benchmark). The result is a sealed record; nothing
//! trades.

use std::collections::BTreeMap;

use crate::tables::investment_records::{Record, RecordKind};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::risk::{self, DrawdownStart};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::analytics::{self, Valued, window_start};
use super::{book, invalid, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::inputs;

/// Named crises, replayed from the observed data (peak to trough of the S&P 500).
pub const PRESETS: [(&str, &str, &str); 4] = [
    ("gfc_2008", "2008-09-12", "2009-03-09"),
    ("euro_crisis_2011", "2011-07-22", "2011-10-03"),
    ("covid_crash_2020", "2020-02-19", "2020-03-23"),
    ("rate_shock_2022", "2022-01-03", "2022-10-12"),
];

/// A historical window: `preset`, or `start` and `end`.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoricalScenario {
    /// `gfc_2008`, `euro_crisis_2011`, `covid_crash_2020` or `rate_shock_2022`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(gfc_2008|euro_crisis_2011|covid_crash_2020|rate_shock_2022)$", example = "covid_crash_2020")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date)]
    pub start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date)]
    pub end: Option<String>,
}

/// Shocks as simple returns (−0.3 is a 30 % fall): an instrument's own shock wins over its sector's, and
/// a sector's over the market's.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HypotheticalScenario {
    /// The benchmark's return; each holding moves by its beta to the benchmark (one year of daily returns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = -1, maximum = 10, example = -0.2)]
    pub market: Option<f64>,
    /// Returns by sector (as the instruments' reference data names them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Object, example = json!({"Information Technology": -0.3}))]
    pub sectors: BTreeMap<String, f64>,
    /// Returns by symbol.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Object, example = json!({"AAPL": -0.25}))]
    pub instruments: BTreeMap<String, f64>,
}

/// `POST /investment/portfolios/{portfolio}/scenarios`: exactly one of `historical` and `hypothetical`.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StressRequest {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "fiscus_domain::api::objects::optional_object"
    )]
    pub historical: Option<HistoricalScenario>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "fiscus_domain::api::objects::optional_object"
    )]
    pub hypothetical: Option<HypotheticalScenario>,
    /// Valuation date of today's holdings (default: their newest observed prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
}

/// One holding under the scenario.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ScenarioLine {
    pub symbol: String,
    pub market_value_minor: i64,
    /// The return applied.
    #[serde(rename = "return")]
    pub shock: f64,
    /// Where it came from: `observed` (historical), `instrument`, `sector`, `market` (via `beta`) or `none`.
    pub source: String,
    pub beta: Option<f64>,
    pub pnl_minor: i64,
}

/// A scenario's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ScenarioOutput {
    pub portfolio_id: i64,
    pub base_currency: String,
    pub as_of: String,
    /// `historical` or `hypothetical`.
    pub kind: String,
    pub preset: Option<String>,
    pub window_start: Option<String>,
    pub window_end: Option<String>,
    pub holdings_value_minor: i64,
    pub pnl_minor: i64,
    /// P&L over the holdings' value.
    #[serde(rename = "return")]
    pub portfolio_return: f64,
    /// Historical only: the worst day and the largest fall from a peak inside the window.
    pub worst_day: Option<WorstDay>,
    pub max_drawdown: Option<f64>,
    pub lines: Vec<ScenarioLine>,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorstDay {
    pub date: String,
    #[serde(rename = "return")]
    pub day_return: f64,
}

fn shock_ok(v: f64) -> bool {
    v.is_finite() && (-1.0..=10.0).contains(&v)
}

pub async fn run(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    portfolio_id: i64,
    req: StressRequest,
) -> Result<Record, Failure> {
    let mut errors = Vec::new();
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".to_string()));
    }
    match (&req.historical, &req.hypothetical) {
        (Some(_), Some(_)) | (None, None) => {
            errors.push(("historical", "give exactly one of historical and hypothetical".into()))
        }
        (Some(h), None) => match (&h.preset, &h.start, &h.end) {
            (Some(p), None, None) if PRESETS.iter().any(|(n, _, _)| n == p) => {}
            (Some(_), None, None) => errors.push(("historical", "an unknown preset".into())),
            // A start on or after the end is an empty window (409 `insufficient_data`), as on every read.
            (None, Some(s), Some(e)) if is_date(s) && is_date(e) => {}
            _ => errors.push(("historical", "a preset, or a start and an end (YYYY-MM-DD)".into())),
        },
        (None, Some(h)) => {
            if h.market.is_some_and(|m| !shock_ok(m))
                || h.sectors.values().chain(h.instruments.values()).any(|v| !shock_ok(*v))
            {
                errors.push(("hypothetical", "every shock is a return from -1 to 10".into()));
            }
            if h.market.is_none() && h.sectors.is_empty() && h.instruments.is_empty() {
                errors.push(("hypothetical", "at least one shock".into()));
            }
            if h.sectors.len() + h.instruments.len() > 500 {
                errors.push(("hypothetical", "at most 500 shocks".into()));
            }
        }
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let book = book::load(services, tenant, portfolio_id, req.as_of.as_deref()).await?;
    let valued = analytics::value(services, tenant, &book, req.as_of.as_deref()).await?;
    let output = match (&req.historical, &req.hypothetical) {
        (Some(h), _) => historical(services, tenant, &valued, h).await?,
        (_, Some(h)) => hypothetical(services, tenant, &valued, book.portfolio.benchmark_symbol.as_deref(), h).await?,
        _ => return Err(Failure::internal("a scenario of neither kind")),
    };
    let output =
        ScenarioOutput { portfolio_id, base_currency: book.portfolio.base_currency.code().to_string(), ..output };
    let request = json!({ "portfolio_id": portfolio_id, "request": req });
    super::records::record(services, caller, tenant, RecordKind::Scenario, Some(portfolio_id), request, &output).await
}

fn total(valued: &Valued, lines: Vec<ScenarioLine>) -> (i64, f64, Vec<ScenarioLine>) {
    let pnl: i64 = lines.iter().map(|l| l.pnl_minor).sum();
    (pnl, pnl as f64 / valued.total_minor as f64, lines)
}

async fn historical(
    services: &Services,
    tenant: &Tenant,
    valued: &Valued,
    h: &HistoricalScenario,
) -> Result<ScenarioOutput, Failure> {
    let (start, end) = match &h.preset {
        Some(p) => {
            let (_, s, e) =
                PRESETS.iter().find(|(n, _, _)| n == p).ok_or_else(|| invalid("historical", "an unknown preset"))?;
            (s.to_string(), e.to_string())
        }
        None => (h.start.clone().unwrap_or_default(), h.end.clone().unwrap_or_default()),
    };
    let symbols: Vec<String> = valued.instruments.iter().map(|(_, s)| s.clone()).collect();
    let pinned =
        inputs::pin(services, &tenant.workspace_id, "historical", &symbols, Some(start.clone()), Some(end.clone()))
            .await?;
    let panel = inputs::load(services, &tenant.workspace_id, &pinned).await?;
    if panel.prices.len() < 2 {
        return Err(Failure::insufficient_data(format!(
            "the holdings have common observed prices on {} days of {start}..{end}",
            panel.prices.len()
        )));
    }
    let (first, last) = (&panel.prices[0], &panel.prices[panel.prices.len() - 1]);
    let lines: Vec<ScenarioLine> = valued
        .weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let r = last[i] / first[i] - 1.0;
            ScenarioLine {
                symbol: w.symbol.clone(),
                market_value_minor: w.market_value_minor,
                shock: r,
                source: "observed".into(),
                beta: None,
                pnl_minor: (w.market_value_minor as f64 * r).round() as i64,
            }
        })
        .collect();
    let weights: Vec<f64> = valued.weights.iter().map(|w| w.weight).collect();
    let daily: Vec<f64> =
        panel.returns().iter().map(|row| row.iter().zip(&weights).map(|(r, w)| r * w).sum()).collect();
    let worst = daily
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, r)| WorstDay { date: panel.dates[i + 1].clone(), day_return: *r });
    let drawdown = risk::max_drawdown(&daily, DrawdownStart::BeforeFirstReturn).map_err(refused_by_engine)?;
    let (pnl, ret, lines) = total(valued, lines);
    Ok(ScenarioOutput {
        portfolio_id: 0,
        base_currency: String::new(),
        as_of: valued.as_of.clone(),
        kind: "historical".into(),
        preset: h.preset.clone(),
        window_start: panel.dates.first().cloned(),
        window_end: panel.dates.last().cloned(),
        holdings_value_minor: valued.total_minor,
        pnl_minor: pnl,
        portfolio_return: ret,
        worst_day: worst,
        max_drawdown: Some(drawdown),
        lines,
    })
}

async fn hypothetical(
    services: &Services,
    tenant: &Tenant,
    valued: &Valued,
    benchmark: Option<&str>,
    h: &HypotheticalScenario,
) -> Result<ScenarioOutput, Failure> {
    let mut conn = services.store.read().await?;
    let mut sectors = Vec::with_capacity(valued.instruments.len());
    for (id, _) in &valued.instruments {
        sectors
            .push(fiscus_data_core::tables::market::get_instrument(&mut conn, &tenant.workspace_id, id).await?.sector);
    }
    drop(conn);
    for s in h.instruments.keys() {
        if !valued.instruments.iter().any(|(_, sym)| sym == s) {
            // What the portfolio holds is its state: 409, as for any name the workspace does not hold.
            return Err(Failure::missing("hypothetical", format!("`{s}` is not held by the portfolio")));
        }
    }
    // Betas to the benchmark over the year before the valuation date, when the market is shocked.
    let mut betas: Vec<Option<f64>> = vec![None; valued.instruments.len()];
    if h.market.is_some() {
        let Some(b) = benchmark else {
            return Err(invalid("hypothetical", "the portfolio has no benchmark to carry a market shock"));
        };
        let mut symbols: Vec<String> = valued.instruments.iter().map(|(_, s)| s.clone()).collect();
        let at = match symbols.iter().position(|s| s == b) {
            Some(i) => i,
            None => {
                symbols.push(b.to_string());
                symbols.len() - 1
            }
        };
        let pinned = inputs::pin(
            services,
            &tenant.workspace_id,
            "hypothetical",
            &symbols,
            Some(window_start(&valued.as_of, 365)),
            Some(valued.as_of.clone()),
        )
        .await?;
        let returns = inputs::load(services, &tenant.workspace_id, &pinned).await?.returns();
        let bench: Vec<f64> = returns.iter().map(|r| r[at]).collect();
        for (i, beta) in betas.iter_mut().enumerate() {
            let own: Vec<f64> = returns.iter().map(|r| r[i]).collect();
            *beta = Some(risk::beta(&own, &bench, 0.0).map_err(refused_by_engine)?);
        }
    }
    let lines: Vec<ScenarioLine> = valued
        .weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let (shock, source, beta) = if let Some(r) = h.instruments.get(&w.symbol) {
                (*r, "instrument", None)
            } else if let Some(r) = h.sectors.get(&sectors[i]) {
                (*r, "sector", None)
            } else if let (Some(m), Some(b)) = (h.market, betas[i]) {
                ((m * b).max(-1.0), "market", Some(b))
            } else {
                (0.0, "none", None)
            };
            ScenarioLine {
                symbol: w.symbol.clone(),
                market_value_minor: w.market_value_minor,
                shock,
                source: source.into(),
                beta,
                pnl_minor: (w.market_value_minor as f64 * shock).round() as i64,
            }
        })
        .collect();
    let (pnl, ret, lines) = total(valued, lines);
    Ok(ScenarioOutput {
        portfolio_id: 0,
        base_currency: String::new(),
        as_of: valued.as_of.clone(),
        kind: "hypothetical".into(),
        preset: None,
        window_start: None,
        window_end: None,
        holdings_value_minor: valued.total_minor,
        pnl_minor: pnl,
        portfolio_return: ret,
        worst_day: None,
        max_drawdown: None,
        lines,
    })
}

//! Backtest jobs: a periodically rebalanced portfolio of instruments over their observed prices
//! (`fiscus_quant::backtest`, vectorbt's fill rules), with its equity curve, fees and risk statistics.
//!
//! The statistics are annualised by the frequency the dates show (12 for monthly prices, 252 for daily),
//! as every other computation does, unless the request says `periods_per_year`; the answer names both the
//! frequency and the periods it used. The weights' columns are in the order of their names: a JSON object's
//! members have no order (RFC 8259 §4, and clients, proxies and languages reorder them), so vectorbt's
//! tie-break between equal orders (the last column is cut) cuts the last name here, the same for any
//! serialisation of the same request.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use fiscus_quant::Matrix;
use fiscus_quant::backtest::{BacktestConfig, periodic_schedule, run};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{PinnedPrices, check_range};

/// A backtest to run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"weights": {"AAPL": 0.4, "MSFT": 0.3, "JPM": 0.3}, "start": "2015-01-01", "end": "2017-12-31", "rebalance_every": 21, "initial_cash": 1000000, "fee_rate": 0.001}))]
pub struct BacktestRequest {
    /// The instruments traded (symbols or `ins_…` ids, at their adjusted closes), each with its target weight
    /// at every rebalance, from 0 to 1; what the weights leave is cash. Weights adding up to more than 1 are
    /// traded as vectorbt trades them: sells first, then buys in ascending order of their size, each cut to the
    /// cash left (no borrowing), so the last buys are partly filled. Equal buys go in the order of the names
    /// (vectorbt's column order, with the columns sorted by name: a JSON object's members have no order).
    #[schema(value_type = Object, example = json!({"AAPL": 0.4, "MSFT": 0.3, "JPM": 0.3}))]
    pub weights: BTreeMap<String, f64>,
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    /// Rebalance every this many observations (rows of the prices), starting on the first. The default is
    /// about monthly at the dates' frequency: 21 for daily prices, 4 for weekly, 1 for monthly or coarser.
    #[schema(minimum = 1, maximum = 10000)]
    pub rebalance_every: Option<u32>,
    /// Periods per year the statistics are annualised with (default: the dates' frequency, 252 for daily
    /// prices, 52 weekly, 12 monthly; 252 when irregular, said in `warnings`). A value the dates disagree
    /// with is used and named in `warnings` (`frequency_overridden`).
    #[schema(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
    /// Starting cash (default 1,000,000).
    #[schema(exclusive_minimum = 0, maximum = 1000000000000000_u64)]
    pub initial_cash: Option<f64>,
    /// Proportional fee per trade (0.001 is 10 basis points; default 0).
    #[schema(minimum = 0, maximum = 0.1)]
    pub fee_rate: Option<f64>,
}

/// A backtest as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Backtest {
    pub prices: PinnedPrices,
    pub weights: Vec<f64>,
    /// `None`: about monthly at the dates' frequency (jobs stored before the rule hold 21).
    pub rebalance_every: Option<u32>,
    pub initial_cash: f64,
    pub fee_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periods_per_year: Option<f64>,
}

pub async fn pin(services: &Services, workspace_id: &str, r: BacktestRequest) -> Result<Backtest, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    if r.weights.is_empty() || r.weights.len() > 500 {
        errors.push(("weights", "between 1 and 500 instruments".into()));
    }
    if r.weights.values().any(|w| !(w.is_finite() && (0.0..=1.0).contains(w))) {
        errors.push(("weights", "each from 0 to 1".into()));
    }
    if r.rebalance_every.is_some_and(|every| every == 0 || every > 10_000) {
        errors.push(("rebalance_every", "must be from 1 to 10000".into()));
    }
    if r.periods_per_year.is_some_and(|p| !(p.is_finite() && (1.0..=366.0).contains(&p))) {
        errors.push(("periods_per_year", "must be from 1 to 366".into()));
    }
    let cash = r.initial_cash.unwrap_or(1_000_000.0);
    if !(cash.is_finite() && cash > 0.0 && cash <= 1e15) {
        errors.push(("initial_cash", "must be above 0 and at most 1e15".into()));
    }
    let fee = r.fee_rate.unwrap_or(0.0);
    if !(fee.is_finite() && (0.0..=0.1).contains(&fee)) {
        errors.push(("fee_rate", "must be from 0 to 0.1".into()));
    }
    check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let (instruments, weights): (Vec<String>, Vec<f64>) = r.weights.into_iter().unzip();
    let prices = fiscus_kernel::inputs::pin(services, workspace_id, "weights", &instruments, r.start, r.end).await?;
    Ok(Backtest {
        prices,
        weights,
        rebalance_every: r.rebalance_every,
        initial_cash: cash,
        fee_rate: fee,
        periods_per_year: r.periods_per_year,
    })
}

impl Computation for Backtest {
    type Inputs = fiscus_kernel::inputs::Panel;
    const KIND: JobKind = JobKind::Backtest;

    fn quality(panel: &fiscus_kernel::inputs::Panel) -> Option<fiscus_kernel::inputs::Quality> {
        Some(panel.quality.clone())
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<fiscus_kernel::inputs::Panel, Failure> {
        fiscus_kernel::inputs::load(services, workspace_id, &self.prices).await
    }

    fn size(&self) -> u64 {
        // The price rows are not known before loading; 5,000 trading days (20 years) per instrument.
        self.prices.instruments.len() as u64 * 5_000
    }

    /// Backtests of up to 100 instruments are answered in the request.
    fn small(&self) -> bool {
        self.prices.instruments.len() <= 100
    }

    fn run(&self, panel: fiscus_kernel::inputs::Panel, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        let mut quality = panel.quality.clone();
        let periods = quality.periods_per_year(self.periods_per_year);
        let every = self.rebalance_every.unwrap_or_else(|| about_monthly(quality.frequency));
        let close = Matrix::from_rows(&panel.prices)?;
        let schedule = periodic_schedule(panel.prices.len(), every as usize, &self.weights)?;
        let result =
            run(&close, &schedule, BacktestConfig { initial_cash: self.initial_cash, fee_rate: self.fee_rate })?;
        control.check()?;
        let risk = result.risk_summary(periods)?;
        quality.short_history(result.returns.len(), periods);
        control.set_progress(1, 1);
        let curve: Vec<Value> =
            panel.dates.iter().zip(&result.values).map(|(d, v)| json!({ "date": d, "value": v })).collect();
        let positions: Vec<Value> = self
            .prices
            .instruments
            .iter()
            .zip(&result.final_positions)
            .map(|(i, q)| json!({ "asset": i.symbol, "instrument": i.instrument, "quantity": q }))
            .collect();
        Ok(json!({
            "periods": panel.dates.len(),
            "frequency": quality.frequency.as_str(),
            "periods_per_year": periods,
            "rebalance_every": every,
            "first_date": panel.dates.first(),
            "last_date": panel.dates.last(),
            "initial_cash": self.initial_cash,
            "final_value": result.values.last(),
            "final_cash": result.cash.last(),
            "final_positions": positions,
            "total_fees": result.total_fees,
            "fills": result.fills.len(),
            "risk": {
                "total_return": risk.total_return,
                "annual_return": risk.annual_return,
                "annual_volatility": risk.annual_volatility,
                "sharpe_ratio": risk.sharpe_ratio,
                "sortino_ratio": risk.sortino_ratio,
                "downside_risk": risk.downside_risk,
                "max_drawdown": risk.max_drawdown,
                "calmar_ratio": risk.calmar_ratio,
            },
            "equity_curve": curve,
            "warnings": quality.warnings,
        }))
    }
}

/// Rebalancing about once a month at a frequency: 21 trading days, 4 weeks, every observation of monthly
/// or coarser data (and 21 for irregular dates, the daily convention the annualisation also falls back to).
fn about_monthly(frequency: fiscus_data_core::rules::frequency::Frequency) -> u32 {
    use fiscus_data_core::rules::frequency::Frequency;
    match frequency {
        Frequency::Daily | Frequency::Irregular => 21,
        Frequency::Weekly => 4,
        Frequency::Monthly | Frequency::Quarterly | Frequency::Annual => 1,
    }
}

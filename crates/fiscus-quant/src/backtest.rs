//! Rebalancing backtest: on chosen rows the portfolio is traded to target weights at that row's close, with
//! proportional fees; between rebalances positions drift with prices; whatever is not invested is cash.
//!
//! The fill rules are vectorbt 1.2's `from_orders(size_type='targetpercent', group_by=True,
//! cash_sharing=True, call_seq='auto')`, so results can be compared period by period:
//! * the portfolio is valued ONCE per rebalance row, before any order, and every target uses that value;
//! * orders run in ascending order of their approximate value `w·V - position·price` (sells first);
//! * a buy that needs more cash than is left (price·size·(1 + fee)) is cut to what the cash affords;
//! * fees are `size·price·fee_rate`, paid on top of a buy and out of a sale's proceeds.

use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::Matrix;
use crate::output;
use crate::risk::{self, RiskSummary};

/// Trading to `weights` at the close of `row`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebalance {
    pub row: usize,
    /// Target fraction of portfolio value per asset; `None` leaves that asset untouched.
    pub weights: Vec<Option<f64>>,
}

/// Starting cash and the proportional fee rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BacktestConfig {
    pub initial_cash: f64,
    /// e.g. 0.001 for 10 basis points.
    pub fee_rate: f64,
}

/// One filled order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fill {
    pub row: usize,
    pub asset: usize,
    /// Shares; positive buys, negative sells.
    pub size: f64,
    pub price: f64,
    pub fee: f64,
}

/// The equity curve and everything needed to audit it.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestResult {
    /// Portfolio value at each row's close, after that row's orders.
    pub values: Vec<f64>,
    /// `V_t / V_{t-1} - 1` with `V_{-1}` the initial cash, so the first return includes the first fees.
    pub returns: Vec<f64>,
    pub cash: Vec<f64>,
    pub final_positions: Vec<f64>,
    pub total_fees: f64,
    pub fills: Vec<Fill>,
}

impl BacktestResult {
    /// The risk statistics of the equity curve's returns.
    pub fn risk_summary(&self, periods_per_year: f64) -> Result<RiskSummary> {
        risk::summary(&self.returns, None, 0.0, periods_per_year)
    }
}

/// Target weights repeated every `every` rows starting at row 0 (a calendar-free periodic schedule).
pub fn periodic_schedule(rows: usize, every: usize, weights: &[f64]) -> Result<Vec<Rebalance>> {
    input::at_least("every", 1, every)?;
    input::finite("weights", weights)?;
    let w: Vec<Option<f64>> = weights.iter().map(|v| Some(*v)).collect();
    Ok((0..rows).step_by(every).map(|row| Rebalance { row, weights: w.clone() }).collect())
}

/// Runs the backtest over `close` (rows = periods, columns = assets); `schedule` must be sorted by row.
pub fn run(close: &Matrix, schedule: &[Rebalance], config: BacktestConfig) -> Result<BacktestResult> {
    close.check_finite("close")?;
    if close.as_slice().iter().any(|p| *p <= 0.0) {
        return Err(QuantError::InvalidParameter { name: "close", reason: "prices must be > 0".into() });
    }
    input::positive("initial_cash", config.initial_cash)?;
    if !(config.fee_rate.is_finite() && (0.0..1.0).contains(&config.fee_rate)) {
        return Err(QuantError::InvalidParameter { name: "fee_rate", reason: "must lie in [0, 1)".into() });
    }
    let (t, n) = (close.rows(), close.cols());
    for (k, r) in schedule.iter().enumerate() {
        input::same_len("rebalance weights", n, r.weights.len())?;
        if r.row >= t || (k > 0 && schedule[k - 1].row >= r.row) {
            return Err(QuantError::InvalidParameter {
                name: "schedule",
                reason: format!("entry {k} (row {}) is out of range or out of order", r.row),
            });
        }
        if let Some(j) = r.weights.iter().position(|w| w.is_some_and(|v| !v.is_finite())) {
            return Err(QuantError::NonFinite { what: "rebalance weights", index: j });
        }
    }

    let fee = config.fee_rate;
    let mut cash = config.initial_cash;
    let mut pos = vec![0.0; n];
    let mut values = Vec::with_capacity(t);
    let mut cash_curve = Vec::with_capacity(t);
    let mut fills = Vec::new();
    let mut total_fees = 0.0;
    let mut next = schedule.iter().peekable();
    let mut order: Vec<(f64, usize)> = Vec::with_capacity(n);
    for row in 0..t {
        let px = close.row(row);
        if let Some(reb) = next.next_if(|r| r.row == row) {
            let value = cash + pos.iter().zip(px).map(|(q, p)| q * p).sum::<f64>();
            order.clear();
            order
                .extend(reb.weights.iter().enumerate().filter_map(|(j, w)| w.map(|w| (w * value - pos[j] * px[j], j))));
            // Stable sort, as vectorbt's insertion sort: equal approximate values keep asset order.
            order.sort_by(|a, b| a.0.total_cmp(&b.0));
            for &(_, j) in &order {
                let Some(w) = reb.weights[j] else { continue };
                let price = px[j];
                let mut size = w * value / price - pos[j];
                if size == 0.0 {
                    continue;
                }
                let paid;
                if size > 0.0 {
                    let required = size * price * (1.0 + fee);
                    if required > cash && !is_close(required, cash) {
                        size = cash / (price * (1.0 + fee));
                    }
                    if size <= 0.0 {
                        continue;
                    }
                    paid = size * price * fee;
                    cash -= size * price + paid;
                } else {
                    paid = -size * price * fee;
                    cash += -size * price - paid;
                }
                pos[j] += size;
                total_fees += paid;
                fills.push(Fill { row, asset: j, size, price, fee: paid });
            }
        }
        values.push(cash + pos.iter().zip(px).map(|(q, p)| q * p).sum::<f64>());
        cash_curve.push(cash);
    }
    let mut prev = config.initial_cash;
    let returns = values
        .iter()
        .map(|v| {
            let r = v / prev - 1.0;
            prev = *v;
            r
        })
        .collect::<Vec<f64>>();
    for part in [&values, &returns, &cash_curve, &pos] {
        output::all_finite("backtest", part)?;
    }
    output::finite("backtest", total_fees)?;
    output::all_finite("backtest fills", &fills.iter().flat_map(|f| [f.size, f.price, f.fee]).collect::<Vec<f64>>())?;
    Ok(BacktestResult { values, returns, cash: cash_curve, final_positions: pos, total_fees, fills })
}

/// numpy's `isclose` with its defaults (rtol 1e-5, atol 1e-8), which vectorbt uses to forgive a buy that
/// overshoots the cash by rounding.
fn is_close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-8 + 1e-5 * b.abs()
}

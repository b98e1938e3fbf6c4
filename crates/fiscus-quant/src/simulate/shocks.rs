//! Deterministic stress scenarios: each asset's price moves by a stated fraction, and positions are revalued.

use crate::error::{QuantError, Result};
use crate::input;
use crate::output;

/// A named set of relative price moves, one per asset (-0.3 = a 30 % fall).
#[derive(Debug, Clone, PartialEq)]
pub struct ShockScenario {
    pub name: String,
    pub moves: Vec<f64>,
}

/// Values before and after a shock.
#[derive(Debug, Clone, PartialEq)]
pub struct ShockOutcome {
    pub values_before: Vec<f64>,
    pub values_after: Vec<f64>,
    /// Profit and loss of each position.
    pub pnl: Vec<f64>,
    pub total_pnl: f64,
}

/// Revalues `quantities` at `prices·(1 + move)`; shorts (negative quantities) gain when prices fall.
pub fn apply_shock(quantities: &[f64], prices: &[f64], scenario: &ShockScenario) -> Result<ShockOutcome> {
    input::finite("quantities", quantities)?;
    input::finite("prices", prices)?;
    input::finite("moves", &scenario.moves)?;
    input::same_len("prices", quantities.len(), prices.len())?;
    input::same_len("moves", quantities.len(), scenario.moves.len())?;
    if let Some(i) = scenario.moves.iter().position(|m| *m < -1.0) {
        return Err(QuantError::InvalidParameter {
            name: "moves",
            reason: format!("asset {i} would have a negative price"),
        });
    }
    let values_before: Vec<f64> = quantities.iter().zip(prices).map(|(q, p)| q * p).collect();
    let values_after: Vec<f64> = values_before.iter().zip(&scenario.moves).map(|(v, m)| v * (1.0 + m)).collect();
    let pnl: Vec<f64> = values_after.iter().zip(&values_before).map(|(a, b)| a - b).collect();
    let total_pnl: f64 = pnl.iter().sum();
    for part in [&values_before, &values_after, &pnl] {
        output::all_finite("shock outcome", part)?;
    }
    output::finite("shock outcome", total_pnl)?;
    Ok(ShockOutcome { values_before, values_after, pnl, total_pnl })
}

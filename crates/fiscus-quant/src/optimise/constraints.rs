//! The constraints a mean-variance problem can carry besides the budget, and their validation.

use crate::error::{QuantError, Result};
use crate::input;

/// A cap and/or floor on the summed weight of a group of assets (e.g. a sector).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupLimit {
    /// Indices of the assets in the group.
    pub members: Vec<usize>,
    /// The group's total weight must be at least this.
    pub min: Option<f64>,
    /// The group's total weight must be at most this.
    pub max: Option<f64>,
}

/// Trading from current weights: a turnover limit, a proportional cost, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebalance {
    /// The weights held now.
    pub current: Vec<f64>,
    /// Cost per unit of `‖w - current‖₁`, added to the objective as is (0 for none).
    pub cost_per_unit_turnover: f64,
    /// Upper limit on `‖w - current‖₁`.
    pub max_turnover: Option<f64>,
}

/// Constraints on the weights beyond the budget `Σw = 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraints {
    /// Per-asset lower bounds (negative allows shorting; `-inf` for none).
    pub lower: Vec<f64>,
    /// Per-asset upper bounds (`+inf` for none).
    pub upper: Vec<f64>,
    /// Group caps and floors.
    pub groups: Vec<GroupLimit>,
    /// Trading from current weights.
    pub rebalance: Option<Rebalance>,
}

impl Constraints {
    /// Long-only, fully invested: `0 ≤ w_i ≤ 1`.
    pub fn long_only(n: usize) -> Self {
        Self::bounded(n, 0.0, 1.0)
    }

    /// The same bounds for every asset, e.g. `(-1, 1)` for long-short.
    pub fn bounded(n: usize, lower: f64, upper: f64) -> Self {
        Self { lower: vec![lower; n], upper: vec![upper; n], groups: Vec::new(), rebalance: None }
    }
}

/// Refuses constraints that do not fit `n` assets or hold non-finite or contradictory limits.
pub(super) fn check_constraints(n: usize, c: &Constraints) -> Result<()> {
    input::same_len("lower bounds", n, c.lower.len())?;
    input::same_len("upper bounds", n, c.upper.len())?;
    for i in 0..n {
        let (lo, hi) = (c.lower[i], c.upper[i]);
        if lo.is_nan() || hi.is_nan() || lo == f64::INFINITY || hi == f64::NEG_INFINITY {
            return Err(QuantError::InvalidParameter {
                name: "bounds",
                reason: format!("asset {i} has bounds ({lo}, {hi})"),
            });
        }
        if lo > hi {
            return Err(QuantError::Infeasible { detail: format!("asset {i}: lower bound {lo} > upper bound {hi}") });
        }
    }
    for g in &c.groups {
        if let Some(&bad) = g.members.iter().find(|&&i| i >= n) {
            return Err(QuantError::InvalidParameter {
                name: "group members",
                reason: format!("asset index {bad} out of range for {n} assets"),
            });
        }
        for v in [g.min, g.max].into_iter().flatten() {
            if !v.is_finite() {
                return Err(QuantError::NonFinite { what: "group limit", index: 0 });
            }
        }
    }
    if let Some(r) = &c.rebalance {
        input::finite("rebalance.current", &r.current)?;
        input::same_len("rebalance.current", n, r.current.len())?;
        if !(r.cost_per_unit_turnover.is_finite() && r.cost_per_unit_turnover >= 0.0) {
            return Err(QuantError::InvalidParameter {
                name: "rebalance.cost_per_unit_turnover",
                reason: "must be finite and >= 0".into(),
            });
        }
        if let Some(limit) = r.max_turnover
            && !(limit.is_finite() && limit >= 0.0)
        {
            return Err(QuantError::InvalidParameter {
                name: "rebalance.max_turnover",
                reason: "must be finite and >= 0".into(),
            });
        }
    }
    Ok(())
}

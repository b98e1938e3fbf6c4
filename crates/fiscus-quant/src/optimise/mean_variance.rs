//! Mean-variance portfolios written as conic programs for clarabel, with the same formulations as
//! PyPortfolioOpt 1.6 (so weights can be compared against it and against cvxpy + CLARABEL):
//!
//! * minimum variance: `min wᵀΣw` (no ½, as PyPortfolioOpt writes it; the minimiser is the same);
//! * efficient return: minimum variance subject to `μᵀw ≥ target`;
//! * efficient risk: `max μᵀw` subject to `‖Fᵀw‖ ≤ σ_target` with `Σ = F Fᵀ` (a second-order cone);
//! * maximum Sharpe: the Cornuéjols–Tütüncü homogenisation `min yᵀΣy s.t. (μ - rf)ᵀy = 1, 1ᵀy = κ, κ ≥ 0`
//!   with every linear constraint scaled by κ, then `w = y/κ`.
//!
//! Every problem has the budget `1ᵀw = 1`, per-asset bounds, optional group (sector) caps and floors, and
//! an optional rebalance against current weights: a turnover limit `‖w - w₀‖₁ ≤ τ` and/or a proportional
//! cost `k·‖w - w₀‖₁` added to the objective (unscaled, as PyPortfolioOpt's `transaction_cost`).

use super::active_set;
use super::conic::{ConicProgram, Row};
use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::{Matrix, dot, psd_factor};

/// What the optimiser is asked to find.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// The portfolio of least variance.
    MinVariance,
    /// The tangency portfolio for a risk-free rate in the same units as the expected returns.
    MaxSharpe { risk_free: f64 },
    /// The highest expected return whose volatility does not exceed the target.
    EfficientRisk { target_volatility: f64 },
    /// The least variance whose expected return reaches the target.
    EfficientReturn { target_return: f64 },
}

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
        Self {
            lower: vec![lower; n],
            upper: vec![upper; n],
            groups: Vec::new(),
            rebalance: None,
        }
    }
}

/// The optimal weights and their ex-ante performance (in the units of μ and Σ).
#[derive(Debug, Clone, PartialEq)]
pub struct OptimalPortfolio {
    pub weights: Vec<f64>,
    /// `wᵀμ`, when expected returns were given.
    pub expected_return: Option<f64>,
    /// `√(wᵀΣw)`.
    pub volatility: f64,
    /// `(wᵀμ - rf)/σ` with rf = 0 unless the objective is maximum Sharpe.
    pub sharpe_ratio: Option<f64>,
}

/// Solves one mean-variance problem. `expected_returns` may be `None` only for minimum variance.
pub fn optimise(
    covariance: &Matrix,
    expected_returns: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
) -> Result<OptimalPortfolio> {
    let n = covariance.rows();
    if n == 0 {
        return Err(QuantError::Empty { what: "covariance" });
    }
    covariance.check_symmetric("covariance", n)?;
    if let Some(mu) = expected_returns {
        input::finite("expected_returns", mu)?;
        input::same_len("expected_returns", n, mu.len())?;
    }
    check_constraints(n, constraints)?;
    let mu = match (objective, expected_returns) {
        (Objective::MinVariance, mu) => mu,
        (_, Some(mu)) => Some(mu),
        (_, None) => {
            return Err(QuantError::InvalidParameter {
                name: "expected_returns",
                reason: "required for every objective except minimum variance".into(),
            });
        }
    };
    let weights = match fast_path(covariance, mu, objective, constraints) {
        Some(w) => w,
        None => conic(covariance, mu, objective, constraints)?,
    };
    let variance = covariance.quad_form(&weights).max(0.0);
    let volatility = variance.sqrt();
    let rf = if let Objective::MaxSharpe { risk_free } = objective {
        risk_free
    } else {
        0.0
    };
    let expected_return = mu.map(|m| dot(&weights, m));
    let sharpe_ratio = expected_return
        .filter(|_| volatility > 0.0)
        .map(|r| (r - rf) / volatility);
    Ok(OptimalPortfolio {
        weights,
        expected_return,
        volatility,
        sharpe_ratio,
    })
}

/// The general route: every objective and constraint as a conic program for clarabel.
fn conic(
    cov: &Matrix,
    mu: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
) -> Result<Vec<f64>> {
    match objective {
        Objective::MaxSharpe { risk_free } => {
            let mu = mu.ok_or(QuantError::Empty {
                what: "expected_returns",
            })?;
            max_sharpe(cov, mu, risk_free, constraints)
        }
        _ => direct(cov, mu, objective, constraints),
    }
}

/// Minimum variance and maximum Sharpe under bounds alone are `min ½xᵀHx, aᵀx = b, l ≤ x ≤ u`, which the
/// active-set solver answers exactly and, for a few hundred assets, far faster than an interior-point
/// method. `None` (other shapes, or the solver declining) sends the problem to clarabel.
fn fast_path(
    cov: &Matrix,
    mu: Option<&[f64]>,
    objective: Objective,
    c: &Constraints,
) -> Option<Vec<f64>> {
    if !c.groups.is_empty() || c.rebalance.is_some() {
        return None;
    }
    let n = cov.rows();
    match objective {
        Objective::MinVariance => {
            if c.lower.iter().any(|l| !l.is_finite()) {
                return None;
            }
            // A vertex: everything at its lower bound, then the cheapest-variance assets raised in turn.
            let mut x = c.lower.clone();
            let mut left = 1.0 - x.iter().sum::<f64>();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| cov[(i, i)].total_cmp(&cov[(j, j)]));
            let mut last = 0;
            for i in order {
                if left <= 0.0 {
                    break;
                }
                let room = (c.upper[i] - x[i]).min(left);
                x[i] += room;
                left -= room;
                last = i;
            }
            if left.abs() > 1e-12 || c.lower.iter().sum::<f64>() > 1.0 {
                return None;
            }
            active_set::solve(cov, &vec![1.0; n], 1.0, &c.lower, &c.upper, x, last)
        }
        Objective::MaxSharpe { risk_free } => {
            // Homogenised long-only tangency: with y ≥ 0 the caps y_i ≤ u·κ = u·Σy are redundant when u ≥ 1.
            let mu = mu?;
            if c.lower.iter().any(|l| *l != 0.0) || c.upper.iter().any(|u| *u < 1.0) {
                return None;
            }
            let excess: Vec<f64> = mu.iter().map(|m| m - risk_free).collect();
            let (best, &m) = excess
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))?;
            if !(m > 0.0) {
                return None;
            }
            let mut y = vec![0.0; n];
            y[best] = 1.0 / m;
            let y = active_set::solve(
                cov,
                &excess,
                1.0,
                &vec![0.0; n],
                &vec![f64::INFINITY; n],
                y,
                best,
            )?;
            let kappa: f64 = y.iter().sum();
            (kappa > 0.0).then(|| y.iter().map(|v| v / kappa).collect())
        }
        _ => None,
    }
}

/// Minimum variance, efficient return and efficient risk: variables `w` (n) then, with a rebalance, `t` (n)
/// bounding `|w - w₀|` elementwise.
fn direct(
    cov: &Matrix,
    mu: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
) -> Result<Vec<f64>> {
    let n = cov.rows();
    let with_t = constraints.rebalance.is_some();
    let mut prog = ConicProgram::new(if with_t { 2 * n } else { n });
    match objective {
        Objective::MinVariance | Objective::EfficientReturn { .. } => {
            add_variance(&mut prog, cov, 2.0)
        }
        Objective::EfficientRisk { target_volatility } => {
            input::positive("target_volatility", target_volatility)?;
            let mu = mu.ok_or(QuantError::Empty {
                what: "expected_returns",
            })?;
            for (i, m) in mu.iter().enumerate() {
                prog.add_linear(i, -m);
            }
            prog.second_order_cone(volatility_cone(cov, target_volatility)?);
        }
        Objective::MaxSharpe { .. } => {}
    }
    if let Objective::EfficientReturn { target_return } = objective {
        if !target_return.is_finite() {
            return Err(QuantError::NonFinite {
                what: "target_return",
                index: 0,
            });
        }
        let mu = mu.ok_or(QuantError::Empty {
            what: "expected_returns",
        })?;
        prog.at_most(Row::new(
            mu.iter().enumerate().map(|(i, m)| (i, -m)).collect(),
            -target_return,
        ));
    }
    prog.equal(Row::new((0..n).map(|i| (i, 1.0)).collect(), 1.0));
    linear_constraints(&mut prog, constraints, None);
    let x = prog.solve()?;
    Ok(x[..n].to_vec())
}

/// Maximum Sharpe by homogenisation: variables `y` (n), then `t` (n) with a rebalance, then κ.
fn max_sharpe(cov: &Matrix, mu: &[f64], rf: f64, constraints: &Constraints) -> Result<Vec<f64>> {
    if !rf.is_finite() {
        return Err(QuantError::NonFinite {
            what: "risk_free",
            index: 0,
        });
    }
    let n = cov.rows();
    if let Some(r) = &constraints.rebalance
        && r.cost_per_unit_turnover != 0.0
    {
        // A cost term is not homogeneous in (y, κ), so the tangency trick would change the problem.
        return Err(QuantError::InvalidParameter {
            name: "rebalance.cost_per_unit_turnover",
            reason: "maximum Sharpe supports a turnover limit but not a cost term".into(),
        });
    }
    if mu.iter().all(|m| *m - rf <= 0.0) && constraints.lower.iter().all(|l| *l >= 0.0) {
        return Err(QuantError::Infeasible {
            detail: "no asset's expected return exceeds the risk-free rate, so no long-only portfolio has a \
                     positive Sharpe ratio"
                .into(),
        });
    }
    let with_t = constraints.rebalance.is_some();
    let kappa = if with_t { 2 * n } else { n };
    let mut prog = ConicProgram::new(kappa + 1);
    add_variance(&mut prog, cov, 2.0);
    prog.equal(Row::new(
        mu.iter().enumerate().map(|(i, m)| (i, m - rf)).collect(),
        1.0,
    ));
    let mut budget: Vec<(usize, f64)> = (0..n).map(|i| (i, 1.0)).collect();
    budget.push((kappa, -1.0));
    prog.equal(Row::new(budget, 0.0));
    prog.at_most(Row::new(vec![(kappa, -1.0)], 0.0));
    linear_constraints(&mut prog, constraints, Some(kappa));
    let x = prog.solve()?;
    let k = x[kappa];
    if !(k > 1e-12) {
        return Err(QuantError::Infeasible {
            detail: "no portfolio has a positive excess return".into(),
        });
    }
    Ok(x[..n].iter().map(|y| y / k).collect())
}

/// Adds `scale·wᵀΣw` (clarabel minimises `½xᵀPx`, so P = 2Σ reproduces `wᵀΣw`).
fn add_variance(prog: &mut ConicProgram, cov: &Matrix, scale: f64) {
    let n = cov.rows();
    for i in 0..n {
        for j in i..n {
            let v = cov[(i, j)];
            if v != 0.0 {
                prog.add_quadratic(i, j, scale * v);
            }
        }
    }
}

/// `(σ, Fᵀw)` in the second-order cone, written as `b - Ax` with `A = [0; -Fᵀ]`, `b = [σ; 0]`.
fn volatility_cone(cov: &Matrix, sigma: f64) -> Result<Vec<Row>> {
    let n = cov.rows();
    let f = psd_factor(cov, "covariance")?;
    let mut rows = vec![Row::new(Vec::new(), sigma)];
    for i in 0..n {
        let terms = (i..n)
            .filter(|&j| f[(j, i)] != 0.0)
            .map(|j| (j, -f[(j, i)]))
            .collect();
        rows.push(Row::new(terms, 0.0));
    }
    Ok(rows)
}

/// Bounds, groups and rebalance rows. With `kappa = Some(k)` every right-hand side c becomes `c·κ` (moved
/// to the left as `-c·κ`), which is how the maximum-Sharpe homogenisation keeps them exact.
fn linear_constraints(prog: &mut ConicProgram, c: &Constraints, kappa: Option<usize>) {
    let n = c.lower.len();
    let mut add = |mut terms: Vec<(usize, f64)>, rhs: f64| match kappa {
        Some(k) => {
            if rhs != 0.0 {
                terms.push((k, -rhs));
            }
            prog.at_most(Row::new(terms, 0.0));
        }
        None => prog.at_most(Row::new(terms, rhs)),
    };
    for i in 0..n {
        if c.upper[i].is_finite() {
            add(vec![(i, 1.0)], c.upper[i]);
        }
        if c.lower[i].is_finite() {
            add(vec![(i, -1.0)], -c.lower[i]);
        }
    }
    for g in &c.groups {
        if let Some(max) = g.max {
            add(g.members.iter().map(|&i| (i, 1.0)).collect(), max);
        }
        if let Some(min) = g.min {
            add(g.members.iter().map(|&i| (i, -1.0)).collect(), -min);
        }
    }
    if let Some(r) = &c.rebalance {
        // t_i ≥ |w_i - w0_i| as two rows each; the cost or the limit then acts on Σ t_i.
        for i in 0..n {
            add(vec![(i, 1.0), (n + i, -1.0)], r.current[i]);
            add(vec![(i, -1.0), (n + i, -1.0)], -r.current[i]);
        }
        if let Some(limit) = r.max_turnover {
            add((n..2 * n).map(|i| (i, 1.0)).collect(), limit);
        }
    }
    if let Some(r) = &c.rebalance
        && kappa.is_none()
        && r.cost_per_unit_turnover != 0.0
    {
        for i in n..2 * n {
            prog.add_linear(i, r.cost_per_unit_turnover);
        }
    }
}

fn check_constraints(n: usize, c: &Constraints) -> Result<()> {
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
            return Err(QuantError::Infeasible {
                detail: format!("asset {i}: lower bound {lo} > upper bound {hi}"),
            });
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
                return Err(QuantError::NonFinite {
                    what: "group limit",
                    index: 0,
                });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic, well-conditioned one-factor covariance and spread of expected returns.
    fn problem(n: usize, seed: u64) -> (Matrix, Vec<f64>) {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let beta: Vec<f64> = (0..n).map(|_| 0.5 + next()).collect();
        let idio: Vec<f64> = (0..n).map(|_| 0.01 + 0.03 * next()).collect();
        let mu: Vec<f64> = (0..n).map(|_| -0.05 + 0.3 * next()).collect();
        let mut cov = Matrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                cov[(i, j)] = 0.04 * beta[i] * beta[j] + if i == j { idio[i] } else { 0.0 };
            }
        }
        (cov, mu)
    }

    #[test]
    fn the_active_set_route_agrees_with_clarabel_on_bounded_problems() {
        for (seed, lower, upper) in [(1, 0.0, 1.0), (2, -1.0, 1.0), (3, 0.0, 0.1), (4, 0.01, 0.5)] {
            let (cov, mu) = problem(40, seed);
            let c = Constraints::bounded(40, lower, upper);
            for objective in [
                Objective::MinVariance,
                Objective::MaxSharpe { risk_free: 0.01 },
            ] {
                let conic_w = conic(&cov, Some(&mu), objective, &c).unwrap();
                if let Some(fast) = fast_path(&cov, Some(&mu), objective, &c) {
                    let d = fast
                        .iter()
                        .zip(&conic_w)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max);
                    // Clarabel stops at a 1e-8 duality gap, which leaves weights ~1e-6 from the exact vertex.
                    assert!(d < 2e-5, "seed {seed} {objective:?}: {d:e}");
                    let (fv, cv) = (cov.quad_form(&fast), cov.quad_form(&conic_w));
                    if objective == Objective::MinVariance {
                        assert!(
                            fv <= cv * (1.0 + 1e-9),
                            "active set must not be worse: {fv} vs {cv}"
                        );
                    }
                } else {
                    assert!(
                        !(objective == Objective::MinVariance),
                        "seed {seed}: min variance with finite bounds takes the fast path"
                    );
                }
            }
        }
    }
}

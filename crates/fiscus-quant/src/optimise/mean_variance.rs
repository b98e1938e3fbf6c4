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
//!
//! Problems with bounds only (minimum variance; long-only maximum Sharpe) first go to an exact active-set
//! solver (`bounds_only`), which is much faster for a few hundred assets; clarabel is the route for every
//! other shape and the fallback whenever the active-set solver declines.

use super::bounds_only::{applies, fast_path};
use super::conic::{ConicProgram, Row};
use super::constraints::check_constraints;
pub use super::constraints::{Constraints, GroupLimit, Rebalance};
use super::hessian::Hessian;
use crate::budget::{Budget, Meter};
use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::{Matrix, dot, psd_factor};
use crate::output;

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

/// Solves one mean-variance problem within the default [`Budget`]. `expected_returns` may be `None` only
/// for minimum variance.
pub fn optimise(
    covariance: &Matrix,
    expected_returns: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
) -> Result<OptimalPortfolio> {
    optimise_with_budget(covariance, expected_returns, objective, constraints, Budget::default())
}

/// [`optimise`] with an explicit budget: the interior-point iterations count against it, and the clock
/// covers both routes as a safety net. Running out of iterations is [`QuantError::BudgetExceeded`], past the
/// clock [`QuantError::SafetyTimeout`].
pub fn optimise_with_budget(
    covariance: &Matrix,
    expected_returns: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
    budget: Budget,
) -> Result<OptimalPortfolio> {
    let meter = Meter::start("mean-variance optimisation", budget);
    solve(covariance, expected_returns, objective, constraints, Convexity::Unknown, &meter)
}

/// PyPortfolioOpt's pipeline end to end: from a return panel (rows = periods) to
/// `μ = mean_historical_return`, `Σ = sample covariance (ddof = 1)`, both annualised with
/// `periods_per_year`, then [`optimise`]. A sample covariance is positive semi-definite by construction, so
/// the check that an arbitrary caller-supplied Σ is convex is skipped here.
pub fn optimise_from_returns(
    returns: &Matrix,
    periods_per_year: f64,
    objective: Objective,
    constraints: &Constraints,
) -> Result<OptimalPortfolio> {
    optimise_from_returns_with_budget(returns, periods_per_year, objective, constraints, Budget::default())
}

/// [`optimise_from_returns`] with an explicit budget (see [`optimise_with_budget`]).
pub fn optimise_from_returns_with_budget(
    returns: &Matrix,
    periods_per_year: f64,
    objective: Objective,
    constraints: &Constraints,
    budget: Budget,
) -> Result<OptimalPortfolio> {
    let meter = Meter::start("mean-variance optimisation", budget);
    let mu = crate::covariance::mean_historical_return(returns, periods_per_year)?;
    // `mean_historical_return` has checked the returns. The active-set route reads Σ through the rows of
    // the assets it holds or considers, usually a small part of a large universe, so there Σ is computed
    // row by row as needed (the same bits as the whole matrix; `covariance::SampleRows`), unless a variance
    // is so large that an entry might overflow, which the whole matrix's checks then report.
    input::at_least("returns", 2, returns.rows())?;
    if returns.cols() >= ROWS_ON_DEMAND_FROM
        && applies(objective, constraints)
        && let Some(rows) = crate::covariance::SampleRows::new(returns, 1, periods_per_year)
    {
        return solve_checked(&rows, Some(&mu), objective, constraints, Convexity::KnownPsd, &meter);
    }
    // Otherwise the whole covariance, annualised in place.
    let mut cov = crate::covariance::sample_of_finite(returns, 1)?;
    cov.as_mut_slice().iter_mut().for_each(|v| *v *= periods_per_year);
    solve(&cov, Some(&mu), objective, constraints, Convexity::KnownPsd, &meter)
}

/// Assets from which [`optimise_from_returns`] computes Σ row by row for the active-set route: with fewer,
/// the rows it reads are a large part of the matrix anyway (a row costs as much as two of the whole
/// matrix's, which only computes one triangle).
const ROWS_ON_DEMAND_FROM: usize = 200;

/// Whether Σ is known to be positive semi-definite (a Gram matrix) or must be certified before the
/// active-set route, whose KKT point is only a global optimum for a convex problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Convexity {
    Unknown,
    KnownPsd,
}

fn solve(
    covariance: &Matrix,
    expected_returns: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
    convexity: Convexity,
    meter: &Meter,
) -> Result<OptimalPortfolio> {
    let n = covariance.rows();
    if n == 0 {
        return Err(QuantError::Empty { what: "covariance" });
    }
    match convexity {
        // Built here (mirrored, then scaled entry by entry): symmetric by construction, but the scaling
        // can still overflow.
        Convexity::KnownPsd => covariance.check_finite("covariance")?,
        Convexity::Unknown => covariance.check_symmetric("covariance", n)?,
    }
    solve_checked(covariance, expected_returns, objective, constraints, convexity, meter)
}

/// [`solve`] past the checks of Σ itself: a non-empty, finite (and, unless known to be a Gram matrix,
/// symmetric) Σ, given whole or as rows computed on demand.
fn solve_checked<H: Hessian + ?Sized>(
    covariance: &H,
    expected_returns: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
    convexity: Convexity,
    meter: &Meter,
) -> Result<OptimalPortfolio> {
    let n = covariance.size();
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
    let weights = match fast_path(covariance, mu, objective, constraints, convexity, meter) {
        Some(w) => w,
        None => conic(&covariance.full(), mu, objective, constraints, meter)?,
    };
    let variance = covariance.quad_form(&weights).max(0.0);
    let volatility = variance.sqrt();
    let rf = if let Objective::MaxSharpe { risk_free } = objective { risk_free } else { 0.0 };
    let expected_return = mu.map(|m| dot(&weights, m));
    let sharpe_ratio = expected_return.filter(|_| volatility > 0.0).map(|r| (r - rf) / volatility);
    output::all_finite("optimal portfolio", &weights)?;
    output::all_finite(
        "optimal portfolio",
        &[volatility, expected_return.unwrap_or(0.0), sharpe_ratio.unwrap_or(0.0)],
    )?;
    Ok(OptimalPortfolio { weights, expected_return, volatility, sharpe_ratio })
}

/// The general route: every objective and constraint as a conic program for clarabel.
pub(super) fn conic(
    cov: &Matrix,
    mu: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
    meter: &Meter,
) -> Result<Vec<f64>> {
    // The solver assumes a convex objective: an indefinite "covariance" is refused here rather than handed
    // to it. Singular (positive semi-definite) matrices are fine.
    psd_factor(cov, "covariance")?;
    match objective {
        Objective::MaxSharpe { risk_free } => {
            let mu = mu.ok_or(QuantError::Empty { what: "expected_returns" })?;
            max_sharpe(cov, mu, risk_free, constraints, meter)
        }
        _ => direct(cov, mu, objective, constraints, meter),
    }
}

/// Minimum variance, efficient return and efficient risk: variables `w` (n) then, with a rebalance, `t` (n)
/// bounding `|w - w₀|` elementwise.
fn direct(
    cov: &Matrix,
    mu: Option<&[f64]>,
    objective: Objective,
    constraints: &Constraints,
    meter: &Meter,
) -> Result<Vec<f64>> {
    let n = cov.rows();
    let with_t = constraints.rebalance.is_some();
    let mut prog = ConicProgram::new(if with_t { 2 * n } else { n });
    match objective {
        Objective::MinVariance | Objective::EfficientReturn { .. } => add_variance(&mut prog, cov, 2.0),
        Objective::EfficientRisk { target_volatility } => {
            input::positive("target_volatility", target_volatility)?;
            let mu = mu.ok_or(QuantError::Empty { what: "expected_returns" })?;
            for (i, m) in mu.iter().enumerate() {
                prog.add_linear(i, -m);
            }
            prog.second_order_cone(volatility_cone(cov, target_volatility)?);
        }
        Objective::MaxSharpe { .. } => {}
    }
    if let Objective::EfficientReturn { target_return } = objective {
        if !target_return.is_finite() {
            return Err(QuantError::NonFinite { what: "target_return", index: 0 });
        }
        let mu = mu.ok_or(QuantError::Empty { what: "expected_returns" })?;
        prog.at_most(Row::new(mu.iter().enumerate().map(|(i, m)| (i, -m)).collect(), -target_return));
    }
    prog.equal(Row::new((0..n).map(|i| (i, 1.0)).collect(), 1.0));
    linear_constraints(&mut prog, constraints, None);
    let x = prog.solve(meter)?;
    Ok(x[..n].to_vec())
}

/// Maximum Sharpe by homogenisation: variables `y` (n), then `t` (n) with a rebalance, then κ.
fn max_sharpe(cov: &Matrix, mu: &[f64], rf: f64, constraints: &Constraints, meter: &Meter) -> Result<Vec<f64>> {
    if !rf.is_finite() {
        return Err(QuantError::NonFinite { what: "risk_free", index: 0 });
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
    prog.equal(Row::new(mu.iter().enumerate().map(|(i, m)| (i, m - rf)).collect(), 1.0));
    let mut budget: Vec<(usize, f64)> = (0..n).map(|i| (i, 1.0)).collect();
    budget.push((kappa, -1.0));
    prog.equal(Row::new(budget, 0.0));
    prog.at_most(Row::new(vec![(kappa, -1.0)], 0.0));
    linear_constraints(&mut prog, constraints, Some(kappa));
    let x = prog.solve(meter)?;
    let k = x[kappa];
    if !(k > 1e-12) {
        return Err(QuantError::Infeasible { detail: "no portfolio has a positive excess return".into() });
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
        let terms = (i..n).filter(|&j| f[(j, i)] != 0.0).map(|j| (j, -f[(j, i)])).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_conic_route_reports_its_budget() {
        let cov = Matrix::from_rows(&[vec![0.04, 0.01, 0.0], vec![0.01, 0.09, 0.02], vec![0.0, 0.02, 0.16]]).unwrap();
        let mut c = Constraints::long_only(3);
        // A group cap sends the problem past the active-set route to clarabel.
        c.groups.push(GroupLimit { members: vec![0, 1], min: None, max: Some(0.6) });
        let few = Budget::new(Duration::from_secs(60), 2);
        let e = optimise_with_budget(&cov, None, Objective::MinVariance, &c, few).unwrap_err();
        assert!(matches!(e, QuantError::BudgetExceeded { .. }), "{e:?}");
        let none = Budget::new(Duration::ZERO, 1000);
        let e = optimise_with_budget(&cov, None, Objective::MinVariance, &c, none).unwrap_err();
        assert!(matches!(e, QuantError::SafetyTimeout { .. }), "{e:?}");
        assert!(optimise(&cov, None, Objective::MinVariance, &c).is_ok());
    }
}

//! Risk parity (risk budgeting): long-only weights whose risk contributions `w_i(Σw)_i / wᵀΣw` equal given
//! budgets `b_i` (1/n for equal risk contribution).
//!
//! Solved as the strictly convex problem `min ½xᵀΣx - Σ b_i ln x_i` over x > 0 (Spinu 2013): at its
//! minimiser `x_i(Σx)_i = b_i`, so `w = x/Σx` has exactly the budgeted shares. Newton's method with a
//! backtracking line search that stays inside x > 0 converges quadratically and meets the budgets to
//! ~1e-15, where riskfolio-lib's exponential-cone formulation reaches ~1e-6.

use crate::budget::{Budget, Meter};
use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::{Matrix, cholesky, cholesky_solve, dot};
use crate::output;

/// Weights and the risk-contribution share each asset ended with.
#[derive(Debug, Clone, PartialEq)]
pub struct RiskParityPortfolio {
    pub weights: Vec<f64>,
    /// `w_i(Σw)_i / wᵀΣw`; equals the normalised budget to solver precision.
    pub risk_contributions: Vec<f64>,
    pub newton_iterations: usize,
}

/// Equal risk contribution: every budget 1/n, within the default compute [`Budget`].
pub fn equal_risk_contribution(covariance: &Matrix) -> Result<RiskParityPortfolio> {
    equal_risk_contribution_with_budget(covariance, Budget::default())
}

/// [`equal_risk_contribution`] within `limit` (see [`risk_budgeting_with_budget`]).
pub fn equal_risk_contribution_with_budget(covariance: &Matrix, limit: Budget) -> Result<RiskParityPortfolio> {
    let n = covariance.rows();
    risk_budgeting_with_budget(covariance, &vec![1.0 / n.max(1) as f64; n], limit)
}

/// Risk budgeting with the given positive risk budgets (normalised to sum to one), within the default
/// compute [`Budget`].
pub fn risk_budgeting(covariance: &Matrix, budgets: &[f64]) -> Result<RiskParityPortfolio> {
    risk_budgeting_with_budget(covariance, budgets, Budget::default())
}

/// [`risk_budgeting`] within the compute budget `limit` (not to be confused with the risk `budgets`): every
/// Newton step counts as an iteration; running out is [`QuantError::BudgetExceeded`]. Newton's own limit of
/// 100 steps still reports [`QuantError::NoConvergence`].
pub fn risk_budgeting_with_budget(covariance: &Matrix, budgets: &[f64], limit: Budget) -> Result<RiskParityPortfolio> {
    let meter = Meter::start("risk parity", limit);
    let n = covariance.rows();
    if n == 0 {
        return Err(QuantError::Empty { what: "covariance" });
    }
    covariance.check_symmetric("covariance", n)?;
    input::finite("budgets", budgets)?;
    input::same_len("budgets", n, budgets.len())?;
    if budgets.iter().any(|b| *b <= 0.0) {
        return Err(QuantError::InvalidParameter { name: "budgets", reason: "every budget must be > 0".into() });
    }
    // A singular Σ has no unique risk-parity solution; refuse it up front with the same error as elsewhere.
    cholesky(covariance, "covariance")?;
    let total: f64 = budgets.iter().sum();
    let b: Vec<f64> = budgets.iter().map(|v| v / total).collect();

    // Start from inverse volatility scaled so that xᵀΣx = 1 (the optimum satisfies xᵀΣx = Σb = 1).
    let mut x: Vec<f64> = (0..n).map(|i| 1.0 / covariance[(i, i)].sqrt()).collect();
    let s = covariance.quad_form(&x).sqrt();
    x.iter_mut().for_each(|v| *v /= s);
    let objective = |x: &[f64]| 0.5 * covariance.quad_form(x) - dot(&b, &x.iter().map(|v| v.ln()).collect::<Vec<_>>());

    for iter in 0..100 {
        meter.iteration()?;
        let sx = covariance.mul_vec(&x);
        // Stop on the optimality condition itself, x_i(Σx)_i = b_i, which is what the caller relies on.
        let residual = (0..n).map(|i| (x[i] * sx[i] - b[i]).abs()).fold(0.0, f64::max);
        if residual <= 1e-15 {
            return finish(covariance, &x, iter);
        }
        let grad: Vec<f64> = (0..n).map(|i| sx[i] - b[i] / x[i]).collect();
        let mut h = covariance.clone();
        for i in 0..n {
            h[(i, i)] += b[i] / (x[i] * x[i]);
        }
        let l = cholesky(&h, "risk parity Hessian")?;
        let step = cholesky_solve(&l, &grad);
        let decrement = dot(&grad, &step);
        if decrement < 1e-28 || (iter > 60 && residual < 1e-12) {
            return finish(covariance, &x, iter);
        }
        // Largest step that keeps x > 0, then Armijo backtracking.
        let mut t = 1.0_f64;
        for i in 0..n {
            if step[i] > 0.0 {
                t = t.min(0.99 * x[i] / step[i]);
            }
        }
        let f0 = objective(&x);
        let mut next: Vec<f64>;
        loop {
            next = x.iter().zip(&step).map(|(xi, si)| xi - t * si).collect();
            // Near the optimum the decrease is below the objective's rounding, so the Armijo test cannot
            // be evaluated; there the full Newton step is taken, as quadratic convergence allows.
            if decrement < 1e-10 || objective(&next) <= f0 - 0.25 * t * decrement || t < 1e-12 {
                break;
            }
            t *= 0.5;
        }
        x = next;
    }
    Err(QuantError::NoConvergence { what: "risk parity Newton method", detail: "100 iterations".into() })
}

fn finish(cov: &Matrix, x: &[f64], iterations: usize) -> Result<RiskParityPortfolio> {
    let total: f64 = x.iter().sum();
    let w: Vec<f64> = x.iter().map(|v| v / total).collect();
    let sw = cov.mul_vec(&w);
    let var = dot(&w, &sw);
    let risk_contributions: Vec<f64> = w.iter().zip(&sw).map(|(wi, si)| wi * si / var).collect();
    output::all_finite("risk parity weights", &w)?;
    output::all_finite("risk parity weights", &risk_contributions)?;
    Ok(RiskParityPortfolio { weights: w, risk_contributions, newton_iterations: iterations })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn running_out_of_newton_steps_is_a_budget_error() {
        let cov = Matrix::from_rows(&[vec![0.04, 0.01, 0.0], vec![0.01, 0.09, 0.02], vec![0.0, 0.02, 0.16]]).unwrap();
        let tight = Budget::new(Duration::from_secs(60), 1);
        let e = equal_risk_contribution_with_budget(&cov, tight).unwrap_err();
        assert!(matches!(e, QuantError::BudgetExceeded { what: "risk parity", .. }), "{e:?}");
        let p = equal_risk_contribution(&cov).unwrap();
        assert!(p.newton_iterations > 1);
    }
}

//! The fast route for problems whose only constraints are weight bounds (plus the budget): minimum variance,
//! and long-only maximum Sharpe after homogenisation, are both `min ½xᵀHx, aᵀx = b, l ≤ x ≤ u` and go to
//! the active-set solver, which starts from a vertex it builds here.

use super::active_set;
use super::constraints::Constraints;
use super::hessian::Hessian;
use super::mean_variance::{Convexity, Objective};
use crate::budget::Meter;
use crate::matrix::cholesky;

/// Minimum variance and maximum Sharpe under bounds alone are `min ½xᵀHx, aᵀx = b, l ≤ x ≤ u`, which the
/// active-set solver answers exactly and, for a few hundred assets, far faster than an interior-point
/// method. `None` (other shapes, or the solver declining) sends the problem to clarabel.
pub(super) fn fast_path<H: Hessian + ?Sized>(
    cov: &H,
    mu: Option<&[f64]>,
    objective: Objective,
    c: &Constraints,
    convexity: Convexity,
    meter: &Meter,
) -> Option<Vec<f64>> {
    if !applies(objective, c) {
        return None;
    }
    // The active-set method finds a KKT point, which is the global optimum only when Σ is positive
    // semi-definite (an indefinite matrix can have positive definite faces). A caller's Σ must show a
    // Cholesky factor as the certificate; a singular or indefinite one goes to the conic route, which solves
    // the first and refuses the second. A sample covariance needs no certificate.
    if convexity == Convexity::Unknown {
        cholesky(&cov.full(), "covariance").ok()?;
    }
    let n = cov.size();
    match objective {
        Objective::MinVariance => {
            // A vertex: everything at its lower bound, then the cheapest-variance assets raised in turn.
            let mut x = c.lower.clone();
            let mut left = 1.0 - x.iter().sum::<f64>();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| cov.diag(i).total_cmp(&cov.diag(j)));
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
            active_set::solve(cov, &vec![1.0; n], 1.0, &c.lower, &c.upper, x, last, meter)
        }
        Objective::MaxSharpe { risk_free } => {
            // Homogenised long-only tangency: with y ≥ 0 the caps y_i ≤ u·κ = u·Σy are redundant when u ≥ 1.
            let mu = mu?;
            let excess: Vec<f64> = mu.iter().map(|m| m - risk_free).collect();
            let (best, &m) = excess.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
            if !(m > 0.0) {
                return None;
            }
            let mut y = vec![0.0; n];
            y[best] = 1.0 / m;
            let y = active_set::solve(cov, &excess, 1.0, &vec![0.0; n], &vec![f64::INFINITY; n], y, best, meter)?;
            let kappa: f64 = y.iter().sum();
            (kappa > 0.0).then(|| y.iter().map(|v| v / kappa).collect())
        }
        _ => None,
    }
}

/// Whether the problem has the shape this route solves: bounds only (no groups, no rebalance), finite
/// lower bounds for minimum variance, and long-only weights without binding caps (every cap at least 1)
/// for maximum Sharpe.
pub(super) fn applies(objective: Objective, c: &Constraints) -> bool {
    if !c.groups.is_empty() || c.rebalance.is_some() {
        return false;
    }
    match objective {
        Objective::MinVariance => c.lower.iter().all(|l| l.is_finite()),
        Objective::MaxSharpe { .. } => !c.lower.iter().any(|l| *l != 0.0) && !c.upper.iter().any(|u| *u < 1.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Budget, Meter};
    use crate::matrix::Matrix;
    use crate::optimise::mean_variance::{Convexity, Objective, conic};

    /// A deterministic, well-conditioned one-factor covariance and spread of expected returns.
    fn problem(n: usize, seed: u64) -> (Matrix, Vec<f64>) {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
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
            for objective in [Objective::MinVariance, Objective::MaxSharpe { risk_free: 0.01 }] {
                let meter = Meter::start("test", Budget::default());
                let conic_w = conic(&cov, Some(&mu), objective, &c, &meter).unwrap();
                if let Some(fast) = fast_path(&cov, Some(&mu), objective, &c, Convexity::Unknown, &meter) {
                    let d = fast.iter().zip(&conic_w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                    // Clarabel stops at a 1e-8 duality gap, which leaves weights ~1e-6 from the exact vertex.
                    assert!(d < 2e-5, "seed {seed} {objective:?}: {d:e}");
                    let (fv, cv) = (cov.quad_form(&fast), cov.quad_form(&conic_w));
                    if objective == Objective::MinVariance {
                        assert!(fv <= cv * (1.0 + 1e-9), "active set must not be worse: {fv} vs {cv}");
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

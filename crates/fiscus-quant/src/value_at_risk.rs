//! Value at risk and conditional value at risk (expected shortfall), historical, parametric (Gaussian) and
//! Monte Carlo. Every figure is in RETURN space, as empyrical reports it: a loss is a negative number, so a
//! 95 % one-day VaR of -0.03 means "a 5 % chance of losing 3 % or more".

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::Result;
use crate::input;
use crate::matrix::{Matrix, cholesky};
use crate::normal;
use crate::output;
use crate::stats::{mean, percentile_sorted, sorted, variance};

/// A VaR and the CVaR that goes with it, at the same tail probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailRisk {
    /// The return at the `cutoff` quantile.
    pub var: f64,
    /// The mean return in the tail beyond the VaR.
    pub cvar: f64,
}

/// Historical VaR and CVaR at tail probability `cutoff` (0.05 for 95 %).
///
/// VaR is numpy's linearly interpolated percentile. CVaR follows empyrical: the mean of the
/// `floor((n-1)·cutoff) + 1` smallest returns, which is not quite "the mean of returns at or below VaR".
pub fn historical(returns: &[f64], cutoff: f64) -> Result<TailRisk> {
    input::finite("returns", returns)?;
    input::open_unit("cutoff", cutoff)?;
    let s = sorted(returns);
    tail_of_sorted(&s, cutoff)
}

/// Gaussian VaR `mean + std·z_α` and CVaR `mean - std·φ(z_α)/α` with sample moments (ddof = 1).
pub fn parametric(returns: &[f64], cutoff: f64) -> Result<TailRisk> {
    input::finite("returns", returns)?;
    input::at_least("returns", 2, returns.len())?;
    input::open_unit("cutoff", cutoff)?;
    let (m, sd) = (mean(returns), variance(returns, 1).sqrt());
    let z = normal::quantile(cutoff)?;
    finite(TailRisk { var: m + sd * z, cvar: m - sd * normal::pdf(z) / cutoff })
}

/// What a Monte Carlo VaR simulates: a portfolio of assets with jointly log-normal prices.
#[derive(Debug, Clone, PartialEq)]
pub struct MonteCarloVarSpec<'a> {
    /// Portfolio weights (fractions of value; may be negative for shorts).
    pub weights: &'a [f64],
    /// Mean log return of each asset per period.
    pub mean_log_return: &'a [f64],
    /// Covariance of the assets' log returns per period.
    pub covariance: &'a Matrix,
    /// Number of periods the loss is measured over.
    pub horizon: f64,
    /// Number of simulated scenarios.
    pub scenarios: usize,
    /// Seed of the ChaCha8 generator; the same seed gives the same result bit for bit.
    pub seed: u64,
}

/// Monte Carlo VaR/CVaR of the portfolio's simple return over the horizon: asset log returns are drawn from
/// N(μ·h, Σ·h), each position is revalued exactly (so the non-linearity of compounding is kept), and the
/// scenarios are summarised with the same rules as [`historical`].
pub fn monte_carlo(spec: &MonteCarloVarSpec<'_>, cutoff: f64) -> Result<TailRisk> {
    let n = spec.weights.len();
    input::finite("weights", spec.weights)?;
    input::finite("mean_log_return", spec.mean_log_return)?;
    input::same_len("mean_log_return", n, spec.mean_log_return.len())?;
    input::positive("horizon", spec.horizon)?;
    input::open_unit("cutoff", cutoff)?;
    input::at_least("scenarios", 2, spec.scenarios)?;
    let l = cholesky(spec.covariance, "covariance")?;
    input::same_len("covariance", n, l.rows())?;
    let sqrt_h = spec.horizon.sqrt();
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut z = vec![0.0; n];
    let mut outcomes = Vec::with_capacity(spec.scenarios);
    for _ in 0..spec.scenarios {
        for zi in z.iter_mut() {
            *zi = StandardNormal.sample(&mut rng);
        }
        let mut pnl = 0.0;
        for i in 0..n {
            let shock: f64 = (0..=i).map(|k| l[(i, k)] * z[k]).sum();
            let log_r = spec.mean_log_return[i] * spec.horizon + shock * sqrt_h;
            pnl += spec.weights[i] * log_r.exp_m1();
        }
        outcomes.push(pnl);
    }
    outcomes.sort_by(f64::total_cmp);
    tail_of_sorted(&outcomes, cutoff)
}

fn tail_of_sorted(s: &[f64], cutoff: f64) -> Result<TailRisk> {
    let var = percentile_sorted(s, cutoff);
    let k = ((s.len() - 1) as f64 * cutoff) as usize;
    finite(TailRisk { var, cvar: mean(&s[..=k]) })
}

fn finite(t: TailRisk) -> Result<TailRisk> {
    output::all_finite("value at risk", &[t.var, t.cvar])?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monte_carlo_var_of_one_asset_is_close_to_the_lognormal_quantile_and_reproducible() {
        let cov = Matrix::from_rows(&[vec![0.0004]]).unwrap();
        let spec = MonteCarloVarSpec {
            weights: &[1.0],
            mean_log_return: &[0.0],
            covariance: &cov,
            horizon: 1.0,
            scenarios: 200_000,
            seed: 7,
        };
        let a = monte_carlo(&spec, 0.05).unwrap();
        let b = monte_carlo(&spec, 0.05).unwrap();
        assert_eq!(a.var.to_bits(), b.var.to_bits());
        let exact = (0.02 * normal::quantile(0.05).unwrap()).exp_m1();
        assert!((a.var - exact).abs() < 5e-4, "{} vs {}", a.var, exact);
        assert!(a.cvar < a.var);
    }
}

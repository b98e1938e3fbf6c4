//! Correlated geometric Brownian motion by exact log-Euler steps:
//! `ln S_{k+1} = ln S_k + (μ - σ²/2)Δt + √Δt·(L z)`, with `Σ = L Lᵀ` (Cholesky) and z standard normal.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::vector_exp::exp_in_place;
use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::{Matrix, cholesky};
use crate::output;

/// What to simulate. Rates and covariance are per year; `horizon_years` is split into `steps` equal steps.
#[derive(Debug, Clone, PartialEq)]
pub struct GbmSpec<'a> {
    /// Starting price of each asset (> 0).
    pub initial: &'a [f64],
    /// Annual drift μ of each asset (the risk-free rate for risk-neutral pricing).
    pub drift: &'a [f64],
    /// Annual covariance of log returns (σ² on the diagonal).
    pub covariance: &'a Matrix,
    pub horizon_years: f64,
    pub steps: usize,
    pub paths: usize,
    /// Seed of the ChaCha8 stream; normals are drawn path by path, step by step, asset by asset.
    pub seed: u64,
}

struct Prepared {
    n: usize,
    chol: Matrix,
    step_drift: Vec<f64>,
    sqrt_dt: f64,
    log_initial: Vec<f64>,
}

fn prepare(spec: &GbmSpec<'_>) -> Result<Prepared> {
    let n = spec.initial.len();
    input::finite("initial", spec.initial)?;
    input::finite("drift", spec.drift)?;
    input::same_len("drift", n, spec.drift.len())?;
    if spec.initial.iter().any(|s| *s <= 0.0) {
        return Err(QuantError::InvalidParameter { name: "initial", reason: "prices must be > 0".into() });
    }
    input::positive("horizon_years", spec.horizon_years)?;
    input::at_least("steps", 1, spec.steps)?;
    input::at_least("paths", 1, spec.paths)?;
    let chol = cholesky(spec.covariance, "covariance")?;
    input::same_len("covariance", n, chol.rows())?;
    let dt = spec.horizon_years / spec.steps as f64;
    let step_drift = (0..n).map(|i| (spec.drift[i] - 0.5 * spec.covariance[(i, i)]) * dt).collect();
    Ok(Prepared { n, chol, step_drift, sqrt_dt: dt.sqrt(), log_initial: spec.initial.iter().map(|s| s.ln()).collect() })
}

/// Simulates every path and hands each one to `visit` as a `(steps + 1) × n` row-major slice of prices
/// (row 0 is the initial price). Paths are produced one at a time, so memory stays at one path. A path whose
/// prices overflow (extreme drift or volatility) ends the simulation with [`crate::QuantError::Undefined`]
/// before it is visited; the paths visited until then were finite.
pub fn for_each_gbm_path(spec: &GbmSpec<'_>, mut visit: impl FnMut(usize, &[f64])) -> Result<()> {
    let p = prepare(spec)?;
    let n = p.n;
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut path = vec![0.0; (spec.steps + 1) * n];
    let mut z = vec![0.0; spec.steps * n];
    for index in 0..spec.paths {
        // Draw the whole path's normals first, then accumulate logs, then exponentiate: three simple loops
        // pipeline far better than one loop that interleaves the generator, the sums and `exp`.
        for zi in z.iter_mut() {
            *zi = StandardNormal.sample(&mut rng);
        }
        path[..n].copy_from_slice(&p.log_initial);
        if n == 1 {
            // One asset: the Cholesky factor is σ, and the recursion is a plain running sum.
            let (drift, vol) = (p.step_drift[0], p.sqrt_dt * p.chol[(0, 0)]);
            let mut log_s = p.log_initial[0];
            for (out, zk) in path[1..].iter_mut().zip(&z) {
                log_s += drift + vol * zk;
                *out = log_s;
            }
        } else {
            correlated_log_steps(&p, &z, &mut path, spec.steps);
        }
        path[..n].copy_from_slice(spec.initial);
        exp_in_place(&mut path[n..]);
        output::all_finite("simulated prices", &path)?;
        visit(index, &path);
    }
    Ok(())
}

/// Log prices of a multi-asset path: each step adds the drift and `√Δt·L z_k`.
fn correlated_log_steps(p: &Prepared, z: &[f64], path: &mut [f64], steps: usize) {
    let n = p.n;
    for k in 0..steps {
        let (done, rest) = path.split_at_mut((k + 1) * n);
        let prev = &done[k * n..];
        let zk = &z[k * n..(k + 1) * n];
        for i in 0..n {
            let shock: f64 = p.chol.row(i)[..=i].iter().zip(zk).map(|(a, b)| a * b).sum();
            rest[i] = prev[i] + p.step_drift[i] + p.sqrt_dt * shock;
        }
    }
}

/// Terminal prices only (`paths × n`), the common input to pricing and VaR.
pub fn gbm_terminal_prices(spec: &GbmSpec<'_>) -> Result<Matrix> {
    let n = spec.initial.len();
    let mut out = Matrix::zeros(spec.paths, n);
    let last = spec.steps * n;
    for_each_gbm_path(spec, |i, path| out.row_mut(i).copy_from_slice(&path[last..last + n]))?;
    Ok(out)
}

/// A Monte Carlo price and its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MonteCarloPrice {
    pub price: f64,
    pub standard_error: f64,
}

/// A European option under Black-Scholes dynamics (continuous rates, continuous dividend yield).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EuropeanOption {
    pub spot: f64,
    pub strike: f64,
    pub rate: f64,
    pub dividend_yield: f64,
    pub volatility: f64,
    pub maturity_years: f64,
}

/// A European call priced by simulation under the risk-neutral measure (drift r - q, discount e^{-rT}).
pub fn european_call(option: &EuropeanOption, steps: usize, paths: usize, seed: u64) -> Result<MonteCarloPrice> {
    let o = option;
    input::positive("strike", o.strike)?;
    input::positive("volatility", o.volatility)?;
    input::at_least("paths", 2, paths)?;
    input::all_finite("rates", &[o.rate, o.dividend_yield])?;
    let cov = Matrix::from_row_major(1, 1, vec![o.volatility * o.volatility])?;
    let spec = GbmSpec {
        initial: &[o.spot],
        drift: &[o.rate - o.dividend_yield],
        covariance: &cov,
        horizon_years: o.maturity_years,
        steps,
        paths,
        seed,
    };
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for_each_gbm_path(&spec, |_, path| {
        let pay = (path[steps] - o.strike).max(0.0);
        sum += pay;
        sum_sq += pay * pay;
    })?;
    let m = paths as f64;
    let mean = sum / m;
    let var = (sum_sq - m * mean * mean) / (m - 1.0);
    let disc = (-o.rate * o.maturity_years).exp();
    let (price, standard_error) = (disc * mean, disc * (var.max(0.0) / m).sqrt());
    output::all_finite("Monte Carlo price", &[price, standard_error])?;
    Ok(MonteCarloPrice { price, standard_error })
}

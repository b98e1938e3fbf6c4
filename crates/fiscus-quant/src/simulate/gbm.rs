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
/// (row 0 is the initial price). Paths are produced a few at a time, so memory stays at a few paths. A path
/// whose prices overflow (extreme drift or volatility) ends the simulation with
/// [`crate::QuantError::Undefined`] before it is visited; the paths visited until then were finite.
pub fn for_each_gbm_path(spec: &GbmSpec<'_>, mut visit: impl FnMut(usize, &[f64])) -> Result<()> {
    let p = prepare(spec)?;
    simulate(&p, spec, spec.seed, spec.paths, &mut visit)
}

/// One-asset paths simulated together: each path's log price is a running sum, a chain of `steps`
/// dependent additions, and several independent chains side by side keep the processor busy. Every path
/// still sees exactly the additions it would see alone, and the normals are drawn path after path.
const BATCH: usize = 8;

/// `paths` paths from the ChaCha8 stream of `seed`, visited in order (indices from 0).
fn simulate(
    p: &Prepared,
    spec: &GbmSpec<'_>,
    seed: u64,
    paths: usize,
    visit: &mut impl FnMut(usize, &[f64]),
) -> Result<()> {
    let (n, steps) = (p.n, spec.steps);
    let len = (steps + 1) * n;
    let batch = if n == 1 { BATCH } else { 1 };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buffer = vec![0.0; batch * len];
    let mut normals = vec![0.0; batch * steps * n];
    let mut first = 0;
    while first < paths {
        let b = batch.min(paths - first);
        // Draw the normals first, then accumulate logs, then exponentiate: three simple loops pipeline far
        // better than one loop that interleaves the generator, the sums and `exp`.
        let z = &mut normals[..b * steps * n];
        for zi in z.iter_mut() {
            *zi = StandardNormal.sample(&mut rng);
        }
        if n == 1 {
            one_asset_log_paths(p, z, &mut buffer[..b * len], steps);
        } else {
            let path = &mut buffer[..len];
            path[..n].copy_from_slice(&p.log_initial);
            correlated_log_steps(p, z, path, steps);
        }
        for (k, path) in buffer.chunks_exact_mut(len).take(b).enumerate() {
            path[..n].copy_from_slice(spec.initial);
            exp_in_place(&mut path[n..]);
            output::all_finite("simulated prices", path)?;
            visit(first + k, path);
        }
        first += b;
    }
    Ok(())
}

/// Log prices of one-asset paths (`z` holds each path's normals in turn, `paths` each path's `steps + 1`
/// slots): the Cholesky factor is σ, and the recursion `ln S += drift + σ√Δt·z` is a plain running sum.
fn one_asset_log_paths(p: &Prepared, z: &mut [f64], paths: &mut [f64], steps: usize) {
    let (drift, vol) = (p.step_drift[0], p.sqrt_dt * p.chol[(0, 0)]);
    for zk in z.iter_mut() {
        *zk = drift + vol * *zk;
    }
    let len = steps + 1;
    let b = paths.len() / len;
    if b == BATCH {
        let mut log_s = [p.log_initial[0]; BATCH];
        for k in 0..steps {
            for (j, s) in log_s.iter_mut().enumerate() {
                *s += z[j * steps + k];
                paths[j * len + 1 + k] = *s;
            }
        }
    } else {
        for (path, inc) in paths.chunks_exact_mut(len).zip(z.chunks_exact(steps)) {
            let mut log_s = p.log_initial[0];
            for (out, d) in path[1..].iter_mut().zip(inc) {
                log_s += d;
                *out = log_s;
            }
        }
    }
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
    let cov = check_option(o, paths)?;
    let (initial, drift) = ([o.spot], [o.rate - o.dividend_yield]);
    let spec = GbmSpec {
        initial: &initial,
        drift: &drift,
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
    call_price(o, paths, sum, sum_sq)
}

/// Validates an option and returns its 1×1 covariance σ².
fn check_option(o: &EuropeanOption, paths: usize) -> Result<Matrix> {
    input::positive("strike", o.strike)?;
    input::positive("volatility", o.volatility)?;
    input::at_least("paths", 2, paths)?;
    input::all_finite("rates", &[o.rate, o.dividend_yield])?;
    Matrix::from_row_major(1, 1, vec![o.volatility * o.volatility])
}

/// The discounted mean payoff and its standard error from the payoff sums.
fn call_price(o: &EuropeanOption, paths: usize, sum: f64, sum_sq: f64) -> Result<MonteCarloPrice> {
    let m = paths as f64;
    let mean = sum / m;
    let var = (sum_sq - m * mean * mean) / (m - 1.0);
    let disc = (-o.rate * o.maturity_years).exp();
    let (price, standard_error) = (disc * mean, disc * (var.max(0.0) / m).sqrt());
    output::all_finite("Monte Carlo price", &[price, standard_error])?;
    Ok(MonteCarloPrice { price, standard_error })
}

/// Paths per chunk of the parallel functions: at most 10,000, fewer for long multi-asset paths so that a
/// chunk stays near ten million normal draws. It depends on the shape of the problem only, never on the
/// number of threads.
pub fn chunk_paths(steps: usize, assets: usize) -> usize {
    (10_000_000 / steps.saturating_mul(assets).max(1)).clamp(1, 10_000)
}

/// The seed of chunk `k` of a run seeded `seed`: the seed itself for chunk 0, `splitmix64(seed + k)` after,
/// so that a run of one chunk is exactly the sequential functions' run for the same seed.
pub fn chunk_seed(seed: u64, chunk: usize) -> u64 {
    if chunk == 0 {
        return seed;
    }
    let mut z = seed.wrapping_add(chunk as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The parallel counterpart of [`for_each_gbm_path`]: the `spec.paths` paths are cut into chunks of
/// [`chunk_paths`] paths, chunk `k` drawn from its own ChaCha8 stream seeded [`chunk_seed`]`(spec.seed, k)`,
/// and the chunks are shared among `threads` threads (0 = every core the machine offers). Each chunk gets
/// an accumulator from `init(k)` and sees its paths in order through `visit(acc, path_index, prices)`
/// (`path_index` counts from 0 over the whole run); the accumulators come back in chunk order. A chunk
/// depends on its number only, so the result is the same to the bit for any thread count. An overflowing
/// path makes the whole call fail with the error of the first chunk that met one.
pub fn fold_gbm_paths<A: Send>(
    spec: &GbmSpec<'_>,
    threads: usize,
    init: impl Fn(usize) -> A + Sync,
    visit: impl Fn(&mut A, usize, &[f64]) + Sync,
) -> Result<Vec<A>> {
    let p = prepare(spec)?;
    let size = chunk_paths(spec.steps, p.n);
    let chunks = spec.paths.div_ceil(size);
    crate::parallel::map_chunks(chunks, threads, |k| {
        let first = k * size;
        let mut acc = init(k);
        simulate(&p, spec, chunk_seed(spec.seed, k), size.min(spec.paths - first), &mut |i, path| {
            visit(&mut acc, first + i, path)
        })?;
        Ok(acc)
    })
    .into_iter()
    .collect()
}

/// Terminal prices (`paths × n`) from [`fold_gbm_paths`]'s chunked streams. With at most
/// [`chunk_paths`] paths this equals [`gbm_terminal_prices`] for the same spec.
pub fn gbm_terminal_prices_parallel(spec: &GbmSpec<'_>, threads: usize) -> Result<Matrix> {
    let n = spec.initial.len();
    let last = spec.steps * n;
    let chunks = fold_gbm_paths(
        spec,
        threads,
        |_| Vec::new(),
        |out: &mut Vec<f64>, _, path| out.extend_from_slice(&path[last..last + n]),
    )?;
    Matrix::from_row_major(spec.paths, n, chunks.concat())
}

/// [`european_call`] on chunked streams and several threads (see [`fold_gbm_paths`]): each chunk sums its
/// payoffs and squared payoffs in path order and the chunk sums are added in chunk order, so the price is
/// the same to the bit for any thread count (it differs from [`european_call`]'s beyond one chunk, whose
/// streams are different).
pub fn european_call_parallel(
    option: &EuropeanOption,
    steps: usize,
    paths: usize,
    seed: u64,
    threads: usize,
) -> Result<MonteCarloPrice> {
    let o = option;
    let cov = check_option(o, paths)?;
    let (initial, drift) = ([o.spot], [o.rate - o.dividend_yield]);
    let spec = GbmSpec {
        initial: &initial,
        drift: &drift,
        covariance: &cov,
        horizon_years: o.maturity_years,
        steps,
        paths,
        seed,
    };
    let sums = fold_gbm_paths(
        &spec,
        threads,
        |_| (0.0, 0.0),
        |(sum, sum_sq): &mut (f64, f64), _, path| {
            let pay = (path[steps] - o.strike).max(0.0);
            *sum += pay;
            *sum_sq += pay * pay;
        },
    )?;
    let (sum, sum_sq) = sums.iter().fold((0.0, 0.0), |(s, q), (a, b)| (s + a, q + b));
    call_price(o, paths, sum, sum_sq)
}

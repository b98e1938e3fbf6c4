//! Covariance estimators of a return panel (rows = periods, columns = assets): the sample covariance and
//! Ledoit-Wolf shrinkage towards a scaled identity, exactly as scikit-learn's `LedoitWolf` computes it (which
//! is also what PyPortfolioOpt's `ledoit_wolf()` returns before multiplying by the annualisation factor).
//! The single-index and constant-correlation targets are in [`shrinkage_targets`].

mod cross_product;
mod rows;
mod shrinkage_targets;

pub(crate) use rows::SampleRows;
pub use shrinkage_targets::{ledoit_wolf_constant_correlation, ledoit_wolf_single_factor};

use crate::error::Result;
use crate::input;
use crate::matrix::Matrix;
use crate::output;

/// Sample covariance with `ddof` degrees of freedom removed (1 = pandas/PyPortfolioOpt, 0 = MLE).
pub fn sample(returns: &Matrix, ddof: usize) -> Result<Matrix> {
    returns.check_finite("returns")?;
    sample_of_finite(returns, ddof)
}

/// [`sample`] for returns already checked to be finite and non-empty.
pub(crate) fn sample_of_finite(returns: &Matrix, ddof: usize) -> Result<Matrix> {
    input::at_least("returns", ddof + 1, returns.rows())?;
    // Centred while packed: the same `x − mean` as `centred`, without the copy.
    let means = column_means(returns);
    let s = cross_product::shifted_cross_product(returns, Some(&means), (returns.rows() - ddof) as f64);
    output::all_finite("sample covariance", s.as_slice())?;
    Ok(s)
}

/// Per-asset compounded annual return `Π(1 + r)^(ppy/n) - 1` (PyPortfolioOpt's `mean_historical_return`).
/// Returns below −1 are refused: PyPortfolioOpt compounds them into a negative wealth and, for an even
/// number of periods per row count, raises it to a power that hides the sign.
pub fn mean_historical_return(returns: &Matrix, periods_per_year: f64) -> Result<Vec<f64>> {
    returns.check_finite("returns")?;
    input::no_total_loss("returns", returns.as_slice())?;
    input::positive("periods_per_year", periods_per_year)?;
    let (t, n) = (returns.rows(), returns.cols());
    let mut growth = vec![1.0; n];
    for i in 0..t {
        for (g, r) in growth.iter_mut().zip(returns.row(i)) {
            *g *= 1.0 + r;
        }
    }
    let e = periods_per_year / t as f64;
    let mu: Vec<f64> = growth.iter().map(|g| g.powf(e) - 1.0).collect();
    output::all_finite("mean historical return", &mu)?;
    Ok(mu)
}

/// A shrunk covariance and the shrinkage intensity that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shrunk {
    /// `(1 - δ)·S + δ·μ·I`, in the data's own frequency (not annualised).
    pub matrix: Matrix,
    /// The intensity δ in [0, 1].
    pub shrinkage: f64,
    /// The target's diagonal level μ = trace(S)/p.
    pub target_mean_variance: f64,
}

/// Ledoit-Wolf (2004) shrinkage of the MLE (ddof = 0) covariance towards `trace(S)/p · I`.
pub fn ledoit_wolf(returns: &Matrix) -> Result<Shrunk> {
    returns.check_finite("returns")?;
    input::at_least("returns", 2, returns.rows())?;
    let (t, p) = (returns.rows(), returns.cols());
    let x = centred(returns);
    let n = t as f64;
    let s = cross_product(&x, n);
    let mu = (0..p).map(|i| s[(i, i)]).sum::<f64>() / p as f64;
    // beta_ = Σ_ij <x_i², x_j²>, delta_ = Σ_ij <x_i, x_j>² — the same sums scikit-learn accumulates.
    let mut x2 = Matrix::zeros(t, p);
    for r in 0..t {
        for (o, v) in x2.row_mut(r).iter_mut().zip(x.row(r)) {
            *o = v * v;
        }
    }
    let beta_sum: f64 = cross_product(&x2, 1.0).as_slice().iter().sum();
    let delta_sum: f64 = cross_product(&x, 1.0).as_slice().iter().map(|v| v * v).sum::<f64>() / (n * n);
    let beta = (beta_sum / n - delta_sum) / (p as f64 * n);
    let trace: f64 = (0..p).map(|i| s[(i, i)]).sum();
    let delta = (delta_sum - 2.0 * mu * trace + p as f64 * mu * mu) / p as f64;
    let beta = beta.min(delta);
    // delta = ‖S − μI‖²/p is zero when S already is the target; beta ≤ delta can then only be rounding.
    let shrinkage = if beta == 0.0 || !(delta > 0.0) { 0.0 } else { (beta / delta).max(0.0) };
    let mut m = s.scaled(1.0 - shrinkage);
    for i in 0..p {
        m[(i, i)] += shrinkage * mu;
    }
    finite_shrunk("Ledoit-Wolf covariance", Shrunk { matrix: m, shrinkage, target_mean_variance: mu })
}

pub(crate) fn finite_shrunk(what: &'static str, s: Shrunk) -> Result<Shrunk> {
    output::all_finite(what, s.matrix.as_slice())?;
    output::all_finite(what, &[s.shrinkage, s.target_mean_variance])?;
    Ok(s)
}

/// Each column's mean: rows summed in order, then divided by the row count.
pub(crate) fn column_means(returns: &Matrix) -> Vec<f64> {
    let (t, n) = (returns.rows(), returns.cols());
    let mut means = vec![0.0; n];
    for i in 0..t {
        for (m, r) in means.iter_mut().zip(returns.row(i)) {
            *m += r;
        }
    }
    for m in &mut means {
        *m /= t as f64;
    }
    means
}

pub(crate) fn centred(returns: &Matrix) -> Matrix {
    let means = column_means(returns);
    let mut x = returns.clone();
    for i in 0..returns.rows() {
        for (v, m) in x.row_mut(i).iter_mut().zip(&means) {
            *v -= m;
        }
    }
    x
}

/// `XᵀX / denom`, symmetric (see [`cross_product::shifted_cross_product`]).
pub(crate) fn cross_product(x: &Matrix, denom: f64) -> Matrix {
    cross_product::shifted_cross_product(x, None, denom)
}

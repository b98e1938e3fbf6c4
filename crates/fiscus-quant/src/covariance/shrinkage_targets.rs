//! Ledoit-Wolf shrinkage towards structured targets, written to reproduce PyPortfolioOpt 1.6's own
//! implementations term by term (they mix ddof = 0 and ddof = 1 moments in specific places; the comments
//! say where). Results are in the data's frequency; PyPortfolioOpt then multiplies by 252.

use super::{Shrunk, centred, cross_product, finite_shrunk, sample};
use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::Matrix;

/// Ledoit & Wolf (2001): shrink the ddof = 0 covariance towards Sharpe's single-index model, with the
/// equal-weighted average of the assets as the market.
pub fn ledoit_wolf_single_factor(returns: &Matrix) -> Result<Shrunk> {
    returns.check_finite("returns")?;
    input::at_least("returns", 2, returns.rows())?;
    let (t, n) = (returns.rows(), returns.cols());
    let tf = t as f64;
    let xm = centred(returns);
    let mkt: Vec<f64> = (0..t).map(|r| xm.row(r).iter().sum::<f64>() / n as f64).collect();
    let s = cross_product(&xm, tf);
    let betas: Vec<f64> = (0..n).map(|i| (0..t).map(|r| xm[(r, i)] * mkt[r]).sum::<f64>() / tf).collect();
    let var_mkt = mkt.iter().map(|m| m * m).sum::<f64>() / tf;
    if var_mkt == 0.0 {
        return Err(QuantError::Undefined {
            what: "single-factor target",
            reason: "the equal-weighted market has zero variance, so betas are undefined",
        });
    }
    let mut f = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            f[(i, j)] = if i == j { s[(i, i)] } else { betas[i] * betas[j] / var_mkt };
        }
    }
    let c: f64 = s.as_slice().iter().zip(f.as_slice()).map(|(a, b)| (a - b) * (a - b)).sum();
    let mut y = xm.clone();
    let mut z = xm.clone();
    for r in 0..t {
        for i in 0..n {
            y[(r, i)] = xm[(r, i)] * xm[(r, i)];
            z[(r, i)] = xm[(r, i)] * mkt[r];
        }
    }
    let yty = cross_product(&y, 1.0);
    let p = yty.as_slice().iter().sum::<f64>() / tf - s.as_slice().iter().map(|v| v * v).sum::<f64>();
    let rdiag = y.as_slice().iter().map(|v| v * v).sum::<f64>() / tf - (0..n).map(|i| s[(i, i)].powi(2)).sum::<f64>();
    let ytz = product_t(&y, &z);
    let ztz = cross_product(&z, 1.0);
    let (mut roff1, mut roff3) = (0.0, 0.0);
    for i in 0..n {
        for j in 0..n {
            let v1 = ytz[(i, j)] / tf - betas[i] * s[(i, j)];
            let v3 = ztz[(i, j)] / tf - var_mkt * s[(i, j)];
            if i != j {
                roff1 += v1 * betas[j];
                roff3 += v3 * betas[i] * betas[j];
            }
        }
    }
    let roff = 2.0 * roff1 / var_mkt - roff3 / (var_mkt * var_mkt);
    let r = rdiag + roff;
    let shrinkage = if c > 0.0 { ((p - r) / c / tf).clamp(0.0, 1.0) } else { 0.0 };
    finite_shrunk(
        "single-factor shrinkage",
        Shrunk { matrix: blend(&f, &s, shrinkage), shrinkage, target_mean_variance: var_mkt },
    )
}

/// Ledoit & Wolf (2003): shrink the ddof = 1 covariance towards the constant-correlation matrix.
pub fn ledoit_wolf_constant_correlation(returns: &Matrix) -> Result<Shrunk> {
    returns.check_finite("returns")?;
    input::at_least("returns", 2, returns.rows())?;
    let (t, n) = (returns.rows(), returns.cols());
    let tf = t as f64;
    let s = sample(returns, 1)?;
    let var: Vec<f64> = (0..n).map(|i| s[(i, i)]).collect();
    if var.contains(&0.0) {
        return Err(QuantError::Undefined {
            what: "constant-correlation target",
            reason: "an asset has zero variance, so its correlations are undefined",
        });
    }
    let sd: Vec<f64> = var.iter().map(|v| v.sqrt()).collect();
    let mut corr_sum = 0.0;
    for i in 0..n {
        for j in 0..n {
            corr_sum += s[(i, j)] / (sd[i] * sd[j]);
        }
    }
    let r_bar = if n > 1 { (corr_sum - n as f64) / (n * (n - 1)) as f64 } else { 0.0 };
    let mut f = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            f[(i, j)] = if i == j { var[i] } else { r_bar * sd[i] * sd[j] };
        }
    }
    let xm = centred(returns);
    let mut y = xm.clone();
    let mut cube = xm.clone();
    for v in y.as_mut_slice() {
        *v *= *v;
    }
    for (c, x) in cube.as_mut_slice().iter_mut().zip(xm.as_slice()) {
        *c = x * x * x;
    }
    let yty = cross_product(&y, 1.0);
    let help = cross_product(&xm, tf);
    let term1 = product_t(&cube, &xm);
    let (mut pi_hat, mut pi_diag, mut theta_sum) = (0.0, 0.0, 0.0);
    for i in 0..n {
        for j in 0..n {
            // PyPortfolioOpt: pi = y'y/t − 2(Xm'Xm)∘S/t + S∘S, with S the ddof = 1 covariance.
            let pi = yty[(i, j)] / tf - 2.0 * help[(i, j)] * s[(i, j)] + s[(i, j)] * s[(i, j)];
            pi_hat += pi;
            if i == j {
                pi_diag += pi;
            } else {
                let theta = term1[(i, j)] / tf - help[(i, i)] * s[(i, j)] - help[(i, j)] * var[i] + var[i] * s[(i, j)];
                theta_sum += sd[j] / sd[i] * theta;
            }
        }
    }
    let rho_hat = pi_diag + r_bar * theta_sum;
    let gamma: f64 = s.as_slice().iter().zip(f.as_slice()).map(|(a, b)| (a - b) * (a - b)).sum();
    let shrinkage = if gamma > 0.0 { ((pi_hat - rho_hat) / gamma / tf).clamp(0.0, 1.0) } else { 0.0 };
    finite_shrunk(
        "constant-correlation shrinkage",
        Shrunk { matrix: blend(&f, &s, shrinkage), shrinkage, target_mean_variance: r_bar },
    )
}

/// `AᵀB` for two panels with the same rows.
fn product_t(a: &Matrix, b: &Matrix) -> Matrix {
    let (n, m) = (a.cols(), b.cols());
    let mut out = Matrix::zeros(n, m);
    for r in 0..a.rows() {
        let (ar, br) = (a.row(r), b.row(r));
        for (i, &x) in ar.iter().enumerate().take(n) {
            for (o, y) in out.row_mut(i).iter_mut().zip(br) {
                *o += x * y;
            }
        }
    }
    out
}

fn blend(target: &Matrix, s: &Matrix, delta: f64) -> Matrix {
    let mut m = s.scaled(1.0 - delta);
    for (o, f) in m.as_mut_slice().iter_mut().zip(target.as_slice()) {
        *o += delta * f;
    }
    m
}

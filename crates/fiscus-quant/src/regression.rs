//! Ordinary least squares, for factor exposures such as a portfolio's excess returns regressed on the
//! Fama-French factors, with statsmodels 0.15's `OLS(y, X).fit()` definitions:
//!
//! - coefficients minimise `‖y − Xβ‖²`; the intercept, when asked for, is a column of ones placed first;
//! - standard errors are the classical (non-robust) `sqrt(diag(σ̂²·(XᵀX)⁻¹))` with `σ̂² = SSR/(n − k)`, k the
//!   number of columns including the intercept; t-values are coefficient / standard error;
//! - R² is `1 − SSR/Σ(y − ȳ)²` (centred) when the model has a constant, and `1 − SSR/Σy²` (uncentred) when it
//!   has none; adjusted R² is `1 − (n − c)/(n − k)·(1 − R²)` with c = 1 with a constant, 0 without. As in
//!   statsmodels, a model without an intercept column still "has a constant" when its regressors span the
//!   constant vector (e.g. dummies that sum to one): then R² is centred and c = 1 ([`Ols::has_constant`]).
//!
//! The fit is a Householder QR factorisation of the design, never the normal equations (which square the
//! condition number). Each column is first scaled by a power of two (exact) so that magnitudes near 1e±300
//! neither overflow nor underflow inside the factorisation; the results are scaled back the same way.
//!
//! Refused with a typed error instead of a NaN: mismatched lengths, non-finite values, no column at all,
//! n ≤ k (no residual degree of freedom), a rank-deficient design (a constant regressor next to the
//! intercept, two identical columns, any column that is a linear combination of the ones before it: see
//! [`COLLINEARITY_TOLERANCE`]) and a fit that is exact to rounding (standard errors 0, t-values infinite).
//! statsmodels accepts a rank-deficient design and returns its minimum-norm solution; we refuse it, because
//! the coefficients are then not determined by the data.

use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::dot;
use crate::output;
use crate::stats::mean;

/// A column whose part outside the span of the columns before it (the intercept first, then the regressors
/// in order) is at most this fraction of its norm makes the design rank-deficient and is refused: the angle
/// between it and that span is below 1e-10 radians. An exact linear dependence leaves a rounding residue
/// near 1e-16; a design this close to collinear would give coefficients whose leading digits are noise.
pub const COLLINEARITY_TOLERANCE: f64 = 1e-10;

/// An ordinary least squares fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Ols {
    /// β, the intercept first when one was asked for, then one per regressor in the order given.
    pub coefficients: Vec<f64>,
    /// Classical standard errors `sqrt(σ̂²·[(XᵀX)⁻¹]_jj)`, `σ̂² = SSR/(n − k)`, aligned with `coefficients`.
    pub std_errors: Vec<f64>,
    /// `coefficients[j] / std_errors[j]`.
    pub t_values: Vec<f64>,
    /// Centred when the model has a constant, uncentred (`1 − SSR/Σy²`) when not (statsmodels).
    pub r_squared: f64,
    /// `1 − (n − c)/(n − k)·(1 − R²)`, c = 1 when the model has a constant, else 0 (statsmodels).
    pub adj_r_squared: f64,
    /// `σ̂ = sqrt(SSR/(n − k))` (statsmodels' `sqrt(scale)`).
    pub residual_std_error: f64,
    /// n, the number of observations.
    pub observations: usize,
    /// n − k, k counting the intercept.
    pub degrees_of_freedom: usize,
    /// Whether R² was centred: the intercept was asked for, or the regressors span the constant vector to
    /// [`COLLINEARITY_TOLERANCE`] (statsmodels' `k_constant`).
    pub has_constant: bool,
}

/// Regresses `y` on the regressors `x` (one vector per regressor, each `y.len()` long), with an intercept
/// column of ones placed first when `intercept` is true. See the module documentation for the definitions
/// and the refusals. A non-finite regressor value is reported as `NonFinite { what: "x", index: j·n + i }`
/// for regressor j, row i.
pub fn ols(y: &[f64], x: &[Vec<f64>], intercept: bool) -> Result<Ols> {
    input::finite("y", y)?;
    let n = y.len();
    for (j, column) in x.iter().enumerate() {
        input::same_len("regressor", n, column.len())?;
        if let Err(QuantError::NonFinite { index, .. }) = input::all_finite("x", column) {
            return Err(QuantError::NonFinite { what: "x", index: j * n + index });
        }
    }
    let k = x.len() + usize::from(intercept);
    if k == 0 {
        return Err(QuantError::InvalidParameter {
            name: "x",
            reason: "no regressors and no intercept: there is nothing to fit".into(),
        });
    }
    input::at_least("observations", k + 1, n)?;

    // Each column (and y) divided by a power of two near its largest magnitude: exact, and it keeps every
    // norm and product of the factorisation in range. The intercept column is already 1.
    let (y_exp, ys) = scaled(y);
    let mut columns = Vec::with_capacity(k);
    let mut exps = Vec::with_capacity(k);
    if intercept {
        columns.push(vec![1.0; n]);
        exps.push(0);
    }
    for column in x {
        let (e, c) = scaled(column);
        columns.push(c);
        exps.push(e);
    }

    let qr = Qr::factor(&columns, intercept)?;
    let qty = qr.apply_transpose(&ys);
    let beta = qr.solve_r(&qty[..k]);

    let mut residuals = ys.clone();
    for (b, column) in beta.iter().zip(&columns) {
        for (r, v) in residuals.iter_mut().zip(column) {
            *r -= b * v;
        }
    }
    let ssr = dot(&residuals, &residuals);
    // Computing y − Xβ rounds by about (k + 1)·ε·(‖y‖ + Σ|β_j|·‖x_j‖) (an exact fit measures ~1e-16 of that
    // reach); residuals within 8·n·ε of it are noise around an exact fit, and standard errors built on them
    // would be meaningless.
    let reach = dot(&ys, &ys).sqrt() + beta.iter().zip(&qr.norms).map(|(b, norm)| b.abs() * norm).sum::<f64>();
    if !(ssr.sqrt() > 8.0 * n as f64 * f64::EPSILON * reach) {
        return Err(QuantError::Undefined {
            what: "OLS standard errors",
            reason: "the regressors fit y exactly (the residuals are rounding noise), so the standard errors \
                     are 0 and the t-values infinite",
        });
    }

    let has_constant = intercept || qr.spans_constant(n);
    let tss = if has_constant {
        let m = mean(&ys);
        ys.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
    } else {
        dot(&ys, &ys)
    };
    let r_squared = output::finite("R²", 1.0 - ssr / tss)?;
    let dof = n - k;
    let c = usize::from(has_constant);
    let adj_r_squared = output::finite("adjusted R²", 1.0 - (n - c) as f64 / dof as f64 * (1.0 - r_squared))?;
    let sigma = (ssr / dof as f64).sqrt();

    let inverse_row_norms = qr.inverse_row_norms();
    let mut coefficients = Vec::with_capacity(k);
    let mut std_errors = Vec::with_capacity(k);
    let mut t_values = Vec::with_capacity(k);
    for j in 0..k {
        let se = sigma * inverse_row_norms[j];
        t_values.push(beta[j] / se);
        coefficients.push(times_pow2(beta[j], y_exp - exps[j]));
        std_errors.push(times_pow2(se, y_exp - exps[j]));
    }
    output::all_finite("OLS coefficients", &coefficients)?;
    output::all_finite("OLS standard errors", &std_errors)?;
    output::all_finite("OLS t-values", &t_values)?;
    Ok(Ols {
        coefficients,
        std_errors,
        t_values,
        r_squared,
        adj_r_squared,
        residual_std_error: output::finite("residual standard error", times_pow2(sigma, y_exp))?,
        observations: n,
        degrees_of_freedom: dof,
        has_constant,
    })
}

/// The Householder factorisation `X = QR` of an n×k design held column by column: the reflectors that make
/// up Q and the k×k upper triangle R.
struct Qr {
    n: usize,
    k: usize,
    /// Reflector j is `I − τ_j v_j v_jᵀ` acting on rows j..n; `v_j` has n − j entries.
    reflectors: Vec<(Vec<f64>, f64)>,
    /// R, row-major k×k (upper triangle used).
    r: Vec<f64>,
    /// The Euclidean norm of each (scaled) design column.
    norms: Vec<f64>,
}

impl Qr {
    /// Factors the columns, refusing one whose part outside the span of the columns before it is at most
    /// [`COLLINEARITY_TOLERANCE`] of its norm.
    fn factor(columns: &[Vec<f64>], intercept: bool) -> Result<Self> {
        let k = columns.len();
        let n = columns.first().map_or(0, Vec::len);
        let norms: Vec<f64> = columns.iter().map(|c| dot(c, c).sqrt()).collect();
        let mut a = columns.to_vec();
        let mut r = vec![0.0; k * k];
        let mut reflectors = Vec::with_capacity(k);
        for j in 0..k {
            let (done, rest) = a.split_at_mut(j + 1);
            let column = &done[j];
            let below = &column[j..];
            // After j reflections, ‖rows j..n of column j‖ is its distance to the span of columns 0..j.
            let distance = dot(below, below).sqrt();
            if !(distance > COLLINEARITY_TOLERANCE * norms[j]) {
                return Err(collinear(j, intercept, norms[j], distance));
            }
            let diagonal = if below[0] >= 0.0 { -distance } else { distance };
            let mut v = below.to_vec();
            v[0] -= diagonal;
            // vᵀv = 2·distance·(distance + |below[0]|) > 0.
            let tau = 2.0 / dot(&v, &v);
            for later in rest.iter_mut() {
                reflect(&v, tau, &mut later[j..]);
            }
            for (i, value) in column[..j].iter().enumerate() {
                r[i * k + j] = *value;
            }
            r[j * k + j] = diagonal;
            reflectors.push((v, tau));
        }
        Ok(Self { n, k, reflectors, r, norms })
    }

    /// `Qᵀ b` for a vector of length n.
    fn apply_transpose(&self, b: &[f64]) -> Vec<f64> {
        let mut out = b.to_vec();
        for (j, (v, tau)) in self.reflectors.iter().enumerate() {
            reflect(v, *tau, &mut out[j..]);
        }
        out
    }

    /// Solves `R z = c` by back substitution (the diagonal is non-zero by construction).
    fn solve_r(&self, c: &[f64]) -> Vec<f64> {
        let k = self.k;
        let mut z = c.to_vec();
        for i in (0..k).rev() {
            let s: f64 = (i + 1..k).map(|l| self.r[i * k + l] * z[l]).sum();
            z[i] = (z[i] - s) / self.r[i * k + i];
        }
        z
    }

    /// `sqrt(diag((XᵀX)⁻¹))`: as `XᵀX = RᵀR`, `(XᵀX)⁻¹ = R⁻¹R⁻ᵀ` and its diagonal holds the squared norms of
    /// the rows of R⁻¹ (computed column by column, each column of R⁻¹ a back substitution).
    fn inverse_row_norms(&self) -> Vec<f64> {
        let k = self.k;
        let mut squares = vec![0.0; k];
        for m in 0..k {
            let mut e = vec![0.0; k];
            e[m] = 1.0;
            for (i, z) in self.solve_r(&e).iter().enumerate() {
                squares[i] += z * z;
            }
        }
        squares.into_iter().map(f64::sqrt).collect()
    }

    /// Whether the vector of ones lies in the column space (its part outside is at most
    /// [`COLLINEARITY_TOLERANCE`] of its norm): statsmodels' implicit constant.
    fn spans_constant(&self, n: usize) -> bool {
        debug_assert_eq!(n, self.n);
        let q1 = self.apply_transpose(&vec![1.0; n]);
        let outside = &q1[self.k..];
        dot(outside, outside).sqrt() <= COLLINEARITY_TOLERANCE * (n as f64).sqrt()
    }
}

/// `b ← (I − τ v vᵀ) b`.
fn reflect(v: &[f64], tau: f64, b: &mut [f64]) {
    let w = tau * dot(v, b);
    if w != 0.0 {
        for (x, vi) in b.iter_mut().zip(v) {
            *x -= w * vi;
        }
    }
}

fn collinear(column: usize, intercept: bool, norm: f64, distance: f64) -> QuantError {
    let regressor = column - usize::from(intercept);
    let before = match (intercept, regressor) {
        (true, 0) => "the intercept".to_string(),
        (true, r) => format!("the intercept and regressors 0..{r}"),
        (false, r) => format!("regressors 0..{r}"),
    };
    let reason = if norm == 0.0 {
        format!("regressor {regressor} is all zeros: the design is rank-deficient")
    } else if intercept && regressor == 0 {
        format!(
            "regressor 0 is constant (collinear with the intercept; {:.1e} of its norm lies outside): the design \
             is rank-deficient",
            distance / norm
        )
    } else {
        format!(
            "regressor {regressor} is a linear combination of {before} (only {:.1e} of its norm lies outside \
             their span, tolerance {COLLINEARITY_TOLERANCE:e}): the design is rank-deficient",
            distance / norm
        )
    };
    QuantError::InvalidParameter { name: "x", reason }
}

/// The exponent e of a power of two near the largest magnitude of `xs` (clamped to ±1000 so that 2^±e is a
/// normal number), and `xs · 2^−e`. The exponent is 0 for a slice of zeros.
fn scaled(xs: &[f64]) -> (i32, Vec<f64>) {
    let largest = xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let e = if largest > 0.0 { (largest.log2().floor() as i32).clamp(-1000, 1000) } else { 0 };
    (e, xs.iter().map(|x| times_pow2(*x, -e)).collect())
}

/// `x · 2^e`, exact unless the result over- or underflows; e may exceed the exponent range of one f64.
fn times_pow2(x: f64, e: i32) -> f64 {
    let (mut x, mut e) = (x, e);
    while e > 1000 {
        x *= 2.0_f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2.0_f64.powi(-1000);
        e += 1000;
    }
    x * 2.0_f64.powi(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    const Y: [f64; 8] = [3.1, 2.0, 4.4, 7.9, 3.3, 8.1, 7.2, 12.6];
    const X1: [f64; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    const X2: [f64; 8] = [2.5, -1.0, 0.5, 3.0, -2.0, 1.5, 0.0, 4.0];

    fn reason(e: QuantError) -> String {
        match e {
            QuantError::InvalidParameter { name: "x", reason } => reason,
            other => panic!("expected a rank-deficiency refusal, got {other:?}"),
        }
    }

    #[test]
    fn mismatched_lengths_are_refused() {
        let short = X2[..7].to_vec();
        let e = ols(&Y, &[X1.to_vec(), short], true).unwrap_err();
        assert_eq!(e, QuantError::LengthMismatch { what: "regressor", expected: 8, got: 7 });
        let long = [X1.to_vec(), vec![0.0]].concat();
        assert!(matches!(ols(&Y, &[long], false), Err(QuantError::LengthMismatch { got: 9, .. })));
    }

    #[test]
    fn non_finite_and_empty_inputs_are_refused() {
        let mut y = Y;
        y[5] = f64::NAN;
        assert_eq!(ols(&y, &[X1.to_vec()], true).unwrap_err(), QuantError::NonFinite { what: "y", index: 5 });
        let mut x2 = X2.to_vec();
        x2[2] = f64::NEG_INFINITY;
        // Regressor 1, row 2: index 1·8 + 2.
        assert_eq!(ols(&Y, &[X1.to_vec(), x2], true).unwrap_err(), QuantError::NonFinite { what: "x", index: 10 });
        assert_eq!(ols(&[], &[], true).unwrap_err(), QuantError::Empty { what: "y" });
        let nothing = ols(&Y, &[], false).unwrap_err();
        assert!(matches!(nothing, QuantError::InvalidParameter { name: "x", .. }), "{nothing:?}");
    }

    #[test]
    fn no_residual_degree_of_freedom_is_refused() {
        let x = [X1.to_vec(), X2.to_vec()];
        // n = k = 3, and n < k.
        let three = ols(&Y[..3], &[X1[..3].to_vec(), X2[..3].to_vec()], true).unwrap_err();
        assert_eq!(three, QuantError::InsufficientData { what: "observations", needed: 4, got: 3 });
        let two = ols(&Y[..2], &[X1[..2].to_vec(), X2[..2].to_vec()], true).unwrap_err();
        assert_eq!(two, QuantError::InsufficientData { what: "observations", needed: 4, got: 2 });
        assert_eq!(ols(&Y, &x, true).unwrap().degrees_of_freedom, 5);
        assert!(matches!(ols(&[1.0], &[], true), Err(QuantError::InsufficientData { needed: 2, got: 1, .. })));
    }

    #[test]
    fn a_constant_regressor_next_to_the_intercept_is_refused() {
        let e = ols(&Y, &[X1.to_vec(), vec![0.25; 8]], true).unwrap_err();
        assert!(reason(e).contains("linear combination of the intercept and regressors 0..1"));
        let e = ols(&Y, &[vec![0.01; 8]], true).unwrap_err();
        assert!(reason(e).contains("regressor 0 is constant"));
        // Without the intercept a constant column is the intercept, and the model has a constant.
        let fit = ols(&Y, &[vec![0.25; 8], X1.to_vec()], false).unwrap();
        let with = ols(&Y, &[X1.to_vec()], true).unwrap();
        assert!(fit.has_constant);
        assert!((fit.r_squared - with.r_squared).abs() < 1e-14);
        assert!((fit.coefficients[0] * 0.25 - with.coefficients[0]).abs() < 1e-13);
    }

    #[test]
    fn identical_proportional_and_dependent_columns_are_refused() {
        let e = ols(&Y, &[X1.to_vec(), X1.to_vec()], true).unwrap_err();
        assert!(reason(e).contains("regressor 1 is a linear combination"));
        let e = ols(&Y, &[X1.to_vec(), X1.iter().map(|v| -3.0 * v).collect()], false).unwrap_err();
        assert!(reason(e).contains("regressor 1 is a linear combination of regressors 0..1"));
        let combination: Vec<f64> = X1.iter().zip(&X2).map(|(a, b)| 0.1 + 2.0 * a - b / 3.0).collect();
        let e = ols(&Y, &[X1.to_vec(), X2.to_vec(), combination], true).unwrap_err();
        assert!(reason(e).contains("regressor 2"));
        let e = ols(&Y, &[X1.to_vec(), vec![0.0; 8]], true).unwrap_err();
        assert!(reason(e).contains("regressor 1 is all zeros"));
        // Dummies that sum to one are the intercept.
        let d1 = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let d2 = d1.map(|d| 1.0 - d);
        assert!(ols(&Y, &[d1.to_vec(), d2.to_vec()], true).is_err());
    }

    #[test]
    fn the_collinearity_tolerance_separates_nearly_from_numerically_dependent_columns() {
        let bent = |by: f64| -> Vec<f64> { X1.iter().zip(&X2).map(|(a, b)| a + by * b).collect() };
        // X1 + δ·X2 has ~0.37·δ of its norm outside span(1, X1): 3.7e-7 is kept, 3.7e-14 is refused.
        assert!(ols(&Y, &[X1.to_vec(), bent(1e-6)], true).is_ok());
        assert!(ols(&Y, &[X1.to_vec(), bent(1e-13)], true).is_err());
    }

    #[test]
    fn an_exact_fit_has_no_standard_errors() {
        let y: Vec<f64> = X1.iter().zip(&X2).map(|(a, b)| 0.5 + 2.0 * a - 3.0 * b).collect();
        let e = ols(&y, &[X1.to_vec(), X2.to_vec()], true).unwrap_err();
        assert!(matches!(e, QuantError::Undefined { what: "OLS standard errors", .. }), "{e:?}");
        assert!(matches!(ols(&[0.1; 5], &[], true), Err(QuantError::Undefined { .. })));
        assert!(matches!(ols(&[0.0; 5], &[X1[..5].to_vec()], false), Err(QuantError::Undefined { .. })));
        // A residual far above rounding is a fit.
        let mut y = y;
        y[3] += 1e-9;
        assert!(ols(&y, &[X1.to_vec(), X2.to_vec()], true).is_ok());
    }

    #[test]
    fn intercept_only_is_the_mean_with_its_standard_error() {
        let fit = ols(&Y, &[], true).unwrap();
        let m = mean(&Y);
        let sd = crate::stats::variance(&Y, 1).sqrt();
        assert!((fit.coefficients[0] - m).abs() < 1e-14 * m);
        assert!((fit.std_errors[0] - sd / 8.0_f64.sqrt()).abs() < 1e-14 * sd);
        assert!((fit.residual_std_error - sd).abs() < 1e-14 * sd);
        assert!(fit.r_squared.abs() < 1e-15 && fit.has_constant);
        assert_eq!((fit.observations, fit.degrees_of_freedom), (8, 7));
    }

    #[test]
    fn simple_regression_matches_the_closed_form() {
        let fit = ols(&Y, &[X1.to_vec()], true).unwrap();
        let (mx, my) = (mean(&X1), mean(&Y));
        let sxx: f64 = X1.iter().map(|x| (x - mx).powi(2)).sum();
        let sxy: f64 = X1.iter().zip(&Y).map(|(x, y)| (x - mx) * (y - my)).sum();
        let syy: f64 = Y.iter().map(|y| (y - my).powi(2)).sum();
        let slope = sxy / sxx;
        let alpha = my - slope * mx;
        let ssr = syy - slope * sxy;
        let s2 = ssr / 6.0;
        let want = [alpha, slope];
        let se = [(s2 * (1.0 / 8.0 + mx * mx / sxx)).sqrt(), (s2 / sxx).sqrt()];
        for j in 0..2 {
            assert!((fit.coefficients[j] - want[j]).abs() < 1e-13 * want[j].abs(), "{j}");
            assert!((fit.std_errors[j] - se[j]).abs() < 1e-13 * se[j], "{j}");
            assert_eq!(fit.t_values[j], fit.coefficients[j] / fit.std_errors[j]);
        }
        let r2 = 1.0 - ssr / syy;
        assert!((fit.r_squared - r2).abs() < 1e-14);
        assert!((fit.adj_r_squared - (1.0 - 7.0 / 6.0 * (1.0 - r2))).abs() < 1e-14);
    }

    #[test]
    fn without_a_constant_r_squared_is_uncentred() {
        let fit = ols(&Y, &[X1.to_vec()], false).unwrap();
        let slope = dot(&X1, &Y) / dot(&X1, &X1);
        let ssr: f64 = X1.iter().zip(&Y).map(|(x, y)| (y - slope * x).powi(2)).sum();
        assert!(!fit.has_constant);
        assert!((fit.coefficients[0] - slope).abs() < 1e-14 * slope);
        assert!((fit.r_squared - (1.0 - ssr / dot(&Y, &Y))).abs() < 1e-14);
        assert!((fit.adj_r_squared - (1.0 - 8.0 / 7.0 * (1.0 - fit.r_squared))).abs() < 1e-14);
        // Dummies that sum to one span the constant: statsmodels' implicit constant, a centred R².
        let d1 = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let d2 = d1.map(|d| 1.0 - d);
        let implicit = ols(&Y, &[d1.to_vec(), d2.to_vec(), X1.to_vec()], false).unwrap();
        let explicit = ols(&Y, &[d1.to_vec(), X1.to_vec()], true).unwrap();
        assert!(implicit.has_constant);
        assert!((implicit.r_squared - explicit.r_squared).abs() < 1e-14);
        assert!((implicit.adj_r_squared - explicit.adj_r_squared).abs() < 1e-14);
    }

    #[test]
    fn scaling_by_powers_of_two_is_exact_and_extreme_magnitudes_do_not_overflow() {
        let base = ols(&Y, &[X1.to_vec(), X2.to_vec()], true).unwrap();
        let p = |e: i32| 2.0_f64.powi(e);
        // y × 2^400 and x2 × 2^-500: every coefficient is the base one × 2^400 (× 2^900 for x2), to the bit.
        let big_y: Vec<f64> = Y.iter().map(|v| v * p(400)).collect();
        let tiny_x2: Vec<f64> = X2.iter().map(|v| v * p(-500)).collect();
        let fit = ols(&big_y, &[X1.to_vec(), tiny_x2], true).unwrap();
        assert_eq!(fit.t_values, base.t_values);
        assert_eq!((fit.r_squared, fit.adj_r_squared), (base.r_squared, base.adj_r_squared));
        assert_eq!(fit.coefficients[..2], [base.coefficients[0] * p(400), base.coefficients[1] * p(400)]);
        assert_eq!(fit.coefficients[2], base.coefficients[2] * p(400) * p(500));
        assert_eq!(fit.std_errors[2], base.std_errors[2] * p(400) * p(500));
        assert_eq!(fit.residual_std_error, base.residual_std_error * p(400));
        // Inputs near 1e±300 factor without overflow; a coefficient of ~1e600 is refused, not infinite.
        let huge: Vec<f64> = Y.iter().map(|v| v * 1e300).collect();
        let fit = ols(&huge, &[X1.iter().map(|v| v * 1e300).collect(), X2.to_vec()], true).unwrap();
        assert!((fit.r_squared - base.r_squared).abs() < 1e-14);
        let small: Vec<f64> = X2.iter().map(|v| v * 1e-300).collect();
        assert!(matches!(ols(&huge, &[X1.to_vec(), small], true), Err(QuantError::Undefined { .. })));
    }
}

//! The stationary covariance of an ARMA state vector in Harvey's companion form: the solution P of the
//! discrete Lyapunov equation `P = T P Tᵀ + R Rᵀ` (unit innovation variance).
//!
//! Written densely, `vec(P) = (I − T⊗T)⁻¹ vec(RRᵀ)` is an r²×r² solve, O(r⁶); a SARIMA(2,0,0)(2,1,0)₁₂ has
//! r = 26 and spent seconds of every fit there. General-purpose state-space libraries iterate (doubling) or
//! transform (bilinear/Schur) in O(r³) per step. Here T is a companion matrix, first column the AR
//! coefficients `a`, ones on the superdiagonal, and that structure allows an exact solve that is cheaper
//! still. Entry by entry the equation reads
//!
//! `P_ij = a_i a_j P_00 + a_i P_0,j+1 + a_j P_0,i+1 + R_i R_j + P_i+1,j+1`   (indices ≥ r are 0),
//!
//! so every entry unrolls along its diagonal into sums over the first row `x_k = P_0k`. Written for the
//! first row itself this is r linear equations in the r unknowns x, one r×r LU, O(r³/3); the other
//! entries then follow from the recursion above, bottom-right first, in O(r²). No iteration and no
//! convergence tolerance, and the solve fails (a singular system) exactly where T has a unit root, which is
//! where the stationary covariance stops existing.

use crate::error::{QuantError, Result};
use crate::matrix::{Matrix, lu_solve};

/// Solves `P = T P Tᵀ + R Rᵀ` for the companion T with first column `ar` (zero-padded to r) and
/// `R = rv` (length r, the state dimension).
pub(crate) fn stationary_covariance(ar: &[f64], rv: &[f64]) -> Result<Matrix> {
    let r = rv.len();
    let a = |i: usize| ar.get(i).copied().unwrap_or(0.0);
    // Row j: x_j − Σ_m [a_m a_{j+m} x_0 + a_m x_{j+m+1} + a_{j+m} x_{m+1}] = Σ_m R_m R_{j+m}, m = 0..r−1−j.
    let mut m = Matrix::identity(r);
    let mut c = vec![0.0; r];
    for j in 0..r {
        for k in 0..r - j {
            let (ak, ajk) = (a(k), a(j + k));
            m[(j, 0)] -= ak * ajk;
            if j + k + 1 < r {
                m[(j, j + k + 1)] -= ak;
            }
            if k + 1 < r {
                m[(j, k + 1)] -= ajk;
            }
            c[j] += rv[k] * rv[j + k];
        }
    }
    let x = lu_solve(&m, &c, "stationary covariance")?;
    let first = |k: usize| if k < r { x[k] } else { 0.0 };
    let mut p = Matrix::zeros(r, r);
    for i in (0..r).rev() {
        for j in (i..r).rev() {
            let along = if j + 1 < r { p[(i + 1, j + 1)] } else { 0.0 };
            let v = a(i) * a(j) * x[0] + a(i) * first(j + 1) + a(j) * first(i + 1) + rv[i] * rv[j] + along;
            p[(i, j)] = v;
            p[(j, i)] = v;
        }
    }
    // P_00 = var(y)/σ² = Σψ² ≥ ψ₀² = 1. Anything else is rounding breaking down next to a unit root.
    if !(p[(0, 0)] >= 1.0 - 1e-9) || p.as_slice().iter().any(|v| !v.is_finite()) {
        return Err(QuantError::NotPositiveDefinite { what: "stationary covariance" });
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference the companion solve replaced: `vec(P) = (I − T⊗T)⁻¹ vec(RRᵀ)`.
    fn kronecker_solution(ar: &[f64], rv: &[f64]) -> Matrix {
        let r = rv.len();
        let mut t = Matrix::zeros(r, r);
        for (i, v) in ar.iter().enumerate() {
            t[(i, 0)] = *v;
        }
        for i in 0..r - 1 {
            t[(i, i + 1)] = 1.0;
        }
        let mut big = Matrix::identity(r * r);
        for i in 0..r {
            for j in 0..r {
                for k in 0..r {
                    for l in 0..r {
                        big[(i * r + k, j * r + l)] -= t[(i, j)] * t[(k, l)];
                    }
                }
            }
        }
        let rhs: Vec<f64> = (0..r * r).map(|idx| rv[idx / r] * rv[idx % r]).collect();
        Matrix::from_row_major(r, r, lu_solve(&big, &rhs, "reference").unwrap()).unwrap()
    }

    #[test]
    fn the_companion_solve_matches_the_kronecker_solve() {
        let cases: [(&[f64], &[f64]); 6] = [
            (&[0.5], &[1.0]),
            (&[0.5, -0.3], &[1.0, 0.4]),
            (&[], &[1.0, 0.6, -0.2]),
            (&[0.5, 0.2, 0.1], &[1.0, -0.7, 0.0]),
            // AR(1) x seasonal AR(1) at lag 4 multiplied out, with an MA(1).
            (&[0.6, 0.0, 0.0, 0.5, -0.3], &[1.0, 0.3, 0.0, 0.0, 0.0]),
            (&[-0.95], &[1.0]),
        ];
        for (ar, rv) in cases {
            let got = stationary_covariance(ar, rv).unwrap();
            let want = kronecker_solution(ar, rv);
            let scale = want.as_slice().iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            for (g, w) in got.as_slice().iter().zip(want.as_slice()) {
                assert!((g - w).abs() <= 1e-12 * scale, "{ar:?} {rv:?}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn the_ar1_variance_is_one_over_one_minus_phi_squared() {
        let p = stationary_covariance(&[0.8], &[1.0]).unwrap();
        assert!((p[(0, 0)] - 1.0 / (1.0 - 0.64)).abs() < 1e-13);
    }

    #[test]
    fn a_unit_root_has_no_stationary_covariance() {
        assert!(stationary_covariance(&[1.0], &[1.0]).is_err());
        assert!(stationary_covariance(&[0.5, 0.5], &[1.0, 0.0]).is_err());
    }
}

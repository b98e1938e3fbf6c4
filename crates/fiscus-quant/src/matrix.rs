//! A small dense row-major matrix and the few factorisations the crate needs (Cholesky, LU solve).
//!
//! The crate deliberately carries its own ~200 lines of linear algebra instead of nalgebra: the problems are
//! small (at most a few hundred assets), the solver (clarabel) brings its own sparse algebra, and the build
//! machine is small enough that a heavy generic dependency costs more than it saves.

use crate::error::{QuantError, Result};
use crate::input;

/// Dense matrix stored row by row. For return panels, rows are periods and columns are assets.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// A matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self { rows, cols, data: vec![0.0; rows * cols] }
    }

    /// The identity of size `n`.
    pub fn identity(n: usize) -> Self {
        let mut m = Self::zeros(n, n);
        for i in 0..n {
            m[(i, i)] = 1.0;
        }
        m
    }

    /// Builds a matrix from row-major data; the length must be `rows * cols`.
    pub fn from_row_major(rows: usize, cols: usize, data: Vec<f64>) -> Result<Self> {
        input::same_len("matrix data", rows * cols, data.len())?;
        Ok(Self { rows, cols, data })
    }

    /// Builds a matrix from rows that must all have the same length.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self> {
        let cols = rows.first().map_or(0, Vec::len);
        let mut data = Vec::with_capacity(rows.len() * cols);
        for row in rows {
            input::same_len("matrix row", cols, row.len())?;
            data.extend_from_slice(row);
        }
        Ok(Self { rows: rows.len(), cols, data })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The row-major storage.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// The row-major storage, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// One row as a slice.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// One row as a mutable slice.
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// One column copied out.
    pub fn column(&self, j: usize) -> Vec<f64> {
        (0..self.rows).map(|i| self.data[i * self.cols + j]).collect()
    }

    /// Rows as owned vectors (handy for callers that think in `Vec<Vec<f64>>`).
    pub fn to_rows(&self) -> Vec<Vec<f64>> {
        (0..self.rows).map(|i| self.row(i).to_vec()).collect()
    }

    /// `self · x`.
    pub fn mul_vec(&self, x: &[f64]) -> Vec<f64> {
        (0..self.rows).map(|i| dot(self.row(i), x)).collect()
    }

    /// `xᵀ · self · x` for a square matrix.
    pub fn quad_form(&self, x: &[f64]) -> f64 {
        dot(x, &self.mul_vec(x))
    }

    /// Multiplies every entry by `k`.
    pub fn scaled(&self, k: f64) -> Self {
        Self { rows: self.rows, cols: self.cols, data: self.data.iter().map(|v| v * k).collect() }
    }

    /// Refuses a matrix with NaN/infinity or with no entries.
    pub(crate) fn check_finite(&self, what: &'static str) -> Result<()> {
        input::finite(what, &self.data)
    }

    /// Refuses a matrix that is not square with side `n`, or not symmetric to a relative 1e-10.
    pub(crate) fn check_symmetric(&self, what: &'static str, n: usize) -> Result<()> {
        input::same_len(what, n, self.rows)?;
        input::same_len(what, n, self.cols)?;
        self.check_finite(what)?;
        for i in 0..n {
            for j in 0..i {
                let (a, b) = (self[(i, j)], self[(j, i)]);
                if (a - b).abs() > 1e-10 * (a.abs() + b.abs()).max(f64::MIN_POSITIVE) {
                    return Err(QuantError::InvalidParameter {
                        name: what,
                        reason: format!("not symmetric at ({i}, {j})"),
                    });
                }
            }
        }
        Ok(())
    }
}

impl std::ops::Index<(usize, usize)> for Matrix {
    type Output = f64;
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        &self.data[i * self.cols + j]
    }
}

impl std::ops::IndexMut<(usize, usize)> for Matrix {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut f64 {
        &mut self.data[i * self.cols + j]
    }
}

/// Inner product of two equally long slices, with four running sums so that the compiler can keep several
/// multiply-adds in flight (a single sum is one long dependency chain).
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Lower-triangular Cholesky factor `L` with `A = L Lᵀ` of a symmetric positive definite matrix.
pub fn cholesky(a: &Matrix, what: &'static str) -> Result<Matrix> {
    let n = a.rows();
    a.check_symmetric(what, n)?;
    let mut l = Matrix::zeros(n, n);
    for j in 0..n {
        let lj = &l.row(j)[..j];
        let d = a[(j, j)] - dot(lj, lj);
        // A relative floor: a pivot that is lost in rounding means the matrix is singular for our purposes.
        if d.is_nan() || d <= 1e-14 * a[(j, j)].abs().max(f64::MIN_POSITIVE) {
            return Err(QuantError::NotPositiveDefinite { what });
        }
        let d = d.sqrt();
        l[(j, j)] = d;
        for i in j + 1..n {
            let s = a[(i, j)] - dot(&l.row(i)[..j], &l.row(j)[..j]);
            l[(i, j)] = s / d;
        }
    }
    Ok(l)
}

/// A factor `F` with `A = F Fᵀ` for a symmetric positive SEMI-definite matrix: Cholesky in which a pivot
/// that vanishes (relative to the diagonal) zeroes its column instead of failing. Used to write `wᵀΣw` as a
/// second-order cone when Σ is singular (more assets than observations). Refuses a clearly negative pivot.
pub(crate) fn psd_factor(a: &Matrix, what: &'static str) -> Result<Matrix> {
    let n = a.rows();
    a.check_symmetric(what, n)?;
    let scale = (0..n).map(|i| a[(i, i)].abs()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut l = Matrix::zeros(n, n);
    for j in 0..n {
        let mut d = a[(j, j)];
        for k in 0..j {
            d -= l[(j, k)] * l[(j, k)];
        }
        if d < -1e-10 * scale {
            return Err(QuantError::NotPositiveDefinite { what });
        }
        if d <= 1e-13 * scale {
            continue;
        }
        let d = d.sqrt();
        l[(j, j)] = d;
        for i in j + 1..n {
            let mut s = a[(i, j)];
            for k in 0..j {
                s -= l[(i, k)] * l[(j, k)];
            }
            l[(i, j)] = s / d;
        }
    }
    Ok(l)
}

/// Solves `L Lᵀ x = b` given the Cholesky factor `L`.
pub(crate) fn cholesky_solve(l: &Matrix, b: &[f64]) -> Vec<f64> {
    let n = l.rows();
    let mut y = b.to_vec();
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l[(i, k)] * y[k];
        }
        y[i] = s / l[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in i + 1..n {
            s -= l[(k, i)] * y[k];
        }
        y[i] = s / l[(i, i)];
    }
    y
}

/// Solves a general square system `A x = b` by LU with partial pivoting; refuses a (numerically) singular A.
pub(crate) fn lu_solve(a: &Matrix, b: &[f64], what: &'static str) -> Result<Vec<f64>> {
    let n = a.rows();
    input::same_len(what, n, a.cols())?;
    input::same_len(what, n, b.len())?;
    let mut m = a.clone();
    let mut x = b.to_vec();
    let scale = m.as_slice().iter().fold(0.0_f64, |s, v| s.max(v.abs())).max(f64::MIN_POSITIVE);
    for c in 0..n {
        let p = (c..n).fold(c, |best, r| if m[(r, c)].abs() > m[(best, c)].abs() { r } else { best });
        if m[(p, c)].abs() <= 1e-14 * scale {
            return Err(QuantError::NotPositiveDefinite { what });
        }
        if p != c {
            for k in 0..n {
                let t = m[(c, k)];
                m[(c, k)] = m[(p, k)];
                m[(p, k)] = t;
            }
            x.swap(c, p);
        }
        for r in c + 1..n {
            let f = m[(r, c)] / m[(c, c)];
            if f != 0.0 {
                for k in c..n {
                    m[(r, k)] -= f * m[(c, k)];
                }
                x[r] -= f * x[c];
            }
        }
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..n {
            s -= m[(i, k)] * x[k];
        }
        x[i] = s / m[(i, i)];
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_reproduces_the_matrix_and_solves_it() {
        let a = Matrix::from_rows(&[vec![4.0, 2.0, 0.6], vec![2.0, 5.0, 1.0], vec![0.6, 1.0, 3.0]]).unwrap();
        let l = cholesky(&a, "a").unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let s: f64 = (0..3).map(|k| l[(i, k)] * l[(j, k)]).sum();
                assert!((s - a[(i, j)]).abs() < 1e-14);
            }
        }
        let x = cholesky_solve(&l, &[1.0, 2.0, 3.0]);
        let y = lu_solve(&a, &[1.0, 2.0, 3.0], "a").unwrap();
        for (p, q) in x.iter().zip(&y) {
            assert!((p - q).abs() < 1e-14);
        }
    }

    #[test]
    fn cholesky_refuses_a_singular_matrix() {
        let a = Matrix::from_rows(&[vec![1.0, 1.0], vec![1.0, 1.0]]).unwrap();
        assert!(matches!(cholesky(&a, "a"), Err(QuantError::NotPositiveDefinite { .. })));
        let f = psd_factor(&a, "a").unwrap();
        assert!((f[(1, 0)] - 1.0).abs() < 1e-15 && f[(1, 1)] == 0.0);
    }
}

//! How the active-set route reads the quadratic term: a caller's matrix as it is, or the rows of a sample
//! covariance computed as they are needed ([`crate::covariance::SampleRows`]). Both give the same bits for
//! the same matrix, so the route's answer does not depend on which one it was handed.

use std::borrow::Cow;

use crate::covariance::SampleRows;
use crate::matrix::Matrix;

pub(crate) trait Hessian {
    fn size(&self) -> usize;
    /// Entry `(i, i)`.
    fn diag(&self, i: usize) -> f64;
    /// Entry `(i, j)`.
    fn entry(&self, i: usize, j: usize) -> f64;
    /// Row `i`.
    fn row(&self, i: usize) -> &[f64];
    /// `H x`.
    fn mul_vec(&self, x: &[f64]) -> Vec<f64>;
    /// `xᵀ H x`.
    fn quad_form(&self, x: &[f64]) -> f64;
    /// Whether [`Hessian::prefetch`] does anything (so that callers can skip preparing its hints).
    fn computes_rows(&self) -> bool {
        false
    }
    /// A hint: row `rows[0]` is about to be read, and the others (likeliest first) may be read later.
    fn prefetch(&self, _rows: &[usize]) {}
    /// The whole matrix, for the routes that need it.
    fn full(&self) -> Cow<'_, Matrix>;
}

impl Hessian for Matrix {
    fn size(&self) -> usize {
        self.rows()
    }
    fn diag(&self, i: usize) -> f64 {
        self[(i, i)]
    }
    fn entry(&self, i: usize, j: usize) -> f64 {
        self[(i, j)]
    }
    fn row(&self, i: usize) -> &[f64] {
        Matrix::row(self, i)
    }
    fn mul_vec(&self, x: &[f64]) -> Vec<f64> {
        Matrix::mul_vec(self, x)
    }
    fn quad_form(&self, x: &[f64]) -> f64 {
        Matrix::quad_form(self, x)
    }
    fn full(&self) -> Cow<'_, Matrix> {
        Cow::Borrowed(self)
    }
}

/// A sample covariance is symmetric to the bit, so entry `(i, j)` is read from row `i`.
impl Hessian for SampleRows<'_> {
    fn size(&self) -> usize {
        SampleRows::size(self)
    }
    fn diag(&self, i: usize) -> f64 {
        SampleRows::diag(self, i)
    }
    fn entry(&self, i: usize, j: usize) -> f64 {
        SampleRows::row(self, i)[j]
    }
    fn row(&self, i: usize) -> &[f64] {
        SampleRows::row(self, i)
    }
    fn mul_vec(&self, x: &[f64]) -> Vec<f64> {
        SampleRows::mul_vec(self, x)
    }
    fn quad_form(&self, x: &[f64]) -> f64 {
        SampleRows::quad_form(self, x)
    }
    fn computes_rows(&self) -> bool {
        true
    }
    fn prefetch(&self, rows: &[usize]) {
        SampleRows::prefetch(self, rows)
    }
    fn full(&self) -> Cow<'_, Matrix> {
        SampleRows::full(self)
    }
}

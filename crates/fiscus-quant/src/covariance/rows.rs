//! Rows of an annualised sample covariance computed only when asked for. The long-only optimisers (the
//! active-set route) read Σ through the rows of the assets they hold or consider, and long-only optimal
//! portfolios hold few assets: for 500 assets the minimum-variance portfolio of the benchmark holds 64,
//! so most of the 125,250 distinct entries of Σ are never read. Rows are computed a few at a time, with the
//! same tiles and in the same order as [`super::cross_product`], so every entry is the bit the full matrix
//! holds, and the optimisers' answers are unchanged to the bit.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};

use super::cross_product::{BLOCK_ROWS, Pair, shifted_cross_product, tile};
use crate::matrix::{Matrix, dot};

/// Rows computed together when a row is missing (the requested row and the caller's next candidates).
const BATCH: usize = 8;

/// The entries a largest variance (sum of squared deviations) may reach for every entry of Σ, and every
/// partial sum leading to one, to be certainly finite: |xᵢxⱼ| ≤ (xᵢ² + xⱼ²)/2, so no partial sum of an
/// off-diagonal entry exceeds the larger of the two diagonal sums (up to rounding, far below this margin).
const SAFE: f64 = 1e300;

/// `((X − 1x̄ᵀ)ᵀ(X − 1x̄ᵀ) / denom) · scale`, row by row on demand.
pub(crate) struct SampleRows<'a> {
    x: &'a Matrix,
    means: Vec<f64>,
    denom: f64,
    scale: f64,
    diag: Vec<f64>,
    /// The right-hand panels (pairs of centred columns) of every block of rows, packed once.
    right: Vec<Pair>,
    rows: Vec<OnceCell<Vec<f64>>>,
    computed: Cell<usize>,
}

impl<'a> SampleRows<'a> {
    /// `None` when some variance is large enough that an entry of Σ might overflow; the caller then builds
    /// the whole matrix, whose checks report it. `x` must be finite with more than `ddof` rows.
    pub(crate) fn new(x: &'a Matrix, ddof: usize, scale: f64) -> Option<Self> {
        let (t, n) = (x.rows(), x.cols());
        let means = super::column_means(x);
        let denom = (t - ddof) as f64;
        // The diagonal, accumulated exactly as the tiles accumulate it.
        let mut raw = vec![0.0; n];
        let mut r = 0;
        while r + 4 <= t {
            let (r0, r1, r2, r3) = (x.row(r), x.row(r + 1), x.row(r + 2), x.row(r + 3));
            for (i, d) in raw.iter_mut().enumerate() {
                let (v0, v1, v2, v3) = (r0[i] - means[i], r1[i] - means[i], r2[i] - means[i], r3[i] - means[i]);
                *d += v0 * v0 + v1 * v1 + v2 * v2 + v3 * v3;
            }
            r += 4;
        }
        for r in r..t {
            for ((d, v), m) in raw.iter_mut().zip(x.row(r)).zip(&means) {
                let v = v - m;
                *d += v * v;
            }
        }
        let diag: Vec<f64> = raw.iter().map(|d| d / denom * scale).collect();
        let safe = |v: &f64| v.is_finite() && *v <= SAFE;
        if !(raw.iter().all(safe) && diag.iter().all(safe)) {
            return None;
        }
        let panels = n.div_ceil(2);
        let mut right = vec![Pair::default(); t * panels];
        let mut r0 = 0;
        while r0 < t {
            let kc = BLOCK_ROWS.min(t - r0);
            let block = &mut right[r0 * panels..(r0 + kc) * panels];
            for (p, panel) in block.chunks_exact_mut(kc).enumerate() {
                let (j0, j1) = (2 * p, 2 * p + 1);
                for (r, slot) in panel.iter_mut().enumerate() {
                    let row = x.row(r0 + r);
                    let v1 = if j1 < n { row[j1] - means[j1] } else { 0.0 };
                    *slot = Pair([row[j0] - means[j0], v1]);
                }
            }
            r0 += kc;
        }
        Some(Self {
            x,
            means,
            denom,
            scale,
            diag,
            right,
            rows: (0..n).map(|_| OnceCell::new()).collect(),
            computed: Cell::new(0),
        })
    }

    pub(crate) fn size(&self) -> usize {
        self.diag.len()
    }

    pub(crate) fn diag(&self, i: usize) -> f64 {
        self.diag[i]
    }

    /// Row `i` (computed now if it was not yet).
    pub(crate) fn row(&self, i: usize) -> &[f64] {
        if self.rows[i].get().is_none() {
            self.compute(&[i]);
        }
        self.rows[i].get().map_or(&[], Vec::as_slice)
    }

    /// Makes sure row `rows[0]` exists; when it has to be computed, the next missing rows of `rows` (the
    /// likeliest to be read next, in order) are computed in the same pass, up to [`BATCH`] rows in all.
    pub(crate) fn prefetch(&self, rows: &[usize]) {
        match rows.first() {
            Some(&i) if self.rows[i].get().is_none() => {}
            _ => return,
        }
        let mut missing: Vec<usize> = Vec::with_capacity(BATCH);
        for &i in rows {
            if missing.len() == BATCH {
                break;
            }
            if self.rows[i].get().is_none() && !missing.contains(&i) {
                missing.push(i);
            }
        }
        self.compute(&missing);
    }

    /// Rows computed so far.
    #[cfg(test)]
    pub(crate) fn computed(&self) -> usize {
        self.computed.get()
    }

    /// `Σx` from the rows of the non-zero entries of `x`, equal to the bit to [`Matrix::mul_vec`] on the
    /// whole matrix: each entry is [`dot`]'s sum (four running sums by index modulo four, then the tail)
    /// without its zero terms, and a zero term cannot change a sum that is never −0.
    pub(crate) fn mul_vec(&self, x: &[f64]) -> Vec<f64> {
        let n = self.size();
        let head = n / 4 * 4;
        let support: Vec<usize> = (0..n).filter(|&j| x[j] != 0.0).collect();
        for k in 0..support.len() {
            self.prefetch(&support[k..]);
        }
        let rows: Vec<&[f64]> = support.iter().map(|&j| self.row(j)).collect();
        (0..n)
            .map(|i| {
                let mut acc = [0.0; 4];
                for (&j, row) in support.iter().zip(&rows).take_while(|(j, _)| **j < head) {
                    acc[j % 4] += row[i] * x[j];
                }
                let tail: f64 =
                    support.iter().zip(&rows).skip_while(|(j, _)| **j < head).map(|(&j, row)| row[i] * x[j]).sum();
                (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
            })
            .collect()
    }

    /// `xᵀΣx`, equal to the bit to [`Matrix::quad_form`] on the whole matrix.
    pub(crate) fn quad_form(&self, x: &[f64]) -> f64 {
        dot(x, &self.mul_vec(x))
    }

    /// The whole matrix, exactly as `sample` and the annualisation compute it.
    pub(crate) fn full(&self) -> Cow<'_, Matrix> {
        let mut m = shifted_cross_product(self.x, Some(&self.means), self.denom);
        m.as_mut_slice().iter_mut().for_each(|v| *v *= self.scale);
        Cow::Owned(m)
    }

    /// Rows `which` against every column: the left panels are these columns (duplicated into both lanes),
    /// the right panels are all columns, and each entry is accumulated block by block in the tiles' order,
    /// then divided and scaled as the full matrix's.
    fn compute(&self, which: &[usize]) {
        let (t, n) = (self.x.rows(), self.size());
        let panels = n.div_ceil(2);
        let left_panels = which.len().div_ceil(4);
        // Columns whose rows exist already hold these rows' entries too (Σ is symmetric to the bit): a pair
        // of such columns is copied rather than computed.
        let known = |j: usize| j >= n || self.rows[j].get().is_some();
        let copied: Vec<bool> = (0..panels).map(|p| known(2 * p) && known(2 * p + 1)).collect();
        let mut out = vec![[Pair::default(); 4]; left_panels * panels];
        let mut left = vec![Pair::default(); BLOCK_ROWS.min(t) * 4 * left_panels];
        let mut r0 = 0;
        while r0 < t {
            let kc = BLOCK_ROWS.min(t - r0);
            for (p, panel) in left.chunks_exact_mut(4 * kc).take(left_panels).enumerate() {
                for (r, slots) in panel.chunks_exact_mut(4).enumerate() {
                    let row = self.x.row(r0 + r);
                    for (k, slot) in slots.iter_mut().enumerate() {
                        let v = which.get(4 * p + k).map_or(0.0, |&i| row[i] - self.means[i]);
                        *slot = Pair([v, v]);
                    }
                }
            }
            let block = &self.right[r0 * panels..(r0 + kc) * panels];
            for (p, a) in left.chunks_exact(4 * kc).take(left_panels).enumerate() {
                for ((b, acc), copy) in block.chunks_exact(kc).zip(&mut out[p * panels..(p + 1) * panels]).zip(&copied)
                {
                    if !copy {
                        tile(a, b, kc, acc);
                    }
                }
            }
            r0 += kc;
        }
        for (k, &i) in which.iter().enumerate() {
            let (p, lane) = (k / 4, k % 4);
            let row: Vec<f64> = (0..n)
                .map(|j| match self.rows[j].get() {
                    Some(other) if copied[j / 2] => other[i],
                    _ => out[p * panels + j / 2][lane].0[j % 2] / self.denom * self.scale,
                })
                .collect();
            let _ = self.rows[i].set(row);
        }
        self.computed.set(self.computed.get() + which.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_equal_the_full_annualised_matrix_bit_for_bit() {
        let mut s = 5_u64;
        for (rows, cols) in [(3, 1), (7, 5), (259, 13), (600, 37)] {
            let data = (0..rows * cols)
                .map(|_| {
                    s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.45) * 0.03
                })
                .collect();
            let x = Matrix::from_row_major(rows, cols, data).unwrap();
            let mut full = crate::covariance::sample(&x, 1).unwrap();
            full.as_mut_slice().iter_mut().for_each(|v| *v *= 252.0);
            let lazy = SampleRows::new(&x, 1, 252.0).unwrap();
            assert_eq!(lazy.full().as_slice(), full.as_slice());
            lazy.prefetch(&[cols - 1, 0]);
            assert_eq!(lazy.computed(), 2.min(cols));
            lazy.prefetch(&[0, cols - 1]);
            assert_eq!(lazy.computed(), 2.min(cols), "rows[0] exists: nothing to do");
            for i in (0..cols).rev() {
                assert_eq!(lazy.diag(i).to_bits(), full[(i, i)].to_bits());
                let bits = |r: &[f64]| r.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(lazy.row(i)), bits(full.row(i)), "{rows}x{cols} row {i}");
            }
            assert_eq!(lazy.computed(), cols);
            // Products with a sparse vector, including zeros in every position modulo four and in the tail.
            let w: Vec<f64> = (0..cols).map(|j| if j % 3 == 1 { 0.0 } else { 1.0 / (j + 1) as f64 }).collect();
            let want = full.mul_vec(&w);
            for (a, b) in lazy.mul_vec(&w).iter().zip(&want) {
                assert_eq!(a.to_bits(), b.to_bits());
            }
            assert_eq!(lazy.quad_form(&w).to_bits(), full.quad_form(&w).to_bits());
        }
        // A variance that could overflow an entry sends the caller to the full matrix.
        let huge = Matrix::from_rows(&[vec![1e200, 1.0], vec![-1e200, 2.0], vec![0.0, 3.0]]).unwrap();
        assert!(SampleRows::new(&huge, 1, 252.0).is_none());
    }
}

//! `XᵀX` for a return panel, the kernel of every covariance estimator here and most of the time an
//! optimisation from returns takes (for 500 assets and 1,260 days it is 158 million products).
//!
//! Every entry is accumulated in exactly the order of the straightforward loop: rows in groups of four,
//! `c += ((x₀ᵢx₀ⱼ + x₁ᵢx₁ⱼ) + x₂ᵢx₂ⱼ) + x₃ᵢx₃ⱼ`, then the leftover rows one at a time, so the result is
//! the same to the bit whatever the blocking; only the memory traffic changes. The straightforward loop
//! sweeps the whole n×n accumulator once per four rows, which for a few hundred assets does not fit in
//! the first-level cache; here the rows are taken in blocks of [`BLOCK_ROWS`], repacked column panel by
//! column panel, and each 4×2 tile of the result is accumulated in registers over the whole block.
//! Centring (subtracting each column's mean) happens while packing, with the same subtraction
//! `x − mean` a separate centred copy would hold.

use crate::matrix::Matrix;

/// Rows per block: a multiple of four (so blocks never split a group of four rows), and small enough that
/// the packed panels one tile reads stay in the first-level cache.
pub(super) const BLOCK_ROWS: usize = 256;

/// Two lanes, aligned so that the compiler can use whole-register loads and packed arithmetic.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(16))]
pub(super) struct Pair(pub(super) [f64; 2]);

#[inline(always)]
fn mul(a: Pair, b: Pair) -> Pair {
    Pair([a.0[0] * b.0[0], a.0[1] * b.0[1]])
}

#[inline(always)]
fn add(a: Pair, b: Pair) -> Pair {
    Pair([a.0[0] + b.0[0], a.0[1] + b.0[1]])
}

/// `(X − 1·shiftᵀ)ᵀ(X − 1·shiftᵀ) / denom`, symmetric (upper triangle accumulated, then mirrored).
pub(crate) fn shifted_cross_product(x: &Matrix, shift: Option<&[f64]>, denom: f64) -> Matrix {
    let (rows, n) = (x.rows(), x.cols());
    let mut c = Matrix::zeros(n, n);
    if n == 0 {
        return c;
    }
    // Column panels: four columns for the left factor (each value duplicated into both lanes, so that a
    // broadcast is a plain load) and two for the right factor.
    let left_panels = n.div_ceil(4);
    let right_panels = n.div_ceil(2);
    let block = BLOCK_ROWS.min(rows);
    let mut left: Vec<Pair> = vec![Pair::default(); block * 4 * left_panels];
    let mut right: Vec<Pair> = vec![Pair::default(); block * 2 * left_panels];
    let mut r0 = 0;
    while r0 < rows {
        let kc = block.min(rows - r0);
        pack(x, shift, r0, kc, &mut left, &mut right);
        for pi in 0..left_panels {
            let a = &left[pi * kc * 4..(pi + 1) * kc * 4];
            // Right panels whose columns reach the diagonal: 2·pj + 1 ≥ 4·pi.
            for pj in (2 * pi)..right_panels {
                let b = &right[pj * kc..(pj + 1) * kc];
                let mut acc = [Pair::default(); 4];
                load_tile(&c, pi, pj, &mut acc);
                tile(a, b, kc, &mut acc);
                store_tile(&mut c, pi, pj, &acc);
            }
        }
        r0 += kc;
    }
    // Divide the upper triangle row by row (contiguous, so vectorised), then mirror it in square blocks so
    // that the column writes stay within a few cache lines.
    for i in 0..n {
        for v in &mut c.row_mut(i)[i..] {
            *v /= denom;
        }
    }
    const MIRROR: usize = 16;
    for bi in (0..n).step_by(MIRROR) {
        for bj in (bi..n).step_by(MIRROR) {
            for i in bi..(bi + MIRROR).min(n) {
                for j in bj.max(i + 1)..(bj + MIRROR).min(n) {
                    c[(j, i)] = c[(i, j)];
                }
            }
        }
    }
    c
}

/// Repacks rows `r0..r0 + kc`, less `shift`, into the left and right panels; columns past `n` are zero.
/// Without a shift nothing is subtracted (`x − 0` would be `x` anyway, bit for bit). Panel by panel, so
/// that the writes are sequential (the reads of one row's four columns are what strides).
fn pack(x: &Matrix, shift: Option<&[f64]>, r0: usize, kc: usize, left: &mut [Pair], right: &mut [Pair]) {
    let n = x.cols();
    let data = &x.as_slice()[r0 * n..(r0 + kc) * n];
    for (p, (l, rr)) in
        left.chunks_exact_mut(4 * kc).zip(right.chunks_exact_mut(2 * kc)).take(n.div_ceil(4)).enumerate()
    {
        let j0 = 4 * p;
        let width = (n - j0).min(4);
        let m: [f64; 4] = std::array::from_fn(|k| match shift {
            Some(m) if k < width => m[j0 + k],
            _ => 0.0,
        });
        let (r_lo, r_hi) = rr.split_at_mut(kc);
        for (((row, l4), lo), hi) in data.chunks_exact(n).zip(l.chunks_exact_mut(4)).zip(r_lo).zip(r_hi) {
            let v: [f64; 4] = if width == 4 {
                let c = &row[j0..j0 + 4];
                [c[0] - m[0], c[1] - m[1], c[2] - m[2], c[3] - m[3]]
            } else {
                std::array::from_fn(|k| if k < width { row[j0 + k] - m[k] } else { 0.0 })
            };
            l4.copy_from_slice(&[Pair([v[0], v[0]]), Pair([v[1], v[1]]), Pair([v[2], v[2]]), Pair([v[3], v[3]])]);
            *lo = Pair([v[0], v[1]]);
            *hi = Pair([v[2], v[3]]);
        }
    }
}

fn load_tile(c: &Matrix, pi: usize, pj: usize, acc: &mut [Pair; 4]) {
    let n = c.cols();
    for (k, a) in acc.iter_mut().enumerate() {
        let i = 4 * pi + k;
        if i < n {
            for l in 0..2 {
                let j = 2 * pj + l;
                if j < n {
                    a.0[l] = c[(i, j)];
                }
            }
        }
    }
}

fn store_tile(c: &mut Matrix, pi: usize, pj: usize, acc: &[Pair; 4]) {
    let n = c.cols();
    for (k, a) in acc.iter().enumerate() {
        let i = 4 * pi + k;
        if i < n {
            for l in 0..2 {
                let j = 2 * pj + l;
                if j < n {
                    c[(i, j)] = a.0[l];
                }
            }
        }
    }
}

/// One 4×2 tile over `kc` rows: `a` holds four duplicated left values per row, `b` one right pair per row.
/// Kept out of line so that its few live values get registers of their own.
#[inline(never)]
pub(super) fn tile(a: &[Pair], b: &[Pair], kc: usize, acc: &mut [Pair; 4]) {
    let mut t = *acc;
    let groups = kc / 4;
    for (a4, b4) in a.chunks_exact(16).zip(b.chunks_exact(4)).take(groups) {
        for (k, tk) in t.iter_mut().enumerate() {
            let s =
                add(add(add(mul(a4[k], b4[0]), mul(a4[4 + k], b4[1])), mul(a4[8 + k], b4[2])), mul(a4[12 + k], b4[3]));
            *tk = add(*tk, s);
        }
    }
    for r in groups * 4..kc {
        for (k, tk) in t.iter_mut().enumerate() {
            *tk = add(*tk, mul(a[r * 4 + k], b[r]));
        }
    }
    *acc = t;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward loop this module replaces, kept as the reference for bit-for-bit equality.
    fn reference(x: &Matrix, denom: f64) -> Matrix {
        let n = x.cols();
        let mut c = Matrix::zeros(n, n);
        let rows = x.rows();
        let mut r = 0;
        while r + 4 <= rows {
            let (r0, r1, r2, r3) = (x.row(r), x.row(r + 1), x.row(r + 2), x.row(r + 3));
            for i in 0..n {
                let (a0, a1, a2, a3) = (r0[i], r1[i], r2[i], r3[i]);
                let ci = &mut c.row_mut(i)[i..];
                let cols = r0[i..].iter().zip(&r1[i..]).zip(r2[i..].iter().zip(&r3[i..]));
                for (cij, ((b0, b1), (b2, b3))) in ci.iter_mut().zip(cols) {
                    *cij += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3;
                }
            }
            r += 4;
        }
        for r in r..rows {
            let row = x.row(r);
            for i in 0..n {
                let xi = row[i];
                for (cij, xj) in c.row_mut(i)[i..].iter_mut().zip(&row[i..]) {
                    *cij += xi * xj;
                }
            }
        }
        for i in 0..n {
            for j in i..n {
                let v = c[(i, j)] / denom;
                c[(i, j)] = v;
                c[(j, i)] = v;
            }
        }
        c
    }

    fn panel(rows: usize, cols: usize, seed: u64) -> Matrix {
        let mut s = seed;
        let data = (0..rows * cols)
            .map(|_| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.45) * 0.03
            })
            .collect();
        Matrix::from_row_major(rows, cols, data).unwrap()
    }

    #[test]
    fn blocked_products_equal_the_plain_loop_bit_for_bit() {
        // Shapes around every boundary: panel widths (4 and 2), groups of four rows, the row block.
        for (rows, cols) in [
            (1, 1),
            (2, 3),
            (3, 5),
            (4, 4),
            (5, 7),
            (9, 2),
            (255, 9),
            (256, 10),
            (257, 11),
            (259, 13),
            (515, 37),
            (1263, 21),
        ] {
            let x = panel(rows, cols, (rows * 31 + cols) as u64);
            let means: Vec<f64> = (0..cols).map(|j| (0..rows).map(|r| x[(r, j)]).sum::<f64>() / rows as f64).collect();
            let mut centred = x.clone();
            for r in 0..rows {
                for (v, m) in centred.row_mut(r).iter_mut().zip(&means) {
                    *v -= m;
                }
            }
            let bits = |m: &Matrix| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            let want = reference(&centred, 7.0);
            assert_eq!(bits(&shifted_cross_product(&x, Some(&means), 7.0)), bits(&want), "{rows}x{cols}");
            assert_eq!(bits(&shifted_cross_product(&centred, None, 7.0)), bits(&want), "{rows}x{cols}");
        }
    }
}

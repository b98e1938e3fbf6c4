//! A primal active-set solver for the one problem shape that dominates portfolio work:
//! `min ½xᵀHx  s.t.  aᵀx = b,  l ≤ x ≤ u` with H positive definite (Nocedal & Wright, algorithm 16.3).
//!
//! Long-only optimal portfolios hold few assets, so starting from a vertex and freeing one variable at a time
//! keeps every linear system small; the Cholesky factor of `H_FF` grows by one row per freed variable
//! (O(k²)) and is rebuilt only when a variable returns to a bound. The answer is exact to rounding, which is
//! tighter than an interior-point method's 1e-8 gap. It returns `None` whenever it cannot vouch for its
//! answer (singular H, cycling, a final KKT check that fails), and the caller then uses the conic solver.

use super::hessian::Hessian;
use crate::budget::Meter;
use crate::matrix::dot;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    AtLower,
    AtUpper,
}

/// Solves the problem from a feasible `x0`, with `start_free` in the initial working set's free part even if
/// it sits on a bound (a vertex start has one such variable); `None` means "use the general solver instead",
/// which is also the answer once `meter`'s clock has run out (the caller then reports the budget).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve<H: Hessian + ?Sized>(
    h: &H,
    a: &[f64],
    b: f64,
    lower: &[f64],
    upper: &[f64],
    mut x: Vec<f64>,
    start_free: usize,
    meter: &Meter,
) -> Option<Vec<f64>> {
    let n = x.len();
    let scale_h = (0..n).map(|i| h.diag(i).abs()).fold(0.0, f64::max);
    if !(scale_h > 0.0) {
        return None;
    }
    let mut state: Vec<State> = (0..n)
        .map(|i| {
            if i == start_free {
                State::Free
            } else if x[i] <= lower[i] {
                State::AtLower
            } else if x[i] >= upper[i] {
                State::AtUpper
            } else {
                State::Free
            }
        })
        .collect();
    let mut free: Vec<usize> = (0..n).filter(|&i| state[i] == State::Free).collect();
    // The rows read first: the free variables' (for the factor) and the non-zero ones' (for the gradient).
    let hints = h.computes_rows();
    if hints {
        let mut first: Vec<usize> = free.clone();
        first.extend((0..n).filter(|&i| x[i] != 0.0 && state[i] != State::Free));
        for k in 0..first.len() {
            h.prefetch(&first[k..]);
        }
    }
    let mut chol = Cholesky::build(h, &free)?;
    let mut candidates: Vec<(f64, usize)> = Vec::new();
    let mut g = vec![0.0; n];
    // After a full step the point IS the minimiser on the working set; the next step computed there is
    // rounding noise, so it is not taken and the multipliers are examined instead.
    let mut at_subproblem_minimum = false;
    for _ in 0..(20 * n + 100) {
        meter.check_time().ok()?;
        // Gradient Hx from the non-zero entries of x, reading rows of the symmetric H (contiguous memory).
        g.iter_mut().for_each(|v| *v = 0.0);
        for (j, &xj) in x.iter().enumerate() {
            if xj != 0.0 {
                for (gi, hji) in g.iter_mut().zip(h.row(j)) {
                    *gi += hji * xj;
                }
            }
        }
        if free.is_empty() {
            return None;
        }
        let g_f: Vec<f64> = free.iter().map(|&i| g[i]).collect();
        let a_f: Vec<f64> = free.iter().map(|&i| a[i]).collect();
        let (u, v) = chol.solve2(&g_f, &a_f);
        let av = dot(&a_f, &v);
        if !(av.abs() > 0.0) {
            return None;
        }
        let nu = dot(&a_f, &u) / av;
        let p: Vec<f64> = v.iter().zip(&u).map(|(vi, ui)| nu * vi - ui).collect();
        let x_scale = free.iter().map(|&i| x[i].abs()).fold(1e-300, f64::max);
        if at_subproblem_minimum || p.iter().all(|pi| pi.abs() <= 1e-13 * x_scale) {
            at_subproblem_minimum = false;
            // Stationary on the working set: free the bound with the most negative multiplier, if any.
            let g_scale = g.iter().fold(0.0_f64, |m, v| m.max(v.abs())).max(nu.abs() * 1e-300);
            let threshold = 1e-12 * g_scale.max(f64::MIN_POSITIVE);
            let mut worst = (threshold, None);
            candidates.clear();
            for j in 0..n {
                let lambda = g[j] - nu * a[j];
                let violation = match state[j] {
                    State::AtLower => -lambda,
                    State::AtUpper => lambda,
                    State::Free => continue,
                };
                if violation > worst.0 {
                    worst = (violation, Some(j));
                }
                if hints && violation > threshold {
                    candidates.push((violation, j));
                }
            }
            match worst.1 {
                None => return kkt_holds(h, a, b, lower, upper, &x).then_some(x),
                Some(j) => {
                    // The variable freed now, then the likeliest next ones (by violation), whose rows a
                    // matrix computed on demand can produce together with this one's.
                    if hints {
                        candidates.sort_unstable_by(|p, q| q.0.total_cmp(&p.0));
                        let next: Vec<usize> =
                            std::iter::once(j).chain(candidates.iter().map(|c| c.1).filter(|&c| c != j)).collect();
                        h.prefetch(&next);
                    }
                    state[j] = State::Free;
                    free.push(j);
                    chol.append(h, &free)?;
                }
            }
            continue;
        }
        // Longest feasible step along p, stopping at the first bound hit.
        let mut alpha = 1.0;
        let mut blocking = None;
        for (k, &i) in free.iter().enumerate() {
            let limit = if p[k] < 0.0 {
                (lower[i] - x[i]) / p[k]
            } else if p[k] > 0.0 {
                (upper[i] - x[i]) / p[k]
            } else {
                continue;
            };
            if limit < alpha {
                alpha = limit.max(0.0);
                blocking = Some((k, i, p[k] < 0.0));
            }
        }
        for (k, &i) in free.iter().enumerate() {
            x[i] += alpha * p[k];
        }
        at_subproblem_minimum = blocking.is_none();
        if let Some((k, i, to_lower)) = blocking {
            x[i] = if to_lower { lower[i] } else { upper[i] };
            state[i] = if to_lower { State::AtLower } else { State::AtUpper };
            free.remove(k);
            chol.rebuild(h, &free)?;
        }
    }
    None
}

/// Checks feasibility and the sign of every multiplier once more, from scratch.
fn kkt_holds<H: Hessian + ?Sized>(h: &H, a: &[f64], b: f64, lower: &[f64], upper: &[f64], x: &[f64]) -> bool {
    let n = x.len();
    if (dot(a, x) - b).abs() > 1e-10 * (1.0 + b.abs()) {
        return false;
    }
    if (0..n).any(|i| x[i] < lower[i] - 1e-12 || x[i] > upper[i] + 1e-12 || !x[i].is_finite()) {
        return false;
    }
    let g = h.mul_vec(x);
    let free: Vec<usize> = (0..n).filter(|&i| x[i] > lower[i] && x[i] < upper[i]).collect();
    let Some(&first) = free.first() else {
        return false;
    };
    if a[first] == 0.0 {
        return false;
    }
    let nu = g[first] / a[first];
    let tol = 1e-9 * g.iter().fold(0.0_f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    (0..n).all(|j| {
        let lambda = g[j] - nu * a[j];
        if free.contains(&j) {
            lambda.abs() <= tol
        } else if x[j] <= lower[j] {
            lambda >= -tol
        } else {
            lambda <= tol
        }
    })
}

/// Lower-triangular Cholesky factor of `H_FF`, stored densely in the order of the free list.
struct Cholesky {
    k: usize,
    l: Vec<f64>,
    cap: usize,
}

impl Cholesky {
    fn build<H: Hessian + ?Sized>(h: &H, free: &[usize]) -> Option<Self> {
        let cap = h.size();
        let mut c = Self { k: 0, l: vec![0.0; cap * cap], cap };
        c.rebuild(h, free)?;
        Some(c)
    }

    /// Factors `H_FF` afresh in the storage already allocated (every entry read is written first).
    fn rebuild<H: Hessian + ?Sized>(&mut self, h: &H, free: &[usize]) -> Option<()> {
        self.k = 0;
        for m in 1..=free.len() {
            self.append(h, &free[..m])?;
        }
        Some(())
    }

    /// Adds the last index of `free` as a new row: `L l = h_F,j`, `d = √(h_jj − lᵀl)`.
    fn append<H: Hessian + ?Sized>(&mut self, h: &H, free: &[usize]) -> Option<()> {
        let k = self.k;
        let j = free[k];
        let cap = self.cap;
        for (r, &i) in free.iter().enumerate().take(k) {
            let mut s = h.entry(i, j);
            for c in 0..r {
                s -= self.l[r * cap + c] * self.l[k * cap + c];
            }
            self.l[k * cap + r] = s / self.l[r * cap + r];
        }
        let d = h.diag(j) - (0..k).map(|c| self.l[k * cap + c].powi(2)).sum::<f64>();
        if !(d > 1e-14 * h.diag(j).abs()) {
            return None;
        }
        self.l[k * cap + k] = d.sqrt();
        self.k += 1;
        Some(())
    }

    /// Solves `L Lᵀ y = b` for two right-hand sides at once. Each sum is formed as a lone solve would form
    /// it (`Iterator::sum`: the same terms in the same order, starting from −0), but the two independent
    /// chains of additions interleave, which keeps the processor twice as busy.
    fn solve2(&self, b1: &[f64], b2: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (k, cap) = (self.k, self.cap);
        let (mut y1, mut y2) = (b1.to_vec(), b2.to_vec());
        for i in 0..k {
            let row = &self.l[i * cap..i * cap + i];
            let (s1, s2) = row
                .iter()
                .zip(&y1[..i])
                .zip(&y2[..i])
                .fold((-0.0, -0.0), |(s1, s2), ((l, p), q)| (s1 + l * p, s2 + l * q));
            let d = self.l[i * cap + i];
            y1[i] = (y1[i] - s1) / d;
            y2[i] = (y2[i] - s2) / d;
        }
        for i in (0..k).rev() {
            let (mut s1, mut s2) = (-0.0, -0.0);
            for r in i + 1..k {
                let l = self.l[r * cap + i];
                s1 += l * y1[r];
                s2 += l * y2[r];
            }
            let d = self.l[i * cap + i];
            y1[i] = (y1[i] - s1) / d;
            y2[i] = (y2[i] - s2) / d;
        }
        (y1, y2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Matrix;

    /// One right-hand side at a time, as the solver used to: the reference for [`Cholesky::solve2`].
    fn solve_one(c: &Cholesky, b: &[f64]) -> Vec<f64> {
        let (k, cap) = (c.k, c.cap);
        let mut y = b.to_vec();
        for i in 0..k {
            let s = y[i] - (0..i).map(|j| c.l[i * cap + j] * y[j]).sum::<f64>();
            y[i] = s / c.l[i * cap + i];
        }
        for i in (0..k).rev() {
            let s = y[i] - (i + 1..k).map(|r| c.l[r * cap + i] * y[r]).sum::<f64>();
            y[i] = s / c.l[i * cap + i];
        }
        y
    }

    #[test]
    fn two_interleaved_solves_equal_two_lone_solves_bit_for_bit() {
        let n = 23;
        let mut h = Matrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                h[(i, j)] = 0.3 / (1.0 + (i as f64 - j as f64).abs()) + if i == j { 1.0 + i as f64 * 0.1 } else { 0.0 };
            }
        }
        let free: Vec<usize> = (0..n).filter(|i| i % 3 != 1).collect();
        let c = Cholesky::build(&h, &free).unwrap();
        let b1: Vec<f64> = (0..free.len()).map(|i| (i as f64 * 0.7).sin()).collect();
        let b2: Vec<f64> = (0..free.len()).map(|i| 1.0 - i as f64 * 0.01).collect();
        let (y1, y2) = c.solve2(&b1, &b2);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&y1), bits(&solve_one(&c, &b1)));
        assert_eq!(bits(&y2), bits(&solve_one(&c, &b2)));
    }
}

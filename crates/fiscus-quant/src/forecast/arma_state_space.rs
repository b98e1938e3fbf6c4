//! The exact Gaussian likelihood of a stationary ARMA process by the Kalman filter (Harvey's state-space
//! form, stationary initial covariance from the discrete Lyapunov equation, see [`super::lyapunov`]), plus the parameter transforms
//! that keep estimates stationary and invertible and the ψ-weights used for forecast variances.

use super::lyapunov::stationary_covariance;
use crate::budget::Meter;
use crate::error::{QuantError, Result};
use crate::matrix::Matrix;

/// Full lag polynomials after multiplying the seasonal parts in: `φ(L) = 1 − Σ ar_i L^i`,
/// `θ(L) = 1 + Σ ma_i L^i` (statsmodels' sign conventions).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArmaPolynomials {
    pub(crate) ar: Vec<f64>,
    pub(crate) ma: Vec<f64>,
}

/// Multiplies `(1 − Σ a_i L^i)(1 − Σ s_j L^{js})` and returns the coefficients in the same `1 − …` sign.
pub(crate) fn multiply_ar(a: &[f64], s: &[f64], period: usize) -> Vec<f64> {
    multiply(a, s, period, -1.0)
}

/// Multiplies `(1 + Σ a_i L^i)(1 + Σ s_j L^{js})`.
pub(crate) fn multiply_ma(a: &[f64], s: &[f64], period: usize) -> Vec<f64> {
    multiply(a, s, period, 1.0)
}

fn multiply(a: &[f64], s: &[f64], period: usize, sign: f64) -> Vec<f64> {
    let len = a.len() + s.len() * period;
    let mut full = vec![0.0; len + 1];
    full[0] = 1.0;
    let mut left = vec![1.0];
    left.extend(a.iter().map(|v| sign * v));
    let mut right = vec![0.0; s.len() * period + 1];
    right[0] = 1.0;
    for (j, v) in s.iter().enumerate() {
        right[(j + 1) * period] = sign * v;
    }
    full.iter_mut().for_each(|v| *v = 0.0);
    for (i, l) in left.iter().enumerate() {
        for (j, r) in right.iter().enumerate() {
            full[i + j] += l * r;
        }
    }
    full[1..].iter().map(|v| sign * v).collect()
}

/// Maps unconstrained reals to the coefficients of a stationary AR polynomial (`1 − Σ φ_i L^i` has its
/// roots outside the unit circle): partial autocorrelations `tanh(u_k)` through the Durbin-Levinson
/// recursion (Barndorff-Nielsen & Schou 1973; Monahan 1984).
pub(crate) fn stationary_from_unconstrained(u: &[f64]) -> Vec<f64> {
    let mut phi: Vec<f64> = Vec::with_capacity(u.len());
    for (k, uk) in u.iter().enumerate() {
        let r = uk.tanh();
        let prev = phi.clone();
        for j in 0..k {
            phi[j] = prev[j] - r * prev[k - 1 - j];
        }
        phi.push(r);
    }
    phi
}

/// The inverse of [`stationary_from_unconstrained`] for a stationary input (used for starting values).
pub(crate) fn unconstrained_from_stationary(phi: &[f64]) -> Vec<f64> {
    let mut cur = phi.to_vec();
    let mut u = vec![0.0; phi.len()];
    for k in (0..phi.len()).rev() {
        let r = cur[k].clamp(-0.999_999, 0.999_999);
        u[k] = r.atanh();
        let denom = 1.0 - r * r;
        let prev: Vec<f64> = (0..k).map(|j| (cur[j] + r * cur[k - 1 - j]) / denom).collect();
        cur = prev;
    }
    u
}

/// One pass of the Kalman filter with unit innovation variance (σ² is concentrated out).
pub(crate) struct Filtered {
    /// Innovations v_t.
    pub(crate) v: Vec<f64>,
    /// Their variances F_t (in units of σ²).
    pub(crate) f: Vec<f64>,
    /// Predicted state for the period after the last observation.
    pub(crate) next_state: Vec<f64>,
}

/// Harvey's form: state dimension `r = max(p, q + 1)`, transition T with first column `ar` (zero-padded
/// to r) and ones on the superdiagonal, disturbance loading `R = (1, θ₁, …, θ_{r−1})`. T is never built:
/// with this structure `(T x)_i = ar_i x_0 + x_{i+1}`.
struct Companion {
    ar: Vec<f64>,
    rv: Vec<f64>,
}

impl Companion {
    fn of(poly: &ArmaPolynomials) -> Self {
        let r = poly.ar.len().max(poly.ma.len() + 1);
        let mut ar = poly.ar.clone();
        ar.resize(r, 0.0);
        let mut rv = vec![0.0; r];
        rv[0] = 1.0;
        rv[1..=poly.ma.len()].copy_from_slice(&poly.ma);
        Self { ar, rv }
    }

    /// `x ← T x` in O(r).
    fn advance(&self, x: &mut [f64]) {
        let head = x[0];
        let r = x.len();
        for i in 0..r - 1 {
            x[i] = self.ar[i] * head + x[i + 1];
        }
        x[r - 1] = self.ar[r - 1] * head;
    }
}

/// The filter stops updating the covariance once a step changes no entry by more than this fraction of
/// F_t; from then on gain and F are constant (statsmodels does the same with its `tolerance`). Pure AR
/// models get there after r steps exactly, ARMA models geometrically fast, so the O(r²) part of the
/// filter covers only the start of the series and the rest costs O(r) per observation.
const STEADY_STATE_TOLERANCE: f64 = 1e-14;

/// How many observations the filter processes between two counts of its work.
const STEPS_PER_CLOCK_CHECK: usize = 256;

/// Runs the filter over the demeaned series `z`, within `meter`'s budget: the stationary covariance counts
/// r³ units of work, each observation r² while the covariance moves and r once it is steady.
pub(crate) fn filter(z: &[f64], poly: &ArmaPolynomials, meter: &Meter) -> Result<Filtered> {
    let model = Companion::of(poly);
    let r = model.rv.len();
    let r64 = r as u64;
    meter.work(r64.saturating_pow(3))?;
    let mut p = stationary_covariance(&model.ar, &model.rv)?;
    let mut pending: u64 = 0;
    let mut next = Matrix::zeros(r, r);
    let mut a = vec![0.0; r];
    let mut gain = vec![0.0; r];
    let mut v = Vec::with_capacity(z.len());
    let mut f = Vec::with_capacity(z.len());
    let mut steady = false;
    for (t, &obs) in z.iter().enumerate() {
        pending += if steady { r64 } else { r64 * r64 };
        if t % STEPS_PER_CLOCK_CHECK == STEPS_PER_CLOCK_CHECK - 1 {
            meter.work(std::mem::take(&mut pending))?;
        }
        let ft = p[(0, 0)];
        if !(ft > 0.0 && ft.is_finite()) {
            return Err(QuantError::NotPositiveDefinite { what: "innovation variance" });
        }
        let vt = obs - a[0];
        v.push(vt);
        f.push(ft);
        if !steady {
            for (i, g) in gain.iter_mut().enumerate() {
                *g = p[(i, 0)] / ft;
            }
        }
        for (ai, g) in a.iter_mut().zip(&gain) {
            *ai += g * vt;
        }
        model.advance(&mut a);
        if steady {
            continue;
        }
        // The observation is the first state, so after the update that state is known exactly: row and
        // column 0 of the updated covariance vanish and `T P Tᵀ` only shifts the rest up and left. The AR
        // coefficients therefore never enter this recursion (only P₀ and the state mean).
        let mut change = 0.0_f64;
        for i in 0..r {
            for j in i..r {
                let shifted = if j + 1 < r { p[(i + 1, j + 1)] - p[(i + 1, 0)] * p[(j + 1, 0)] / ft } else { 0.0 };
                let value = shifted + model.rv[i] * model.rv[j];
                change = change.max((value - p[(i, j)]).abs());
                next[(i, j)] = value;
                next[(j, i)] = value;
            }
        }
        std::mem::swap(&mut p, &mut next);
        if change <= STEADY_STATE_TOLERANCE * p[(0, 0)] {
            steady = true;
            let ft = p[(0, 0)];
            for (i, g) in gain.iter_mut().enumerate() {
                *g = p[(i, 0)] / ft;
            }
        }
    }
    meter.work(pending)?;
    Ok(Filtered { v, f, next_state: a })
}

/// Point forecasts of the demeaned process for horizons 1..=h from the filter's last prediction.
pub(crate) fn forecast_states(next_state: &[f64], poly: &ArmaPolynomials, h: usize) -> Vec<f64> {
    let model = Companion::of(poly);
    let mut a = next_state.to_vec();
    let mut out = Vec::with_capacity(h);
    for _ in 0..h {
        out.push(a[0]);
        model.advance(&mut a);
    }
    out
}

/// Coefficients of the differencing polynomial `δ(L) = (1 − L)^d (1 − L^s)^D`, constant term first.
pub(crate) fn differencing_polynomial(d: usize, seasonal_d: usize, period: usize) -> Vec<f64> {
    let mut c = vec![1.0];
    let mut times = |lag: usize| {
        let mut next = vec![0.0; c.len() + lag];
        for (i, v) in c.iter().enumerate() {
            next[i] += v;
            next[i + lag] -= v;
        }
        c = next;
    };
    for _ in 0..d {
        times(1);
    }
    for _ in 0..seasonal_d {
        times(period);
    }
    c
}

/// ψ-weights of `θ(L)/(φ(L)δ(L))`: the MA(∞) representation of the (integrated) process, whose
/// cumulative squares give the forecast variances.
pub(crate) fn psi_weights(poly: &ArmaPolynomials, delta: &[f64], h: usize) -> Vec<f64> {
    // φ(L)δ(L) in standard form, then back to the `1 − Σ a_i L^i` convention of the recursion below.
    let mut phi = vec![1.0];
    phi.extend(poly.ar.iter().map(|a| -a));
    let mut product = vec![0.0; phi.len() + delta.len() - 1];
    for (i, a) in phi.iter().enumerate() {
        for (j, b) in delta.iter().enumerate() {
            product[i + j] += a * b;
        }
    }
    let ar: Vec<f64> = product[1..].iter().map(|v| -v).collect();
    let mut psi = vec![0.0; h];
    for j in 0..h {
        let mut v = if j == 0 { 1.0 } else { poly.ma.get(j - 1).copied().unwrap_or(0.0) };
        for (i, a) in ar.iter().enumerate() {
            if j > i {
                v += a * psi[j - 1 - i];
            }
        }
        psi[j] = v;
    }
    psi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stationarity_transform_round_trips() {
        let phi = stationary_from_unconstrained(&[0.3, -1.2, 0.8]);
        let u = unconstrained_from_stationary(&phi);
        for (a, b) in u.iter().zip([0.3, -1.2, 0.8]) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn seasonal_ar_polynomials_multiply_out() {
        let full = multiply_ar(&[0.5], &[0.2], 12);
        assert_eq!(full.len(), 13);
        assert!((full[0] - 0.5).abs() < 1e-15 && (full[11] - 0.2).abs() < 1e-15 && (full[12] + 0.1).abs() < 1e-15);
    }

    #[test]
    fn seasonal_and_regular_differences_multiply() {
        let c = differencing_polynomial(1, 1, 4);
        assert_eq!(c, vec![1.0, -1.0, 0.0, 0.0, -1.0, 1.0]);
    }

    #[test]
    fn psi_weights_of_a_random_walk_are_all_one() {
        let p = ArmaPolynomials { ar: vec![], ma: vec![] };
        assert_eq!(psi_weights(&p, &differencing_polynomial(1, 0, 0), 4), vec![1.0; 4]);
        let ar1 = ArmaPolynomials { ar: vec![0.5], ma: vec![] };
        let w = psi_weights(&ar1, &[1.0], 3);
        assert!((w[2] - 0.25).abs() < 1e-15);
    }
}

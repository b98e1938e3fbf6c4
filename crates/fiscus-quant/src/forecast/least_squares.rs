//! Bounded Levenberg-Marquardt for small nonlinear least-squares problems (a few dozen parameters, a few
//! hundred residuals): finite-difference Jacobian, Marquardt's diagonal scaling, and an active set that
//! freezes parameters sitting on a bound the step would push through. Used to fit forecasting models,
//! whose objective (SSE of one-step errors) is exactly a sum of squares. Every step counts against the
//! caller's [`Meter`], every residual evaluation counts its residuals as work (the residual function may
//! count more), and the limits are checked after every evaluation, so a fit stops within one evaluation of
//! its budget.

use crate::budget::Meter;
use crate::error::Result;
use crate::matrix::{Matrix, cholesky, cholesky_solve};

/// A residual function fills `out` and returns false when the parameters are outside its domain.
pub(crate) struct Problem<'a> {
    pub(crate) residuals: &'a dyn Fn(&[f64], &mut Vec<f64>) -> bool,
    pub(crate) lower: Vec<f64>,
    pub(crate) upper: Vec<f64>,
    /// Typical magnitude of each parameter, for finite-difference steps.
    pub(crate) scale: Vec<f64>,
}

/// Minimises the sum of squared residuals from `x0`; returns the best point and its SSE. `max_iter` is
/// a stopping rule (the best point so far is returned); running out of `meter` is an error.
pub(crate) fn minimise(problem: &Problem<'_>, x0: &[f64], max_iter: usize, meter: &Meter) -> Result<(Vec<f64>, f64)> {
    let p = x0.len();
    let mut x: Vec<f64> = x0.iter().enumerate().map(|(j, v)| v.clamp(problem.lower[j], problem.upper[j])).collect();
    let mut r = Vec::new();
    let Some(mut sse) = evaluate(problem, &x, &mut r, meter)? else {
        return Ok((x, f64::INFINITY));
    };
    let mut lambda = 1e-3;
    let mut jac = Matrix::zeros(r.len(), p);
    let mut rh = Vec::new();
    let mut stalls = 0;
    for _ in 0..max_iter {
        meter.iteration()?;
        // Forward differences, stepping inward at an upper bound.
        for j in 0..p {
            let h = 1e-7 * x[j].abs().max(problem.scale[j]);
            let mut xh = x.clone();
            let step = if x[j] + h <= problem.upper[j] { h } else { -h };
            xh[j] += step;
            if evaluate(problem, &xh, &mut rh, meter)?.is_none() {
                for i in 0..r.len() {
                    jac[(i, j)] = 0.0;
                }
                continue;
            }
            for i in 0..r.len() {
                jac[(i, j)] = (rh[i] - r[i]) / step;
            }
        }
        let g: Vec<f64> = (0..p).map(|j| (0..r.len()).map(|i| jac[(i, j)] * r[i]).sum()).collect();
        let free: Vec<usize> = (0..p)
            .filter(|&j| !((x[j] <= problem.lower[j] && g[j] > 0.0) || (x[j] >= problem.upper[j] && g[j] < 0.0)))
            .collect();
        if free.is_empty() {
            break;
        }
        let k = free.len();
        let mut a = Matrix::zeros(k, k);
        for (u, &ju) in free.iter().enumerate() {
            meter.check_time()?;
            for (v, &jv) in free.iter().enumerate().skip(u) {
                let s: f64 = (0..r.len()).map(|i| jac[(i, ju)] * jac[(i, jv)]).sum();
                a[(u, v)] = s;
                a[(v, u)] = s;
            }
        }
        let mut improved = false;
        while lambda < 1e16 {
            let mut m = a.clone();
            for u in 0..k {
                m[(u, u)] += lambda * a[(u, u)].max(1e-12);
            }
            let Ok(l) = cholesky(&m, "normal equations") else {
                lambda *= 10.0;
                continue;
            };
            let rhs: Vec<f64> = free.iter().map(|&j| -g[j]).collect();
            let delta = cholesky_solve(&l, &rhs);
            let mut xn = x.clone();
            for (u, &j) in free.iter().enumerate() {
                xn[j] = (x[j] + delta[u]).clamp(problem.lower[j], problem.upper[j]);
            }
            match evaluate(problem, &xn, &mut rh, meter)? {
                Some(s) if s < sse => {
                    let gain = (sse - s) / sse.max(f64::MIN_POSITIVE);
                    x = xn;
                    std::mem::swap(&mut r, &mut rh);
                    sse = s;
                    lambda = (lambda / 3.0).max(1e-15);
                    improved = true;
                    stalls = if gain < 1e-13 { stalls + 1 } else { 0 };
                    break;
                }
                _ => lambda *= 4.0,
            }
        }
        if !improved || stalls >= 3 {
            break;
        }
    }
    Ok((x, sse))
}

fn evaluate(problem: &Problem<'_>, x: &[f64], r: &mut Vec<f64>, meter: &Meter) -> Result<Option<f64>> {
    r.clear();
    let valid = (problem.residuals)(x, r);
    meter.work(r.len() as u64)?;
    if !valid {
        return Ok(None);
    }
    let s: f64 = r.iter().map(|v| v * v).sum();
    Ok(s.is_finite().then_some(s))
}

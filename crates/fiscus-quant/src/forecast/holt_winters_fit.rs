//! Estimating a Holt-Winters model: smoothing parameters, damping and the initial state are all chosen to
//! minimise the SSE of one-step-ahead errors (statsmodels' `initialization_method='estimated'`).
//!
//! A coarse grid over (α, β, γ, φ) with the heuristic initial state picks starting points (as statsmodels'
//! `use_brute=True` does); bounded Levenberg-Marquardt then refines every parameter from the best few and
//! the lowest SSE wins. Bounds: α, β, γ in [0, 1]; φ in [0.8, 0.98] (Hyndman's forecast package), initial
//! multiplicative seasons > 0. The whole search runs within a [`Budget`] (by default 5,000 Levenberg-Marquardt
//! steps and 10¹⁰ units of work, one per observation of each evaluation; [`fit_with_budget`] takes another).

use super::holt_winters::{
    HoltWintersFit, HoltWintersSpec, InitialState, Smoothing, heuristic_initial_state, recurse, run,
};
use super::least_squares::{Problem, minimise};
use crate::budget::{Budget, Meter};
use crate::error::{QuantError, Result};
use crate::input;

const PHI_BOUNDS: (f64, f64) = (0.8, 0.98);

/// Fits all parameters of `spec` to `y` by least squares within the default [`Budget`].
pub fn fit(y: &[f64], spec: HoltWintersSpec) -> Result<HoltWintersFit> {
    fit_with_budget(y, spec, Budget::default())
}

/// [`fit`] with an explicit budget: every Levenberg-Marquardt step of every starting point counts as an
/// iteration and every evaluation its observations as work; running out of either is
/// [`QuantError::BudgetExceeded`], running past the safety net's clock [`QuantError::SafetyTimeout`].
pub fn fit_with_budget(y: &[f64], spec: HoltWintersSpec, budget: Budget) -> Result<HoltWintersFit> {
    let meter = Meter::start("Holt-Winters fit", budget);
    spec.check()?;
    input::finite("y", y)?;
    let start_state = heuristic_initial_state(y, spec)?;
    let m = spec.period();
    let n_smooth = 1 + usize::from(spec.trend) + usize::from(spec.season.is_some()) + usize::from(spec.damped);
    let layout = Layout { spec, m, n_smooth };

    let residuals = |x: &[f64], out: &mut Vec<f64>| -> bool {
        let (p, init) = layout.unpack(x);
        if spec.multiplicative() && init.seasons.iter().any(|s| *s <= 0.0) {
            return false;
        }
        let mut t = 0;
        let mut ok = true;
        recurse(y, spec, p, &init, |f| {
            ok &= f.is_finite();
            out.push(y[t] - f);
            t += 1;
        });
        ok
    };

    let level_scale = start_state.level.abs().max(1.0);
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    let mut scale = Vec::new();
    for k in 0..n_smooth {
        let is_phi = spec.damped && k == n_smooth - 1;
        lower.push(if is_phi { PHI_BOUNDS.0 } else { 0.0 });
        upper.push(if is_phi { PHI_BOUNDS.1 } else { 1.0 });
        scale.push(1.0);
    }
    lower.push(f64::NEG_INFINITY);
    upper.push(f64::INFINITY);
    scale.push(level_scale);
    if spec.trend {
        lower.push(f64::NEG_INFINITY);
        upper.push(f64::INFINITY);
        scale.push(level_scale * 1e-3);
    }
    for _ in 0..m {
        if spec.multiplicative() {
            lower.push(1e-8);
            upper.push(f64::INFINITY);
            scale.push(1.0);
        } else {
            lower.push(f64::NEG_INFINITY);
            upper.push(f64::INFINITY);
            scale.push(level_scale * 1e-3);
        }
    }
    let problem = Problem { residuals: &residuals, lower, upper, scale };

    // Brute-force start over the smoothing parameters with the heuristic state.
    let grid = [0.05, 0.2, 0.4, 0.6, 0.8, 0.95];
    let phis = [0.85, 0.9, 0.95];
    let mut starts: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut buf = Vec::new();
    for &a in &grid {
        for &b in if spec.trend { &grid[..] } else { &grid[..1] } {
            for &g in if spec.season.is_some() { &grid[..] } else { &grid[..1] } {
                for &f in if spec.damped { &phis[..] } else { &phis[..1] } {
                    meter.work(y.len() as u64)?;
                    let x = layout.pack(Smoothing { alpha: a, beta: b, gamma: g, phi: f }, &start_state);
                    buf.clear();
                    if residuals(&x, &mut buf) {
                        let sse: f64 = buf.iter().map(|v| v * v).sum();
                        if sse.is_finite() {
                            starts.push((sse, x));
                        }
                    }
                }
            }
        }
    }
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<(Vec<f64>, f64)> = None;
    for (_, x0) in starts.iter().take(4) {
        let (x, sse) = minimise(&problem, x0, 500, &meter)?;
        if best.as_ref().is_none_or(|b| sse < b.1) {
            best = Some((x, sse));
        }
    }
    let Some((x, _)) = best else {
        return Err(QuantError::NoConvergence { what: "Holt-Winters fit", detail: "no valid starting point".into() });
    };
    let (p, init) = layout.unpack(&x);
    run(y, spec, p, &init)
}

struct Layout {
    spec: HoltWintersSpec,
    m: usize,
    n_smooth: usize,
}

impl Layout {
    fn pack(&self, p: Smoothing, s: &InitialState) -> Vec<f64> {
        let mut x = vec![p.alpha];
        if self.spec.trend {
            x.push(p.beta);
        }
        if self.spec.season.is_some() {
            x.push(p.gamma);
        }
        if self.spec.damped {
            x.push(p.phi);
        }
        x.push(s.level);
        if self.spec.trend {
            x.push(s.trend);
        }
        x.extend_from_slice(&s.seasons);
        x
    }

    fn unpack(&self, x: &[f64]) -> (Smoothing, InitialState) {
        let mut it = x.iter().copied();
        let mut next = || it.next().unwrap_or(f64::NAN);
        let alpha = next();
        let beta = if self.spec.trend { next() } else { 0.0 };
        let gamma = if self.spec.season.is_some() { next() } else { 0.0 };
        let phi = if self.spec.damped { next() } else { 1.0 };
        let level = next();
        let trend = if self.spec.trend { next() } else { 0.0 };
        let k = self.n_smooth + 1 + usize::from(self.spec.trend);
        let seasons = x[k..k + self.m].to_vec();
        (Smoothing { alpha, beta, gamma, phi }, InitialState { level, trend, seasons })
    }
}

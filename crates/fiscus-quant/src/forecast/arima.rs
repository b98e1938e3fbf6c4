//! ARIMA(p, d, q)(P, D=0, Q)_s by exact Gaussian maximum likelihood, with statsmodels' conventions:
//!
//! * trend terms are regressors on the UNDIFFERENCED series: a constant (d = 0) is the process mean, not the
//!   ARMA intercept, and a linear trend with d = 1 is a drift, i.e. the mean of the differenced series;
//! * the MA polynomial is `1 + θ₁L + …`; AR and MA are kept stationary and invertible through a
//!   partial-autocorrelation transform, as statsmodels' `enforce_stationarity/invertibility` do;
//! * with d = 1 the first observation only seeds the differences, which is exactly what statsmodels' diffuse
//!   initialisation gives (its `loglikelihood_burn` = d), so the likelihood is that of the differenced ARMA;
//! * σ² is a parameter and counts in k for AIC/BIC.
//!
//! The likelihood is maximised with σ² concentrated out: minimising `ln Σ(v²/F) + (1/n)Σ ln F` is a sum of
//! squares in the scaled innovations `v_t·√(g/F_t)` (g the geometric mean of F), so the same bounded
//! Levenberg-Marquardt as Holt-Winters does the work, from a few starting points, within a [`Budget`]
//! (by default 5,000 iterations and 10¹⁰ units of work, counted so that the same fit ends the same way on
//! any machine, under a 120 s safety net; [`fit_with_budget`] takes another).
//!
//! A model is refused before any work when the series cannot identify it: the first max-lag observations
//! after differencing only seed the dynamics, and the rest must at least match the number of parameters
//! (σ² included). That is what stops, say, an ARIMA(30,1,0) on 40 observations, whose likelihood surface
//! is flat in most directions and which no optimiser settles in reasonable time.

use super::arma_state_space::{
    ArmaPolynomials, differencing_polynomial, filter, forecast_states, multiply_ar, multiply_ma, psi_weights,
    stationary_from_unconstrained, unconstrained_from_stationary,
};
use super::least_squares::{Problem, minimise};
use crate::budget::{Budget, Meter};
use crate::error::{QuantError, Result};
use crate::input;
use crate::normal;
use crate::output;

/// Deterministic trend of the undifferenced series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArimaTrend {
    /// No mean (statsmodels `'n'`).
    None,
    /// A constant mean; needs d = 0 (statsmodels `'c'`).
    Constant,
    /// A linear time trend; needs d = 1, where it is a drift (statsmodels `'t'`).
    Drift,
}

/// Model orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArimaSpec {
    pub p: usize,
    pub d: usize,
    pub q: usize,
    /// Seasonal AR order P.
    pub seasonal_p: usize,
    /// Seasonal MA order Q.
    pub seasonal_q: usize,
    /// Seasonal differencing order D (at most 1).
    pub seasonal_d: usize,
    /// Season length s (ignored when P = D = Q = 0).
    pub period: usize,
    pub trend: ArimaTrend,
}

/// A fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct ArimaFit {
    pub spec: ArimaSpec,
    /// The mean (d = 0) or drift (d = 1); 0 without a trend term.
    pub trend_coefficient: f64,
    pub ar: Vec<f64>,
    pub ma: Vec<f64>,
    pub seasonal_ar: Vec<f64>,
    pub seasonal_ma: Vec<f64>,
    pub sigma2: f64,
    pub log_likelihood: f64,
    pub nobs: usize,
    /// Number of estimated parameters including σ².
    pub k: usize,
    /// The units of work the fit spent ([`Budget::max_work`]): the same for the same series and model on any
    /// machine.
    pub work: u64,
    history_tail: Vec<f64>,
    delta: Vec<f64>,
    filtered_next: Vec<f64>,
    poly: ArmaPolynomials,
}

/// A forecast with its standard errors and interval.
#[derive(Debug, Clone, PartialEq)]
pub struct ArimaForecast {
    pub mean: Vec<f64>,
    pub standard_error: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

/// Largest state dimension `max(p + sP, q + sQ + 1)` a fit accepts: the filter keeps an r×r covariance
/// and the stationary covariance is an r×r solve, so r bounds both memory and the cost of one likelihood
/// evaluation (about 0.3 s at r = 1024). Daily data with a yearly season and one seasonal lag fits.
pub const MAX_STATE_DIMENSION: usize = 1024;

/// Fits the model to `y` by exact maximum likelihood within the default [`Budget`].
pub fn fit(y: &[f64], spec: ArimaSpec) -> Result<ArimaFit> {
    fit_with_budget(y, spec, Budget::default())
}

/// The rules a series and model must meet before any likelihood is evaluated ([`fit`] applies them first):
/// the orders and trend against the differencing, enough observations after differencing for the largest
/// lag and the parameters, and a (differenced) series that is not constant. Cheap (one pass of
/// differencing), so a caller can refuse a request up front instead of queueing a fit that would fail.
pub fn check(y: &[f64], spec: ArimaSpec) -> Result<()> {
    prepare(y, spec).map(|_| ())
}

struct Prepared {
    delta: Vec<f64>,
    z: Vec<f64>,
    lags: usize,
    n_arma: usize,
    has_mean: bool,
}

fn prepare(y: &[f64], spec: ArimaSpec) -> Result<Prepared> {
    input::finite("y", y)?;
    if spec.d > 2 {
        return Err(QuantError::InvalidParameter { name: "d", reason: "at most 2".into() });
    }
    if spec.seasonal_d > 1 {
        return Err(QuantError::InvalidParameter { name: "seasonal_d", reason: "at most 1".into() });
    }
    if (spec.seasonal_p > 0 || spec.seasonal_q > 0 || spec.seasonal_d > 0) && spec.period < 2 {
        return Err(QuantError::InvalidParameter {
            name: "period",
            reason: "a seasonal part needs period >= 2".into(),
        });
    }
    match (spec.trend, spec.d, spec.seasonal_d) {
        (ArimaTrend::Constant, 0, 0) | (ArimaTrend::Drift, 1, 0) | (ArimaTrend::None, _, _) => {}
        _ => {
            return Err(QuantError::InvalidParameter {
                name: "trend",
                reason: "a constant needs d = D = 0 and a drift needs d = 1, D = 0".into(),
            });
        }
    }
    // z_t = δ(L) y_t: the first K = d + sD observations only seed the differences, exactly as statsmodels'
    // diffuse initialisation leaves them out of the likelihood. K is checked before the differencing
    // polynomial is built, whose length is the season length.
    let lags = spec.d.saturating_add(spec.seasonal_d.saturating_mul(spec.period));
    input::at_least("y", lags.saturating_add(1), y.len())?;
    let delta = differencing_polynomial(spec.d, spec.seasonal_d, spec.period);
    let z: Vec<f64> = (lags..y.len()).map(|t| delta.iter().enumerate().map(|(k, c)| c * y[t - k]).sum()).collect();
    let n_arma = spec.p + spec.q + spec.seasonal_p + spec.seasonal_q;
    let has_mean = spec.trend != ArimaTrend::None;
    let period = if spec.seasonal_p + spec.seasonal_q > 0 { spec.period } else { 0 };
    let ar_lags = spec.p.saturating_add(period.saturating_mul(spec.seasonal_p));
    let ma_lags = spec.q.saturating_add(period.saturating_mul(spec.seasonal_q));
    let state_dimension = ar_lags.max(ma_lags.saturating_add(1));
    if state_dimension > MAX_STATE_DIMENSION {
        return Err(QuantError::InvalidParameter {
            name: "spec",
            reason: format!(
                "the state dimension max(p + sP, q + sQ + 1) = {state_dimension} exceeds {MAX_STATE_DIMENSION}"
            ),
        });
    }
    // Parameters: the ARMA coefficients, the mean or drift, and σ².
    let k = n_arma + usize::from(has_mean) + 1;
    input::at_least("observations after differencing (largest lag + parameters)", ar_lags.max(ma_lags) + k, z.len())?;
    // A mean reproduces a constant series exactly (σ² = 0, log-likelihood NaN); without one, only a zero
    // series does. A non-zero constant without a mean is still a proper fit (a random walk on a line).
    if z.iter().all(|v| *v == z[0]) && (has_mean || z[0] == 0.0) {
        return Err(QuantError::Undefined {
            what: "ARIMA likelihood",
            reason: "the (differenced) series is constant, so the innovation variance is zero",
        });
    }

    Ok(Prepared { delta, z, lags, n_arma, has_mean })
}

/// [`fit`] with an explicit budget: every Levenberg-Marquardt step of every starting point counts as an
/// iteration and every likelihood evaluation counts its work; running out of either is
/// [`QuantError::BudgetExceeded`], running past the safety net's clock [`QuantError::SafetyTimeout`].
pub fn fit_with_budget(y: &[f64], spec: ArimaSpec, budget: Budget) -> Result<ArimaFit> {
    let meter = Meter::start("ARIMA fit", budget);
    let Prepared { delta, z, lags, n_arma, has_mean } = prepare(y, spec)?;

    let layout = Layout { spec, has_mean };
    let n = z.len() as f64;
    let residuals = |x: &[f64], out: &mut Vec<f64>| -> bool {
        let (mean, poly) = layout.unpack(x);
        let demeaned: Vec<f64> = z.iter().map(|v| v - mean).collect();
        let Ok(f) = filter(&demeaned, &poly, &meter) else {
            return false;
        };
        if f.f.iter().any(|v| !(*v > 0.0)) {
            return false;
        }
        let log_g = f.f.iter().map(|v| v.ln()).sum::<f64>() / n;
        let g = log_g.exp();
        out.extend(f.v.iter().zip(&f.f).map(|(v, ft)| v * (g / ft).sqrt()));
        true
    };
    let dim = usize::from(has_mean) + n_arma;
    let scale_z = crate::stats::variance(&z, 0).sqrt().max(1e-8);
    let mut scale = vec![1.0; dim];
    if has_mean {
        scale[0] = scale_z;
    }
    let problem =
        Problem { residuals: &residuals, lower: vec![f64::NEG_INFINITY; dim], upper: vec![f64::INFINITY; dim], scale };

    let mean0 = if has_mean { crate::stats::mean(&z) } else { 0.0 };
    let ar0 = yule_walker(&z, spec.p);
    let mut starts = Vec::new();
    for (ar_start, ma_start) in [(Some(&ar0), 0.0), (Some(&ar0), -0.5), (None, 0.5), (None, -0.8)] {
        let mut x = Vec::with_capacity(dim);
        if has_mean {
            x.push(mean0);
        }
        match ar_start {
            Some(a) => x.extend(unconstrained_from_stationary(a)),
            None => x.extend(std::iter::repeat_n(0.9_f64.atanh(), spec.p)),
        }
        x.extend(std::iter::repeat_n(ma_start, spec.q));
        x.extend(std::iter::repeat_n(0.0, spec.seasonal_p + spec.seasonal_q));
        starts.push(x);
    }
    let mut best: Option<(Vec<f64>, f64)> = None;
    for x0 in &starts {
        let (x, sse) = minimise(&problem, x0, 300, &meter)?;
        if sse.is_finite() && best.as_ref().is_none_or(|b| sse < b.1) {
            best = Some((x, sse));
        }
    }
    let Some((x, _)) = best else {
        return Err(QuantError::NoConvergence { what: "ARIMA likelihood", detail: "no valid starting point".into() });
    };
    let (mean, poly) = layout.unpack(&x);
    let demeaned: Vec<f64> = z.iter().map(|v| v - mean).collect();
    let f = filter(&demeaned, &poly, &meter)?;
    let sigma2 = f.v.iter().zip(&f.f).map(|(v, ft)| v * v / ft).sum::<f64>() / n;
    let log_likelihood = -0.5
        * f.v
            .iter()
            .zip(&f.f)
            .map(|(v, ft)| (2.0 * std::f64::consts::PI * sigma2 * ft).ln() + v * v / (sigma2 * ft))
            .sum::<f64>();
    if sigma2 == 0.0 {
        return Err(QuantError::Undefined {
            what: "ARIMA likelihood",
            reason: "the model fits the series exactly, so the innovation variance is zero",
        });
    }
    if !(sigma2.is_finite() && log_likelihood.is_finite()) {
        return Err(QuantError::Undefined { what: "ARIMA likelihood", reason: "the arithmetic overflowed" });
    }
    let (ar, ma, sar, sma) = layout.components(&x);
    Ok(ArimaFit {
        spec,
        trend_coefficient: mean,
        ar,
        ma,
        seasonal_ar: sar,
        seasonal_ma: sma,
        sigma2,
        log_likelihood,
        nobs: y.len(),
        k: dim + 1,
        work: meter.spent(),
        history_tail: y[y.len() - lags..].to_vec(),
        delta,
        filtered_next: f.next_state,
        poly,
    })
}

impl ArimaFit {
    /// `−2 llf + 2k`.
    pub fn aic(&self) -> f64 {
        -2.0 * self.log_likelihood + 2.0 * self.k as f64
    }

    /// The observations the likelihood counts: every one but the `d + D·s` the differencing consumes
    /// (statsmodels' `nobs_effective`, `nobs − loglikelihood_burn`; R's `arima` counts alike).
    pub fn nobs_effective(&self) -> usize {
        let burn = self.spec.d + self.spec.seasonal_d * self.spec.period;
        self.nobs.saturating_sub(burn)
    }

    /// `−2 llf + k ln(n)`, n the effective observations (as statsmodels and R count them).
    pub fn bic(&self) -> f64 {
        -2.0 * self.log_likelihood + self.k as f64 * (self.nobs_effective() as f64).ln()
    }

    /// AIC with the small-sample correction `2k(k+1)/(n − k − 1)`, n the effective observations.
    pub fn aicc(&self) -> f64 {
        let (k, n) = (self.k as f64, self.nobs_effective() as f64);
        self.aic() + 2.0 * k * (k + 1.0) / (n - k - 1.0)
    }

    /// Forecasts of the modelled (undifferenced) series for horizons 1..=h with Gaussian intervals at
    /// `level`. Variances come from the ψ-weights of the integrated process, which equal the Kalman
    /// forecast variances once the filter has settled (any series long enough to estimate the model).
    pub fn forecast(&self, h: usize, level: f64) -> Result<ArimaForecast> {
        input::open_unit("level", level)?;
        let diffs: Vec<f64> =
            forecast_states(&self.filtered_next, &self.poly, h).iter().map(|v| v + self.trend_coefficient).collect();
        let mean = integrate(&diffs, &self.history_tail, &self.delta);
        let psi = psi_weights(&self.poly, &self.delta, h);
        let z = normal::quantile(0.5 + level / 2.0)?;
        let mut acc = 0.0;
        let mut se = Vec::with_capacity(h);
        for p in &psi {
            acc += p * p;
            se.push((self.sigma2 * acc).sqrt());
        }
        let lower: Vec<f64> = mean.iter().zip(&se).map(|(m, s)| m - z * s).collect();
        let upper: Vec<f64> = mean.iter().zip(&se).map(|(m, s)| m + z * s).collect();
        for part in [&mean, &se, &lower, &upper] {
            output::all_finite("ARIMA forecast", part)?;
        }
        Ok(ArimaForecast { mean, standard_error: se, lower, upper })
    }
}

/// Undoes the differencing: `y_t = z_t − Σ_{k≥1} δ_k y_{t−k}`, seeded with the last observations.
fn integrate(diffs: &[f64], tail: &[f64], delta: &[f64]) -> Vec<f64> {
    let mut y = tail.to_vec();
    let start = y.len();
    for z in diffs {
        let t = y.len();
        let v = z - (1..delta.len()).map(|k| delta[k] * y[t - k]).sum::<f64>();
        y.push(v);
    }
    y.split_off(start)
}

/// Yule-Walker AR(p) estimate by Durbin-Levinson, clipped inside the stationary region; a starting value.
fn yule_walker(z: &[f64], p: usize) -> Vec<f64> {
    if p == 0 {
        return Vec::new();
    }
    let m = crate::stats::mean(z);
    let n = z.len();
    let acov: Vec<f64> = (0..=p).map(|k| (k..n).map(|t| (z[t] - m) * (z[t - k] - m)).sum::<f64>() / n as f64).collect();
    if !(acov[0] > 0.0) {
        return vec![0.0; p];
    }
    let mut phi: Vec<f64> = Vec::new();
    let mut v = acov[0];
    for k in 1..=p {
        let num = acov[k] - (0..k - 1).map(|j| phi[j] * acov[k - 1 - j]).sum::<f64>();
        let r = (num / v).clamp(-0.95, 0.95);
        let prev = phi.clone();
        for j in 0..k - 1 {
            phi[j] = prev[j] - r * prev[k - 2 - j];
        }
        phi.push(r);
        v *= 1.0 - r * r;
    }
    phi
}

struct Layout {
    spec: ArimaSpec,
    has_mean: bool,
}

impl Layout {
    fn components(&self, x: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let s = self.spec;
        let mut k = usize::from(self.has_mean);
        let mut take = |len: usize| {
            let v = x[k..k + len].to_vec();
            k += len;
            v
        };
        let ar = stationary_from_unconstrained(&take(s.p));
        let ma: Vec<f64> = stationary_from_unconstrained(&take(s.q)).iter().map(|v| -v).collect();
        let sar = stationary_from_unconstrained(&take(s.seasonal_p));
        let sma: Vec<f64> = stationary_from_unconstrained(&take(s.seasonal_q)).iter().map(|v| -v).collect();
        (ar, ma, sar, sma)
    }

    fn unpack(&self, x: &[f64]) -> (f64, ArmaPolynomials) {
        let mean = if self.has_mean { x[0] } else { 0.0 };
        let (ar, ma, sar, sma) = self.components(x);
        let period = self.spec.period.max(1);
        (mean, ArmaPolynomials { ar: multiply_ar(&ar, &sar, period), ma: multiply_ma(&ma, &sma, period) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(p: usize, d: usize, q: usize, trend: ArimaTrend) -> ArimaSpec {
        ArimaSpec { p, d, q, seasonal_p: 0, seasonal_q: 0, seasonal_d: 0, period: 0, trend }
    }

    fn noisy(n: usize) -> Vec<f64> {
        // A deterministic, irregular series: no exact AR fit exists.
        (0..n).map(|t| ((t * t) as f64 * 0.37).sin() + 0.01 * t as f64).collect()
    }

    #[test]
    fn a_constant_series_is_refused_instead_of_a_nan_likelihood() {
        let y = vec![3.0; 50];
        assert!(matches!(fit(&y, spec(1, 0, 0, ArimaTrend::Constant)), Err(QuantError::Undefined { .. })));
        assert!(matches!(fit(&y, spec(0, 1, 1, ArimaTrend::None)), Err(QuantError::Undefined { .. })));
        let line: Vec<f64> = (0..30).map(|t| 2.0 * t as f64).collect();
        assert!(matches!(fit(&line, spec(0, 1, 0, ArimaTrend::Drift)), Err(QuantError::Undefined { .. })));
        // A random walk without drift on a line has innovations of exactly the slope.
        let walk = fit(&line, spec(0, 1, 0, ArimaTrend::None)).unwrap();
        assert!((walk.sigma2 - 4.0).abs() < 1e-12 && walk.log_likelihood.is_finite());
    }

    #[test]
    fn more_lags_and_parameters_than_observations_is_refused_up_front() {
        let y = noisy(40);
        let e = fit(&y, spec(30, 1, 0, ArimaTrend::None)).unwrap_err();
        assert!(matches!(e, QuantError::InsufficientData { needed: 61, got: 39, .. }), "{e:?}");
        // A seasonal lag longer than the series is refused before anything of that length is allocated.
        let s = ArimaSpec { seasonal_d: 1, period: usize::MAX, ..spec(0, 0, 0, ArimaTrend::None) };
        assert!(matches!(fit(&y, s), Err(QuantError::InsufficientData { .. })));
        let s = ArimaSpec { seasonal_p: 1, period: 5000, ..spec(0, 0, 0, ArimaTrend::None) };
        assert!(matches!(fit(&y, s), Err(QuantError::InvalidParameter { .. })));
    }

    #[test]
    fn a_fit_out_of_budget_is_a_typed_error() {
        let y = noisy(200);
        let s = spec(2, 1, 1, ArimaTrend::Drift);
        let e = fit_with_budget(&y, s, Budget::new(Duration::from_secs(60), 1)).unwrap_err();
        assert!(matches!(e, QuantError::BudgetExceeded { what: "ARIMA fit", .. }), "{e:?}");
        let e = fit_with_budget(&y, s, Budget::new(Duration::ZERO, 1000)).unwrap_err();
        assert!(matches!(e, QuantError::SafetyTimeout { .. }), "{e:?}");
        let fitted = fit(&y, s).unwrap();
        // Work is counted, not timed: the same fit spends the same work, and a budget just below it refuses.
        assert!(fitted.work > 0 && fit(&y, s).unwrap().work == fitted.work);
        let short = Budget::new(Duration::from_secs(60), 1000).with_work(fitted.work - 1);
        let e = fit_with_budget(&y, s, short).unwrap_err();
        assert!(matches!(e, QuantError::BudgetExceeded { what: "ARIMA fit", .. }), "{e:?}");
        assert!(fit_with_budget(&y, s, short.with_work(fitted.work)).is_ok());
    }
}

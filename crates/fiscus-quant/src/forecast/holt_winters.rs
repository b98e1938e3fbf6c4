//! Holt-Winters exponential smoothing: level, optional (damped) additive trend, optional additive or
//! multiplicative season, in the error-correction form statsmodels 0.15 uses:
//!
//! ```text
//! ŷ_t = l_{t-1} + φ b_{t-1} (+ or ×) s_{t-m}
//! l_t = α (y_t −/÷ s_{t-m}) + (1 − α)(l_{t-1} + φ b_{t-1})
//! b_t = β (l_t − l_{t-1}) + (1 − β) φ b_{t-1}
//! s_t = γ (y_t −/÷ (l_{t-1} + φ b_{t-1})) + (1 − γ) s_{t-m}
//! ```
//!
//! Note the seasonal update uses the PREVIOUS level and trend, not the new level; this is statsmodels'
//! recursion (and Hyndman's ETS form), which is what lets the fitted values match it to ~1e-10.
//!
//! Forecasts use the textbook rule `ŷ_{n+h} = l_n + (φ + … + φ^h) b_n (+/×) s_{n−m+1+((h−1) mod m)}` for
//! every horizon. statsmodels 0.15 differs at h = m, 2m, … (it uses the seasonal state one cycle older,
//! an artefact of its implementation), so forecasts match statsmodels except at those horizons.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{QuantError, Result};
use crate::input;
use crate::normal;
use crate::output;

/// Seasonal component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Season {
    Additive { period: usize },
    Multiplicative { period: usize },
}

/// The model's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoltWintersSpec {
    /// Additive trend on or off.
    pub trend: bool,
    /// Damped trend (needs `trend`).
    pub damped: bool,
    pub season: Option<Season>,
}

/// Smoothing parameters; `beta`, `gamma` and `phi` are ignored when their component is absent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Smoothing {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Damping φ; 1 means undamped.
    pub phi: f64,
}

/// The state before the first observation: `l_0`, `b_0` and the seasonal states of periods `1−m … 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct InitialState {
    pub level: f64,
    pub trend: f64,
    pub seasons: Vec<f64>,
}

/// A model run over a series: one-step-ahead fitted values and the final state. Only this crate builds one
/// (`non_exhaustive`), so its seasonal state always has the length its spec implies.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HoltWintersFit {
    pub spec: HoltWintersSpec,
    pub smoothing: Smoothing,
    pub initial: InitialState,
    pub fitted: Vec<f64>,
    pub sse: f64,
    pub level: f64,
    pub trend: f64,
    /// The last `m` seasonal states, oldest first (`s_{n−m+1} … s_n`).
    pub seasons: Vec<f64>,
    /// `s_{n−m}`, the seasonal state one cycle before the newest, which statsmodels' forecast uses at
    /// horizons that are multiples of the period (see [`HoltWintersFit::forecast_statsmodels`]).
    pub previous_cycle_season: Option<f64>,
}

impl HoltWintersSpec {
    pub(crate) fn period(&self) -> usize {
        match self.season {
            Some(Season::Additive { period } | Season::Multiplicative { period }) => period,
            None => 0,
        }
    }

    pub(crate) fn multiplicative(&self) -> bool {
        matches!(self.season, Some(Season::Multiplicative { .. }))
    }

    /// Number of parameters as statsmodels counts them for AIC: `m·[season] + 2·[trend] + 2 + [damped]`.
    pub fn parameter_count(&self) -> usize {
        self.period() + if self.trend { 2 } else { 0 } + 2 + usize::from(self.damped)
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.damped && !self.trend {
            return Err(QuantError::InvalidParameter { name: "damped", reason: "a damped model needs a trend".into() });
        }
        if self.season.is_some() && self.period() < 2 {
            return Err(QuantError::InvalidParameter { name: "period", reason: "must be at least 2".into() });
        }
        Ok(())
    }
}

/// The initial state statsmodels' `initialization_method='known'` fixtures use and the estimator starts
/// from: `l_0` = mean of the first cycle, `b_0` = mean change between the first two cycles per period,
/// seasons = first cycle minus (or divided by) `l_0`. Needs two full cycles with a season.
pub fn heuristic_initial_state(y: &[f64], spec: HoltWintersSpec) -> Result<InitialState> {
    spec.check()?;
    input::finite("y", y)?;
    positive_for_season(spec, y, &[])?;
    let m = spec.period().max(1);
    input::at_least("y", 2 * m, y.len())?;
    let level = y[..m].iter().sum::<f64>() / m as f64;
    let trend = if spec.trend { (y[m..2 * m].iter().sum::<f64>() / m as f64 - level) / m as f64 } else { 0.0 };
    let seasons = match spec.season {
        None => Vec::new(),
        Some(Season::Additive { .. }) => y[..m].iter().map(|v| v - level).collect(),
        Some(Season::Multiplicative { .. }) => y[..m].iter().map(|v| v / level).collect(),
    };
    Ok(InitialState { level, trend, seasons })
}

/// A multiplicative season of data that is zero or negative anywhere (or of seasonal states that are) is
/// undefined, whichever of the two it is: one refusal for one cause, a fact of the values rather than of the
/// request's shape.
fn positive_for_season(spec: HoltWintersSpec, y: &[f64], seasons: &[f64]) -> Result<()> {
    if spec.multiplicative() && (y.iter().any(|v| *v <= 0.0) || seasons.iter().any(|s| *s <= 0.0)) {
        return Err(QuantError::Undefined {
            what: "a multiplicative season",
            reason: "it needs strictly positive data and seasonal states (the series has zeros or negative values)",
        });
    }
    Ok(())
}

/// Runs the recursion with the given parameters and initial state (statsmodels' `optimized=False`).
pub fn run(y: &[f64], spec: HoltWintersSpec, smoothing: Smoothing, initial: &InitialState) -> Result<HoltWintersFit> {
    spec.check()?;
    input::finite("y", y)?;
    check_smoothing(spec, smoothing)?;
    input::all_finite("initial seasons", &initial.seasons)?;
    input::all_finite("initial level and trend", &[initial.level, initial.trend])?;
    input::same_len("initial seasons", spec.period(), initial.seasons.len())?;
    positive_for_season(spec, y, &initial.seasons)?;
    let mut fitted = Vec::with_capacity(y.len());
    let state = recurse(y, spec, smoothing, initial, |f| fitted.push(f));
    let sse: f64 = y.iter().zip(&fitted).map(|(a, f)| (a - f) * (a - f)).sum();
    if !sse.is_finite() {
        return Err(QuantError::Undefined { what: "Holt-Winters fit", reason: "the recursion overflowed" });
    }
    output::all_finite("Holt-Winters fit", &fitted)?;
    output::all_finite("Holt-Winters fit", &[state.0, state.1])?;
    output::all_finite("Holt-Winters fit", &state.2)?;
    output::all_finite("Holt-Winters fit", &state.3.into_iter().collect::<Vec<f64>>())?;
    Ok(HoltWintersFit {
        spec,
        smoothing,
        initial: initial.clone(),
        fitted,
        sse,
        level: state.0,
        trend: state.1,
        seasons: state.2,
        previous_cycle_season: state.3,
    })
}

/// The bare recursion, shared with the estimator (which only needs the SSE): calls `emit` with each
/// one-step-ahead prediction and returns the final (level, trend, last m seasons).
pub(crate) fn recurse(
    y: &[f64],
    spec: HoltWintersSpec,
    p: Smoothing,
    initial: &InitialState,
    mut emit: impl FnMut(f64),
) -> (f64, f64, Vec<f64>, Option<f64>) {
    let m = spec.period();
    let phi = if spec.damped { p.phi } else { 1.0 };
    let (beta, gamma) = (if spec.trend { p.beta } else { 0.0 }, p.gamma);
    let mult = spec.multiplicative();
    let mut seasons = initial.seasons.clone();
    seasons.reserve(y.len());
    let (mut l, mut b) = (initial.level, if spec.trend { initial.trend } else { 0.0 });
    for (t, &obs) in y.iter().enumerate() {
        let base = l + phi * b;
        let (pred, new_l, new_s) = if m == 0 {
            (base, p.alpha * obs + (1.0 - p.alpha) * base, 0.0)
        } else {
            let s = seasons[t];
            if mult {
                (base * s, p.alpha * obs / s + (1.0 - p.alpha) * base, gamma * obs / base + (1.0 - gamma) * s)
            } else {
                (base + s, p.alpha * (obs - s) + (1.0 - p.alpha) * base, gamma * (obs - base) + (1.0 - gamma) * s)
            }
        };
        emit(pred);
        b = if spec.trend { beta * (new_l - l) + (1.0 - beta) * phi * b } else { 0.0 };
        l = new_l;
        if m > 0 {
            seasons.push(new_s);
        }
    }
    let last = seasons.len() - m;
    let previous = if m > 0 && last > 0 { Some(seasons[last - 1]) } else { None };
    (l, b, seasons[last..].to_vec(), previous)
}

impl HoltWintersFit {
    /// Point forecasts for horizons 1..=h (textbook rule; see the module note on statsmodels' quirk).
    pub fn forecast(&self, h: usize) -> Vec<f64> {
        let m = self.spec.period();
        let phi = if self.spec.damped { self.smoothing.phi } else { 1.0 };
        let mut damp_sum = 0.0;
        let mut power = 1.0;
        (1..=h)
            .map(|k| {
                power *= phi;
                damp_sum += power;
                let base = self.level + if self.spec.trend { damp_sum * self.trend } else { 0.0 };
                match self.spec.season {
                    None => base,
                    Some(Season::Additive { .. }) => base + self.seasons[(k - 1) % m],
                    Some(Season::Multiplicative { .. }) => base * self.seasons[(k - 1) % m],
                }
            })
            .collect()
    }

    /// Point forecasts exactly as statsmodels 0.15 computes them: the textbook rule, except that at horizons
    /// that are multiples of the period it takes the seasonal state one cycle older (`s_{n−m}` instead of
    /// `s_n`). Offered for callers who must reproduce statsmodels to the last digit; `forecast` is the model's
    /// own definition and the default.
    pub fn forecast_statsmodels(&self, h: usize) -> Vec<f64> {
        let mut out = self.forecast(h);
        let m = self.spec.period();
        let (Some(stale), Some(season)) = (self.previous_cycle_season, self.spec.season) else { return out };
        let newest = self.seasons[m - 1];
        for k in (m..=h).step_by(m) {
            let f = &mut out[k - 1];
            match season {
                Season::Additive { .. } => *f = *f - newest + stale,
                Season::Multiplicative { .. } => *f = *f / newest * stale,
            }
        }
        out
    }

    /// statsmodels' AIC `n·ln(SSE/n) + 2k`.
    pub fn aic(&self) -> f64 {
        let n = self.fitted.len() as f64;
        n * (self.sse / n).ln() + 2.0 * self.spec.parameter_count() as f64
    }

    /// Prediction intervals at `level` (e.g. 0.95) for horizons 1..=h, assuming additive Gaussian errors with
    /// variance SSE/n. Additive-season models use the closed form of Hyndman et al. (2008, class 1):
    /// `Var_h = σ²(1 + Σ_{j<h} c_j²)`, `c_j = α + αβ(φ + … + φ^j) + γ·[j mod m = 0]`. A multiplicative season
    /// has no closed form, so its intervals are empirical quantiles of `simulations` seeded sample paths.
    pub fn prediction_intervals(&self, h: usize, level: f64, simulations: usize, seed: u64) -> Result<Vec<(f64, f64)>> {
        input::open_unit("level", level)?;
        let n = self.fitted.len() as f64;
        let sigma = (self.sse / n).sqrt();
        let point = self.forecast(h);
        let p = self.smoothing;
        let phi = if self.spec.damped { p.phi } else { 1.0 };
        let beta = if self.spec.trend { p.beta } else { 0.0 };
        let m = self.spec.period();
        if !self.spec.multiplicative() {
            let z = normal::quantile(0.5 + level / 2.0)?;
            let mut acc = 1.0;
            let (mut damp_sum, mut power) = (0.0, 1.0);
            let mut out = Vec::with_capacity(h);
            for (k, f) in point.iter().enumerate() {
                if k > 0 {
                    power *= phi;
                    damp_sum += power;
                    let seasonal = if m > 0 && k % m == 0 { p.gamma } else { 0.0 };
                    let c = p.alpha + p.alpha * beta * damp_sum + seasonal;
                    acc += c * c;
                }
                let half = z * sigma * acc.sqrt();
                out.push((f - half, f + half));
            }
            return finite_bands(out);
        }
        input::at_least("simulations", 2, simulations)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut draws = vec![Vec::with_capacity(simulations); h];
        for _ in 0..simulations {
            let (mut l, mut b) = (self.level, self.trend);
            let mut seasons = self.seasons.clone();
            for (k, d) in draws.iter_mut().enumerate() {
                let e: f64 = StandardNormal.sample(&mut rng);
                let s = seasons[k];
                let base = l + phi * b;
                let yv = base * s + sigma * e;
                let new_l = p.alpha * yv / s + (1.0 - p.alpha) * base;
                seasons.push(p.gamma * yv / base + (1.0 - p.gamma) * s);
                b = beta * (new_l - l) + (1.0 - beta) * phi * b;
                l = new_l;
                d.push(yv);
            }
        }
        let lo = (1.0 - level) / 2.0;
        let bands: Vec<(f64, f64)> = draws
            .iter_mut()
            .map(|d| {
                d.sort_by(f64::total_cmp);
                (crate::stats::percentile_sorted(d, lo), crate::stats::percentile_sorted(d, 1.0 - lo))
            })
            .collect();
        finite_bands(bands)
    }
}

fn finite_bands(bands: Vec<(f64, f64)>) -> Result<Vec<(f64, f64)>> {
    output::all_finite("prediction intervals", &bands.iter().flat_map(|(a, b)| [*a, *b]).collect::<Vec<f64>>())?;
    Ok(bands)
}

fn check_smoothing(spec: HoltWintersSpec, p: Smoothing) -> Result<()> {
    let unit = |name, v: f64| {
        if v.is_finite() && (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(QuantError::InvalidParameter { name, reason: format!("must lie in [0, 1], got {v}") })
        }
    };
    unit("alpha", p.alpha)?;
    if spec.trend {
        unit("beta", p.beta)?;
    }
    if spec.season.is_some() {
        unit("gamma", p.gamma)?;
    }
    if spec.damped {
        unit("phi", p.phi)?;
    }
    Ok(())
}

//! Monte Carlo simulation jobs: correlated geometric Brownian motion (`fiscus_quant::simulate::gbm`), with
//! parameters estimated from instruments' prices (mean and covariance of their log returns annualised by
//! the dates' frequency, as every computation annualises: 12 for monthly prices, 252 for daily; the last
//! observed price as the start) or given inline in annual units.
//!
//! Paths are simulated in chunks (at most [`CHUNK`] paths, fewer for long multi-asset paths so that a chunk
//! stays near ten million draws), the job checking for cancel and its budget between chunks. The chunk size
//! depends on the request only; chunk 0 uses the job's seed and chunk `k` the seed `splitmix64(seed + k)`,
//! whatever the thread count, so a job is reproducible bit for bit; a job of one chunk is exactly the
//! engine's `gbm_terminal_prices` for its seed.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use std::collections::BTreeMap;

use fiscus_quant::Matrix;
use fiscus_quant::simulate::gbm::{GbmSpec, for_each_gbm_path};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{PinnedPrices, check_range};

/// Paths simulated between two checks for cancel, at most.
pub const CHUNK: usize = 10_000;
/// Draws simulated between two checks for cancel, about.
const DRAWS_PER_CHUNK: usize = 10_000_000;
/// At most this many terminal values are kept (paths × assets): 40 MB.
const MAX_TERMINALS: u64 = 5_000_000;
/// At most this many normal draws per job (paths × steps × assets): tens of seconds on one core.
const MAX_DRAWS: u64 = 1_000_000_000;

/// GBM parameters as a job holds them (annual units): assets in name order, parallel arrays, the covariance
/// of log returns. Requests give [`GbmAssets`]; stored jobs keep this form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GbmParameters {
    pub assets: Vec<String>,
    pub initial: Vec<f64>,
    pub drift: Vec<f64>,
    pub covariance: Vec<Vec<f64>>,
}

/// One asset of GBM parameters given in a request, in annual units.
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GbmAsset {
    /// The starting price, above 0 and at most 1e12.
    #[schema(exclusive_minimum = 0, maximum = 1000000000000.0, example = 100.0)]
    pub initial: f64,
    /// Annual drift μ of the price (0.06 is 6 % a year), from -100 to 100.
    #[schema(minimum = -100, maximum = 100, example = 0.06)]
    pub drift: f64,
    /// Annual volatility σ of the log returns (0.2 is 20 %), above 0 and at most 10.
    #[schema(exclusive_minimum = 0, maximum = 10, example = 0.2)]
    pub volatility: f64,
    /// Correlations of this asset's log returns with other assets' of the parameters, by name, each from -1
    /// to 1. A pair is given under either asset, or under both alike; a pair given nowhere is uncorrelated.
    #[schema(value_type = Option<BTreeMap<String, fiscus_domain::fields::Bounded<-1, 1>>>, example = json!({"GOLD": 0.05}))]
    pub correlations: Option<BTreeMap<String, f64>>,
}

/// GBM parameters given in a request: each asset by name (1 to 50 names of text). Each asset's values travel
/// together, so there are no parallel arrays to match; what JSON Schema cannot state is how the correlations
/// fit together, and a body whose correlations disagree with its assets is 409 `conflict` ([`Self::pinned`]).
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(transparent)]
#[schema(example = json!({
    "EQUITY": {"initial": 100.0, "drift": 0.06, "volatility": 0.2, "correlations": {"GOLD": 0.05}},
    "GOLD": {"initial": 50.0, "drift": 0.02, "volatility": 0.15}
}))]
pub struct GbmAssets(pub BTreeMap<String, GbmAsset>);

impl GbmAssets {
    /// How many assets the parameters give.
    pub fn assets(&self) -> usize {
        self.0.len()
    }

    /// Field errors: what the schema states (names, sizes, bounds), for bodies that bypass it.
    pub fn check(&self, errors: &mut Vec<(&'static str, String)>) {
        if self.0.is_empty() || self.0.len() > 50 {
            errors.push(("parameters", "from 1 to 50 assets".into()));
        }
        if self.0.keys().any(|a| !fiscus_domain::fields::text_ok(a, 1, 64)) {
            errors.push(("parameters", "asset names are text of 1 to 64 characters".into()));
        }
        for a in self.0.values() {
            let within = |x: f64, above: f64, max: f64| x.is_finite() && x > above && x <= max;
            let fits = within(a.initial, 0.0, 1e12)
                && within(a.drift.abs(), -1.0, 100.0)
                && within(a.volatility, 0.0, 10.0)
                && a.correlations.iter().flatten().all(|(_, r)| within(r.abs(), -1.0, 1.0));
            if !fits {
                errors.push((
                    "parameters",
                    "initial above 0 and at most 1e12, drift from -100 to 100, volatility above 0 and at most 10, \
                     correlations from -1 to 1"
                        .into(),
                ));
                return;
            }
        }
    }

    /// The parameters as a job holds them (covariance σᵢσⱼρᵢⱼ), or 409 `conflict` where the correlations
    /// disagree with the assets: a name the parameters do not give, an asset's own correlation other than 1,
    /// a pair given twice with two values, or correlations no returns can have (not positive definite).
    pub fn pinned(&self) -> Result<GbmParameters, Failure> {
        let conflict = |detail: String| Failure::refused(fiscus_domain::error_code::ErrorCode::Conflict, detail);
        let names: Vec<&String> = self.0.keys().collect();
        let n = names.len();
        let mut rho = vec![vec![0.0; n]; n];
        let mut given = vec![vec![false; n]; n];
        for (i, (name, asset)) in self.0.iter().enumerate() {
            rho[i][i] = 1.0;
            for (other, r) in asset.correlations.iter().flatten() {
                let Some(j) = names.iter().position(|x| *x == other) else {
                    return Err(conflict(format!(
                        "`{name}` gives a correlation with `{other}`, which is not an asset of the parameters"
                    )));
                };
                if i == j {
                    if *r != 1.0 {
                        return Err(conflict(format!("`{name}` gives its own correlation as {r}; it is 1")));
                    }
                    continue;
                }
                if given[i][j] && rho[i][j] != *r {
                    return Err(conflict(format!(
                        "the correlation of `{name}` and `{other}` is given as {} and {r}",
                        rho[i][j]
                    )));
                }
                (rho[i][j], rho[j][i]) = (*r, *r);
                (given[i][j], given[j][i]) = (true, true);
            }
        }
        let sigma: Vec<f64> = self.0.values().map(|a| a.volatility).collect();
        let covariance: Vec<Vec<f64>> =
            (0..n).map(|i| (0..n).map(|j| sigma[i] * sigma[j] * rho[i][j]).collect()).collect();
        let matrix = Matrix::from_rows(&covariance).map_err(|e| Failure::internal(e.to_string()))?;
        if fiscus_quant::matrix::cholesky(&matrix, "covariance").is_err() {
            return Err(conflict(
                "the correlations are not those of any returns (their matrix is not positive definite)".into(),
            ));
        }
        Ok(GbmParameters {
            assets: names.into_iter().cloned().collect(),
            initial: self.0.values().map(|a| a.initial).collect(),
            drift: self.0.values().map(|a| a.drift).collect(),
            covariance,
        })
    }
}

/// A simulation to run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"instruments": ["AAPL", "MSFT"], "start": "2015-01-01", "end": "2017-12-31", "horizon_years": 1.0, "steps": 252, "paths": 10000, "seed": 7}))]
pub struct SimulationRequest {
    /// Instruments whose prices estimate drift and covariance (their log returns, annualised by the dates'
    /// frequency: 252 for daily prices, 52 weekly, 12 monthly); the last observed price is each path's
    /// start. Or give `parameters`.
    #[schema(min_items = 1, max_items = 50)]
    pub instruments: Option<Vec<String>>,
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    pub parameters: Option<GbmAssets>,
    /// Years simulated.
    #[schema(exclusive_minimum = 0, maximum = 50)]
    pub horizon_years: f64,
    /// Time steps per path.
    #[schema(minimum = 1, maximum = 10000)]
    pub steps: u32,
    /// With `instruments`: periods per year their returns are annualised with (default: the dates'
    /// frequency; 252 when irregular, said in `warnings`). A value the dates disagree with is used and named
    /// in `warnings` (`frequency_overridden`). Not with `parameters`, which are annual already.
    #[schema(minimum = 1, maximum = 366, example = 252)]
    pub periods_per_year: Option<f64>,
    /// Paths simulated.
    #[schema(minimum = 1, maximum = 1000000)]
    pub paths: u32,
    /// Seed of the random stream (the same seed gives the same numbers); drawn and recorded when absent.
    #[schema(minimum = 0, maximum = 9007199254740991_u64)]
    pub seed: Option<u64>,
    /// Portfolio weights by asset (an instrument as named in `instruments`, or an asset of `parameters`),
    /// each at most 10 in size; an asset not named weighs 0. The portfolio's terminal return is reported
    /// when given.
    #[schema(value_type = Option<BTreeMap<String, fiscus_domain::fields::Bounded<-10, 10>>>, example = json!({"AAPL": 0.6, "MSFT": 0.4}))]
    pub weights: Option<BTreeMap<String, f64>>,
}

/// Where the parameters come from, as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Parameters {
    DataPlane(PinnedPrices),
    Inline(GbmParameters),
}

/// A simulation as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    pub parameters: Parameters,
    pub horizon_years: f64,
    pub steps: u32,
    pub paths: u32,
    pub seed: u64,
    pub weights: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periods_per_year: Option<f64>,
}

pub async fn pin(services: &Services, workspace_id: &str, r: SimulationRequest) -> Result<Simulation, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    if !(r.horizon_years.is_finite() && r.horizon_years > 0.0 && r.horizon_years <= 50.0) {
        errors.push(("horizon_years", "must be above 0 and at most 50".into()));
    }
    if r.steps == 0 || r.steps > 10_000 {
        errors.push(("steps", "must be from 1 to 10000".into()));
    }
    if r.paths == 0 || r.paths > 1_000_000 {
        errors.push(("paths", "must be from 1 to 1000000".into()));
    }
    if r.seed.is_some_and(|s| s > (1 << 53) - 1) {
        errors.push(("seed", "must be from 0 to 2^53 - 1".into()));
    }
    check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    if r.periods_per_year.is_some_and(|p| !(p.is_finite() && (1.0..=366.0).contains(&p))) {
        errors.push(("periods_per_year", "must be from 1 to 366".into()));
    }
    if r.periods_per_year.is_some() && r.parameters.is_some() {
        errors.push(("periods_per_year", "applies to instruments' returns; parameters are annual already".into()));
    }
    let assets = match (&r.instruments, &r.parameters) {
        (Some(i), None) => i.len(),
        (None, Some(p)) => p.assets(),
        _ => {
            errors.push(("instruments", "give either instruments or parameters".into()));
            0
        }
    };
    if assets > 50 {
        errors.push(("instruments", "at most 50 assets".into()));
    }
    if let Some(w) = &r.weights
        && (w.is_empty() || w.len() > 50 || w.values().any(|x| !x.is_finite() || x.abs() > 10.0))
    {
        errors.push(("weights", "1 to 50 weights, each finite and at most 10 in size".into()));
    }
    if let Some(p) = &r.parameters {
        p.check(&mut errors);
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let (paths, steps, n) = (u64::from(r.paths), u64::from(r.steps), assets as u64);
    if paths * n > MAX_TERMINALS {
        return Err(super::limit_exceeded(format!("paths × assets must be at most {MAX_TERMINALS}")));
    }
    if paths * steps * n > MAX_DRAWS {
        return Err(super::limit_exceeded(format!("paths × steps × assets must be at most {MAX_DRAWS}")));
    }
    let (parameters, names) = match (r.instruments, r.parameters) {
        (Some(list), None) => {
            let pinned =
                fiscus_kernel::inputs::pin(services, workspace_id, "instruments", &list, r.start, r.end).await?;
            (Parameters::DataPlane(pinned), list)
        }
        (None, Some(p)) => {
            let pinned = p.pinned()?;
            let names = pinned.assets.clone();
            (Parameters::Inline(pinned), names)
        }
        _ => return Err(Failure::Invalid(vec![("instruments", "give either instruments or parameters".into())])),
    };
    let weights = r.weights.map(|w| fiscus_kernel::inputs::by_asset(&w, &names, "weights")).transpose()?;
    Ok(Simulation {
        parameters,
        horizon_years: r.horizon_years,
        steps: r.steps,
        paths: r.paths,
        seed: r.seed.unwrap_or_else(|| rand::random::<u64>() & ((1 << 53) - 1)),
        weights,
        periods_per_year: r.periods_per_year,
    })
}

/// Parameters ready for the engine.
pub struct Loaded {
    pub assets: Vec<String>,
    pub initial: Vec<f64>,
    pub drift: Vec<f64>,
    pub covariance: Matrix,
    /// The history the parameters were estimated from (data plane only).
    pub observations: Option<(usize, String, String)>,
    /// Data plane only: the dates' frequency, what reading them dropped and bridged, and the periods per
    /// year the estimates were annualised with.
    pub quality: Option<(fiscus_kernel::inputs::Quality, f64)>,
}

impl Computation for Simulation {
    type Inputs = Loaded;
    const KIND: JobKind = JobKind::Simulation;

    /// Up to 1 million normal draws are answered in the request.
    fn small(&self) -> bool {
        let n = match &self.parameters {
            Parameters::DataPlane(p) => p.instruments.len(),
            Parameters::Inline(p) => p.assets.len(),
        };
        u64::from(self.paths) * u64::from(self.steps) * n as u64 <= 1_000_000
    }

    /// Simulated values, for the price in credits.
    fn size(&self) -> u64 {
        let n = match &self.parameters {
            Parameters::DataPlane(p) => p.instruments.len(),
            Parameters::Inline(p) => p.assets.len(),
        };
        u64::from(self.paths) * u64::from(self.steps) * n as u64
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        match &self.parameters {
            Parameters::Inline(p) => Ok(Loaded {
                assets: p.assets.clone(),
                initial: p.initial.clone(),
                drift: p.drift.clone(),
                covariance: Matrix::from_rows(&p.covariance).map_err(|e| Failure::internal(e.to_string()))?,
                observations: None,
                quality: None,
            }),
            Parameters::DataPlane(pinned) => {
                let panel = fiscus_kernel::inputs::load(services, workspace_id, pinned).await?;
                let logs: Vec<Vec<f64>> = panel
                    .prices
                    .windows(2)
                    .map(|w| w[1].iter().zip(&w[0]).map(|(b, a)| (b / a).ln()).collect())
                    .collect();
                let observations = match (panel.dates.first(), panel.dates.last()) {
                    (Some(a), Some(b)) => Some((logs.len(), a.clone(), b.clone())),
                    _ => None,
                };
                let n = pinned.instruments.len();
                let mut quality = panel.quality.clone();
                let periods = quality.periods_per_year(self.periods_per_year);
                let (drift, covariance) = if logs.len() >= 2 {
                    let m = Matrix::from_rows(&logs).map_err(|e| Failure::internal(e.to_string()))?;
                    let cov =
                        fiscus_quant::covariance::sample(&m, 1).map_err(super::refused_by_engine)?.scaled(periods);
                    // GBM's drift μ: the log returns' mean is μ - σ²/2 per year.
                    let drift = (0..n)
                        .map(|i| {
                            periods * logs.iter().map(|r| r[i]).sum::<f64>() / logs.len() as f64 + 0.5 * cov[(i, i)]
                        })
                        .collect();
                    (drift, cov)
                } else {
                    return Err(Failure::insufficient_data(format!(
                        "{} common observations in the range; at least 3 are needed",
                        panel.dates.len()
                    )));
                };
                Ok(Loaded {
                    assets: pinned.instruments.iter().map(|i| i.symbol.clone()).collect(),
                    initial: panel.prices.last().cloned().unwrap_or_default(),
                    drift,
                    covariance,
                    observations,
                    quality: Some((quality, periods)),
                })
            }
        }
    }

    fn quality(data: &Loaded) -> Option<fiscus_kernel::inputs::Quality> {
        data.quality.as_ref().map(|(q, _)| q.clone())
    }

    fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        let n = data.assets.len();
        let paths = self.paths as usize;
        let steps = self.steps as usize;
        let mut terminal: Vec<Vec<f64>> = vec![Vec::with_capacity(paths); n];
        let mut done = 0usize;
        let mut chunk = 0u64;
        while done < paths {
            control.check()?;
            let per_chunk = (DRAWS_PER_CHUNK / (steps * n).max(1)).clamp(1, CHUNK);
            let size = per_chunk.min(paths - done);
            let seed = if chunk == 0 { self.seed } else { splitmix64(self.seed.wrapping_add(chunk)) };
            let spec = GbmSpec {
                initial: &data.initial,
                drift: &data.drift,
                covariance: &data.covariance,
                horizon_years: self.horizon_years,
                steps,
                paths: size,
                seed,
            };
            let last = steps * n;
            for_each_gbm_path(&spec, |_, path| {
                for (i, t) in terminal.iter_mut().enumerate() {
                    t.push(path[last + i]);
                }
            })?;
            done += size;
            chunk += 1;
            control.set_progress(done as u64, paths as u64);
        }
        let levels = [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99];
        let assets: Vec<Value> = data
            .assets
            .iter()
            .zip(&terminal)
            .zip(data.initial.iter().zip(&data.drift))
            .map(|((name, t), (s0, mu))| {
                json!({
                    "asset": name, "initial": s0, "drift": mu, "mean": mean(t), "std": std(t),
                    "quantiles": quantiles(t, &levels),
                })
            })
            .collect();
        let portfolio = self.weights.as_ref().map(|w| {
            let start: f64 = w.iter().zip(&data.initial).map(|(w, s)| w * s).sum();
            let returns: Vec<f64> =
                (0..paths).map(|p| w.iter().zip(&terminal).map(|(w, t)| w * t[p]).sum::<f64>() / start - 1.0).collect();
            let q = quantiles(&returns, &levels);
            let mut sorted = returns.clone();
            sorted.sort_by(f64::total_cmp);
            let tail = ((0.05 * paths as f64).ceil() as usize).max(1);
            let cvar = -sorted[..tail].iter().sum::<f64>() / tail as f64;
            json!({
                "mean_return": mean(&returns), "std_return": std(&returns), "return_quantiles": q,
                "value_at_risk_95": -quantile_sorted(&sorted, 0.05), "expected_shortfall_95": cvar,
            })
        });
        Ok(json!({
            "model": "gbm", "paths": paths, "steps": steps, "horizon_years": self.horizon_years, "seed": self.seed,
            "assets": assets, "portfolio": portfolio,
            "observations": data.observations.map(|(n, a, b)| json!({"periods": n, "first_date": a, "last_date": b})),
            "periods_per_year": data.quality.as_ref().map(|(_, p)| *p),
        }))
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): the seed of chunk `k` from the job's seed.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// Sample standard deviation (n - 1), 0 for one value.
fn std(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// numpy's default (linear) quantile of sorted values.
fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let (lo, frac) = (h.floor() as usize, h - h.floor());
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

/// numpy's linear quantiles of `x` at `levels`, keyed by level.
pub(super) fn quantiles(x: &[f64], levels: &[f64]) -> Value {
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    Value::Object(levels.iter().map(|p| (format!("{p}"), json!(quantile_sorted(&sorted, *p)))).collect())
}

//! Generative runs (`/generative/*`): synthetic counterfactual price paths, seeded and reproducible bit for
//! bit, from correlated GBM (`simulation`'s parameters) or a moving-block bootstrap of observed returns.
//! Every output says `synthetic: true` and `executable: false`, carries the SHA-256 of its paths, and lives
//! only in its job: nothing generated becomes a dataset, so nothing synthetic can stand in for observations.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use fiscus_quant::Matrix;
use fiscus_quant::simulate::bootstrap::{BootstrapSpec, bootstrap_paths};
use fiscus_quant::simulate::gbm::{GbmSpec, for_each_gbm_path};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::simulation::{GbmAssets, GbmParameters, quantiles};
use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{PinnedPrices, check_range};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// Correlated geometric Brownian motion.
    Gbm,
    /// Observed daily returns resampled in blocks, compounded from the last observed prices.
    BlockBootstrap,
}

/// What to generate.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerativeRequest {
    pub generator: Generator,
    /// Instruments whose history drives the generator (GBM: estimated drift and covariance; bootstrap:
    /// resampled returns), starting from their last observed prices. Or `parameters` (GBM only).
    #[schema(min_items = 1, max_items = 20)]
    pub instruments: Option<Vec<String>>,
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    pub parameters: Option<GbmAssets>,
    /// Periods per path (trading days for the bootstrap; GBM steps over `horizon_years`).
    #[schema(minimum = 1, maximum = 1000)]
    pub steps: u32,
    #[schema(minimum = 1, maximum = 10000)]
    pub paths: u32,
    /// GBM: years the steps span (default steps / 252).
    #[schema(exclusive_minimum = 0, maximum = 50)]
    pub horizon_years: Option<f64>,
    /// Bootstrap: periods drawn together (default 5).
    #[schema(minimum = 1, maximum = 252)]
    pub block_length: Option<u32>,
    #[schema(minimum = 0, maximum = 9007199254740991_u64)]
    pub seed: Option<u64>,
}

/// Where a generator's inputs come from, as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Basis {
    DataPlane(PinnedPrices),
    Inline(GbmParameters),
}

/// A generative run as stored in its job. `full` runs return every path (`/generative/paths`); others
/// return per-step quantile fans (`/generative/scenarios`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generative {
    pub generator: Generator,
    pub basis: Basis,
    pub steps: u32,
    pub paths: u32,
    pub horizon_years: f64,
    pub block_length: u32,
    pub seed: u64,
    pub full: bool,
}

/// Values a `/generative/paths` answer may hold (paths × (steps + 1) × assets).
const MAX_RETURNED: u64 = 200_000;

pub async fn pin(
    services: &Services,
    workspace_id: &str,
    r: GenerativeRequest,
    full: bool,
) -> Result<Generative, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    if !(1..=1000).contains(&r.steps) {
        errors.push(("steps", "from 1 to 1000".into()));
    }
    if !(1..=10_000).contains(&r.paths) {
        errors.push(("paths", "from 1 to 10000".into()));
    }
    let horizon = r.horizon_years.unwrap_or(f64::from(r.steps) / 252.0);
    if !(horizon.is_finite() && horizon > 0.0 && horizon <= 50.0) {
        errors.push(("horizon_years", "above 0 and at most 50".into()));
    }
    let block = r.block_length.unwrap_or(5);
    if !(1..=252).contains(&block) {
        errors.push(("block_length", "from 1 to 252".into()));
    }
    if r.seed.is_some_and(|s| s > (1 << 53) - 1) {
        errors.push(("seed", "from 0 to 2^53 - 1".into()));
    }
    check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    let assets = match (&r.instruments, &r.parameters) {
        (Some(i), None) => i.len(),
        (None, Some(p)) if r.generator == Generator::Gbm => p.assets(),
        (None, Some(_)) => {
            errors.push(("parameters", "the bootstrap resamples instruments' history: give instruments".into()));
            0
        }
        _ => {
            errors.push(("instruments", "give either instruments or parameters".into()));
            0
        }
    };
    if assets > 20 {
        errors.push(("instruments", "at most 20 assets".into()));
    }
    if let Some(p) = &r.parameters {
        p.check(&mut errors);
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    if full && u64::from(r.paths) * (u64::from(r.steps) + 1) * assets as u64 > MAX_RETURNED {
        return Err(super::limit_exceeded(format!(
            "paths × (steps + 1) × assets must be at most {MAX_RETURNED} (use /generative/scenarios for summaries)"
        )));
    }
    let basis = match (r.instruments, r.parameters) {
        (Some(list), None) => Basis::DataPlane(
            fiscus_kernel::inputs::pin(services, workspace_id, "instruments", &list, r.start, r.end).await?,
        ),
        (None, Some(p)) => Basis::Inline(p.pinned()?),
        _ => return Err(Failure::Invalid(vec![("instruments", "give either instruments or parameters".into())])),
    };
    Ok(Generative {
        generator: r.generator,
        basis,
        steps: r.steps,
        paths: r.paths,
        horizon_years: horizon,
        block_length: block,
        seed: r.seed.unwrap_or_else(|| rand::random::<u64>() & ((1 << 53) - 1)),
        full,
    })
}

/// What the generator starts from.
pub struct Loaded {
    pub assets: Vec<String>,
    pub initial: Vec<f64>,
    /// GBM parameters (drift, covariance), or the daily returns to resample.
    pub gbm: Option<(Vec<f64>, Matrix)>,
    pub history: Option<Matrix>,
    /// Data plane only: the dates' frequency and what reading them dropped and bridged (GBM parameters are
    /// annualised by that frequency, as a simulation's are).
    pub quality: Option<fiscus_kernel::inputs::Quality>,
}

impl Computation for Generative {
    type Inputs = Loaded;
    const KIND: JobKind = JobKind::Generative;

    fn size(&self) -> u64 {
        let n = match &self.basis {
            Basis::DataPlane(p) => p.instruments.len(),
            Basis::Inline(p) => p.assets.len(),
        };
        u64::from(self.paths) * u64::from(self.steps) * n as u64
    }

    fn small(&self) -> bool {
        self.size() <= 1_000_000
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        match (&self.basis, self.generator) {
            (Basis::Inline(p), _) => Ok(Loaded {
                assets: p.assets.clone(),
                initial: p.initial.clone(),
                gbm: Some((
                    p.drift.clone(),
                    Matrix::from_rows(&p.covariance).map_err(|e| Failure::internal(e.to_string()))?,
                )),
                history: None,
                quality: None,
            }),
            (Basis::DataPlane(pinned), Generator::Gbm) => {
                let sim = super::simulation::Simulation {
                    parameters: super::simulation::Parameters::DataPlane(pinned.clone()),
                    horizon_years: self.horizon_years,
                    steps: self.steps,
                    paths: self.paths,
                    seed: self.seed,
                    weights: None,
                    periods_per_year: None,
                };
                let l = sim.load(services, workspace_id).await?;
                Ok(Loaded {
                    assets: l.assets,
                    initial: l.initial,
                    gbm: Some((l.drift, l.covariance)),
                    history: None,
                    quality: l.quality.map(|(q, _)| q),
                })
            }
            (Basis::DataPlane(pinned), Generator::BlockBootstrap) => {
                let panel = fiscus_kernel::inputs::load(services, workspace_id, pinned).await?;
                let returns = panel.returns();
                if returns.is_empty() {
                    return Err(Failure::insufficient_data(
                        "the instruments have fewer than 2 common observations in the range",
                    ));
                }
                Ok(Loaded {
                    assets: pinned.instruments.iter().map(|i| i.symbol.clone()).collect(),
                    initial: panel.prices.last().cloned().unwrap_or_default(),
                    gbm: None,
                    history: Some(Matrix::from_rows(&returns).map_err(|e| Failure::internal(e.to_string()))?),
                    quality: Some(panel.quality),
                })
            }
        }
    }

    fn quality(data: &Loaded) -> Option<fiscus_kernel::inputs::Quality> {
        data.quality.clone()
    }

    fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        let paths = self.generate(&data, control)?;
        control.check()?;
        let n = data.assets.len();
        let steps = self.steps as usize;
        // The evidence: SHA-256 over the paths' prices as little-endian IEEE 754 doubles, path after path.
        let mut bytes = Vec::with_capacity(paths.len() * (steps + 1) * n * 8);
        for p in &paths {
            for v in p {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        let paths_sha256 = fiscus_domain::evidence::seal_bytes(&bytes);
        let levels = [0.05, 0.25, 0.5, 0.75, 0.95];
        let body = if self.full {
            let per_asset: Vec<Value> = (0..n)
                .map(|a| {
                    let series: Vec<Vec<f64>> =
                        paths.iter().map(|p| (0..=steps).map(|t| p[t * n + a]).collect()).collect();
                    json!({"asset": data.assets[a], "paths": series})
                })
                .collect();
            json!({"assets": per_asset})
        } else {
            let fans: Vec<Value> = (0..n)
                .map(|a| {
                    let fan: Vec<Value> = (0..=steps)
                        .map(|t| {
                            let at: Vec<f64> = paths.iter().map(|p| p[t * n + a]).collect();
                            json!({"step": t, "quantiles": quantiles(&at, &levels)})
                        })
                        .collect();
                    json!({"asset": data.assets[a], "fan": fan})
                })
                .collect();
            json!({"assets": fans})
        };
        control.set_progress(1, 1);
        let mut out = json!({
            "synthetic": true, "executable": false,
            "generator": self.generator, "paths": paths.len(), "steps": steps, "seed": self.seed,
            "initial": data.initial, "paths_sha256": paths_sha256,
            "evidence": "sha256 over every path's prices as little-endian IEEE 754 doubles, path after path, each path step after step, each step asset after asset",
        });
        if let (Value::Object(o), Value::Object(b)) = (&mut out, body) {
            o.extend(b);
        }
        Ok(out)
    }
}

impl Generative {
    /// Every path as `(steps + 1) × assets` prices, row 0 the starting prices.
    fn generate(&self, data: &Loaded, control: &Control) -> Result<Vec<Vec<f64>>, Refusal> {
        let n = data.assets.len();
        let steps = self.steps as usize;
        let mut out = Vec::with_capacity(self.paths as usize);
        match (&data.gbm, &data.history) {
            (Some((drift, covariance)), _) => {
                let spec = GbmSpec {
                    initial: &data.initial,
                    drift,
                    covariance,
                    horizon_years: self.horizon_years,
                    steps,
                    paths: self.paths as usize,
                    seed: self.seed,
                };
                control.check()?;
                for_each_gbm_path(&spec, |_, path| out.push(path.to_vec()))?;
            }
            (None, Some(history)) => {
                let spec = BootstrapSpec {
                    steps,
                    paths: self.paths as usize,
                    block_length: self.block_length as usize,
                    seed: self.seed,
                };
                control.check()?;
                for m in bootstrap_paths(history, spec)? {
                    let mut path = Vec::with_capacity((steps + 1) * n);
                    path.extend_from_slice(&data.initial);
                    for r in 0..m.rows() {
                        let prev = path[r * n..(r + 1) * n].to_vec();
                        path.extend(prev.iter().zip(m.row(r)).map(|(p, x)| p * (1.0 + x)));
                    }
                    out.push(path);
                }
            }
            _ => return Err(Refusal::Failure(Failure::internal("a generator without inputs"))),
        }
        Ok(out)
    }
}

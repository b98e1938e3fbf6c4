//! Scenario generation from observed history (`POST /ml/scenarios`): moving-block bootstrap paths of the
//! assets' returns (`fiscus_quant::simulate::bootstrap`), and stated stress shocks revalued on a portfolio
//! (`fiscus_quant::simulate::shocks`). Seeded, so the same request gives the same scenarios.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use fiscus_quant::Matrix;
use fiscus_quant::simulate::bootstrap::{BootstrapSpec, bootstrap_paths};
use fiscus_quant::simulate::shocks::{ShockScenario, apply_shock};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::simulation::quantiles;
use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::by_asset;
use fiscus_kernel::inputs::{LoadedReturns, ReturnColumns, Returns};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioMethod {
    /// Paths of returns resampled from history in blocks of consecutive days.
    BlockBootstrap,
    /// Stated relative price moves applied to the portfolio.
    Stress,
}

/// A stress as a job holds it: one relative move per asset, in the assets' order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shock {
    pub name: String,
    pub moves: Vec<f64>,
}

/// A stress: relative price moves by asset (-0.3 is a 30 % fall).
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShockRequest {
    #[schema(value_type = fiscus_domain::fields::Text<1, 100>, inline, example = "2008 equity crash")]
    pub name: String,
    /// Relative moves by asset (an instrument as named in `instruments`, or an asset of `returns`), from -1
    /// (a total loss) to 10; an asset not named does not move.
    #[schema(value_type = BTreeMap<String, fiscus_domain::fields::Bounded<-1, 10>>, example = json!({"AAPL": -0.35, "MSFT": 0.05}))]
    pub moves: BTreeMap<String, f64>,
}

/// Scenarios to generate.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRequest {
    pub method: ScenarioMethod,
    /// Instruments whose daily returns are the history (or give `returns`).
    #[schema(min_items = 1, max_items = 100)]
    pub instruments: Option<Vec<String>>,
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    pub returns: Option<ReturnColumns>,
    /// Portfolio weights by asset (an instrument as named in `instruments`, or an asset of `returns`), each
    /// at most 10 in size; an asset not named weighs 0. Equal weights when left out.
    #[schema(value_type = Option<BTreeMap<String, fiscus_domain::fields::Bounded<-10, 10>>>, example = json!({"AAPL": 0.6, "MSFT": 0.4}))]
    pub weights: Option<BTreeMap<String, f64>>,
    /// Bootstrap: periods per path (default 21).
    #[schema(minimum = 1, maximum = 2520)]
    pub steps: Option<u32>,
    /// Bootstrap: paths (default 1000).
    #[schema(minimum = 1, maximum = 100000)]
    pub paths: Option<u32>,
    /// Bootstrap: consecutive periods drawn together (default 5; 1 is the plain bootstrap).
    #[schema(minimum = 1, maximum = 252)]
    pub block_length: Option<u32>,
    /// Bootstrap: the random stream's seed (drawn and recorded when absent).
    #[schema(minimum = 0, maximum = 9007199254740991_u64)]
    pub seed: Option<u64>,
    /// Stress: the shocks to apply.
    #[schema(min_items = 1, max_items = 50)]
    pub shocks: Option<Vec<ShockRequest>>,
}

/// Scenarios as stored in their job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenarios {
    pub method: ScenarioMethod,
    pub returns: Returns,
    pub weights: Option<Vec<f64>>,
    pub steps: u32,
    pub paths: u32,
    pub block_length: u32,
    pub seed: u64,
    pub shocks: Vec<Shock>,
}

pub async fn pin(services: &Services, workspace_id: &str, r: ScenarioRequest) -> Result<Scenarios, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let (steps, paths, block) = (r.steps.unwrap_or(21), r.paths.unwrap_or(1000), r.block_length.unwrap_or(5));
    if !(1..=2520).contains(&steps) {
        errors.push(("steps", "from 1 to 2520".into()));
    }
    if !(1..=100_000).contains(&paths) {
        errors.push(("paths", "from 1 to 100000".into()));
    }
    if !(1..=252).contains(&block) {
        errors.push(("block_length", "from 1 to 252".into()));
    }
    if r.seed.is_some_and(|s| s > (1 << 53) - 1) {
        errors.push(("seed", "from 0 to 2^53 - 1".into()));
    }
    let shocks = r.shocks.unwrap_or_default();
    match r.method {
        ScenarioMethod::Stress if shocks.is_empty() => {
            errors.push(("shocks", "stress needs at least one shock".into()))
        }
        ScenarioMethod::BlockBootstrap if !shocks.is_empty() => {
            errors.push(("shocks", "shocks apply to the stress method".into()))
        }
        _ => {}
    }
    for s in &shocks {
        if !fiscus_domain::fields::text_ok(&s.name, 1, 100)
            || s.moves.is_empty()
            || s.moves.len() > 500
            || s.moves.values().any(|m| !(m.is_finite() && *m >= -1.0 && *m <= 10.0))
        {
            errors
                .push(("shocks", "each shock: a name of 1 to 100 characters and 1 to 500 moves from -1 to 10".into()));
            break;
        }
    }
    if let Some(w) = &r.weights
        && (w.is_empty() || w.len() > 100 || w.values().any(|x| !(x.is_finite() && x.abs() <= 10.0)))
    {
        errors.push(("weights", "1 to 100 weights, each finite and at most 10 in size".into()));
    }
    fiscus_kernel::inputs::check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let names = match (&r.instruments, &r.returns) {
        (Some(list), None) => list.clone(),
        (None, Some(columns)) => columns.0.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let returns =
        fiscus_kernel::inputs::returns_of(services, workspace_id, r.instruments, r.start, r.end, r.returns).await?;
    let n = returns.assets();
    if n > 100 {
        return Err(Failure::Invalid(vec![("instruments", "at most 100 assets".into())]));
    }
    if u64::from(steps) * u64::from(paths) * n as u64 > 10_000_000 {
        return Err(super::limit_exceeded("steps × paths × assets must be at most 10000000".into()));
    }
    let weights = r.weights.map(|w| by_asset(&w, &names, "weights")).transpose()?;
    let shocks = shocks
        .into_iter()
        .map(|s| {
            let moves = by_asset(&s.moves, &names, &format!("shock `{}`", s.name))?;
            Ok(Shock { name: s.name, moves })
        })
        .collect::<Result<Vec<Shock>, Failure>>()?;
    Ok(Scenarios {
        method: r.method,
        returns,
        weights,
        steps,
        paths,
        block_length: block,
        seed: r.seed.unwrap_or_else(|| rand::random::<u64>() & ((1 << 53) - 1)),
        shocks,
    })
}

impl Computation for Scenarios {
    type Inputs = LoadedReturns;
    const KIND: JobKind = JobKind::Scenarios;

    fn quality(data: &LoadedReturns) -> Option<fiscus_kernel::inputs::Quality> {
        data.quality.clone()
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<LoadedReturns, Failure> {
        self.returns.load(services, workspace_id).await
    }

    fn size(&self) -> u64 {
        u64::from(self.paths) * u64::from(self.steps) * self.returns.assets() as u64
    }

    /// Up to a million resampled values are answered in the request; stress always.
    fn small(&self) -> bool {
        self.method == ScenarioMethod::Stress || self.size() <= 1_000_000
    }

    fn run(&self, data: LoadedReturns, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        let n = data.assets.len();
        let weights = self.weights.clone().unwrap_or_else(|| vec![1.0 / n as f64; n]);
        let assets: Vec<&str> = data.assets.iter().map(|(a, _)| a.as_str()).collect();
        let out = match self.method {
            ScenarioMethod::Stress => {
                let outcomes: Vec<Value> = self
                    .shocks
                    .iter()
                    .map(|s| {
                        // A portfolio worth 1: each position's value is its weight.
                        let o = apply_shock(
                            &weights,
                            &vec![1.0; n],
                            &ShockScenario { name: s.name.clone(), moves: s.moves.clone() },
                        )?;
                        Ok(json!({"name": s.name, "portfolio_return": o.total_pnl, "pnl": o.pnl}))
                    })
                    .collect::<Result<_, fiscus_quant::QuantError>>()?;
                json!({"method": "stress", "assets": assets, "weights": weights, "scenarios": outcomes})
            }
            ScenarioMethod::BlockBootstrap => {
                let history = Matrix::from_rows(&data.rows)?;
                let spec = BootstrapSpec {
                    steps: self.steps as usize,
                    paths: self.paths as usize,
                    block_length: self.block_length as usize,
                    seed: self.seed,
                };
                let paths = bootstrap_paths(&history, spec)?;
                control.check()?;
                // Each path's compounded return per asset, and the portfolio's (rebalanced each period).
                let mut per_asset: Vec<Vec<f64>> = vec![Vec::with_capacity(paths.len()); n];
                let mut portfolio = Vec::with_capacity(paths.len());
                for m in &paths {
                    let mut growth = vec![1.0; n];
                    let mut p = 1.0;
                    for r in 0..m.rows() {
                        let row = m.row(r);
                        for (g, x) in growth.iter_mut().zip(row) {
                            *g *= 1.0 + x;
                        }
                        p *= 1.0 + row.iter().zip(&weights).map(|(x, w)| x * w).sum::<f64>();
                    }
                    for (a, g) in per_asset.iter_mut().zip(growth) {
                        a.push(g - 1.0);
                    }
                    portfolio.push(p - 1.0);
                }
                let levels = [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99];
                json!({
                    "method": "block_bootstrap", "steps": self.steps, "paths": self.paths,
                    "block_length": self.block_length, "seed": self.seed, "weights": weights,
                    "history": {"periods": data.rows.len(), "first_date": data.first_date, "last_date": data.last_date},
                    "assets": assets.iter().zip(&per_asset).map(|(a, r)| json!({"asset": a, "return_quantiles": quantiles(r, &levels)})).collect::<Vec<_>>(),
                    "portfolio": {"return_quantiles": quantiles(&portfolio, &levels)},
                })
            }
        };
        control.set_progress(1, 1);
        Ok(out)
    }
}

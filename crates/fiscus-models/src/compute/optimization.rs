//! Mean-variance optimisation jobs: PyPortfolioOpt's pipeline (mean historical return, sample covariance,
//! both annualised) solved by `fiscus_quant::optimise`, on instruments' prices or inline returns.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use fiscus_quant::Matrix;
use fiscus_quant::optimise::mean_variance::{Constraints, Objective, optimise_from_returns};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{LoadedReturns, Quality, ReturnColumns, Returns, WarningCode};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectiveName {
    MinVariance,
    MaxSharpe,
    EfficientRisk,
    EfficientReturn,
}

/// An optimisation to run: the objective, its parameters, and where the returns come from (instruments and
/// a date range, or inline returns).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"], "start": "2015-01-01", "end": "2017-12-31"}))]
pub struct OptimizationRequest {
    pub objective: ObjectiveName,
    /// Instruments (symbols or `ins_…` ids) whose newest prices datasets are read; or give `returns`.
    #[schema(min_items = 1, max_items = 500)]
    pub instruments: Option<Vec<String>>,
    /// First date of the prices read (inclusive).
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    /// Last date of the prices read (inclusive).
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    pub returns: Option<ReturnColumns>,
    /// Periods in a year, to annualise (252 for daily returns, 12 for monthly). Default: inferred from the
    /// instruments' dates (named in the output's `warnings`), 252 for inline returns.
    #[schema(minimum = 1, maximum = 366)]
    pub periods_per_year: Option<f64>,
    /// Annual risk-free rate for `max_sharpe` (default 0).
    #[schema(minimum = -1, maximum = 1)]
    pub risk_free_rate: Option<f64>,
    /// Annual volatility ceiling for `efficient_risk`.
    #[schema(exclusive_minimum = 0, maximum = 10)]
    pub target_volatility: Option<f64>,
    /// Annual return floor for `efficient_return`.
    #[schema(minimum = -1, maximum = 10)]
    pub target_return: Option<f64>,
    /// Lowest weight of any asset (default 0: long only; negative allows shorting).
    #[schema(minimum = -1, maximum = 1)]
    pub min_weight: Option<f64>,
    /// Highest weight of any asset (default 1).
    #[schema(minimum = 0, maximum = 1)]
    pub max_weight: Option<f64>,
}

/// An optimisation as stored in its job: every default applied, its inputs pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Optimization {
    pub objective: ObjectiveName,
    /// As requested: `None` infers it from the instruments' dates when the job runs.
    pub periods_per_year: Option<f64>,
    pub risk_free_rate: f64,
    pub target_volatility: Option<f64>,
    pub target_return: Option<f64>,
    pub min_weight: f64,
    pub max_weight: f64,
    pub returns: Returns,
}

/// Checks a request and pins its inputs.
pub async fn pin(services: &Services, workspace_id: &str, r: OptimizationRequest) -> Result<Optimization, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let in_range = |v: Option<f64>, lo: f64, hi: f64| v.is_none_or(|x| x.is_finite() && x >= lo && x <= hi);
    if !in_range(r.periods_per_year, 1.0, 366.0) {
        errors.push(("periods_per_year", "must be between 1 and 366".into()));
    }
    if !in_range(r.risk_free_rate, -1.0, 1.0) {
        errors.push(("risk_free_rate", "must be between -1 and 1".into()));
    }
    if !in_range(r.target_volatility, 0.0, 10.0) || r.target_volatility == Some(0.0) {
        errors.push(("target_volatility", "must be above 0 and at most 10".into()));
    }
    if !in_range(r.target_return, -1.0, 10.0) {
        errors.push(("target_return", "must be between -1 and 10".into()));
    }
    let (min_weight, max_weight) = (r.min_weight.unwrap_or(0.0), r.max_weight.unwrap_or(1.0));
    if !in_range(Some(min_weight), -1.0, 1.0) {
        errors.push(("min_weight", "must be between -1 and 1".into()));
    }
    // A maximum below the minimum is bounds no portfolio meets: the engine's `infeasible` (409), as bounds
    // that the number of assets cannot meet are, since JSON Schema cannot compare two members.
    if !in_range(Some(max_weight), 0.0, 1.0) {
        errors.push(("max_weight", "must be between 0 and 1".into()));
    }
    match r.objective {
        ObjectiveName::EfficientRisk if r.target_volatility.is_none() => {
            errors.push(("target_volatility", "is required for efficient_risk".into()));
        }
        ObjectiveName::EfficientReturn if r.target_return.is_none() => {
            errors.push(("target_return", "is required for efficient_return".into()));
        }
        _ => {}
    }
    fiscus_kernel::inputs::check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let returns =
        fiscus_kernel::inputs::returns_of(services, workspace_id, r.instruments, r.start, r.end, r.returns).await?;
    Ok(Optimization {
        objective: r.objective,
        periods_per_year: r.periods_per_year,
        risk_free_rate: r.risk_free_rate.unwrap_or(0.0),
        target_volatility: r.target_volatility,
        target_return: r.target_return,
        min_weight,
        max_weight,
        returns,
    })
}

impl Computation for Optimization {
    type Inputs = LoadedReturns;
    const KIND: JobKind = JobKind::Optimization;

    fn size(&self) -> u64 {
        self.returns.assets() as u64
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<LoadedReturns, Failure> {
        self.returns.load(services, workspace_id).await
    }

    /// Optimisations of up to 100 assets are answered in the request.
    fn small(&self) -> bool {
        self.returns.assets() <= 100
    }

    /// The engine's solve of the loaded returns, and the output stored as the job's result.
    fn quality(data: &LoadedReturns) -> Option<Quality> {
        data.quality.clone()
    }

    fn run(&self, data: LoadedReturns, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        // Inline returns carry no dates: their quality starts empty and only says what the values leave
        // degenerate.
        let mut quality = data.quality.clone().unwrap_or_default();
        let periods = match data.quality {
            Some(_) => quality.periods_per_year(self.periods_per_year),
            None => self.periods_per_year.unwrap_or(252.0),
        };
        let (t, n) = (data.rows.len(), data.assets.len());
        if n > 1 && t <= n {
            quality.note(
                WarningCode::Degenerate,
                format!(
                    "{t} periods of {n} assets: their sample covariance is singular (it needs more periods than \
                     assets), so some portfolio's estimated variance is 0 and the answer rests on that"
                ),
            );
        }
        let matrix = Matrix::from_rows(&data.rows)?;
        let objective = match self.objective {
            ObjectiveName::MinVariance => Objective::MinVariance,
            ObjectiveName::MaxSharpe => Objective::MaxSharpe { risk_free: self.risk_free_rate },
            ObjectiveName::EfficientRisk => {
                Objective::EfficientRisk { target_volatility: self.target_volatility.unwrap_or(f64::NAN) }
            }
            ObjectiveName::EfficientReturn => {
                Objective::EfficientReturn { target_return: self.target_return.unwrap_or(f64::NAN) }
            }
        };
        let constraints = Constraints::bounded(data.assets.len(), self.min_weight, self.max_weight);
        let p = optimise_from_returns(&matrix, periods, objective, &constraints)?;
        control.set_progress(1, 1);
        // A volatility the arithmetic cannot tell from zero makes any Sharpe ratio of it meaningless.
        if p.volatility < 1e-6 {
            quality.note(
                WarningCode::Degenerate,
                format!(
                    "the portfolio's estimated volatility is {:e}: a Sharpe ratio of it means nothing",
                    p.volatility
                ),
            );
        }
        let weights: Vec<Value> = data
            .assets
            .iter()
            .zip(&p.weights)
            .map(|((asset, instrument), w)| json!({ "asset": asset, "instrument": instrument, "weight": w }))
            .collect();
        Ok(json!({
            "weights": weights,
            "expected_return": p.expected_return,
            "volatility": p.volatility,
            "sharpe_ratio": p.sharpe_ratio,
            "periods": data.rows.len(),
            "first_date": data.first_date,
            "last_date": data.last_date,
            "periods_per_year": periods,
            "warnings": quality.warnings,
        }))
    }
}

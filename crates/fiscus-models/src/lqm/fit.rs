//! The engine's families as trainable algorithms: their hyperparameters (every default applied), what
//! fitting them keeps (the checkpoint's fitted parameters), and how a checkpoint is evaluated on the
//! observations held out from it.
//!
//! Evaluation criteria follow each family's usual test of a model on unseen data:
//! - forecasting: one-step-ahead forecasts over the holdout with the fitted parameters (never refitted),
//!   scored by their relative MAE, the mean absolute error divided by that of the naive forecast (the last
//!   observation; the seasonal naive with a season) over the same holdout (Davydenko and Fildes 2013);
//!   passes when it is ≤ `max_relative_mae` (default 1.1: at most 10 % worse than naive). MASE (Hyndman
//!   and Koehler 2006, scaled by the in-sample naive error) is reported too, but it is not the criterion:
//!   a price series whose level grew over the years has a holdout error far above its early in-sample
//!   scale, which says nothing about the model;
//! - anomaly detection: the holdout scored against the training median and MAD; passes when the share of
//!   outliers ≤ `max_outlier_rate` (default 0.05);
//! - risk: VaR breaches over the holdout, Kupiec's proportion-of-failures test; passes when its p-value ≥
//!   `min_p_value` (default 0.05).

use crate::rules::lqm::family::{Algorithm, TaskFamily};
use fiscus_quant::QuantError;
use fiscus_quant::forecast::holt_winters::{self, HoltWintersSpec, InitialState, Season, Smoothing};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::invalid;
use fiscus_kernel::governed::Failure;

/// The engine that fits checkpoints, as recorded in each.
pub const ENGINE: &str = concat!("fiscus-quant ", env!("CARGO_PKG_VERSION"));

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HoltWintersHyper {
    #[serde(default)]
    trend: bool,
    #[serde(default)]
    damped: bool,
    #[serde(default = "no_season")]
    seasonal: String,
    #[serde(default)]
    period: usize,
}

fn no_season() -> String {
    "none".into()
}

impl HoltWintersHyper {
    fn spec(&self) -> Result<HoltWintersSpec, Failure> {
        let season = match self.seasonal.as_str() {
            "none" if self.period == 0 => None,
            "none" => return Err(invalid("hyperparameters", "period: only with a season")),
            "additive" | "multiplicative" if !(2..=366).contains(&self.period) => {
                return Err(invalid("hyperparameters", "period: from 2 to 366 with a season"));
            }
            "additive" => Some(Season::Additive { period: self.period }),
            "multiplicative" => Some(Season::Multiplicative { period: self.period }),
            _ => return Err(invalid("hyperparameters", "seasonal: none, additive or multiplicative")),
        };
        if self.damped && !self.trend {
            return Err(invalid("hyperparameters", "damped: a damped model needs a trend"));
        }
        Ok(HoltWintersSpec { trend: self.trend, damped: self.damped, season })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RobustZHyper {
    #[serde(default = "three_and_a_half")]
    threshold: f64,
}

fn three_and_a_half() -> f64 {
    3.5
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VarHyper {
    #[serde(default = "five_percent")]
    cutoff: f64,
}

fn five_percent() -> f64 {
    0.05
}

fn parse<T: DeserializeOwned>(v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| invalid("hyperparameters", e.to_string()))
}

fn stored<T: DeserializeOwned>(what: &str, v: &Value) -> Result<T, Failure> {
    serde_json::from_value(v.clone()).map_err(|e| Failure::internal(format!("a checkpoint's {what}: {e}")))
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, Failure> {
    serde_json::to_value(v).map_err(|e| Failure::internal(e.to_string()))
}

/// The hyperparameters `algorithm` takes (the schema's twin: `openapi/rules.rs`, `RetrainingInput`).
pub fn members(algorithm: Algorithm) -> &'static [&'static str] {
    match algorithm {
        Algorithm::HoltWinters => &["trend", "damped", "seasonal", "period"],
        Algorithm::RobustZ => &["threshold"],
        Algorithm::HistoricalVar | Algorithm::ParametricVar => &["cutoff"],
    }
}

/// The hyperparameters of `algorithm`, every default applied and checked.
pub fn hyperparameters(algorithm: Algorithm, given: Option<Value>) -> Result<Value, Failure> {
    let given = match given {
        None => json!({}),
        Some(v @ Value::Object(_)) => v,
        Some(_) => return Err(invalid("hyperparameters", "must be an object")),
    };
    match algorithm {
        Algorithm::HoltWinters => {
            let h: HoltWintersHyper = parse(given)?;
            h.spec()?;
            to_value(&h)
        }
        Algorithm::RobustZ => {
            let h: RobustZHyper = parse(given)?;
            if !(h.threshold.is_finite() && h.threshold > 0.0 && h.threshold <= 100.0) {
                return Err(invalid("hyperparameters", "threshold: above 0 and at most 100"));
            }
            to_value(&h)
        }
        Algorithm::HistoricalVar | Algorithm::ParametricVar => {
            let h: VarHyper = parse(given)?;
            if !(h.cutoff.is_finite() && h.cutoff > 0.0 && h.cutoff < 0.5) {
                return Err(invalid("hyperparameters", "cutoff: above 0 and below 0.5"));
            }
            to_value(&h)
        }
    }
}

fn refused(e: QuantError) -> Failure {
    fiscus_kernel::engine::refused_by_engine(e)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HoltWintersFitted {
    alpha: f64,
    beta: f64,
    gamma: f64,
    phi: f64,
    initial_level: f64,
    initial_trend: f64,
    initial_seasons: Vec<f64>,
    sse: f64,
    aic: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RobustZFitted {
    median: f64,
    /// The normal-consistent MAD.
    scale: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VarFitted {
    /// The return at the cutoff quantile, and the mean return beyond it.
    var: f64,
    cvar: f64,
}

/// Fits `algorithm` to the training observations: the checkpoint's fitted parameters.
pub fn fit(algorithm: Algorithm, hyper: &Value, train: &[f64]) -> Result<Value, Failure> {
    match algorithm {
        Algorithm::HoltWinters => {
            let spec = stored::<HoltWintersHyper>("hyperparameters", hyper)?.spec()?;
            let f = fiscus_quant::forecast::fit_holt_winters(train, spec).map_err(refused)?;
            let aic = f.aic();
            to_value(&HoltWintersFitted {
                alpha: f.smoothing.alpha,
                beta: if spec.trend { f.smoothing.beta } else { 0.0 },
                gamma: if spec.season.is_some() { f.smoothing.gamma } else { 0.0 },
                phi: if spec.damped { f.smoothing.phi } else { 1.0 },
                initial_level: f.initial.level,
                initial_trend: f.initial.trend,
                initial_seasons: f.initial.seasons.clone(),
                sse: f.sse,
                aic,
            })
        }
        Algorithm::RobustZ => {
            let z = fiscus_quant::anomaly::robust_z::robust_z_scores(train).map_err(refused)?;
            to_value(&RobustZFitted { median: z.median, scale: z.scale })
        }
        Algorithm::HistoricalVar | Algorithm::ParametricVar => {
            let cutoff = stored::<VarHyper>("hyperparameters", hyper)?.cutoff;
            let t = if algorithm == Algorithm::HistoricalVar {
                fiscus_quant::value_at_risk::historical(train, cutoff)
            } else {
                fiscus_quant::value_at_risk::parametric(train, cutoff)
            }
            .map_err(refused)?;
            to_value(&VarFitted { var: t.var, cvar: t.cvar })
        }
    }
}

/// What an evaluation is held to; each family reads its own criterion and refuses the others'.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Criteria {
    /// Forecasting: the largest relative MAE (the model's holdout MAE over the naive forecast's) that
    /// passes (default 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 10, example = 1.1)]
    pub max_relative_mae: Option<f64>,
    /// Anomaly detection: the largest share of held-out observations flagged that passes (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.05)]
    pub max_outlier_rate: Option<f64>,
    /// Risk: the smallest Kupiec p-value that passes (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, exclusive_maximum = 1, example = 0.05)]
    pub min_p_value: Option<f64>,
}

impl Criteria {
    /// The family's criterion, its default applied; a criterion of another family is refused.
    pub fn for_family(&self, family: TaskFamily) -> Result<Criteria, Failure> {
        let (mine, others): (&str, [(&str, bool); 2]) = match family {
            TaskFamily::Forecasting => (
                "max_relative_mae",
                [("max_outlier_rate", self.max_outlier_rate.is_some()), ("min_p_value", self.min_p_value.is_some())],
            ),
            TaskFamily::AnomalyDetection => (
                "max_outlier_rate",
                [("max_relative_mae", self.max_relative_mae.is_some()), ("min_p_value", self.min_p_value.is_some())],
            ),
            TaskFamily::Risk => (
                "min_p_value",
                [
                    ("max_relative_mae", self.max_relative_mae.is_some()),
                    ("max_outlier_rate", self.max_outlier_rate.is_some()),
                ],
            ),
        };
        if let Some((other, _)) = others.iter().find(|(_, given)| *given) {
            return Err(invalid(
                "criteria",
                format!("{other} is not a criterion of a {} model (it takes {mine})", family.as_str()),
            ));
        }
        let within = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        Ok(match family {
            TaskFamily::Forecasting => {
                let v = self.max_relative_mae.unwrap_or(1.1);
                if !(within(v, 0.0, 10.0) && v > 0.0) {
                    return Err(invalid("criteria", "max_relative_mae: above 0 and at most 10"));
                }
                Criteria { max_relative_mae: Some(v), ..Criteria::default() }
            }
            TaskFamily::AnomalyDetection => {
                let v = self.max_outlier_rate.unwrap_or(0.05);
                if !within(v, 0.0, 1.0) {
                    return Err(invalid("criteria", "max_outlier_rate: from 0 to 1"));
                }
                Criteria { max_outlier_rate: Some(v), ..Criteria::default() }
            }
            TaskFamily::Risk => {
                let v = self.min_p_value.unwrap_or(0.05);
                if !(within(v, 0.0, 1.0) && v < 1.0) {
                    return Err(invalid("criteria", "min_p_value: from 0, below 1"));
                }
                Criteria { min_p_value: Some(v), ..Criteria::default() }
            }
        })
    }
}

/// An evaluation's measurements and verdict.
pub struct Scored {
    pub metrics: Value,
    pub passed: bool,
}

fn finite(what: &'static str, v: f64) -> Result<f64, Failure> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(refused(QuantError::Undefined { what, reason: "the arithmetic overflowed" }))
    }
}

/// Evaluates a checkpoint (its hyperparameters and fitted parameters) on `holdout`, the observations after
/// `train`, against `criteria` (already the family's, defaults applied).
pub fn evaluate(
    algorithm: Algorithm,
    hyper: &Value,
    fitted: &Value,
    train: &[f64],
    holdout: &[f64],
    criteria: &Criteria,
) -> Result<Scored, Failure> {
    let n = holdout.len();
    if n == 0 {
        return Err(refused(QuantError::InsufficientData { what: "holdout", needed: 1, got: 0 }));
    }
    match algorithm {
        Algorithm::HoltWinters => {
            let spec = stored::<HoltWintersHyper>("hyperparameters", hyper)?.spec()?;
            let f: HoltWintersFitted = stored("fitted parameters", fitted)?;
            let smoothing = Smoothing { alpha: f.alpha, beta: f.beta, gamma: f.gamma, phi: f.phi };
            let initial =
                InitialState { level: f.initial_level, trend: f.initial_trend, seasons: f.initial_seasons.clone() };
            let whole: Vec<f64> = train.iter().chain(holdout).copied().collect();
            let run = holt_winters::run(&whole, spec, smoothing, &initial).map_err(refused)?;
            let predicted = &run.fitted[train.len()..];
            let errors: Vec<f64> = holdout.iter().zip(predicted).map(|(a, p)| a - p).collect();
            let mae = errors.iter().map(|e| e.abs()).sum::<f64>() / n as f64;
            let rmse = (errors.iter().map(|e| e * e).sum::<f64>() / n as f64).sqrt();
            let mape = if holdout.contains(&0.0) {
                None
            } else {
                Some(errors.iter().zip(holdout).map(|(e, a)| (e / a).abs()).sum::<f64>() / n as f64)
            };
            let lag = match spec.season {
                Some(Season::Additive { period } | Season::Multiplicative { period }) => period,
                None => 1,
            };
            if train.len() <= lag {
                return Err(refused(QuantError::InsufficientData {
                    what: "naive scale",
                    needed: lag + 1,
                    got: train.len(),
                }));
            }
            let naive = train.windows(lag + 1).map(|w| (w[lag] - w[0]).abs()).sum::<f64>() / (train.len() - lag) as f64;
            if naive == 0.0 {
                return Err(refused(QuantError::Undefined {
                    what: "MASE",
                    reason: "the training observations never change, so the naive error is zero",
                }));
            }
            let mase = finite("MASE", mae / naive)?;
            // The naive forecast of each held-out observation: the observation `lag` before it.
            let naive_holdout = whole[train.len()..]
                .iter()
                .enumerate()
                .map(|(i, a)| (a - whole[train.len() + i - lag]).abs())
                .sum::<f64>()
                / n as f64;
            if naive_holdout == 0.0 {
                return Err(refused(QuantError::Undefined {
                    what: "relative MAE",
                    reason: "the held-out observations never change, so the naive error is zero",
                }));
            }
            let relative = finite("relative MAE", mae / naive_holdout)?;
            Ok(Scored {
                metrics: json!({ "observations": n, "mae": finite("MAE", mae)?, "rmse": finite("RMSE", rmse)?,
                                 "mape": mape, "relative_mae": relative, "naive_mae": naive_holdout,
                                 "mase": mase, "in_sample_naive_mae": naive, "seasonal_lag": lag }),
                passed: relative <= criteria.max_relative_mae.unwrap_or(1.1),
            })
        }
        Algorithm::RobustZ => {
            let threshold = stored::<RobustZHyper>("hyperparameters", hyper)?.threshold;
            let f: RobustZFitted = stored("fitted parameters", fitted)?;
            let z: Vec<f64> = holdout.iter().map(|x| (x - f.median) / f.scale).collect();
            let outliers = z.iter().filter(|v| v.abs() > threshold).count();
            let rate = outliers as f64 / n as f64;
            let max_abs = z.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            Ok(Scored {
                metrics: json!({ "observations": n, "outliers": outliers, "outlier_rate": rate,
                                 "max_abs_z": finite("robust z-score", max_abs)?, "threshold": threshold }),
                passed: rate <= criteria.max_outlier_rate.unwrap_or(0.05),
            })
        }
        Algorithm::HistoricalVar | Algorithm::ParametricVar => {
            let cutoff = stored::<VarHyper>("hyperparameters", hyper)?.cutoff;
            let f: VarFitted = stored("fitted parameters", fitted)?;
            let breaches = holdout.iter().filter(|r| **r < f.var).count();
            let k = fiscus_quant::var_backtest::kupiec(breaches, n, cutoff).map_err(refused)?;
            Ok(Scored {
                metrics: json!({ "observations": n, "var": f.var, "breaches": breaches,
                                 "expected_rate": k.expected_rate, "observed_rate": k.observed_rate,
                                 "likelihood_ratio": k.likelihood_ratio, "p_value": k.p_value }),
                passed: k.p_value >= criteria.min_p_value.unwrap_or(0.05),
            })
        }
    }
}

fn engine_stored<T: DeserializeOwned>(what: &'static str, v: &Value) -> Result<T, QuantError> {
    serde_json::from_value(v.clone())
        .map_err(|e| QuantError::InvalidParameter { name: what, reason: format!("a checkpoint's {what}: {e}") })
}

/// Runs a checkpoint on new observations with its fitted parameters, never refitting: a forecasting
/// checkpoint smooths `values` (its initial state from their first cycles) and forecasts `horizon`
/// periods; an anomaly checkpoint scores them against its training median and MAD; a risk checkpoint
/// reports its VaR and CVaR and which returns breach the VaR.
pub fn apply(
    algorithm: Algorithm,
    hyper: &Value,
    fitted: &Value,
    values: &[f64],
    horizon: usize,
) -> Result<Value, QuantError> {
    match algorithm {
        Algorithm::HoltWinters => {
            let h: HoltWintersHyper = engine_stored("hyperparameters", hyper)?;
            let spec = h.spec().map_err(|_| QuantError::InvalidParameter {
                name: "hyperparameters",
                reason: "a checkpoint's model shape is not valid".into(),
            })?;
            let f: HoltWintersFitted = engine_stored("fitted parameters", fitted)?;
            let smoothing = Smoothing { alpha: f.alpha, beta: f.beta, gamma: f.gamma, phi: f.phi };
            let initial = holt_winters::heuristic_initial_state(values, spec)?;
            let run = holt_winters::run(values, spec, smoothing, &initial)?;
            Ok(
                json!({ "forecast": run.forecast(horizon), "level": run.level, "trend": run.trend, "observations": values.len() }),
            )
        }
        Algorithm::RobustZ => {
            let threshold = engine_stored::<RobustZHyper>("hyperparameters", hyper)?.threshold;
            let f: RobustZFitted = engine_stored("fitted parameters", fitted)?;
            finite_values(values)?;
            let scores: Vec<f64> = values.iter().map(|x| (x - f.median) / f.scale).collect();
            let outliers: Vec<usize> =
                scores.iter().enumerate().filter(|(_, z)| z.abs() > threshold).map(|(i, _)| i).collect();
            Ok(
                json!({ "scores": scores, "outliers": outliers, "threshold": threshold, "median": f.median, "scale": f.scale }),
            )
        }
        Algorithm::HistoricalVar | Algorithm::ParametricVar => {
            let cutoff = engine_stored::<VarHyper>("hyperparameters", hyper)?.cutoff;
            let f: VarFitted = engine_stored("fitted parameters", fitted)?;
            finite_values(values)?;
            let breaches: Vec<usize> = values.iter().enumerate().filter(|(_, r)| **r < f.var).map(|(i, _)| i).collect();
            let rate = if values.is_empty() { 0.0 } else { breaches.len() as f64 / values.len() as f64 };
            Ok(json!({ "var": f.var, "cvar": f.cvar, "cutoff": cutoff, "breaches": breaches, "breach_rate": rate }))
        }
    }
}

fn finite_values(values: &[f64]) -> Result<(), QuantError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(QuantError::NonFinite { what: "values", index }),
        None => Ok(()),
    }
}

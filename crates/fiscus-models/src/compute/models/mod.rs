//! The statistical model catalogue and model runs.
//!
//! Each model is one of the engine's families with its peer, the shape of input it takes (a series, or a
//! panel of returns) and a JSON Schema of its parameters. A run is a compute job of kind `model_run`: its
//! request names the model, its parameters with every default applied, and its pinned input. The catalogue
//! is a list of entries with a `kind`; promoted LQMs will be entries of kind `lqm` beside the `statistical`
//! ones, so `/quant/models` is the whole list and `/quant/statistical-models` the engine's own.

use fiscus_quant::Matrix;
use fiscus_quant::anomaly::isolation_forest::{IsolationForest, IsolationForestConfig};
use fiscus_quant::forecast::arima::{self, ArimaSpec, ArimaTrend};
use fiscus_quant::forecast::holt_winters::{HoltWintersSpec, Season};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{PinnedPrices, ReturnColumns, Returns};

mod catalogue;
mod parameters;
mod request;
mod run;

pub use catalogue::*;
pub use parameters::*;
pub use request::*;

/// A model run as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRun {
    pub parameters: Parameters,
    pub input: Input,
}

/// Checks a run of `model` and pins its input.
pub async fn pin(
    services: &Services,
    workspace_id: &str,
    model: &ModelInfo,
    r: ModelRunRequest,
) -> Result<ModelRun, Failure> {
    let parameters = parameters_of(model.key, r.parameters)?;
    let input = pin_input(services, workspace_id, model.input, r.input).await?;
    let run = ModelRun { parameters, input };
    run.preflight(services, workspace_id).await?;
    Ok(run)
}

/// The input shapes `i` has by the members it gives, one per way the document's `ModelInput` rule allows
/// (`openapi/rules.rs`, `model_input_branches`): values alone; one instrument (a series, or a panel of
/// one); returns alone; instruments; columns alone; features of one instrument.
pub fn shapes_of(i: &ModelInput) -> Vec<InputShape> {
    let (v, r, t) = (i.values.is_some(), i.returns.is_some(), i.transform.is_some());
    let (f, c) = (i.features.is_some(), i.columns.is_some());
    let dated = i.start.is_some() || i.end.is_some();
    let n = i.instruments.as_ref().map(Vec::len);
    let mut shapes = Vec::new();
    if v && !(r || t || dated || f || c || n.is_some()) {
        shapes.push(InputShape::Series);
    }
    if n == Some(1) && !(v || r || f || c) {
        shapes.push(InputShape::Series);
    }
    if r && !(v || t || dated || f || c || n.is_some()) {
        shapes.push(InputShape::Panel);
    }
    if n.is_some() && !(v || r || t || f || c) {
        shapes.push(InputShape::Panel);
    }
    if c && !(v || r || t || dated || f || n.is_some()) {
        shapes.push(InputShape::Features);
    }
    if f && n == Some(1) && !(v || r || t || c) {
        shapes.push(InputShape::Features);
    }
    shapes
}

/// Whether a model reading `wanted` takes an input of these shapes (a feature-set model takes a series too).
fn takes(wanted: InputShape, shapes: &[InputShape]) -> bool {
    shapes.contains(&wanted) || (wanted == InputShape::Features && shapes.contains(&InputShape::Series))
}

/// What a run of the model `key` (a promoted LQM when `lqm`) conflicts with, when the body is one the
/// document allows for some model (parameters of one model of the catalogue or a promoted LQM's, an input
/// of one shape) but not the one the path names. The document states the union, since a path parameter
/// cannot select a body schema; each model's own parameters schema and input are its catalogue entry (`GET
/// /quant/models/{key}`), so a body that does not fit it meets the model's state: 409, as any request meeting
/// the state of its target. A body no model takes is the handlers' 422.
pub fn conflict(key: &str, lqm: bool, body: &ModelRunRequest) -> Option<String> {
    let shapes = shapes_of(&body.input);
    let params = body.parameters.as_ref();
    let allowed =
        !shapes.is_empty() && (lqm_parameters_fit(params) || CATALOGUE.iter().any(|m| parameters_fit(m.key, params)));
    if !allowed {
        return None;
    }
    let (wanted, fits) = if lqm {
        (InputShape::Series, lqm_parameters_fit(params))
    } else {
        let model = find(key)?;
        (model.input, parameters_fit(model.key, params))
    };
    if !fits {
        return Some(format!(
            "these parameters are not model `{key}`'s (its parameters schema is in GET /api/v2/quant/models/{key})"
        ));
    }
    if !takes(wanted, &shapes) {
        return Some(format!("model `{key}` reads {}; the input given is not one", wanted.described()));
    }
    None
}

/// A run of the checkpoint a promotion serves: the checkpoint pinned whole, `horizon` (forecasting) the
/// only parameter, the input a series.
pub async fn pin_lqm(
    services: &Services,
    workspace_id: &str,
    checkpoint: &crate::tables::lqm::training::Checkpoint,
    r: ModelRunRequest,
) -> Result<ModelRun, Failure> {
    let horizon = lqm_horizon(r.parameters.as_ref())?;
    let c = &checkpoint.body;
    let parameters = Parameters::Lqm {
        model_id: c.model_id.clone(),
        checkpoint_id: checkpoint.id.clone(),
        checkpoint_hash: checkpoint.content_hash.clone(),
        algorithm: c.algorithm,
        hyperparameters: c.hyperparameters.clone(),
        fitted: c.fitted.clone(),
        horizon,
    };
    let input = pin_input(services, workspace_id, InputShape::Series, r.input).await?;
    Ok(ModelRun { parameters, input })
}

/// Checks a run's input for a model reading `shape` and pins it.
async fn pin_input(
    services: &Services,
    workspace_id: &str,
    shape: InputShape,
    i: ModelInput,
) -> Result<Input, Failure> {
    let mut errors = Vec::new();
    fiscus_kernel::inputs::check_range(&mut errors, i.start.as_deref(), i.end.as_deref());
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let feature_set = i.features.is_some() || i.columns.is_some();
    if feature_set && shape != InputShape::Features {
        return Err(invalid("input", "features and columns are for feature-set models (isolation_forest)"));
    }
    Ok(match shape {
        InputShape::Features if feature_set => Input::Features(pin_features(services, workspace_id, i).await?),
        InputShape::Series | InputShape::Features => {
            if i.returns.is_some() {
                return Err(invalid("input", "this model reads a series: give values or one instrument"));
            }
            match (i.values, i.instruments) {
                (Some(values), None) => {
                    if values.len() < 3 || values.len() > 20_000 {
                        return Err(invalid("input", "values: from 3 to 20000"));
                    }
                    if values.iter().any(|v| !v.is_finite() || v.abs() > 1e12) {
                        return Err(invalid("input", "values must be finite and at most 1e12 in size"));
                    }
                    if i.start.is_some() || i.end.is_some() || i.transform.is_some() {
                        return Err(invalid("input", "start, end and transform apply to an instrument"));
                    }
                    Input::Series(Series::Inline { values })
                }
                (None, Some(list)) if list.len() == 1 => {
                    let prices =
                        fiscus_kernel::inputs::pin(services, workspace_id, "input", &list, i.start, i.end).await?;
                    Input::Series(Series::DataPlane { prices, transform: i.transform.unwrap_or(Transform::Price) })
                }
                _ => return Err(invalid("input", "give values or exactly one instrument")),
            }
        }
        InputShape::Panel => {
            if i.values.is_some() || i.transform.is_some() {
                return Err(invalid(
                    "input",
                    "this model reads returns of several assets: give returns or instruments",
                ));
            }
            Input::Panel(
                fiscus_kernel::inputs::returns_of(services, workspace_id, i.instruments, i.start, i.end, i.returns)
                    .await?,
            )
        }
    })
}

/// Checks and pins a feature set: inline `columns`, or `features` of one instrument.
async fn pin_features(services: &Services, workspace_id: &str, i: ModelInput) -> Result<FeatureSet, Failure> {
    if i.values.is_some() || i.returns.is_some() || i.transform.is_some() {
        return Err(invalid("input", "a feature set takes columns, or features of one instrument"));
    }
    match (i.features, i.columns, i.instruments) {
        (None, Some(FeatureColumns(given)), None) => {
            if given.is_empty() || given.len() > 64 {
                return Err(invalid("input", "columns: from 1 to 64"));
            }
            if let Some(name) = given.keys().find(|name| !fiscus_domain::fields::text_ok(name, 1, 64)) {
                return Err(invalid("input", format!("column `{name}` must be 1 to 64 characters, not blank")));
            }
            if given.values().any(|c| c.len() < 3 || c.len() > 20_000) {
                return Err(invalid("input", "each column: from 3 to 20000 observations"));
            }
            if given.values().flatten().any(|v| !v.is_finite() || v.abs() > 1e12) {
                return Err(invalid("input", "values must be finite and at most 1e12 in size"));
            }
            if i.start.is_some() || i.end.is_some() {
                return Err(invalid("input", "start and end apply to an instrument"));
            }
            let (columns, rows) = fiscus_kernel::inputs::aligned(&given);
            Ok(FeatureSet::Inline { columns, rows })
        }
        (Some(features), None, Some(list)) if list.len() == 1 => {
            if features.is_empty() || features.len() > 8 {
                return Err(invalid("input", "features: from 1 to 8"));
            }
            for (n, key) in features.iter().enumerate() {
                if fiscus_data_core::rules::features::find(key).is_none() {
                    return Err(invalid("input", format!("no feature `{key}` (see GET /quant/features)")));
                }
                if features[..n].contains(key) {
                    return Err(invalid("input", format!("feature `{key}` is named twice")));
                }
            }
            let prices = fiscus_kernel::inputs::pin(services, workspace_id, "input", &list, i.start, i.end).await?;
            Ok(FeatureSet::DataPlane { prices, features })
        }
        _ => Err(invalid("input", "give columns, or features with exactly one instrument")),
    }
}

/// The loaded input.
pub enum Loaded {
    Series { values: Vec<f64>, dates: Option<Vec<String>>, quality: Option<fiscus_kernel::inputs::Quality> },
    Panel(fiscus_kernel::inputs::LoadedReturns),
    Features { columns: Vec<String>, rows: Vec<Vec<f64>>, dates: Option<Vec<String>> },
}

/// Each feature over the instrument's whole series, then the dates from `start` to `end` where every one
/// has a value.
async fn load_features(
    services: &Services,
    workspace_id: &str,
    prices: &PinnedPrices,
    features: &[String],
) -> Result<Loaded, Failure> {
    let whole = PinnedPrices { instruments: prices.instruments.clone(), start: None, end: None };
    let panel = fiscus_kernel::inputs::load(services, workspace_id, &whole).await?;
    let series: Vec<f64> = panel.prices.iter().map(|r| r[0]).collect();
    let mut columns = Vec::with_capacity(features.len());
    for key in features {
        let definition = fiscus_data_core::rules::features::find(key)
            .ok_or_else(|| Failure::internal(format!("a pinned feature `{key}` is not in the catalogue")))?;
        if let Some(why) = definition.refuses(panel.quality.frequency) {
            return Err(Failure::refused_with(
                fiscus_domain::error_code::ErrorCode::Conflict,
                why,
                vec![("frequency", serde_json::json!(panel.quality.frequency.as_str()))],
            ));
        }
        let values = fiscus_kernel::inputs::feature_values(definition.formula, &series)
            .map_err(|e| Failure::internal(format!("feature {key} of stored prices: {e}")))?;
        columns.push(values);
    }
    let from = prices.start.as_deref().unwrap_or("");
    let to = prices.end.as_deref().unwrap_or("9999-12-31");
    let mut rows = Vec::new();
    let mut dates = Vec::new();
    for (t, date) in panel.dates.iter().enumerate() {
        if date.as_str() < from || date.as_str() > to {
            continue;
        }
        if let Some(row) = columns.iter().map(|c| c[t]).collect::<Option<Vec<f64>>>() {
            rows.push(row);
            dates.push(date.clone());
        }
    }
    Ok(Loaded::Features { columns: features.to_vec(), rows, dates: Some(dates) })
}

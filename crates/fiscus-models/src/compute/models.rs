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

/// What a model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputShape {
    /// One series: `values`, or one instrument's prices (`transform: price`) or returns (`return`).
    Series,
    /// Returns of several assets: `returns`, or instruments' daily returns.
    Panel,
    /// Observations of one or more features: a series as above, a feature set given inline (`columns`), or
    /// `features` of the catalogue (`GET /quant/features`) computed from one instrument's prices.
    Features,
}

impl InputShape {
    fn described(self) -> &'static str {
        match self {
            InputShape::Series => "a series (values, or one instrument)",
            InputShape::Panel => "returns of several assets (returns, or instruments)",
            InputShape::Features => {
                "a series or a feature set (values, one instrument, columns, or features of one instrument)"
            }
        }
    }
}

/// One model of the catalogue.
pub struct ModelInfo {
    pub key: &'static str,
    pub name: &'static str,
    /// `forecasting`, `anomaly_detection`, `covariance` or `risk`.
    pub family: &'static str,
    pub input: InputShape,
    pub description: &'static str,
    /// The Python library its numbers are checked against.
    pub peer: &'static str,
    /// JSON Schema of its parameters.
    pub parameters: fn() -> Value,
}

fn horizon() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 500, "default": 12, "description": "Periods forecast"})
}

pub const CATALOGUE: &[ModelInfo] = &[
    ModelInfo {
        key: "holt_winters",
        name: "Holt-Winters exponential smoothing",
        family: "forecasting",
        input: InputShape::Series,
        description: "Level, optional (damped) additive trend and additive or multiplicative season, fitted by least squares; point forecasts.",
        peer: "statsmodels ExponentialSmoothing",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
            "trend": {"type": "boolean", "default": false},
            "damped": {"type": "boolean", "default": false, "description": "Needs trend"},
            "seasonal": {"enum": ["none", "additive", "multiplicative"], "default": "none"},
            "period": {"type": "integer", "minimum": 2, "maximum": 366, "description": "Season length, with a season"},
            "horizon": horizon()},
            "allOf": [
                {"if": {"required": ["damped"], "properties": {"damped": {"const": true}}},
                 "then": {"required": ["trend"], "properties": {"trend": {"const": true}}}},
                {"if": {"required": ["seasonal"], "properties": {"seasonal": {"enum": ["additive", "multiplicative"]}}},
                 "then": {"required": ["period"]}}
            ]})
        },
    },
    ModelInfo {
        key: "arima",
        name: "ARIMA / SARIMA",
        family: "forecasting",
        input: InputShape::Series,
        description: "Seasonal ARIMA fitted by exact maximum likelihood; forecasts with Gaussian prediction intervals.",
        peer: "statsmodels SARIMAX",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
            "p": {"type": "integer", "minimum": 0, "maximum": 12, "default": 1},
            "d": {"type": "integer", "minimum": 0, "maximum": 2, "default": 0},
            "q": {"type": "integer", "minimum": 0, "maximum": 12, "default": 0},
            "seasonal_p": {"type": "integer", "minimum": 0, "maximum": 2, "default": 0},
            "seasonal_d": {"type": "integer", "minimum": 0, "maximum": 1, "default": 0},
            "seasonal_q": {"type": "integer", "minimum": 0, "maximum": 2, "default": 0},
            "period": {"type": "integer", "minimum": 0, "maximum": 52, "default": 0},
            "trend": {"enum": ["none", "constant", "drift"], "default": "none"},
            "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.95},
            "horizon": horizon()},
            "allOf": [
                {"if": {"anyOf": [
                    {"required": ["seasonal_p"], "properties": {"seasonal_p": {"minimum": 1}}},
                    {"required": ["seasonal_d"], "properties": {"seasonal_d": {"minimum": 1}}},
                    {"required": ["seasonal_q"], "properties": {"seasonal_q": {"minimum": 1}}}]},
                 "then": {"required": ["period"], "properties": {"period": {"minimum": 2}}}},
                {"if": {"required": ["trend"], "properties": {"trend": {"const": "constant"}}},
                 "then": {"properties": {"d": {"const": 0}, "seasonal_d": {"const": 0}}}},
                {"if": {"required": ["trend"], "properties": {"trend": {"const": "drift"}}},
                 "then": {"required": ["d"], "properties": {"d": {"const": 1}, "seasonal_d": {"const": 0}}}}
            ]})
        },
    },
    ModelInfo {
        key: "isolation_forest",
        name: "Isolation forest",
        family: "anomaly_detection",
        input: InputShape::Features,
        description: "Anomaly scores in (0, 1] (higher is more anomalous) of each observation (a value, or a row of features), seeded.",
        peer: "scikit-learn IsolationForest (score_samples, negated)",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
                "trees": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                "max_samples": {"type": "integer", "minimum": 2, "maximum": 4096, "default": 256},
                "seed": {"type": "integer", "minimum": 0, "maximum": 9007199254740991_u64, "default": 0},
                "top": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5}}})
        },
    },
    ModelInfo {
        key: "robust_z",
        name: "Robust z-score",
        family: "anomaly_detection",
        input: InputShape::Series,
        description: "Distance from the median in normal-consistent MADs; outliers beyond the threshold (Iglewicz-Hoaglin 3.5).",
        peer: "scipy.stats median_abs_deviation(scale='normal')",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
                "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 3.5}}})
        },
    },
    ModelInfo {
        key: "ledoit_wolf",
        name: "Ledoit-Wolf shrunk covariance",
        family: "covariance",
        input: InputShape::Panel,
        description: "The sample covariance shrunk towards a scaled identity with the Ledoit-Wolf (2004) intensity.",
        peer: "scikit-learn LedoitWolf",
        parameters: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    },
    ModelInfo {
        key: "historical_var",
        name: "Historical value at risk",
        family: "risk",
        input: InputShape::Series,
        description: "VaR as the interpolated percentile of returns and CVaR as the mean beyond it.",
        peer: "empyrical value_at_risk / conditional_value_at_risk",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
                "cutoff": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.05}}})
        },
    },
    ModelInfo {
        key: "parametric_var",
        name: "Parametric (Gaussian) value at risk",
        family: "risk",
        input: InputShape::Series,
        description: "VaR and CVaR of a normal distribution with the returns' sample mean and standard deviation.",
        peer: "scipy.stats.norm",
        parameters: || {
            json!({"type": "object", "additionalProperties": false, "properties": {
                "cutoff": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.05}}})
        },
    },
];

pub fn find(key: &str) -> Option<&'static ModelInfo> {
    CATALOGUE.iter().find(|m| m.key == key)
}

/// How one instrument's prices become a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    Price,
    Return,
}

/// What a model run reads: a series (`values`, or one instrument) or a panel (`returns`, or instruments).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelInput {
    /// A series given inline, oldest first.
    #[schema(value_type = Option<Vec<fiscus_domain::fields::Magnitude>>, min_items = 3, max_items = 20000)]
    pub values: Option<Vec<f64>>,
    /// Returns of several assets given inline (panel models).
    pub returns: Option<ReturnColumns>,
    /// Instruments: one for a series model, one or more for a panel model (their daily returns).
    #[schema(min_items = 1, max_items = 500)]
    pub instruments: Option<Vec<String>>,
    /// For one instrument's series: its adjusted closes (`price`, default) or simple daily returns
    /// (`return`).
    pub transform: Option<Transform>,
    #[schema(format = Date, example = "2015-01-01")]
    pub start: Option<String>,
    #[schema(format = Date, example = "2017-12-31")]
    pub end: Option<String>,
    /// Feature-set models: features of the catalogue (`GET /quant/features`) computed from one instrument's
    /// prices, one column each, on the dates where every one has a value.
    #[schema(min_items = 1, max_items = 8, example = json!(["return_1d", "volatility_21d"]))]
    pub features: Option<Vec<String>>,
    /// Feature-set models: a feature set given inline, each feature's observations by name, oldest first
    /// (aligned on their last value, as returns are: the observations every feature has).
    pub columns: Option<FeatureColumns>,
}

/// Features given inline: each feature's observations by name, oldest first, each finite and at most 1e12
/// in size (`openapi/rules.rs`). Columns of different lengths are aligned on their last value; the rows are
/// the observations every feature has.
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(transparent)]
#[schema(example = json!({"amount": [120.5, 98.0, 15000.0], "hour": [9.0, 10.0, 3.0]}))]
pub struct FeatureColumns(pub std::collections::BTreeMap<String, Vec<f64>>);

/// A run of one model.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelRunRequest {
    pub input: ModelInput,
    /// The model's parameters (its `parameters` schema in the catalogue); defaults apply to what is left out.
    #[schema(value_type = Option<Object>)]
    pub parameters: Option<Value>,
}

/// A series as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Series {
    Inline { values: Vec<f64> },
    DataPlane { prices: PinnedPrices, transform: Transform },
}

/// A feature set as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum FeatureSet {
    Inline {
        columns: Vec<String>,
        rows: Vec<Vec<f64>>,
    },
    /// Features computed from the instrument's whole pinned series (a window near `start` sees its history),
    /// kept from `start` to `end`.
    DataPlane {
        prices: PinnedPrices,
        features: Vec<String>,
    },
}

/// A model input as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    Series(Series),
    Panel(Returns),
    Features(FeatureSet),
}

/// Each model's parameters, every default applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum Parameters {
    HoltWinters {
        #[serde(default)]
        trend: bool,
        #[serde(default)]
        damped: bool,
        #[serde(default = "none")]
        seasonal: String,
        #[serde(default)]
        period: usize,
        #[serde(default = "twelve")]
        horizon: usize,
    },
    Arima {
        #[serde(default = "one")]
        p: usize,
        #[serde(default)]
        d: usize,
        #[serde(default)]
        q: usize,
        #[serde(default)]
        seasonal_p: usize,
        #[serde(default)]
        seasonal_d: usize,
        #[serde(default)]
        seasonal_q: usize,
        #[serde(default)]
        period: usize,
        #[serde(default = "none")]
        trend: String,
        #[serde(default = "ninety_five")]
        level: f64,
        #[serde(default = "twelve")]
        horizon: usize,
    },
    IsolationForest {
        #[serde(default = "hundred")]
        trees: usize,
        #[serde(default = "two_five_six")]
        max_samples: usize,
        #[serde(default)]
        seed: u64,
        #[serde(default = "five")]
        top: usize,
    },
    RobustZ {
        #[serde(default = "three_and_a_half")]
        threshold: f64,
    },
    LedoitWolf {},
    HistoricalVar {
        #[serde(default = "five_percent")]
        cutoff: f64,
    },
    ParametricVar {
        #[serde(default = "five_percent")]
        cutoff: f64,
    },
    /// A promoted LQM checkpoint, pinned whole when the run is submitted: the run uses exactly the fitted
    /// parameters an operator promoted, whatever is promoted by the time it runs. Never drawn from a
    /// request's `parameters` (the path names a model, and `lqm` is no model's key).
    Lqm {
        model_id: String,
        checkpoint_id: String,
        checkpoint_hash: String,
        algorithm: fiscus_domain::lqm::family::Algorithm,
        hyperparameters: Value,
        fitted: Value,
        #[serde(default = "twelve")]
        horizon: usize,
    },
}

fn none() -> String {
    "none".into()
}
fn one() -> usize {
    1
}
fn five() -> usize {
    5
}
fn twelve() -> usize {
    12
}
fn hundred() -> usize {
    100
}
fn two_five_six() -> usize {
    256
}
fn ninety_five() -> f64 {
    0.95
}
fn three_and_a_half() -> f64 {
    3.5
}
fn five_percent() -> f64 {
    0.05
}

/// A model run as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRun {
    pub parameters: Parameters,
    pub input: Input,
}

fn invalid(field: &'static str, message: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, message.into())])
}

/// Checks parameters against the model's rules (the ranges its schema states).
fn check(p: &Parameters) -> Result<(), Failure> {
    let bad = |field: &'static str, m: &str| Err(invalid(field, format!("parameters.{field}: {m}")));
    match p {
        Parameters::HoltWinters { damped, trend, seasonal, period, horizon } => {
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
            if *damped && !*trend {
                return bad("damped", "a damped model needs a trend");
            }
            match seasonal.as_str() {
                "none" => {}
                "additive" | "multiplicative" if (2..=366).contains(period) => {}
                "additive" | "multiplicative" => return bad("period", "from 2 to 366 with a season"),
                _ => return bad("seasonal", "none, additive or multiplicative"),
            }
        }
        Parameters::Arima { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend, level, horizon } => {
            // The state dimension (max(p + P·s, q + Q·s + 1), at most 128 here) prices each likelihood at
            // O(n·r²); a model with more parameters than the series can identify is the engine's
            // `insufficient_data`, and every fit has the engine's budget.
            if *p > 12 || *q > 12 || *d > 2 || *seasonal_p > 2 || *seasonal_q > 2 || *seasonal_d > 1 || *period > 52 {
                return bad("p", "p, q at most 12; d at most 2; P, Q at most 2; D at most 1; period at most 52");
            }
            if !["none", "constant", "drift"].contains(&trend.as_str()) {
                return bad("trend", "none, constant or drift");
            }
            // The engine's rules (`fiscus_quant::forecast::arima::fit`), checked before anything is queued.
            if (*seasonal_p > 0 || *seasonal_q > 0 || *seasonal_d > 0) && *period < 2 {
                return bad("period", "a seasonal part needs a period of at least 2");
            }
            match (trend.as_str(), *d, *seasonal_d) {
                ("constant", 0, 0) | ("drift", 1, 0) | ("none", _, _) => {}
                _ => {
                    return bad("trend", "a constant needs d = seasonal_d = 0 and a drift needs d = 1, seasonal_d = 0");
                }
            }
            if !(level.is_finite() && *level > 0.0 && *level < 1.0) {
                return bad("level", "between 0 and 1");
            }
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
        }
        Parameters::IsolationForest { trees, max_samples, seed, top } => {
            if !(1..=500).contains(trees) || !(2..=4096).contains(max_samples) || *seed > (1 << 53) - 1 {
                return bad("trees", "trees 1 to 500, max_samples 2 to 4096, seed 0 to 2^53 - 1");
            }
            if !(1..=100).contains(top) {
                return bad("top", "from 1 to 100");
            }
        }
        Parameters::RobustZ { threshold } => {
            if !(threshold.is_finite() && *threshold > 0.0 && *threshold <= 100.0) {
                return bad("threshold", "above 0 and at most 100");
            }
        }
        Parameters::LedoitWolf {} => {}
        Parameters::Lqm { horizon, .. } => {
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
        }
        Parameters::HistoricalVar { cutoff } | Parameters::ParametricVar { cutoff } => {
            if !(cutoff.is_finite() && *cutoff > 0.0 && *cutoff < 1.0) {
                return bad("cutoff", "between 0 and 1");
            }
        }
    }
    Ok(())
}

/// Checks a run of `model` and pins its input.
pub async fn pin(
    state: &Services,
    workspace_id: &str,
    model: &ModelInfo,
    r: ModelRunRequest,
) -> Result<ModelRun, Failure> {
    let parameters = parameters_of(model.key, r.parameters)?;
    let input = pin_input(state, workspace_id, model.input, r.input).await?;
    Ok(ModelRun { parameters, input })
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

/// The parameters of the catalogue's model `key`, every default applied and checked.
fn parameters_of(key: &str, given: Option<Value>) -> Result<Parameters, Failure> {
    let mut given = match given {
        None => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(invalid("parameters", "must be an object")),
    };
    if given.contains_key("model") {
        return Err(invalid("parameters", "`model` is not a parameter (the path names the model)"));
    }
    given.insert("model".into(), Value::String(key.into()));
    let parameters: Parameters = serde_json::from_value(Value::Object(given))
        .map_err(|e| invalid("parameters", format!("{e} (see the model's parameters in GET /quant/models/{key})")))?;
    check(&parameters)?;
    Ok(parameters)
}

/// A promoted model's only parameter, `horizon` (default 12).
fn lqm_horizon(given: Option<&Value>) -> Result<usize, Failure> {
    match given {
        None => Ok(12),
        Some(Value::Object(m)) => {
            if let Some(k) = m.keys().find(|k| *k != "horizon") {
                return Err(invalid(
                    "parameters",
                    format!("`{k}` is not a parameter of a promoted model (it takes horizon)"),
                ));
            }
            match m.get("horizon") {
                None => Ok(12),
                Some(v) => Ok(v
                    .as_u64()
                    .filter(|h| (1..=500).contains(h))
                    .ok_or_else(|| invalid("parameters", "horizon: from 1 to 500"))?
                    as usize),
            }
        }
        Some(_) => Err(invalid("parameters", "must be an object")),
    }
}

fn parameters_fit(key: &str, given: Option<&Value>) -> bool {
    parameters_of(key, given.cloned()).is_ok()
}

fn lqm_parameters_fit(given: Option<&Value>) -> bool {
    lqm_horizon(given).is_ok()
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
    state: &Services,
    workspace_id: &str,
    checkpoint: &fiscus_store::lqm::training::Checkpoint,
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
    let input = pin_input(state, workspace_id, InputShape::Series, r.input).await?;
    Ok(ModelRun { parameters, input })
}

/// Checks a run's input for a model reading `shape` and pins it.
async fn pin_input(state: &Services, workspace_id: &str, shape: InputShape, i: ModelInput) -> Result<Input, Failure> {
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
        InputShape::Features if feature_set => Input::Features(pin_features(state, workspace_id, i).await?),
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
                        fiscus_kernel::inputs::pin(state, workspace_id, "input", &list, i.start, i.end).await?;
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
                fiscus_kernel::inputs::returns_of(state, workspace_id, i.instruments, i.start, i.end, i.returns)
                    .await?,
            )
        }
    })
}

/// Checks and pins a feature set: inline `columns`, or `features` of one instrument.
async fn pin_features(state: &Services, workspace_id: &str, i: ModelInput) -> Result<FeatureSet, Failure> {
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
                if fiscus_domain::data::features::find(key).is_none() {
                    return Err(invalid("input", format!("no feature `{key}` (see GET /quant/features)")));
                }
                if features[..n].contains(key) {
                    return Err(invalid("input", format!("feature `{key}` is named twice")));
                }
            }
            let prices = fiscus_kernel::inputs::pin(state, workspace_id, "input", &list, i.start, i.end).await?;
            Ok(FeatureSet::DataPlane { prices, features })
        }
        _ => Err(invalid("input", "give columns, or features with exactly one instrument")),
    }
}

/// The loaded input.
pub enum Loaded {
    Series { values: Vec<f64>, dates: Option<Vec<String>> },
    Panel(fiscus_kernel::inputs::LoadedReturns),
    Features { columns: Vec<String>, rows: Vec<Vec<f64>>, dates: Option<Vec<String>> },
}

/// Each feature over the instrument's whole series, then the dates from `start` to `end` where every one
/// has a value.
async fn load_features(
    state: &Services,
    workspace_id: &str,
    prices: &PinnedPrices,
    features: &[String],
) -> Result<Loaded, Failure> {
    let whole = PinnedPrices { instruments: prices.instruments.clone(), start: None, end: None };
    let panel = fiscus_kernel::inputs::load(state, workspace_id, &whole).await?;
    let series: Vec<f64> = panel.prices.iter().map(|r| r[0]).collect();
    let mut columns = Vec::with_capacity(features.len());
    for key in features {
        let definition = fiscus_domain::data::features::find(key)
            .ok_or_else(|| Failure::internal(format!("a pinned feature `{key}` is not in the catalogue")))?;
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

impl ModelRun {
    pub fn size(&self) -> u64 {
        1
    }

    /// Model runs are answered in the request, except ARIMA fits (their likelihood search can take seconds).
    pub fn small(&self) -> bool {
        !matches!(self.parameters, Parameters::Arima { .. })
    }

    pub async fn load(&self, state: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        match &self.input {
            Input::Series(Series::Inline { values }) => Ok(Loaded::Series { values: values.clone(), dates: None }),
            Input::Series(Series::DataPlane { prices, transform }) => {
                let panel = fiscus_kernel::inputs::load(state, workspace_id, prices).await?;
                let (values, dates) = match transform {
                    Transform::Price => (panel.prices.iter().map(|r| r[0]).collect(), panel.dates),
                    Transform::Return => {
                        (panel.returns().iter().map(|r| r[0]).collect(), panel.dates.into_iter().skip(1).collect())
                    }
                };
                Ok(Loaded::Series { values, dates: Some(dates) })
            }
            Input::Panel(returns) => Ok(Loaded::Panel(returns.load(state, workspace_id).await?)),
            Input::Features(FeatureSet::Inline { columns, rows }) => {
                Ok(Loaded::Features { columns: columns.clone(), rows: rows.clone(), dates: None })
            }
            Input::Features(FeatureSet::DataPlane { prices, features }) => {
                load_features(state, workspace_id, prices, features).await
            }
        }
    }

    pub fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        let out = match (&self.parameters, data) {
            (
                Parameters::HoltWinters { trend, damped, seasonal, period, horizon },
                Loaded::Series { values, dates },
            ) => {
                let season = match seasonal.as_str() {
                    "additive" => Some(Season::Additive { period: *period }),
                    "multiplicative" => Some(Season::Multiplicative { period: *period }),
                    _ => None,
                };
                let spec = HoltWintersSpec { trend: *trend, damped: *damped, season };
                let fit = fiscus_quant::forecast::fit_holt_winters(&values, spec)?;
                json!({
                    "forecast": fit.forecast(*horizon),
                    "smoothing": {"alpha": fit.smoothing.alpha, "beta": fit.smoothing.beta, "gamma": fit.smoothing.gamma, "phi": fit.smoothing.phi},
                    "sse": fit.sse, "aic": fit.aic(), "observations": values.len(),
                    "last_date": dates.and_then(|d| d.last().cloned()),
                })
            }
            (
                Parameters::Arima { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend, level, horizon },
                Loaded::Series { values, dates },
            ) => {
                let trend = match trend.as_str() {
                    "constant" => ArimaTrend::Constant,
                    "drift" => ArimaTrend::Drift,
                    _ => ArimaTrend::None,
                };
                let spec = ArimaSpec {
                    p: *p,
                    d: *d,
                    q: *q,
                    seasonal_p: *seasonal_p,
                    seasonal_d: *seasonal_d,
                    seasonal_q: *seasonal_q,
                    period: *period,
                    trend,
                };
                let fit = arima::fit(&values, spec)?;
                control.check()?;
                let f = fit.forecast(*horizon, *level)?;
                json!({
                    "forecast": f.mean, "standard_error": f.standard_error, "lower": f.lower, "upper": f.upper,
                    "level": level,
                    "coefficients": {"trend": fit.trend_coefficient, "ar": fit.ar, "ma": fit.ma,
                                     "seasonal_ar": fit.seasonal_ar, "seasonal_ma": fit.seasonal_ma, "sigma2": fit.sigma2},
                    "log_likelihood": fit.log_likelihood, "aic": fit.aic(), "bic": fit.bic(), "observations": fit.nobs,
                    "last_date": dates.and_then(|d| d.last().cloned()),
                })
            }
            (Parameters::IsolationForest { trees, max_samples, seed, top }, Loaded::Series { values, dates }) => {
                let x = Matrix::from_rows(&values.iter().map(|v| vec![*v]).collect::<Vec<_>>())?;
                let forest = IsolationForest::fit(
                    &x,
                    IsolationForestConfig { trees: *trees, max_samples: *max_samples, seed: *seed },
                )?;
                let scores = forest.scores(&x)?;
                let most = IsolationForest::top_k(&scores, *top);
                let anomalies: Vec<Value> = most
                    .iter()
                    .map(|i| json!({"index": i, "value": values[*i], "score": scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))}))
                    .collect();
                json!({"scores": scores, "most_anomalous": anomalies, "observations": values.len()})
            }
            (
                Parameters::IsolationForest { trees, max_samples, seed, top },
                Loaded::Features { columns, rows, dates },
            ) => {
                let x = Matrix::from_rows(&rows)?;
                let forest = IsolationForest::fit(
                    &x,
                    IsolationForestConfig { trees: *trees, max_samples: *max_samples, seed: *seed },
                )?;
                let scores = forest.scores(&x)?;
                let most = IsolationForest::top_k(&scores, *top);
                let anomalies: Vec<Value> = most
                    .iter()
                    .map(|i| {
                        let values: serde_json::Map<String, Value> =
                            columns.iter().zip(&rows[*i]).map(|(c, v)| (c.clone(), json!(v))).collect();
                        json!({"index": i, "values": values, "score": scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))})
                    })
                    .collect();
                json!({
                    "columns": columns, "scores": scores, "most_anomalous": anomalies, "observations": rows.len(),
                    "first_date": dates.as_ref().and_then(|d| d.first()), "last_date": dates.as_ref().and_then(|d| d.last()),
                })
            }
            (Parameters::RobustZ { threshold }, Loaded::Series { values, dates }) => {
                let z = fiscus_quant::anomaly::robust_z::robust_z_scores(&values)?;
                let outliers: Vec<Value> = z
                    .outliers(*threshold)
                    .iter()
                    .map(|i| json!({"index": i, "value": values[*i], "z": z.scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))}))
                    .collect();
                json!({"median": z.median, "scale": z.scale, "scores": z.scores, "outliers": outliers})
            }
            (Parameters::LedoitWolf {}, Loaded::Panel(data)) => {
                let m = Matrix::from_rows(&data.rows)?;
                let s = fiscus_quant::covariance::ledoit_wolf(&m)?;
                let rows: Vec<Vec<f64>> = (0..s.matrix.rows()).map(|r| s.matrix.row(r).to_vec()).collect();
                json!({
                    "assets": data.assets.iter().map(|(a, _)| a).collect::<Vec<_>>(), "covariance": rows,
                    "shrinkage": s.shrinkage, "target_mean_variance": s.target_mean_variance, "periods": data.rows.len(),
                })
            }
            (Parameters::HistoricalVar { cutoff }, Loaded::Series { values, .. }) => {
                let t = fiscus_quant::value_at_risk::historical(&values, *cutoff)?;
                json!({"cutoff": cutoff, "var": t.var, "cvar": t.cvar, "observations": values.len()})
            }
            (Parameters::ParametricVar { cutoff }, Loaded::Series { values, .. }) => {
                let t = fiscus_quant::value_at_risk::parametric(&values, *cutoff)?;
                json!({"cutoff": cutoff, "var": t.var, "cvar": t.cvar, "observations": values.len()})
            }
            (
                Parameters::Lqm { algorithm, hyperparameters, fitted, horizon, checkpoint_hash, .. },
                Loaded::Series { values, dates },
            ) => {
                let mut out = crate::lqm::fit::apply(*algorithm, hyperparameters, fitted, &values, *horizon)?;
                out["checkpoint_hash"] = json!(checkpoint_hash);
                out["last_date"] = json!(dates.and_then(|d| d.last().cloned()));
                out
            }
            _ => return Err(Refusal::Failure(Failure::internal("a model run's input does not fit its model"))),
        };
        control.set_progress(1, 1);
        Ok(out)
    }
}

//! The catalogue of the engine's statistical models: each family with its peer, the input it reads and the
//! JSON Schema of its parameters.

use super::*;

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
    pub(super) fn described(self) -> &'static str {
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

pub(super) fn horizon() -> Value {
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

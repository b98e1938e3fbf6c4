//! What a model run is asked with (the API's request schemas) and what its input is once pinned.

use super::*;

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

//! The feature catalogue: derived series that `GET /quant/features/{key}/values` computes from an
//! instrument's observed prices (the adjusted close where the dataset has one, else the close), each value
//! traceable to the dataset version it was computed from. The expressions are what pandas users write; the
//! engine's functions are checked against them (`fiscus_quant::features`).

use super::frequency::Frequency;
use serde::Serialize;

/// How a feature is computed from a price series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formula {
    SimpleReturn,
    LogReturn,
    /// Rolling sample standard deviation of simple returns over `window` periods, annualised by
    /// `sqrt(periods_per_year)`.
    RollingVolatility {
        window: usize,
        periods_per_year: u32,
    },
    /// `p[t-skip] / p[t-lookback] - 1`.
    Momentum {
        skip: usize,
        lookback: usize,
    },
    Drawdown,
}

#[derive(Clone, Copy, Debug, Serialize, utoipa::ToSchema)]
pub struct FeatureDefinition {
    #[schema(example = "volatility_21d")]
    pub key: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The same computation in pandas, on `p`, the price series.
    #[schema(example = "p.pct_change().rolling(21).std() * np.sqrt(252)")]
    pub pandas: &'static str,
    /// What one value is: `ratio` (0.01 is 1 %) or `annualised ratio`.
    pub unit: &'static str,
    /// Observations of history the first value needs (it is absent before).
    pub warmup: usize,
    /// The frequency of prices the feature is defined on, when it has one: `daily` for windows counted in
    /// trading days (21 is a month, 252 a year) and annualised by √252. On prices of another frequency its
    /// values are refused (409 `conflict` naming both), never computed over stretched windows.
    #[schema(example = "daily")]
    pub frequency: Option<Frequency>,
    #[serde(skip)]
    pub formula: Formula,
}

impl FeatureDefinition {
    /// Why the feature has no values on prices of `frequency`, if it has none.
    pub fn refuses(&self, frequency: Frequency) -> Option<String> {
        let defined = self.frequency?;
        (defined != frequency).then(|| {
            format!(
                "{} is defined on {} prices (its windows count trading days); these prices are {}",
                self.key,
                defined.as_str(),
                frequency.as_str()
            )
        })
    }
}

pub const FEATURES: [FeatureDefinition; 5] = [
    FeatureDefinition {
        key: "return_1d",
        title: "Daily simple return",
        description: "The change of the price from one observation to the next, p[t] / p[t-1] - 1.",
        pandas: "p.pct_change()",
        unit: "ratio",
        warmup: 1,
        frequency: Some(Frequency::Daily),
        formula: Formula::SimpleReturn,
    },
    FeatureDefinition {
        key: "log_return_1d",
        title: "Daily log return",
        description: "The natural log of the price ratio between consecutive observations, ln(p[t] / p[t-1]).",
        pandas: "np.log(p).diff()",
        unit: "ratio",
        warmup: 1,
        frequency: Some(Frequency::Daily),
        formula: Formula::LogReturn,
    },
    FeatureDefinition {
        key: "volatility_21d",
        title: "21-day rolling volatility, annualised",
        description: "The sample standard deviation (n - 1) of the last 21 daily simple returns, times sqrt(252).",
        pandas: "p.pct_change().rolling(21).std() * np.sqrt(252)",
        unit: "annualised ratio",
        warmup: 21,
        frequency: Some(Frequency::Daily),
        formula: Formula::RollingVolatility { window: 21, periods_per_year: 252 },
    },
    FeatureDefinition {
        key: "momentum_12_1",
        title: "12-1 month momentum",
        description: "The return over the last 252 observations leaving out the latest 21 (about twelve months \
                      skipping the most recent one), p[t-21] / p[t-252] - 1.",
        pandas: "p.shift(21) / p.shift(252) - 1",
        unit: "ratio",
        warmup: 252,
        frequency: Some(Frequency::Daily),
        formula: Formula::Momentum { skip: 21, lookback: 252 },
    },
    FeatureDefinition {
        key: "drawdown",
        title: "Drawdown from the running peak",
        description: "How far the price is below its highest value so far in the series, p[t] / max(p[0..t]) - 1 \
                      (0 at a new high).",
        pandas: "p / p.cummax() - 1",
        unit: "ratio",
        warmup: 0,
        frequency: None,
        formula: Formula::Drawdown,
    },
];

pub fn find(key: &str) -> Option<&'static FeatureDefinition> {
    FEATURES.iter().find(|f| f.key == key)
}

//! What a model does (its task family) and the engine families that can be trained for it.

use serde::{Deserialize, Serialize};

/// The task a model is registered for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskFamily {
    /// Point forecasts of a series.
    Forecasting,
    /// Scores observations against what the model learnt as normal.
    AnomalyDetection,
    /// Tail risk (value at risk) of a return series.
    Risk,
}

impl TaskFamily {
    pub const ALL: [TaskFamily; 3] = [TaskFamily::Forecasting, TaskFamily::AnomalyDetection, TaskFamily::Risk];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskFamily::Forecasting => "forecasting",
            TaskFamily::AnomalyDetection => "anomaly_detection",
            TaskFamily::Risk => "risk",
        }
    }

    pub fn parse(s: &str) -> Option<TaskFamily> {
        TaskFamily::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// The algorithm trained when a retraining request names none.
    pub fn default_algorithm(self) -> Algorithm {
        match self {
            TaskFamily::Forecasting => Algorithm::HoltWinters,
            TaskFamily::AnomalyDetection => Algorithm::RobustZ,
            TaskFamily::Risk => Algorithm::HistoricalVar,
        }
    }
}

/// An engine family a checkpoint is fitted with (the statistical catalogue's key of the same name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LqmAlgorithm)]
pub enum Algorithm {
    /// Holt-Winters exponential smoothing, its smoothing parameters and initial state fitted by least
    /// squares.
    HoltWinters,
    /// The median and normal-consistent MAD of the training data, and a threshold.
    RobustZ,
    /// The empirical VaR and CVaR of the training returns.
    HistoricalVar,
    /// The mean and standard deviation of the training returns (Gaussian VaR and CVaR).
    ParametricVar,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] =
        [Algorithm::HoltWinters, Algorithm::RobustZ, Algorithm::HistoricalVar, Algorithm::ParametricVar];

    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::HoltWinters => "holt_winters",
            Algorithm::RobustZ => "robust_z",
            Algorithm::HistoricalVar => "historical_var",
            Algorithm::ParametricVar => "parametric_var",
        }
    }

    pub fn parse(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.as_str() == s)
    }

    pub fn family(self) -> TaskFamily {
        match self {
            Algorithm::HoltWinters => TaskFamily::Forecasting,
            Algorithm::RobustZ => TaskFamily::AnomalyDetection,
            Algorithm::HistoricalVar | Algorithm::ParametricVar => TaskFamily::Risk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_family_has_a_default_of_its_own() {
        for f in TaskFamily::ALL {
            assert_eq!(TaskFamily::parse(f.as_str()), Some(f));
            assert_eq!(f.default_algorithm().family(), f);
        }
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.as_str()), Some(a));
        }
        assert_eq!(TaskFamily::parse("Forecasting"), None);
    }
}

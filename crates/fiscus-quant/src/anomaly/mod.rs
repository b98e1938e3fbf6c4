//! Anomaly detection: isolation forest (multivariate, e.g. transactions described by several features) and
//! the median/MAD robust z-score (one variable, or a series against its own trailing window).

pub mod isolation_forest;
pub mod robust_z;

pub use isolation_forest::{IsolationForest, IsolationForestConfig, average_path_length};
pub use robust_z::{RobustZ, robust_z_scores, trailing_robust_z_scores};

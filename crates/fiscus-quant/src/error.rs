//! The one error type of the crate. Callers match on the variant, so every way a computation can refuse its
//! input has its own variant instead of a message string.

use thiserror::Error;

/// Why a numeric function refused to return a result.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum QuantError {
    /// A required input had no elements.
    #[error("{what} is empty")]
    Empty { what: &'static str },
    /// An input held NaN or an infinity; nothing is ever silently skipped or filled in.
    #[error("{what} holds a non-finite value at index {index}")]
    NonFinite { what: &'static str, index: usize },
    /// Two inputs that must line up do not.
    #[error("{what} has length {got}, expected {expected}")]
    LengthMismatch { what: &'static str, expected: usize, got: usize },
    /// A parameter is outside the range where the computation means anything.
    #[error("invalid {name}: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// There are too few observations for the statistic asked for.
    #[error("{what} needs at least {needed} observations, got {got}")]
    InsufficientData { what: &'static str, needed: usize, got: usize },
    /// A matrix that must be positive (semi-)definite is not, e.g. a singular covariance.
    #[error("{what} is not positive definite")]
    NotPositiveDefinite { what: &'static str },
    /// A statistic is undefined for this input: its denominator is zero (e.g. zero volatility for a Sharpe
    /// ratio), or it is not a finite number because the arithmetic overflowed (inputs near 1e300). Returned
    /// instead of a NaN or an infinity.
    #[error("{what} is undefined: {reason}")]
    Undefined { what: &'static str, reason: &'static str },
    /// The constraints of an optimisation admit no solution. Reported instead of a best-effort answer.
    #[error("the problem is infeasible: {detail}")]
    Infeasible { detail: String },
    /// The objective of an optimisation is unbounded over the constraints.
    #[error("the problem is unbounded: {detail}")]
    Unbounded { detail: String },
    /// A solver or iterative method stopped without reaching its tolerance.
    #[error("{what} did not converge: {detail}")]
    NoConvergence { what: &'static str, detail: String },
    /// A valuation needed an observation (a price, an FX rate) that was not supplied.
    #[error("missing observation: {what}")]
    MissingObservation { what: String },
    /// A request that is well formed but cannot be honoured, e.g. relieving more shares than are held.
    #[error("{0}")]
    Rejected(String),
    /// An iterative fit or optimisation used up its counted iterations or work ([`crate::Budget`]) before it
    /// finished. No partial result is returned; the same input always ends here.
    #[error("{what} exceeded its budget of {limit}")]
    BudgetExceeded { what: &'static str, limit: String },
    /// An iterative computation ran past the wall-clock safety net ([`crate::Budget::max_duration`]) before
    /// its counted budget ran out: the machine was slow or busy, not the input too large. Worth retrying.
    #[error("{what} stopped at its safety timeout of {limit} before its work budget ran out")]
    SafetyTimeout { what: &'static str, limit: String },
}

/// Result alias used by every public function of the crate.
pub type Result<T> = std::result::Result<T, QuantError>;

//! What the numeric engine's refusals are as API problems, one mapping for every area that computes (quant
//! jobs, investment analytics, LQM fits, taxes).

use fiscus_domain::compute::EngineReason;
use fiscus_domain::error_code::ErrorCode;
use fiscus_quant::QuantError;

use crate::governed::Failure;

/// A body the document allows whose sizes multiply past a limit of this service (409 `limit_exceeded`).
pub fn limit_exceeded(detail: String) -> Failure {
    Failure::refused(ErrorCode::LimitExceeded, detail)
}

/// The engine's refusal of a computation answered in the request: the problem [`engine_code`] chooses,
/// naming the engine's typed reason.
pub fn refused_by_engine(e: QuantError) -> Failure {
    Failure::Computation { code: engine_code(&e), engine_error: engine_error(&e), detail: e.to_string() }
}

/// The problem an engine refusal is. Bodies cannot be empty where the engine needs values (the schemas'
/// `minItems`), so an empty input is a data window that selected nothing: too little data, as too few values
/// are. Constraints no portfolio meets, results the values leave undefined (a dispersion of zero, a
/// compounding that overflows), covariances that are not positive definite and solvers the values stall meet
/// the data, not the body's form: 409, as is counted work that runs out. The rest is 422. This is the one
/// table (docs/standards.md shows it); every endpoint that computes answers through it.
pub fn engine_code(e: &QuantError) -> ErrorCode {
    match e {
        QuantError::Empty { .. } | QuantError::InsufficientData { .. } => ErrorCode::InsufficientData,
        // What the values given or held leave without an answer: constraints nothing meets, a result the
        // values leave undefined, a covariance no returns have, a solver the values stall. A request the
        // document allows that meets such values is 409, as with any state of the data; 422 stays for the
        // engine's refusals of the request's own shape.
        QuantError::Infeasible { .. }
        | QuantError::Undefined { .. }
        | QuantError::NotPositiveDefinite { .. }
        | QuantError::Unbounded { .. }
        | QuantError::NoConvergence { .. } => ErrorCode::Conflict,
        // The counted work ran out: a limit of this service that a request the document allows can pass,
        // as sizes whose product passes one do (409 `limit_exceeded`); the same request always ends so.
        QuantError::BudgetExceeded { .. } => ErrorCode::LimitExceeded,
        // The machine stalled, not the request: retry.
        QuantError::SafetyTimeout { .. } => ErrorCode::Unavailable,
        _ => ErrorCode::ComputationRefused,
    }
}

/// The engine's typed reason, as the API names it (`engine_error`, a failed job's `error.code`).
pub fn engine_error(e: &QuantError) -> EngineReason {
    match e {
        // An empty input is a window that selected nothing (bodies cannot be empty where the engine needs
        // values): the same cause as a window that selected too little, so the same reason, whichever
        // endpoint meets it first (`empty` is kept for jobs that failed before this rule).
        QuantError::Empty { .. } => EngineReason::InsufficientData,
        QuantError::NonFinite { .. } => EngineReason::NonFinite,
        QuantError::LengthMismatch { .. } => EngineReason::LengthMismatch,
        QuantError::InvalidParameter { .. } => EngineReason::InvalidParameter,
        QuantError::InsufficientData { .. } => EngineReason::InsufficientData,
        QuantError::NotPositiveDefinite { .. } => EngineReason::NotPositiveDefinite,
        QuantError::Undefined { .. } => EngineReason::Undefined,
        QuantError::Infeasible { .. } => EngineReason::Infeasible,
        QuantError::Unbounded { .. } => EngineReason::Unbounded,
        QuantError::NoConvergence { .. } => EngineReason::NoConvergence,
        QuantError::MissingObservation { .. } => EngineReason::MissingObservation,
        QuantError::Rejected(_) => EngineReason::Rejected,
        QuantError::BudgetExceeded { .. } => EngineReason::BudgetExceeded,
        QuantError::SafetyTimeout { .. } => EngineReason::SafetyTimeout,
    }
}

//! LQM Builder's application layer: registration, dataset contracts, retraining review, training,
//! evaluation, evidence packets, publication to the model hub, promotion, and QLMs composed from promoted
//! checkpoints.
//!
//! The API routes (`areas/lqm`), the console and the command line call these functions; each loads typed
//! records, asks the domain's lifecycle (`crate::rules::lqm::lifecycle`) whether the step is open, does
//! the numeric work with the engine (`fit`), and writes the sealed record with its audit event in one
//! transaction. A step refused by a closed gate writes nothing and names every reason code.

pub mod contracts;
pub mod data;
pub mod fit;
pub mod hub;
pub mod promotion;
pub mod qlm;
pub mod registry;
pub mod supply_chain;
pub mod training;
pub mod verify;

use crate::rules::lqm::lifecycle::{Operation, Reason};
use fiscus_domain::error_code::ErrorCode;
use serde_json::json;

use fiscus_kernel::governed::Failure;

pub use fiscus_kernel::governed::canonical;

/// 409 `lifecycle_gate_closed` naming the operation and every reason code.
pub fn gate_closed(op: Operation, reasons: &[Reason]) -> Failure {
    let codes: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
    Failure::refused_with(
        ErrorCode::LifecycleGateClosed,
        format!("{} is not open: {}", op.as_str(), codes.join(", ")),
        vec![("operation", json!(op.as_str())), ("reasons", json!(codes))],
    )
}

/// A computation on the pool that panicked (a bug) or met a closing pool: an internal error, never a result.
fn crashed<T>(r: Result<T, fiscus_kernel::pool::Crashed>) -> Result<T, Failure> {
    r.map_err(|_| Failure::internal("an LQM computation crashed"))
}

fn invalid(field: &'static str, message: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, message.into())])
}

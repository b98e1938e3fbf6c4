//! Financial Actions: the envelope and its hash, the control state machine, approval quorum and
//! independence, pre-trade checks, execution gates, machine delegations and autonomy evidence.
//!
//! Everything that decides lives here and is pure: the server loads facts, asks, and writes the outcome.
//! Every decision function fails closed: a missing fact is a refusal, never a pass.

pub mod approval;
pub mod autonomy;
pub mod checks;
pub mod delegation;
pub mod envelope;
pub mod gates;
pub mod settlement;
pub mod state;

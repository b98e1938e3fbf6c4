//! The rules a Financial Action obeys: the envelope and its hash, the moves of the control state,
//! approval policies, quorum and independence, pre-trade checks, execution gates, machine delegations, autonomy
//! evidence and settlement.
//!
//! Everything that decides lives here and is pure: the steps load facts, ask, and write the outcome. Every
//! decision function fails closed: a missing fact is a refusal, never a pass. The names other layers share
//! (an action's kind and control state) are `fiscus_domain::actions`; who people are, `fiscus_domain::people`.

pub mod approval;
pub mod autonomy;
pub mod bank_accounts;
pub mod bank_files;
pub mod checks;
pub mod delegation;
pub mod envelope;
pub mod gates;
pub mod policy;
pub mod settlement;
pub mod transitions;

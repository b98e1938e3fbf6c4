//! Background work any node may run (claims are exclusive across nodes): settlement through connectors,
//! webhook delivery and compute jobs.

pub mod compute;
pub mod settlement;
pub mod webhooks;
pub mod workflows;

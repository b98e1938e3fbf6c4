//! Background work any node may run (claims are exclusive across nodes): settlement through connectors, and
//! webhook delivery.

pub mod settlement;
pub mod webhooks;

//! Background work any node may run: settlement through connectors (claims are exclusive across nodes).

pub mod settlement;

//! Background work any node may run (claims are exclusive across nodes): settlement through connectors,
//! bank files out and bank messages in,
//! webhook delivery, compute jobs, workflow runs and queued Agent Space runs.

pub mod agent_runs;
pub mod bank_files;
pub mod compute;
pub mod settlement;
pub mod webhooks;
pub mod workflows;

//! Workflows: versioned definitions (a DAG of typed steps), the deterministic plan of a durable run, and
//! validation campaigns.

pub mod campaign;
pub mod definition;
pub mod gateway;
pub mod library;
pub mod records;
pub mod run;
pub mod value;

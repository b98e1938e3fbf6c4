//! The API's business areas, one module each, named after the spec. Handlers are thin: they parse, call the
//! store (and, for decisions, `fiscus-domain`), and shape the response.

pub mod actions;
pub mod agent_execution;
pub mod agents;
pub mod calls;
pub mod data;
pub mod generative;
pub mod intelligence;
pub mod investment;
pub mod lqm;
pub mod marketplace;
pub mod ml;
pub mod oauth;
pub mod planning;
pub mod platform;
pub mod quant;
pub mod workflows;

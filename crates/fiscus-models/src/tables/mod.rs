//! The models' own tables: compute jobs, LQMs (models, contracts, training, supply chain, QLMs), the model
//! hub's artifacts and research snapshots. Their queries live here, beside the steps that use them; their
//! schema (migrations and the sealed-table shapes every verifier reads) stays with the store, which runs one
//! migration history for every area.

pub mod compute;
pub mod lqm;
pub mod model_hub;
pub mod research;

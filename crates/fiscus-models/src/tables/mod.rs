//! The models' own tables: LQMs (models, contracts, training, supply chain, QLMs) and research snapshots. Their
//! queries live here, beside the steps that use them; their schema (migrations and the sealed-table shapes every
//! verifier reads) stays with the store, which runs one migration history for every area.

pub mod lqm;
pub mod research;

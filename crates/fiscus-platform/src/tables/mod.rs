//! The platform's own tables: the activity view over a workspace's recent changes. Their queries live here,
//! beside the steps that use them; their schema (migrations and the sealed-table shapes every verifier reads)
//! stays with the store, which runs one migration history for every area.

pub mod activity;

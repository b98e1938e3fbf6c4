//! The investment area's own tables: investment records, theme universes, model portfolios and their operations,
//! and collateral. Their queries live here, beside the steps that use them; their schema (migrations and the
//! sealed-table shapes every verifier reads) stays with the store, which runs one migration history for every
//! area.

pub mod collateral;
pub mod investment_records;
pub mod themes;

//! The Financial Actions' own tables: actions with their check versions, decisions and history, settlement
//! items and records, counterparties and bank-account versions, payment instructions and files, bank
//! messages and statement entries, machine identities and delegations with their budget reservations, and
//! the autonomy assessment's evidence, approval policies with the requirement each action got, and approver
//! groups. Their queries live here, beside the steps that use them; their schema
//! (migrations and the sealed-table descriptors every verifier reads) stays with the store, which runs one
//! migration history for every area.

pub mod actions;
pub mod approval_policies;
pub mod approver_groups;
pub mod autonomy_evidence;
pub mod bank_accounts;
pub mod bank_files;
pub mod delegations;
pub mod settlement;

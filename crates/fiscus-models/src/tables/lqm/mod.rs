//! LQM Builder and QLM records (see the migration `…_lqm.sql`).
//!
//! Every table keeps a record's content as canonical JSON (`body`, decoded here into the domain's record
//! types, `crate::rules::lqm::records`) beside the columns that relate records and hold their rules, and
//! every row is sealed. Reads check each row's seal in the same query ([`seals::select_sealed`]) and decode
//! by column name; an unknown stored value or a body that is not its record type is `Corrupt`, which
//! refuses.

pub mod models;
pub mod qlms;
pub mod supply_chain;
pub mod training;

pub(crate) use fiscus_store::sealed_records::*;

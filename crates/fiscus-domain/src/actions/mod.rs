//! Financial Actions: rules and shapes. (Proposals, approvals, gates and reconciliation arrive with the
//! governance work; autonomy assessment evidence is here first because it grants nothing.)

pub mod autonomy;

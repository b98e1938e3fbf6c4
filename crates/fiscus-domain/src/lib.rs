//! Pure rules and types of Fiscus.
//!
//! This crate holds everything that can be decided without IO: identifiers, scopes and the operation
//! catalogue, credential formats, evidence sealing (RFC 8785 + SHA-256), the audit chain's hashing and the
//! error-code table. It must never import axum, sqlx, tokio or anything that touches the network or disk,
//! so that every rule here can be unit-tested and reused by the server, the store and the CLI alike.

pub mod actions;
pub mod actor;
pub mod api;
pub mod audit;
pub mod audit_action;
pub mod bank_accounts;
pub mod banking;
pub mod catalogue;
pub mod clock;
pub mod compute;
pub mod credentials;
pub mod error_code;
pub mod events;
pub mod evidence;
pub mod execution_client;
pub mod fields;
pub mod ids;
pub mod ijson;
pub mod integrity;
pub mod jcs;
pub mod lqm;
pub mod money;
pub mod pagination;
pub mod people;
pub mod production_access;
pub mod public_keys;
pub mod scopes;
pub mod spdx;
pub mod tenancy;
pub mod tlog;
pub mod webhooks;
pub mod workflows;

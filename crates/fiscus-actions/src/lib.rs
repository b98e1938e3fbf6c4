//! Financial Actions, end to end: the governed steps that carry an action from proposal to settlement
//! (`steps`), the routes applications and agents call (`routes`), the connectors that execute an action
//! (`connectors`), the exactly-once ISO 20022 payment files written to the bank's drop folder
//! (`bank_files`), the bank's answers read from its inbound folder or posted (`bank_inbound`,
//! `bank_messages`), the counterparty master data imported from CSV (`master_data`), the rules an action
//! obeys (`rules`), the API views (`views`), and the queries of its own tables (`tables`).
//!
//! Decisions are not routes here: a person makes them at the console, which calls [`steps::decide`]. The
//! names other layers show (an action's kind and control state) are `fiscus_domain::actions`; everything
//! that decides an action, and its own rows, are here. An
//! action's state and history are written by one step, `steps::record`, which announces each change
//! through the kernel's `governed::record::announce` in the same transaction.
//!
//! Invariants: this crate depends on the kernel, the HTTP crate, the domain, the store and the ISO 20022
//! codec, never on another area; nothing here writes the outbox or the audit chain except through the
//! kernel's `governed::record` (a test reads `cargo metadata` and the sources).
//!
//! How it works, in prose: `README.md` beside this crate.

pub mod bank_files;
pub mod bank_inbound;
pub mod bank_messages;
pub mod connectors;
pub mod master_data;
pub mod routes;
pub mod rules;
pub mod steps;
pub mod tables;
pub mod verify;
pub mod views;

pub use routes::routes;
pub use steps::Loaded;

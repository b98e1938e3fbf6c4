//! The kernel: what every area's application layer and worker needs, and nothing of HTTP.
//!
//! - [`services::Services`]: the store, settings, keys, computation pools, caches, speech runtime and the
//!   hooks areas register, handed to every application function and worker;
//! - [`governed`]: the unit of governed change every area's steps go through (the caller, the failure, the
//!   one `announce` that writes an outbox event and its audit event together); the Financial Actions' own
//!   steps, their record step among them, are in `fiscus-actions`;
//! - [`book::Book`]: the seam through which a settlement moves the investment book;
//! - the pieces beside them: outbound HTTP screening, the secret key and sealed secrets, audit
//!   anchors, the CPU pools, the price series cache, the engine's refusals as problems.
//!
//! Invariants: this crate never depends on the web framework's routing, on the HTTP crate, or on any area
//! crate (a test reads `cargo metadata` and fails on such an edge). What an area must do when the kernel
//! acts (a settled order moving a book) is a trait here that the area implements.
//!
//! Build time: the governed steps, the evidence log's proofs and the checks the CLI runs return
//! `fiscus_store::Boxed` futures, so their bodies compile once, here, and not again in every area that
//! awaits them (an awaited `async fn` is compiled in the awaiting crate in a release build; docs/build-time.md).
//!
//! How it works, in prose: `README.md` beside this crate.

pub mod anchor;
pub mod book;
pub mod change_ledger;
pub mod cpu;
pub mod deliveries;
pub mod engine;
pub mod evidence;
pub mod folder;
pub mod governed;
pub mod inputs;
pub mod invocation_log;
pub mod once;
pub mod outbound;
pub mod pool;
pub mod progress;
pub mod quality;
pub mod secret_box;
pub mod secret_key;
pub mod series_cache;
pub mod services;
pub mod settings;
pub mod speech;
pub mod tables;
pub mod usage_log;
pub mod verify;

pub use services::Services;
pub use settings::Settings;

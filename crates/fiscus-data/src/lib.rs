//! The data area: what a workspace's finance data is and how it comes in.
//!
//! - [`import`]: the one import pipeline (CSV files into sealed, content-addressed dataset versions) behind
//!   `fiscus import`, the demo workspace and `POST /data/imports`;
//! - [`routes`]: the data plane's operations (datasets and provenance, instruments and prices, corporate
//!   actions and fundamentals, economic series, features, finance-core entities and journals, bank data,
//!   lineage exports).
//!
//! It depends on the kernel, the HTTP crate, the domain and the store, never on another area (a test reads
//! `cargo metadata`). Other areas read prices through the kernel's `inputs` and `series_cache`, not here.
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod import;
pub mod routes;

pub use routes::{routes as reads, writing_routes as writes};

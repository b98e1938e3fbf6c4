//! The investment area. Its application layer is this crate's root: the portfolio book read and marked to
//! observed prices, tax lots and loss harvesting, portfolio risk and benchmark comparison, construction,
//! scenarios, collateral, company lookups, universes and model portfolios (`themes`), governed AI
//! operations and their rebalances (`governed_operations`), orders and what their settlement does to the
//! book ([`orders::PortfolioBooks`], the kernel's settlement hook). The routes
//! ([`routes`]) parse and render; everything here takes typed input and answers a typed result or a
//! `Failure`.
//!
//! It depends on the kernel, the HTTP crate, the domain, the store and the engine, never on another area
//! (a test reads `cargo metadata`).
//!
//! Marks are observed prices only: an instrument without an observed price on or before the valuation
//! date, or a currency without an observed FX rate, is `market_data_unavailable` (503) naming it, and
//! nothing is substituted (the seed's rule for investment data).
//!
//! Why some types of the application layer derive `ToSchema`: a command that is a request body (a compute
//! request, a new call, a harvest request) is one type from the wire to the engine, checked once by serde
//! (`deny_unknown_fields`) and its schema's limits; a computation's answer is the result the response
//! carries, and where it is sealed (compute results, investment records) its hash is over that form. A wire
//! twin of each would be a field-by-field copy that can drift from what is sealed. Views that only present
//! stored rows live with the routes.
//!
//! How the area works, in prose: `README.md` beside this crate.

pub mod analytics;
pub mod book;
pub mod collateral;
pub mod company;
pub mod console;
pub mod construct;
pub mod evidence;
pub mod factors;
pub mod governed_operations;
pub mod orders;
pub mod records;
pub mod reports;
pub mod routes;
pub mod rules;
pub mod scenarios;
pub mod tables;
pub mod tax;
pub mod themes;

use fiscus_domain::error_code::ErrorCode;
use fiscus_kernel::governed::Failure;

/// A refusal for market data that is not there.
pub fn unavailable(what: impl Into<String>) -> Failure {
    Failure::refused(ErrorCode::MarketDataUnavailable, what)
}

/// A field error.
pub fn invalid(field: &'static str, why: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, why.into())])
}

/// `YYYY-MM-DD` that is a real date (the data plane's rule: `fiscus_data_core::rules::values::iso`).
pub fn is_date(s: &str) -> bool {
    fiscus_data_core::rules::values::iso(s).is_some_and(|d| d == s)
}

pub use routes::{routes as reads, writing_routes as writes};

//! Investment's application layer: the portfolio book read and marked to observed prices, tax lots and
//! loss harvesting, portfolio risk and benchmark comparison. The routes (`areas/investment/`) parse and
//! render; everything here takes typed input and answers a typed result or a `Failure`.
//!
//! Marks are observed prices only: an instrument without an observed price on or before the valuation
//! date, or a currency without an observed FX rate, is `market_data_unavailable` (503) naming it, and
//! nothing is substituted (the seed's rule for investment data).

pub mod analytics;
pub mod book;
pub mod collateral;
pub mod company;
pub mod construct;
pub mod evidence;
pub mod factors;
pub mod orders;
pub mod records;
pub mod reports;
pub mod scenarios;
pub mod tax;
pub mod themes;

use crate::governed::Failure;
use fiscus_domain::error_code::ErrorCode;

/// A refusal for market data that is not there.
pub fn unavailable(what: impl Into<String>) -> Failure {
    Failure::refused(ErrorCode::MarketDataUnavailable, what)
}

/// A field error.
pub fn invalid(field: &'static str, why: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, why.into())])
}

/// `YYYY-MM-DD` that is a real date (the data plane's rule: `fiscus_domain::data::values::iso`).
pub fn is_date(s: &str) -> bool {
    fiscus_domain::data::values::iso(s).is_some_and(|d| d == s)
}

//! `fiscus-quant`: the numeric engine of Fiscus. Pure functions over slices and a small dense [`Matrix`];
//! no IO, no knowledge of HTTP, workspaces or the store. Every public function returns a typed
//! [`QuantError`] for bad input instead of panicking, and each module is checked against a named Python peer
//! (see the crate README for peers, tolerances and the conventions chosen where peers differ).

// Comparisons are written `!(x > 0.0)` on purpose throughout: unlike `x <= 0.0`, they are also true for
// NaN, so a NaN that slipped past validation is refused instead of accepted.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// Unit tests may unwrap; library code may not (the workspace lint).
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod anomaly;
pub mod backtest;
pub mod benchmark;
pub mod budget;
pub mod calendar;
pub mod collateral;
pub mod covariance;
pub mod error;
pub mod features;
pub mod forecast;
mod input;
pub mod matrix;
pub mod normal;
pub mod optimise;
mod output;
mod parallel;
pub mod regression;
pub mod returns;
pub mod risk;
pub mod simulate;
mod stats;
pub mod tax_lots;
pub mod value_at_risk;
pub mod var_backtest;

pub use budget::Budget;
pub use error::{QuantError, Result};
pub use matrix::Matrix;

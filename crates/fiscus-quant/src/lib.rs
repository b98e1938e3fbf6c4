//! `fiscus-quant`: the numeric engine of Fiscus. Pure functions over slices and a small dense [`Matrix`];
//! no IO, no knowledge of HTTP, workspaces or the store. Every public function returns a typed
//! [`QuantError`] for bad input instead of panicking, and each module is checked against a named Python peer
//! (see the crate README for peers, tolerances and the conventions chosen where peers differ).

pub mod anomaly;
pub mod backtest;
pub mod calendar;
pub mod collateral;
pub mod covariance;
pub mod error;
pub mod forecast;
mod input;
pub mod matrix;
pub mod normal;
pub mod optimise;
pub mod returns;
pub mod risk;
pub mod simulate;
pub mod tax_lots;
mod stats;
pub mod value_at_risk;

pub use error::{QuantError, Result};
pub use matrix::Matrix;

//! Scenario generation: correlated geometric Brownian motion, historical (block) bootstrap, and
//! deterministic shocks. Every random generator is a ChaCha8 stream seeded by the caller and consumed in a
//! fixed order on one thread, so a seed reproduces a run bit for bit on every platform.

pub mod bootstrap;
pub mod gbm;
pub mod shocks;
mod vector_exp;

pub use bootstrap::{BootstrapSpec, bootstrap_paths};
pub use gbm::{EuropeanOption, GbmSpec, MonteCarloPrice, european_call, for_each_gbm_path, gbm_terminal_prices};
pub use shocks::{ShockOutcome, ShockScenario, apply_shock};

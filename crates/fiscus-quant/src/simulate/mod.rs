//! Scenario generation: correlated geometric Brownian motion, historical (block) bootstrap, and
//! deterministic shocks. Every random generator is a ChaCha8 stream seeded by the caller and consumed in a
//! fixed order on one thread, so a seed reproduces a run bit for bit on every platform. The parallel GBM
//! functions cut a run into chunks with one such stream each, seeded from the run's seed and the chunk's
//! number, so they too reproduce a run bit for bit, whatever the number of threads.

pub mod bootstrap;
pub mod gbm;
pub mod shocks;
mod vector_exp;

pub use bootstrap::{BootstrapSpec, bootstrap_paths};
pub use gbm::{
    EuropeanOption, GbmSpec, MonteCarloPrice, chunk_paths, chunk_seed, european_call, european_call_parallel,
    fold_gbm_paths, for_each_gbm_path, gbm_terminal_prices, gbm_terminal_prices_parallel,
};
pub use shocks::{ShockOutcome, ShockScenario, apply_shock};

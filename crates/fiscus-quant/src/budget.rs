//! Work, iteration and wall-clock limits for the crate's iterative fits and optimisations, so that no input
//! can keep a caller's thread busy for longer than it agreed to.
//!
//! The limits that decide an answer are counted, never timed: iterations of the optimiser and units of work
//! (the arithmetic a likelihood evaluation or a solver step does, `Meter::work`). So the same input gives
//! the same answer, or the same [`QuantError::BudgetExceeded`], on any machine and under any load. The clock
//! is only a safety net far above what the counted limits allow: running past it is
//! [`QuantError::SafetyTimeout`], which says the machine was slow, not that the input was too large, and is
//! worth retrying.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::error::{QuantError, Result};

/// How much an iterative computation may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The safety net: wall-clock time from the start of the call. Set well above what `max_work` and
    /// `max_iterations` take, so that it binds only on a machine that stalls.
    pub max_duration: Duration,
    /// Iterations of the computation's optimiser, summed over all of its starting points: Levenberg-Marquardt
    /// steps for ARIMA and Holt-Winters fits, Newton steps for risk parity, interior-point iterations for
    /// mean-variance problems.
    pub max_iterations: usize,
    /// Units of work, summed over the whole computation: for a Kalman filter pass r² per observation while
    /// its covariance moves and r once it is steady (r the state dimension), plus r³ for its start; for an
    /// exponential-smoothing pass one per observation; for an active-set step the size of the system it
    /// solves, squared.
    pub max_work: u64,
}

/// The default work limit: 10¹⁰ units, about 20 s of this crate's arithmetic on one core of the 2-core
/// machine the project is measured on (ARIMA(12,1,12) with drift on 396 monthly observations spends
/// 1.1·10⁹ units in 2.3 s there: `examples/arima_timing.rs`, case `arima12_1_12_drift_wti`).
pub const DEFAULT_MAX_WORK: u64 = 10_000_000_000;

impl Budget {
    /// A budget of `max_duration` (the safety net), `max_iterations` and the default work limit.
    pub const fn new(max_duration: Duration, max_iterations: usize) -> Self {
        Self { max_duration, max_iterations, max_work: DEFAULT_MAX_WORK }
    }

    /// The same budget with another work limit.
    pub const fn with_work(self, max_work: u64) -> Self {
        Self { max_work, ..self }
    }
}

impl Default for Budget {
    /// 5,000 iterations and [`DEFAULT_MAX_WORK`], with a safety net of 120 s. Every fit and optimisation the
    /// crate's tests and benchmarks run takes a small fraction of either (the slowest ARIMA fit of
    /// `examples/arima_timing.rs` takes a few hundred iterations), so the default only stops pathological
    /// inputs; the functions without a `_with_budget` suffix use it.
    fn default() -> Self {
        Self::new(Duration::from_secs(120), 5_000)
    }
}

/// A running budget: the clock started when the computation did, and the iterations and work spent so far.
/// Methods take `&self` so that a residual closure and the optimiser driving it can both hold it.
pub(crate) struct Meter {
    what: &'static str,
    budget: Budget,
    start: Instant,
    iterations: Cell<usize>,
    work: Cell<u64>,
}

impl Meter {
    pub(crate) fn start(what: &'static str, budget: Budget) -> Self {
        Self { what, budget, start: Instant::now(), iterations: Cell::new(0), work: Cell::new(0) }
    }

    /// Counts one iteration, then checks the limits.
    pub(crate) fn iteration(&self) -> Result<()> {
        let n = self.iterations.get() + 1;
        self.iterations.set(n);
        if n > self.budget.max_iterations {
            return Err(self.out_of_iterations());
        }
        self.check_time()
    }

    /// Counts `units` of work, then checks the limits.
    pub(crate) fn work(&self, units: u64) -> Result<()> {
        self.work.set(self.work.get().saturating_add(units));
        self.check()
    }

    /// Checks the work counted so far and the safety net: for a caller that cannot pass a nested
    /// computation's error on (a residual function answers only valid or not), so that the work it spent is
    /// still an error where it can be returned.
    pub(crate) fn check(&self) -> Result<()> {
        if self.work.get() > self.budget.max_work {
            return Err(QuantError::BudgetExceeded {
                what: self.what,
                limit: format!("{} units of work", self.budget.max_work),
            });
        }
        self.check_time()
    }

    /// The work counted so far.
    pub(crate) fn spent(&self) -> u64 {
        self.work.get()
    }

    /// Checks the safety net only; called inside long iterations.
    pub(crate) fn check_time(&self) -> Result<()> {
        if self.start.elapsed() > self.budget.max_duration {
            return Err(self.out_of_time());
        }
        Ok(())
    }

    /// Time left before the safety net (zero once it has passed), for a solver that keeps its own clock.
    pub(crate) fn remaining(&self) -> Duration {
        self.budget.max_duration.saturating_sub(self.start.elapsed())
    }

    /// Iterations left, for a solver that counts its own.
    pub(crate) fn iterations_left(&self) -> usize {
        self.budget.max_iterations.saturating_sub(self.iterations.get())
    }

    pub(crate) fn out_of_iterations(&self) -> QuantError {
        QuantError::BudgetExceeded { what: self.what, limit: format!("{} iterations", self.budget.max_iterations) }
    }

    pub(crate) fn out_of_time(&self) -> QuantError {
        QuantError::SafetyTimeout {
            what: self.what,
            limit: format!("{:.3} s of wall-clock time", self.budget.max_duration.as_secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_iteration_limit_is_inclusive_and_typed() {
        let m = Meter::start("test", Budget::new(Duration::from_secs(60), 2));
        assert!(m.iteration().is_ok() && m.iteration().is_ok());
        assert!(matches!(m.iteration(), Err(QuantError::BudgetExceeded { what: "test", .. })));
    }

    #[test]
    fn the_work_limit_is_counted_not_timed() {
        let m = Meter::start("test", Budget::new(Duration::from_secs(60), 10).with_work(100));
        assert!(m.work(60).is_ok() && m.work(40).is_ok());
        assert_eq!(m.spent(), 100);
        assert!(matches!(m.work(1), Err(QuantError::BudgetExceeded { what: "test", .. })));
    }

    #[test]
    fn the_clock_is_a_safety_net_of_its_own_kind() {
        let m = Meter::start("test", Budget::new(Duration::ZERO, 10));
        std::thread::sleep(Duration::from_millis(1));
        assert!(matches!(m.check_time(), Err(QuantError::SafetyTimeout { .. })));
    }
}

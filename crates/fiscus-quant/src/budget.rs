//! Iteration and wall-clock limits for the crate's iterative fits and optimisations, so that no input can
//! keep a caller's thread busy for longer than it agreed to. A computation that runs out of either returns
//! [`QuantError::BudgetExceeded`] instead of a half-converged answer.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::error::{QuantError, Result};

/// How long an iterative computation may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time from the start of the call.
    pub max_duration: Duration,
    /// Iterations of the computation's optimiser, summed over all of its starting points: Levenberg-Marquardt
    /// steps for ARIMA and Holt-Winters fits, Newton steps for risk parity, interior-point iterations for
    /// mean-variance problems (whose exact active-set route is bounded by the clock alone).
    pub max_iterations: usize,
}

impl Budget {
    /// A budget of `max_duration` and `max_iterations`.
    pub const fn new(max_duration: Duration, max_iterations: usize) -> Self {
        Self { max_duration, max_iterations }
    }
}

impl Default for Budget {
    /// 5 seconds and 5,000 iterations. Every fit and optimisation the crate's tests and benchmarks run takes
    /// a small fraction of either (the slowest ARIMA fit of `examples/arima_timing.rs` takes tens of
    /// milliseconds and a few hundred iterations), so the default only stops pathological inputs; the
    /// functions without a `_with_budget` suffix use it.
    fn default() -> Self {
        Self::new(Duration::from_secs(5), 5_000)
    }
}

/// A running budget: the clock started when the computation did, and the iterations spent so far. Methods
/// take `&self` so that a residual closure and the optimiser driving it can both hold it.
pub(crate) struct Meter {
    what: &'static str,
    budget: Budget,
    start: Instant,
    iterations: Cell<usize>,
}

impl Meter {
    pub(crate) fn start(what: &'static str, budget: Budget) -> Self {
        Self { what, budget, start: Instant::now(), iterations: Cell::new(0) }
    }

    /// Counts one iteration, then checks both limits.
    pub(crate) fn iteration(&self) -> Result<()> {
        let n = self.iterations.get() + 1;
        self.iterations.set(n);
        if n > self.budget.max_iterations {
            return Err(self.out_of_iterations());
        }
        self.check_time()
    }

    /// Checks the clock only; called inside long iterations.
    pub(crate) fn check_time(&self) -> Result<()> {
        if self.start.elapsed() > self.budget.max_duration {
            return Err(self.out_of_time());
        }
        Ok(())
    }

    /// Time left before the deadline (zero once it has passed), for a solver that keeps its own clock.
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
        QuantError::BudgetExceeded {
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
    fn a_zero_duration_is_exceeded_at_the_first_check() {
        let m = Meter::start("test", Budget::new(Duration::ZERO, 10));
        std::thread::sleep(Duration::from_millis(1));
        assert!(matches!(m.check_time(), Err(QuantError::BudgetExceeded { .. })));
    }
}

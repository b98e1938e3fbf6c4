//! The CPU pool compute runs on, and the control a running computation checks.
//!
//! Computations run on blocking threads, never on the HTTP runtime's workers, and at most `threads` at once
//! (by default one core fewer than the machine has, at least one): the HTTP runtime always keeps a core, so
//! `/healthz` and every read stay fast while jobs run. Long loops call [`Control::check`], which stops them
//! when the job is cancelled, its claim lost, or its wall-clock budget spent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

#[derive(Clone)]
pub struct Pool {
    /// Threads for queued jobs (claimed by the worker only when one is free).
    permits: Arc<Semaphore>,
    /// Threads for computations answered in their request: small by rule, and never queued behind a long
    /// job.
    inline: Arc<Semaphore>,
    threads: usize,
    /// Set when the node stops: running computations stop at their next check, leaving their jobs to be
    /// retaken (the runtime would otherwise wait for them to finish).
    closing: Arc<AtomicBool>,
    /// Wakes this node's worker when a job is queued here.
    pub wake: Arc<tokio::sync::Notify>,
}

impl Pool {
    pub fn new(threads: usize) -> Pool {
        let threads = threads.max(1);
        Pool {
            permits: Arc::new(Semaphore::new(threads)),
            inline: Arc::new(Semaphore::new(threads)),
            threads,
            closing: Arc::default(),
            wake: Arc::default(),
        }
    }

    /// One thread fewer than the machine's cores, at least one.
    pub fn for_this_machine() -> Pool {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Pool::new(cores.saturating_sub(1))
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A job thread, if one is free now: the worker reserves threads before it claims jobs, so a node never
    /// claims more jobs than it can start (the rest stay queued for other nodes).
    pub fn reserve(&self) -> Option<Reserved> {
        self.permits.clone().try_acquire_owned().ok().map(|p| Reserved { _permit: p })
    }

    /// Stops every running computation at its next check.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// A control for one computation, with `budget` of wall clock.
    pub fn control(&self, budget: Duration) -> Arc<Control> {
        Arc::new(Control {
            stop: AtomicU8::new(0),
            progress: AtomicI64::new(0),
            deadline: Instant::now() + budget,
            closing: self.closing.clone(),
        })
    }

    /// Runs a queued job's computation on the job thread reserved for it. A panic in `f` is an error, never
    /// the caller's panic.
    /// The job holds its thread until it ends (a research run computes its steps one after another on it).
    pub async fn run<T: Send + 'static>(
        &self,
        _thread: &Reserved,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Crashed> {
        tokio::task::spawn_blocking(f).await.map_err(|_| Crashed)
    }

    /// Runs a computation answered in its request, on the inline threads.
    pub async fn run_inline<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, Crashed> {
        let _permit = self.inline.clone().acquire_owned().await.map_err(|_| Crashed)?;
        tokio::task::spawn_blocking(f).await.map_err(|_| Crashed)
    }
}

/// A job thread reserved for one job (released when dropped).
pub struct Reserved {
    _permit: tokio::sync::OwnedSemaphorePermit,
}

/// A computation panicked (a bug: the engine returns typed errors) or the pool was closed.
#[derive(Debug)]
pub struct Crashed;

/// Why a computation stopped before finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Cancelled,
    /// The claim was taken over by another worker: drop everything, write nothing.
    Abandoned,
    /// The wall-clock budget ran out.
    OutOfTime,
}

/// Shared between a running computation, its heartbeat and whoever cancels it.
pub struct Control {
    stop: AtomicU8,
    progress: AtomicI64,
    deadline: Instant,
    closing: Arc<AtomicBool>,
}

impl Control {
    pub fn stop(&self, why: Stop) {
        let code = match why {
            Stop::Cancelled => 1,
            Stop::Abandoned => 2,
            Stop::OutOfTime => 3,
        };
        // The first reason stands (a cancel that raced a lost claim is still a lost claim for the writer).
        let _ = self.stop.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    pub fn stopped(&self) -> Option<Stop> {
        match self.stop.load(Ordering::SeqCst) {
            1 => Some(Stop::Cancelled),
            2 => Some(Stop::Abandoned),
            3 => Some(Stop::OutOfTime),
            _ => None,
        }
    }

    /// Called inside long loops: `Err` when the computation must stop now.
    pub fn check(&self) -> Result<(), Stop> {
        if self.closing.load(Ordering::SeqCst) {
            self.stop(Stop::Abandoned);
        }
        if Instant::now() >= self.deadline {
            self.stop(Stop::OutOfTime);
        }
        match self.stopped() {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Progress in thousandths.
    pub fn set_progress(&self, done: u64, total: u64) {
        let p = done.saturating_mul(1000).checked_div(total).unwrap_or(0).min(1000);
        self.progress.store(p as i64, Ordering::Relaxed);
    }

    pub fn progress(&self) -> i64 {
        self.progress.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_reserves_no_more_job_threads_than_it_has() {
        let pool = Pool::new(2);
        let (a, b) = (pool.reserve(), pool.reserve());
        assert!(a.is_some() && b.is_some());
        assert!(pool.reserve().is_none(), "a third job would wait: it stays queued for another node");
        drop(a);
        assert!(pool.reserve().is_some(), "a finished job's thread is free again");
    }

    #[test]
    fn a_closing_pool_stops_computations_at_their_next_check() {
        let pool = Pool::new(1);
        let control = pool.control(Duration::from_secs(60));
        assert_eq!(control.check(), Ok(()));
        pool.close();
        assert_eq!(control.check(), Err(Stop::Abandoned));
        let late = Pool::new(1).control(Duration::ZERO);
        assert_eq!(late.check(), Err(Stop::OutOfTime));
    }
}

//! The CPU pool compute runs on, and the control a running computation checks.
//!
//! Computations run on blocking threads, never on the HTTP runtime's workers: queued jobs on the job threads
//! (at least two, so that one workspace's long job never holds the only one), computations answered in
//! their request on the inline threads (one core fewer than the machine has, at least one, so the HTTP
//! runtime keeps a core), one per workspace at a time and within a short budget (`compute::submit` queues
//! what runs past it). Long loops call [`Control::check`], which stops them when the job is cancelled, its
//! claim lost, or its wall-clock budget spent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

#[derive(Clone)]
pub struct Pool {
    /// Threads for queued jobs (claimed by the worker only when one is free).
    permits: Arc<Semaphore>,
    /// Threads for computations answered in their request: small by rule, and never queued behind a long
    /// job.
    inline: Arc<Semaphore>,
    /// One in-request computation per workspace at a time: a workspace's second waits for its first, never
    /// in front of another workspace's (so one tenant's burst holds at most one inline thread).
    inline_by_workspace: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
    threads: usize,
    /// Queued jobs one workspace may have running at once (the models' `tables::compute::claim`).
    per_workspace: usize,
    /// How long an in-request computation may take before it is stopped and queued instead.
    inline_budget: Duration,
    /// Set when the node stops: running computations stop at their next check, leaving their jobs to be
    /// retaken (the runtime would otherwise wait for them to finish).
    closing: Arc<AtomicBool>,
    /// Wakes this node's worker when a job is queued here.
    pub wake: Arc<tokio::sync::Notify>,
}

/// The in-request budget when none is configured.
pub const INLINE_BUDGET: Duration = Duration::from_secs(3);

impl Pool {
    /// `threads` for queued jobs and as many for in-request computations.
    pub fn new(threads: usize) -> Pool {
        Pool::with_threads(threads, threads)
    }

    fn with_threads(job_threads: usize, inline_threads: usize) -> Pool {
        let threads = job_threads.max(1);
        Pool {
            permits: Arc::new(Semaphore::new(threads)),
            inline: Arc::new(Semaphore::new(inline_threads.max(1))),
            inline_by_workspace: Arc::default(),
            threads,
            per_workspace: (threads / 2).max(1),
            inline_budget: INLINE_BUDGET,
            closing: Arc::default(),
            wake: Arc::default(),
        }
    }

    /// Queued jobs get one thread fewer than the machine's cores but at least two, so that one workspace's
    /// long job (at most half the threads are one workspace's) never holds the only thread another
    /// workspace's job could start on; in-request computations one fewer than the cores, at least one, so
    /// the HTTP runtime keeps a core for them.
    pub fn for_this_machine() -> Pool {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Pool::with_threads(cores.saturating_sub(1).max(2), cores.saturating_sub(1))
    }

    /// Sets the per-workspace cap of running jobs (0: half the job threads, at least one) and the
    /// in-request budget.
    pub fn with_limits(mut self, per_workspace: usize, inline_budget: Duration) -> Pool {
        if per_workspace > 0 {
            self.per_workspace = per_workspace;
        }
        self.inline_budget = inline_budget;
        self
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn per_workspace(&self) -> usize {
        self.per_workspace
    }

    pub fn inline_budget(&self) -> Duration {
        self.inline_budget
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

    /// Runs a computation answered in its request for `workspace_id`, on the inline threads, after that
    /// workspace's previous one. The workspace's turn and the thread's permit go with `f` onto its thread: a
    /// request whose client hung up does not free them while `f` still runs.
    pub async fn run_inline<T: Send + 'static>(
        &self,
        workspace_id: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Crashed> {
        let turn = Turn::take(&self.inline_by_workspace, workspace_id);
        let own = turn.semaphore.clone().acquire_owned().await.map_err(|_| Crashed)?;
        let permit = self.inline.clone().acquire_owned().await.map_err(|_| Crashed)?;
        tokio::task::spawn_blocking(move || {
            // Dropped in this order once `f` returns: the permits, then the turn (which forgets the line when
            // nobody else holds or awaits it).
            let _held = (own, permit, turn);
            f()
        })
        .await
        .map_err(|_| Crashed)
    }
}

/// A workspace's place in line for the inline threads; the line is forgotten when its last holder or
/// waiter drops it (whether it ran, or its request was cancelled while waiting).
struct Turn {
    lines: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
    workspace_id: String,
    semaphore: Arc<Semaphore>,
}

impl Turn {
    fn take(lines: &Arc<Mutex<HashMap<String, Arc<Semaphore>>>>, workspace_id: &str) -> Turn {
        let mut by_workspace = lines.lock().unwrap_or_else(|p| p.into_inner());
        let semaphore =
            by_workspace.entry(workspace_id.to_string()).or_insert_with(|| Arc::new(Semaphore::new(1))).clone();
        Turn { lines: lines.clone(), workspace_id: workspace_id.to_string(), semaphore }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut by_workspace = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        // The map holds one reference and this turn another: nobody else holds or awaits this line.
        if Arc::strong_count(&self.semaphore) == 2 {
            by_workspace.remove(&self.workspace_id);
        }
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

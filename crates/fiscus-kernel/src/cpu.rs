//! The CPU-heavy steps of requests (password hashing, decoding uploaded recordings) run here: on blocking
//! threads, never on the HTTP runtime's workers, and at most `threads` at once (by default one fewer than
//! the machine's cores, at least one).
//!
//! An Argon2 verification takes tens of milliseconds of one core by design. Run on the runtime's worker
//! threads, a few dozen concurrent sign-ins held every worker and `/healthz` waited behind them; run on
//! unbounded blocking threads, they would still take every core. Here they queue for a permit instead, and
//! the runtime keeps a core for everything else. Computations have their own pool (`compute::Pool`).

use std::sync::Arc;
use tokio::sync::Semaphore;

#[derive(Clone)]
pub struct Cpu {
    permits: Arc<Semaphore>,
    threads: usize,
}

/// The step panicked (a bug), or the pool was closed.
#[derive(Debug)]
pub struct Crashed;

impl Cpu {
    pub fn new(threads: usize) -> Cpu {
        let threads = threads.max(1);
        Cpu { permits: Arc::new(Semaphore::new(threads)), threads }
    }

    /// One thread fewer than the machine's cores, at least one.
    pub fn for_this_machine() -> Cpu {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Cpu::new(cores.saturating_sub(1))
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` on a blocking thread once a permit is free. A panic in `f` is an error, never the caller's
    /// panic. The permit goes with `f` onto its thread: a caller that stops waiting (its client hung up)
    /// does not free it while `f` still runs.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, Crashed> {
        let permit = self.permits.clone().acquire_owned().await.map_err(|_| Crashed)?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            f()
        })
        .await
        .map_err(|_| Crashed)
    }
}

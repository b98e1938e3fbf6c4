//! One abstraction for every background loop of a node (issue 56): a [`Worker`] says how it paces itself and
//! does one pass (claim what is due, work it off, say how much); [`spawn`] runs any of them in the one loop
//! below, which reports each pass to `fiscus_kernel::progress` (so the tests' drain waits for every worker
//! that claims work, the transparency log's integrator included), stops claiming once the node drains, and
//! counts a failed pass as work (what it failed on is still due) while waiting as an idle one does. A worker
//! is given the services, never the HTTP state: what else it needs (the agent worker's dispatcher) it holds,
//! handed to it by the composition.

use std::future::Future;
use std::time::Duration;

use fiscus_kernel::Services;
use fiscus_kernel::progress;
use tokio::sync::Notify;

/// How a worker waits between passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// A pass on every tick of this period, busy or idle: work whose cadence is the period (the bank
    /// channel's folders, settlement's connector calls, housekeeping).
    Every(Duration),
    /// Passes back to back while there is work; after a pass that found nothing (or failed), waits this long
    /// or until the worker's [`Worker::wake`] is notified, whichever is first.
    WhenIdle(Duration),
}

/// A kind of background work this node runs.
pub trait Worker: Send + 'static {
    /// Its name in logs.
    const NAME: &'static str;
    /// The slot the tests' drain watches; `None` for housekeeping that claims nothing due.
    const SLOT: Option<progress::Worker>;

    fn pace(&self, services: &Services) -> Pace;

    /// What wakes it early from an idle wait (work queued on this node), if anything does.
    fn wake<'s>(&self, _services: &'s Services) -> Option<&'s Notify> {
        None
    }

    /// One pass: claims and does what is due, and says how many items it took up.
    fn pass(&mut self, services: &Services) -> impl Future<Output = anyhow::Result<usize>> + Send;
}

/// Runs `worker` until the node drains: its pass ends and it claims nothing more.
pub fn spawn<W: Worker>(services: Services, mut worker: W) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let pace = worker.pace(&services);
        let mut tick = match pace {
            Pace::Every(period) => {
                let mut tick = tokio::time::interval(period);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                Some(tick)
            }
            Pace::WhenIdle(_) => None,
        };
        if let Some(slot) = W::SLOT {
            services.progress.started(slot);
        }
        loop {
            if let Some(tick) = tick.as_mut() {
                tick.tick().await;
            }
            if stopping(&services) {
                break;
            }
            let pass = W::SLOT.map(|slot| services.progress.begin(slot));
            let (worked, idle) = match worker.pass(&services).await {
                Ok(n) => (n, n == 0),
                Err(e) => {
                    tracing::warn!(worker = W::NAME, error = %e, "a worker's pass failed");
                    (1, true)
                }
            };
            if let Some(pass) = pass {
                services.progress.end(pass, worked);
            }
            if let (Pace::WhenIdle(wait), true) = (pace, idle) {
                match worker.wake(&services) {
                    Some(wake) => {
                        let _ = tokio::time::timeout(wait, wake.notified()).await;
                    }
                    None => tokio::time::sleep(wait).await,
                }
            }
        }
    })
}

/// Whether this node is stopping: its workers claim nothing more once it drains.
pub fn stopping(services: &Services) -> bool {
    services.draining.load(std::sync::atomic::Ordering::Acquire)
}
